"""ImageLocality, both forms, against upstream's tables.

Cases ported from upstream ``pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go``
(TestImageLocalityPriority, TestNormalizedImageName).
"""

from __future__ import annotations

import hashlib
import random

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.framework.interface import ScoreExtensions
from kubesched.plugins.imagelocality import ImageLocality, normalized_image_name
from kubesched.testing.handle import handle_for
from kubesched.testing.harness import score_all

MB = 1024 * 1024


def image_node(name: str, images: list[tuple[list[str], int]]) -> Node:
    return Node.from_dict({"metadata": {"name": name},
                           "status": {"images": [{"names": n, "sizeBytes": s * MB} for n, s in images]}})


def image_pod(images: list[str], init: tuple[str, ...] | list[str] = ()) -> Pod:
    return Pod.from_dict({"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(images)],
        "initContainers": [{"name": f"i{i}", "image": im} for i, im in enumerate(init)]}})


N403002000 = [(["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40),
              (["gcr.io/300:latest", "gcr.io/300:v1"], 300), (["gcr.io/2000:latest"], 2000)]
N25010 = [(["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10)]
N60040900 = [(["gcr.io/600:latest"], 600), (["gcr.io/40:latest"], 40), (["gcr.io/900:latest"], 900)]
N300600900 = [(["gcr.io/300:latest"], 300), (["gcr.io/600:latest"], 600), (["gcr.io/900:latest"], 900)]
N400030 = [(["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30)]
N203040 = [(["gcr.io/20:latest"], 20), (["gcr.io/30:latest"], 30), (["gcr.io/40:latest"], 40)]

CASES = [
    pytest.param(image_pod(["gcr.io/40", "gcr.io/250"]), [("node1", N403002000), ("node2", N25010)],
                 {"node1": 0, "node2": 5}, id="two-images-spread-prefer-larger"),
    pytest.param(image_pod(["gcr.io/40", "gcr.io/300"]), [("node1", N403002000), ("node2", N25010)],
                 {"node1": 7, "node2": 0}, id="two-images-on-one-node"),
    pytest.param(image_pod(["gcr.io/10", "gcr.io/4000"]), [("node1", N400030), ("node2", N25010)],
                 {"node1": 100, "node2": 0}, id="exceed-limit-use-limit"),
    pytest.param(image_pod(["gcr.io/10", "gcr.io/4000"]),
                 [("node1", N400030), ("node2", N25010), ("node3", [])],
                 {"node1": 66, "node2": 0, "node3": 0}, id="exceed-limit-with-imageless-node"),
    pytest.param(image_pod(["gcr.io/300", "gcr.io/600", "gcr.io/900"]),
                 [("node1", N60040900), ("node2", N300600900), ("node3", [])],
                 {"node1": 32, "node2": 36, "node3": 0}, id="multiple-large-images"),
    pytest.param(image_pod(["gcr.io/30", "gcr.io/40"]), [("node1", N203040), ("node2", N400030)],
                 {"node1": 1, "node2": 0}, id="multiple-small-images"),
    pytest.param(image_pod(["gcr.io/30"], init=["gcr.io/300"]), [("node1", N403002000), ("node2", N203040)],
                 {"node1": 6, "node2": 0}, id="include-init-containers"),
]


@pytest.mark.parametrize("batch", [False, True], ids=["per-node", "batch"])
@pytest.mark.parametrize("pod,nodes,want", CASES)
def test_image_locality_priority(pod: Pod, nodes: list[tuple[str, list[tuple[list[str], int]]]],
                                 want: dict[str, int], batch: bool) -> None:
    handle = handle_for([], [image_node(n, im) for n, im in nodes])
    pl = ImageLocality(None, handle)
    assert not isinstance(pl, ScoreExtensions)  # upstream: no NormalizeScore
    assert score_all(pl, pod, handle, batch=batch) == want


DIGEST = "sha256:" + hashlib.sha256(b"root").hexdigest()


@pytest.mark.parametrize("name,want", [
    pytest.param("root", "root:latest", id="add-latest-1"),
    pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add-latest-2"),
    pytest.param("root:tag", "root:tag", id="keep-1"),
    pytest.param("root@" + DIGEST, "root@" + DIGEST, id="keep-2"),
])
def test_normalized_image_name(name: str, want: str) -> None:
    assert normalized_image_name(name) == want


def test_batch_agrees_with_per_node_on_random_clusters() -> None:
    rng = random.Random(5)
    names = [f"img{i}" for i in range(6)]
    for _ in range(30):
        nodes = [image_node(f"n{i}", [([f"{n}:latest"], rng.randrange(1, 3000))
                                      for n in rng.sample(names, rng.randrange(4))]) for i in range(8)]
        pod = image_pod(rng.sample(names, rng.randrange(1, 4)), init=rng.sample(names, rng.randrange(2)))
        handle = handle_for([], nodes)
        pl = ImageLocality(None, handle)
        subset = [f"n{i}" for i in rng.sample(range(8), 5)]
        assert score_all(pl, pod, handle, nodes=subset) == score_all(pl, pod, handle, batch=True, nodes=subset)
