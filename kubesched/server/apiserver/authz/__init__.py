"""Authorization for ``kubesched serve``: the RBAC authorizer (``--authorization-mode RBAC``),
the request attributes it judges, the bootstrap roles and the self-review endpoints.

Modules, innermost first: :mod:`.rbac` (rule matching and policy evaluation, pure),
:mod:`.requestinfo` (an HTTP request as authorization attributes), :mod:`.policy` (the
roles and bindings read from the store, cached until one changes; the bootstrap roles),
:mod:`.middleware` (the ASGI layer that answers 403, SelfSubjectAccessReview and
SelfSubjectRulesReview).
"""
