"""The baseline policies' scores, computed by hand from hkust-adsl/kubernetes-scheduler-simulator
``pkg/simulator/plugin/``: ``best_fit_score.go`` (+ ``NormalizeScore`` in ``plugin_utils.go``),
``dot_product_score.go`` with ``merge``/``max`` (``pkg/utils/utils.go`` ``GenerateSchedulingMatchGroups``),
``gpu_packing_score.go``, ``gpu_clustering_score.go``; ``open_gpu_share.go`` for the random GPU.
"""

import random

from kubesched.contrib.gpushare.model import GpuRequest, NodeGpus
from kubesched.contrib.gpushare.policies import (best_fit_gpus, bestfit_raw, dotproduct, gpuclustering, gpupacking,
                                                 normalize, random_gpus)

A = NodeGpus("V100", [1000, 300], 8000, {"share-gpu": 1})  # one share pod holds 700 of GPU 1
B = NodeGpus("V100", [1000, 1000], 8000, {})
C = NodeGpus("V100", [0, 1000], 8000, {"1-gpu": 1})
SHARE = GpuRequest(500, 1)


def test_bestfit() -> None:
    # A: (8000-4000)/128000*.5 + (1300-500)/8000*.5 = .015625 + .05; (1 - .065625) * 100 = 93.4
    assert bestfit_raw(A, 4000, SHARE) == 93
    # B: .015625 + 1500/8000*.5 = .109375 -> 89.06
    assert bestfit_raw(B, 4000, SHARE) == 89
    # min-max to 0..100 in integers
    assert normalize([93, 89]) == [100, 0]
    assert normalize([93, 91, 89]) == [100, 50, 0]
    assert normalize([7, 7]) == [0, 0]


def test_dotproduct() -> None:
    # A: (8000/128000)(4000/128000) + (1300/8000)(500/8000) = .001953125 + .01015625;
    # 100 * (1 - .012109375 / 2) = 99.39
    assert dotproduct(A, 4000, SHARE) == 99
    # 64000 milli-CPU and 2 GPUs on an idle 128-core node: 1 * .5 + (2000/8000)(2000/8000) = .5625;
    # 100 * (1 - .28125) = 71.9
    assert dotproduct(NodeGpus("V100", [1000, 1000], 128000, {}), 64000, GpuRequest(1000, 2)) == 71
    assert dotproduct(B, 9000, SHARE) == 0  # not enough CPU


def test_gpupacking() -> None:
    # share pod on A: tightest fitting GPU is the free one -> a new GPU on a used node: 50 - 1
    assert gpupacking(A, SHARE) == 49
    # 200 milli fits GPU 1 (300 free): 100 - (300 * 100 / 1000) / 10 = 97
    assert gpupacking(A, GpuRequest(200, 1)) == 97
    # idle node with 2 GPUs: max(33 - 2, 2)
    assert gpupacking(B, SHARE) == 31
    # two whole GPUs on a used 8-GPU node: max(50 - 2, 33)
    assert gpupacking(NodeGpus("A10", [0] + [1000] * 7, 64000, {}), GpuRequest(1000, 2)) == 48
    assert gpupacking(A, GpuRequest()) == 0


def test_gpuclustering() -> None:
    # A holds only share pods: 25 * (8000 - 1300) // 8000 + 75 = 20 + 75
    assert gpuclustering(A, SHARE) == 95
    # idle B: 25 * 6000 // 8000 + 25 = 18 + 25
    assert gpuclustering(B, SHARE) == 43
    # C holds another kind only: 25 * 7000 // 8000 = 21
    assert gpuclustering(C, SHARE) == 21
    # C holds 1-gpu and share pods: the pod's kind among others: 21 + 50
    mixed = NodeGpus("V100", [0, 1000], 8000, {"1-gpu": 1, "share-gpu": 2})
    assert gpuclustering(mixed, SHARE) == 71
    assert gpuclustering(A, GpuRequest()) == 0


def test_gpu_choice() -> None:
    assert best_fit_gpus(NodeGpus("T4", [1000, 600, 800], 1, {}), GpuRequest(500, 1)) == (1,)
    assert best_fit_gpus(NodeGpus("T4", [1000, 0, 1000], 1, {}), GpuRequest(1000, 2)) == (0, 2)
    node = NodeGpus("T4", [1000, 100, 600, 800], 1, {})
    seen = {random_gpus(node, GpuRequest(500, 1), random.Random(s))[0] for s in range(40)}
    assert seen == {0, 2, 3}  # every fitting GPU, never the one with 100 free
