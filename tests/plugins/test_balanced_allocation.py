"""NodeResourcesBalancedAllocation: PreScore, Score (both forms) and args.

Cases ported from upstream's ``pkg/scheduler/framework/plugins/noderesources/
balanced_allocation_test.go`` (TestNodeResourcesBalancedAllocation, without the DRA cases)
and ``pkg/scheduler/apis/config/validation/validation_pluginargs_test.go``
(TestValidateNodeResourcesBalancedAllocationArgs).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.errors import ProfileError
from kubesched.framework.status import Code, Status
from kubesched.plugins.noderesources.args import (
    NodeResourcesBalancedAllocationArgs, ResourceSpec, parse_balanced_allocation_args,
)
from kubesched.plugins.noderesources.balanced_allocation import BalancedAllocation, BalancedScorer
from kubesched.plugins.noderesources.validation import validate_balanced_allocation_args
from kubesched.testing.handle import handle_for
from kubesched.testing.harness import score_all

GPU = "nvidia.com/gpu"
CPU_MEM = {"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}
CPU_ONLY = {"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"}
CPU_MEM_GPU = {"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", GPU: "3"}
DEFAULT = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
WITH_GPU = DEFAULT + (ResourceSpec(GPU, 1),)


def pod(containers: tuple[dict[str, str], ...] = (), name: str = "p", node: str = "") -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": "", "resources": {"requests": dict(r)}}
                                           for i, r in enumerate(containers)]}
    if node:
        spec["nodeName"] = node
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                          "spec": spec}, validate=False)


def make_node(name: str, milli_cpu: int, memory: int, extended: dict[str, int] | None = None) -> Node:
    """``makeNode`` of upstream's test_util.go."""
    r = {"cpu": f"{milli_cpu}m", "memory": str(memory), **{k: str(v) for k, v in (extended or {}).items()}}
    return Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                           "status": {"capacity": r, "allocatable": r}}, validate=False)


def run(p: Pod, existing: list[tuple[str, tuple[dict[str, str], ...]]], nodes: list[Node],
        resources: tuple[ResourceSpec, ...], pre_score: bool) -> list[dict[str, int] | Status]:
    """Per-node and batch scores (through PreScore when ``pre_score``, else Score alone)."""
    pods = [pod(c, name=f"e{i}", node=n) for i, (n, c) in enumerate(existing)]
    h = handle_for(pods, nodes)
    plugin = BalancedAllocation(NodeResourcesBalancedAllocationArgs(resources), h)
    if pre_score:
        return [score_all(plugin, p, h), score_all(plugin, p, h, batch=True)]
    table = h.snapshot.table
    batch = plugin.score_nodes(CycleState(), p, table, table.all)
    return [{ni.name: plugin.score(CycleState(), p, ni) for ni in h.snapshot.node_infos},
            {n: int(s) for n, s in zip(table.names, batch)}]


N46 = [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)]
N10_20 = [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)]
N10_50 = [make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)]
N6 = [make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)]
SCHEDULED = [("node1", CPU_ONLY), ("node2", CPU_MEM)]

CASES = [
    ("nothing scheduled, resources requested, differently sized nodes", pod(CPU_MEM), [], N46, DEFAULT, True,
     [87, 100]),
    ("resources requested, pods scheduled with resources", pod(CPU_MEM), SCHEDULED, N10_20, DEFAULT, True, [82, 95]),
    ("resources requested, pods scheduled with resources, differently sized nodes", pod(CPU_MEM), SCHEDULED,
     N10_50, DEFAULT, True, [82, 80]),
    ("requested resources at node capacity", pod(CPU_ONLY), SCHEDULED, N6, DEFAULT, True, [50, 75]),
    ("include scalar resource on a node for balanced resource allocation", pod(({"memory": "0", GPU: "1"},)),
     [("node2", CPU_MEM), ("node1", CPU_MEM_GPU)],
     [make_node("node1", 3500, 40000, {GPU: 8}), make_node("node2", 3500, 40000, {GPU: 8})], WITH_GPU, True,
     [70, 65]),
    ("node without the scalar resource should skip the scalar resource", pod(CPU_MEM), [],
     [make_node("node1", 3500, 40000, {GPU: 8}), make_node("node2", 3500, 40000)], WITH_GPU, True, [63, 63]),
    ("resources requested, pods scheduled with resources if PreScore not called", pod(CPU_MEM), SCHEDULED,
     N10_20, DEFAULT, False, [82, 95]),
]


