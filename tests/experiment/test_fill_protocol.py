"""The artifact's workload protocol (hkust-adsl/kubernetes-scheduler-simulator
``pkg/simulator/simulator.go``: ``SortClusterPods``, ``TunePodsByNodeTotalResource``,
``tuneUpPods`` / ``tuneDownPods``, the node-name prefixes of ``syncClusterResourceList``),
on traces whose outcome does not depend on which pod the seed draws.
"""

import random

import pytest

from kubesched.api.errors import KubeschedError
from kubesched.contrib.gpushare.model import GpuRequest
from kubesched.experiment.openb import TraceNode, TracePod
from kubesched.experiment.protocol import arrival


def nodes(*gpus: int) -> list[TraceNode]:
    return [TraceNode(f"n{i}", 8000, 1000, g, "V100" if g else "") for i, g in enumerate(gpus)]


def pods(n: int, milli: int, count: int = 1) -> list[TracePod]:
    return [TracePod(f"p{i}", 1000, 10, GpuRequest(milli, count)) for i in range(n)]


def test_top_up_appends_copies_until_the_next_would_overshoot() -> None:
    # 2 pods x 1000 on 4 GPUs at 1.0: 2000 -> copies to 3000, 4000; the next (5000) would overshoot
    arr = arrival(pods(2, 1000), nodes(2, 2), 1.0, random.Random(1))
    assert sorted(p.name for p in arr.pods[:2]) == ["p0", "p1"]
    assert [p.name.split("-tuned-")[1] for p in arr.pods[2:]] == ["0", "1"]
    assert arr.target_milli == 4000


def test_top_up_tests_the_copys_milli_per_gpu() -> None:
    # the artifact compares total + milli *per GPU* with the target: an 8-GPU copy passes at
    # 8000 + 1000 <= 12000 and takes the total to 16000; then 16000 + 1000 > 12000 stops
    arr = arrival(pods(1, 1000, 8), nodes(8, 4), 1.0, random.Random(3))
    assert [p.name for p in arr.pods] == ["p0", "p0-tuned-0"]


def test_thinning_removes_random_pods_until_within_target() -> None:
    arr = arrival(pods(6, 1000), nodes(2, 2), 1.0, random.Random(5))
    assert len(arr.pods) == 4
    assert len({p.name for p in arr.pods}) == 4


def test_shuffle_and_node_order_follow_the_seed() -> None:
    trace = pods(30, 500)
    cluster = nodes(*[1] * 40)  # 30 x 500 = 15000 = 0.375 x 40 GPUs: neither topped up nor thinned
    a, b = arrival(trace, cluster, 0.375, random.Random(42)), arrival(trace, cluster, 0.375, random.Random(42))
    c = arrival(trace, cluster, 0.375, random.Random(43))
    assert [p.name for p in a.pods] == [p.name for p in b.pods] != [p.name for p in c.pods]
    assert sorted(p.name for p in a.pods) == sorted(p.name for p in trace)
    assert sorted(a.rank) == list(range(40)) and a.rank == b.rank != c.rank


@pytest.mark.parametrize("trace,cluster,inflation,err", [
    (pods(2, 1000), nodes(0, 0), 1.0, "no GPU"),
    ([TracePod("c", 1000, 10, GpuRequest())], nodes(2), 1.0, "asks for no GPU"),
    (pods(2, 1000), nodes(2), 0.0, "greater than 0"),
], ids=["cpu-cluster", "cpu-trace", "zero-inflation"])
def test_protocol_errors(trace: list[TracePod], cluster: list[TraceNode], inflation: float, err: str) -> None:
    with pytest.raises(KubeschedError, match=err):
        arrival(trace, cluster, inflation, random.Random(0))
