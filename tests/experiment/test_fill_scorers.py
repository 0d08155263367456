"""The batch scorers of the fill engine give the scores of the per-node policies the
scheduling plugins use (kubesched.contrib.gpushare.policies), on random cluster states;
and the fragmentation the engine keeps per node equals the per-node measure."""

import random

import numpy as np
import pytest

from kubesched.contrib.gpushare import policies
from kubesched.contrib.gpushare.frag import Shape, node_frag, typical_shapes
from kubesched.contrib.gpushare.model import GpuRequest
from kubesched.experiment import scorers
from kubesched.experiment.cluster import Cluster
from kubesched.experiment.openb import TraceNode, TracePod

MODELS = ["V100", "T4", "A10"]


def random_pod(rng: random.Random, i: int) -> TracePod:
    kind = rng.random()
    models = tuple(rng.sample(MODELS, rng.randint(1, 2))) if rng.random() < 0.3 else ()
    if kind < 0.15:
        gpu = GpuRequest()
    elif kind < 0.75:
        gpu = GpuRequest(rng.choice([100, 250, 300, 460, 500, 700]), 1, models)
    else:
        gpu = GpuRequest(1000, rng.choice([1, 1, 2, 4, 8]), models)
    return TracePod(f"p{i}", rng.choice([1000, 2000, 4000, 8000, 16000]), rng.choice([1024, 4096]), gpu)


def random_cluster(rng: random.Random) -> tuple[Cluster, list[TracePod]]:
    nodes = [TraceNode(f"n{i}", rng.choice([32000, 64000, 96000, 128000]), 262144, g, rng.choice(MODELS) if g else "")
             for i, g in enumerate(rng.choice([0, 1, 2, 4, 8]) for _ in range(rng.randint(3, 12)))]
    trace = [random_pod(rng, i) for i in range(60)]
    cl = Cluster(nodes, typical_shapes([Shape(p.cpu, p.gpu) for p in trace]))
    for p in trace[:40]:  # fill part of the cluster with random placements
        row = cl.pod_row(p)
        cand = cl.candidates(row)
        if len(cand):
            i = int(cand[rng.randrange(len(cand))])
            cl.place(i, row, policies.random_gpus(cl.node(i), p.gpu, rng))
    return cl, trace


@pytest.mark.parametrize("seed", range(25))
def test_batch_scores_equal_per_node_scores(seed: int) -> None:
    rng = random.Random(seed)
    cl, trace = random_cluster(rng)
    fgd = scorers.FGD(cl.table.typical)
    for p in trace[40:]:
        row = cl.pod_row(p)
        cand = cl.candidates(row)
        if not len(cand):
            continue
        nodes = [cl.node(int(i)) for i in cand]
        assert list(fgd.scores(cl, cand, row)) == [policies.fgd(n, p.cpu, p.gpu, fgd.typical)[0] for n in nodes]
        assert list(scorers.BestFit().scores(cl, cand, row)) == \
            policies.normalize([policies.bestfit_raw(n, p.cpu, p.gpu) for n in nodes])
        assert list(scorers.DotProduct().scores(cl, cand, row)) == [policies.dotproduct(n, p.cpu, p.gpu) for n in nodes]
        assert list(scorers.GpuPacking().scores(cl, cand, row)) == [policies.gpupacking(n, p.gpu) for n in nodes]
        assert list(scorers.GpuClustering().scores(cl, cand, row)) == \
            [policies.gpuclustering(n, p.gpu) for n in nodes]


@pytest.mark.parametrize("seed", range(10))
def test_kept_fragmentation_equals_the_per_node_measure(seed: int) -> None:
    cl, _ = random_cluster(random.Random(100 + seed))
    want = [node_frag(n.cpu_left, n.free, n.model, cl.table.typical) for n in (cl.node(i) for i in range(len(cl.names)))]
    assert list(cl.frag) == want
    assert np.array_equal(cl.left, cl.free.sum(axis=1))
