"""meta/v1 (k8s.io/apimachinery) types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).

``PROTOBUF_ONLY``: messages the API server reads or writes in protobuf but serves no
OpenAPI definition of (subresources, reviews, options).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "Condition": (
        "type! s 1; status! s<ConditionStatus> 2; observedGeneration i64 3; lastTransitionTime! t 4; reason! s 5; "
        "message! s 6"),
    "ObjectMeta": (
        "name s 1; generateName s 2; namespace s 3; selfLink s 4; uid s<types.UID> 5; resourceVersion s 6; "
        "generation i64 7; creationTimestamp t 8; deletionTimestamp t 9p; deletionGracePeriodSeconds i64 10p; "
        "labels {}s 11; annotations {}s 12; ownerReferences [map=uid]@meta:OwnerReference 13; "
        "finalizers [set/merge]s 14; managedFields [atomic]@meta:ManagedFieldsEntry 17"),
    "ManagedFieldsEntry": (
        "manager s 1; operation s<ManagedFieldsOperationType> 2; apiVersion s 3; time t 4p; fieldsType s 6; "
        "fieldsV1 j 7p; subresource s 8"),
    "OwnerReference": (
        "(atomic) apiVersion! s 5; kind! s 1; name! s 3; uid! s<types.UID> 4; controller b 6p; "
        "blockOwnerDeletion b 7p"),
    "LabelSelector": "(atomic) matchLabels {}s 1; matchExpressions [atomic]@meta:LabelSelectorRequirement 2",
    "LabelSelectorRequirement": "key! s 1; operator! s<LabelSelectorOperator> 2; values [atomic]s 3",
    "DeleteOptions": (
        "gracePeriodSeconds i64 1p; preconditions @meta:Preconditions 2p; orphanDependents b 3p; "
        "propagationPolicy s<DeletionPropagation> 4p; dryRun [atomic]s 5; "
        "ignoreStoreReadErrorWithClusterBreakingPotential b 6p"),
    "Preconditions": "uid s<types.UID> 1p; resourceVersion s 2p",
    "ListMeta": "selfLink s 1; resourceVersion s 2; continue s 3; remainingItemCount i64 4p",
    "Status": (
        "metadata @meta:ListMeta 1; status s 2; message s 3; reason s<StatusReason> 4; "
        "details @meta:StatusDetails 5p; code i32 6"),
    "StatusDetails": (
        "name s 1; group s 2; kind s 3; causes [atomic]@meta:StatusCause 4; retryAfterSeconds i32 5; "
        "uid s<types.UID> 6"),
    "StatusCause": "reason s<CauseType> 1; message s 2; field s 3",
    "FieldSelectorRequirement": "key! s 1; operator! s<FieldSelectorOperator> 2; values [atomic]s 3",
}

PROTOBUF_ONLY: frozenset[str] = frozenset({
    "DeleteOptions", "FieldSelectorRequirement", "ListMeta", "Preconditions", "Status", "StatusCause",
    "StatusDetails",
})
