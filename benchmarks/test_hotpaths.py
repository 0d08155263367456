"""Micro-benchmarks of the scheduler's hot paths (pytest-benchmark; not part of ``make test``).

Run with ``make bench`` (``pytest benchmarks --benchmark-only``). The clusters are built
with the ``kubesched bench`` workloads (:mod:`kubesched.sim.workloads`), 1000 nodes with
1000 pods already scheduled through the real loop:

* one scheduling cycle's algorithm (snapshot update, filter, score, host selection; no
  binding, so it can be repeated on an unchanged cluster) for a ``basic`` and a
  ``spread`` pod;
* the snapshot update after one bind (the cache learns of one new pod on one node);
* one ``NodeTable`` row rewrite, with label and taint columns built.
"""

from __future__ import annotations

import dataclasses
import itertools
from functools import cache
from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.explanation.attempt import Attempt
from kubesched.sim.bench import Bench, BenchSpec, build_pods
from kubesched.sim.workloads import HOSTNAME_LABEL, WORKLOADS, ZONE_LABEL, CreatePods

NODES = 1000
INIT_PODS = 1000


@cache
def _bench(workload: str) -> Bench:
    bench = Bench(BenchSpec(workload=workload, nodes=NODES, init_pods=INIT_PODS, pods=0))
    bench.run()
    return bench


def _measured_op(workload: str) -> CreatePods:
    return next(op for op in WORKLOADS[workload].ops if isinstance(op, CreatePods) and op.collect_metrics)


@pytest.mark.parametrize("workload", ["basic", "spread"])
def test_scheduling_cycle_1000_nodes(benchmark: Any, workload: str) -> None:
    bench = _bench(workload)
    sched = bench.sim.sched
    pod = build_pods(_measured_op(workload), 1, "bench", first_seq=10**7)[0]
    fw = sched.profiles[pod.scheduler_name]

    def cycle() -> str | None:
        sched.cache.update_snapshot(sched.snapshot)
        return sched._schedule_pod(fw, CycleState(), pod, Attempt())

    assert benchmark(cycle) is not None


def test_snapshot_update_after_bind(benchmark: Any) -> None:
    bench = _bench("basic")
    cache, snap = bench.sim.sched.cache, bench.sim.sched.snapshot
    node_names = itertools.cycle(sorted(bench.sim.cluster.nodes))
    template = build_pods(_measured_op("basic"), 1, "bench")[0]
    seq = itertools.count(2 * 10**7)

    def bind_one() -> tuple[tuple[Any, ...], dict[str, Any]]:
        n = next(seq)
        pod = dataclasses.replace(template, uid=f"bench-bind-{n}", name=f"bind-{n}",
                                  node_name=next(node_names), extra={})
        cache.add_pod(pod)
        return (snap,), {}

    benchmark.pedantic(cache.update_snapshot, setup=bind_one, rounds=2000, iterations=1)


def test_nodetable_row_update(benchmark: Any) -> None:
    bench = _bench("spread")
    table = bench.sim.sched.snapshot.table
    table.label(ZONE_LABEL)
    table.label(HOSTNAME_LABEL)
    table.taints()
    rows = itertools.cycle(range(table.size))

    def update() -> None:
        i = next(rows)
        table.update_row(i, table.infos[i])

    benchmark(update)
