"""The ASGI application: routes, middleware and the state handlers share.

Layers, outermost first: request metrics (every response is counted, 401s included),
what a browser page may not do (:mod:`.http.browser`), authentication (tokens, client
certificates; :mod:`.auth`), authorization (RBAC and the self reviews; :mod:`.authz`),
the reviews other servers delegate to this one (TokenReview, SubjectAccessReview;
:mod:`.authz.reviews`), then Starlette routing to the REST endpoints
(:mod:`.handlers`), discovery, ``/version``, health checks and ``/metrics``. The OpenAPI
documents are minimal (:mod:`.openapi`): enough for kubectl's server-side validation
check, and an empty ``/openapi/v2`` for older kubectl.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kubesched.api.kubeversion import default_minor
from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.http import discovery
from kubesched.server.apiserver.http import health
from kubesched.server.apiserver.http import openapi
from kubesched.server.apiserver.http.browser import AllowedHosts, BrowserGuard
from kubesched.server.apiserver.authn.authenticator import Authenticator, Authn
from kubesched.server.apiserver.authz.middleware import ALWAYS_ALLOW, RBAC, Authorizer
from kubesched.server.apiserver.authn.serviceaccount import ServiceAccountTokens
from kubesched.server.apiserver.authz.policy import PolicyCache
from kubesched.server.apiserver.authz.requestinfo import query_of
from kubesched.server.apiserver.authz.reviews import Reviews, TokenAuthenticator
from kubesched.server.apiserver.http.fastrequest import ApiRequest
from kubesched.server.apiserver.http.handlers import api_endpoint, json_response, status_response
from kubesched.server.apiserver.http.inflight import DEFAULT_MAX_MUTATING, DEFAULT_MAX_READONLY, DEFAULT_MAX_WATCHES
from kubesched.server.apiserver.http.limits import RequestLimits, kind_of
from kubesched.server.apiserver.http.metrics import CONTENT_TYPE, ApiMetrics
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.registry.tokens import ISSUER, TokenIssuer
from kubesched.server.store.watch import WATCH_BUFFER_BYTES

METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
DEFAULT_MAX_BODY = 3 * 1024 * 1024  # kube-apiserver's --max-request-bytes default


@dataclass(slots=True)
class ApiConfig:
    server_address: str = "127.0.0.1:6443"
    max_readonly: int = DEFAULT_MAX_READONLY
    max_mutating: int = DEFAULT_MAX_MUTATING
    max_watches: int = DEFAULT_MAX_WATCHES
    max_body_bytes: int = DEFAULT_MAX_BODY
    body_timeout: float = 60.0
    watch_buffer_bytes: int = WATCH_BUFFER_BYTES  # undelivered event text per watch (:mod:`.http.watch`)
    bookmark_interval: float = 60.0
    min_request_timeout: float = 1800.0
    authn: Authn = field(default_factory=Authn)
    authorization_mode: str = ALWAYS_ALLOW  # or RBAC (:mod:`.authz`)
    api_audiences: tuple[str, ...] = (ISSUER,)  # --api-audiences: what ServiceAccount tokens must be for
    extra_routes: list[BaseRoute] = field(default_factory=list)  # served before the 404 (the web UI's)
    # paths whose routes authorize each request themselves (the web UI's, :mod:`.authz.access`)
    self_authorized: Callable[[str], bool] | None = None
    listen_host: str = "127.0.0.1"  # the address bound: which Host headers name it (:mod:`.http.browser`)
    kubernetes_version: str = field(default_factory=default_minor)  # the release /version reports ("1.35")


@dataclass(slots=True)
class ApiServerState:
    registry: Registry
    config: ApiConfig
    metrics: ApiMetrics
    stopping: threading.Event = field(default_factory=threading.Event)
    ready: threading.Event = field(default_factory=threading.Event)
    issuer: TokenIssuer = field(default_factory=TokenIssuer)
    watch_waker: object = None  # watchhttp's batched wake-ups, made on the serving loop
    # the chain below authentication (authorization, then the routes): requests made in this
    # process on a user's behalf (the web UI's writes) enter here with the user in the scope
    as_user: ASGIApp | None = None
    policy: PolicyCache | None = None  # under RBAC: the policy escalation checks read
    # /debug/explain/<ns>/<pod>, set by the scheduler inside (``kubesched serve``): the pod's
    # explain document (None: never attempted) and, for ``?output=text``, the same as a table
    explain: Callable[[str, str], dict[str, Any] | None] | None = None
    explain_text: Callable[[str, str], str | None] | None = None
    # ?fixes=N: what would make the pending pod schedule (None: no scheduler inside)
    explain_fixes: Callable[[str, str, int], dict[str, Any] | None] | None = None


class RequestMetrics:
    def __init__(self, app: ASGIApp, metrics: ApiMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        code = 500

        async def send_wrapper(message: Message) -> None:
            nonlocal code
            if message["type"] == "http.response.start":
                code = message["status"]
            await send(message)

        kind = kind_of(scope)
        gauge = None if kind == "watch" else self.metrics.inflight.labels(kind)  # long-running: not in flight
        if gauge is not None:
            gauge.inc()
        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            if gauge is not None:
                gauge.dec()
            labels = scope.get("kubesched.labels") or {"verb": str(scope.get("method", "")), "component": "apiserver"}
            self.metrics.observe(labels, code, started)


def build_app(registry: Registry, config: ApiConfig | None = None) -> tuple[ASGIApp, ApiServerState]:
    config = config or ApiConfig()
    state = ApiServerState(registry, config, ApiMetrics(registry.store),
                           issuer=TokenIssuer(clock=registry.clock, audiences=config.api_audiences))

    async def version(request: Request) -> Response:
        return json_response(discovery.version_info(config.kubernetes_version))

    async def metrics(request: Request) -> Response:
        return Response(await run_in_threadpool(state.metrics.render), media_type=CONTENT_TYPE)

    async def explain(request: Request) -> Response:
        ns, name = request.path_params["namespace"], request.path_params["name"]
        text = query_of(request.scope).get("output") == "text"
        if state.explain is None:
            msg = "no scheduler runs in this server (--no-scheduler): nothing to explain"
            return PlainTextResponse(msg + "\n", 404) if text else JSONResponse({"error": msg}, 404)
        if text and state.explain_text is not None:
            body = await run_in_threadpool(state.explain_text, ns, name)
            if body is None:
                return PlainTextResponse(f"pod {ns}/{name} has no scheduling attempt\n", 404)
            return PlainTextResponse(body)
        fixes = request.query_params.get("fixes")
        if fixes is not None and state.explain_fixes is not None:
            limit = int(fixes) if fixes.isdigit() else 0
            if limit < 1:
                return JSONResponse({"error": f"fixes={fixes!r}: must be a positive integer"}, 400)
            found = await run_in_threadpool(state.explain_fixes, ns, name, limit)
            if found is None:
                return JSONResponse({"error": f"pod {ns}/{name} is not pending"}, 404)
            return JSONResponse(found)
        doc = await run_in_threadpool(state.explain, ns, name)
        if doc is None:
            return JSONResponse({"error": f"pod {ns}/{name} has no scheduling attempt"}, 404)
        return JSONResponse(doc)

    async def not_found(request: Request) -> Response:
        return status_response(E.not_found_path())

    async def openapi_root(request: Request) -> Response:
        return json_response(openapi.root(registry.table))

    async def openapi_v2(request: Request) -> Response:
        body, media = await run_in_threadpool(openapi.v2_document, request.headers.get("accept", ""), registry.table)
        return Response(body, media_type=media)

    async def openapi_gv(request: Request) -> Response:
        parts = request.path_params["rest"].strip("/").split("/")
        doc = None
        if len(parts) == 2 and parts[0] == "api":
            doc = openapi.document(registry.table, "", parts[1])
        elif len(parts) == 3 and parts[0] == "apis":
            doc = openapi.document(registry.table, parts[1], parts[2])
        if doc is None:
            return status_response(E.not_found_path())
        return json_response(doc)

    routes: list[BaseRoute] = [Route(path, _read_only(fn), methods=METHODS) for path, fn in (
        ("/version", version), ("/version/", version), ("/metrics", metrics),
        ("/openapi/v2", openapi_v2), ("/openapi/v3", openapi_root), ("/openapi/v3/{rest:path}", openapi_gv),
        ("/debug/explain/{namespace}/{name}", explain))]
    routes += [Route(p, _read_only(health.endpoint(name, name == "readyz")), methods=METHODS)
               for name in ("healthz", "livez", "readyz") for p in (f"/{name}", f"/{name}/{{rest:path}}")]
    routes += [
        Route("/api", api_endpoint, methods=METHODS), Route("/api/{rest:path}", api_endpoint, methods=METHODS),
        Route("/apis", api_endpoint, methods=METHODS), Route("/apis/{rest:path}", api_endpoint, methods=METHODS),
        *config.extra_routes,
        Route("/{rest:path}", not_found, methods=METHODS),
    ]
    app = Starlette(routes=routes)
    app.state.kubesched = state
    # as kube-apiserver's handler chain: authentication, then the in-flight limits, then authorization
    cache = PolicyCache(registry) if config.authorization_mode == RBAC else None
    state.policy = cache
    sa_tokens = ServiceAccountTokens(state.issuer, registry)
    tokens = TokenAuthenticator(config.authn.tokens, config.api_audiences, sa_tokens.authenticate)
    authorized = Authorizer(Reviews(ApiFastPath(app), tokens, cache), config.authorization_mode, cache,
                            config.self_authorized)
    state.as_user = authorized
    limited = RequestLimits(authorized, max_readonly=config.max_readonly, max_mutating=config.max_mutating,
                            max_watches=config.max_watches)
    authenticated = Authenticator(limited, config.authn, lambda t: sa_tokens.authenticate(t).user)
    guarded = BrowserGuard(authenticated, AllowedHosts(config.listen_host), check_host=not config.authn.enabled)
    return RequestMetrics(guarded, state.metrics), state


class ApiFastPath:
    """``/api...`` and ``/apis...`` straight to :func:`.handlers.api_endpoint`, the route
    Starlette's router would pick for them (it is listed before every other route that could
    match), without the router's matching and its two exception middlewares: the endpoint
    turns every exception into a ``Status`` itself. Almost every request is one of these, and
    the detour cost ~10% of the API server's CPU in a burst of creates."""

    def __init__(self, app: Starlette) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] == "http" and path.startswith("/api") and (
                path in ("/api", "/apis") or path.startswith(("/api/", "/apis/"))):
            scope["app"] = self.app  # what Request.app reads (the state)
            response = await api_endpoint(ApiRequest(scope, receive, send))
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _read_only(endpoint: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """``endpoint`` for GET and HEAD; the 405 Status for the other methods."""

    async def guarded(request: Request) -> Response:
        if request.method not in ("GET", "HEAD"):
            return status_response(E.method_not_allowed())
        return await endpoint(request)

    return guarded
