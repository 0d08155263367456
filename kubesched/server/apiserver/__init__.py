"""A Kubernetes-compatible API server over the SQLite store (``kubesched serve``).

Map of the package, outermost first::

    server.py      ApiServer: store + registry + uvicorn + housekeeping + Components
    app.py         the ASGI app: metrics and auth middleware, routes, health, /metrics
    http/          the HTTP edge: uvicorn protocol, limits, handlers (REST paths and verbs ->
                   registry calls), options, bodies, negotiation, discovery, OpenAPI, pod I/O
    authn/         authentication: token file, client certificates, ServiceAccount tokens, TLS
    authz/         authorization: RBAC, request attributes, escalation checks, the reviews
    watch/         watch semantics over the change log (api.py) and their HTTP streams (http.py)
    apply/         server-side apply: managed fields and the apply merge
    printers/      server-side printing for kubectl get
    protobuf/      protobuf field tables, decoding and encoding
    registry/      Registry: the in-process API (create/get/list/update/patch/delete),
                   deletion, subresources, selectors, patches, validation shared by kinds
    strategies/    per-kind behaviour (defaulting, validation, update rules)
    typedefs/      the served types described once (OpenAPI, field validation, apply)
    errors.py      ApiError and Kubernetes Status objects
    kubeconfig.py, bootstrap.py

Controllers and simulated nodes plug in as :class:`~.server.Component` s: they receive
the server and use ``server.registry`` (``create``/``get``/``list``/``update``/``patch``/
``delete`` and :func:`~.watch.api.open_watch` for watches), or ``server.kubeconfig`` to go
through HTTP like any other client.
"""
