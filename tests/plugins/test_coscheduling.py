"""Coscheduling (kubernetes-sigs/scheduler-plugins, v0.34.7) against scheduler-plugins' tables.

Ported from ``pkg/coscheduling/coscheduling_test.go`` (TestPodGroupBackoffTime 1 case,
TestLess 14, TestPermit 3, TestLessAfterScheduleFailure 1, TestPostFilter 3,
TestPostFilterRejectThreshold 6) and ``pkg/coscheduling/core/core_test.go`` (TestPreFilter
10, TestPermit 4, TestCheckClusterResource 3, TestMarkAndClearPodGroupScheduleFailure 1),
and ``apis/config/v1/defaults_test.go`` / ``validation_plugingargs_test.go`` for the args.
Coscheduling has no Filter or Score, so there is no batch form to compare. Cases marked
"kubesched" are ours; their expected values are worked out by hand in the comments.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.api.podgroup import POD_GROUP_LABEL, PodGroup
from kubesched.cache.cache import snapshot_of
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.errors import ProfileError
from kubesched.framework.interface import QueuedPodInfo
from kubesched.framework.status import Code, Status
from kubesched.framework.runtime.waiting import WaitingPod
from kubesched.plugins.coscheduling import Coscheduling
from kubesched.plugins.coscheduling.args import CoschedulingArgs, parse_args
from kubesched.plugins.coscheduling.clusterresource import GoQuantity, check_cluster_resource, parse_go_quantity
from kubesched.plugins.coscheduling.core import (
    CLOCK_EPOCH, PODS_TO_ACTIVATE_KEY, PermitResult, to_clock,
)
from kubesched.testing.handle import FakeHandle, StaticObjects
from kubesched.testing.wrappers import make_node, make_pod

NOW = 1000.0  # the scheduler clock in these tests; upstream's time.Now()


def pod(name: str, ns: str = "ns", group: str = "", node: str = "", prio: int | None = None,
        cpu: str = "", gated: bool = False) -> Pod:
    w = make_pod().name(name).namespace(ns).uid(name)
    if group:
        w = w.label(POD_GROUP_LABEL, group)
    if node:
        w = w.node(node)
    if prio is not None:
        w = w.priority(prio)
    if cpu:
        w = w.req(cpu=cpu)
    if gated:
        w = w.gate("example-gate")
    return w.obj()


def stamp(seconds: float) -> str:
    """An RFC 3339 creationTimestamp ``seconds`` after the clock's 0."""
    return (CLOCK_EPOCH + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def pg(name: str, ns: str = "ns", min_member: int = 0, created: float | None = None,
       min_resources: dict[str, str] | None = None, timeout: int | None = None) -> PodGroup:
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if created is not None:
        meta["creationTimestamp"] = stamp(created)
    spec: dict[str, Any] = {"minMember": min_member}
    if min_resources is not None:
        spec["minResources"] = min_resources
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    return PodGroup.from_dict({"metadata": meta, "spec": spec})


def node(name: str, cpu: str) -> Node:
    return make_node().name(name).capacity(cpu=cpu, pods="32").obj()  # st.MakeNode: 32 pods


def handle(pods: list[Pod] = (), groups: list[PodGroup] = (), nodes: list[Node] = ()) -> FakeHandle:  # type: ignore[assignment]
    objs = StaticObjects(pod_groups={g.key: g for g in groups}, pod_list=list(pods))
    return FakeHandle(snapshot_of(list(pods), list(nodes)), objs, clock=NOW)


def plugin(h: FakeHandle, **args: Any) -> Coscheduling:
    return Coscheduling(parse_args(args or None, "args"), h)


def wait(h: FakeHandle, p: Pod, node_name: str = "node") -> WaitingPod:
    wp = WaitingPod(p, node_name, {"Coscheduling": h.clock + 10}, waits={"Coscheduling": 10.0})
    h.waiting[p.uid] = wp
    return wp


def qpi(p: Pod, initial: float | None = None) -> QueuedPodInfo:
    return QueuedPodInfo(pod=p, timestamp=initial or 0.0, initial_attempt_timestamp=initial)


# -- coscheduling_test.go ---------------------------------------------------------------------
def test_pod_group_backoff_time() -> None:
    """TestPodGroupBackoffTime: "prevent pod falling into infinite scheduling loop"."""
    pods = [pod(f"pod{i}", group="pg1") for i in (1, 2, 3)]
    h = handle(pods, [pg("pg1", min_member=3)], [node("node", "4")])
    pl = plugin(h, podGroupBackoffSeconds=1)
    state = CycleState()
    state.write(PODS_TO_ACTIVATE_KEY, {})
    st, _ = pl.permit(state, pods[0], "test")
    assert st.code == Code.Wait
    assert sorted(state.read(PODS_TO_ACTIVATE_KEY)) == ["ns/pod2", "ns/pod3"]
    pl.post_filter(CycleState(), pods[1], {})
    _, st = pl.pre_filter(CycleState(), pods[2], h.snapshot.node_infos)
    assert st.code == Code.UnschedulableAndUnresolvable
    assert st.reasons[0] == "podGroup ns/pg1 failed recently"
    h.clock = NOW + 1  # go-cache: still there at the expiry instant ...
    assert pl.pre_filter(CycleState(), pods[2], h.snapshot.node_infos)[1].code == Code.UnschedulableAndUnresolvable
    h.clock = NOW + 1.5  # ... gone after it (kubesched)
    assert pl.pre_filter(CycleState(), pods[2], h.snapshot.node_infos)[1].success


LOW, HIGH = 10, 100
LESS_CASES = [  # (id, p1 (name, ns, prio, group, initial), p2, groups (name, ns, created), want)
    ("p1.priority less than p2.priority", ("p1", "ns1", LOW, "", None), ("p2", "ns2", HIGH, "", None), [], False),
    ("p1.priority greater than p2.priority", ("p1", "ns1", HIGH, "", None), ("p2", "ns2", LOW, "", None), [], True),
    ("equal priority. p1 is added to schedulingQ earlier than p2",
     ("p1", "ns1", HIGH, "", 1), ("p2", "ns2", HIGH, "", 2), [], True),
    ("equal priority. p2 is added to schedulingQ earlier than p1",
     ("p1", "ns1", HIGH, "", 2), ("p2", "ns2", HIGH, "", 1), [], False),
    ("p1.priority less than p2.priority, p1 belongs to pg1",
     ("p1", "ns1", LOW, "pg1", None), ("p2", "ns2", HIGH, "", None), [("pg1", "ns1", None)], False),
    ("p1.priority greater than p2.priority, p1 belongs to pg1",
     ("p1", "ns1", HIGH, "pg1", None), ("p2", "ns2", LOW, "", None), [("pg1", "ns1", None)], True),
    ("equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1",
     ("p1", "ns1", HIGH, "pg1", 1), ("p2", "ns2", HIGH, "", 2), [("pg1", "ns1", 1)], True),
    ("equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg1",
     ("p1", "ns1", HIGH, "pg1", 2), ("p2", "ns2", HIGH, "", 1), [("pg1", "ns1", 2)], False),
    ("p1.priority less than p2.priority, p1 belongs to pg1 and p2 belongs to pg2",
     ("p1", "ns1", LOW, "pg1", None), ("p2", "ns2", HIGH, "pg2", None), [("pg1", "ns1", 1), ("pg2", "ns2", 2)], False),
    ("p1.priority greater than p2.priority, p1 belongs to pg1 and and p2 belongs to pg2",
     ("p1", "ns1", HIGH, "pg1", None), ("p2", "ns2", LOW, "pg1", None), [("pg1", "ns1", 1), ("pg2", "ns2", 2)], True),
    ("equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1 and p2 belongs to pg2",
     ("p1", "ns1", HIGH, "pg1", 1), ("p2", "ns2", HIGH, "pg2", 2), [("pg1", "ns1", 1), ("pg2", "ns2", 2)], True),
    ("equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg2 and p2 belongs to pg1",
     ("p1", "ns", LOW, "pg2", 1), ("p2", "ns", HIGH, "pg1", 2), [("pg1", "ns", 1), ("pg2", "ns", 2)], False),
    ("equal priority and creation time, p1 belongs pg1 and p2 belong to pg2",
     ("p1", "ns1", HIGH, "pg2", 1), ("p2", "ns2", HIGH, "pg2", 1), [("pg1", "ns1", 1), ("pg2", "ns2", 2)], True),
    ("equal priority and creation time, and p2 belong to pg2",
     ("p1", "ns1", HIGH, "", 1), ("p2", "ns2", HIGH, "pg2", 1), [("pg2", "ns2", 2)], True),
]


@pytest.mark.parametrize("p1,p2,groups,want", [c[1:] for c in LESS_CASES], ids=[c[0] for c in LESS_CASES])
def test_less(p1: tuple[Any, ...], p2: tuple[Any, ...], groups: list[tuple[str, str, float | None]],
              want: bool) -> None:
    """TestLess; times are ``now + n s`` there, ``NOW + n`` on the scheduler clock here."""
    def info(spec: tuple[Any, ...]) -> QueuedPodInfo:
        name, ns, prio, group, initial = spec
        return qpi(pod(name, ns, group=group, prio=prio), None if initial is None else NOW + initial)

    h = handle(groups=[pg(n, ns, created=None if c is None else NOW + c) for n, ns, c in groups])
    pl = plugin(h)
    a, b = info(p1), info(p2)
    assert pl.less(a, b) is want
    assert (pl.sort_key(a) < pl.sort_key(b)) is want  # the heap's key agrees with Less


PERMIT_GROUPS = [pg("pg1", min_member=1), pg("pg2", min_member=2)]


@pytest.mark.parametrize("p,want", [
    (pod("p"), Code.Success),
    (pod("p", group="pg2"), Code.Wait),
    (pod("p", group="pg1"), Code.Success),
], ids=["pods do not belong to any podGroup", "pods belong to a pg1, but quorum not satisfied",
        "pods belong to a podGroup, and quorum satisfied"])
def test_permit(p: Pod, want: Code) -> None:
    """coscheduling_test.go TestPermit (the plugin's timeout there is 10s)."""
    h = handle([p], PERMIT_GROUPS, [node("node", "4")])
    st, timeout = plugin(h, permitWaitingTimeSeconds=10).permit(CycleState(), p, "node")
    assert st.code == want
    assert timeout == (10.0 if want == Code.Wait else 0.0)


def test_less_after_schedule_failure() -> None:
    """TestLessAfterScheduleFailure: a failed group sorts by its failure time, until cleared."""
    groups = [pg("pg1", min_member=3, created=NOW - 10), pg("pg2", min_member=3, created=NOW - 5)]
    pl = plugin(handle(groups=groups))
    p1 = qpi(pod("p1", group="pg1", prio=HIGH), NOW)
    p2 = qpi(pod("p2", group="pg2", prio=HIGH), NOW)
    assert pl.less(p1, p2)
    pl.mgr.mark_schedule_failure("ns/pg1")
    assert not pl.less(p1, p2)
    assert pl.less(p2, p1)
    pl.mgr.clear_schedule_failure("ns/pg1")
    assert pl.less(p1, p2)


@pytest.mark.parametrize("p,existing,groups,want", [
    (pod("p"), [], [pg("pg1", min_member=2)], Status(Code.Unschedulable, ("can not find pod group",))),
    (pod("p", group="pg1"), [pod("p1", group="pg1", node="node")], [pg("pg1", min_member=1)],
     Status(Code.Unschedulable)),
    (pod("p", group="pg1"), [pod("p1", group="pg1", node="node")], [pg("pg1", min_member=2)],
     Status(Code.Unschedulable, ("PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter",))),
], ids=["pod does not belong to any pod group", "enough pods assigned, do not reject all",
        "pod failed at filter phase, reject all pods"])
def test_post_filter(p: Pod, existing: list[Pod], groups: list[PodGroup], want: Status) -> None:
    """TestPostFilter."""
    h = handle([*existing, p], groups, [node("node", "4")])
    result, st = plugin(h).post_filter(CycleState(), p, {"node": Status()})
    assert result is None  # an empty PostFilterResult: no nomination change
    assert st == want


@pytest.mark.parametrize("percentage,min_member,assigned,reject", [
    (10, 10, 9, False), (10, 10, 8, True), (0, 10, 9, True), (100, 10, 0, False),
    (50, 10, 6, False), (50, 10, 4, True),
], ids=["default 10%: 9/10 assigned (10% gap) → no rejection",
        "default 10%: 8/10 assigned (20% gap) → rejection",
        "0%: 9/10 assigned (10% gap) → rejection (always reject)",
        "100%: 0/10 assigned (100% gap) → no rejection (never reject)",
        "50%: 6/10 assigned (40% gap) → no rejection", "50%: 4/10 assigned (60% gap) → rejection"])
def test_post_filter_reject_threshold(percentage: int, min_member: int, assigned: int, reject: bool) -> None:
    """TestPostFilterRejectThreshold; also: the rejection reaches the group's waiting pods."""
    bound = [pod(f"assigned-{i}", group="pg1", node="node") for i in range(assigned)]
    p = pod("p", group="pg1")
    waiting_sibling, other = pod("w", group="pg1"), pod("x", group="pg9")
    h = handle([*bound, p, waiting_sibling, other], [pg("pg1", min_member=min_member)], [node("node", "4")])
    wps = [wait(h, waiting_sibling), wait(h, other)]
    _, st = plugin(h, podGroupRejectPercentage=percentage).post_filter(CycleState(), p, {})
    if reject:
        assert st == Status(Code.Unschedulable,
                            ("PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter",))
        assert wps[0].result == Status(Code.Unschedulable, ("optimistic rejection in PostFilter",), "Coscheduling")
    else:
        assert st == Status(Code.Unschedulable)
        assert wps[0].result is None
    assert wps[1].result is None  # another group's pod is left alone


# -- core/core_test.go ----------------------------------------------------------------------
PRE_FILTER_CASES = [  # (id, pod, pending pods, groups, expected success)
    ("pod does not belong to any pg", pod("p", ns="default"),
     [pod("p1", group="pg1"), pod("p2", group="pg2")], [pg("pg1", min_member=1), pg("pg2", min_member=1)], True),
    ("pod belongs to a non-existent pg", pod("p", group="pg-non-existent"), [], [pg("pg1", min_member=1)], True),
    ("pod count less than minMember", pod("p", group="pg1"), [pod("pg2-1", group="pg2")],
     [pg("pg1", min_member=2), pg("pg2", min_member=2)], False),
    ("pod count equal minMember", pod("p1a", group="pg1"), [pod("p1b", group="pg1"), pod("p1c", group="pg1")],
     [pg("pg1", min_member=2), pg("pg2", min_member=2)], True),
    ("pod count more than minMember", pod("p1a", group="pg1"), [pod("p1b", group="pg1"), pod("p1c", group="pg1")],
     [pg("pg1", min_member=2), pg("pg2", min_member=2)], True),
    ("gated pods but still meeting quorum (minMember < replicas)", pod("p1a", group="pg1"),
     [pod("p1b", group="pg1"), pod("p1c", group="pg1", gated=True)], [pg("pg1", min_member=2)], True),
    ("gated pods push group below quorum", pod("p1a", group="pg1"),
     [pod("p1b", group="pg1", gated=True), pod("p1c", group="pg1")], [pg("pg1", min_member=3)], False),
    ("all sibling pods are gated", pod("p1a", group="pg1"),
     [pod("p1b", group="pg1", gated=True), pod("p1c", group="pg1", gated=True)], [pg("pg1", min_member=2)], False),
    ("cluster's resource satisfies minResource", pod("p1a", group="pg1"),
     [pod("p1b", group="pg1"), pod("p1c", group="pg1")], [pg("pg1", min_member=2, min_resources={"cpu": "6"})], True),
    ("cluster's resource cannot satisfy minResource", pod("p1a", group="pg1"),
     [pod("p1b", group="pg1"), pod("p1c", group="pg1")], [pg("pg1", min_member=2, min_resources={"cpu": "10"})],
     False),
]


@pytest.mark.parametrize("p,pending,groups,ok", [c[1:] for c in PRE_FILTER_CASES], ids=[c[0] for c in PRE_FILTER_CASES])
def test_pre_filter(p: Pod, pending: list[Pod], groups: list[PodGroup], ok: bool) -> None:
    """core_test.go TestPreFilter (two nodes of 4 cpu); a refusal is UnschedulableAndUnresolvable."""
    h = handle([*pending, p], groups, [node("node-a", "4"), node("node-b", "4")])
    result, st = plugin(h).pre_filter(CycleState(), p, h.snapshot.node_infos)
    assert result is None
    assert st.success is ok
    if not ok:
        assert st.code == Code.UnschedulableAndUnresolvable


@pytest.mark.parametrize("p,pending,groups,want", [
    (PRE_FILTER_CASES[2][1], PRE_FILTER_CASES[2][2], PRE_FILTER_CASES[2][3],
     "pre-filter pod p cannot find enough sibling pods, current pods number: 1, minMember of group: 2"),
    (PRE_FILTER_CASES[6][1], PRE_FILTER_CASES[6][2], PRE_FILTER_CASES[6][3],
     "pre-filter pod p1a cannot proceed due to gated pods in the same PodGroup"),
    # need 10 cpu = {10 0}; node-a frees 4000m: 10*10^3 - 4000 = {6000 -3}; node-b: {2000 -3}.
    # pods: {2 0} minus 32 free pods on node-a is negative: satisfied and dropped.
    (PRE_FILTER_CASES[9][1], PRE_FILTER_CASES[9][2], PRE_FILTER_CASES[9][3],
     "resource gap: map[cpu:{{2000 -3} {<nil>}  DecimalSI}]"),
], ids=["pod count less than minMember", "gated pods push group below quorum",
        "cluster's resource cannot satisfy minResource"])
def test_pre_filter_messages(p: Pod, pending: list[Pod], groups: list[PodGroup], want: str) -> None:
    """kubesched: the texts core.go's PreFilter errors carry (counted by hand from the cases)."""
    h = handle([*pending, p], groups, [node("node-a", "4"), node("node-b", "4")])
    assert plugin(h).pre_filter(CycleState(), p, h.snapshot.node_infos)[1].reasons == (want,)


@pytest.mark.parametrize("p,existing,want", [
    (pod("p"), [], PermitResult.NOT_SPECIFIED),
    (pod("p", group="pg-non-existent"), [], PermitResult.NOT_FOUND),
    (pod("p", group="pg1"), [], PermitResult.WAIT),
    (pod("p1a", group="pg1"), [pod("p1b", group="pg1", node="node")], PermitResult.SUCCESS),
], ids=["pod does not belong to any pg", "pod specifies a non-existent pg",
        "pod belongs to a pg that doesn't have quorum", "pod belongs to a pg that have quorum satisfied"])
def test_core_permit(p: Pod, existing: list[Pod], want: PermitResult) -> None:
    """core_test.go TestPermit (pg1: minMember 2)."""
    h = handle([*existing, p], [pg("pg1", min_member=2)], [node("node", "4")])
    assert plugin(h).mgr.permit(CycleState(), p) is want


@pytest.mark.parametrize("existing,ok,gap", [
    ([pod("p1", node="node-a", cpu="2")], True, None),
    # free: node-a 3-2 = 1 cpu, node-b 3-1 = 2 cpu; need {4 0} -> {3000 -3} -> {1000 -3}
    ([pod("p1", node="node-a", cpu="2"), pod("p2", node="node-b", cpu="1")], False,
     "resource gap: map[cpu:{{1000 -3} {<nil>}  DecimalSI}]"),
    ([pod("p1", group="pg1", node="node-a", cpu="2"), pod("p2", node="node-b", cpu="1")], True, None),
], ids=["Cluster resource enough", "Cluster resource not enough",
        "Cluster resource enough as p1's resource needs to be excluded from minResources"])
def test_check_cluster_resource(existing: list[Pod], ok: bool, gap: str | None) -> None:
    """TestCheckClusterResource: two nodes of 3 cpu, minResources cpu 4 for ns/pg1."""
    snap = snapshot_of(existing, [node("node-a", "3"), node("node-b", "3")])
    got = check_cluster_resource(snap.node_infos, {"cpu": GoQuantity(4, 0, "DecimalSI")}, "ns/pg1")
    assert (got is None) is ok
    assert got == gap


def test_mark_and_clear_pod_group_schedule_failure() -> None:
    """TestMarkAndClearPodGroupScheduleFailure."""
    h = handle(groups=[pg("pg1", min_member=3, created=NOW - 10)])
    mgr = plugin(h, permitWaitingTimeSeconds=10).mgr
    p = pod("p1", group="pg1")
    assert mgr.creation_timestamp(p, NOW) == NOW - 10
    h.clock = NOW + 0.5
    mgr.mark_schedule_failure("ns/pg1")
    assert mgr.creation_timestamp(p, NOW) > NOW - 10
    mgr.clear_schedule_failure("ns/pg1")
    assert mgr.creation_timestamp(p, NOW) == NOW - 10


# -- kubesched: the rest of the behaviour --------------------------------------------------------
def test_permit_completing_quorum_allows_waiting_siblings() -> None:
    """The 3rd of minMember 3 succeeds and allows the two waiting (not another group's)."""
    pods = [pod(f"g{i}", group="pg") for i in range(3)]
    stranger = pod("s", group="other")
    h = handle([*pods, stranger], [pg("pg", min_member=3), pg("other", min_member=2)], [node("node", "4")])
    pl = plugin(h)
    waiting = []
    for p in pods[:2]:
        st, timeout = pl.permit(CycleState(), p, "node")
        assert (st.code, timeout) == (Code.Wait, 60.0)  # no scheduleTimeoutSeconds: the default 60s
        waiting.append(wait(h, p))
    ws = wait(h, stranger)
    st, timeout = pl.permit(CycleState(), pods[2], "node")
    assert (st.code, timeout) == (Code.Success, 0.0)
    assert [w.result for w in waiting] == [Status(), Status()]
    assert ws.result is None


@pytest.mark.parametrize("group_timeout,args_timeout,want", [
    (5, 10, 5.0), (None, 10, 10.0), (None, 0, 60.0), (0, 10, 10.0), (0, 0, 0.0),
], ids=["group's", "args'", "default 60s", "group's 0 keeps the args'", "both 0"])
def test_permit_wait_time(group_timeout: int | None, args_timeout: int, want: float) -> None:
    """util.GetWaitTimeDuration, a result of 0 keeping the plugin's own timeout (Permit)."""
    p = pod("p", group="pg")
    h = handle([p], [pg("pg", min_member=2, timeout=group_timeout)], [node("node", "4")])
    assert plugin(h, permitWaitingTimeSeconds=args_timeout).permit(CycleState(), p, "node") == (Status(Code.Wait), want)


def test_unreserve_rejects_waiting_group_and_forgets_the_pod() -> None:
    pods = [pod(f"g{i}", group="pg") for i in range(3)]
    h = handle(pods, [pg("pg", min_member=3)], [node("node", "4")])
    pl = plugin(h)
    for p in pods[:2]:
        pl.permit(CycleState(), p, "node")
    w1 = wait(h, pods[1])
    assert pl.mgr.assigned_count("ns/pg") == 2
    pl.unreserve(CycleState(), pods[0], "node")
    assert pl.mgr.assigned_count("ns/pg") == 1
    assert w1.result == Status(Code.Unschedulable, ("rejection in Unreserve",), "Coscheduling")
    assert pl.mgr.creation_timestamp(pods[0], 0.0) == NOW  # marked failed now


def test_permit_pod_group_not_found() -> None:
    p = pod("p", group="missing")
    h = handle([p], [], [node("node", "4")])
    assert plugin(h).permit(CycleState(), p, "node") == (Status(Code.Unschedulable, ("PodGroup not found",)), 0.0)


def test_assigned_forgets_deleted_pods() -> None:
    """A bound member that no longer exists stops counting (upstream's DeleteFunc)."""
    bound = pod("b", group="pg", node="node")
    p = pod("p", group="pg")
    h = handle([bound, p], [pg("pg", min_member=2)], [node("node", "4")])
    pl = plugin(h)
    assert pl.mgr.assigned_count("ns/pg") == 1
    h.objects.pod_list.remove(bound)
    assert pl.permit(CycleState(), p, "node")[0].code == Code.Wait


@pytest.mark.parametrize("raw,want", [
    ("10", (10, 0, "DecimalSI")), ("500m", (500, -3, "DecimalSI")), (2, (2, 0, "DecimalSI")),
    ("1.5", (15, -1, "DecimalSI")), ("0.5", (5, -1, "DecimalSI")), ("1Gi", (1 << 30, 0, "BinarySI")),
    ("500Mi", (500 << 20, 0, "BinarySI")), ("3e3", (3, 3, "DecimalExponent")), ("2k", (2, 3, "DecimalSI")),
])
def test_parse_go_quantity(raw: Any, want: tuple[int, int, str]) -> None:
    """resource.ParseQuantity's int64 fast path: value = digits, scale = exponent - decimals
    (a binary suffix shifts the digits, scale 0)."""
    q = parse_go_quantity(raw)
    assert (q.value, q.scale, q.format) == want


def test_to_clock() -> None:
    assert to_clock(stamp(5)) == 5.0
    assert to_clock("2099-12-31T23:59:00Z") == -60.0
    assert to_clock("") == to_clock("not a time") < to_clock("1970-01-01T00:00:00Z")  # Go's zero time


def test_events_to_register() -> None:
    evs = [(e.event.resource.value, int(e.event.action)) for e in plugin(handle()).events_to_register()]
    assert evs == [("Pod", 1), ("PodGroup", 1 | 128 | 4 | 8 | 16 | 32 | 64 | 256 | 512 | 1024 | 2048 | 4096)]


# -- args --------------------------------------------------------------------------------------
@pytest.mark.parametrize("raw,want", [
    (None, CoschedulingArgs(permit_waiting_time_seconds=60, pod_group_backoff_seconds=0,
                            pod_group_reject_percentage=10)),
    ({}, CoschedulingArgs()),
    ({"podGroupBackoffSeconds": 20, "podGroupRejectPercentage": 50},
     CoschedulingArgs(permit_waiting_time_seconds=60, pod_group_backoff_seconds=20, pod_group_reject_percentage=50)),
    ({"permitWaitingTimeSeconds": 10, "podGroupBackoffSeconds": 0, "podGroupRejectPercentage": 0},
     CoschedulingArgs(permit_waiting_time_seconds=10, pod_group_backoff_seconds=0, pod_group_reject_percentage=0)),
], ids=["defaults", "empty", "defaults_test.go: set values kept", "scheme_test.go: explicit zeros"])
def test_parse_args(raw: dict[str, Any] | None, want: CoschedulingArgs) -> None:
    assert parse_args(raw, "args") == want


@pytest.mark.parametrize("raw,field,msg", [
    ({"permitWaitingTimeSeconds": -1}, "args.permitWaitingTimeSeconds", "Invalid value: -1: must be greater than 0"),
    ({"podGroupBackoffSeconds": -1}, "args.podGroupBackoffSeconds", "Invalid value: -1: must be greater than 0"),
    ({"podGroupRejectPercentage": 101}, "args.podGroupRejectPercentage",
     "Invalid value: 101: must be between 0 and 100"),
    ({"permitWaitingTimeSeconds": -1, "podGroupRejectPercentage": -1}, "args",
     "[permitWaitingTimeSeconds: Invalid value: -1: must be greater than 0, "
     "podGroupRejectPercentage: Invalid value: -1: must be between 0 and 100]"),
    ({"foo": 1}, "args", 'unknown field "foo"'),
    ({"permitWaitingTimeSeconds": "10"}, "args.permitWaitingTimeSeconds", "must be a 64-bit integer, got '10'"),
])
def test_parse_args_errors(raw: dict[str, Any], field: str, msg: str) -> None:
    with pytest.raises(ProfileError) as exc:
        parse_args(raw, "args")
    assert (exc.value.field, exc.value.message) == (field, msg)
