"""InterPodAffinity PreFilter/Filter, ported from upstream
``pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go`` (v1.34):
TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes, TestPreFilterDisabled,
TestPreFilterStateAddRemovePod and TestGetTPMapMatchingIncomingAffinityAntiAffinity.

Every Filter case is checked in both forms (per-node ``filter`` and batch ``filter_nodes``).
Adaptations: upstream's ``""`` namespace is kubesched's ``"default"``; the two cases whose
terms had an empty topologyKey (rejected by our decoder, as by the API server) use
``region`` and keep upstream's expected result; the cases about selector values with an
invalid label syntax are decode-time errors here and are not ported.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Node, Pod
from kubesched.api.policy import Namespace
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.framework.types import NodeInfo
from kubesched.plugins.interpodaffinity import InterPodAffinity
from kubesched.plugins.interpodaffinity.filtering import PRE_FILTER_STATE_KEY, filter_mask, filter_node
from kubesched.testing.handle import handle_for
from kubesched.testing.harness import filter_all
from kubesched.testing.wrappers import make_pod

OK = (Code.Success, ())
AFF = (Code.UnschedulableAndUnresolvable, ("node(s) didn't match pod affinity rules",))
ANTI = (Code.Unschedulable, ("node(s) didn't match pod anti-affinity rules",))
EXIST = (Code.Unschedulable, ("node(s) didn't satisfy existing pods anti-affinity rules",))

NAMESPACES = [Namespace.from_dict({"metadata": {"name": n, "labels": {"team": t}}}, validate=False)
              for n, t in (("subteam1.team1", "team1"), ("subteam2.team1", "team1"),
                           ("subteam1.team2", "team2"), ("subteam2.team2", "team2"))]

_names = itertools.count()


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def term(*exprs: dict[str, Any], tk: str = "region", namespaces: list[str] | None = None,
         ns_selector: dict[str, Any] | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {"labelSelector": {"matchExpressions": list(exprs)}, "topologyKey": tk}
    if namespaces is not None:
        t["namespaces"] = namespaces
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    return t


def pod(labels: dict[str, str] | None = None, node: str = "", ns: str = "", name: str = "",
        aff: tuple[dict[str, Any], ...] = (), anti: tuple[dict[str, Any], ...] = ()) -> Pod:
    w = make_pod().name(name or f"p{next(_names)}").labels(labels or {})
    if ns:
        w.namespace(ns)
    if node:
        w.node(node)
    for t in aff:
        w.pod_affinity("podAffinity", True, t)
    for t in anti:
        w.pod_affinity("podAntiAffinity", True, t)
    return w.obj()


def node(name: str, labels: dict[str, str]) -> Node:
    return Node.from_dict({"metadata": {"name": name, "labels": dict(labels)}}, validate=False)


def run(incoming: Pod, pods: list[Pod], nodes: list[Node],
        namespaces: list[Namespace]) -> tuple[Code, dict[str, tuple[Code, tuple[str, ...]]],
                                              dict[str, tuple[Code, tuple[str, ...]]]]:
    handle = handle_for(pods, nodes, namespaces)
    plugin = InterPodAffinity(None, handle)
    _, pre = plugin.pre_filter(CycleState(), incoming, handle.snapshot.node_infos)
    got = [{n: (st.code, st.reasons) for n, st in filter_all(plugin, incoming, handle, batch=b).items()}
           for b in (False, True)]
    return pre.code, got[0], got[1]


def check(incoming: Pod, pods: list[Pod], nodes: list[Node], want: list[tuple[Code, tuple[str, ...]]],
          skip: bool, namespaces: list[Namespace]) -> None:
    pre, per_node, batch = run(incoming, pods, nodes, namespaces)
    assert pre == (Code.Skip if skip else Code.Success)
    expected = {n.name: w for n, w in zip(nodes, want)}
    assert per_node == expected
    assert batch == expected


# -- TestRequiredAffinitySingleNode -------------------------------------------------------
POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = node("node1", {"region": "r1", "zone": "z11"})
TEAM1 = {"matchExpressions": [expr("team", "In", "team1")]}
SVC_IN = expr("service", "In", "securityscan", "value2")


def existing() -> Pod:
    return pod(POD_LABEL, node="node1")


SINGLE: list[tuple[str, Pod, list[Pod], bool, Any]] = [
    ("no-affinity-no-pods", pod(), [], True, OK),
    ("affinity-in-matches", pod(POD_LABEL2, aff=(term(SVC_IN),)), [existing()], False, OK),
    ("affinity-notin-matches",
     pod(POD_LABEL2, aff=(term(expr("service", "NotIn", "securityscan3", "value3")),)), [existing()], False, OK),
    ("affinity-diff-namespace",
     pod(POD_LABEL2, aff=(term(SVC_IN, namespaces=["DiffNameSpace"]),)),
     [pod({"service": "securityscan"}, node="node1", ns="ns")], False, AFF),
    ("affinity-selector-unmatched",
     pod(POD_LABEL, aff=(term(expr("service", "In", "antivirusscan", "value2")),)), [existing()], False, AFF),
    ("affinity-multiple-terms-operators",
     pod(POD_LABEL2, aff=(term(expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
                          term(expr("service", "In", "securityscan"), expr("service", "NotIn", "WrongValue")))),
     [existing()], False, OK),
    ("affinity-requirements-anded",
     pod(POD_LABEL2, aff=(term(expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
                          term(expr("service", "In", "securityscan2"), expr("service", "NotIn", "WrongValue")))),
     [existing()], False, AFF),
    ("affinity-and-anti-affinity",
     pod(POD_LABEL2, aff=(term(SVC_IN),), anti=(term(expr("service", "In", "antivirusscan", "value2"), tk="node"),)),
     [existing()], False, OK),
    ("affinity-anti-affinity-and-symmetry",
     pod(POD_LABEL2, aff=(term(SVC_IN),), anti=(term(expr("service", "In", "antivirusscan", "value2"), tk="node"),)),
     [pod(POD_LABEL, node="node1", anti=(term(expr("service", "In", "antivirusscan", "value2"), tk="node"),))],
     False, OK),
    ("anti-affinity-violated",
     pod(POD_LABEL2, aff=(term(SVC_IN),), anti=(term(SVC_IN, tk="zone"),)), [existing()], False, ANTI),
    ("existing-anti-affinity-symmetry-violated",
     pod(POD_LABEL, aff=(term(SVC_IN),), anti=(term(expr("service", "In", "antivirusscan", "value2"), tk="node"),)),
     [pod(POD_LABEL, node="node1", anti=(term(SVC_IN, tk="zone"),))], False, EXIST),
    ("pod-matches-own-notin-term-elsewhere",
     pod(POD_LABEL, aff=(term(expr("service", "NotIn", "securityscan", "value2")),)),
     [pod({"service": "securityscan"}, node="node2")], False, AFF),
    ("existing-anti-affinity-without-own-constraints",
     pod(POD_LABEL), [pod(POD_LABEL, node="node1", anti=(term(SVC_IN, tk="zone"),))], False, EXIST),
    ("existing-anti-affinity-notin-not-matching",
     pod(POD_LABEL), [pod(POD_LABEL, node="node1", anti=(term(expr("service", "NotIn", "securityscan", "value2"),
                                                              tk="zone"),))], True, OK),
    ("incoming-anti-matches-existing-not-symmetric",
     pod(POD_LABEL, anti=(term(expr("service", "Exists")), term(expr("security", "Exists")))),
     [pod(POD_LABEL2, node="node1", anti=(term(expr("security", "Exists"), tk="zone"),))], False, ANTI),
    ("symmetry-a1",
     pod(POD_LABEL, anti=(term(expr("service", "Exists"), tk="zone"), term(expr("security", "Exists"), tk="zone"))),
     [pod(POD_LABEL2, node="node1", anti=(term(expr("security", "Exists"), tk="zone"),))], False, ANTI),
    ("symmetry-a2",
     pod(POD_LABEL2, anti=(term(expr("security", "Exists"), tk="zone"),)),
     [pod(POD_LABEL, node="node1", anti=(term(expr("service", "Exists"), tk="zone"),
                                         term(expr("security", "Exists"), tk="zone")))], False, EXIST),
    ("symmetry-b1",
     pod({"abc": "", "xyz": ""}, anti=(term(expr("abc", "Exists"), tk="zone"), term(expr("def", "Exists"), tk="zone"))),
     [pod({"def": "", "xyz": ""}, node="node1",
          anti=(term(expr("abc", "Exists"), tk="zone"), term(expr("def", "Exists"), tk="zone")))], False, ANTI),
    ("symmetry-b2",
     pod({"def": "", "xyz": ""}, anti=(term(expr("abc", "Exists"), tk="zone"), term(expr("def", "Exists"), tk="zone"))),
     [pod({"abc": "", "xyz": ""}, node="node1",
          anti=(term(expr("abc", "Exists"), tk="zone"), term(expr("def", "Exists"), tk="zone")))], False, ANTI),
    ("affinity-namespace-selector",
     pod(POD_LABEL2, aff=(term(SVC_IN, ns_selector=TEAM1),)),
     [pod(POD_LABEL, node="node1", ns="subteam1.team1")], False, OK),
    ("affinity-namespace-selector-not-matching",
     pod(POD_LABEL2, aff=(term(SVC_IN, ns_selector=TEAM1),)),
     [pod(POD_LABEL, node="node1", ns="subteam1.team2")], False, AFF),
    ("anti-affinity-namespace-selector",
     pod(POD_LABEL2, ns="subteam1.team1", anti=(term(SVC_IN, tk="zone", ns_selector=TEAM1),)),
     [pod(POD_LABEL, node="node1", ns="subteam2.team1")], False, ANTI),
    ("anti-affinity-empty-namespace-selector-matches-all",
     pod(POD_LABEL2, ns="subteam1.team1", anti=(term(SVC_IN, tk="zone", ns_selector={}),)),
     [pod(POD_LABEL, node="node1", ns="subteam2.team1")], False, ANTI),
    ("anti-affinity-namespace-selector-not-matching",
     pod(POD_LABEL2, ns="subteam1.team1", anti=(term(SVC_IN, tk="zone", ns_selector=TEAM1),)),
     [pod(POD_LABEL, node="node1", ns="subteam1.team2")], False, OK),
]


@pytest.mark.parametrize("incoming,pods,skip,want", [c[1:] for c in SINGLE], ids=[c[0] for c in SINGLE])
def test_required_affinity_single_node(incoming: Pod, pods: list[Pod], skip: bool, want: Any) -> None:
    check(incoming, pods, [NODE1], [want], skip, NAMESPACES)


# -- TestRequiredAffinityMultipleNodes ----------------------------------------------------
CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}


def rz(name: str, region: str, zone: str) -> Node:
    return node(name, {"region": region, "zone": zone, "hostname": name})


def ex(key: str, tk: str) -> dict[str, Any]:
    return term(expr(key, "Exists"), tk=tk)


MULTI: list[tuple[str, Pod, list[Pod], list[Node], bool, list[Any]]] = [
    ("same-domain-as-matching-pod",
     pod(aff=(term(expr("foo", "In", "bar")),)), [pod({"foo": "bar"}, node="node1")],
     [node("node1", CHINA), node("node2", CHINA_AZ1), node("node3", INDIA)], False, [OK, OK, AFF]),
    ("first-pod-of-collection",
     pod({"foo": "bar", "service": "securityscan"},
         aff=(term(expr("foo", "In", "bar"), tk="zone"), term(expr("service", "In", "securityscan"), tk="zone"))),
     [pod({"foo": "bar"}, node="nodeA")],
     [node("nodeA", {"zone": "az1", "hostname": "h1"}), node("nodeB", {"zone": "az2", "hostname": "h2"})],
     False, [OK, OK]),
    ("first-pod-of-collection-needs-topology-labels",
     pod({"foo": "bar", "service": "securityscan"},
         aff=(term(expr("foo", "In", "bar"), tk="zone"), term(expr("service", "In", "securityscan"), tk="zone"))),
     [pod({"foo": "bar"}, node="nodeA")],
     [node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}), node("nodeB", {"zoneLabel": "az2", "hostname": "h2"})],
     False, [AFF, AFF]),
    ("anti-affinity-same-domain",
     pod(anti=(term(expr("foo", "In", "abc")),)), [pod({"foo": "abc"}, node="nodeA")],
     [node("nodeA", {"region": "r1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "hostname": "nodeB"})],
     False, [ANTI, ANTI]),
    ("anti-affinity-any-term",
     pod(anti=(term(expr("foo", "In", "abc")), term(expr("service", "In", "securityscan"), tk="zone"))),
     [pod({"foo": "abc", "service": "securityscan"}, node="nodeA")],
     [rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2")], False, [ANTI, ANTI]),
    ("anti-affinity-other-region-fits",
     pod(anti=(term(expr("foo", "In", "abc")),)), [pod({"foo": "abc"}, node="nodeA")],
     [node("nodeA", CHINA), node("nodeB", CHINA_AZ1), node("nodeC", INDIA)], False, [ANTI, ANTI, OK]),
    ("anti-affinity-other-namespace",
     pod({"foo": "123"}, ns="NS1", anti=(term(expr("foo", "In", "bar")),)),
     [pod({"foo": "bar"}, node="nodeA", ns="NS1"),
      pod(node="nodeC", ns="NS2", anti=(term(expr("foo", "In", "123")),))],
     [node("nodeA", CHINA), node("nodeB", CHINA_AZ1), node("nodeC", INDIA)], False, [ANTI, ANTI, OK]),
    ("existing-anti-affinity-invalid-topology-key",
     pod({"foo": ""}), [pod(node="nodeA", anti=(ex("foo", "invalid-node-label"),))],
     [rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z1")], True, [OK, OK]),
    ("incoming-anti-affinity-invalid-topology-key",
     pod(anti=(ex("foo", "invalid-node-label"),)), [pod({"foo": ""}, node="nodeA")],
     [rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z1")], False, [OK, OK]),
    ("existing-anti-affinity-violated-on-all-nodes",
     pod({"foo": "", "bar": ""}),
     [pod(node="nodeA", anti=(ex("foo", "zone"),)), pod(node="nodeA", anti=(ex("bar", "region"),))],
     [rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2")], False, [EXIST, EXIST]),
    ("incoming-anti-affinity-violated-on-all-nodes",
     pod(anti=(ex("foo", "zone"), ex("bar", "region"))),
     [pod({"foo": ""}, node="nodeA"), pod({"bar": ""}, node="nodeB")],
     [rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2")], False, [ANTI, ANTI]),
    ("existing-anti-affinity-one-term-invalid-key",
     pod({"foo": "", "bar": ""}), [pod(node="nodeA", anti=(ex("foo", "invalid-node-label"), ex("bar", "zone")))],
     [rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2")], False, [EXIST, OK]),
    ("incoming-anti-affinity-one-term-invalid-key",
     pod(anti=(ex("foo", "invalid-node-label"), ex("bar", "zone"))), [pod({"foo": "", "bar": ""}, node="nodeA")],
     [rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2")], False, [ANTI, OK]),
    ("existing-anti-affinity-all-terms-valid",
     pod({"foo": "", "bar": ""}), [pod(node="nodeA", anti=(ex("foo", "region"), ex("bar", "zone")))],
     [rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2")], False, [EXIST, EXIST]),
    ("incoming-anti-affinity-all-terms-valid",
     pod(anti=(ex("foo", "region"), ex("bar", "zone"))), [pod({"foo": "", "bar": ""}, node="nodeA")],
     [rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2")], False, [ANTI, ANTI]),
    ("existing-anti-affinity-only-third-node",
     pod({"foo": "", "bar": ""}),
     [pod(node="nodeA", anti=(ex("foo", "zone"), ex("labelA", "zone"))),
      pod(node="nodeB", anti=(ex("bar", "zone"), ex("labelB", "zone")))],
     [rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2"), rz("nodeC", "r1", "z3")], False, [EXIST, EXIST, OK]),
    ("incoming-affinity-all-terms-same-pod",
     pod(aff=(ex("foo", "region"), ex("bar", "zone"))), [pod({"foo": "", "bar": ""}, node="nodeA")],
     [rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z1")], False, [OK, OK]),
    ("incoming-affinity-terms-split-across-pods",
     pod(aff=(ex("foo", "region"), ex("bar", "zone"))),
     [pod({"foo": ""}, node="nodeA"), pod({"bar": ""}, node="nodeB")],
     [rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2")], False, [AFF, AFF]),
]


@pytest.mark.parametrize("incoming,pods,nodes,skip,want", [c[1:] for c in MULTI], ids=[c[0] for c in MULTI])
def test_required_affinity_multiple_nodes(incoming: Pod, pods: list[Pod], nodes: list[Node], skip: bool,
                                          want: list[Any]) -> None:
    check(incoming, pods, nodes, want, skip, [Namespace.from_dict({"metadata": {"name": "NS1"}}, validate=False)])


# -- TestPreFilterDisabled ----------------------------------------------------------------
def test_filter_without_pre_filter_state_is_an_error() -> None:
    plugin = InterPodAffinity(None, handle_for([], [node("n", {})]))
    st = plugin.filter(CycleState(), pod(), NodeInfo(node("n", {})))
    assert st.code == Code.Error
    assert st.reasons == ('error reading "PreFilterInterPodAffinity" from cycleState: not found',)


# -- TestPreFilterStateAddRemovePod -------------------------------------------------------
FOO_BAR_REGION = term(expr("foo", "In", "bar"))
COMPLEX = (term(expr("foo", "In", "bar", "buzz")),
           term(expr("service", "NotIn", "bar", "security", "test"), tk="zone"))
ADD_NODES = [node("nodeA", {"region": "r1", "zone": "z11"}), node("nodeB", {"region": "r1", "zone": "z12"}),
             node("nodeC", {"region": "r2", "zone": "z21"})]
FOO = {"foo": "bar"}

ADD_REMOVE: list[tuple[str, Pod, Pod, list[Pod], dict[Any, int], dict[Any, int]]] = [
    ("anti-affinity-terms",
     pod(FOO, name="pending", anti=(FOO_BAR_REGION,)),
     pod(FOO, name="addedPod", node="nodeB", anti=(FOO_BAR_REGION,)),
     [pod(FOO, name="p1", node="nodeA"), pod(name="p2", node="nodeC", anti=(FOO_BAR_REGION,))],
     {("region", "r1"): 2}, {}),
    ("complex-anti-affinity-terms",
     pod(FOO, name="pending", anti=COMPLEX),
     pod(FOO, name="addedPod", node="nodeA", anti=COMPLEX),
     [pod(FOO, name="p1", node="nodeA"), pod(name="p2", node="nodeC", anti=(FOO_BAR_REGION,))],
     {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1}, {}),
    ("affinity-and-anti-affinity-terms",
     pod(FOO, name="pending", aff=COMPLEX),
     pod(FOO, name="addedPod", node="nodeA", anti=COMPLEX),
     [pod(FOO, name="p1", node="nodeA"), pod(name="p2", node="nodeC", aff=COMPLEX, anti=(FOO_BAR_REGION,))],
     {}, {("region", "r1"): 2, ("zone", "z11"): 2}),
]


def _counts(s: Any) -> tuple[dict[Any, int], ...]:
    return s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts


@pytest.mark.parametrize("pending,added,existing_pods,want_anti,want_aff",
                         [c[1:] for c in ADD_REMOVE], ids=[c[0] for c in ADD_REMOVE])
def test_pre_filter_state_add_remove_pod(pending: Pod, added: Pod, existing_pods: list[Pod],
                                         want_anti: dict[Any, int], want_aff: dict[Any, int]) -> None:
    def state_for(pods: list[Pod]) -> tuple[InterPodAffinity, CycleState, Any]:
        handle = handle_for(pods, ADD_NODES)
        plugin = InterPodAffinity(None, handle)
        cs = CycleState()
        _, st = plugin.pre_filter(cs, pending, handle.snapshot.node_infos)
        assert st.code == Code.Success
        return plugin, cs, handle

    _, all_cs, _ = state_for(existing_pods + [added])
    all_state = all_cs.read(PRE_FILTER_STATE_KEY)
    plugin, cs, handle = state_for(existing_pods)
    original = cs.read(PRE_FILTER_STATE_KEY).clone()
    ni = handle.snapshot.get(added.node_name)
    assert plugin.add_pod(cs, pending, added, ni).success
    s = cs.read(PRE_FILTER_STATE_KEY)
    assert s.anti_affinity_counts == want_anti
    assert s.affinity_counts == want_aff
    assert _counts(s) == _counts(all_state)
    # Both Filter forms read the updated state the same way as a fresh PreFilter's.
    table = handle.snapshot.table
    per_node = [filter_node(s, ni.node) for ni in table.infos]
    assert list(filter_mask(s, table, table.all)) == [st is None for st in per_node]
    assert per_node == [filter_node(all_state, ni.node) for ni in table.infos]
    assert plugin.remove_pod(cs, pending, added, ni).success
    assert _counts(cs.read(PRE_FILTER_STATE_KEY)) == _counts(original)


def test_pre_filter_state_clone_is_independent() -> None:
    handle = handle_for([pod(FOO, node="nodeA")], ADD_NODES)
    plugin = InterPodAffinity(None, handle)
    cs = CycleState()
    plugin.pre_filter(cs, pod(FOO, anti=(FOO_BAR_REGION,)), handle.snapshot.node_infos)
    s = cs.read(PRE_FILTER_STATE_KEY)
    c = s.clone()
    assert c is not s and _counts(c) == _counts(s)
    c.update_with_pod(pod(FOO), ADD_NODES[2], 1)
    assert _counts(c) != _counts(s)


# -- TestGetTPMapMatchingIncomingAffinityAntiAffinity ---------------------------------------
HOST_A = {("hostname", "nodeA"): 1}
TPMAP: list[tuple[str, list[dict[str, str]], Pod, dict[Any, int], dict[Any, int]]] = [
    ("nil", [], pod(), {}, {}),
    ("no-affinity-no-op", [{"aaa": ""}], pod(), {}, {}),
    ("no-pod-violates", [{"bbb": ""}],
     pod(aff=(ex("aaa", "hostname"),), anti=(ex("aaa", "hostname"),)), {}, {}),
    ("single-term", [{"aaa": ""}],
     pod(aff=(ex("aaa", "hostname"),), anti=(ex("aaa", "hostname"),)), HOST_A, HOST_A),
    ("multiple-terms", [{"aaa": "", "bbb": ""}],
     pod(aff=(ex("aaa", "hostname"), ex("bbb", "hostname")), anti=(ex("aaa", "hostname"),)),
     {("hostname", "nodeA"): 2}, HOST_A),
    ("affinity-not-all-terms", [{"aaa": ""}],
     pod(aff=(ex("aaa", "hostname"), ex("bbb", "hostname")),
         anti=(ex("aaa", "hostname"), ex("bbb", "hostname"))), {}, HOST_A),
    ("anti-partial-term-1", [{"aaa": "", "bbb": ""}],
     pod(aff=(ex("aaa", "hostname"), ex("ccc", "hostname")),
         anti=(ex("aaa", "hostname"), ex("ccc", "hostname"))), {}, HOST_A),
    ("anti-partial-term-2", [{"bbb": ""}],
     pod(aff=(ex("aaa", "hostname"), ex("bbb", "hostname")),
         anti=(ex("aaa", "hostname"), ex("bbb", "hostname"))), {}, HOST_A),
]


@pytest.mark.parametrize("existing_labels,incoming,want_aff,want_anti", [c[1:] for c in TPMAP],
                         ids=[c[0] for c in TPMAP])
def test_incoming_affinity_anti_affinity_counts(existing_labels: list[dict[str, str]], incoming: Pod,
                                                want_aff: dict[Any, int], want_anti: dict[Any, int]) -> None:
    from kubesched.plugins.interpodaffinity.filtering import build_state

    handle = handle_for([pod(lb, node="nodeA") for lb in existing_labels],
                        [node("nodeA", {"hostname": "nodeA"})])
    s = build_state(incoming, handle.snapshot.node_infos, [], handle.objects)
    assert s.affinity_counts == want_aff
    assert s.anti_affinity_counts == want_anti


def test_batch_filter_on_subset_of_rows() -> None:
    """filter_nodes over a subset (and reordering) of rows gives the rows' per-node results."""
    nodes = [rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2"), rz("nodeC", "r2", "z3"), node("nodeD", {})]
    handle = handle_for([pod({"foo": ""}, node="nodeA"), pod(node="nodeC", anti=(ex("bar", "zone"),))], nodes)
    plugin = InterPodAffinity(None, handle)
    incoming = pod({"bar": ""}, aff=(ex("foo", "region"),))
    cs = CycleState()
    plugin.pre_filter(cs, incoming, handle.snapshot.node_infos)
    table = handle.snapshot.table
    idx = np.array([table.index[n] for n in ("nodeD", "nodeC", "nodeA")], dtype=np.intp)
    got = list(plugin.filter_nodes(cs, incoming, table, idx))
    assert got == [False, False, True]
    assert [plugin.filter(cs, incoming, table.infos[i]).code for i in idx] == [
        Code.UnschedulableAndUnresolvable, Code.UnschedulableAndUnresolvable, Code.Success]


# -- Queueing hints (upstream plugin_test.go: Test_isSchedulableAfterPodChange / NodeChange) --
# Only the cases whose expectation holds for v1.34.1's plugin.go are ported (the stored test
# file is newer: its "updated pod is the target pod" and "delete a pod with anti-affinity
# that matches pending pod" cases describe later behaviour).
SVC_REGION = term(expr("service", "In", "securityscan", "value2"))
AFF_POD = pod(name="p", aff=(SVC_REGION,))
ANTI_POD = pod(name="p", anti=(SVC_REGION,))
MULTI_POD = pod(name="p", aff=(ex("aaa", "hostname"), ex("bbb", "hostname")))
Q, SKIPQ = "Queue", "QueueSkip"


def other(labels: dict[str, str], scheduled: bool = True, anti: tuple[dict[str, Any], ...] = ()) -> Pod:
    return pod(labels, node="fake-node" if scheduled else "", name="other", anti=anti)


POD_HINTS: list[tuple[str, Pod, Pod | None, Pod | None, str]] = [
    ("add-matching-affinity", AFF_POD, None, other({"service": "securityscan"}), Q),
    ("add-unscheduled", AFF_POD, None, other({"service": "securityscan"}, scheduled=False), SKIPQ),
    ("add-not-matching-affinity", AFF_POD, None, other({"aaa": "a"}), SKIPQ),
    ("update-to-match-affinity", AFF_POD, other({"aaa": "a"}), other({"service": "securityscan"}), Q),
    ("update-matching-before-and-after", AFF_POD, other({"service": "value2"}),
     other({"service": "securityscan"}), SKIPQ),
    ("update-unscheduled", AFF_POD, other({"aaa": "a"}, scheduled=False),
     other({"service": "securityscan"}, scheduled=False), SKIPQ),
    ("update-to-not-match-affinity", AFF_POD, other({"service": "securityscan"}), other({"aaa": "a"}), SKIPQ),
    ("update-multi-terms-to-not-match", MULTI_POD, other({"aaa": "a"}), other({"service": "securityscan"}), SKIPQ),
    ("update-multi-terms-to-match", MULTI_POD, other({"aaa": "a"}), other({"aaa": "", "bbb": ""}), Q),
    ("update-to-not-match-anti-affinity", ANTI_POD, other({"service": "securityscan"}),
     other({"service": "aaaa"}), Q),
    ("update-to-match-anti-affinity", ANTI_POD, other({"service": "bbb"}), other({"service": "securityscan"}),
     SKIPQ),
    ("delete-not-matching-anti-affinity", ANTI_POD, other({"aaa": "a"}), None, SKIPQ),
    ("delete-matching-anti-affinity", ANTI_POD, other({"service": "securityscan"}), None, Q),
    ("delete-pod-whose-anti-affinity-does-not-match", pod({"service": "foo"}, name="p"),
     other({}, anti=(SVC_REGION,)), None, SKIPQ),
    ("delete-neither-matches", pod({"service": "foo"}, name="p", anti=(SVC_REGION,)),
     other({"service": "foo"}, anti=(SVC_REGION,)), None, SKIPQ),
]


@pytest.mark.parametrize("target,old,new,want", [c[1:] for c in POD_HINTS], ids=[c[0] for c in POD_HINTS])
def test_is_schedulable_after_pod_change(target: Pod, old: Pod | None, new: Pod | None, want: str) -> None:
    assert InterPodAffinity.is_schedulable_after_pod_change(target, old, new).name == want


ZONE_AFF_POD = pod(name="p", aff=(term(expr("service", "In", "securityscan", "value2"), tk="zone"),))
REGION_AFF_POD = pod(name="p", aff=(SVC_REGION,))
ZONE_ANTI_POD = make_pod().name("p").pod_affinity(
    "podAntiAffinity", True, {"labelSelector": {"matchLabels": {"another": "label"}}, "topologyKey": "zone"}).obj()

NODE_HINTS: list[tuple[str, Pod, dict[str, str] | None, dict[str, str], str]] = [
    ("add-node-with-affinity-key", ZONE_AFF_POD, None, {"zone": "zone1"}, Q),
    ("add-node-without-affinity-key", REGION_AFF_POD, None, {"zone": "zone1"}, SKIPQ),
    ("update-unrelated-label", ZONE_AFF_POD, {"aaa": "a"}, {"aaa": "b"}, SKIPQ),
    ("update-label-unrelated-to-affinity", ZONE_AFF_POD, {"zone": "zone1"},
     {"zone": "zone1", "unrelated-label": "unrelated"}, SKIPQ),
    ("update-affinity-key-value", ZONE_AFF_POD, {"zone": "zone1"}, {"zone": "zone2"}, Q),
    ("update-to-have-affinity-key", ZONE_AFF_POD, {"aaa": "a"}, {"zone": "zone1"}, Q),
    ("add-node-with-anti-affinity-key", ZONE_ANTI_POD, None, {"zone": "zone1"}, Q),
    ("add-node-without-anti-affinity-key", ZONE_ANTI_POD, None, {}, Q),
    ("update-label-unrelated-to-anti-affinity", ZONE_ANTI_POD, {"zone": "zone1"},
     {"zone": "zone1", "unrelated-label": "unrelated"}, SKIPQ),
    ("update-anti-affinity-key-value", ZONE_ANTI_POD, {"zone": "zone1"}, {"zone": "zone2"}, Q),
    ("update-to-have-anti-affinity-key", ZONE_ANTI_POD, {"aaa": "a"}, {"zone": "zone1"}, SKIPQ),
    ("update-to-lose-anti-affinity-key", ZONE_ANTI_POD, {"zone": "zone1"}, {"aaa": "a"}, Q),
]


@pytest.mark.parametrize("target,old,new,want", [c[1:] for c in NODE_HINTS], ids=[c[0] for c in NODE_HINTS])
def test_is_schedulable_after_node_change(target: Pod, old: dict[str, str] | None, new: dict[str, str],
                                          want: str) -> None:
    old_node = None if old is None else node("node-a", old)
    assert InterPodAffinity.is_schedulable_after_node_change(target, old_node, node("node-a", new)).name == want
