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
        "resourceAttributes @authorization:ResourceAttributes 1p; "
        "nonResourceAttributes @authorization:NonResourceAttributes 2p"),
    "ResourceAttributes": (
        "namespace s 1; verb s 2; group s 3; version s 4; resource s 5; subresource s 6; name s 7; "
        "fieldSelector @authorization:FieldSelectorAttributes 8p; "
        "labelSelector @authorization:LabelSelectorAttributes 9p"),
    "NonResourceAttributes": "path s 1; verb s 2",
    "SelfSubjectRulesReview": (
        "metadata @meta:ObjectMeta 1; spec @authorization:SelfSubjectRulesReviewSpec 2; "
        "status @authorization:SubjectRulesReviewStatus 3"),
    "SelfSubjectRulesReviewSpec": "namespace s 1",
    "FieldSelectorAttributes": "rawSelector s 1; requirements [atomic]@meta:FieldSelectorRequirement 2",
    "LabelSelectorAttributes": "rawSelector s 1; requirements [atomic]@meta:LabelSelectorRequirement 2",
    "SubjectAccessReviewStatus": "allowed! b 1; denied b 4; reason s 2; evaluationError s 3",
    "SubjectRulesReviewStatus": (
        "resourceRules! [atomic]@authorization:ResourceRule 1; "
        "nonResourceRules! [atomic]@authorization:NonResourceRule 2; incomplete! b 3; evaluationError s 4"),
    "ResourceRule": "verbs! [atomic]s 1; apiGroups [atomic]s 2; resources [atomic]s 3; resourceNames [atomic]s 4",
    "NonResourceRule": "verbs! [atomic]s 1; nonResourceURLs [atomic]s 2",
}

PROTOBUF_ONLY: frozenset[str] = frozenset({
    "FieldSelectorAttributes", "LabelSelectorAttributes", "NonResourceAttributes", "NonResourceRule",
    "ResourceAttributes", "ResourceRule", "SelfSubjectAccessReview", "SelfSubjectAccessReviewSpec",
    "SelfSubjectRulesReview", "SelfSubjectRulesReviewSpec", "SubjectAccessReviewStatus", "SubjectRulesReviewStatus",
})
