"""NodeResourcesFit scoring strategies.

Cases ported from upstream's ``pkg/scheduler/framework/plugins/noderesources/``
``least_allocated_test.go`` (TestLeastAllocatedScoringStrategy), ``most_allocated_test.go``
(TestMostAllocatedScoringStrategy), ``requested_to_capacity_ratio_test.go``
(TestRequestedToCapacityRatioScoringStrategy, TestBrokenLinearFunction,
TestResourceBinPackingSingleExtended, TestResourceBinPackingMultipleExtended) and
``fit_test.go`` (TestFitScore, without the DRA cases). Each case is checked in the per-node
and the batch form, with and without PreScore where upstream checks both.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.errors import ProfileError
from kubesched.plugins.noderesources.args import (
    NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs, ResourceSpec, ScoringStrategy,
    UtilizationShapePoint,
)
from kubesched.plugins.noderesources.balanced_allocation import BalancedAllocation
from kubesched.plugins.noderesources.fit import Fit
from kubesched.plugins.helper.shape import broken_linear, broken_linear_array
from kubesched.testing.handle import FakeHandle, handle_for
from kubesched.testing.harness import filter_all, score_all

EXT = "abc.com/xyz"
DEFAULT = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
EXTENDED_SET = DEFAULT + (ResourceSpec(EXT, 1),)


def pod(*reqs: dict[str, str], name: str = "p", node: str = "", sidecar: dict[str, str] | None = None) -> Pod:
    """``st.MakePod().Req(r1).Req(r2)...``: one container per request map (none when none)."""
    spec: dict[str, Any] = {"containers": [
        {"name": f"c{i}", "image": "", **({"resources": {"requests": dict(r)}} if r else {})}
        for i, r in enumerate(reqs)]}
    if sidecar is not None:
        spec["initContainers"] = [{"name": "sidecar", "image": "", "restartPolicy": "Always",
                                   "resources": {"requests": dict(sidecar)}}]
    if node:
        spec["nodeName"] = node
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                          "spec": spec}, validate=False)


def on(node: str, *reqs: dict[str, str], sidecar: dict[str, str] | None = None) -> Any:
    """An existing pod bound to ``node`` (named when the handle is built)."""
    return (node, reqs, sidecar)


def st_node(name: str, res: dict[str, str] | None = None) -> Node:
    """``st.MakeNode().Name(name).Capacity(res)``: pods default to 32."""
    r = {"pods": "32", **(res or {})}
    return Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                           "status": {"capacity": r, "allocatable": r}}, validate=False)


def make_node(name: str, milli_cpu: int, memory: int, extended: dict[str, int] | None = None) -> Node:
    """``makeNode`` of upstream's test_util.go."""
    r = {"cpu": f"{milli_cpu}m", "memory": str(memory), **{k: str(v) for k, v in (extended or {}).items()}}
    return Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                           "status": {"capacity": r, "allocatable": r}}, validate=False)


def cm(cpu: str, memory: str, **extra: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory, **extra}


def build(existing: list[Any], nodes: list[Node]) -> FakeHandle:
    pods = [pod(*reqs, name=f"e{i}", node=n, sidecar=sc) for i, (n, reqs, sc) in enumerate(existing)]
    return handle_for(pods, nodes)


def fit_args(kind: str, resources: tuple[ResourceSpec, ...],
             shape: tuple[tuple[int, int], ...] | None = None) -> NodeResourcesFitArgs:
    pts = None if shape is None else tuple(UtilizationShapePoint(u, s) for u, s in shape)
    return NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(kind, resources, pts))


def scores(args: NodeResourcesFitArgs, p: Pod, existing: list[Any], nodes: list[Node]) -> list[dict[str, int]]:
    """Scores in four ways: per-node and batch, each with PreScore and without it."""
    h = build(existing, nodes)
    plugin = Fit(args, h)
    out: list[dict[str, int]] = []
    for batch in (False, True):
        got = score_all(plugin, p, h, batch=batch)
        assert isinstance(got, dict), got
        out.append(got)
    table = h.snapshot.table
    out.append({ni.name: plugin.score(CycleState(), p, ni) for ni in h.snapshot.node_infos})
    batch_scores = plugin.score_nodes(CycleState(), p, table, table.all)
    out.append({n: int(s) for n, s in zip(table.names, batch_scores)})
    return out


