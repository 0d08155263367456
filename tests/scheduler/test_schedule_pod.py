"""``Scheduler.schedule_pod`` returns a ScheduleResult or raises FitError / CycleError, as
upstream ``schedulePod`` returns a result or an error.

Cases from upstream ``pkg/scheduler/schedule_one_test.go`` ``TestSchedulerSchedulePod``
(its fake plugins from ``pkg/scheduler/testing/framework/fake_plugins.go`` and the test
file: FalseFilter rejects with ``ErrReasonFake``, MatchFilter passes the node named as the
pod, NoPodsFilter rejects nodes with pods, EqualPrioritizerPlugin scores every node 1, NumericMap scores a node its name as a number,
FalseMap's Score fails). Evaluated nodes: upstream ``len(feasibleNodes) +
diagnosis.NodeToStatus.Len()``, and 1 on the nominated-node fast path.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

from kubesched.api.objects import Pod
from kubesched.cache.cache import Cache
from kubesched.cluster.inprocess import InProcessCluster
from kubesched.explanation.attempt import Attempt
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import PODS_TO_ACTIVATE
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo
from kubesched.plugins.defaultbinder import DefaultBinder
from kubesched.plugins.queuesort import PrioritySort
from kubesched.scheduler.results import CycleError, FitError
from kubesched.scheduler.scheduler import Scheduler
from kubesched.testing.wrappers import make_node, make_pod

ERR_REASON_FAKE = "Nodes failed the fake plugin"


class FalseFilter:
    name = "FalseFilter"

    def filter(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Status:
        return Status(Code.Unschedulable, (ERR_REASON_FAKE,))


class TrueFilter:
    name = "TrueFilter"

    def filter(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Status:
        return SUCCESS


class MatchFilter:
    name = "MatchFilter"

    def filter(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Status:
        return SUCCESS if ni.name == pod.name else Status(Code.Unschedulable, (ERR_REASON_FAKE,))


class NoPodsFilter:
    name = "NoPodsFilter"

    def filter(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Status:
        return SUCCESS if not ni.pods else Status(Code.Unschedulable, (ERR_REASON_FAKE,))


class NumericMap:
    name = "NumericMap"

    def score(self, state: CycleState, pod: Pod, ni: NodeInfo) -> int:
        return int(ni.name)


class EqualPrioritizer:
    name = "EqualPrioritizerPlugin"

    def score(self, state: CycleState, pod: Pod, ni: NodeInfo) -> int:
        return 1


class FalseMap:
    name = "FalseMap"

    def score(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Status:
        return Status(Code.Error, ("priority map encounters an error",))


def scheduler(nodes: Sequence[str], filters: Sequence[Any], scores: Sequence[Any] = (),
              pods: Sequence[Pod] = (), explain: bool = False, by_name: bool = True,
              extenders: Sequence[Any] = ()) -> tuple[Scheduler, Framework]:
    cluster = InProcessCluster(lambda: 0.0)
    cache = Cache()
    for n in nodes:
        cache.add_node(make_node().name(n).label("kubernetes.io/hostname", n).obj())
    for p in pods:
        cache.add_pod(p)
    sched = Scheduler(cache, cluster, cluster, lambda: 0.0, random.Random(0), tie_break_by_name=by_name,
                      explain=explain, extenders=extenders)
    fw = Framework("default-scheduler", {"queueSort": [PrioritySort()], "bind": [DefaultBinder(None, sched.new_handle())],
                                         "filter": list(filters), "score": list(scores)},
                   {pl.name: 1 for pl in scores})
    sched.add_profile("default-scheduler", fw)
    cache.update_snapshot(sched.snapshot)
    return sched, fw


def state() -> CycleState:
    s = CycleState()
    s.write(PODS_TO_ACTIVATE, {})
    return s


def pod(name: str) -> Pod:
    return make_pod().name(name).uid(name).obj()


@pytest.mark.parametrize(("nodes", "filters", "scores", "name", "want", "evaluated", "feasible"), [
    (["node1", "node2"], [TrueFilter()], [EqualPrioritizer()], "ignore", {"node1", "node2"}, 2, 2),
    (["node1", "node2"], [MatchFilter()], [], "node2", {"node2"}, 2, 1),
    (["3", "2", "1"], [TrueFilter()], [NumericMap()], "ignore", {"3"}, 3, 3),
    (["3", "2", "1"], [MatchFilter()], [NumericMap()], "2", {"2"}, 3, 1),
], ids=["test 2", "test 3", "test 4", "test 5"])
def test_a_result(nodes: list[str], filters: list[Any], scores: list[Any], name: str, want: set[str],
                  evaluated: int, feasible: int) -> None:
    sched, fw = scheduler(nodes, filters, scores)
    result = sched.schedule_pod(fw, state(), pod(name))
    assert result.suggested_host in want
    assert (result.evaluated_nodes, result.feasible_nodes) == (evaluated, feasible)


def test_no_fit_is_a_fit_error_with_its_diagnosis() -> None:
    """Upstream "test 8": node 1 fails MatchFilter, node 2 (which has a pod) NoPodsFilter."""
    existing = make_pod().name("2").uid("2").node("2").obj()
    sched, fw = scheduler(["1", "2"], [NoPodsFilter(), MatchFilter()], [NumericMap()], pods=[existing])
    with pytest.raises(FitError) as info:
        sched.schedule_pod(fw, state(), make_pod().name("2").uid("new").obj())
    err = info.value
    d = err.diagnosis
    assert err.num_all_nodes == 2
    assert {n: (s.code, s.reasons, s.plugin) for n, s in d.node_to_status.statuses.items()} == {
        "1": (Code.Unschedulable, (ERR_REASON_FAKE,), "MatchFilter"),
        "2": (Code.Unschedulable, (ERR_REASON_FAKE,), "NoPodsFilter")}
    assert (d.unschedulable_plugins, d.pending_plugins) == ({"MatchFilter", "NoPodsFilter"}, set())
    assert str(err) == f"0/2 nodes are available: 2 {ERR_REASON_FAKE}."


def test_a_score_error_is_a_cycle_error() -> None:
    """Upstream "test error with priority map": the Score plugin's error ends the attempt."""
    sched, fw = scheduler(["2", "1"], [TrueFilter()], [FalseMap()])
    with pytest.raises(CycleError, match="FalseMap"):
        sched.schedule_pod(fw, state(), pod("2"))


