"""GPU requests and GPU choice as open-gpu-share reads and makes them.

Expected values from hkust-adsl/kubernetes-scheduler-simulator: ``pkg/type/open-gpu-share/utils/pod.go``
(annotation keys, ``GetGpuAffinityFromPodAnnotation``), ``pkg/type/open-gpu-share/cache/gpunodeinfo.go``
(``AllocateGpuId``: k GPUs each with ``milli`` free), ``pkg/type/resource.go``
(``AllocateExclusiveGpuId``: lowest-indexed free GPUs; ``Sub``: least free first),
``pkg/simulator/plugin/open_gpu_share.go`` (``allocateGpuIdBasedOnBestFit``: least free that fits).
"""

import pytest

from kubesched.contrib.gpushare.model import (GpuRequest, GpuRequestError, NodeGpus, fits, packed, parse_indices,
                                              parse_request, tightest_gpu, whole_gpus)

M, C, T = "alibabacloud.com/gpu-milli", "alibabacloud.com/gpu-count", "alibabacloud.com/gpu-card-model"


@pytest.mark.parametrize("ann,want", [
    ({}, GpuRequest()),
    ({M: "460", C: "1"}, GpuRequest(460, 1)),
    ({M: "1000", C: "8"}, GpuRequest(1000, 8)),
    ({M: "1000", C: "1", T: "V100M16|V100M32"}, GpuRequest(1000, 1, ("V100M16", "V100M32"))),
    ({M: "0", C: "1"}, GpuRequest()),
], ids=["cpu-only", "share", "eight-whole", "models", "zero-milli"])
def test_parse_request(ann: dict[str, str], want: GpuRequest) -> None:
    assert parse_request(ann) == want


@pytest.mark.parametrize("ann,err", [
    ({M: "1500", C: "1"}, "more than one GPU"),
    ({M: "500", C: "2"}, "takes whole GPUs"),
    ({M: "half", C: "1"}, "not an integer"),
    ({M: "500", C: "-1"}, "negative"),
], ids=["over-1000", "shared-multi", "text", "negative"])
def test_parse_request_errors(ann: dict[str, str], err: str) -> None:
    with pytest.raises(GpuRequestError, match=err):
        parse_request(ann)


def test_affinity_kinds() -> None:
    assert GpuRequest().affinity == "no-gpu"
    assert GpuRequest(300, 1).affinity == "share-gpu"
    assert GpuRequest(1000, 1).affinity == "1-gpu"
    assert GpuRequest(1000, 4).affinity == "4-gpu"


def test_fits_needs_count_gpus_with_milli_free_and_an_allowed_model() -> None:
    node = NodeGpus("T4", [1000, 300, 1000], 8000, {})
    assert fits(node, GpuRequest(300, 1))
    assert not fits(node, GpuRequest(400, 1, ("V100M16",)))
    assert fits(node, GpuRequest(1000, 2))
    assert not fits(node, GpuRequest(1000, 3))
    assert not fits(NodeGpus("", [], 8000, {}), GpuRequest(100, 1))
    assert fits(NodeGpus("", [], 8000, {}), GpuRequest())


def test_gpu_choices() -> None:
    free = [1000, 300, 1000, 600, 300]
    assert whole_gpus(free, 2) == (0, 2)
    assert tightest_gpu(free, 250) == 1  # 300 at GPU 1 and 4: the first
    assert tightest_gpu(free, 400) == 3
    assert tightest_gpu(free, 1001) == -1
    # Sub: least free first among those that fit: 300 at 1 (first of the two 300s)
    assert packed(free, GpuRequest(200, 1)) == [1000, 100, 1000, 600, 300]
    assert packed(free, GpuRequest(1000, 2)) == [0, 300, 0, 600, 300]
    assert packed(free, GpuRequest(1000, 3)) is None
    assert packed(free, GpuRequest()) == free


def test_parse_indices() -> None:
    assert parse_indices("0-3", 4) == (0, 3)
    with pytest.raises(GpuRequestError, match="lacks"):
        parse_indices("4", 4)
    with pytest.raises(GpuRequestError, match="not a list"):
        parse_indices("a-b", 4)
