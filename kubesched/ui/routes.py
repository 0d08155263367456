"""The web UI's HTTP routes, mounted by ``serve`` (read-write) and by ``run --ui`` (read-only).

``/``
    the page, for a browser (``Accept: text/html``); any other client gets ``fallback``
    (in ``serve``: the 404 ``Status`` the API server answered before the UI existed).
``/ui/static/<file>``
    the page's modules and styles, shipped in the package (no Node at run time).
``/ui/api/nodes``, ``/ui/api/pods``, ``/ui/api/pending``
    filtered pages of rows (``q``, ``offset``, ``limit``; :mod:`.views`).
``/ui/api/nodes/<name>``, ``/ui/api/pods/<ns>/<name>``, ``/ui/api/queue``, ``/ui/api/events``
    one node with its pods, one pod, the scheduling queue, recent events.
``/ui/watch/changes``
    Server-Sent Events: a ``change`` event whenever the store's revision or the queue moved,
    at most every :data:`TICK` seconds, so the page refreshes what it shows without reloads.
    The path holds ``/watch/`` so the API server counts it as a long-running request.
``/ui/api/config``
    the running configuration: its text, and its profiles as built.
``/ui/api/apply`` and ``/ui/api/delete-yaml`` (POST YAML), ``/ui/api/delete`` (POST JSON),
``/ui/api/config`` (PUT)
    writes (:mod:`.actions`); absent in read-only mode.
``/debug/explain/<ns>/<pod>`` (the API server's own route in ``serve``, the endpoints' in ``run``)
    the pod's explain document (README "Explain JSON"), which the pod page renders.

Errors are JSON ``{"error": message}`` with 400 (bad query or input), 403 (not allowed),
404, 415 (a write without its content type), 503 (no scheduler) or 500 (a bug of ours,
logged), never a traceback.

**Who may see and do what.** In ``serve`` these routes are behind authentication, and each
asks the authorizer what the equivalent API request would need, as the calling user
(:mod:`kubesched.server.apiserver.authz.access`): the node list ``list nodes``, a node
``get nodes/<name>``, a pod ``get pods/<name>`` in its namespace; the pod lists, the queue
and a node's pods show only the namespaces where the user may ``list pods``, the events
those where they may ``list events``; creations and deletions are requests to the API
server's own handlers made as that user (:mod:`.actions`). The page and its files need
authentication only (they are the package's, the same for everyone); ``mode``, the change
events (the store's revision, cluster-wide counts) and ``config`` are authorized by their
paths as non-resource URLs, as kube-scheduler's ``/configz`` is. The
writes also need a content type no web page can send without asking the server first
(``application/yaml`` or ``application/json``; see
:mod:`kubesched.server.apiserver.http.browser`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from kubesched.server.apiserver.authn.authenticator import ANONYMOUS_USER, USER_KEY
from kubesched.server.apiserver.authz.access import ACCESS_KEY, ALLOW_ALL, Access
from kubesched.server.apiserver.authz.requestinfo import query_of
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.http.bodies import read_body
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.ui import actions
from kubesched.ui.views import BadRequest, NoScheduler, Page, Views, Visible

log = logging.getLogger(__name__)

TICK = 1.0
EVENTS_SHOWN = 200
STATIC = resources.files("kubesched.ui") / "static"
CONTENT_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html", ".svg": "image/svg+xml"}
Handler = Callable[[Request], Awaitable[Response]]
# the paths whose routes authorize each request themselves (the page and its files:
# authentication only); every other /ui/ path is authorized by its path
_OWN_PATHS = frozenset({"/", "/ui/api/nodes", "/ui/api/pods", "/ui/api/pending", "/ui/api/queue",
                        "/ui/api/events", "/ui/api/apply", "/ui/api/delete-yaml", "/ui/api/delete"})
_OWN_PREFIXES = ("/ui/static/", "/ui/api/nodes/", "/ui/api/pods/")
# what a browser may send to another origin without asking it first (CORS "simple" types)
_SIMPLE_TYPES = frozenset({"", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data"})


def authorizes_itself(path: str) -> bool:
    """Whether the route of ``path`` authorizes its requests itself (see the module's docstring)."""
    return path in _OWN_PATHS or path.startswith(_OWN_PREFIXES)


@dataclass(slots=True)
class UiContext:
    """What the routes read and write. ``writable`` (``serve``): the write routes exist;
    ``registry`` and ``config`` are attached once the server and scheduler are built."""

    views: Views
    writable: bool = False
    registry: Registry | None = None
    config: actions.ConfigHolder | None = None
    stopping: threading.Event = field(default_factory=threading.Event)

    @property
    def read_only(self) -> bool:
        return not self.writable

    def access(self, request: Request) -> Access:
        """What the request's user may do. ``serve``'s authorizer always says; the read-only
        UI of ``run`` is guarded by its endpoints' own authorization."""
        access: Access | None = request.scope.get(ACCESS_KEY)
        if access is not None:
            return access
        if self.writable:
            raise ApiError(403, "Forbidden", "forbidden: the request was not authorized")
        return ALLOW_ALL


def _pods_visible(access: Access) -> Visible | None:
    """Namespaces whose pods the user may list (None: all of them)."""
    if access.allows_all:
        return None
    return lambda ns: access.allowed("list", "pods", namespace=ns)


def _error(message: str, code: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=code)


def _guarded(fn: Callable[[Request], Any]) -> Handler:
    """Run a blocking view in the thread pool; map its failures to JSON errors."""
    async def handler(request: Request) -> Response:
        try:
            out = await run_in_threadpool(fn, request)
        except BadRequest as exc:
            return _error(str(exc), 400)
        except NoScheduler as exc:
            return _error(str(exc), 503)
        except ApiError as exc:  # refused by the authorizer
            return _error(exc.message, exc.code)
        except Exception:  # noqa: BLE001 - a bug of ours: logged, answered as JSON, the server goes on
            log.exception("web UI: %s", request.url.path)
            return _error(f"{request.url.path}: internal error (see the server's log)", 500)
        if out is None:
            return _error(f"{request.url.path}: not found", 404)
        return out if isinstance(out, Response) else JSONResponse(out)
    return handler


def routes(ctx: UiContext, fallback: Handler | None = None) -> list[BaseRoute]:
    v = ctx.views

    async def index(request: Request) -> Response:
        if "text/html" not in request.headers.get("accept", "") and fallback is not None:
            return await fallback(request)
        return _static_file("index.html")

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if "/" in name or name.startswith(".") or not (STATIC / name).is_file():
            return _error(f"no static file {name}", 404)
        return _static_file(name)

    async def changes(request: Request) -> Response:
        return await _changes(ctx, request)

    def page(request: Request) -> Page:
        return Page.parse(query_of(request.scope))

    def pods(request: Request, pending: bool = False) -> Any:
        node = "" if pending else query_of(request.scope).get("node", "")
        return v.pods(page(request), pending=pending, node=node, visible=_pods_visible(ctx.access(request)))

    def nodes(request: Request) -> Any:
        ctx.access(request).require("list", "nodes")
        return v.nodes(page(request))

    def node(request: Request) -> Any:
        access, name = ctx.access(request), request.path_params["name"]
        access.require("get", "nodes", name=name)
        return v.node(name, _pods_visible(access))

    def pod(request: Request) -> Any:
        ns, name = request.path_params["namespace"], request.path_params["name"]
        ctx.access(request).require("get", "pods", namespace=ns, name=name)
        return v.pod(ns, name)

    def mode(request: Request) -> dict[str, Any]:
        live = ctx.views._live()
        return {"readOnly": ctx.read_only, "scheduler": live is not None,
                "profiles": live.profiles if live is not None else []}

    out: list[BaseRoute] = [
        Route("/", index, methods=["GET", "HEAD"]),
        Route("/ui/static/{name}", static, methods=["GET", "HEAD"]),
        Route("/ui/api/mode", _guarded(mode)),
        Route("/ui/api/nodes", _guarded(nodes)),
        Route("/ui/api/nodes/{name}", _guarded(node)),
        Route("/ui/api/pods", _guarded(pods)),
        Route("/ui/api/pending", _guarded(lambda r: pods(r, pending=True))),
        Route("/ui/api/pods/{namespace}/{name}", _guarded(pod)),
        Route("/ui/api/queue", _guarded(lambda r: v.queue(_pods_visible(ctx.access(r))))),
        Route("/ui/api/events", _guarded(lambda r: _events(ctx, r))),
        Route("/ui/api/config", _guarded(lambda r: ctx.config.current() if ctx.config else None)),
        Route("/ui/watch/changes", changes),
    ]
    if ctx.writable:
        out += _write_routes(ctx)
    return out


def _static_file(name: str) -> Response:
    path = STATIC / name
    suffix = "." + name.rsplit(".", 1)[-1]
    return FileResponse(str(path), media_type=CONTENT_TYPES.get(suffix, "application/octet-stream"),
                        headers={"Cache-Control": "no-cache"})


def _events(ctx: UiContext, request: Request) -> dict[str, Any]:
    """The newest events (in ``serve``, from the store; ``run`` has none to show)."""
    if ctx.registry is None:
        return {"items": [], "total": 0, "note": "events are shown by serve only"}
    query = query_of(request.scope)
    page = Page.parse(query, EVENTS_SHOWN)
    namespace = query.get("namespace") or ""
    access = ctx.access(request)
    if namespace:
        access.require("list", "events", namespace=namespace)
    items = ctx.registry.list("events", namespace or None)["items"]
    rows = []
    for e in items:
        if not namespace and not access.allowed("list", "events", namespace=_namespace_of(e)):
            continue
        obj = e.get("involvedObject") or {}
        ref = f"{(obj.get('kind') or '').lower()}/{obj.get('namespace', '')}/{obj.get('name', '')}".replace("//", "/")
        row = {"time": e.get("lastTimestamp") or e.get("eventTime") or (e.get("metadata") or {}).get(
                   "creationTimestamp", ""),
               "type": e.get("type", ""), "reason": e.get("reason", ""), "object": ref,
               "message": e.get("message") or e.get("note") or "", "count": e.get("count") or 1}
        if page.q and not any(page.q in str(x).lower() for x in row.values()):
            continue
        rows.append(row)
    rows.sort(key=lambda r: str(r["time"]), reverse=True)
    return {"items": list(page.cut(rows)), "total": len(rows)}


def _namespace_of(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata")
    return str(meta.get("namespace") or "") if isinstance(meta, dict) else ""


def _caller(request: Request) -> actions.Caller | None:
    """In-process API requests as the request's user (None while the server starts)."""
    chain = getattr(request.app.state.kubesched, "as_user", None)
    return None if chain is None else actions.Caller(chain, request.scope.get(USER_KEY) or ANONYMOUS_USER)


def _not_from_a_page(fn: Handler) -> Handler:
    """Refuse a write whose content type a page on another site could send without asking
    (415, the body unread)."""
    async def handler(request: Request) -> Response:
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media in _SIMPLE_TYPES:
            return _error(f"{request.method} {request.url.path}: the body needs Content-Type application/yaml or "
                          f"application/json, not {media or 'none'}", 415)
        try:
            return await fn(request)
        except ApiError as exc:  # the body over the API server's bound, or too slow (413, 408)
            return _error(f"{request.method} {request.url.path}: {exc.message}", exc.code)
    return handler


async def _body(request: Request) -> bytes:
    """The request's body, bounded in size and time as the API server bounds its own."""
    config = request.app.state.kubesched.config
    return await read_body(request, config.max_body_bytes, config.body_timeout)


def _write_routes(ctx: UiContext) -> list[BaseRoute]:
    async def apply(request: Request) -> Response:
        registry, caller = ctx.registry, _caller(request)
        if registry is None or caller is None:
            return _error("the server is starting", 503)
        text = (await _body(request)).decode("utf-8", "replace")
        act = actions.delete_all if request.url.path.endswith("/delete-yaml") else actions.create
        try:
            results = await act(caller, registry, text)
        except actions.ActionError as exc:
            return _error(str(exc), 400)
        return JSONResponse({"results": [r.to_json() for r in results],
                             "ok": all(r.ok for r in results)})

    async def delete(request: Request) -> Response:
        try:
            body = json.loads(await _body(request))
            args = [str(body.get(k) or "") for k in ("apiVersion", "kind", "namespace", "name")]
        except (ValueError, AttributeError, RecursionError):
            return _error("request body: JSON with apiVersion, kind, namespace and name expected", 400)
        if not args[1] or not args[3]:
            return _error("request body: kind and name are required", 400)
        registry, caller = ctx.registry, _caller(request)
        if registry is None or caller is None:
            return _error("the server is starting", 503)
        try:
            result = await actions.delete(caller, registry, args[0] or "v1", *args[1:])
        except actions.ActionError as exc:
            return _error(str(exc), 400)
        return JSONResponse(result.to_json(), status_code=200 if result.ok else result.code)

    async def config(request: Request) -> Response:
        holder = ctx.config
        if holder is None:
            return _error("the server is starting", 503)
        text = (await _body(request)).decode("utf-8", "replace")
        try:
            await run_in_threadpool(holder.replace, text)
        except actions.ActionError as exc:
            return JSONResponse({"error": str(exc), "kept": holder.current()}, status_code=422)
        return JSONResponse(holder.current())

    return [Route("/ui/api/apply", _not_from_a_page(apply), methods=["POST"]),
            Route("/ui/api/delete-yaml", _not_from_a_page(apply), methods=["POST"]),
            Route("/ui/api/delete", _not_from_a_page(delete), methods=["POST"]),
            Route("/ui/api/config", _not_from_a_page(config), methods=["PUT"])]


def _fingerprint(ctx: UiContext) -> str:
    """Changes when anything the page shows may have changed."""
    parts: list[str] = []
    if ctx.registry is not None:
        parts.append(str(ctx.registry.store.rv))
    live = ctx.views._live()
    if live is not None:
        parts += [str(live.loop.cycles), str(len(live.pods)), str(len(live.nodes)),
                  str(live.queue.pending()), str(id(live))]
    return ":".join(parts)


async def _changes(ctx: UiContext, request: Request) -> Response:
    async def stream() -> AsyncIterator[bytes]:
        last = None
        yield b"retry: 2000\n\n"
        while not ctx.stopping.is_set():
            now = _fingerprint(ctx)
            if now != last:
                last = now
                yield f"event: change\ndata: {json.dumps(now)}\n\n".encode()
            else:
                yield b": keep-alive\n\n"
            await asyncio.sleep(TICK)

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
