"""PodTopologySpread PreFilter/Filter/AddPod/RemovePod, ported from upstream
``pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go`` (TestPreFilterState,
TestPreFilterStateAddPod, TestPreFilterStateRemovePod, TestSingleConstraint,
TestMultipleConstraints) and the args validation of ``validation_pluginargs.go``.

Kubernetes 1.34 has NodeInclusionPolicyInPodTopologySpread locked on and matchLabelKeys
merged into the selector, so cases that only exercise those gates turned off are not
ported. Filter cases check the per-node statuses (code and reason) and the batch form.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.api.selectors import LabelSelector
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.errors import ProfileError
from kubesched.framework.status import Code
from kubesched.plugins.podtopologyspread.args import (
    SYSTEM_DEFAULT_CONSTRAINTS, DefaultConstraint, PodTopologySpreadArgs,
)
from kubesched.plugins.podtopologyspread.common import MAX_INT32, default_selector
from kubesched.plugins.podtopologyspread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH,
)
from kubesched.plugins.podtopologyspread.plugin import PRE_FILTER_KEY, PodTopologySpread
from kubesched.testing.handle import handle_for
from kubesched.testing.wrappers import make_pod

FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
DNS, SA = "DoNotSchedule", "ScheduleAnyway"
UNSCHED = "node.kubernetes.io/unschedulable"
S, U, UU = Code.Success, Code.Unschedulable, Code.UnschedulableAndUnresolvable
NEW = (("", MAX_INT32), ("", MAX_INT32))


# -- builders (upstream st.MakeNode does not add a hostname label) -------------------------
def node(name: str, labels: dict[str, str], tainted: bool = False) -> Node:
    spec: dict[str, Any] = {"taints": [{"key": UNSCHED, "effect": "NoSchedule"}]} if tainted else {}
    return Node.from_dict({"metadata": {"name": name, "labels": dict(labels)}, "spec": spec,
                           "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})


def zn(name: str, zone: str, tainted: bool = False, **extra: str) -> Node:
    return node(name, {"zone": zone, "node": name, **extra}, tainted)


def four() -> list[Node]:
    return [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]


def ep(name: str, on: str, ns: str = "default", terminating: bool = False, **labels: str) -> Pod:
    w = make_pod().name(name).namespace(ns).node(on).labels(labels)
    if terminating:
        w.set("metadata.deletionTimestamp", "2020-01-01T00:00:00Z")
    return w.obj()


def foo(name: str, on: str, ns: str = "default") -> Pod:
    return ep(name, on, ns, foo="")


def pod(labels: dict[str, str], *constraints: tuple[Any, ...], node_selector: dict[str, str] | None = None,
        affinity: dict[str, Any] | None = None, tolerate: bool = False) -> Pod:
    w = make_pod().name("p").labels(labels)
    for c in constraints:
        skew, key, when, sel = c[:4]
        extra = c[4] if len(c) > 4 else {}
        w.spread(skew, key, when, sel, **extra)
    if node_selector:
        w.node_selector(node_selector)
    if affinity:
        w.affinity({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                     {"nodeSelectorTerms": [{"matchExpressions": [affinity]}]}}})
    if tolerate:
        w.toleration(UNSCHED, operator="Exists")
    return w.obj()


def not_in(key: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": "NotIn", "values": list(values)}


def in_(key: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": list(values)}


def plugin(handle: Any, defaults: list[dict[str, Any]] | None = None,
           service: dict[str, str] | None = None) -> PodTopologySpread:
    raw: dict[str, Any] = {"defaultingType": "List", "defaultConstraints": defaults or []}
    pl = PodTopologySpread(PodTopologySpread.parse_args(raw, "args"), handle)
    if service is not None:
        pl.default_selector_of = lambda p: default_selector(p, [service])
    return pl


def norm(paths: tuple[tuple[str, int], tuple[str, int]]) -> tuple[tuple[str, int], tuple[str, int]]:
    """Upstream's comparer: paths with equal counts compare with their domains sorted."""
    (v0, n0), (v1, n1) = paths
    if n0 == n1 and v0 > v1:
        v0, v1 = v1, v0
    return (v0, n0), (v1, n1)


def reqs(sel: LabelSelector) -> tuple[bool, frozenset[Any]]:
    return sel.nothing, frozenset(sel.requirements)


def check_state(pl: PodTopologySpread, state: CycleState, want: list[tuple[Any, ...]]) -> None:
    s = state.read(PRE_FILTER_KEY)
    got_c = [(c.max_skew, c.topology_key, reqs(c.selector), c.min_domains, c.node_affinity_policy,
              c.node_taints_policy) for c in s.constraints]
    want_c = [(w[0], w[1], reqs(LabelSelector.parse(w[2])), 1, w[3], w[4]) for w in want]
    assert got_c == want_c
    assert [norm(p.as_tuple()) for p in s.critical_paths] == [norm(w[5]) for w in want]
    assert s.tp_value_to_match_num == [w[6] for w in want]


def check_forms_agree(pl: PodTopologySpread, state: CycleState, p: Pod, handle: Any) -> None:
    table = handle.snapshot.table
    ok = pl.filter_nodes(state, p, table, table.all)
    for i, ni in enumerate(handle.snapshot.node_infos):
        assert bool(ok[i]) == pl.filter(state, p, ni).success, ni.name


H, I = "Honor", "Ignore"