def check(args: NodeResourcesFitArgs, p: Pod, existing: list[Any], nodes: list[Node], want: list[int]) -> None:
    expected = {n.name: s for n, s in zip(nodes, want)}
    assert scores(args, p, existing, nodes) == [expected] * 4


N4_10 = [st_node("node1", cm("4000", "10000")), st_node("node2", cm("4000", "10000"))]
N46 = [st_node("node1", cm("4000", "10000")), st_node("node2", cm("6000", "10000"))]
N10_20 = [st_node("node1", cm("10000", "20000")), st_node("node2", cm("10000", "20000"))]
REQ2 = pod(cm("1000", "2000"), cm("2000", "3000"))
EXT_NODES = [st_node("node1", cm("6000", "10000")), st_node("node2", cm("6000", "10000", **{EXT: "4"}))]
EXT_NODES2 = [st_node("node1", cm("6000", "10000", **{EXT: "4"})), st_node("node2", cm("6000", "10000", **{EXT: "10"}))]
WEIGHTED = (ResourceSpec("memory", 2), ResourceSpec("cpu", 1))
EXT_FIRST = (ResourceSpec(EXT, 2), ResourceSpec("cpu", 1), ResourceSpec("memory", 1))

LEAST = [
    ("nothing scheduled, nothing requested", pod(), [], N4_10, DEFAULT, [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes", REQ2, [], N46, DEFAULT, [37, 50]),
    ("no resources requested, pods scheduled", pod(), [on("node1"), on("node1"), on("node2"), on("node2")],
     N4_10, DEFAULT, [100, 100]),
    ("no resources requested, pods scheduled with resources", pod(),
     [on("node1", cm("3000", "0")), on("node1", cm("3000", "0")), on("node2", cm("3000", "0")),
      on("node2", cm("3000", "5000"))], N10_20, DEFAULT, [70, 57]),
    ("resources requested, pods scheduled with resources", REQ2,
     [on("node1", cm("3000", "0")), on("node2", cm("3000", "5000"))], N10_20, DEFAULT, [57, 45]),
    ("resources requested, pods scheduled with resources, differently sized nodes", REQ2,
     [on("node1", cm("3000", "0")), on("node2", cm("3000", "5000"))],
     [st_node("node1", cm("10000", "20000")), st_node("node2", cm("10000", "50000"))], DEFAULT, [57, 60]),
    ("requested resources exceed node capacity", pod(cm("3000", "0")),
     [on("node1", cm("3000", "0")), on("node2", cm("3000", "5000"))], N4_10, DEFAULT, [50, 25]),
    ("zero node resources, pods scheduled with resources", pod(),
     [on("node1", cm("3000", "0")), on("node2", cm("3000", "5000"))], [st_node("node1"), st_node("node2")],
     DEFAULT, [0, 0]),
    ("nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
     REQ2, [], N46, WEIGHTED, [41, 50]),
    ("bypass extended resource if the pod does not request", REQ2, [], EXT_NODES, EXTENDED_SET, [50, 50]),
    ("honor extended resource if the pod requests", pod(cm("3000", "5000", **{EXT: "2"})), [], EXT_NODES2,
     EXTENDED_SET, [50, 60]),
    ("if the node doesn't have a resource", pod(cm("3000", "4000")), [], EXT_NODES, EXT_FIRST, [55, 55]),
]


@pytest.mark.parametrize("p,existing,nodes,resources,want", [c[1:] for c in LEAST], ids=[c[0] for c in LEAST])
def test_least_allocated(p: Pod, existing: list[Any], nodes: list[Node], resources: tuple[ResourceSpec, ...],
                         want: list[int]) -> None:
    check(fit_args("LeastAllocated", resources), p, existing, nodes, want)


MOST = [
    ("nothing scheduled, nothing requested", pod(), [], N4_10, DEFAULT, [0, 0]),
    ("nothing scheduled, resources requested, differently sized nodes", REQ2, [], N46, DEFAULT, [62, 50]),
    ("no resources requested, pods scheduled with resources", pod(),
     [on("node1", cm("3000", "0")), on("node1", cm("3000", "0")), on("node2", cm("3000", "0")),
      on("node2", cm("3000", "5000"))], N10_20, DEFAULT, [30, 42]),
    ("resources requested, pods scheduled with resources", REQ2,
     [on("node1", cm("3000", "0")), on("node2", cm("3000", "5000"))], N10_20, DEFAULT, [42, 55]),
    ("resources requested equal node capacity", pod(cm("2000", "4000"), cm("3000", "5000")), [],
     [st_node("node1", cm("5000", "10000")), st_node("node2", cm("10000", "9000"))], DEFAULT, [95, 75]),
    ("nothing scheduled, resources requested, differently sized nodes, weighted", REQ2, [], N46, WEIGHTED,
     [58, 50]),
    ("no resources requested, pods scheduled, nonzero request for resource", pod({}),
     [on("node1", {}), on("node1", {})],
     [st_node("node1", cm("250m", "1000Mi")), st_node("node2", cm("250m", "1000Mi"))], DEFAULT, [80, 30]),
    ("bypass extended resource if the pod does not request", REQ2, [], EXT_NODES, EXTENDED_SET, [50, 50]),
    ("honor extended resource if the pod request", pod(cm("3000", "5000", **{EXT: "2"})), [], EXT_NODES2,
     EXTENDED_SET, [50, 40]),
    ("if the node doesn't have a resource", pod(cm("3000", "4000")), [], EXT_NODES, EXT_FIRST, [45, 45]),
]


@pytest.mark.parametrize("p,existing,nodes,resources,want", [c[1:] for c in MOST], ids=[c[0] for c in MOST])
def test_most_allocated(p: Pod, existing: list[Any], nodes: list[Node], resources: tuple[ResourceSpec, ...],
                        want: list[int]) -> None:
    check(fit_args("MostAllocated", resources), p, existing, nodes, want)


@pytest.mark.parametrize("kind", ["LeastAllocated", "MostAllocated"])
@pytest.mark.parametrize("resources,field", [
    ((ResourceSpec("memory", -1), ResourceSpec("cpu", 1)), "scoringStrategy.resources[0].weight"),
    ((ResourceSpec("memory", 1), ResourceSpec("cpu", 0)), "scoringStrategy.resources[1].weight"),
    ((ResourceSpec("memory", 1), ResourceSpec("cpu", 101)), "scoringStrategy.resources[1].weight"),
], ids=["resource with negative weight", "resource with zero weight", "resource weight larger than MaxNodeScore"])
def test_invalid_weights(kind: str, resources: tuple[ResourceSpec, ...], field: str) -> None:
    with pytest.raises(ProfileError) as e:
        Fit(fit_args(kind, resources), None)
    assert e.value.field == field


@pytest.mark.parametrize("kind", ["LeastAllocated", "MostAllocated"])
def test_resources_not_set(kind: str) -> None:
    """"Resources not set, pods scheduled with error": Score fails (an Error status)."""
    h = build([], N46)
    plugin = Fit(fit_args(kind, ()), h)
    with pytest.raises(ValueError, match="resources not found"):
        score_all(plugin, REQ2, h)
    with pytest.raises(ValueError, match="resources not found"):
        score_all(plugin, REQ2, h, batch=True)


SHAPE_DOWN = ((0, 10), (100, 0))
RTCR = [
    ("nothing scheduled, nothing requested (default - least requested nodes have priority)", pod(),
     [on("node1"), on("node1")], N4_10, [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have "
     "priority)", REQ2, [on("node1"), on("node1")], N46, [38, 50]),
    ("no resources requested, pods scheduled with resources (default - least requested nodes have priority)",
     pod(), [on("node1", cm("3000", "5000")), on("node2", cm("3000", "5000"))], N46, [38, 50]),
]


@pytest.mark.parametrize("p,existing,nodes,want", [c[1:] for c in RTCR], ids=[c[0] for c in RTCR])
def test_requested_to_capacity_ratio(p: Pod, existing: list[Any], nodes: list[Node], want: list[int]) -> None:
    check(fit_args("RequestedToCapacityRatio", DEFAULT, SHAPE_DOWN), p, existing, nodes, want)


BROKEN_LINEAR = [
    (((10, 1), (90, 9)), [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9),
                          (99, 9), (100, 9), (110, 9)]),
    (((0, 2), (40, 10), (100, 0)), [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)]),
    (((0, 2), (40, 2), (100, 2)), [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)]),
]


