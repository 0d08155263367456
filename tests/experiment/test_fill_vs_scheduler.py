"""The fill engine and the scheduler with the gpushare plugins place a trace the same way:
the same pods in the same order, ties to the lowest node name (the engine's rank in name
order, ``simulate --tie-break name``), every policy but Random (whose draws differ)."""

import random
from pathlib import Path

import numpy as np
import pytest

import kubesched
from kubesched.experiment.cluster import Cluster
from kubesched.experiment.engine import place_all, policy_scorer, workload_shapes
from kubesched.experiment.importer import import_openb
from kubesched.experiment.openb import read_nodes, read_pods

SCORE = {"fgd": ("FGDScore", "fgd"), "bestfit": ("BestFitScore", "tightest"),
         "dotproduct": ("DotProductScore", "tightest"), "gpupacking": ("GpuPackingScore", "tightest"),
         "gpuclustering": ("GpuClusteringScore", "tightest")}


def trace(tmp_path: Path, seed: int) -> tuple[Path, Path]:
    rng = random.Random(seed)
    models = ["V100", "T4", "A10"]
    nodes = "sn,cpu_milli,memory_mib,gpu,model\n" + "".join(
        f"node-{i:02},{rng.choice([16000, 32000, 64000])},{rng.choice([65536, 131072])},{g},{rng.choice(models)}\n"
        for i, g in enumerate(rng.choice([1, 2, 4, 8]) for _ in range(8)))
    rows = []
    for i in range(60):
        kind = rng.random()
        count, milli = (0, 0) if kind < 0.15 else (1, rng.choice([200, 300, 500, 700])) if kind < 0.7 else \
            (rng.choice([1, 2, 4]), 1000)
        spec = rng.choice(models) if count and rng.random() < 0.2 else ""
        rows.append(f"pod-{i:02},{rng.choice([1000, 2000, 4000, 8000])},{rng.choice([2048, 8192])},{count},{milli},{spec}\n")
    (tmp_path / "n.csv").write_text(nodes)
    (tmp_path / "p.csv").write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n" + "".join(rows))
    return tmp_path / "n.csv", tmp_path / "p.csv"


def profile(score: str, selection: str) -> dict[str, object]:
    gs = "kubesched.contrib.gpushare:"
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": gs + "GpuShare"}]},
                                      "score": {"disabled": [{"name": "*"}],
                                                "enabled": [{"name": gs + score, "weight": 1000}]}},
                          "pluginConfig": [{"name": gs + "GpuShare", "args": {"gpuSelection": selection}}]}]}


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("policy", list(SCORE))
def test_engine_places_as_the_scheduler(tmp_path: Path, policy: str, seed: int) -> None:
    nodes_csv, pods_csv = trace(tmp_path, seed)
    nodes, pods = read_nodes(nodes_csv), read_pods(pods_csv)
    typical = workload_shapes(pods)
    cl = Cluster(nodes, typical)
    rank = np.array(sorted(range(len(nodes)), key=lambda i: nodes[i].name), dtype=np.int64).argsort()
    steps = place_all(cl, pods, policy_scorer(policy, typical), rank, random.Random(0), "artifact", 1.0)
    import_openb(nodes_csv, pods_csv, tmp_path / "m")
    res = kubesched.simulate(tmp_path / "m", config=profile(*SCORE[policy]), tie_break="name")
    got = {p.name: (p.node, p.annotations.get("alibabacloud.com/gpu-index") or "") for p in res.pods}
    want = {p.name: (n, g if n and p.gpu.wants_gpu else "") for p, n, g in zip(pods, steps.nodes, steps.gpus)}
    assert got == want
