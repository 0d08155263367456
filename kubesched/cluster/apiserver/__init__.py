"""A Kubernetes-compatible API server over the SQLite store (``kubesched serve``).

Map of the package, outermost first::

    server.py        ApiServer: store + registry + uvicorn + housekeeping + Components
    app.py           the ASGI app: metrics and auth middleware, routes, health, /metrics
    limits.py        in-flight limits: read-only, mutating, watches apart (429); 405 for unknown methods
    handlers.py      REST paths and verbs -> registry calls (Tables)
    options.py       verbs per path, dryRun, DeleteOptions, a list's resourceVersion
    bodies.py        request bodies: limits, JSON/YAML decoding as Go decodes them
    shapes.py        JSON types of the fields the server reads (400 naming the field)
    watchhttp.py     watch streams over HTTP (bookmarks, timeouts, 410 as ERROR event)
    discovery.py     /api, /apis, aggregated discovery, /version
    tables.py        server-side printing for kubectl get
    registry.py      Registry: the in-process API (create/get/list/update/patch/delete)
    batchwrite.py    several updates in one transaction (the simulated kubelets' status writes)
    watchapi.py      WatchStream: watch semantics (resume, selectors, initial events)
    deletion.py      graceful deletion, finalizers, namespaces, the grace-period reaper
    subresources.py  pods/binding, pods/eviction, deployments|replicasets/scale
    strategy.py      per-kind behaviour (base, namespaces, services, events)
    podstrategy.py   pods and nodes (kubesched.api defaulting and parsing)
    schedstrategy.py priorityclasses, poddisruptionbudgets, podgroups
    appsstrategy.py  deployments and replicasets
    statefulsetstrategy.py  statefulsets
    storagestrategy.py  PVs, PVCs, storage.k8s.io kinds (defaulting, validation)
    storagetables.py kubectl get columns of the storage kinds and statefulsets
    configstrategy.py  secrets (stringData, immutability) and serviceaccounts
    daemonsetstrategy.py  daemonsets and cronjobs (croniter-validated schedules)
    tokens.py        serviceaccounts/token: TokenRequest JWTs the server accepts
    podio.py         pods/log (a simulated log), exec/attach/portforward (400)
    validation.py    names, labels, annotations; DecodeError -> 422 causes
    selectors.py     labelSelector / fieldSelector parsing and matching
    patch.py         merge, JSON and strategic merge patches
    resources.py     the served resources, as data
    errors.py        ApiError and Kubernetes Status objects
    auth.py          authentication: token file, client certificates, SelfSubjectReview
    clientcert.py    the verified client certificate of a TLS connection, into the scope
    tls.py           the generated CA, serving and client certificates
    kubeconfig.py    the kubeconfig kubectl and clients use (and reading it back)
    metrics.py, bootstrap.py

Controllers and simulated nodes plug in as :class:`~.server.Component` s: they receive
the server and use ``server.registry`` (``create``/``get``/``list``/``update``/``patch``/
``delete`` and :func:`~.watchapi.open_watch` for watches), or ``server.kubeconfig`` to go
through HTTP like any other client.
"""
