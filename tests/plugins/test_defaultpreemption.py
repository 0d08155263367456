"""DefaultPreemption, with cases ported from upstream v1.34
``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go``
(TestPostFilter, TestDryRunPreemption, TestSelectBestCandidate,
TestPodEligibleToPreemptOthers, TestPreempt) and ``validation_pluginargs_test.go``
(DefaultPreemptionArgs), plus the preemption attempts of the fidelity example
``example-03-preemption`` (expected values recorded from upstream v1.34.1).

Upstream's ``StartTime(epochTimeN)`` (N nanoseconds after the epoch) becomes N seconds
after the epoch here: only the order of start times matters. Upstream's random offset
(``rand.NewSource(4)``) is given explicitly as the offsets its comments state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.api.policy import PodDisruptionBudget
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.errors import ProfileError
from kubesched.framework.interface import PostFilterResult
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo
from kubesched.plugins.defaultbinder import DefaultBinder
from kubesched.plugins.defaultpreemption import DefaultPreemption
from kubesched.plugins.preemption.args import DefaultPreemptionArgs
from kubesched.plugins.preemption.ordering import StartTimes
from kubesched.plugins.noderesources.fit import Fit
from kubesched.plugins.queuesort import PrioritySort
from kubesched.testing.handle import FakeHandle, handle_for
from kubesched.testing.wrappers import make_node, make_pod

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}
FAKE_REASON = "Nodes failed the fake plugin"


# -- fakes (upstream testing/framework fake plugins) ----------------------------------
def fit(h: Any = None) -> Fit:
    return Fit(None, h)


class FakeFilter:
    """Counts Filter calls; nodes in ``codes`` get that code (upstream FakeFilterPlugin)."""

    name = "FakeFilter"

    def __init__(self, codes: dict[str, Code]) -> None:
        self.codes = codes
        self.calls = 0

    def filter(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Status:
        self.calls += 1
        code = self.codes.get(ni.name)
        if code is None or code == Code.Success:
            return SUCCESS
        return Status(code, (f"injecting failure for pod {pod.name}",))


class ConstFilter:
    def __init__(self, name: str, ok: bool | None) -> None:
        self.name, self.ok = name, ok

    def filter(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Status:
        ok = (pod.name == ni.name) if self.ok is None else self.ok
        return SUCCESS if ok else Status(Code.Unschedulable, (FAKE_REASON,))


class ErrorExtensions:
    """Upstream's TestPlugin: AddPod/RemovePod fail on nodes labelled error=true."""

    name = "test-plugin"

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> tuple[None, Status]:
        return None, SUCCESS

    def add_pod(self, state: CycleState, pod: Pod, other: Pod, ni: NodeInfo) -> Status:
        return self._check("add", pod, ni)

    def remove_pod(self, state: CycleState, pod: Pod, other: Pod, ni: NodeInfo) -> Status:
        return self._check("remove", pod, ni)

    @staticmethod
    def _check(what: str, pod: Pod, ni: NodeInfo) -> Status:
        if ni.node is not None and ni.node.labels.get("error") == "true":
            return Status(Code.Error, (f"failed to {what} pod: {pod.name}",))
        return SUCCESS


# -- builders --------------------------------------------------------------------------
def pod(name: str, prio: int | None = None, node: str = "", req: dict[str, str] | None = None,
        start: int | None = None, labels: dict[str, str] | None = None, **extra: Any) -> Pod:
    w = make_pod().name(name).uid(name)
    if prio is not None:
        w.priority(prio)
    if node:
        w.node(node)
    if req:
        w.req(**req)
    if start is not None:
        w.start_time(f"1970-01-01T00:{start // 60:02d}:{start % 60:02d}Z")
    for k, v in (labels or {}).items():
        w.label(k, v)
    for path, value in extra.items():
        w.set(path.replace("__", "."), value)
    return w.obj()


def node(spec: str, res: dict[str, str] | None = None, labels: dict[str, str] | None = None) -> Node:
    """``name/zone/region`` as upstream's tests spell nodes; ``pods`` defaults to 32."""
    parts = spec.split("/")
    w = make_node().name(parts[0]).capacity(**{"pods": "32", **(res or {})})
    for key, value in zip(("hostname", "zone", "region"), parts):
        w.label(key, value)
    for k, v in (labels or {}).items():
        w.label(k, v)
    return w.obj()


def pdb(name: str, match: dict[str, str], allowed: int | None = None, min_available: Any = None,
        disrupted: Sequence[str] = ()) -> PodDisruptionBudget:
    raw: dict[str, Any] = {"metadata": {"name": name, "namespace": "default"},
                           "spec": {"selector": {"matchLabels": match}}}
    if min_available is not None:
        raw["spec"]["minAvailable"] = min_available
    if allowed is not None:
        raw["status"] = {"disruptionsAllowed": allowed}
    p = PodDisruptionBudget.from_dict(raw)
    if disrupted:
        p = _PDBWithDisrupted(**{f: getattr(p, f) for f in PodDisruptionBudget.__dataclass_fields__},
                              disrupted_pods=frozenset(disrupted))
    return p


@dataclass(frozen=True, slots=True)
class _PDBWithDisrupted(PodDisruptionBudget):
    """A PDB with ``status.disruptedPods`` (not parsed by the object model yet)."""

    disrupted_pods: frozenset[str] = field(default_factory=frozenset)


def build(pods: Sequence[Pod], nodes: Sequence[Node], plugins: Sequence[Any] = (),
          pdbs: Sequence[PodDisruptionBudget] = (), args: DefaultPreemptionArgs | None = None,
          ) -> tuple[FakeHandle, DefaultPreemption]:
    """A handle whose Framework runs ``plugins`` at PreFilter and/or Filter (as each
    implements them), with PrioritySort and DefaultBinder, and the plugin under test.
    A plugin given as a function is built by calling it with the handle."""
    h = handle_for(pods, nodes)
    plugins = [pl if hasattr(pl, "name") else pl(h) for pl in plugins]
    fw = Framework("default-scheduler", {
        "queueSort": [PrioritySort()], "bind": [DefaultBinder(None, h)],
        "preFilter": [pl for pl in plugins if hasattr(pl, "pre_filter")],
        "filter": [pl for pl in plugins if hasattr(pl, "filter")]}, {})
    fw.nominated_pods_for_node = h.nominated_pods_for_node
    h.framework = fw
    h.objects.pdb_list = list(pdbs)
    return h, DefaultPreemption(args, h)


