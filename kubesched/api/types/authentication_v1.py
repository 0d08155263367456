"""authentication.k8s.io/v1 types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).

``PROTOBUF_ONLY``: messages the API server reads or writes in protobuf but serves no
OpenAPI definition of (subresources, reviews, options).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "TokenRequest": (
        "metadata @meta:ObjectMeta 1; spec @authentication:TokenRequestSpec 2; "
        "status @authentication:TokenRequestStatus 3"),
    "TokenRequestSpec": (
        "audiences [atomic]s 1; expirationSeconds i64 4p; boundObjectRef @authentication:BoundObjectReference 3p"),
    "BoundObjectReference": "kind s 1; apiVersion s 2; name s 3; uid s<types.UID> 4",
    "TokenRequestStatus": "token! s 1; expirationTimestamp! t 2",
}

PROTOBUF_ONLY: frozenset[str] = frozenset({
    "BoundObjectReference", "TokenRequest", "TokenRequestSpec", "TokenRequestStatus",
})
