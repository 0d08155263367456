"""autoscaling/v1 types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).

``PROTOBUF_ONLY``: messages the API server reads or writes in protobuf but serves no
OpenAPI definition of (subresources, reviews, options).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "Scale": "metadata @meta:ObjectMeta 1; spec @autoscaling:ScaleSpec 2; status @autoscaling:ScaleStatus 3",
    "ScaleSpec": "replicas i32 1",
    "ScaleStatus": "replicas! i32 1; selector s 2",
}

PROTOBUF_ONLY: frozenset[str] = frozenset({
    "Scale", "ScaleSpec", "ScaleStatus",
})