def test_the_nominated_node_is_taken_alone() -> None:
    """Upstream ``evaluateNominatedNode``: the nominated node passes, so it is the result,
    one node evaluated, nothing scored (NumericMap would prefer node 3)."""
    sched, fw = scheduler(["3", "2", "1"], [TrueFilter()], [NumericMap()])
    p = make_pod().name("p").uid("p").nominated_node("1").obj()
    result = sched.schedule_pod(fw, state(), p)
    assert (result.suggested_host, result.evaluated_nodes, result.feasible_nodes) == ("1", 1, 1)


def test_run_algorithm_records_the_outcome_and_explain_only_with_an_observer() -> None:
    """The Attempt gets the outcome from the values; the per-node verdicts only when the
    scheduler explains (the observer is there)."""
    for explain in (False, True):
        sched, fw = scheduler(["1", "2"], [MatchFilter()], explain=explain)
        att = Attempt()
        s = state()
        result = sched.run_algorithm(fw, s, pod("2"), att, None if not explain else _recorder(sched, att))
        assert result is not None and att.chosen == "2"
        assert att.filter == ({"1": {"code": "Unschedulable", "plugin": "MatchFilter", "reasons": [ERR_REASON_FAKE]},
                               "2": "ok"} if explain else {})
        att = Attempt()
        assert sched.run_algorithm(fw, state(), pod("9"), att) is None
        assert (att.result, att.message, att.unschedulable_plugins) == (
            "Unschedulable", f"0/2 nodes are available: 2 {ERR_REASON_FAKE}.", {"MatchFilter"})


def _recorder(sched: Scheduler, att: Attempt) -> Any:
    from kubesched.explanation.recorder import AttemptRecorder
    return AttemptRecorder(att, sched.tie_break_by_name)


