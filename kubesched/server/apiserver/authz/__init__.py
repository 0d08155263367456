"""Authorization for ``kubesched serve``: the RBAC authorizer (``--authorization-mode RBAC``),
the request attributes it judges, the bootstrap roles and the self-review endpoints.

Modules, innermost first: :mod:`.rbac` (rule matching and policy evaluation, pure),
:mod:`.requestinfo` (an HTTP request parsed once, for the authorizer and the handlers
alike), :mod:`.policy` (the roles and bindings read from the store, cached until one
changes; the bootstrap roles), :mod:`.access` (a user's answers for routes that authorize
themselves, the web UI's), :mod:`.middleware` (the ASGI layer that answers 403,
SelfSubjectAccessReview and SelfSubjectRulesReview), :mod:`.reviews` (TokenReview and
SubjectAccessReview, for servers that delegate to this one).
"""