@pytest.mark.parametrize("shape,assertions", BROKEN_LINEAR, ids=[f"case_{i}" for i in range(len(BROKEN_LINEAR))])
def test_broken_linear_function(shape: tuple[tuple[int, int], ...], assertions: list[tuple[int, int]]) -> None:
    ps = np.array([p for p, _ in assertions], dtype=np.int64)
    want = [e for _, e in assertions]
    assert [broken_linear(shape, int(p)) for p in ps] == want
    assert broken_linear_array(shape, ps).tolist() == want


FOO, BAR = "intel.com/foo", "intel.com/bar"
BIN1 = [make_node("node1", 4000, 10000 * 1024 * 1024, {FOO: 8}), make_node("node2", 4000, 10000 * 1024 * 1024, {FOO: 4})]
SINGLE = [
    ("nothing scheduled, nothing requested", pod(), [], [0, 0]),
    ("resources requested, pods scheduled with less resources", pod({FOO: "2"}), [], [2, 5]),
    ("resources requested, pods scheduled with resources, on node with existing pod running ", pod({FOO: "2"}),
     [on("node2", {FOO: "2"})], [2, 10]),
    ("resources requested, pods scheduled with more resources", pod({FOO: "4"}), [], [5, 10]),
]


@pytest.mark.parametrize("p,existing,want", [c[1:] for c in SINGLE], ids=[c[0] for c in SINGLE])
def test_resource_bin_packing_single_extended(p: Pod, existing: list[Any], want: list[int]) -> None:
    """Upstream's cases with an unbound extra pod (``st.MakePod().Obj()``) have it unassigned: ignored."""
    check(fit_args("RequestedToCapacityRatio", (ResourceSpec(FOO, 1),), ((0, 0), (100, 1))), p, existing, BIN1, want)