# (id, pod, nodes, existing, defaults, service, want) ; want: list of
# (maxSkew, key, selector, nodeAffinityPolicy, nodeTaintsPolicy, paths, counts) or "skip"
PRE_FILTER_STATE = [
    ("clean cluster with one spreadConstraint",
     pod({"foo": ""}, (5, "zone", DNS, {"matchLabels": {"foo": "bar"}})), four(), [], None, None,
     [(5, "zone", {"matchLabels": {"foo": "bar"}}, H, I, (("zone1", 0), ("zone2", 0)),
       {"zone1": 0, "zone2": 0})]),
    ("normal case with one spreadConstraint",
     pod({"foo": ""}, (1, "zone", DNS, FOO)), four(),
     [foo("p-a1", "node-a"), foo("p-a2", "node-a"), foo("p-b1", "node-b"), foo("p-y1", "node-y"),
      foo("p-y2", "node-y")], None, None,
     [(1, "zone", FOO, H, I, (("zone2", 2), ("zone1", 3)), {"zone1": 3, "zone2": 2})]),
    ("normal case with null label selector",
     pod({"foo": ""}, (1, "zone", DNS, None)), four(),
     [foo("p-a1", "node-a"), foo("p-a2", "node-a"), foo("p-b1", "node-b"), foo("p-y1", "node-y"),
      foo("p-y2", "node-y")], None, None,
     [(1, "zone", None, H, I, (("zone2", 0), ("zone1", 0)), {"zone1": 0, "zone2": 0})]),
    ("normal case with one spreadConstraint, on a 3-zone cluster",
     pod({"foo": ""}, (1, "zone", DNS, FOO)), four() + [zn("node-o", "zone3"), zn("node-p", "zone3")],
     [foo("p-a1", "node-a"), foo("p-a2", "node-a"), foo("p-b1", "node-b"), foo("p-y1", "node-y"),
      foo("p-y2", "node-y")], None, None,
     [(1, "zone", FOO, H, I, (("zone3", 0), ("zone2", 2)), {"zone1": 3, "zone2": 2, "zone3": 0})]),
    ("namespace mismatch doesn't count",
     pod({"foo": ""}, (1, "zone", DNS, FOO)), four(),
     [foo("p-a1", "node-a"), foo("p-a2", "node-a", "ns1"), foo("p-b1", "node-b"),
      foo("p-y1", "node-y", "ns2"), foo("p-y2", "node-y")], None, None,
     [(1, "zone", FOO, H, I, (("zone2", 1), ("zone1", 2)), {"zone1": 2, "zone2": 1})]),
    ("normal case with two spreadConstraints",
     pod({"foo": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, FOO)), four(),
     [foo("p-a1", "node-a"), foo("p-a2", "node-a"), foo("p-b1", "node-b")]
     + [foo(f"p-y{i}", "node-y") for i in range(1, 5)], None, None,
     [(1, "zone", FOO, H, I, (("zone1", 3), ("zone2", 4)), {"zone1": 3, "zone2": 4}),
      (1, "node", FOO, H, I, (("node-x", 0), ("node-b", 1)),
       {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4})]),
    ("soft spreadConstraints should be bypassed",
     pod({"foo": ""}, (1, "zone", SA, FOO), (1, "zone", DNS, FOO), (1, "node", SA, FOO),
         (1, "node", DNS, FOO)),
     [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
     [foo("p-a1", "node-a"), foo("p-a2", "node-a"), foo("p-b1", "node-b")]
     + [foo(f"p-y{i}", "node-y") for i in range(1, 5)], None, None,
     [(1, "zone", FOO, H, I, (("zone1", 3), ("zone2", 4)), {"zone1": 3, "zone2": 4}),
      (1, "node", FOO, H, I, (("node-b", 1), ("node-a", 2)), {"node-a": 2, "node-b": 1, "node-y": 4})]),
    ("different labelSelectors - simple version",
     pod({"foo": "", "bar": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, BAR)),
     [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
     [foo("p-a", "node-a"), ep("p-b", "node-b", bar="")], None, None,
     [(1, "zone", FOO, H, I, (("zone2", 0), ("zone1", 1)), {"zone1": 1, "zone2": 0}),
      (1, "node", BAR, H, I, (("node-a", 0), ("node-y", 0)), {"node-a": 0, "node-b": 1, "node-y": 0})]),
    ("different labelSelectors - complex pods",
     pod({"foo": "", "bar": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, BAR)),
     [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
     [foo("p-a1", "node-a"), ep("p-a2", "node-a", foo="", bar=""), foo("p-b1", "node-b"),
      foo("p-y1", "node-y"), ep("p-y2", "node-y", foo="", bar=""), foo("p-y3", "node-y"),
      ep("p-y4", "node-y", foo="", bar="")], None, None,
     [(1, "zone", FOO, H, I, (("zone1", 3), ("zone2", 4)), {"zone1": 3, "zone2": 4}),
      (1, "node", BAR, H, I, (("node-b", 0), ("node-a", 1)), {"node-a": 1, "node-b": 0, "node-y": 2})]),
    ("two spreadConstraints, and with podAffinity",
     pod({"foo": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, FOO), affinity=not_in("node", "node-x")),
     four(),
     [foo("p-a1", "node-a"), foo("p-a2", "node-a"), foo("p-b1", "node-b")]
     + [foo(f"p-y{i}", "node-y") for i in range(1, 5)], None, None,
     [(1, "zone", FOO, H, I, (("zone1", 3), ("zone2", 4)), {"zone1": 3, "zone2": 4}),
      (1, "node", FOO, H, I, (("node-b", 1), ("node-a", 2)), {"node-a": 2, "node-b": 1, "node-y": 4})]),
    ("default constraints and a service",
     pod({"foo": "bar", "baz": "kar"}), [], [],
     [{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS},
      {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA},
      {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": DNS}], {"foo": "bar"},
     [(3, "node", {"matchLabels": {"foo": "bar"}}, H, I, NEW, {}),
      (5, "rack", {"matchLabels": {"foo": "bar"}}, H, I, NEW, {})]),
    ("default constraints and a service that doesn't match",
     pod({"foo": "bar"}), [], [], [{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS}],
     {"baz": "kep"}, "skip"),
    ("default constraints and a service, but pod has constraints",
     pod({"foo": "bar", "baz": "tar"}, (1, "zone", DNS, {"matchLabels": {"baz": "tar"}}),
         (2, "planet", SA, {"matchLabels": {"fot": "rok"}})), [], [],
     [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": DNS}], {"foo": "bar"},
     [(1, "zone", {"matchLabels": {"baz": "tar"}}, H, I, NEW, {})]),
    ("default soft constraints and a service",
     pod({"foo": "bar"}), [], [], [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA}],
     {"foo": "bar"}, "skip"),
    ("NodeAffinityPolicy honored with labelSelectors",
     pod({"foo": ""}, (1, "node", DNS, BAR), node_selector={"foo": ""}),
     [node("node-a", {"node": "node-a", "foo": ""}), node("node-b", {"node": "node-b", "foo": ""}),
      node("node-c", {"node": "node-c", "bar": ""})],
     [ep("p-a", "node-a", bar=""), ep("p-b", "node-b", bar=""), ep("p-c", "node-b", bar=""),
      ep("p-d", "node-c")], None, None,
     [(1, "node", BAR, H, I, (("node-a", 1), ("node-b", 2)), {"node-a": 1, "node-b": 2})]),
    ("NodeAffinityPolicy ignored with labelSelectors",
     pod({"foo": ""}, (1, "node", DNS, BAR, {"nodeAffinityPolicy": I}), node_selector={"foo": ""}),
     [node("node-a", {"node": "node-a", "foo": ""}), node("node-b", {"node": "node-b", "foo": ""}),
      node("node-c", {"node": "node-c", "bar": ""})],
     [ep("p-a", "node-a", bar=""), ep("p-b", "node-b", bar=""), ep("p-c", "node-b", bar=""),
      ep("p-d", "node-c")], None, None,
     [(1, "node", BAR, I, I, (("node-c", 0), ("node-a", 1)), {"node-a": 1, "node-b": 2, "node-c": 0})]),
    ("NodeAffinityPolicy honored with nodeAffinity",
     pod({"foo": ""}, (1, "node", DNS, BAR), affinity=in_("foo", "")),
     [node("node-a", {"node": "node-a", "foo": ""}), node("node-b", {"node": "node-b", "foo": ""}),
      node("node-c", {"node": "node-c", "bar": ""})],
     [ep("p-a", "node-a", bar=""), ep("p-c", "node-b", bar=""), ep("p-d", "node-b", bar=""),
      ep("p-e", "node-c")], None, None,
     [(1, "node", BAR, H, I, (("node-a", 1), ("node-b", 2)), {"node-a": 1, "node-b": 2})]),
    ("NodeAffinityPolicy ignored with nodeAffinity",
     pod({"foo": ""}, (1, "node", DNS, BAR, {"nodeAffinityPolicy": I}), affinity=in_("foo", "")),
     [node("node-a", {"node": "node-a", "foo": ""}), node("node-b", {"node": "node-b", "foo": ""}),
      node("node-c", {"node": "node-c", "bar": ""})],
     [ep("p-a", "node-a", bar=""), ep("p-b", "node-b", bar=""), ep("p-c", "node-b", bar=""),
      ep("p-d", "node-c")], None, None,
     [(1, "node", BAR, I, I, (("node-c", 0), ("node-a", 1)), {"node-a": 1, "node-b": 2, "node-c": 0})]),
    ("NodeTaintsPolicy ignored",
     pod({"foo": ""}, (1, "node", DNS, BAR)),
     [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"}),
      node("node-c", {"node": "node-c", "bar": ""}, tainted=True)],
     [ep("p-a", "node-a", bar=""), ep("p-b", "node-b", bar=""), ep("p-c", "node-b", bar=""),
      ep("p-d", "node-c")], None, None,
     [(1, "node", BAR, H, I, (("node-c", 0), ("node-a", 1)), {"node-a": 1, "node-b": 2, "node-c": 0})]),
    ("NodeTaintsPolicy honored",
     pod({"foo": ""}, (1, "node", DNS, BAR, {"nodeTaintsPolicy": H})),
     [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"}),
      node("node-c", {"node": "node-c", "bar": ""}, tainted=True)],
     [ep("p-a", "node-a", bar=""), ep("p-b", "node-b", bar=""), ep("p-c", "node-b", bar=""),
      ep("p-d", "node-c")], None, None,
     [(1, "node", BAR, H, H, (("node-a", 1), ("node-b", 2)), {"node-a": 1, "node-b": 2})]),
    ("NodeTaintsPolicy honored with tolerated taints",
     pod({"foo": ""}, (1, "node", DNS, BAR, {"nodeTaintsPolicy": H}), tolerate=True),
     [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"}),
      node("node-c", {"node": "node-c", "bar": ""}, tainted=True)],
     [ep("p-a", "node-a", bar=""), ep("p-b", "node-b", bar=""), ep("p-c", "node-b", bar=""),
      ep("p-d", "node-c")], None, None,
     [(1, "node", BAR, H, H, (("node-c", 0), ("node-a", 1)), {"node-a": 1, "node-b": 2, "node-c": 0})]),
    ("two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
     pod({"foo": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, FOO, {"nodeAffinityPolicy": I}),
         node_selector={"foo": ""}),
     [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo="")],
     [foo("p-b1", "node-b"), foo("p-b2", "node-b"), foo("p-x1", "node-x")], None, None,
     [(1, "zone", FOO, H, I, (("zone1", 0), ("zone2", 1)), {"zone1": 0, "zone2": 1}),
      (1, "node", FOO, I, I, (("node-a", 0), ("node-x", 1)), {"node-a": 0, "node-b": 2, "node-x": 1})]),
    ("two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
     pod({"foo": ""}, (1, "zone", DNS, FOO, {"nodeTaintsPolicy": H}), (1, "node", DNS, FOO)),
     [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", tainted=True), zn("node-x", "zone2", foo="")],
     [foo("p-b1", "node-b"), foo("p-b2", "node-b"), foo("p-x1", "node-x")], None, None,
     [(1, "zone", FOO, H, H, (("zone1", 0), ("zone2", 1)), {"zone1": 0, "zone2": 1}),
      (1, "node", FOO, H, I, (("node-a", 0), ("node-x", 1)), {"node-a": 0, "node-b": 2, "node-x": 1})]),
    ("two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
     pod({"foo": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, FOO), node_selector={"foo": ""}),
     [zn("node-a", "zone1"), zn("node-b", "zone1", tainted=True, foo=""), zn("node-x", "zone2", foo=""),
      zn("node-y", "zone2")],
     [foo("p-a1", "node-a"), foo("p-a2", "node-a"), foo("p-x1", "node-x"), foo("p-y1", "node-y")],
     None, None,
     [(1, "zone", FOO, H, I, (("zone1", 0), ("zone2", 1)), {"zone1": 0, "zone2": 1}),
      (1, "node", FOO, H, I, (("node-b", 0), ("node-x", 1)), {"node-b": 0, "node-x": 1})]),
    ("two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
     pod({"foo": ""}, (1, "zone", DNS, FOO, {"nodeAffinityPolicy": I}),
         (1, "node", DNS, FOO, {"nodeTaintsPolicy": H}), node_selector={"foo": ""}),
     [zn("node-a", "zone1"), zn("node-b", "zone1", tainted=True, foo=""), zn("node-x", "zone2", foo=""),
      zn("node-y", "zone2", foo="")],
     [foo("p-a1", "node-a"), foo("p-a2", "node-a"), foo("p-x1", "node-x"), foo("p-x2", "node-x"),
      foo("p-y1", "node-y")], None, None,
     [(1, "zone", FOO, I, I, (("zone1", 2), ("zone2", 3)), {"zone1": 2, "zone2": 3}),
      (1, "node", FOO, H, H, (("node-y", 1), ("node-x", 2)), {"node-x": 2, "node-y": 1})]),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
     pod({"foo": "", "bar": "a"}, (1, "zone", DNS, FOO, {"matchLabelKeys": ["bar"]})), four(),
     [foo("p-a1", "node-a"), ep("p-a2", "node-a", foo="", bar="a"), foo("p-b1", "node-b"),
      ep("p-y1", "node-y", foo="", bar="a"), ep("p-y2", "node-y", bar="")], None, None,
     [(1, "zone", {"matchLabels": {"bar": "a"}, **FOO}, H, I, (("zone2", 1), ("zone1", 1)),
       {"zone1": 1, "zone2": 1})]),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
     pod({"foo": "a"}, (1, "zone", DNS, {}, {"matchLabelKeys": ["foo"]})), four(),
     [ep(n, on, foo="a") for n, on in (("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"),
                                       ("p-y1", "node-y"), ("p-y2", "node-y"))], None, None,
     [(1, "zone", {"matchLabels": {"foo": "a"}}, H, I, (("zone2", 2), ("zone1", 3)),
       {"zone1": 3, "zone2": 2})]),
    ("key in matchLabelKeys is ignored when LabelSelector is nil",
     pod({"foo": ""}, (1, "zone", DNS, None, {"matchLabelKeys": ["bar"]})), four(),
     [ep(n, on, foo="a") for n, on in (("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"),
                                       ("p-y1", "node-y"), ("p-y2", "node-y"))], None, None,
     [(1, "zone", None, H, I, (("zone2", 0), ("zone1", 0)), {"zone1": 0, "zone2": 0})]),
    ("key in matchLabelKeys is ignored when it isn't exist in pod.labels",
     pod({"foo": ""}, (1, "zone", DNS, FOO, {"matchLabelKeys": ["bar"]})), four(),
     [ep(n, on, foo="a") for n, on in (("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"),
                                       ("p-y1", "node-y"), ("p-y2", "node-y"))], None, None,
     [(1, "zone", FOO, H, I, (("zone2", 2), ("zone1", 3)), {"zone1": 3, "zone2": 2})]),
    ("two spreadConstraints with the same topologyKey",
     pod({"foo": "", "bar": ""}, (1, "zone", DNS, FOO), (1, "zone", DNS, BAR)), four(),
     [ep("p-a1", "node-a", foo="", bar=""), foo("p-b1", "node-b"), ep("p-x1", "node-x", bar=""),
      ep("p-y1", "node-y", foo="", bar=""), ep("p-y2", "node-y", bar="")], None, None,
     [(1, "zone", FOO, H, I, (("zone2", 1), ("zone1", 2)), {"zone1": 2, "zone2": 1}),
      (1, "zone", BAR, H, I, (("zone1", 1), ("zone2", 3)), {"zone1": 1, "zone2": 3})]),
    ("skip if not specified", pod({"foo": ""}), [zn("node-a", "zone1")], [], None, None, "skip"),
]


@pytest.mark.parametrize("p, nodes, existing, defaults, service, want",
                         [c[1:] for c in PRE_FILTER_STATE], ids=[c[0] for c in PRE_FILTER_STATE])
def test_pre_filter_state(p: Pod, nodes: list[Node], existing: list[Pod], defaults: Any,
                          service: Any, want: Any) -> None:
    handle = handle_for(existing, nodes)
    pl = plugin(handle, defaults, service)
    state = CycleState()
    result, st = pl.pre_filter(state, p, handle.snapshot.node_infos)
    assert result is None
    if want == "skip":
        assert st.code == Code.Skip
        assert state.get(PRE_FILTER_KEY) is None
        return
    assert st.success
    check_state(pl, state, want)
    check_forms_agree(pl, state, p, handle)


NODE_C = (1, "node", FOO, H, I)
ZONE_C = (1, "zone", FOO, H, I)
BAR_NODE_C = (1, "node", BAR, H, I)
ZONE_NODE = [(1, "zone", DNS, FOO), (1, "node", DNS, FOO)]
AB = [zn("node-a", "zone1"), zn("node-b", "zone1")]
ABX = AB + [zn("node-x", "zone2")]
AFF_NODES = [zn("node-a", "zone1", foo="bar"), zn("node-b", "zone2", foo="")]
TAINT_NODES = [zn("node-a", "zone1", tainted=True), zn("node-b", "zone2")]

# (id, preemptor, added pod, existing, node index, nodes, want)
ADD_POD = [
    ("node a and b both impact current min match", pod({"foo": ""}, (1, "node", DNS, FOO)),
     foo("p-a1", "node-a"), [], 0, AB, [NODE_C + ((("node-b", 0), ("node-a", 1)), {"node-a": 1, "node-b": 0})]),
    ("only node a impacts current min match", pod({"foo": ""}, (1, "node", DNS, FOO)),
     foo("p-a1", "node-a"), [foo("p-b1", "node-b")], 0, AB,
     [NODE_C + ((("node-a", 1), ("node-b", 1)), {"node-a": 1, "node-b": 1})]),
    ("add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
     pod({"foo": ""}, (1, "node", DNS, FOO)), foo("p-a1", "node-a", "ns1"), [foo("p-b1", "node-b")], 0, AB,
     [NODE_C + ((("node-a", 0), ("node-b", 1)), {"node-a": 0, "node-b": 1})]),
    ("add pod on non-critical node won't trigger re-calculation", pod({"foo": ""}, (1, "node", DNS, FOO)),
     foo("p-b2", "node-b"), [foo("p-b1", "node-b")], 1, AB,
     [NODE_C + ((("node-a", 0), ("node-b", 2)), {"node-a": 0, "node-b": 2})]),
    ("node a and x both impact topologyKeyToMinPodsMap on zone and node", pod({"foo": ""}, *ZONE_NODE),
     foo("p-a1", "node-a"), [], 0, [zn("node-a", "zone1"), zn("node-x", "zone2")],
     [ZONE_C + ((("zone2", 0), ("zone1", 1)), {"zone1": 1, "zone2": 0}),
      NODE_C + ((("node-x", 0), ("node-a", 1)), {"node-a": 1, "node-x": 0})]),
    ("only node a impacts topologyKeyToMinPodsMap on zone and node", pod({"foo": ""}, *ZONE_NODE),
     foo("p-a1", "node-a"), [foo("p-x1", "node-x")], 0, [zn("node-a", "zone1"), zn("node-x", "zone2")],
     [ZONE_C + ((("zone1", 1), ("zone2", 1)), {"zone1": 1, "zone2": 1}),
      NODE_C + ((("node-a", 1), ("node-x", 1)), {"node-a": 1, "node-x": 1})]),
    ("node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
     pod({"foo": ""}, *ZONE_NODE), foo("p-a1", "node-a"),
     [foo("p-b1", "node-b"), foo("p-b2", "node-b"), foo("p-x1", "node-x")], 0, ABX,
     [ZONE_C + ((("zone2", 1), ("zone1", 3)), {"zone1": 3, "zone2": 1}),
      NODE_C + ((("node-a", 1), ("node-x", 1)), {"node-a": 1, "node-b": 2, "node-x": 1})]),
    ("Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
     pod({"foo": "", "bar": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, BAR)), foo("p-a1", "node-a"),
     [ep("p-b1", "node-b", foo="", bar=""), ep("p-x1", "node-x", foo="", bar=""),
      ep("p-x2", "node-x", bar="")], 0, ABX,
     [ZONE_C + ((("zone2", 1), ("zone1", 2)), {"zone1": 2, "zone2": 1}),
      BAR_NODE_C + ((("node-a", 0), ("node-b", 1)), {"node-a": 0, "node-b": 1, "node-x": 2})]),
    ("Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",
     pod({"foo": "", "bar": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, BAR)),
     ep("p-a1", "node-a", foo="", bar=""),
     [ep("p-b1", "node-b", bar=""), ep("p-x1", "node-x", foo="", bar=""), ep("p-x2", "node-x", bar="")],
     0, ABX,
     [ZONE_C + ((("zone1", 1), ("zone2", 1)), {"zone1": 1, "zone2": 1}),
      BAR_NODE_C + ((("node-a", 1), ("node-b", 1)), {"node-a": 1, "node-b": 1, "node-x": 2})]),
    ("add a pod when scheduling node affinity unmatched pod",
     pod({"foo": ""}, (1, "zone", DNS, FOO), affinity=not_in("foo", "bar")),
     ep("p-a1", "node-a", foo="", zone="zone1"),
     [ep("p-a2", "node-a", foo="", zone="zone1"), ep("p-b1", "node-b", foo="", zone="zone2")], 0, AFF_NODES,
     [ZONE_C + ((("zone2", 1), ("", MAX_INT32)), {"zone2": 1})]),
    ("add a pod when scheduling node affinity matched pod", pod({"foo": ""}, (1, "zone", DNS, FOO)),
     ep("p-b1", "node-b", foo="", zone="zone2"),
     [ep("p-a1", "node-a", foo="", zone="zone1"), ep("p-b2", "node-b", foo="", zone="zone2")], 1, AFF_NODES,
     [ZONE_C + ((("zone1", 1), ("zone2", 2)), {"zone1": 1, "zone2": 2})]),
    ("add a label selector not matched pod", pod({"foo": ""}, (1, "zone", DNS, FOO)),
     ep("p-b1", "node-b", zone="zone2"),
     [ep("p-a1", "node-a", foo="", zone="zone1"), ep("p-b2", "node-b", foo="", zone="zone2")], 1, AFF_NODES,
     [ZONE_C + ((("zone1", 1), ("zone2", 1)), {"zone1": 1, "zone2": 1})]),
    ("add a pod when scheduling taint untolerated pod (taints ignored by default)",
     pod({"foo": ""}, (1, "zone", DNS, FOO)), ep("p-b1", "node-b", foo="", zone="zone2"),
     [ep("p-a1", "node-a", foo="", zone="zone1"), ep("p-b2", "node-b", foo="", zone="zone2")], 1, TAINT_NODES,
     [ZONE_C + ((("zone1", 1), ("zone2", 2)), {"zone2": 2, "zone1": 1})]),
    ("add a pod when scheduling taint tolerated pod",
     pod({"foo": ""}, (1, "zone", DNS, FOO), tolerate=True), ep("p-b1", "node-b", foo="", zone="zone2"),
     [ep("p-a1", "node-a", foo="", zone="zone1"), ep("p-b2", "node-b", foo="", zone="zone2")], 1, TAINT_NODES,
     [ZONE_C + ((("zone1", 1), ("zone2", 2)), {"zone2": 2, "zone1": 1})]),
]


def _want_state(want: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [(w[0], w[1], w[2], w[3], w[4], w[5], w[6]) for w in want]


@pytest.mark.parametrize("preemptor, added, existing, node_idx, nodes, want",
                         [c[1:] for c in ADD_POD], ids=[c[0] for c in ADD_POD])
def test_pre_filter_state_add_pod(preemptor: Pod, added: Pod, existing: list[Pod], node_idx: int,
                                  nodes: list[Node], want: Any) -> None:
    handle = handle_for(existing, nodes)
    pl = plugin(handle)
    state = CycleState()
    assert pl.pre_filter(state, preemptor, handle.snapshot.node_infos)[1].success
    before = state.read(PRE_FILTER_KEY)
    snapshot_before = ([p.as_tuple() for p in before.critical_paths],
                       [dict(m) for m in before.tp_value_to_match_num])
    cloned = state.clone()
    ni = handle.snapshot.get(nodes[node_idx].name)
    assert pl.add_pod(cloned, preemptor, added, ni).success
    check_state(pl, cloned, _want_state(want))
    # AddPod works on the clone only.
    assert ([p.as_tuple() for p in before.critical_paths],
            [dict(m) for m in before.tp_value_to_match_num]) == snapshot_before
    check_forms_agree(pl, cloned, preemptor, handle)


FOUR_FOO = [foo("p-a1", "node-a"), foo("p-b1", "node-b"), foo("p-x1", "node-x"), foo("p-y1", "node-y")]

# (id, preemptor, nodes, existing, deleted index, deleted pod, node index, want)
REMOVE_POD = [
    ("one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged", pod({"foo": ""}, (1, "zone", DNS, FOO)),
     ABX, [foo("p-a1", "node-a"), foo("p-b1", "node-b"), foo("p-x1", "node-x")], 0, None, 0,
     [ZONE_C + ((("zone1", 1), ("zone2", 1)), {"zone1": 1, "zone2": 1})]),
    ("one spreadConstraint on node, topologyKeyToMinPodsMap changed", pod({"foo": ""}, (1, "zone", DNS, FOO)),
     four(), FOUR_FOO, 0, None, 0, [ZONE_C + ((("zone1", 1), ("zone2", 2)), {"zone1": 1, "zone2": 2})]),
    ("delete an irrelevant pod won't help", pod({"foo": ""}, (1, "zone", DNS, FOO)),
     four(), [ep("p-a0", "node-a", bar="")] + FOUR_FOO, 0, None, 0,
     [ZONE_C + ((("zone1", 2), ("zone2", 2)), {"zone1": 2, "zone2": 2})]),
    ("delete a non-existing pod won't help", pod({"foo": ""}, (1, "zone", DNS, FOO)),
     four(), FOUR_FOO, -1, ep("p-a0", "node-a", bar=""), 0,
     [ZONE_C + ((("zone1", 2), ("zone2", 2)), {"zone1": 2, "zone2": 2})]),
    ("two spreadConstraints", pod({"foo": ""}, *ZONE_NODE), ABX,
     [foo("p-a1", "node-a"), foo("p-a2", "node-a"), foo("p-b1", "node-b"), foo("p-x1", "node-x"),
      foo("p-x2", "node-x")], 3, None, 2,
     [ZONE_C + ((("zone2", 1), ("zone1", 3)), {"zone1": 3, "zone2": 1}),
      NODE_C + ((("node-b", 1), ("node-x", 1)), {"node-a": 2, "node-b": 1, "node-x": 1})]),
    # Upstream leaves deletedPodIdx at 0 here, so the first existing pod is removed.
    ("remove a pod when scheduling node affinity unmatched pod",
     pod({"foo": ""}, (1, "zone", DNS, FOO), affinity=not_in("foo", "bar")), AFF_NODES,
     [ep("p-a2", "node-a", foo="", zone="zone1"), ep("p-b1", "node-b", foo="", zone="zone2")], 0,
     ep("p-a1", "node-a", foo="", zone="zone1"), 0,
     [ZONE_C + ((("zone2", 1), ("", MAX_INT32)), {"zone2": 1})]),
    ("remove a pod when scheduling node affinity matched pod", pod({"foo": ""}, (1, "zone", DNS, FOO)),
     AFF_NODES, [ep("p-a1", "node-a", foo="", zone="zone1"), ep("p-b2", "node-b", foo="", zone="zone2")], 0,
     ep("p-b1", "node-b", foo="", zone="zone2"), 1,
     [ZONE_C + ((("zone2", 0), ("zone1", 1)), {"zone2": 0, "zone1": 1})]),
]


@pytest.mark.parametrize("preemptor, nodes, existing, deleted_idx, deleted, node_idx, want",
                         [c[1:] for c in REMOVE_POD], ids=[c[0] for c in REMOVE_POD])
def test_pre_filter_state_remove_pod(preemptor: Pod, nodes: list[Node], existing: list[Pod],
                                     deleted_idx: int, deleted: Pod | None, node_idx: int,
                                     want: Any) -> None:
    handle = handle_for(existing, nodes)
    pl = plugin(handle)
    state = CycleState()
    assert pl.pre_filter(state, preemptor, handle.snapshot.node_infos)[1].success
    victim = existing[deleted_idx] if 0 <= deleted_idx < len(existing) else deleted
    assert victim is not None
    ni = handle.snapshot.get(nodes[node_idx].name)
    assert pl.remove_pod(state, preemptor, victim, ni).success
    check_state(pl, state, _want_state(want))
    check_forms_agree(pl, state, preemptor, handle)


def run_filter(p: Pod, nodes: list[Node], existing: list[Pod], want: dict[str, Code]) -> None:
    handle = handle_for(existing, nodes)
    pl = plugin(handle)
    state = CycleState()
    assert pl.pre_filter(state, p, handle.snapshot.node_infos)[1].success
    table = handle.snapshot.table
    ok = pl.filter_nodes(state, p, table, table.all)
    got_batch = {table.names[i]: bool(ok[i]) for i in range(table.size)}
    reasons = {S: (), U: (ERR_REASON_CONSTRAINTS_NOT_MATCH,), UU: (ERR_REASON_NODE_LABEL_NOT_MATCH,)}
    for ni in handle.snapshot.node_infos:
        st = pl.filter(state, p, ni)
        assert (st.code, st.reasons) == (want[ni.name], reasons[want[ni.name]]), ni.name
    assert got_batch == {n: c == S for n, c in want.items()}


def codes(*cs: Code, names: tuple[str, ...] = ("node-a", "node-b", "node-x", "node-y")) -> dict[str, Code]:
    return dict(zip(names, cs))


ABC = ("node-a", "node-b", "node-c")
SIX_FOO = [foo("p-a1", "node-a"), foo("p-a2", "node-a"), foo("p-b1", "node-b"), foo("p-y1", "node-y"),
           foo("p-y2", "node-y"), foo("p-y3", "node-y")]
NODE_ONLY = [node(n, {"node": n}) for n in ABC]
TWO_TWO_ONE = [foo("p-a1", "node-a"), foo("p-a2", "node-a"), foo("p-b1", "node-b"), foo("p-b2", "node-b"),
               foo("p-c1", "node-c")]
FOOED = [node("node-a", {"node": "node-a", "foo": ""}), node("node-b", {"node": "node-b", "foo": ""}),
         node("node-x", {"node": "node-x", "foo": ""})]
ONE_ONE_ONE = [foo("p-b1", "node-a"), foo("p-b2", "node-b"), foo("p-y1", "node-y")]

# (id, pod, nodes, existing, want codes)
SINGLE_CONSTRAINT = [
    ("no existing pods", pod({"foo": ""}, (1, "zone", DNS, FOO)), four(), [], codes(S, S, S, S)),
    ("no existing pods, incoming pod doesn't match itself", pod({"foo": ""}, (1, "zone", DNS, BAR)),
     four(), [], codes(S, S, S, S)),
    ("existing pods in a different namespace do not count", pod({"foo": ""}, (1, "zone", DNS, FOO)), four(),
     [foo("p-a1", "node-a", "ns1"), foo("p-b1", "node-a", "ns2"), foo("p-x1", "node-x"), foo("p-y1", "node-y")],
     codes(S, S, U, U)),
    ("existing pods do not match null selector", pod({"foo": ""}, (1, "zone", DNS, None)), four(),
     [foo("p-x1", "node-x"), foo("p-y1", "node-y")], codes(S, S, S, S)),
    ("pods spread across zones as 3/3, all nodes fit", pod({"foo": ""}, (1, "zone", DNS, FOO)), four(),
     SIX_FOO, codes(S, S, S, S)),
    ("pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
     pod({"foo": ""}, (1, "zone", DNS, FOO)),
     [zn("node-a", "zone1"), node("node-b", {"zon": "zone1", "node": "node-b"}), zn("node-x", "zone2"),
      zn("node-y", "zone2")], [foo("p-a1", "node-a"), foo("p-b1", "node-b"), foo("p-x1", "node-x"),
                               foo("p-y1", "node-y")], codes(S, UU, U, U)),
    ("pod cannot be scheduled as all nodes don't have label 'rack'", pod({"foo": ""}, (1, "rack", DNS, FOO)),
     [zn("node-a", "zone1"), zn("node-x", "zone2")], [], codes(UU, UU, names=("node-a", "node-x"))),
    ("pods spread across nodes as 2/1/0/3, only node-x fits", pod({"foo": ""}, (1, "node", DNS, FOO)),
     four(), SIX_FOO, codes(U, U, S, U)),
    ("pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
     pod({"foo": ""}, (2, "node", DNS, FOO)), four(), SIX_FOO, codes(U, S, S, U)),
    ("pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
     pod({"bar": ""}, (1, "node", DNS, FOO)), four(), SIX_FOO, codes(U, S, S, U)),
    ("incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
     pod({"foo": ""}, (1, "node", DNS, FOO), affinity=in_("node", "node-a", "node-y")), four(), SIX_FOO,
     codes(S, S, S, U)),
    ("terminating Pods should be excluded", pod({"foo": ""}, (1, "node", DNS, FOO)),
     [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"})],
     [ep("p-a", "node-a", terminating=True, foo=""), foo("p-b", "node-b")], codes(S, U)),
    ("incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
     pod({"foo": ""}, (1, "zone", DNS, FOO), affinity=not_in("node", "node-b")), four(),
     [foo("p-b1", "node-b"), foo("p-b2", "node-b"), foo("p-y1", "node-y")], codes(S, S, U, U)),
    ("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
     "then the third node fits", pod({"foo": ""}, (2, "node", DNS, FOO, {"minDomains": 4})), NODE_ONLY,
     TWO_TWO_ONE, codes(U, U, S, names=ABC)),
    ("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
     "then the all nodes fit", pod({"foo": ""}, (2, "node", DNS, FOO, {"minDomains": 2})), NODE_ONLY,
     TWO_TWO_ONE, codes(S, S, S, names=ABC)),
    ("pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
     "then the third and fourth nodes fit", pod({"foo": ""}, (2, "zone", DNS, FOO, {"minDomains": 3})),
     four(), ONE_ONE_ONE, codes(U, U, S, S)),
    ("pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, "
     "then the all nodes fit", pod({"foo": ""}, (2, "zone", DNS, FOO, {"minDomains": 1})),
     four(), ONE_ONE_ONE, codes(S, S, S, S)),
    ("NodeAffinityPolicy honored with labelSelectors",
     pod({"foo": ""}, (1, "node", DNS, FOO), node_selector={"foo": ""}),
     FOOED + [node("node-y", {"node": "node-y"})], ONE_ONE_ONE, codes(U, U, S, S)),
    ("NodeAffinityPolicy ignored with labelSelectors",
     pod({"foo": ""}, (1, "node", DNS, FOO, {"nodeAffinityPolicy": I}), node_selector={"foo": ""}),
     FOOED + [node("node-y", {"node": "node-y"})], ONE_ONE_ONE, codes(U, U, S, U)),
    ("NodeAffinityPolicy honored with nodeAffinity",
     pod({"foo": ""}, (1, "node", DNS, FOO), affinity=in_("foo", "")),
     FOOED + [node("node-y", {"node": "node-y"})], ONE_ONE_ONE, codes(U, U, S, S)),
    ("NodeAffinityPolicy ignored with nodeAffinity",
     pod({"foo": ""}, (1, "node", DNS, FOO, {"nodeAffinityPolicy": I}), affinity=in_("foo", "")),
     FOOED + [node("node-y", {"node": "node-y"})], ONE_ONE_ONE, codes(U, U, S, U)),
    ("NodeTaintsPolicy honored", pod({"foo": ""}, (1, "node", DNS, FOO, {"nodeTaintsPolicy": H})),
     FOOED + [node("node-y", {"node": "node-y"}, tainted=True)], ONE_ONE_ONE, codes(U, U, S, S)),
    ("NodeTaintsPolicy ignored", pod({"foo": ""}, (1, "node", DNS, FOO)),
     FOOED + [node("node-y", {"node": "node-y"}, tainted=True)], ONE_ONE_ONE, codes(U, U, S, U)),
]


@pytest.mark.parametrize("p, nodes, existing, want", [c[1:] for c in SINGLE_CONSTRAINT],
                         ids=[c[0] for c in SINGLE_CONSTRAINT])
def test_single_constraint(p: Pod, nodes: list[Node], existing: list[Pod], want: dict[str, Code]) -> None:
    run_filter(p, nodes, existing, want)


FB = {"foo": "", "bar": ""}
INCL_EXISTING = [foo("p-a1", "node-a"), foo("p-b1", "node-b"), foo("p-y1", "node-y")]

MULTIPLE_CONSTRAINTS = [
    ("two Constraints on zone and node, spreads = [3/3, 2/1/0/3]", pod({"foo": ""}, *ZONE_NODE), four(),
     SIX_FOO, codes(U, U, S, U)),
    ("two Constraints on zone and node, spreads = [3/4, 2/1/0/4]", pod({"foo": ""}, *ZONE_NODE), four(),
     SIX_FOO + [foo("p-y4", "node-y")], codes(U, U, U, U)),
    ("Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
     pod(FB, (1, "zone", DNS, FOO), (1, "node", DNS, BAR)), four(),
     [foo("p-a1", "node-a"), ep("p-y1", "node-y", bar="")], codes(U, U, S, U)),
    ("Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
     pod(FB, (1, "zone", DNS, FOO), (1, "node", DNS, BAR)), four(),
     [foo("p-a1", "node-a"), ep("p-x1", "node-x", bar=""), ep("p-y1", "node-y", bar="")], codes(U, U, U, U)),
    ("Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
     pod(FB, (1, "zone", DNS, FOO), (1, "node", DNS, BAR)), four(),
     [foo("p-a1", "node-a"), ep("p-a2", "node-a", **FB), foo("p-y1", "node-y"), ep("p-y2", "node-y", **FB),
      foo("p-y3", "node-y")], codes(U, S, U, U)),
    ("Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
     pod({"bar": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, BAR)), four(),
     [foo("p-a1", "node-a"), ep("p-x1", "node-x", bar=""), ep("p-y1", "node-y", bar="")], codes(S, S, U, U)),
    ("two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
     pod({"foo": ""}, *ZONE_NODE),
     [zn("node-a", "zone1"), zn("node-b", "zone1"), node("node-x", {"zone": "zone2"}), zn("node-y", "zone2")],
     [foo("p-a1", "node-a"), foo("p-y3", "node-y")], codes(U, S, UU, U)),
    ("two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
     pod({"foo": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, FOO, {"nodeAffinityPolicy": I}),
         node_selector={"foo": ""}),
     [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""), zn("node-x", "zone2", foo=""),
      zn("node-y", "zone2")], INCL_EXISTING, codes(U, U, S, U)),
    ("two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
     pod({"foo": ""}, (1, "zone", DNS, FOO, {"nodeTaintsPolicy": H}), (1, "node", DNS, FOO)),
     [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""), zn("node-x", "zone2", foo=""),
      zn("node-y", "zone2", tainted=True)], INCL_EXISTING, codes(U, U, S, U)),
    ("two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
     pod({"foo": ""}, *ZONE_NODE, node_selector={"foo": ""}),
     [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo=""),
      zn("node-y", "zone2", tainted=True, foo="")], INCL_EXISTING, codes(U, S, S, U)),
    ("two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
     pod({"foo": ""}, (1, "zone", DNS, FOO, {"nodeTaintsPolicy": H}),
         (1, "node", DNS, FOO, {"nodeAffinityPolicy": I}), node_selector={"foo": ""}),
     [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo=""),
      zn("node-y", "zone2", tainted=True, foo="")], INCL_EXISTING, codes(U, U, S, U)),
    ("two Constraints on zone, spreads = [3/3, 2/1]", pod(FB, (1, "zone", DNS, BAR), (1, "zone", DNS, FOO)),
     four(), [ep("p-a1", "node-a", **FB), foo("p-a2", "node-a"), ep("p-b1", "node-b", **FB),
              foo("p-y1", "node-y"), ep("p-y2", "node-y", **FB), foo("p-y3", "node-y")], codes(U, U, S, S)),
    ("two Constraints on zone, spreads = [3/4, 2/1]", pod(FB, (1, "zone", DNS, BAR), (1, "zone", DNS, FOO)),
     four(), [ep("p-a1", "node-a", **FB), foo("p-a2", "node-a"), ep("p-b1", "node-b", **FB),
              foo("p-y1", "node-y"), ep("p-y2", "node-y", **FB), foo("p-y3", "node-y"), foo("p-y4", "node-y")],
     codes(U, U, U, U)),
]


@pytest.mark.parametrize("p, nodes, existing, want", [c[1:] for c in MULTIPLE_CONSTRAINTS],
                         ids=[c[0] for c in MULTIPLE_CONSTRAINTS])
def test_multiple_constraints(p: Pod, nodes: list[Node], existing: list[Pod], want: dict[str, Code]) -> None:
    run_filter(p, nodes, existing, want)


def test_filter_without_pre_filter_is_an_error() -> None:
    """Upstream TestPreFilterDisabled: Filter without PreFilter state is an Error."""
    handle = handle_for([], [zn("node-a", "zone1")])
    pl = plugin(handle)
    st = pl.filter(CycleState(), pod({}), handle.snapshot.node_infos[0])
    assert st.code == Code.Error
    assert st.reasons == ('reading "PreFilterPodTopologySpread" from cycleState: not found',)


# -- args (validation_pluginargs.go ValidatePodTopologySpreadArgs, v1 defaults) -------------
def test_args_default_to_system() -> None:
    args = PodTopologySpread.parse_args(None, "args")
    assert args == PodTopologySpreadArgs()
    assert PodTopologySpread.parse_args({}, "args").defaulting_type == "System"
    assert [(c.topology_key, c.max_skew, c.when_unsatisfiable) for c in SYSTEM_DEFAULT_CONSTRAINTS] == [
        ("kubernetes.io/hostname", 3, SA), ("topology.kubernetes.io/zone", 5, SA)]


def test_args_list() -> None:
    args = PodTopologySpread.parse_args(
        {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": DNS, "minDomains": 2}]}, "args")
    assert args.default_constraints == (DefaultConstraint(max_skew=1, topology_key="node",
                                                          when_unsatisfiable=DNS, min_domains=2),)


def _c(**kw: Any) -> dict[str, Any]:
    return {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": DNS, **kw}


ARGS_ERRORS = [
    ("bad defaulting type", {"defaultingType": "Foo"}, "args.defaultingType",
     'Unsupported value: "Foo": supported values: "System", "List"'),
    ("system with constraints", {"defaultConstraints": [_c()]}, "args.defaultingType",
     'Invalid value: "System": when .defaultConstraints are not empty'),
    ("maxSkew", {"defaultingType": "List", "defaultConstraints": [_c(maxSkew=0)]},
     "args.defaultConstraints[0].maxSkew", "Invalid value: 0: not in valid range (0, inf)"),
    ("empty topologyKey", {"defaultingType": "List", "defaultConstraints": [_c(topologyKey="")]},
     "args.defaultConstraints[0].topologyKey", "Required value: can not be empty"),
    ("bad topologyKey", {"defaultingType": "List", "defaultConstraints": [_c(topologyKey="-node")]},
     "args.defaultConstraints[0].topologyKey",
     "Invalid value: \"-node\": name part must consist of alphanumeric characters, '-', '_' or '.', and "
     "must start and end with an alphanumeric character (e.g. 'MyName' or 'my.name' or '123-abc', regex "
     "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
    ("empty whenUnsatisfiable", {"defaultingType": "List", "defaultConstraints": [_c(whenUnsatisfiable="")]},
     "args.defaultConstraints[0].whenUnsatisfiable", "Required value: can not be empty"),
    ("bad whenUnsatisfiable", {"defaultingType": "List", "defaultConstraints": [_c(whenUnsatisfiable="No")]},
     "args.defaultConstraints[0].whenUnsatisfiable",
     'Unsupported value: "No": supported values: "DoNotSchedule", "ScheduleAnyway"'),
    ("selector", {"defaultingType": "List", "defaultConstraints": [_c(labelSelector={})]},
     "args.defaultConstraints[0].labelSelector",
     "Forbidden: constraint must not define a selector, as they deduced for each pod"),
    ("repeated", {"defaultingType": "List", "defaultConstraints": [_c(), _c(maxSkew=2)]},
     "args.defaultConstraints[1]", 'Duplicate value: "{node, DoNotSchedule}"'),
]


@pytest.mark.parametrize("raw, field, message", [c[1:] for c in ARGS_ERRORS], ids=[c[0] for c in ARGS_ERRORS])
def test_args_validation(raw: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ProfileError) as exc:
        PodTopologySpread.parse_args(raw, "args")
    assert (exc.value.field, exc.value.message) == (field, message)


# -- cached match counts follow cluster changes --------------------------------------------
def test_match_counts_follow_pod_changes() -> None:
    """The per-node match counts are memoised by NodeInfo generation: adding, relabelling or
    removing a pod between cycles must show in the next PreFilter."""
    from kubesched.cache.cache import Cache
    from kubesched.cache.snapshot import Snapshot

    cache, snap = Cache(), Snapshot()
    for n in four():
        cache.add_node(n)
    cache.add_pod(foo("p-a1", "node-a"))
    cache.update_snapshot(snap)
    p = pod({"foo": ""}, (1, "zone", DNS, FOO))
    handle = handle_for([], [])
    handle.snapshot = snap
    pl = plugin(handle)

    def counts() -> dict[str, int]:
        state = CycleState()
        assert pl.pre_filter(state, p, snap.node_infos)[1].success
        return state.read(PRE_FILTER_KEY).tp_value_to_match_num[0]

    assert counts() == {"zone1": 1, "zone2": 0}
    cache.add_pod(foo("p-x1", "node-x"))
    cache.add_pod(foo("p-x2", "node-x"))
    cache.update_snapshot(snap)
    assert counts() == {"zone1": 1, "zone2": 2}
    old = foo("p-x2", "node-x")
    cache.update_pod(old, ep("p-x2", "node-x", bar=""))
    cache.update_snapshot(snap)
    assert counts() == {"zone1": 1, "zone2": 1}
    cache.remove_pod(foo("p-a1", "node-a"))
    cache.update_snapshot(snap)
    assert counts() == {"zone1": 0, "zone2": 1}


# -- queueing hints (upstream plugin_test.go) ----------------------------------------------
def bare(name: str, labels: dict[str, str]) -> Node:
    return node(name, labels)


ZONE_FOO = pod({"foo": ""}, (1, "zone", DNS, FOO))
ZONE_NODE_FOO = pod({"foo": ""}, *ZONE_NODE)
Q, SKIP_ = "Queue", "QueueSkip"
NODE_HINTS = [
    ("node updates label which matches topologyKey", ZONE_FOO, bare("node-a", {"zone": "zone1"}),
     bare("node-a", {"zone": "zone2"}), Q),
    ("node that doesn't match topologySpreadConstraints updates non-related label", ZONE_FOO,
     bare("node-a", {"foo": "bar1"}), bare("node-a", {"foo": "bar2"}), SKIP_),
    ("create node with non-related labels", ZONE_FOO, None, bare("node-a", {"foo": "bar"}), SKIP_),
    ("create node with related labels", ZONE_FOO, None, bare("node-a", {"zone": "zone1"}), Q),
    ("delete node with non-related labels", ZONE_FOO, bare("node-a", {"foo": "bar"}), None, SKIP_),
    ("delete node with related labels", ZONE_FOO, bare("node-a", {"zone": "zone1"}), None, Q),
    ("add node with related labels that only match one of topologySpreadConstraints", ZONE_NODE_FOO,
     None, bare("node-a", {"zone": "zone1"}), SKIP_),
    ("add node with related labels that match all topologySpreadConstraints", ZONE_NODE_FOO,
     None, bare("node-a", {"zone": "zone1", "node": "node1"}), Q),
    ("update node with related labels that only match one of topologySpreadConstraints", ZONE_NODE_FOO,
     bare("node-a", {"zone": "zone1"}), bare("node-a", {"zone": "zone1"}), SKIP_),
    ("update node with related labels that match all topologySpreadConstraints", ZONE_NODE_FOO,
     bare("node-a", {"zone": "zone1", "node": "node1"}), bare("node-a", {"zone": "zone1", "node": "node2"}), Q),
    ("update node taints when it matches the constraints", ZONE_FOO, bare("node-a", {"zone": "zone1"}),
     node("node-a", {"zone": "zone1"}, tainted=True), Q),
]


@pytest.mark.parametrize("p, old, new, want", [c[1:] for c in NODE_HINTS], ids=[c[0] for c in NODE_HINTS])
def test_hint_after_node_change(p: Pod, old: Node | None, new: Node | None, want: str) -> None:
    pl = plugin(handle_for([], []))
    assert pl.hint_after_node_change(p, old, new).name == want


def other(node_name: str = "", ns: str = "default", **labels: str) -> Pod:
    w = make_pod().namespace(ns).labels(labels)
    if node_name:
        w.node(node_name)
    return w.obj()


ZONE_BAR_NODE = pod({"foo": ""}, (1, "zone", DNS, FOO), (1, "node", DNS, BAR))
POD_HINTS = [
    ("add pod with labels match topologySpreadConstraints selector", ZONE_FOO, None,
     other("fake-node", foo=""), Q),
    ("add un-scheduled pod", ZONE_FOO, None, other(foo=""), SKIP_),
    ("update un-scheduled pod", ZONE_FOO, other(bar=""), other(foo=""), SKIP_),
    ("delete un-scheduled pod", ZONE_FOO, other(foo=""), None, SKIP_),
    ("add pod with different namespace", ZONE_FOO, None, other("fake-node", "fake-namespace", foo=""), SKIP_),
    ("add pod with labels don't match topologySpreadConstraints selector", ZONE_FOO, None,
     other("fake-node", bar=""), SKIP_),
    ("delete pod with labels that match topologySpreadConstraints selector", ZONE_FOO,
     other("fake-node", foo=""), None, Q),
    ("delete pod with labels that don't match topologySpreadConstraints selector", ZONE_FOO,
     other("fake-node", bar=""), None, SKIP_),
    ("update pod's non-related label", ZONE_FOO, other("fake-node", foo="", bar="bar1"),
     other("fake-node", foo="", bar="bar2"), SKIP_),
    ("add pod's label that matches topologySpreadConstraints selector", ZONE_FOO, other("fake-node"),
     other("fake-node", foo=""), Q),
    ("delete pod label that matches topologySpreadConstraints selector", ZONE_FOO,
     other("fake-node", foo=""), other("fake-node"), Q),
    ("change pod's label that matches topologySpreadConstraints selector", ZONE_FOO,
     other("fake-node", foo="foo1"), other("fake-node", foo="foo2"), SKIP_),
    ("add pod's label that matches topologySpreadConstraints selector with multi topologySpreadConstraints",
     ZONE_BAR_NODE, other("fake-node", foo=""), other("fake-node", foo="", bar="bar2"), Q),
    ("change pod's label that doesn't match topologySpreadConstraints selector with multi "
     "topologySpreadConstraints", ZONE_BAR_NODE, other("fake-node", foo=""), other("fake-node", foo="", baz=""),
     SKIP_),
    ("change pod's label that match topologySpreadConstraints selector with multi topologySpreadConstraints",
     ZONE_BAR_NODE, other("fake-node", foo="", bar=""), other("fake-node", foo="", bar="bar2"), SKIP_),
]


@pytest.mark.parametrize("p, old, new, want", [c[1:] for c in POD_HINTS], ids=[c[0] for c in POD_HINTS])
def test_hint_after_pod_change(p: Pod, old: Pod | None, new: Pod | None, want: str) -> None:
    pl = plugin(handle_for([], []))
    assert pl.hint_after_pod_change(p, old, new).name == want


def test_hint_queues_on_new_toleration_with_taints_policy_honor() -> None:
    p = pod({"foo": ""}, (1, "zone", DNS, FOO, {"nodeTaintsPolicy": H}))
    tolerating = pod({"foo": ""}, (1, "zone", DNS, FOO, {"nodeTaintsPolicy": H}), tolerate=True)
    pl = plugin(handle_for([], []))
    assert pl.hint_after_pod_change(p, p, tolerating).name == Q
    plain = pod({"foo": ""}, (1, "zone", DNS, FOO))
    assert pl.hint_after_pod_change(plain, plain, pod({"foo": ""}, (1, "zone", DNS, FOO), tolerate=True)
                                    ).name == SKIP_
