"""authorization.k8s.io/v1 types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).

``PROTOBUF_ONLY``: messages the API server reads or writes in protobuf but serves no
OpenAPI definition of (subresources, reviews, options).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "SelfSubjectAccessReview": (
        "metadata @meta:ObjectMeta 1; spec @authorization:SelfSubjectAccessReviewSpec 2; "
        "status @authorization:SubjectAccessReviewStatus 3"),
    "SelfSubjectAccessReviewSpec": (
        "resourceAttributes @authorization:ResourceAttributes 1; "
        "nonResourceAttributes @authorization:NonResourceAttributes 2"),
    "ResourceAttributes": "namespace s 1; verb s 2; group s 3; version s 4; resource s 5; subresource s 6; name s 7",
    "NonResourceAttributes": "path s 1; verb s 2",
    "SelfSubjectRulesReview": (
        "metadata @meta:ObjectMeta 1; spec @authorization:SelfSubjectRulesReviewSpec 2; "
        "status @authorization:SubjectRulesReviewStatus 3"),
    "SelfSubjectRulesReviewSpec": "namespace s 1",
}

PROTOBUF_ONLY: frozenset[str] = frozenset({
    "NonResourceAttributes", "ResourceAttributes", "SelfSubjectAccessReview", "SelfSubjectAccessReviewSpec",
    "SelfSubjectRulesReview", "SelfSubjectRulesReviewSpec",
})