@pytest.mark.parametrize("p,existing,nodes,resources,pre,want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_balanced_allocation(p: Pod, existing: list[Any], nodes: list[Node], resources: tuple[ResourceSpec, ...],
                             pre: bool, want: list[int]) -> None:
    expected = {n.name: s for n, s in zip(nodes, want)}
    assert run(p, existing, nodes, resources, pre) == [expected, expected]


@pytest.mark.parametrize("p", [pod(), pod(({},))], ids=["no containers", "container without requests"])
def test_best_effort_pod_skips_pre_score(p: Pod) -> None:
    """"nothing scheduled, nothing requested, skip in PreScore": PreScore returns Skip (real
    requests, not the non-zero defaults, decide); without PreScore, Score returns 0."""
    got = run(p, [], N46, DEFAULT, True)
    assert all(isinstance(g, Status) and g.code == Code.Skip for g in got)
    assert run(p, [], N46, DEFAULT, False) == [{"node1": 0, "node2": 0}] * 2


def test_std_of_three_fractions_in_float64() -> None:
    """The >2-resource branch: population std in upstream's order, truncated."""
    s = BalancedScorer()
    for req, alloc in [([3000, 5000, 4], [3500, 40000, 8]), ([3000, 5000, 1], [3500, 40000, 8]),
                       ([1, 2, 3, 4], [3, 3, 3, 3]), ([7, 0, 9], [7, 0, 10])]:
        many = s.score_many([np.array([r], np.int64) for r in req], [np.array([a], np.int64) for a in alloc])
        assert int(many[0]) == s.score_one(req, alloc)
    assert s.score_one([3000, 5000, 4], [3500, 40000, 8]) == 70
    assert s.score_one([3000, 5000, 1], [3500, 40000, 8]) == 65


VALIDATION = [
    ("valid config", DEFAULT, []),
    ("invalid config", (ResourceSpec("cpu", 2), ResourceSpec("memory", 1)),
     [("resources[0].weight", "Invalid value: 2: must be 1")]),
    ("repeated resources", (ResourceSpec("cpu", 1), ResourceSpec("cpu", 1)),
     [("resources[1].name", 'Duplicate value: "cpu"')]),
]


@pytest.mark.parametrize("resources,want", [c[1:] for c in VALIDATION], ids=[c[0] for c in VALIDATION])
def test_validate_args(resources: tuple[ResourceSpec, ...], want: list[tuple[str, str]]) -> None:
    args = NodeResourcesBalancedAllocationArgs(resources)
    assert validate_balanced_allocation_args(args) == want
    if want:
        with pytest.raises(ProfileError):
            BalancedAllocation(args, None)


def test_parse_args_defaults() -> None:
    """v1 SetDefaults_NodeResourcesBalancedAllocationArgs: cpu+memory; weight 0 -> 1."""
    assert parse_balanced_allocation_args(None, "") == NodeResourcesBalancedAllocationArgs(DEFAULT)
    assert parse_balanced_allocation_args({"resources": []}, "") == NodeResourcesBalancedAllocationArgs(DEFAULT)
    got = BalancedAllocation.parse_args({"resources": [{"name": "cpu"}, {"name": GPU, "weight": 0}]}, "")
    assert got == NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu", 1), ResourceSpec(GPU, 1)))
    with pytest.raises(ProfileError) as e:
        BalancedAllocation.parse_args({"resources": [{"name": "cpu", "weight": 2}]}, "pc.args")
    assert str(e.value) == "pc.args.resources[0].weight: Invalid value: 2: must be 1"
