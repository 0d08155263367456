"""ImageLocality: favours nodes that already hold the pod's container images, weighting
each image by its size and by how widely it has spread, to avoid piling pods onto the
few nodes that have an image (upstream ``plugins/imagelocality``). Score only, no
normalisation.

The batch form reads the NodeTable's per-image columns (size and node count per node) and
does the float64 scaling, clamping and integer arithmetic as array operations.
"""

from __future__ import annotations

from collections.abc import Hashable

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.types import ImageSummary, NodeInfo
from kubesched.plugins import names
from kubesched.plugins.helper.gomath import go_div

logger = logging.getLogger(__name__)

MB = 1024 * 1024
# Bounds of the summed image scores: the 90th percentile of Docker Hub images falls in it.
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """The CRI name of an image: ``:latest`` is added when the name has no tag."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def scaled_image_score(state: ImageSummary, total_num_nodes: int) -> int:
    """The image size scaled by the fraction of nodes that have it (float64, truncated)."""
    spread = state.num_nodes / total_num_nodes
    return int(float(state.size) * spread)


def _pod_images(pod: Pod) -> list[str]:
    """Normalised images of init containers then containers (one entry per container)."""
    return [normalized_image_name(c.image) for c in (*pod.init_containers, *pod.containers)]


def sum_image_scores(node_info: NodeInfo, images: Sequence[str], total_num_nodes: int) -> int:
    states = node_info.image_states
    total = 0
    for image in images:
        st = states.get(image)
        if st is not None:
            total += scaled_image_score(st, total_num_nodes)
    return total


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Scale the clamped sum of image scores linearly into [0, MaxNodeScore]."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return go_div(MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)


class ImageLocality:
    name = names.IMAGE_LOCALITY

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle

    def _total_nodes(self) -> int:
        return len(self.handle.snapshot.node_infos)

    def signature(self, pod: Pod) -> Hashable:
        """Pods with the same images get the same results on a node (NodeLocalPlugin)."""
        return tuple(_pod_images(pod))

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        images = _pod_images(pod)
        total = sum_image_scores(node_info, images, self._total_nodes())
        return calculate_priority(total, len(images))

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        images = _pod_images(pod)
        n = len(images)
        total_nodes = self._total_nodes()
        sums = np.zeros(idx.size, dtype=np.int64)
        for image in images:
            sizes, counts = table.image(image)
            # float64(size) * (float64(numNodes) / float64(total)), truncated toward zero
            spread = counts[idx].astype(np.float64) / float(total_nodes)
            sums += np.trunc(sizes[idx].astype(np.float64) * spread).astype(np.int64)
        max_threshold = MAX_CONTAINER_THRESHOLD * n
        denom = max_threshold - MIN_THRESHOLD
        if denom <= 0:  # no containers: not a valid pod; keep the scalar arithmetic exact
            return np.array([calculate_priority(int(s), n) for s in sums.tolist()], dtype=np.int64)
        clamped = np.minimum(np.maximum(sums, MIN_THRESHOLD), max_threshold)
        return (MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) // denom
