"""VolumeBinding's capacity score, behind the StorageCapacityScoring gate (upstream
``plugins/volumebinding/volume_binding.go`` ``PreScore``/``Score`` and ``scorer.go``).

With the gate on, every pod is scored (PreScore does not skip) and a node scores by the
storage the pod's claims would use there, per StorageClass: the PVs Filter matched
(requested: the claim's request; capacity: the PV's), or, when there are none, the claims to
provision whose driver tracks capacity (requested: the claims' requests added up; capacity:
the CSIStorageCapacity that holds them). Each class's utilisation ``requested * 100 /
capacity`` (100 when over or zero capacity) goes through the ``shape`` (scores 0..10 scaled
to 0..100); the node's score is the classes' mean, rounded as Go's ``math.Round``; a node
with nothing to bind or provision scores 0. The default shape with the gate on is
(0, 10), (100, 0): the emptier a node's storage, the higher (``SetDefaults_VolumeBindingArgs``).
"""

from __future__ import annotations

from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.plugins.helper.gomath import go_div, go_round
from kubesched.plugins.helper.shape import Shape, broken_linear
from kubesched.plugins.volumebinding.binder import PodVolumes

MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10
CAPACITY_SCORING_SHAPE: Shape = ((0, MAX_CUSTOM_PRIORITY_SCORE), (100, 0))


def scaled(shape: Shape) -> Shape:
    """The shape's scores (0..10) on the node-score scale (0..100)."""
    return tuple((u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in shape)


def class_resources(volumes: PodVolumes) -> dict[str, tuple[int, int]]:
    """StorageClass -> (requested bytes, capacity bytes) of the pod's volumes on one node."""
    out: dict[str, tuple[int, int]] = {}
    if volumes.static_bindings:
        for pv, pvc in volumes.static_bindings:
            req, cap = out.get(pv.storage_class_name, (0, 0))
            out[pv.storage_class_name] = (req + (pvc.request.value() if pvc.request is not None else 0),
                                          cap + (pv.capacity.value() if pv.capacity is not None else 0))
        return out
    for pvc in volumes.dynamic_provisions:
        node_capacity = volumes.node_capacity.get(pvc.key)
        if node_capacity is None:
            continue
        req, _ = out.get(pvc.class_name, (0, 0))
        # the class's capacity is the CSIStorageCapacity's, set (not added) per claim
        capacity = node_capacity.capacity.value() if node_capacity.capacity is not None else 0
        out[pvc.class_name] = (req + (pvc.request.value() if pvc.request is not None else 0), capacity)
    return out


def capacity_score(shape: Shape, volumes: PodVolumes) -> int:
    """``buildScorerFunction(shape)(classResources)``; ``shape`` already scaled."""
    classes = class_resources(volumes)
    if not classes:
        return 0
    total = 0
    for requested, capacity in classes.values():
        if capacity == 0 or requested > capacity:
            total += broken_linear(shape, MAX_UTILIZATION)
        else:
            total += broken_linear(shape, go_div(requested * MAX_UTILIZATION, capacity))
    return go_round(float(total) / float(len(classes)))
