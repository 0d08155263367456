"""coordination.k8s.io/v1 types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "Lease": "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @coordination:LeaseSpec 2",
    "LeaseSpec": (
        "holderIdentity s 1p; leaseDurationSeconds i32 2p; acquireTime mt 3p; renewTime mt 4p; "
        "leaseTransitions i32 5p; strategy s<CoordinatedLeaseStrategy> 6p; preferredHolder s 7p"),
}

PROTOBUF_ONLY: frozenset[str] = frozenset()
