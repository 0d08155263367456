"""policy/v1 types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).

``PROTOBUF_ONLY``: messages the API server reads or writes in protobuf but serves no
OpenAPI definition of (subresources, reviews, options).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "PodDisruptionBudget": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @policy:PodDisruptionBudgetSpec 2; "
        "status @policy:PodDisruptionBudgetStatus 3"),
    "PodDisruptionBudgetSpec": (
        "minAvailable x 1p; selector @meta:LabelSelector 2p; maxUnavailable x 3p; "
        "unhealthyPodEvictionPolicy s<UnhealthyPodEvictionPolicyType> 4p"),
    "PodDisruptionBudgetStatus": (
        "observedGeneration i64 1; disruptedPods {}t 2; disruptionsAllowed! i32 3; currentHealthy! i32 4; "
        "desiredHealthy! i32 5; expectedPods! i32 6; conditions [map=type]@meta:Condition 7"),
    "Eviction": "metadata @meta:ObjectMeta 1; deleteOptions @meta:DeleteOptions 2p",
}

PROTOBUF_ONLY: frozenset[str] = frozenset({
    "Eviction",
})
