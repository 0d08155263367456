"""The FGD paper's fragmentation measure and FGD score, computed by hand.

Definitions from hkust-adsl/kubernetes-scheduler-simulator ``pkg/utils/frag.go``
(``GetTypicalPods``, ``GetNodePodFrag``, ``NodeGpuShareFragAmount``: a fitting shape
fragments only the GPUs with less free milli than it asks; a CPU-only shape, a shape of
another model, or one that lacks GPUs or CPU fragments all idle milli) and
``pkg/simulator/plugin/fgd_score.go`` (``int64(sigmoid((before - after) / 1000) * 100)``).
"""

import pytest

from kubesched.contrib.gpushare.frag import Shape, TypicalShape, node_frag, typical_shapes
from kubesched.contrib.gpushare.model import GpuRequest, NodeGpus
from kubesched.contrib.gpushare.policies import fgd

S1 = Shape(4000, GpuRequest(500, 1))  # shares half a GPU
S2 = Shape(2000, GpuRequest())  # CPU only
S3 = Shape(1000, GpuRequest(1000, 2))  # two whole GPUs
TARGET = [TypicalShape(S1, 0.5), TypicalShape(S2, 0.25), TypicalShape(S3, 0.25)]


def test_typical_shapes_keep_the_most_popular_and_renormalise() -> None:
    shapes = [S1] * 5 + [S2] * 3 + [S3] * 2
    got = typical_shapes(shapes, 95)
    assert [t.shape for t in got] == [S1, S2, S3]
    assert [t.freq for t in got] == pytest.approx([0.5, 0.3, 0.2])
    # 70% of 10 pods = 7: S1 (5) then S2 (8 >= 7); 5/8 and 3/8
    got = typical_shapes(shapes, 70)
    assert [t.shape for t in got] == [S1, S2]
    assert [t.freq for t in got] == pytest.approx([0.625, 0.375])


def test_equal_counts_put_the_larger_shape_first() -> None:
    a, b = Shape(2000, GpuRequest()), Shape(1000, GpuRequest(500, 1))
    assert typical_shapes([b, b, a, a], 50) == [TypicalShape(a, 1.0)]


@pytest.mark.parametrize("cpu,free,model,want", [
    # S1 fits on GPU 0, GPU 1's 300 < 500 is fragment: .5*300; S2 CPU-only: .25*1300;
    # S3 lacks a second whole GPU: .25*1300
    (8000, [1000, 300], "V100", 150 + 325 + 325),
    # S1 and S3 fit with nothing below their ask; S2 still counts all 2000
    (8000, [1000, 1000], "V100", 500),
    # S1 lacks CPU (4000 > 3000): all 1300 for it too
    (3000, [1000, 300], "V100", 650 + 325 + 325),
    (8000, [0, 0], "V100", 0),
], ids=["partly-used", "idle", "short-of-cpu", "full"])
def test_node_frag(cpu: int, free: list[int], model: str, want: float) -> None:
    assert node_frag(cpu, free, model, TARGET) == pytest.approx(want)


def test_a_shape_of_another_model_sees_all_idle_gpu_as_fragment() -> None:
    target = [TypicalShape(Shape(1000, GpuRequest(500, 1, ("T4",))), 1.0)]
    assert node_frag(8000, [1000, 1000], "V100", target) == 2000
    assert node_frag(8000, [1000, 1000], "T4", target) == 0


def test_fgd_prefers_the_partly_used_gpu() -> None:
    pod = GpuRequest(500, 1)
    # node A: 800 before; on GPU 0 -> free [500, 300], CPU 4000: 150 + 200 + 200 = 550;
    # 100 * sigmoid(0.25) = 56.2 -> 56. GPU 1 (300) does not fit.
    assert fgd(NodeGpus("V100", [1000, 300], 8000, {}), 4000, pod, TARGET) == (56, (0,))
    # node B: 500 before; either GPU -> [500, 1000], CPU 4000: 0 + 375 + 375 = 750;
    # 100 * sigmoid(-0.25) = 43.8 -> 43; equal GPUs: the first
    assert fgd(NodeGpus("V100", [1000, 1000], 8000, {}), 4000, pod, TARGET) == (43, (0,))


def test_fgd_whole_gpu_and_cpu_only_pods() -> None:
    whole = GpuRequest(1000, 1)
    # A: [0, 300], CPU 7000, left 300: 150 + 75 + 75 = 300; 800 - 300 = 500 -> 100 * sigmoid(0.5) = 62.2
    assert fgd(NodeGpus("V100", [1000, 300], 8000, {}), 1000, whole, TARGET) == (62, (0,))
    # B: [0, 1000], left 1000: 0 + 250 + 250 = 500 = before -> 100 * sigmoid(0) = 50
    assert fgd(NodeGpus("V100", [1000, 1000], 8000, {}), 1000, whole, TARGET) == (50, (0,))
    # a CPU-only pod taking the CPU S1 needs (4500 -> 2500 < 4000): 800 -> 1300; sigmoid(-0.5) = 0.377
    assert fgd(NodeGpus("V100", [1000, 300], 4500, {}), 2000, GpuRequest(), TARGET) == (37, ())
