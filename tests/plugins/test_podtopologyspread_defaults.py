"""PodTopologySpread's default constraints read through the framework handle's workload
listers, as upstream's plugin reads its Service/RC/RS/StatefulSet informer listers.

Ported from upstream ``pkg/scheduler/framework/plugins/helper/spread_test.go``
(TestGetPodServices) and ``podtopologyspread/scoring_test.go`` (TestPreScoreSkip's
"default constraints and a replicaset that doesn't match", TestPreScoreStateEmptyNodes'
"system default constraints and a replicaset", "default constraints and a replicaset",
"default constraints and a replicaset, but pod has constraints") and ``plugin.go``
(EventsToRegister; isSchedulableAfterPodChange through getConstraints). The DefaultSelector
cases follow upstream ``helper/spread.go`` as described in
tests/fidelity_workloads/UPSTREAM_README.md ("Default spreading"); each expected selector
is written out by hand.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.api.selectors import LabelSelector, Requirement
from kubesched.api.workloads import Workload, WorkloadIndex
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.status import Code
from kubesched.plugins.podtopologyspread.defaultselector import default_selector, pod_services
from kubesched.plugins.podtopologyspread.plugin import PRE_SCORE_KEY, PodTopologySpread
from kubesched.testing.handle import handle_for
from kubesched.testing.wrappers import make_pod

HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
FOO_EXISTS = Requirement("foo", "Exists", frozenset())
# Go's math.Log(n), bit for bit: upstream topologyNormalizingWeight(size) = log(size + 2).
GO_LOG = {3: float.fromhex("0x1.193ea7aad030ap+0"), 4: float.fromhex("0x1.62e42fefa39efp+0"),
          6: float.fromhex("0x1.cab0bfa2a2002p+0")}


def svc(name: str, selector: dict[str, str] | None, ns: str = "default") -> Workload:
    spec: dict[str, Any] = {} if selector is None else {"selector": selector}
    return Workload.from_dict({"apiVersion": "v1", "kind": "Service",
                               "metadata": {"name": name, "namespace": ns}, "spec": spec})


def ctrl(kind: str, name: str, selector: Any, ns: str = "default", template: dict[str, str] | None = None) -> Workload:
    spec: dict[str, Any] = {"selector": selector}
    if template is not None:
        spec["template"] = {"metadata": {"labels": template}}
    api = "v1" if kind == "ReplicationController" else "apps/v1"
    return Workload.from_dict({"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": ns},
                               "spec": spec})


def owned(labels: dict[str, str], *refs: tuple[str, str, str, bool], ns: str = "default") -> Pod:
    """A pod with ``labels`` and ownerReferences (apiVersion, kind, name, controller)."""
    w = make_pod().name("p").namespace(ns).labels(labels)
    if refs:
        w.set("metadata.ownerReferences", [{"apiVersion": a, "kind": k, "name": n, "uid": f"uid-{n}",
                                            "controller": c} for a, k, n, c in refs])
    return w.obj()


def sel(*reqs: tuple[str, str]) -> LabelSelector:
    """``key=value`` requirements, sorted by key as labels.Selector keeps them."""
    return LabelSelector(tuple(sorted((Requirement(k, "In", frozenset([v])) for k, v in reqs),
                                      key=lambda r: r.key)))


# -- helper/spread_test.go TestGetPodServices --------------------------------------------------
@pytest.mark.parametrize("i, want", [(0, [0]), (1, [1]), (2, [2]), (3, []), (4, [])],
                         ids=[f"GetPodServices for pod-{i}" for i in range(5)])
def test_get_pod_services(i: int, want: list[int]) -> None:
    services = [svc(f"service-{j}", {"app": f"test-{j}"}, ns="test") for j in range(3)]
    index = WorkloadIndex(services)
    pod = make_pod().name(f"test-pod-{i}").namespace("test").labels(
        {"app": f"test-{i}", "label": f"label-{i}"}).obj()
    assert pod_services(pod, index) == [services[j].label_selector for j in want]


# -- helper.DefaultSelector ----------------------------------------------------------------------
RS, SS, RC = ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet"), ("v1", "ReplicationController")
WEB = {"app": "web", "tier": "fe", "pod-template-hash": "abc"}
OBJECTS = [
    svc("web", {"app": "web"}), svc("fe", {"tier": "fe"}), svc("other", {"app": "db"}),
    svc("external", None),  # ExternalName-like: a nil selector selects nothing
    svc("elsewhere", {"app": "web"}, ns="team-b"),
    ctrl("ReplicaSet", "rs", {"matchLabels": {"pod-template-hash": "abc"},
                              "matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "www"]}]}),
    ctrl("StatefulSet", "ss", FOO),
    ctrl("ReplicationController", "rc", None, template={"app": "web", "rc": "x"}),  # selector from the template
    ctrl("ReplicationController", "rc-db", {"app": "db"}),  # does not select the pod: merged all the same
    ctrl("ReplicaSet", "rs-nil", None),
]
IN_WEB_WWW = Requirement("app", "In", frozenset(["web", "www"]))
SELECTOR_CASES = [
    # (id, pod labels, owner references, want)
    ("services only: both matching Services ANDed", WEB, (), sel(("app", "web"), ("tier", "fe"))),
    ("no Service, no owner: empty", {"x": "y"}, (), LabelSelector(())),
    ("ReplicaSet controller: its requirements added", WEB, (RS + ("rs", True),),
     LabelSelector(tuple(sorted((Requirement("app", "In", frozenset(["web"])), IN_WEB_WWW,
                                 Requirement("pod-template-hash", "In", frozenset(["abc"])),
                                 Requirement("tier", "In", frozenset(["fe"]))), key=lambda r: r.key)))),
    ("StatefulSet controller", {"foo": "1"}, (SS + ("ss", True),), LabelSelector((FOO_EXISTS,))),
    ("RC without selector: its template's labels", {"app": "web", "rc": "x"}, (RC + ("rc", True),),
     sel(("app", "web"), ("rc", "x"))),
    ("RC label set merged over the Services' (later wins)", {"app": "web"}, (RC + ("rc-db", True),),
     sel(("app", "db"))),
    ("not a controller reference: ignored", {"foo": "1"}, (SS + ("ss", False),), LabelSelector(())),
    ("first controller reference counts", {"foo": "1"},
     (("apps/v1", "Deployment", "d", True), SS + ("ss", True)), LabelSelector(())),
    ("Deployment owner adds nothing", {"x": "y"}, (("apps/v1", "Deployment", "rs", True),), LabelSelector(())),
    ("Job owner adds nothing", {"x": "y"}, (("batch/v1", "Job", "rs", True),), LabelSelector(())),
    ("extensions/v1beta1 ReplicaSet adds nothing", {"x": "y"}, (("extensions/v1beta1", "ReplicaSet", "rs", True),),
     LabelSelector(())),
    ("owner not found adds nothing", {"x": "y"}, (RS + ("gone", True),), LabelSelector(())),
    ("ReplicaSet with a nil selector (Nothing) adds nothing", {"x": "y"}, (RS + ("rs-nil", True),),
     LabelSelector(())),
]


@pytest.mark.parametrize("labels, refs, want", [c[1:] for c in SELECTOR_CASES], ids=[c[0] for c in SELECTOR_CASES])
def test_default_selector(labels: dict[str, str], refs: tuple[Any, ...], want: LabelSelector) -> None:
    assert default_selector(owned(labels, *refs), WorkloadIndex(OBJECTS)) == want


def test_default_selector_other_namespace() -> None:
    """Only Services and owners in the pod's namespace count."""
    pod = owned({"app": "web", "foo": "1"}, SS + ("ss", True), ns="team-c")
    assert default_selector(pod, WorkloadIndex(OBJECTS)).empty


