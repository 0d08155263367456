"""Fill experiments on tiny traces, placements and measures computed by hand from
hkust-adsl/kubernetes-scheduler-simulator (``best_fit_score.go`` + ``NormalizeScore``;
``analysis.go`` ``ClusterGpuFragReport``; ``utils/frag.go``), and the per-percent series
of ``experiments/analysis/merge_alloc_discrete.py`` / ``merge_frag_*_discrete.py``.
"""

import numpy as np
import pytest

from kubesched.contrib.gpushare.model import GpuRequest
from kubesched.experiment import series
from kubesched.experiment.engine import Steps, run_fill
from kubesched.experiment.openb import TraceNode, TracePod
from kubesched.experiment.runs import fill_trace

NODES = [TraceNode("a", 8000, 64000, 2, "V100"), TraceNode("b", 8000, 64000, 1, "V100"),
         TraceNode("c", 16000, 64000, 1, "P100")]
PODS = [TracePod(f"s{i}", 1000, 1024, GpuRequest(500, 1)) for i in range(3)] + \
       [TracePod("t4", 1000, 1024, GpuRequest(500, 1, ("T4",)))]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bestfit_fill(seed: int) -> None:
    # 4 x 500 = 2000 = 0.5 x 4 GPUs: nothing added or removed. BestFit before normalising,
    # 100 * (1 - (CPU left after / 128000 + GPU left after / 8000) / 2):
    #   1st share pod: a 87.9, b 94.1, c 91.0 -> b;  2nd: a 87, b 97.7 (0 GPU left), c 91 -> b;
    #   3rd: b cannot fit: a 87, c 91 -> c.  The T4 pod fits nowhere: dropped.
    arr, steps, gpus = run_fill(NODES, PODS, "bestfit", seed, 0.5)
    where = dict(zip([p.name for p in arr.pods], steps.nodes))
    assert where["t4"] == ""
    assert [steps.nodes[i] for i, p in enumerate(arr.pods) if p.name != "t4"] == ["b", "b", "c"]
    assert gpus == 4 and steps.arrived[-1] == 2000 and steps.used[-1] == 1500
    # target workload: 3 x (1000, 500) and 1 x T4-only (1000, 500): .75 and .25. At the end:
    # a idle 2000 (the T4 shape cannot use it: .25 x 2000), b full, c [500]: .25 x 500 -> 625
    assert steps.frag[-1] == pytest.approx(625)
    assert steps.idle[-1] == pytest.approx(2500)


def test_bestfit_fill_result() -> None:
    res = fill_trace(NODES, PODS, workload="tiny", policy="bestfit", seed=7, inflation=0.5)
    assert (res.pods_arrived, res.pods_placed, res.pods_failed) == (4, 3, 1)
    assert res.allocation[50] == 37.5  # 1500 of 4000 milli-GPU at 2000 / 40 = 50% arrived
    assert res.unallocated() == 62.5
    assert res.frag_ratio[50] == 25.0  # 625 of 2500 idle
    assert res.frag_amount[50] == 15.62  # 100 * 625 / 1000 / 4 = 15.625, rounded half to even
    assert res.label == "05-BestFit"


def test_random_places_on_feasible_nodes_only() -> None:
    for seed in range(5):
        arr, steps, _ = run_fill(NODES, PODS, "random", seed, 0.5)
        got = dict(zip([p.name for p in arr.pods], steps.nodes))
        assert got.pop("t4") == ""
        assert all(n in ("a", "b", "c") for n in got.values())
        assert steps.used[-1] == 1500


def test_series_buckets_windows_and_rounding() -> None:
    # 2 GPUs: percent = arrived / 20, rounded half to even (12.5 -> 12)
    steps = Steps(np.array([250, 500, 2500]), np.array([250, 250, 1000]), np.zeros(3), np.ones(3), [], [])
    alloc = series.allocation(steps, 2, 130)
    assert alloc[12] == 12.5 and alloc[25] == 12.5 and alloc[125] == 50.0
    assert alloc[11] == 12.5 and alloc[13] == 12.5  # no step there: the steps at p-1..p+1
    assert 14 not in alloc and 0 not in alloc
    assert list(series.arrived_percent(steps, 2)) == [12, 25, 125]
