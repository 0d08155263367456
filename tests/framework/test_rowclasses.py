"""Property: the resource plugins' batch results computed per distinct resource state
(``framework/rowclasses.py``) equal, row for row, the same plugins computed on every row and
their per-node forms (upstream ``noderesources/fit.go``, ``least_allocated.go``,
``most_allocated.go``, ``requested_to_capacity_ratio.go``, ``balanced_allocation.go`` run per
node), after any sequence of pods added, removed and resized on a table's rows; and the class
ids kept from the change log agree with a recount of the rows' states.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.objects import Node, Pod
from kubesched.framework import rowclasses
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.rowclasses import RowClasses, classes_of, state_of
from kubesched.framework.types import NodeInfo
from kubesched.plugins.noderesources.balanced_allocation import BalancedAllocation
from kubesched.plugins.noderesources.fit import Fit
from kubesched.testing.wrappers import make_node, make_pod

GPU = "example.com/gpu"
NODES = 64
STRATEGIES: list[dict[str, Any]] = [
    {},
    {"scoringStrategy": {"type": "MostAllocated", "resources": [
        {"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}, {"name": GPU, "weight": 3}]}},
    {"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": [
        {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                               {"utilization": 100, "score": 10}]}}},
]


def _node(i: int, kind: int) -> Node:
    w = make_node().name(f"n{i}")
    if kind == 0:
        w.capacity(cpu="4", memory="8Gi", pods="6")
    elif kind == 1:
        w.capacity(cpu="8", memory="16Gi", pods="110")
    else:
        w.res({"cpu": "2", "memory": "4Gi", "pods": "10", GPU: "2", "ephemeral-storage": "10Gi"})
    return w.obj()


def _pod(rng: random.Random, uid: int) -> Pod:
    req: dict[str, Any] = {}
    if rng.randrange(5):
        req["cpu"] = f"{rng.choice([100, 250, 500, 1500, 3000])}m"
    if rng.randrange(5):
        req["memory"] = rng.choice(["64Mi", "1Gi", "3Gi", "9Gi"])
    if not rng.randrange(4):
        req[GPU] = str(rng.randint(1, 2))
    if not rng.randrange(6):
        req["ephemeral-storage"] = "1Gi"
    w = make_pod().name(f"p{uid}").uid(f"p{uid}")
    if req:
        w.container(requests=req)
    return w.obj()


def _recount(rc: RowClasses, table: NodeTable) -> None:
    """Ids agree with the rows' states; ``live`` is the number of distinct ids in use."""
    states = {c: st for st, c in rc._index.items()}
    assert [states[c] for c in rc.ids.tolist()] == [state_of(ni) for ni in table.infos]
    assert rc.live == len(set(rc.ids.tolist()))
    cols = rc.columns(table)
    for i, ni in enumerate(table.infos):
        c = int(rc.ids[i])
        assert (cols.non0_cpu[c], cols.non0_mem[c], cols.pod_count[c]) == (ni.non0_cpu, ni.non0_mem, len(ni.pods))
        for name, col in cols.alloc.items():
            assert col[c] == table.alloc[name][i]
        for name, col in cols.req.items():
            assert col[c] == table.req[name][i]


def _results(fit: Fit, bal: BalancedAllocation, pod: Pod, table: NodeTable, idx: np.ndarray) -> list[list[int]]:
    cs = CycleState()
    fit.pre_filter(cs, pod, table.infos)
    fit.pre_score(cs, pod, table.infos)
    bal.pre_score(cs, pod, table.infos)
    out = [fit.filter_nodes(cs, pod, table, idx).tolist(), fit.score_nodes(cs, pod, table, idx).tolist()]
    if bal.pre_score(cs, pod, table.infos).success:
        out.append(bal.score_nodes(cs, pod, table, idx).tolist())
    return out