# -- scoring_test.go, through the handle's listers ---------------------------------------------
def node(name: str, **labels: str) -> Node:
    return Node.from_dict({"metadata": {"name": name, "labels": labels},
                           "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})


def plugin(nodes: list[Node], objects: list[Workload], args: dict[str, Any] | None) -> tuple[PodTopologySpread, Any]:
    handle = handle_for([], nodes)
    handle.objects.workload_index = WorkloadIndex(objects)
    return PodTopologySpread(PodTopologySpread.parse_args(args, "args"), handle), handle


RS_FOO = ctrl("ReplicaSet", "rs1", FOO)
RS1_POD = (("apps/v1", "ReplicaSet", "rs1", True),)


def test_pre_score_skip_replicaset_that_does_not_match() -> None:
    """TestPreScoreSkip: the pod's owner rs2 does not exist (rs1 does): no default constraints."""
    pl, handle = plugin([node("node-a", planet="mars")],
                        [ctrl("ReplicaSet", "rs1", {"matchExpressions": [{"key": "tar", "operator": "Exists"}]})],
                        {"defaultingType": "List", "defaultConstraints": [
                            {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"}]})
    p = owned({"foo": "bar", "baz": "sup"}, ("apps/v1", "ReplicaSet", "rs2", True))
    assert pl.pre_score(CycleState(), p, handle.snapshot.node_infos).code == Code.Skip


def test_pre_score_system_default_constraints_and_a_replicaset() -> None:
    """Nodes without a zone are not ignored with system defaults: they form the zone ""."""
    nodes = [node("node-a", **{HOST: "node-a", ZONE: "mars"}), node("node-b", **{HOST: "node-b", ZONE: "mars"}),
             node("node-c", **{HOST: "node-c"}), node("node-d", **{HOST: "node-d"})]
    pl, handle = plugin(nodes, [RS_FOO], None)
    state = CycleState()
    assert pl.pre_score(state, owned({"foo": "tar", "baz": "sup"}, *RS1_POD), handle.snapshot.node_infos).success
    s = state.read(PRE_SCORE_KEY)
    assert [(c.max_skew, c.topology_key, c.selector, c.min_domains, c.node_affinity_policy, c.node_taints_policy)
            for c in s.constraints] == [(3, HOST, LabelSelector((FOO_EXISTS,)), 1, "Honor", "Ignore"),
                                        (5, ZONE, LabelSelector((FOO_EXISTS,)), 1, "Honor", "Ignore")]
    assert s.ignored_nodes == set()
    assert s.topology_value_to_pod_counts[1] == {"mars": 0, "": 0}
    assert s.topology_normalizing_weight == [GO_LOG[6], GO_LOG[4]]  # sizes 4 and 2


def test_pre_score_list_default_constraints_and_a_replicaset() -> None:
    """Only the ScheduleAnyway defaults are scored (rack is DoNotSchedule)."""
    pl, handle = plugin([node("node-a", rack="rack1", planet="mars", **{HOST: "node-a"})], [RS_FOO],
                        {"defaultingType": "List", "defaultConstraints": [
                            {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway"},
                            {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"},
                            {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"}]})
    state = CycleState()
    assert pl.pre_score(state, owned({"foo": "tar", "baz": "sup"}, *RS1_POD), handle.snapshot.node_infos).success
    s = state.read(PRE_SCORE_KEY)
    assert [(c.max_skew, c.topology_key, c.selector) for c in s.constraints] == [
        (1, HOST, LabelSelector((FOO_EXISTS,))), (2, "planet", LabelSelector((FOO_EXISTS,)))]
    assert s.topology_value_to_pod_counts[1] == {"mars": 0}
    assert s.topology_normalizing_weight == [GO_LOG[3], GO_LOG[3]]  # sizes 1 and 1


def test_pre_score_pod_constraints_win_over_defaults() -> None:
    """A pod with constraints of its own uses only those (here one soft one on planet)."""
    pl, handle = plugin([node("node-a", planet="mars", galaxy="andromeda")], [RS_FOO],
                        {"defaultingType": "List", "defaultConstraints": [
                            {"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": "ScheduleAnyway"}]})
    p = (make_pod().name("p").labels({"foo": "bar", "baz": "sup"})
         .set("metadata.ownerReferences", [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs1",
                                            "uid": "u", "controller": True}])
         .spread(1, "zone", "DoNotSchedule", {"matchExpressions": [{"key": "bar", "operator": "Exists"}]})
         .spread(2, "planet", "ScheduleAnyway", {"matchLabels": {"baz": "sup"}}).obj())
    state = CycleState()
    assert pl.pre_score(state, p, handle.snapshot.node_infos).success
    s = state.read(PRE_SCORE_KEY)
    assert [(c.max_skew, c.topology_key, c.selector) for c in s.constraints] == [
        (2, "planet", sel(("baz", "sup")))]
    assert s.topology_value_to_pod_counts == [{"mars": 0}]


def test_no_events_registered_for_services_or_controllers() -> None:
    """Upstream plugin.go EventsToRegister: Pod (Add, UpdatePodLabel, UpdatePodToleration,
    Delete) and Node (Add, Delete, UpdateNodeLabel, UpdateNodeTaint) only; a change to a
    Service or controller does not move pods the plugin rejected."""
    pl, _ = plugin([], [], None)
    assert [e.event.resource.name for e in pl.events_to_register()] == ["Pod", "Node"]


def test_pod_change_hint_uses_the_default_constraints() -> None:
    """plugin.go isSchedulableAfterPodChange takes getConstraints(pod), which builds the
    default DoNotSchedule constraints (List defaulting) with DefaultSelector: an assigned pod
    of the same namespace matching that selector queues the pod, another does not."""
    pl, _ = plugin([], [RS_FOO], {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]})
    p = owned({"foo": "tar"}, *RS1_POD)
    matching = make_pod().name("m").node("n1").labels({"foo": "x"}).obj()
    other = make_pod().name("o").node("n1").labels({"bar": "x"}).obj()
    assert pl.hint_after_pod_change(p, None, matching) == QueueingHint.Queue
    assert pl.hint_after_pod_change(p, None, other) == QueueingHint.QueueSkip
    # without an owner nothing selects the pod: no default constraints, nothing to wait for
    assert pl.hint_after_pod_change(owned({"foo": "tar"}), None, matching) == QueueingHint.QueueSkip
