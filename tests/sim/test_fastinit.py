"""``kubesched bench --fast-init`` (``kubesched/sim/fastinit.py``): init pods are bound
without the scheduling loop, round-robin over the nodes in creation order where they fit,
and fill the cluster, the cache, the snapshot's NodeTable and its change log as a bind
does. Expected placements are worked out by hand in each test."""

from __future__ import annotations

import pytest

from kubesched.api.errors import KubeschedError
from kubesched.cli.main import main
from kubesched.sim.bench import FAST_INIT_THROUGH_LOOP, Bench, BenchSpec, build_pods
from kubesched.sim.fastinit import FastInit
from kubesched.sim.workloads import CreatePods
from kubesched.testing.wrappers import make_pod


def _init_op(bench: Bench) -> CreatePods:
    return next(op for op in bench.workload.ops if isinstance(op, CreatePods) and not op.collect_metrics)


def _per_node(bench: Bench) -> list[int]:
    return [len(bench.sim.cache.nodes[n].pods) for n in bench.sim.cluster.nodes]


def test_basic_init_pods_spread_round_robin_and_fill_the_table() -> None:
    """25 pods on 10 identical nodes: pod i on node i % 10, so nodes 0-4 hold 3, nodes 5-9 hold 2."""
    bench = Bench(BenchSpec(workload="basic", nodes=10, init_pods=25, pods=5))
    pods = build_pods(_init_op(bench), 25, "namespace-1")
    assert FastInit(bench.sim).place(pods) == 25
    assert _per_node(bench) == [3] * 5 + [2] * 5
    cluster = bench.sim.cluster
    assert all(cluster.pods[p.uid].node_name for p in pods), "stored bound in the cluster"
    table = bench.sim.sched.snapshot.table
    want = {n: (3 if i < 5 else 2) for i, n in enumerate(cluster.nodes)}
    assert {table.names[i]: int(c) for i, c in enumerate(table.pod_count)} == want
    # requests are summed as a bind does: 3 pods x 100m on the fuller nodes
    assert sorted(set(table.requested("cpu").tolist())) == [200, 300]
    # a second batch: the table now exists, so the rows are rewritten and logged as after binds
    version = table.version
    more = build_pods(_init_op(bench), 3, "namespace-1", first_seq=25)
    FastInit(bench.sim).place(more)  # a fresh round robin: nodes 0, 1, 2
    assert bench.sim.sched.snapshot.table is table
    assert table.changed_since(version).tolist() == sorted(table.index[n] for n in list(cluster.nodes)[:3])
    assert table.pod_count[table.index[list(cluster.nodes)[0]]] == 4


def test_run_binds_init_pods_directly_but_the_last_hundred() -> None:
    """130 init pods: 30 bound directly (3 per node), the last FAST_INIT_THROUGH_LOOP = 100
    through the loop (warming the plugins' caches as a loop init does), then 5 measured."""
    assert FAST_INIT_THROUGH_LOOP == 100
    bench = Bench(BenchSpec(workload="basic", nodes=10, init_pods=130, pods=5, fast_init=True))
    result = bench.run()
    assert result.scheduled == 5
    assert len(bench.algo.samples) == 100 + 5, "one scheduling cycle per pod through the loop"
    assert sum(_per_node(bench)) == 135
    assert sum(1 for p in bench.sim.cluster.pods.values() if p.node_name) == 135


def test_taints_init_pods_skip_nodes_they_do_not_tolerate() -> None:
    """Nodes 4 and 9 carry foo:NoSchedule; even pods do not tolerate it, odd pods do. Round robin:
    p0 n0, p1 n1, p2 n2, p3 n3, p4 (skips n4) n5, p5 n6, p6 n7, p7 n8, p8 (skips n9) n0, p9 n1."""
    bench = Bench(BenchSpec(workload="taints", nodes=10, init_pods=10, pods=2))
    FastInit(bench.sim).place(build_pods(_init_op(bench), 10, "namespace-1"))
    assert _per_node(bench) == [2, 2, 1, 1, 0, 1, 1, 1, 1, 0]


def test_a_pod_that_fits_nowhere_is_an_error_naming_it() -> None:
    """Default nodes have 4 cpu; a pod asks 100m: 40 pods per node, 80 on two; the 81st fits nowhere."""
    bench = Bench(BenchSpec(workload="basic", nodes=2, init_pods=81, pods=1))
    pods = build_pods(_init_op(bench), 81, "namespace-1")
    with pytest.raises(KubeschedError, match=rf"init pod namespace-1/{pods[80].name} fits on no node \(2 nodes\)"):
        FastInit(bench.sim).place(pods)
    assert _per_node(bench) == [40, 40]


def test_pods_with_placement_constraints_are_refused() -> None:
    bench = Bench(BenchSpec(workload="basic", nodes=2, init_pods=1, pods=1))
    pod = make_pod().name("sel").namespace("ns").req(cpu="100m").node_selector({"disk": "ssd"}).obj()
    with pytest.raises(KubeschedError, match=r"init pod ns/sel: spec.nodeSelector is set"):
        FastInit(bench.sim).place([pod])


def test_cli_fast_init(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--workload", "basic", "--nodes", "4", "--init-pods", "20", "--pods", "3",
                 "--fast-init", "-o", "json"]) == 0
    assert '"scheduled": 3' in capsys.readouterr().out
    assert main(["bench", "--workload", "mixed", "--fast-init"]) == 2
    assert "--fast-init goes with --workload" in capsys.readouterr().err
