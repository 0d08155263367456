"""autoscaling/v1 types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).

``OPENAPI_ELSEWHERE``: the messages whose OpenAPI definitions (with descriptions) are still
written by hand in the API server's ``typedefs``; only their protobuf facts are read from here.
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "Scale": "metadata @meta:ObjectMeta 1; spec @autoscaling:ScaleSpec 2; status @autoscaling:ScaleStatus 3",
    "ScaleSpec": "replicas i32 1",
}

OPENAPI_ELSEWHERE: frozenset[str] = frozenset({
    "Scale", "ScaleSpec",
})