def _per_node(fit: Fit, bal: BalancedAllocation, pod: Pod, table: NodeTable, idx: np.ndarray) -> list[list[int]]:
    cs = CycleState()
    fit.pre_filter(cs, pod, table.infos)
    fit.pre_score(cs, pod, table.infos)
    infos = [table.infos[i] for i in idx.tolist()]
    out = [[fit.filter(cs, pod, ni).success for ni in infos], [fit.score(cs, pod, ni) for ni in infos]]
    if bal.pre_score(cs, pod, table.infos).success:
        out.append([bal.score(cs, pod, ni) for ni in infos])
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.lists(st.integers(0, 3), min_size=1, max_size=40),
       st.sampled_from(range(len(STRATEGIES))), st.booleans())
def test_per_class_results_equal_per_row_results(seed: int, ops: list[int], strategy: int,
                                                 rebuild_often: bool) -> None:
    rng = random.Random(seed)
    nodes = [_node(i, rng.randrange(3)) for i in range(NODES)]
    pods: list[list[Pod]] = [[] for _ in nodes]
    table = NodeTable([NodeInfo(n) for n in nodes])
    mp = pytest.MonkeyPatch()
    mp.setattr(rowclasses, "MIN_ROWS", 0)
    if rebuild_often:
        mp.setattr(rowclasses, "SLACK", 0)
    try:
        fit, bal = Fit(STRATEGIES[strategy], None), BalancedAllocation(None, None)
        uid = taken = 0
        for op in ops:
            row = rng.randrange(NODES)
            if op <= 1 or not pods[row]:  # a pod lands
                uid += 1
                pods[row].append(_pod(rng, uid))
            elif op == 2:  # a pod leaves
                pods[row].pop(rng.randrange(len(pods[row])))
            else:  # a pod is resized (same uid, new requests)
                k = rng.randrange(len(pods[row]))
                new = _pod(rng, 0)
                pods[row][k] = make_pod().name(pods[row][k].name).uid(pods[row][k].uid).container(
                    requests={n: str(v) for n, v in new.requests.items() if n != "pods"}).obj()
            table.update_row(row, NodeInfo(nodes[row], tuple(pods[row])))
            for idx in (table.all, np.flatnonzero(np.arange(NODES) % 3 != 1)):
                incoming = _pod(rng, 10_000)
                got = _results(fit, bal, incoming, table, idx)
                taken += 2 * classes_of(table).count <= idx.size  # else the rows themselves were used
                mp.setattr(rowclasses, "MIN_ROWS", 10**9)  # every row: the plugins' own batch form
                want = _results(fit, bal, incoming, table, idx)
                mp.setattr(rowclasses, "MIN_ROWS", 0)
                assert got == want
                assert got == _per_node(fit, bal, incoming, table, idx)
            _recount(classes_of(table), table)
            if rebuild_often:
                assert classes_of(table).count <= 2 * classes_of(table).live
        assert taken, "the class path was never taken"
    finally:
        mp.undo()


def test_class_path_needs_few_states_and_enough_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hand-counted: 64 nodes of one kind, empty, are one state; one pod on n0 makes two.
    With MIN_ROWS 0 the function runs once over the 2 classes; over 3 rows (2 x 2 > 3) it
    runs on the rows themselves."""
    monkeypatch.setattr(rowclasses, "MIN_ROWS", 0)
    nodes = [_node(i, 1) for i in range(NODES)]
    table = NodeTable([NodeInfo(n) for n in nodes])
    table.update_row(0, NodeInfo(nodes[0], (make_pod().name("a").uid("a").req(cpu="1").obj(),)))
    rc = RowClasses()
    seen: list[int] = []

    def fn(t: NodeTable, i: np.ndarray) -> np.ndarray:
        seen.append(i.size)
        return t.pod_count[i]

    assert rc.map(table, table.all, fn).tolist() == [1] + [0] * (NODES - 1)
    assert seen == [2] and rc.live == 2
    assert rc.map(table, np.array([0, 5, 7]), fn).tolist() == [1, 0, 0]
    assert seen == [2, 3]
