"""PodTopologySpread PreScore/Score/NormalizeScore, ported from upstream
``pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go`` (TestPreScoreSkip,
TestPreScoreStateEmptyNodes, TestPodTopologySpreadScore).

Upstream's tests get the default-constraint selector from Service/ReplicaSet informers;
here the plugin's ``default_selector_of`` is set to ``default_selector`` over the same
objects. Cases that only exercise feature gates that are locked on in 1.34 are not ported.
Every score case runs the per-node and the batch form.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.api.selectors import LabelSelector
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins.podtopologyspread.common import default_selector
from kubesched.plugins.podtopologyspread.plugin import PRE_SCORE_KEY, PodTopologySpread
from kubesched.testing.handle import handle_for
from kubesched.testing.harness import score_all
from kubesched.testing.wrappers import make_pod

FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
DNS, SA = "DoNotSchedule", "ScheduleAnyway"
HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
UNSCHED = "node.kubernetes.io/unschedulable"
H, I = "Honor", "Ignore"
# Go's math.Log(n) for n = 3..6 (upstream topologyNormalizingWeight(1..4)), bit for bit.
GO_LOG = {3: float.fromhex("0x1.193ea7aad030ap+0"), 4: float.fromhex("0x1.62e42fefa39efp+0"),
          5: float.fromhex("0x1.9c041f7ed8d33p+0"), 6: float.fromhex("0x1.cab0bfa2a2002p+0")}


def node(name: str, labels: dict[str, str], tainted: bool = False) -> Node:
    spec: dict[str, Any] = {"taints": [{"key": UNSCHED, "effect": "NoSchedule"}]} if tainted else {}
    return Node.from_dict({"metadata": {"name": name, "labels": dict(labels)}, "spec": spec,
                           "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})


def hn(name: str, **extra: str) -> Node:
    return node(name, {HOST: name, **extra})


def zh(name: str, zone: str) -> Node:
    return node(name, {"zone": zone, HOST: name})


def ep(name: str, on: str, ns: str = "default", terminating: bool = False, **labels: str) -> Pod:
    w = make_pod().name(name).namespace(ns).node(on).labels(labels)
    if terminating:
        w.set("metadata.deletionTimestamp", "2020-01-01T00:00:00Z")
    return w.obj()


def foos(on: str, n: int, prefix: str | None = None) -> list[Pod]:
    prefix = prefix or f"p-{on[-1]}"
    return [ep(f"{prefix}{i}", on, foo="") for i in range(1, n + 1)]


def pod(labels: dict[str, str], *constraints: tuple[Any, ...], node_selector: dict[str, str] | None = None,
        affinity: dict[str, Any] | None = None) -> Pod:
    w = make_pod().name("p").labels(labels)
    for c in constraints:
        w.spread(c[0], c[1], c[2], c[3], **(c[4] if len(c) > 4 else {}))
    if node_selector:
        w.node_selector(node_selector)
    if affinity:
        w.affinity({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                     {"nodeSelectorTerms": [{"matchExpressions": [affinity]}]}}})
    return w.obj()


def make_plugin(handle: Any, raw: dict[str, Any] | None, service: dict[str, str] | None = None,
                owner: dict[str, Any] | None = None) -> PodTopologySpread:
    pl = PodTopologySpread(PodTopologySpread.parse_args(raw, "args"), handle)
    owner_sel = None if owner is None else LabelSelector.parse(owner)
    services = [] if service is None else [service]
    pl.default_selector_of = lambda p: default_selector(p, services, owner_sel)
    return pl


# -- TestPreScoreSkip -------------------------------------------------------------------------
def test_pre_score_skip_without_soft_constraints() -> None:
    nodes = [hn("node-a"), hn("node-b")]
    handle = handle_for([], nodes)
    pl = make_plugin(handle, {"defaultingType": "List"})
    st = pl.pre_score(CycleState(), make_pod().name("p").obj(), handle.snapshot.node_infos)
    assert st.code == Code.Skip


def test_pre_score_skip_default_constraints_and_replicaset_that_does_not_match() -> None:
    # The pod's owner (rs2) does not exist, so nothing selects it: the selector is empty.
    handle = handle_for([], [node("node-a", {"planet": "mars"})])
    pl = make_plugin(handle, {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}]})
    p = make_pod().name("p").labels({"foo": "bar", "baz": "sup"}).obj()
    assert pl.pre_score(CycleState(), p, handle.snapshot.node_infos).code == Code.Skip


def test_pre_score_skip_on_empty_cluster() -> None:
    handle = handle_for([], [])
    pl = make_plugin(handle, {"defaultingType": "List"})
    assert pl.pre_score(CycleState(), pod({"foo": ""}, (1, "zone", SA, FOO)), []).code == Code.Skip


# -- TestPreScoreStateEmptyNodes --------------------------------------------------------------
LIST = {"defaultingType": "List"}
ZONE_NODES = [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2")]
POLICY_NODES = [node("node-a", {"zone": "zone1", "foo": "", HOST: "node-a"}),
                node("node-b", {"zone": "zone1", "foo": "", HOST: "node-b"})]

# (id, pod, nodes, raw args, owner selector, want constraints, ignored, counts, weights)
PRE_SCORE_STATE = [
    ("normal case", pod({"foo": ""}, (1, "zone", SA, FOO), (1, HOST, SA, FOO)), ZONE_NODES, LIST, None,
     [(1, "zone", FOO, H, I), (1, HOST, FOO, H, I)], set(), [{"zone1": 0, "zone2": 0}, {}], [GO_LOG[4], GO_LOG[5]]),
    ("null selector", pod({"foo": ""}, (1, "zone", SA, None)), ZONE_NODES, LIST, None,
     [(1, "zone", None, H, I)], set(), [{"zone1": 0, "zone2": 0}], [GO_LOG[4]]),
    ("node-x doesn't have label zone", pod({"foo": ""}, (1, "zone", SA, FOO), (1, HOST, SA, BAR)),
     [zh("node-a", "zone1"), zh("node-b", "zone1"), hn("node-x")], LIST, None,
     [(1, "zone", FOO, H, I), (1, HOST, BAR, H, I)], {"node-x"}, [{"zone1": 0}, {}], [GO_LOG[3], GO_LOG[4]]),
    ("system default constraints and a replicaset", pod({"foo": "tar", "baz": "sup"}),
     [hn("node-a", **{ZONE: "mars"}), hn("node-b", **{ZONE: "mars"}), hn("node-c"), hn("node-d")],
     {"defaultingType": "System"}, FOO,
     [(3, HOST, FOO, H, I), (5, ZONE, FOO, H, I)], set(), [{}, {"mars": 0, "": 0}], [GO_LOG[6], GO_LOG[4]]),
    ("default constraints and a replicaset", pod({"foo": "tar", "baz": "sup"}),
     [hn("node-a", rack="rack1", planet="mars")],
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": SA},
         {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": DNS},
         {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}]}, FOO,
     [(1, HOST, FOO, H, I), (2, "planet", FOO, H, I)], set(), [{}, {"mars": 0}], [GO_LOG[3], GO_LOG[3]]),
    ("default constraints and a replicaset, but pod has constraints",
     pod({"foo": "bar", "baz": "sup"}, (1, "zone", DNS, BAR), (2, "planet", SA, {"matchLabels": {"baz": "sup"}})),
     [node("node-a", {"planet": "mars", "galaxy": "andromeda"})],
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": SA}]}, FOO,
     [(2, "planet", {"matchLabels": {"baz": "sup"}}, H, I)], set(), [{"mars": 0}], [GO_LOG[3]]),
    ("NodeAffinityPolicy honored with labelSelectors",
     pod({"foo": ""}, (1, "zone", SA, BAR), node_selector={"foo": ""}),
     POLICY_NODES + [zh("node-x", "zone2")], LIST, None,
     [(1, "zone", BAR, H, I)], set(), [{"zone1": 0, "zone2": 0}], [GO_LOG[4]]),
    ("NodeAffinityPolicy ignored with nodeAffinity",
     pod({"foo": ""}, (1, "zone", SA, BAR, {"nodeAffinityPolicy": I}),
         affinity={"key": "foo", "operator": "In", "values": [""]}),
     POLICY_NODES + [zh("node-x", "zone2")], LIST, None,
     [(1, "zone", BAR, I, I)], set(), [{"zone1": 0, "zone2": 0}], [GO_LOG[4]]),
    ("NodeTaintsPolicy honored", pod({"foo": ""}, (1, "zone", SA, BAR, {"nodeTaintsPolicy": H})),
     POLICY_NODES + [node("node-x", {"zone": "zone2", HOST: "node-x"}, tainted=True)], LIST, None,
     [(1, "zone", BAR, H, H)], set(), [{"zone1": 0, "zone2": 0}], [GO_LOG[4]]),
]


def reqs(sel: LabelSelector) -> tuple[bool, frozenset[Any]]:
    return sel.nothing, frozenset(sel.requirements)


@pytest.mark.parametrize("p, nodes, raw, owner, constraints, ignored, counts, weights",
                         [c[1:] for c in PRE_SCORE_STATE], ids=[c[0] for c in PRE_SCORE_STATE])
def test_pre_score_state(p: Pod, nodes: list[Node], raw: dict[str, Any], owner: Any, constraints: Any,
                         ignored: set[str], counts: Any, weights: list[float]) -> None:
    handle = handle_for([], nodes)
    pl = make_plugin(handle, raw, owner=owner)
    state = CycleState()
    assert pl.pre_score(state, p, handle.snapshot.node_infos).success
    s = state.read(PRE_SCORE_KEY)
    assert [(c.max_skew, c.topology_key, reqs(c.selector), c.min_domains, c.node_affinity_policy,
             c.node_taints_policy) for c in s.constraints] == [
        (w[0], w[1], reqs(LabelSelector.parse(w[2])), 1, w[3], w[4]) for w in constraints]
    assert s.ignored_nodes == ignored
    assert s.topology_value_to_pod_counts == counts
    assert s.topology_normalizing_weight == weights


# -- TestPodTopologySpreadScore (plugin built with System defaulting) -------------------------
ABCD = [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")]
TWO_ONE_ZERO_THREE = foos("node-a", 2) + foos("node-b", 1) + foos("node-d", 3)
FOUR_THREE_TWO_ONE = foos("node-a", 4) + foos("node-b", 3) + foos("node-c", 2) + foos("node-d", 1)
ABXY_EXISTING = foos("node-a", 4) + foos("node-b", 2) + foos("node-x", 1) + foos("node-y", 3)
FB = {"foo": "", "bar": ""}
NODE_KEY_NODES = [node("node-a", {"node": "node-a", "foo": ""}), node("node-b", {"node": "node-b", "foo": ""}),
                  node("node-c", {"node": "node-c"})]
NODE_KEY_EXISTING = foos("node-a", 2) + foos("node-b", 1) + foos("node-c", 1)
TAINT_NODES = [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"}),
               node("node-c", {"node": "node-c"}, tainted=True)]
ZH4 = [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-c", "zone2"), zh("node-d", "zone2")]
IN_FOO = {"key": "foo", "operator": "In", "values": [""]}

# (id, pod, existing, candidate nodes, failed nodes, service, want scores)
SCORE = [
    ("one constraint on node, no existing pods", pod({"foo": ""}, (1, HOST, SA, FOO)), [],
     [hn("node-a"), hn("node-b")], [], None, {"node-a": 100, "node-b": 100}),
    ("one constraint on node, only one node is candidate", pod({"foo": ""}, (1, HOST, SA, FOO)),
     foos("node-a", 2) + foos("node-b", 1), [hn("node-a")], [hn("node-b")], None, {"node-a": 100}),
    ("one constraint on node, all nodes have the same number of matching pods",
     pod({"foo": ""}, (1, HOST, SA, FOO)), foos("node-a", 1) + foos("node-b", 1),
     [hn("node-a"), hn("node-b")], [], None, {"node-a": 100, "node-b": 100}),
    ("one constraint on node, all 4 nodes are candidates", pod({"foo": ""}, (1, HOST, SA, FOO)),
     TWO_ONE_ZERO_THREE, ABCD, [], None, {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0}),
    ("one constraint on node, null selector", pod({"foo": ""}, (1, HOST, SA, None)),
     TWO_ONE_ZERO_THREE, ABCD, [], None, {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100}),
    ("one constraint on node, all 4 nodes are candidates, maxSkew=2", pod({"foo": ""}, (2, HOST, SA, FOO)),
     TWO_ONE_ZERO_THREE, ABCD, [], None, {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16}),
    ("one constraint on node, all 4 nodes are candidates, maxSkew=3", pod({"foo": ""}, (3, HOST, SA, FOO)),
     FOUR_THREE_TWO_ONE, ABCD, [], None, {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}),
    ("system defaulting, nodes don't have zone, pods match service", pod({"foo": ""}),
     FOUR_THREE_TWO_ONE, ABCD, [], {"foo": ""}, {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}),
    ("one constraint on node, 3 out of 4 nodes are candidates", pod({"foo": ""}, (1, HOST, SA, FOO)),
     ABXY_EXISTING, [hn("node-a"), hn("node-b"), hn("node-x")], [hn("node-y")], None,
     {"node-a": 33, "node-b": 83, "node-x": 100}),
    ("one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
     pod({"foo": ""}, (1, HOST, SA, FOO)), ABXY_EXISTING,
     [hn("node-a"), node("node-b", {"n": "node-b"}), hn("node-x")], [hn("node-y")], None,
     {"node-a": 16, "node-b": 0, "node-x": 100}),
    ("one constraint on zone, 3 out of 4 nodes are candidates", pod({"foo": ""}, (1, "zone", SA, FOO)),
     ABXY_EXISTING, [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2")],
     [zh("node-y", "zone2")], None, {"node-a": 75, "node-b": 75, "node-x": 100}),
    ("two Constraints on zone and node, 2 out of 4 nodes are candidates",
     pod({"foo": ""}, (1, "zone", SA, FOO), (1, HOST, SA, FOO)),
     foos("node-a", 2) + foos("node-b", 1) + foos("node-x", 2) + foos("node-y", 4),
     [zh("node-a", "zone1"), zh("node-x", "zone2")], [zh("node-b", "zone1"), zh("node-y", "zone2")], None,
     {"node-a": 100, "node-x": 63}),
    ("two Constraints on zone, 2 out of 4 nodes are candidates",
     pod(FB, (1, "zone", SA, FOO), (1, "zone", SA, BAR)),
     [ep("p-a1", "node-a", **FB), ep("p-a2", "node-a", foo=""), ep("p-b1", "node-b", **FB),
      ep("p-y1", "node-y", foo=""), ep("p-y2", "node-y", **FB), ep("p-y3", "node-y", foo="")],
     [node("node-a", {"zone": "zone1"}), node("node-x", {"zone": "zone2"})],
     [node("node-b", {"zone": "zone1"}), node("node-y", {"zone": "zone2"})], None,
     {"node-a": 85, "node-x": 100}),
    ("two Constraints on zone and node, with different labelSelectors",
     pod(FB, (1, "zone", SA, FOO), (1, HOST, SA, BAR)),
     [ep("p-a1", "node-a", foo=""), ep("p-b1", "node-b", **FB), ep("p-y1", "node-y", foo=""),
      ep("p-y2", "node-y", bar="")],
     [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2"), zh("node-y", "zone2")], [], None,
     {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60}),
    ("two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
     pod(FB, (1, "zone", SA, FOO), (1, HOST, SA, BAR)),
     [ep("p-b1", "node-b", bar=""), ep("p-x1", "node-x", foo=""), ep("p-y1", "node-y", **FB)],
     [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2"), zh("node-y", "zone2")], [], None,
     {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0}),
    ("two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
     pod(FB, (1, "zone", SA, FOO), (1, HOST, SA, BAR)),
     [ep("p-a1", "node-a", foo=""), ep("p-b1", "node-b", **FB), ep("p-y1", "node-y", foo=""),
      ep("p-y2", "node-y", bar="")],
     [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2")], [zh("node-y", "zone2")], None,
     {"node-a": 50, "node-b": 25, "node-x": 100}),
    ("existing pods in a different namespace do not count", pod({"foo": ""}, (1, HOST, SA, FOO)),
     [ep("p-a1", "node-a", "ns1", foo=""), ep("p-a2", "node-a", foo="")] + foos("node-b", 2),
     [hn("node-a"), hn("node-b")], [], None, {"node-a": 100, "node-b": 33}),
    ("terminating Pods should be excluded", pod({"foo": ""}, (1, HOST, SA, FOO)),
     [ep("p-a", "node-a", terminating=True, foo=""), ep("p-b", "node-b", foo="")],
     [hn("node-a"), hn("node-b")], [], None, {"node-a": 100, "node-b": 0}),
    ("minDomains has no effect when ScheduleAnyway", "min-domains-10",
     foos("node-a", 2) + foos("node-b", 2) + foos("node-c", 1),
     [node(n, {"node": n}) for n in ("node-a", "node-b", "node-c")], [], None,
     {"node-a": 75, "node-b": 75, "node-c": 100}),
    ("NodeAffinityPolicy honored with labelSelectors",
     pod({"foo": ""}, (1, "node", SA, FOO), node_selector={"foo": ""}), NODE_KEY_EXISTING, NODE_KEY_NODES, [],
     None, {"node-a": 0, "node-b": 33, "node-c": 100}),
    ("NodeAffinityPolicy ignored with labelSelectors",
     pod({"foo": ""}, (1, "node", SA, FOO, {"nodeAffinityPolicy": I}), node_selector={"foo": ""}),
     NODE_KEY_EXISTING, NODE_KEY_NODES, [], None, {"node-a": 66, "node-b": 100, "node-c": 100}),
    ("NodeAffinityPolicy honored with nodeAffinity", pod({"foo": ""}, (1, "node", SA, FOO), affinity=IN_FOO),
     NODE_KEY_EXISTING, NODE_KEY_NODES, [], None, {"node-a": 0, "node-b": 33, "node-c": 100}),
    ("NodeAffinityPolicy ignored with nodeAffinity",
     pod({"foo": ""}, (1, "node", SA, FOO, {"nodeAffinityPolicy": I}), affinity=IN_FOO),
     NODE_KEY_EXISTING, NODE_KEY_NODES, [], None, {"node-a": 66, "node-b": 100, "node-c": 100}),
    ("NodeTaintsPolicy honored", pod({"foo": ""}, (1, "node", SA, FOO, {"nodeTaintsPolicy": H})),
     NODE_KEY_EXISTING, TAINT_NODES, [], None, {"node-a": 0, "node-b": 33, "node-c": 100}),
    ("NodeTaintsPolicy ignored", pod({"foo": ""}, (1, "node", SA, FOO)),
     NODE_KEY_EXISTING, TAINT_NODES, [], None, {"node-a": 66, "node-b": 100, "node-c": 100}),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
     pod(FB, (1, "zone", SA, {}, {"matchLabelKeys": ["foo"]}), (1, HOST, SA, {}, {"matchLabelKeys": ["bar"]})),
     [ep("p-a1", "node-a", foo=""), ep("p-b1", "node-b", **FB), ep("p-y1", "node-c", foo=""),
      ep("p-y2", "node-c", bar="")], ZH4, [], None,
     {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
     pod({"foo": "", "bar": "", "baz": ""}, (1, "zone", SA, FOO),
         (1, HOST, SA, BAR, {"matchLabelKeys": ["baz"]})),
     [ep("p-a1", "node-a", foo=""), ep("p-b1", "node-b", foo="", bar="", baz=""), ep("p-c1", "node-c", foo=""),
      ep("p-c2", "node-c", bar=""), ep("p-d3", "node-c", bar="", baz="")], ZH4, [], None,
     {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}),
]


def _min_domains_pod() -> Pod:
    # The API server rejects minDomains with ScheduleAnyway; upstream's case sets it anyway.
    p = pod({"foo": ""}, (2, "node", SA, FOO))
    p.spread_constraints = (dataclasses.replace(p.spread_constraints[0], min_domains=10),)
    return p


@pytest.mark.parametrize("batch", [False, True], ids=["per-node", "batch"])
@pytest.mark.parametrize("p, existing, nodes, failed, service, want", [c[1:] for c in SCORE],
                         ids=[c[0] for c in SCORE])
def test_pod_topology_spread_score(p: Any, existing: list[Pod], nodes: list[Node], failed: list[Node],
                                   service: dict[str, str] | None, want: dict[str, int],
                                   batch: bool) -> None:
    if p == "min-domains-10":
        p = _min_domains_pod()
    handle = handle_for(existing, nodes + failed)
    pl = make_plugin(handle, {"defaultingType": "System"}, service=service)
    got = score_all(pl, p, handle, batch=batch, nodes=[n.name for n in nodes])
    assert not isinstance(got, Status), got
    assert got == want


def test_score_forms_agree_on_raw_scores() -> None:
    """Before normalisation, too: the batch Score equals the per-node Score node by node."""
    p = pod(FB, (1, "zone", SA, FOO), (1, HOST, SA, BAR))
    existing = [ep("p-a1", "node-a", foo=""), ep("p-b1", "node-b", **FB), ep("p-y1", "node-y", foo=""),
                ep("p-y2", "node-y", bar="")]
    nodes = [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2"), hn("node-y")]
    handle = handle_for(existing, nodes)
    pl = make_plugin(handle, {"defaultingType": "System"})
    state = CycleState()
    assert pl.pre_score(state, p, handle.snapshot.node_infos).success
    table = handle.snapshot.table
    batch = pl.score_nodes(state, p, table, table.all)
    assert [pl.score(state, p, ni) for ni in table.infos] == batch.tolist()