def test_scoring_done_only_for_the_explanation_cannot_fail_the_attempt() -> None:
    """Upstream ``schedulePod`` selects the only feasible node without scoring
    (``len(feasibleNodes) == 1``), so FalseMap's Score error never happens there; with
    explain the scores are computed for the explanation, and their error stays out of
    the outcome."""
    sched, fw = scheduler(["1", "2"], [MatchFilter()], [FalseMap()], explain=True)
    att = Attempt()
    result = sched.run_algorithm(fw, state(), pod("2"), att, _recorder(sched, att))
    assert result is not None and result.suggested_host == "2"
    assert (att.chosen, att.score_skipped is not None) == ("2", True)


class ErrorOn3:
    name = "ErrorOn3"

    def filter(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Status:
        return Status(Code.Error, ("broken",)) if ni.name == "3" else SUCCESS


def test_filtering_done_only_for_the_explanation_cannot_fail_the_attempt() -> None:
    """Upstream ``evaluateNominatedNode`` filters the nominated node alone, so a Filter
    error on another node never happens there; with explain the other nodes are filtered
    for the explanation, and their error stays out of the outcome."""
    p = make_pod().name("p").uid("p").nominated_node("1").obj()
    sched, fw = scheduler(["3", "2", "1"], [ErrorOn3()], [NumericMap()], explain=True)
    att = Attempt()
    result = sched.run_algorithm(fw, state(), p, att, _recorder(sched, att))
    assert result is not None and (result.suggested_host, att.chosen) == ("1", "1")
    assert att.evaluation is not None and att.evaluation["upstreamEvaluatedOnly"] == "1"
    # without the nominated node, the error is the attempt's (upstream findNodesThatPassFilters)
    att = Attempt()
    assert sched.run_algorithm(fw, state(), pod("q"), att, _recorder(sched, att)) is None
    assert att.result == "Error" and "broken" in (att.message or "")


def test_scoring_for_the_explanation_draws_no_host() -> None:
    """On the nominated-node fast path upstream scores nothing and so draws nothing to break
    a tie (``schedulePod`` returns before ``selectHost``). The scores computed for the
    explanation (three nodes all scored 1 by EqualPrioritizer: a three-way tie) must leave
    the random stream as it was, or every later tie would be broken differently with
    explain than without."""
    p = make_pod().name("p").uid("p").nominated_node("1").obj()
    sched, fw = scheduler(["3", "2", "1"], [TrueFilter()], [EqualPrioritizer()], explain=True, by_name=False)
    before = sched.rng.getstate()
    att = Attempt()
    result = sched.run_algorithm(fw, state(), p, att, _recorder(sched, att))
    assert result is not None and result.suggested_host == "1"
    assert att.totals == {"1": 1, "2": 1, "3": 1}
    assert sched.rng.getstate() == before


class RecordingFilterExtender:
    """A filtering extender (no prioritize verb) that keeps every node and records how many
    it was asked about."""

    name, weight, ignorable, node_cache_capable = "ext", 1, False, True
    is_filter, is_prioritizer, is_binder, supports_preemption = True, False, False, False

    def __init__(self) -> None:
        self.asked: list[int] = []

    def is_interested(self, pod: Pod) -> bool:
        return True

    def filter(self, pod: Pod, nodes: Sequence[Any]) -> Any:
        from kubesched.framework.extender import ExtenderFilterResult
        self.asked.append(len(nodes))
        return ExtenderFilterResult(node_names=[n.name for n in nodes])


def test_a_filtering_extender_sees_every_feasible_node_without_score_plugins() -> None:
    """Upstream ``findNodesThatPassFilters`` narrows the search to one feasible node only
    when ``!sched.hasExtenderFilters() && !sched.hasScoring(fwk)``. With no Score plugin
    but a filtering extender, the search keeps ``numFeasibleNodesToFind`` nodes: all 3 here
    (fewer than ``minFeasibleNodesToFind`` = 100 nodes), and the extender is asked about all 3."""
    ext = RecordingFilterExtender()
    sched, fw = scheduler(["1", "2", "3"], [TrueFilter()], [], extenders=[ext])
    result = sched.schedule_pod(fw, state(), pod("p"))
    assert ext.asked == [3]
    assert result.feasible_nodes == 3
    # and without the extender, the first feasible node is enough
    sched, fw = scheduler(["1", "2", "3"], [TrueFilter()], [])
    assert sched.schedule_pod(fw, state(), pod("p")).feasible_nodes == 1
