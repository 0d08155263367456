"""scheduling.k8s.io/v1 types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "PriorityClass": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; value! i32 2; globalDefault b 3; description s 4; "
        "preemptionPolicy s<PreemptionPolicy> 5p"),
}

PROTOBUF_ONLY: frozenset[str] = frozenset()