BIN2 = [make_node("node1", 4000, 10000 * 1024 * 1024, {FOO: 8, BAR: 4}),
        make_node("node2", 4000, 10000 * 1024 * 1024, {FOO: 4, BAR: 8})]
MULTI = [
    ("nothing scheduled, nothing requested", pod(), [], [0, 0]),
    ("resources requested, pods scheduled with less resources", pod({FOO: "2", BAR: "2"}), [], [4, 3]),
    ("resources requested, pods scheduled with resources, on node with existing pod running ",
     pod({FOO: "2", BAR: "2"}), [on("node2", {FOO: "4", BAR: "2"})], [4, 7]),
    ("resources requested, pods scheduled with more resources", pod({FOO: "4", BAR: "2"}), [], [5, 5]),
]


@pytest.mark.parametrize("p,existing,want", [c[1:] for c in MULTI], ids=[c[0] for c in MULTI])
def test_resource_bin_packing_multiple_extended(p: Pod, existing: list[Any], want: list[int]) -> None:
    args = fit_args("RequestedToCapacityRatio", (ResourceSpec(FOO, 3), ResourceSpec(BAR, 5)), ((0, 0), (100, 1)))
    check(args, p, existing, BIN2, want)


FIT_SCORE_EXISTING = [on("node1", cm("2000", "4000")), on("node2", cm("1000", "2000"))]
SIDECAR_EXISTING = [on("node1", cm("1000", "2000"), sidecar=cm("1000", "2000")), on("node2", cm("1000", "2000"))]
N44 = N4_10
FIT_SCORE = [
    ("test case for ScoringStrategy RequestedToCapacityRatio case1", pod(cm("3000", "5000")), FIT_SCORE_EXISTING,
     N46, fit_args("RequestedToCapacityRatio", DEFAULT, ((0, 10), (100, 0))), [10, 32]),
    ("test case for ScoringStrategy RequestedToCapacityRatio case2", pod(cm("3000", "5000")), FIT_SCORE_EXISTING,
     N46, fit_args("RequestedToCapacityRatio", DEFAULT, ((0, 0), (100, 10))), [95, 68]),
    ("test case for ScoringStrategy MostAllocated", pod(cm("1000", "2000")), FIT_SCORE_EXISTING, N46,
     fit_args("MostAllocated", DEFAULT), [67, 36]),
    ("test case for ScoringStrategy LeastAllocated", pod(cm("1000", "2000")), FIT_SCORE_EXISTING, N46,
     fit_args("LeastAllocated", DEFAULT), [32, 63]),
    ("test case for ScoringStrategy MostAllocated with sidecar container", pod(cm("1000", "2000")),
     SIDECAR_EXISTING, N44, fit_args("MostAllocated", DEFAULT), [67, 45]),
    ("test case for ScoringStrategy LeastAllocated with sidecar container", pod(cm("1000", "2000")),
     SIDECAR_EXISTING, N44, fit_args("LeastAllocated", DEFAULT), [32, 55]),
]


