"""Properties of the framework's incremental batch structures, against full recomputes:

- ``CacheEntry.nonzero`` (kubesched/framework/runtime/outcome.py) is the number of non-zero
  results after any sequence of partial and full refreshes;
- ``ScoreSum`` (kubesched/framework/runtime/scoresum.py) keeps, after any sequence of row
  changes, exactly ``const + sum(weight * column)`` and, as its best rows, exactly the rows where
  that sum is highest (ascending), among every row or among a filter's passing rows:
  what ``rows[totals == totals.max()]`` gives;
- with the built-in plugins, a run of identical pods is placed the same with and without
  ``explain`` (explain scores every plugin per cycle, without the sums, the constant
  normalisation or the best rows kept), and both runs place each pod on one of the nodes
  a full recount by this test finds best for LeastAllocated + BalancedAllocation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.decode import Manifest
from kubesched.config import load_config
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.runtime.outcome import CacheEntry
from kubesched.framework.runtime.scoresum import ScoreSums
from kubesched.framework.types import NodeInfo
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.driver import Simulation
from kubesched.testing.wrappers import make_node, make_pod


def _table(n: int) -> NodeTable:
    return NodeTable([NodeInfo(make_node().name(f"n{i}").capacity(cpu="4", memory="4Gi", pods="10").obj())
                      for i in range(n)])


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_cache_entry_counts_its_non_zero_results(data: Any) -> None:
    n = data.draw(st.integers(1, 12))
    table = _table(n)
    values = st.integers(0, 3)
    arr = np.array(data.draw(st.lists(values, min_size=n, max_size=n)), np.int64)
    entry = CacheEntry("k", table, arr)
    assert entry.nonzero == int(np.count_nonzero(arr))
    for _ in range(data.draw(st.integers(0, 20))):
        if data.draw(st.integers(0, 5)) == 0:
            entry.refresh(None, np.array(data.draw(st.lists(values, min_size=n, max_size=n)), np.int64))
        else:
            rows = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=n))), np.intp)
            entry.refresh(rows, np.array(data.draw(st.lists(values, min_size=rows.size, max_size=rows.size)),
                                         np.int64))
        assert entry.nonzero == int(np.count_nonzero(entry.arr))


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_score_sum_and_best_rows_follow_a_full_recompute(data: Any) -> None:
    n = data.draw(st.integers(1, 10))
    table = _table(n)
    scores = st.integers(0, 6)  # few values: ties are the common case, as on identical nodes
    weights = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    parts = [(CacheEntry(("p", j), table, np.array(data.draw(st.lists(scores, min_size=n, max_size=n)), np.int64)), w)
             for j, w in enumerate(weights)]
    const = data.draw(st.sampled_from([0, 0, 100, 300]))  # plugins giving every row one score
    # the rows a filter passed: kept (by identity) while its verdicts do not change
    within = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1))), np.intp)
    within.flags.writeable = False
    sums = ScoreSums()
    for _ in range(data.draw(st.integers(1, 25))):
        op = data.draw(st.sampled_from(["set", "set", "set", "flood", "new-table", "none"]))
        if op == "set":  # rows rewritten (a bind): the parts' caches recompute them
            for r in data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3)):
                table.update_row(r, table.infos[r])
                for entry, _ in parts:
                    entry.arr[r] = data.draw(scores)
        elif op == "flood":  # more changes than the change log keeps: a full recompute
            for _ in range(4 * n + 70):
                table.update_row(0, table.infos[0])
            for entry, _ in parts:
                entry.arr[:] = data.draw(st.lists(scores, min_size=n, max_size=n))
        elif op == "new-table":
            table = _table(n)
            parts = [(CacheEntry(e.key, table, e.arr.copy()), w) for e, w in parts]
        for entry, _ in parts:
            entry.version = table.version
        got = sums.get(table, parts, const)
        expected = const + sum(w * e.arr for e, w in parts)
        assert got.arr.tolist() == expected.tolist()
        assert got.best_rows().tolist() == np.flatnonzero(expected == expected.max()).tolist()
        sub = expected[within]
        assert got.best_rows(within).tolist() == within[sub == sub.max()].tolist()


def _run(nodes: list[Any], pods: list[Any], explain: bool, seed: int) -> list[tuple[str, str]]:
    sim = Simulation(Manifest(nodes=nodes, pods=pods), load_config(None, in_tree_registry()),
                     seed=seed, explain=explain)
    sim.run()
    return list(sim.cluster.bind_log)  # (pod key, node) in bind order


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_identical_pods_placed_as_a_full_recount_places_them(data: Any) -> None:
    n = data.draw(st.integers(2, 8))
    nodes = []
    for i in range(n):
        w = make_node().name(f"n{i}").capacity(cpu=str(data.draw(st.integers(1, 4))),
                                                  memory=f"{data.draw(st.integers(1, 4))}Gi", pods="20")
        if data.draw(st.integers(0, 3)) == 0:
            w.taint("spot", "", data.draw(st.sampled_from(["NoSchedule", "PreferNoSchedule"])))
        nodes.append(w.obj())
    cpu_m, mem = data.draw(st.integers(100, 900)), data.draw(st.integers(64, 900)) * 2**20
    tolerate = data.draw(st.booleans())
    pods = []
    for j in range(data.draw(st.integers(1, 14))):
        w = make_pod().name(f"p{j:02d}").req(cpu=f"{cpu_m}m", memory=str(mem))
        if tolerate:
            w.toleration(key="spot", operator="Exists")
        pods.append(w.obj())
    seed = data.draw(st.integers(0, 2**31 - 1))
    binds = _run(nodes, pods, False, seed)
    assert binds == _run(nodes, pods, True, seed)
    # this test's own recount, bind by bind: NodeResourcesFit and TaintToleration filter;
    # LeastAllocated + BalancedAllocation + 3 x TaintToleration (reverse-normalised count of
    # untolerated PreferNoSchedule taints) score; ImageLocality gives every node 0 (no images)
    used_cpu = {nd.name: 0 for nd in nodes}
    used_mem = {nd.name: 0 for nd in nodes}

    def feasible() -> list[Any]:
        hard = {nd.name for nd in nodes if not tolerate and any(t.effect == "NoSchedule" for t in nd.taints)}
        return [nd for nd in nodes if nd.name not in hard and used_cpu[nd.name] + cpu_m <= nd.allocatable["cpu"]
                and used_mem[nd.name] + mem <= nd.allocatable["memory"]]

    for _, node in binds:
        fits = feasible()
        prefer = {nd.name: 0 if tolerate else sum(t.effect == "PreferNoSchedule" for t in nd.taints) for nd in fits}
        most = max(prefer.values())
        score = {}
        for nd in fits:
            a_cpu, a_mem = nd.allocatable["cpu"], nd.allocatable["memory"]
            r_cpu, r_mem = used_cpu[nd.name] + cpu_m, used_mem[nd.name] + mem
            least = ((a_cpu - r_cpu) * 100 // a_cpu + (a_mem - r_mem) * 100 // a_mem) // 2
            balanced = int((1 - abs(min(r_cpu / a_cpu, 1.0) - min(r_mem / a_mem, 1.0)) / 2) * 100)
            taint = 100 - (prefer[nd.name] * 100 // most if most else 0)
            score[nd.name] = least + balanced + 3 * taint
        best = max(score.values())
        assert node in {k for k, v in score.items() if v == best}, (node, score)
        used_cpu[node] += cpu_m
        used_mem[node] += mem
    assert len(binds) == len(pods) or not feasible()  # the pods left over fit nowhere