def pre_filtered(h: FakeHandle, p: Pod) -> CycleState:
    state = CycleState()
    _, st, _ = h.framework.run_pre_filter(state, p, h.snapshot.node_infos)
    assert st.success, st
    return state


U, UU = Status(Code.Unschedulable), Status(Code.UnschedulableAndUnresolvable)


# -- TestPostFilter ----------------------------------------------------------------------
POST_FILTER = [
    ("higher priority can be made schedulable",
     pod("p", HIGH), [pod("p1", node="node1")], [node("node1", ONE_POD)], {"node1": U}, (),
     "node1", Code.Success, None),
    ("tied priority is still unschedulable",
     pod("p"), [pod("p1", node="node1")], [node("node1", ONE_POD)], {"node1": U}, (),
     "", Code.Unschedulable,
     "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."),
    ("respects filtered node statuses",
     pod("p", HIGH), [pod("p1", node="node1")], [node("node1", ONE_POD)], {"node1": UU}, (),
     "", Code.Unschedulable,
     "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
    ("absent entry means UnschedulableAndUnresolvable",
     pod("p", HIGH), [pod("p1", node="node1")], [node("node1", ONE_POD)], {}, (),
     "", Code.Unschedulable,
     "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
    ("schedulable on one node",
     pod("p", MID), [pod("p1", HIGH, "node1"), pod("p2", LOW, "node2")],
     [node("node1", ONE_POD), node("node2", ONE_POD)], {"node1": U, "node2": U}, (),
     "node2", Code.Success, None),
    ("schedulable on min highest priority node",
     pod("p", VERY_HIGH),
     [pod("p1", HIGH, "node1", labels={"pdb": "non-violating"}),
      pod("p2", LOW, "node1", labels={"pdb": "violating"}),
      pod("p3", MID, "node2", labels={"pdb": "violating"})],
     [node("node1", ONE_POD), node("node2", ONE_POD)], {"node1": U, "node2": U},
     (pdb("violating-pdb", {"pdb": "violating"}, 0, "100%"),
      pdb("non-violating-pdb", {"pdb": "non-violating"}, 2**31 - 1, 0)),
     "node2", Code.Success, None),
    ("no enough resource after removing low priority pods",
     pod("p", HIGH, req=LARGE), [pod("p1", node="node1"), pod("p2", node="node2")],
     [node("node1", NODE_RES), node("node2", NODE_RES)], {"node1": U, "node2": U}, (),
     "", Code.Unschedulable, "preemption: 0/2 nodes are available: 2 Insufficient cpu."),
    ("mixed reasons: no lower priority pod and not enough cpu",
     pod("p", HIGH, req=LARGE),
     [pod("p1", HIGH, "node1"), pod("p2", node="node2"), pod("p3", HIGH, "node3")],
     [node("node1", ONE_POD), node("node2", NODE_RES), node("node3", ONE_POD)],
     {"node1": U, "node2": U, "node3": U}, (), "", Code.Unschedulable,
     "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
     "2 No preemption victims found for incoming pod."),
    ("mixed reasons: 2 unresolvable nodes and 2 without enough cpu",
     pod("p", HIGH, req=LARGE), [pod("p1", node="node1"), pod("p2", node="node2")],
     [node(f"node{i}", NODE_RES) for i in range(1, 5)], {"node1": U, "node2": U, "node4": UU}, (),
     "", Code.Unschedulable,
     "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling."),
    ("only one node, failing in RemovePod",
     pod("p", HIGH, req=LARGE), [pod("p1", node="node1")], [node("node1", LARGE, {"error": "true"})],
     {"node1": U}, (), None, Code.Error,
     'preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p'),
    ("one node failing in RemovePod, the other passes",
     pod("p", HIGH, req=LARGE), [pod("p1", node="node1"), pod("p2", node="node2", req=MEDIUM)],
     [node("node1", LARGE, {"error": "true"}), node("node2", LARGE)], {"node1": U, "node2": U}, (),
     "node2", Code.Success, None),
]


@pytest.mark.parametrize(("p", "pods", "nodes", "filtered", "pdbs", "want_node", "want_code", "want_msg"),
                         [c[1:] for c in POST_FILTER], ids=[c[0] for c in POST_FILTER])
def test_post_filter(p: Pod, pods: list[Pod], nodes: list[Node], filtered: dict[str, Status],
                     pdbs: tuple[PodDisruptionBudget, ...], want_node: str | None, want_code: Code,
                     want_msg: str | None) -> None:
    h, pl = build(pods, nodes, [fit, ErrorExtensions()], pdbs)
    result, st = pl.post_filter(pre_filtered(h, p), p, filtered)
    assert st.code == want_code
    if want_msg is not None:
        assert st.reasons == (want_msg,)
    if want_node is None:
        assert result is None
    else:
        assert result is not None and result.nominated_node_name == want_node


def test_preemption_evicts_its_victims_and_clears_lower_nominations() -> None:
    """Upstream preemption.go ``prepareCandidate``: each victim of the chosen candidate is
    preempted through the handle (``PreemptPod``), then the pods nominated to that node
    with a lower priority than the preemptor (``getLowerPriorityNominatedPods``: strictly
    lower) lose their nomination; equal or higher ones keep it. Hand computation: node1
    has room for two pods and holds p1 (LOW); n-high (HIGH, nominated there) counts for
    p (HIGH) as upstream's addGENominatedPods adds it, so p fits only without p1."""
    h, pl = build([pod("p1", LOW, "node1")], [node("node1", {"pods": "2"})], [fit])
    h.nominated = {"node1": [pod("n-low", LOW), pod("n-mid", MID), pod("n-high", HIGH)]}
    p = pod("p", HIGH)
    result, st = pl.post_filter(pre_filtered(h, p), p, {"node1": U})
    assert st.success and result is not None and result.nominated_node_name == "node1"
    assert h.preempted == [("default/p", "default/p1", "node1")]
    assert h.cleared == ["default/n-low", "default/n-mid"]


def test_no_eviction_without_a_nomination() -> None:
    """Upstream ``Preempt``: ``prepareCandidate`` runs only for the chosen candidate; with
    no candidate (equal priority, so no victims) nothing is evicted or cleared."""
    h, pl = build([pod("p1", LOW, "node1")], [node("node1", ONE_POD)], [fit])
    h.nominated = {"node1": [pod("n-neg", NEG)]}
    p = pod("p", LOW)
    result, st = pl.post_filter(pre_filtered(h, p), p, {"node1": U})
    assert st.code == Code.Unschedulable and result is not None and result.nominated_node_name == ""
    assert (h.preempted, h.cleared) == ([], [])


# -- TestDryRunPreemption ----------------------------------------------------------------
def _pts(h: Any) -> Any:
    from kubesched.plugins.podtopologyspread.plugin import PodTopologySpread
    return PodTopologySpread(None, h)


def _ipa(h: Any) -> Any:
    from kubesched.plugins.interpodaffinity.plugin import InterPodAffinity
    return InterPodAffinity(None, h)


def _spread_pod(name: str, prio: int) -> Pod:
    sel = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
    return (make_pod().name(name).uid(name).label("foo", "").priority(prio)
            .spread(1, "zone", "DoNotSchedule", sel).spread(1, "hostname", "DoNotSchedule", sel).obj())


def _anti_affinity_pod(name: str, prio: int, node_name: str) -> Pod:
    term = {"labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
            "topologyKey": "hostname"}
    return (make_pod().name(name).uid(name).node(node_name).label("foo", "").priority(prio).req(**SMALL)
            .pod_affinity("podAntiAffinity", True, term).obj())


N12 = ["node1", "node2"]
N5 = [f"node{i}" for i in range(1, 6)]
ARGS_40_1 = DefaultPreemptionArgs(min_candidate_nodes_percentage=40, min_candidate_nodes_absolute=1)
ARGS_40_2 = DefaultPreemptionArgs(min_candidate_nodes_percentage=40, min_candidate_nodes_absolute=2)
FOO = {"app": "foo"}

# name, node specs, preemptors, init pods, extra plugins, pdbs, fake filter code, args,
# offsets per cycle, expected per cycle {node: (sorted victims, pdb violations)}, filter calls
DRY_RUN = [
    ("does not fit on any node", N12, [pod("p", HIGH)],
     [pod("p1", MID, "node1"), pod("p2", MID, "node2")], [ConstFilter("FalseFilter", False)], (),
     None, None, [0], [{}], [2]),
    ("fits with no preemption", N12, [pod("p", HIGH)],
     [pod("p1", MID, "node1"), pod("p2", MID, "node2")], [ConstFilter("TrueFilter", True)], (),
     Code.Unschedulable, None, [0], [{}], [2]),
    ("fits on one node with no preemption", N12, [pod("node1", HIGH)],
     [pod("p1", MID, "node1"), pod("p2", MID, "node2")], [ConstFilter("MatchFilter", None)], (),
     Code.Unschedulable, None, [0], [{}], [2]),
    ("fits on both nodes when lower priority pods are preempted", N12, [pod("p", HIGH, req=LARGE)],
     [pod("p1", MID, "node1", LARGE), pod("p2", MID, "node2", LARGE)], [fit], (), None, None, [0],
     [{"node1": (["p1"], 0), "node2": (["p2"], 0)}], [4]),
    ("other pods are higher priority, no preemption", N12, [pod("p", LOW, req=LARGE)],
     [pod("p1", MID, "node1", LARGE), pod("p2", MID, "node2", LARGE)], [fit], (), None, None, [0],
     [{}], [0]),
    ("medium priority pod is preempted, lower priority one stays as it is small", N12,
     [pod("p", HIGH, req=LARGE)],
     [pod("p1.1", LOW, "node1", SMALL), pod("p1.2", MID, "node1", LARGE), pod("p2", MID, "node2", LARGE)],
     [fit], (), None, None, [0], [{"node1": (["p1.2"], 0), "node2": (["p2"], 0)}], [5]),
    ("mixed priority pods are preempted", N12, [pod("p", HIGH, req=LARGE)],
     [pod("p1.1", MID, "node1", SMALL), pod("p1.2", LOW, "node1", SMALL), pod("p1.3", MID, "node1", MEDIUM),
      pod("p1.4", HIGH, "node1", SMALL), pod("p2", HIGH, "node2", LARGE)],
     [fit], (), None, None, [0], [{"node1": (["p1.2", "p1.3"], 0)}], [4]),
    ("mixed priority pods are preempted, later start time when priorities are equal", N12,
     [pod("p", HIGH, req=LARGE)],
     [pod("p1.1", LOW, "node1", SMALL, 5), pod("p1.2", LOW, "node1", SMALL, 4),
      pod("p1.3", MID, "node1", MEDIUM, 3), pod("p1.4", HIGH, "node1", SMALL, 2),
      pod("p2", HIGH, "node2", LARGE, 1)],
     [fit], (), None, None, [0], [{"node1": (["p1.1", "p1.3"], 0)}], [4]),
    ("pod with anti-affinity is preempted", N12,
     [make_pod().name("p").uid("p").label("foo", "").priority(HIGH).req(**SMALL).obj()],
     [_anti_affinity_pod("p1.1", LOW, "node1"), pod("p1.2", MID, "node1", SMALL),
      pod("p1.3", HIGH, "node1", SMALL), pod("p2", HIGH, "node2", SMALL)],
     [fit, _ipa], (), None, None, [0], [{"node1": (["p1.1"], 0)}], [3]),
    ("preemption to resolve pod topology spread filter failure",
     ["node-a/zone1", "node-b/zone1", "node-x/zone2"], [_spread_pod("p", HIGH)],
     [pod("pod-a1", MID, "node-a", labels={"foo": ""}), pod("pod-a2", LOW, "node-a", labels={"foo": ""}),
      pod("pod-b1", LOW, "node-b", labels={"foo": ""}), pod("pod-x1", HIGH, "node-x", labels={"foo": ""}),
      pod("pod-x2", HIGH, "node-x", labels={"foo": ""})],
     [_pts], (), None, None, [0], [{"node-a": (["pod-a2"], 0), "node-b": (["pod-b1"], 0)}], [5]),
    ("Unschedulable from the filter plugins during preemption", N12, [pod("p", HIGH, req=LARGE)],
     [pod("p1", MID, "node1", LARGE), pod("p2", MID, "node2", LARGE)], [fit], (),
     Code.Unschedulable, None, [0], [{}], [2]),
    ("violation of same pdb", ["node1"], [pod("p", HIGH, req=VERY_LARGE)],
     [pod("p1.1", MID, "node1", MEDIUM, labels=FOO), pod("p1.2", MID, "node1", MEDIUM, labels=FOO)],
     [fit], [pdb("pdb", FOO, 1)], None, None, [0], [{"node1": (["p1.1", "p1.2"], 1)}], [3]),
    ("violation of the pdb, the victim is not in DisruptedPods", ["node1"], [pod("p", HIGH, req=VERY_LARGE)],
     [pod("p1.1", MID, "node1", MEDIUM, labels=FOO), pod("p1.2", MID, "node1", MEDIUM, labels=FOO)],
     [fit], [pdb("pdb", FOO, 1, disrupted=["p2"])], None, None, [0],
     [{"node1": (["p1.1", "p1.2"], 1)}], [3]),
    ("violation of the pdb, the victim is in DisruptedPods", ["node1"], [pod("p", HIGH, req=VERY_LARGE)],
     [pod("p1.1", MID, "node1", MEDIUM, labels=FOO), pod("p1.2", MID, "node1", MEDIUM, labels=FOO)],
     [fit], [pdb("pdb", FOO, 1, disrupted=["p1.2"])], None, None, [0],
     [{"node1": (["p1.1", "p1.2"], 0)}], [3]),
    ("violation of the pdb, a victim in DisruptedPods counts as non-violating", ["node1"],
     [pod("p", HIGH, req=VERY_LARGE)],
     [pod("p1.1", MID, "node1", MEDIUM, labels=FOO), pod("p1.2", MID, "node1", MEDIUM, labels=FOO),
      pod("p1.3", MID, "node1", MEDIUM, labels=FOO)],
     [fit], [pdb("pdb", FOO, 1, disrupted=["p1.3"])], None, None, [0],
     [{"node1": (["p1.1", "p1.2", "p1.3"], 1)}], [4]),
    ("all nodes are possible candidates, but the args limit to 2", N5, [pod("p", HIGH, req=LARGE)],
     [pod(f"p{i}", MID, f"node{i}", LARGE) for i in range(1, 6)], [fit], (), None, ARGS_40_1, [4],
     [{"node1": (["p1"], 0), "node5": (["p5"], 0)}], [4]),
    ("some nodes are not possible candidates, the args limit to 2", N5, [pod("p", HIGH, req=LARGE)],
     [pod("p1", MID, "node1", LARGE), pod("p2", VERY_HIGH, "node2", LARGE), pod("p3", MID, "node3", LARGE),
      pod("p4", MID, "node4", LARGE), pod("p5", VERY_HIGH, "node5", LARGE)],
     [fit], (), None, ARGS_40_1, [4], [{"node1": (["p1"], 0), "node3": (["p3"], 0)}], [4]),
    ("offset across multiple scheduling cycles and wrap around", N5,
     [pod("tp1", HIGH, req=LARGE), pod("tp2", HIGH, req=LARGE), pod("tp3", HIGH, req=LARGE)],
     [pod(f"p{i}", MID, f"node{i}", LARGE) for i in range(1, 6)], [fit], (), None, ARGS_40_1, [4, 1, 3],
     [{"node1": (["p1"], 0), "node5": (["p5"], 0)}, {"node2": (["p2"], 0), "node3": (["p3"], 0)},
      {"node4": (["p4"], 0), "node5": (["p5"], 0)}], [4, 4, 4]),
    ("looks past numCandidates until a non-PDB violating node is found", N5, [pod("p", HIGH, req=LARGE)],
     [pod("p1", MID, "node1", LARGE, labels=FOO), pod("p2", MID, "node2", LARGE, labels=FOO),
      pod("p3", MID, "node3", LARGE), pod("p4", MID, "node4", LARGE), pod("p5", MID, "node5", LARGE, labels=FOO)],
     [fit], [pdb("pdb", FOO, 0)], None, ARGS_40_2, [4],
     [{"node1": (["p1"], 1), "node3": (["p3"], 0), "node5": (["p5"], 1)}], [8]),
]


@pytest.mark.parametrize(("specs", "preemptors", "init", "plugins", "pdbs", "rc", "args", "offsets",
                          "want", "calls"), [c[1:] for c in DRY_RUN], ids=[c[0] for c in DRY_RUN])
def test_dry_run_preemption(specs: list[str], preemptors: list[Pod], init: list[Pod], plugins: list[Any],
                            pdbs: list[PodDisruptionBudget], rc: Code | None,
                            args: DefaultPreemptionArgs | None, offsets: list[int],
                            want: list[dict[str, tuple[list[str], int]]], calls: list[int]) -> None:
    nodes = [node(s, VERY_LARGE) for s in specs]
    fake = FakeFilter({n.name: rc for n in nodes} if rc is not None else {})
    h, pl = build(init, nodes, [fake, *plugins], pdbs, args)
    infos = sorted(h.snapshot.node_infos, key=lambda ni: ni.name)
    allowed = [pdb.disruptions_allowed or 0 for pdb in pdbs]
    for cycle, p in enumerate(preemptors):
        before = fake.calls
        offset, num = offsets[cycle], pl.calculate_num_candidates(len(infos))
        got, _, _ = pl.evaluator.dry_run_preemption(pre_filtered(h, p), p, infos, pdbs, allowed,
                                                    offset, num, StartTimes())
        assert {c.name: (sorted(v.name for v in c.victims), c.num_pdb_violations) for c in got} == want[cycle]
        assert fake.calls - before == calls[cycle]


# -- TestSelectBestCandidate ---------------------------------------------------------------
def _on(node_name: str, specs: Sequence[tuple[str, int, dict[str, str], int]]) -> list[Pod]:
    return [pod(n, prio, node_name, req, start) for n, prio, req, start in specs]


SELECT_BEST = [
    ("fits on both nodes when lower priority pods are preempted", 2, HIGH, LARGE,
     _on("node1", [("p1", MID, LARGE, 0)]) + _on("node2", [("p2", MID, LARGE, 0)]), {"node1", "node2"}),
    ("node with min highest priority pod is picked", 3, HIGH, VERY_LARGE,
     _on("node1", [("p1.1", MID, MEDIUM, 0), ("p1.2", MID, LARGE, 0)])
     + _on("node2", [("p2.1", MID, MEDIUM, 0), ("p2.2", LOW, MEDIUM, 0)])
     + _on("node3", [("p3.1", LOW, MEDIUM, 0), ("p3.2", LOW, MEDIUM, 0)]), {"node3"}),
    ("same highest priority, minimum sum of priorities is picked", 3, HIGH, VERY_LARGE,
     _on("node1", [("p1.1", MID, MEDIUM, 0), ("p1.2", MID, LARGE, 0)])
     + _on("node2", [("p2.1", MID, LARGE, 0), ("p2.2", LOW, MEDIUM, 0)])
     + _on("node3", [("p3.1", MID, MEDIUM, 0), ("p3.2", MID, MEDIUM, 0)]), {"node2"}),
    ("same highest priority and sum, minimum number of pods is picked", 3, HIGH, VERY_LARGE,
     _on("node1", [("p1.1", MID, SMALL, 0), ("p1.2", NEG, SMALL, 0), ("p1.3", MID, SMALL, 0),
                   ("p1.4", NEG, SMALL, 0)])
     + _on("node2", [("p2.1", MID, LARGE, 0), ("p2.2", NEG, MEDIUM, 0)])
     + _on("node3", [("p3.1", MID, MEDIUM, 0), ("p3.2", NEG, SMALL, 0), ("p3.3", LOW, SMALL, 0)]),
     {"node2"}),
    ("sum of adjusted priorities is considered", 3, HIGH, VERY_LARGE,
     _on("node1", [("p1.1", MID, SMALL, 0), ("p1.2", NEG, SMALL, 0), ("p1.3", NEG, SMALL, 0)])
     + _on("node2", [("p2.1", MID, LARGE, 0), ("p2.2", NEG, MEDIUM, 0)])
     + _on("node3", [("p3.1", MID, MEDIUM, 0), ("p3.2", NEG, SMALL, 0), ("p3.3", LOW, SMALL, 0)]),
     {"node2"}),
    ("non-overlapping lowest high priority, sum priorities, and number of pods", 4, VERY_HIGH, VERY_LARGE,
     _on("node1", [("p1.1", MID, SMALL, 0), ("p1.2", LOW, SMALL, 0), ("p1.3", LOW, SMALL, 0)])
     + _on("node2", [("p2.1", HIGH, LARGE, 0)])
     + _on("node3", [("p3.1", MID, MEDIUM, 0), ("p3.2", LOW, SMALL, 0), ("p3.3", LOW, SMALL, 0),
                     ("p3.4", LOW, MEDIUM, 0)])
     + _on("node4", [("p4.1", MID, MEDIUM, 0), ("p4.2", MID, SMALL, 0), ("p4.3", MID, SMALL, 0),
                     ("p4.4", NEG, SMALL, 0)]), {"node1"}),
    ("same priority, same number of victims, different start time for each node's pod", 3, HIGH,
     VERY_LARGE,
     _on("node1", [("p1.1", MID, MEDIUM, 2), ("p1.2", MID, MEDIUM, 2)])
     + _on("node2", [("p2.1", MID, MEDIUM, 3), ("p2.2", MID, MEDIUM, 3)])
     + _on("node3", [("p3.1", MID, MEDIUM, 1), ("p3.2", MID, MEDIUM, 1)]), {"node2"}),
    ("same priority, same number of victims, different start time for all pods", 3, HIGH, VERY_LARGE,
     _on("node1", [("p1.1", MID, MEDIUM, 4), ("p1.2", MID, MEDIUM, 2)])
     + _on("node2", [("p2.1", MID, MEDIUM, 5), ("p2.2", MID, MEDIUM, 1)])
     + _on("node3", [("p3.1", MID, MEDIUM, 3), ("p3.2", MID, MEDIUM, 6)]), {"node3"}),
    ("different priority, same number of victims, different start time for all pods", 3, HIGH, VERY_LARGE,
     _on("node1", [("p1.1", LOW, MEDIUM, 4), ("p1.2", MID, MEDIUM, 2)])
     + _on("node2", [("p2.1", MID, MEDIUM, 6), ("p2.2", LOW, MEDIUM, 1)])
     + _on("node3", [("p3.1", LOW, MEDIUM, 3), ("p3.2", MID, MEDIUM, 5)]), {"node2"}),
]


@pytest.mark.parametrize(("n", "prio", "req", "pods", "want"), [c[1:] for c in SELECT_BEST],
                         ids=[c[0] for c in SELECT_BEST])
@pytest.mark.parametrize("by_name", [True, False], ids=["tie-by-name", "tie-random"])
def test_select_best_candidate(n: int, prio: int, req: dict[str, str], pods: list[Pod], want: set[str],
                               by_name: bool) -> None:
    p = pod("p", prio, req=req)
    h, pl = build(pods, [node(f"node{i}", VERY_LARGE) for i in range(1, n + 1)], [fit])
    h.tie_break_by_name = by_name
    state = pre_filtered(h, p)
    result, st = pl.post_filter(state, p, {ni.name: U for ni in h.snapshot.node_infos})
    assert st.success and result is not None
    assert result.nominated_node_name in want
    if by_name:  # a final tie goes to the smallest name
        assert result.nominated_node_name == min(want)
    explanation = result.explanation
    assert result.nominated_node_name in explanation.tie_set
    assert set(explanation.tie_set) <= want


# -- TestPodEligibleToPreemptOthers ----------------------------------------------------------
TERMINATING: dict[str, Any] = {"metadata__deletionTimestamp": "2024-01-01T00:00:00Z"}
PREEMPTED: dict[str, Any] = {**TERMINATING, "status__conditions": [
    {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]}
ELIGIBLE = [
    ("nominated node is unresolvable", pod("p", HIGH, status__nominatedNodeName="node1"),
     [pod("p1", LOW, "node1", **TERMINATING)], ["node1"],
     Status(Code.UnschedulableAndUnresolvable, ("node(s) had untolerated taint(s)",)), True),
    ("without nominated node", pod("p", HIGH), [], [], None, True),
    ("preemptionPolicy Never", pod("p", HIGH, spec__preemptionPolicy="Never"), [], [], None, False),
    ("victim terminating with the DisruptionTarget condition", pod("p", HIGH, status__nominatedNodeName="node1"),
     [pod("p1", LOW, "node1", **PREEMPTED)], ["node1"], None, False),
    ("non-victim pods terminating", pod("p", HIGH, status__nominatedNodeName="node1"),
     [pod("p1", LOW, "node1", **TERMINATING)], ["node1"], None, True),
]


@pytest.mark.parametrize(("p", "pods", "nodes", "nominated_status", "want"), [c[1:] for c in ELIGIBLE],
                         ids=[c[0] for c in ELIGIBLE])
def test_pod_eligible_to_preempt_others(p: Pod, pods: list[Pod], nodes: list[str],
                                        nominated_status: Status | None, want: bool) -> None:
    _, pl = build(pods, [node(n) for n in nodes])
    assert pl.pod_eligible_to_preempt_others(p, nominated_status)[0] is want


def test_not_eligible_messages() -> None:
    p = pod("p", HIGH, status__nominatedNodeName="node1")
    h, pl = build([pod("p1", LOW, "node1", **PREEMPTED)], [node("node1", ONE_POD)], [fit])
    assert pl.post_filter(CycleState(), p, {"node1": U}) == (
        None, Status(Code.Unschedulable, ("preemption: not eligible due to a terminating pod on the nominated node.",)))
    never = pod("q", HIGH, spec__preemptionPolicy="Never")
    assert pl.post_filter(CycleState(), never, {"node1": U}) == (
        None, Status(Code.Unschedulable, ("preemption: not eligible due to preemptionPolicy=Never.",)))


# -- TestPreempt -----------------------------------------------------------------------------
PREEMPT = [
    ("basic preemption logic", pod("p", HIGH, req=VERY_LARGE, spec__preemptionPolicy="PreemptLowerPriority"),
     [pod("p1.1", LOW, "node1", SMALL), pod("p1.2", LOW, "node1", SMALL), pod("p2.1", HIGH, "node2", LARGE),
      pod("p3.1", MID, "node3", MEDIUM)], ["node1", "node2", "node3"], fit, "node1", ["p1.1", "p1.2"]),
    ("preemption for topology spread constraints", _spread_pod("p", HIGH),
     [pod("p-a1", HIGH, "node-a", labels={"foo": ""}), pod("p-a2", HIGH, "node-a", labels={"foo": ""}),
      pod("p-b1", LOW, "node-b", labels={"foo": ""}), pod("p-x1", HIGH, "node-x", labels={"foo": ""}),
      pod("p-x2", HIGH, "node-x", labels={"foo": ""})],
     ["node-a/zone1", "node-b/zone1", "node-x/zone2"], _pts, "node-b", ["p-b1"]),
    ("no preempting in pod", pod("p", HIGH, req=VERY_LARGE, spec__preemptionPolicy="Never"),
     [pod("p1.1", LOW, "node1", SMALL), pod("p1.2", LOW, "node1", SMALL), pod("p2.1", HIGH, "node2", LARGE),
      pod("p3.1", MID, "node3", MEDIUM)], ["node1", "node2", "node3"], fit, None, []),
    ("preemptionPolicy is nil", pod("p", HIGH, req=VERY_LARGE),
     [pod("p1.1", LOW, "node1", SMALL), pod("p1.2", LOW, "node1", SMALL), pod("p2.1", HIGH, "node2", LARGE),
      pod("p3.1", MID, "node3", MEDIUM)], ["node1", "node2", "node3"], fit, "node1", ["p1.1", "p1.2"]),
]


@pytest.mark.parametrize(("p", "pods", "specs", "plugin", "want_node", "want_victims"),
                         [c[1:] for c in PREEMPT], ids=[c[0] for c in PREEMPT])
def test_preempt(p: Pod, pods: list[Pod], specs: list[str], plugin: Any, want_node: str | None,
                 want_victims: list[str]) -> None:
    h, pl = build(pods, [node(s, VERY_LARGE) for s in specs], [plugin])
    result, st = pl.post_filter(pre_filtered(h, p), p, {ni.name: U for ni in h.snapshot.node_infos})
    if want_node is None:
        assert result is None and st.code == Code.Unschedulable
        return
    assert st.success and result is not None
    assert result.nominated_node_name == want_node
    assert sorted(v.name for v in result.victims) == want_victims


# -- DefaultPreemptionArgs (validation_pluginargs_test.go TestValidateDefaultPreemptionArgs) --
ARGS_CASES = [
    ("valid args (default)", {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}, None),
    ("negative minCandidateNodesPercentage",
     {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": 100}, "minCandidateNodesPercentage"),
    ("minCandidateNodesPercentage over 100",
     {"minCandidateNodesPercentage": 900, "minCandidateNodesAbsolute": 100}, "minCandidateNodesPercentage"),
    ("negative minCandidateNodesAbsolute",
     {"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": -1}, "minCandidateNodesAbsolute"),
    ("all zero", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     "minCandidateNodesPercentage"),
    ("both negative", {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
     "minCandidateNodesPercentage"),
]


@pytest.mark.parametrize(("raw", "bad_field"), [c[1:] for c in ARGS_CASES], ids=[c[0] for c in ARGS_CASES])
def test_args_validation(raw: dict[str, int], bad_field: str | None) -> None:
    path = "profiles[0].pluginConfig[0].args"
    if bad_field is None:
        assert DefaultPreemption.parse_args(raw, path) == DefaultPreemptionArgs(
            min_candidate_nodes_percentage=raw["minCandidateNodesPercentage"],
            min_candidate_nodes_absolute=raw["minCandidateNodesAbsolute"])
        return
    with pytest.raises(ProfileError) as exc:
        DefaultPreemption.parse_args(raw, path)
    assert exc.value.field == f"{path}.{bad_field}"


def test_args_defaults_and_unknown_fields() -> None:
    # SetDefaults_DefaultPreemptionArgs: 10% and 100
    assert DefaultPreemption.parse_args(None, "a") == DefaultPreemptionArgs(
        min_candidate_nodes_percentage=10, min_candidate_nodes_absolute=100)
    assert DefaultPreemption.parse_args({"minCandidateNodesAbsolute": 5}, "a") == DefaultPreemptionArgs(
        min_candidate_nodes_percentage=10, min_candidate_nodes_absolute=5)
    with pytest.raises(ProfileError):
        DefaultPreemption.parse_args({"minCandidateNodes": 5}, "a")


@pytest.mark.parametrize(("pct", "absolute", "nodes", "want"), [
    (10, 100, 5, 5),        # at most all nodes
    (10, 100, 5000, 500),   # 10% of 5000 > 100
    (10, 100, 300, 100),    # at least 100
    (40, 1, 5, 2),          # the DryRun tables' args
    (40, 2, 5, 2),
    (1, 0, 50, 0),          # 50*1/100 truncates to 0
], ids=["capped", "percentage", "absolute", "40-1", "40-2", "truncating"])
def test_calculate_num_candidates(pct: int, absolute: int, nodes: int, want: int) -> None:
    _, pl = build([], [], args=DefaultPreemptionArgs(min_candidate_nodes_percentage=pct,
                                                     min_candidate_nodes_absolute=absolute))
    assert pl.calculate_num_candidates(nodes) == want


# -- PDB budgets -------------------------------------------------------------------------------
def _pdb_raw(spec: dict[str, Any]) -> PodDisruptionBudget:
    return PodDisruptionBudget.from_dict({"metadata": {"name": "b", "namespace": "default"}, "spec": spec})


APP = {"selector": {"matchLabels": {"app": "db"}}}
DB = [pod(f"db-{i}", node="n1", labels={"app": "db"}) for i in range(3)]
PDB_BUDGETS = [
    # example-03-preemption: upstream recorded currentHealthy 2, desiredHealthy 2, allowed 0
    ("minAvailable equal to the pods", {**APP, "minAvailable": 2}, DB[:2], 0),
    ("minAvailable below the pods", {**APP, "minAvailable": 1}, DB, 2),
    ("minAvailable percentage rounds up", {**APP, "minAvailable": "50%"}, DB, 1),
    ("maxUnavailable percentage rounds up", {**APP, "maxUnavailable": "50%"}, DB, 2),
    ("maxUnavailable integer", {**APP, "maxUnavailable": 1}, DB, 1),
    ("no matching pods", {**APP, "minAvailable": 0}, [], 0),
    ("neither set", dict(APP), DB, 0),
    ("terminating pods are not healthy", {**APP, "minAvailable": 1},
     DB[:2] + [pod("db-x", node="n1", labels={"app": "db"}, metadata__deletionTimestamp="2024-01-01T00:00:00Z")], 1),
    ("other namespaces do not count", {**APP, "minAvailable": 1},
     [pod("db-y", node="n1", labels={"app": "db"}, metadata__namespace="other")], 0),
]


@pytest.mark.parametrize(("spec", "pods", "want"), [c[1:] for c in PDB_BUDGETS], ids=[c[0] for c in PDB_BUDGETS])
def test_disruptions_allowed_without_status(spec: dict[str, Any], pods: list[Pod], want: int) -> None:
    from kubesched.plugins.preemption.pdb import disruptions_allowed
    assert disruptions_allowed(_pdb_raw(spec), pods) == want


def test_pdb_with_empty_selector_protects_nothing() -> None:
    """filterPodsWithPDBViolation: a nil or empty selector matches no victim."""
    from kubesched.plugins.preemption.pdb import filter_pods_with_pdb_violation
    victims = [pod("a", labels={"app": "db"}), pod("b")]
    specs: list[dict[str, Any]] = [{"selector": {}}, {}]
    for spec in specs:
        assert filter_pods_with_pdb_violation(victims, [_pdb_raw(spec)], [0]) == ([], victims)
    assert filter_pods_with_pdb_violation(victims, [_pdb_raw(APP)], [0]) == ([victims[0]], [victims[1]])


# -- Go's sort.Slice -------------------------------------------------------------------------
GO_SORT = [  # permutations printed by Go's sort.Slice sorting indices by these keys
    ([i % 3 for i in range(20)], [9, 18, 15, 3, 12, 0, 6, 10, 7, 4, 13, 16, 1, 19, 8, 5, 11, 14, 2, 17]),
    ([0] * 60, list(range(60))),
    ([(i * 7) % 4 for i in range(13)], [12, 4, 8, 0, 7, 11, 3, 6, 10, 2, 5, 9, 1]),
]


@pytest.mark.parametrize(("keys", "want"), GO_SORT, ids=["3-keys-20", "equal-60", "4-keys-13"])
def test_go_sort_slice_matches_go(keys: list[int], want: list[int]) -> None:
    from kubesched.plugins.preemption.gosort import go_sort_slice
    items = list(enumerate(keys))
    go_sort_slice(items, lambda a, b: a[1] < b[1])
    assert [i for i, _ in items] == want


# -- fidelity example-03-preemption (upstream v1.34.1 decisions) ------------------------------
def _example03() -> tuple[list[Pod], list[Node], list[PodDisruptionBudget]]:
    low, medium = 100, 1000
    big = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    nodes = [make_node().name("n1").capacity(**big).obj(), make_node().name("n2").capacity(**big).obj()]
    old = "2000-01-01T00:00:00Z"
    pods = [
        make_pod().name("db-0").label("app", "db").node("n1").priority(low).start_time(old)
        .req(cpu="2", memory="2Gi").obj(),
        make_pod().name("db-1").label("app", "db").node("n1").priority(low).start_time(old)
        .req(cpu="2", memory="2Gi").obj(),
        make_pod().name("batch-0").label("app", "batch").node("n2").priority(low)
        .start_time("2024-01-01T00:00:00Z").req(cpu="1500m", memory="2Gi").obj(),
        make_pod().name("batch-1").label("app", "batch").node("n2").priority(low)
        .start_time("2024-01-02T00:00:00Z").req(cpu="1500m", memory="2Gi").obj(),
        make_pod().name("svc-0").label("app", "svc").node("n2").priority(medium).start_time(old)
        .req(cpu="1", memory="1Gi").obj(),
    ]
    pdbs = [PodDisruptionBudget.from_dict({"metadata": {"name": "db-pdb", "namespace": "default"},
                                           "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "db"}}}})]
    return pods, nodes, pdbs


INSUFFICIENT_CPU = Status(Code.Unschedulable, ("Insufficient cpu",), "NodeResourcesFit")


def test_example03_critical_preempts_batch_pods() -> None:
    pods, nodes, pdbs = _example03()
    h, pl = build(pods, nodes, [fit], pdbs)
    critical = make_pod().name("critical").priority(100000).req(cpu="3", memory="1Gi").obj()
    state = pre_filtered(h, critical)
    result, st = pl.post_filter(state, critical, {"n1": INSUFFICIENT_CPU, "n2": INSUFFICIENT_CPU})
    assert st.success
    assert result is not None and result.nominated_node_name == "n2"
    assert [v.key for v in result.victims] == ["default/batch-0", "default/batch-1"]
    explanation = result.explanation
    assert {c.name: ([v.key for v in c.victims], c.num_pdb_violations) for c in explanation.candidates} == {
        "n1": (["default/db-0", "default/db-1"], 2), "n2": (["default/batch-0", "default/batch-1"], 0)}
    assert explanation.tie_set == ("n2",)


def test_example03_messages() -> None:
    pods, nodes, pdbs = _example03()
    nonpreempting = (make_pod().name("nonpreempting").priority(100000).preemption_policy("Never")
                     .req(cpu="3", memory="1Gi").obj())
    h, pl = build(pods, nodes, [fit], pdbs)
    filtered = {"n1": INSUFFICIENT_CPU, "n2": INSUFFICIENT_CPU}
    assert pl.post_filter(pre_filtered(h, nonpreempting), nonpreempting, filtered) == (
        None, Status(Code.Unschedulable, ("preemption: not eligible due to preemptionPolicy=Never.",)))
    # after critical replaced the batch pods on n2, the filler finds no victims anywhere
    critical = (make_pod().name("critical").node("n2").priority(100000).start_time("2100-01-01T00:00:01Z")
                .req(cpu="3", memory="1Gi").obj())
    rest = [p for p in pods if not p.name.startswith("batch")] + [critical]
    h, pl = build(rest, nodes, [fit], pdbs)
    filler = make_pod().name("filler").priority(100).req(cpu="500m", memory="256Mi").obj()
    result, st = pl.post_filter(pre_filtered(h, filler), filler, filtered)
    assert result == PostFilterResult("")
    assert st == Status(Code.Unschedulable, (
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",))


def test_select_victims_on_node_helper_works_on_copies() -> None:
    """The "mixed priority pods are preempted" node of TestDryRunPreemption, through the
    exposed helper: victims come most important first, and the snapshot is untouched."""
    from kubesched.plugins.defaultpreemption import select_victims_on_node
    init = [pod("p1.1", MID, "node1", SMALL), pod("p1.2", LOW, "node1", SMALL), pod("p1.3", MID, "node1", MEDIUM),
            pod("p1.4", HIGH, "node1", SMALL)]
    h, pl = build(init, [node("node1", VERY_LARGE)], [fit])
    p = pod("p", HIGH, req=LARGE)
    ni = h.snapshot.get("node1")
    assert ni is not None
    victims, violations, st = select_victims_on_node(h, pre_filtered(h, p), p, ni)
    assert st.success and violations == 0
    assert [v.name for v in victims] == ["p1.3", "p1.2"]
    assert len(ni.pods) == 4 and ni.requested["cpu"] == 500
    assert pl.select_victims_on_node(pre_filtered(h, p), p, ni)[0] == victims


def test_pods_without_start_time_count_as_started_now() -> None:
    """util.GetPodStartTime: no status.startTime means time.Now(), later than any start."""
    started, unstarted = pod("a", MID, start=5), pod("b", MID)
    times = StartTimes()
    assert times.more_important(started, unstarted)
    assert not times.more_important(unstarted, started)
    assert not times.more_important(unstarted, pod("c", MID))  # two "now"s tie
    assert times.more_important(pod("d", HIGH), started)       # priority first
    # GetEarliestPodStartTime: the earliest start among the highest-priority victims only
    victims = [pod("x", HIGH, start=9), pod("y", LOW, start=1), pod("z", HIGH, start=7)]
    assert times.earliest_start_of_highest_priority(victims) == 7_000_000_000