@pytest.mark.parametrize("p,existing,nodes,args,want", [c[1:] for c in FIT_SCORE], ids=[c[0] for c in FIT_SCORE])
def test_fit_score(p: Pod, existing: list[Any], nodes: list[Node], args: NodeResourcesFitArgs,
                   want: list[int]) -> None:
    """Upstream runs each case with and without PreScore; ``scores`` does both."""
    check(args, p, existing, nodes, want)


def test_pre_score_never_skips() -> None:
    """Fit's PreScore always succeeds, even for a best-effort pod."""
    h = build([], N46)
    plugin = Fit(None, h)
    assert plugin.pre_score(CycleState(), pod(), h.snapshot.node_infos).success


# -- the batch form agrees with the per-node form (property) ----------------------------------
_NAMES = ["cpu", "memory", "ephemeral-storage", FOO, "hugepages-2Mi"]
_qty = hs.one_of(hs.none(), hs.integers(0, 12))


def _req(vals: list[int | None], milli: bool) -> dict[str, str]:
    return {n: (f"{v}m" if (milli and n == "cpu") else str(v)) for n, v in zip(_NAMES, vals) if v is not None}


_request = hs.lists(_qty, min_size=5, max_size=5)
_node_res = hs.lists(_qty, min_size=5, max_size=5)
_shape = hs.lists(hs.tuples(hs.integers(0, 100), hs.integers(0, 10)), min_size=1, max_size=4, unique_by=lambda t: t[0])


@settings(max_examples=60, deadline=None)
@given(nodes=hs.lists(hs.tuples(_node_res, hs.integers(0, 3)), min_size=1, max_size=5),
       existing=hs.lists(hs.tuples(hs.integers(0, 4), hs.lists(_request, max_size=2)), max_size=6),
       incoming=hs.lists(_request, max_size=2), shape=_shape,
       weights=hs.lists(hs.integers(1, 100), min_size=5, max_size=5))
def test_batch_agrees_with_per_node(nodes: list[Any], existing: list[Any], incoming: list[Any],
                                    shape: list[tuple[int, int]], weights: list[int]) -> None:
    node_objs = []
    for i, (res, pods_cap) in enumerate(nodes):
        r = {"pods": str(pods_cap), **_req(res, milli=True)}
        node_objs.append(Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
                                         "status": {"allocatable": r}}, validate=False))
    pods = [pod(*[_req(c, True) for c in cs], name=f"e{j}", node=f"n{k % len(nodes)}")
            for j, (k, cs) in enumerate(existing)]
    h = handle_for(pods, node_objs)
    p = pod(*[_req(c, True) for c in incoming])
    resources = tuple(ResourceSpec(n, w) for n, w in zip(_NAMES, weights))
    pts = tuple(sorted(shape))
    plugins: list[Any] = [Fit(fit_args(k, resources, pts if k == "RequestedToCapacityRatio" else None), h)
                          for k in ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")]
    plugins.append(BalancedAllocation(NodeResourcesBalancedAllocationArgs(tuple(ResourceSpec(n, 1) for n in _NAMES)), h))
    for plugin in plugins:
        assert score_all(plugin, p, h) == score_all(plugin, p, h, batch=True)
    fit = Fit(NodeResourcesFitArgs(ignored_resource_groups=("intel.com",)), h)
    for plugin in (plugins[0], fit):
        assert filter_all(plugin, p, h) == filter_all(plugin, p, h, batch=True)
