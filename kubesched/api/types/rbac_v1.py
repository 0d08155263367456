"""rbac.authorization.k8s.io/v1 types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "Role": "apiVersion s; kind s; metadata @meta:ObjectMeta 1; rules [atomic]@rbac:PolicyRule 2",
    "ClusterRole": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; rules [atomic]@rbac:PolicyRule 2; "
        "aggregationRule @rbac:AggregationRule 3p"),
    "RoleBinding": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; subjects [atomic]@rbac:Subject 2; "
        "roleRef! @rbac:RoleRef 3"),
    "ClusterRoleBinding": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; subjects [atomic]@rbac:Subject 2; "
        "roleRef! @rbac:RoleRef 3"),
    "PolicyRule": (
        "verbs! [atomic]s 1; apiGroups [atomic]s 2; resources [atomic]s 3; resourceNames [atomic]s 4; "
        "nonResourceURLs [atomic]s 5"),
    "AggregationRule": "clusterRoleSelectors [atomic]@meta:LabelSelector 1",
    "Subject": "kind! s 1; apiGroup s 2; name! s 3; namespace s 4",
    "RoleRef": "apiGroup! s 1; kind! s 2; name! s 3",
}

PROTOBUF_ONLY: frozenset[str] = frozenset()
