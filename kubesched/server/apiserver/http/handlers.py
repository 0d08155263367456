"""The REST endpoints: Kubernetes URL paths and verbs mapped onto the registry.

``/api/v1/...`` and ``/apis/<group>/<version>/...`` paths are parsed into a
:class:`Target` (resource, namespace, name, subresource) and dispatched by HTTP method:
GET (get, list, ``watch=true``), POST (create, ``binding``, ``eviction``), PUT (update),
PATCH (three patch types), DELETE (delete, deletecollection). Registry calls are blocking
(SQLite), so they run in the thread pool and a slow one never stalls the event loop; except
the hot writes with a small body (create, binding, update, JSON/merge/strategic patch), short
CPU work that runs on the loop itself and awaits its group's fsync there
(:meth:`.Store.write_on_loop`): a thread hop per write cost more than the write.

Before anything is read, :mod:`.options` checks that the path serves the method (405)
and the request's options (``dryRun``, DeleteOptions, a list's resourceVersion). Bodies
are read and decoded by :mod:`.bodies` (413, 408, 400 for malformed input); every error
is a Kubernetes ``Status``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.http import discovery
from kubesched.server.apiserver.http import metaonly
from kubesched.server.apiserver.http import negotiate
from kubesched.server.apiserver.registry import options as opts
from kubesched.server.apiserver.http import podio
from kubesched.server.apiserver.protobuf import decode as protobuf
from kubesched.server.apiserver.protobuf import encode as protobuf_encode
from kubesched.server.apiserver.registry import subresources as sub
from kubesched.server.apiserver.apply.request import MAX_MANAGER_LENGTH, check_patch_options, server_side_apply
from kubesched.server.apiserver.authn.authenticator import ANONYMOUS_USER, USER_KEY
from kubesched.server.apiserver.authz import escalation
from kubesched.server.apiserver.authz.requestinfo import query_of, request_info
from kubesched.server.apiserver.decoding import decode_body
from kubesched.server.apiserver.http.bodies import read_body
from kubesched.server.apiserver.http.fastrequest import url_path
from kubesched.server.apiserver.http.target import Target, _flag, _int, wants_table
from kubesched.server.apiserver.http.watch import watch_response
from kubesched.server.apiserver.registry.patch import APPLY
from kubesched.server.apiserver.registry.resources import Resource
from kubesched.server.apiserver.printers.tables import to_table
from kubesched.server.apiserver.typedefs.validate import validate_fields, warning_header
from kubesched.server.store import dumpb

if TYPE_CHECKING:
    from kubesched.server.apiserver.app import ApiServerState

log = logging.getLogger(__name__)

TABLE_MEDIA = "application/json;as=Table;v=v1;g=meta.k8s.io"
LOOP_WRITE_BODY = 64 * 1024  # bodies up to this size are written on the event loop
T = TypeVar("T")


def json_response(obj: Any, code: int = 200, media_type: str = "application/json") -> Response:
    return Response(dumpb(obj), status_code=code, media_type=media_type)


def status_response(exc: E.ApiError) -> Response:
    resp = json_response(exc.status(), exc.code)
    retry = (exc.details or {}).get("retryAfterSeconds")
    if retry:  # as apiserver's responsewriters.ErrorNegotiated
        resp.headers["Retry-After"] = str(retry)
    return resp


def parse_target(state: "ApiServerState", parts: list[str], accept: str = "") -> Target | Response:
    """A resource target, or a discovery response, for ``/api...`` and ``/apis...`` paths."""
    table = state.registry.table
    if parts[0] == "api":
        group, rest = "", parts[1:]
        if not rest:
            return _discovery_root(state, core=True, accept=accept)
    else:
        if len(parts) == 1:
            return _discovery_root(state, core=False, accept=accept)
        group, rest = parts[1], parts[2:]
        if not rest:
            doc = discovery.api_group(table, group)
            if doc is None:
                raise E.not_found_path()
            return json_response(doc)
    version, rest = rest[0], rest[1:]
    if not rest:
        doc = discovery.api_resource_list(table, group, version)
        if doc is None:
            raise E.not_found_path()
        return json_response(doc)
    namespace = None
    if rest[0] == "namespaces" and len(rest) >= 3 and not (len(rest) == 3 and rest[2] in ("status", "finalize")):
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3:
        raise E.not_found_path()
    res = table.find(group, version, rest[0])
    if res is None or (namespace is not None and not res.namespaced):
        raise E.not_found_path()
    name = rest[1] if len(rest) > 1 else None
    subresource = rest[2] if len(rest) > 2 else ""
    if subresource and res.subresource(subresource) is None:
        raise E.not_found_path()
    if res.namespaced and name is not None and namespace is None:
        raise E.not_found_path()
    return Target(res, namespace, name, subresource)


def _discovery_root(state: "ApiServerState", core: bool, accept: str) -> Response:
    table = state.registry.table
    media = discovery.aggregated_media_type(accept)
    if media is not None:
        return json_response(discovery.aggregated(table, core, media), media_type=media)
    if core:
        return json_response(discovery.api_versions(state.config.server_address))
    return json_response(discovery.api_group_list(table))


def field_manager(request: Request) -> str | None:
    """The manager of a write: ``fieldManager``, else the User-Agent up to its first "/" (upstream)."""
    manager = query_of(request.scope).get("fieldManager") or \
        request.headers.get("user-agent", "").split("/")[0][:MAX_MANAGER_LENGTH]
    check_patch_options(False, manager, False)
    return manager or None


def _exact_rv(q: Any) -> int | None:
    """The revision of a ``resourceVersionMatch=Exact`` list (``NotOlderThan`` and no match
    are served from the current state, which is never older than what was asked)."""
    if q.get("resourceVersionMatch") != "Exact":
        return None
    rv = _int(q, "resourceVersion")
    if rv is None or rv <= 0:
        raise E.bad_request("resourceVersionMatch=Exact requires a resourceVersion greater than 0")
    return rv


def _verb(method: str, t: Target, watch: bool) -> str:
    if method == "GET":
        return "WATCH" if watch else ("GET" if t.name else "LIST")
    if method == "POST":
        return "POST"
    if method == "DELETE":
        return "DELETE" if t.name else "DELETECOLLECTION"
    return method


async def handle(request: Request, state: "ApiServerState", t: Target) -> Response:
    q = query_of(request.scope)
    method = "GET" if request.method == "HEAD" else request.method
    watch = method == "GET" and t.name is None and request_info(request.scope).verb == "watch"
    labels = {"verb": _verb(method, t, watch), "group": t.resource.group, "version": t.resource.version,
              "resource": t.resource.plural, "subresource": t.subresource,
              "scope": "namespace" if t.namespace else ("resource" if t.name and not t.resource.namespaced
                                                       else "cluster"), "component": "apiserver"}
    request.scope["kubesched.labels"] = labels
    opts.check_method(t, method)
    if t.resource.plural == "pods" and t.name is not None:  # simulated nodes have no runtime
        if t.subresource in podio.STREAMING:
            raise podio.no_runtime(t.subresource, t.name)
        if t.subresource == "log":
            text = await run_in_threadpool(podio.logs, state.registry, t.namespace or "", t.name, q)
            return PlainTextResponse(text)
    if method == "GET":
        return await _read(request, state, t, watch)
    if method == "DELETE":
        return await _delete(request, state, t)
    dry_run = opts.dry_run(q.getlist("dryRun"), method)
    raw = await read_body(request, state.config.max_body_bytes, state.config.body_timeout)
    body = await _decode(raw, request)
    warnings = validate_fields(q, t, method, request.headers.get("content-type", ""), body, raw)
    guarded = state.policy is not None and not t.subresource and \
        escalation.watched(t.resource.plural, t.resource.group)
    if guarded:  # a dry run of the same body first: the body must stay as decoded
        await _guard_escalation(request, state, t, body)
    resp = await _write(request, state, t, body, dry_run, len(raw) <= LOOP_WRITE_BODY, owned=not guarded)
    for w in warnings:
        resp.headers.append("Warning", warning_header(w))
    return resp


async def _guard_escalation(request: Request, state: "ApiServerState", t: Target, body: Any) -> None:
    """Judge an RBAC write on what it would store (a dry run of it): upstream's escalation check."""
    assert state.policy is not None
    preview = await _write(request, state, t, body, True)
    new = (protobuf.decode(bytes(preview.body)) if preview.media_type == protobuf.MEDIA_TYPE
           else json.loads(bytes(preview.body)))
    old = None
    if t.name is not None:
        try:
            old = await run_in_threadpool(state.registry.get, t.resource, t.namespace, t.name)
        except E.ApiError:
            old = None
    user = request.scope.get(USER_KEY) or ANONYMOUS_USER
    policy = await run_in_threadpool(state.policy.policy)
    escalation.check(policy, user, t.resource.plural, t.namespace or "", new, old)


async def _on_loop_if(small: bool, state: "ApiServerState", fn: Callable[[], T]) -> T:
    """``fn()``, a registry write: on the event loop for a small body, else in the thread pool."""
    if small:
        return await state.registry.store.write_on_loop(fn)
    return await run_in_threadpool(fn)


async def _write(request: Request, state: "ApiServerState", t: Target, body: Any, dry_run: bool,
                 small: bool = False, owned: bool = False) -> Response:
    """The write; ``owned``: nothing else reads ``body`` afterwards, so a create may keep it
    instead of copying it."""
    q = query_of(request.scope)
    method = request.method
    reg = state.registry
    res, ns, name, subr = t.resource, t.namespace, t.name, t.subresource
    manager = field_manager(request)
    accept = request.headers.get("accept", "")
    if method == "POST":
        if name is None:
            obj = await _on_loop_if(small, state, lambda: reg.create(res, ns, body, dry_run=dry_run,
                                                                     field_manager=manager, owned=owned))
            return negotiate.respond(accept, obj, 201)
        if subr == "binding":
            return json_response(await _on_loop_if(small, state, lambda: sub.bind(reg, ns or "", name, body, dry_run)),
                                 201)
        if subr == "token":
            return json_response(await run_in_threadpool(state.issuer.request, reg, ns or "", name, body), 201)
        return json_response(await run_in_threadpool(sub.evict, reg, ns or "", name, body, dry_run), 201)
    assert name is not None
    ct = request.headers.get("content-type", "") if method == "PATCH" else None
    if subr == "scale":
        return json_response(await run_in_threadpool(sub.update_scale, reg, res, ns or "", name, body, ct, dry_run))
    if ct is None:
        obj = await _on_loop_if(small, state, lambda: reg.update(res, ns, name, body, subresource=subr,
                                                                 dry_run=dry_run, field_manager=manager))
        return negotiate.respond(accept, obj)
    if ct.split(";")[0].strip().lower() == APPLY:
        applied, created = await run_in_threadpool(
            lambda: server_side_apply(reg, res, ns, name, body, q.get("fieldManager") or "",
                                      _flag(q.get("force")), subr, dry_run))
        return json_response(applied, 201 if created else 200)
    check_patch_options(False, manager, "force" in q)
    obj = await _on_loop_if(small, state, lambda: reg.patch(res, ns, name, ct, body, subresource=subr,
                                                            dry_run=dry_run, field_manager=manager))
    return negotiate.respond(accept, obj)


async def _read(request: Request, state: "ApiServerState", t: Target, watch: bool) -> Response:
    q, reg = query_of(request.scope), state.registry
    res, ns, name = t.resource, t.namespace, t.name
    if name is None:
        opts.check_list_options(q, watch)
    if watch:
        return await watch_response(request, state, t)
    if name is None:
        await opts.wait_fresh(reg.store, opts.requested_rv(q.get("resourceVersion")))
        lst = await run_in_threadpool(reg.list, res, ns, label_selector=q.get("labelSelector", ""),
                                      field_selector=q.get("fieldSelector", ""), limit=_int(q, "limit") or 0,
                                      continue_=q.get("continue", ""), at_rv=_exact_rv(q))
        return _maybe_table(request, state, res, lst["items"], lst["metadata"], lst)
    if t.subresource == "scale":
        return json_response(await run_in_threadpool(sub.get_scale, reg, res, ns or "", name))
    obj = await run_in_threadpool(reg.get, res, ns, name)
    return _maybe_table(request, state, res, [obj], {"resourceVersion": obj["metadata"].get("resourceVersion")},
                        obj)


async def _delete(request: Request, state: "ApiServerState", t: Target) -> Response:
    q, reg = query_of(request.scope), state.registry
    raw = await read_body(request, state.config.max_body_bytes, state.config.body_timeout)
    body = await _decode(raw, request) if raw.strip() else None
    options = opts.delete_options(body, q)
    if t.name is None:
        out = await run_in_threadpool(reg.delete_collection, t.resource, t.namespace,
                                      label_selector=q.get("labelSelector", ""),
                                      field_selector=q.get("fieldSelector", ""), options=options)
        return json_response(out)
    obj, _removed = await run_in_threadpool(reg.delete, t.resource, t.namespace, t.name, options)
    return json_response(obj)


async def _decode(raw: bytes, request: Request) -> Any:
    """The decoded body; large ones are decoded off the event loop."""
    ct = request.headers.get("content-type", "application/json")
    if len(raw) < 64 * 1024:
        return decode_body(raw, ct)
    return await run_in_threadpool(decode_body, raw, ct)


def _maybe_table(request: Request, state: "ApiServerState", res: Resource, items: Sequence[Mapping[str, Any]],
                 list_meta: dict[str, Any], plain: dict[str, Any]) -> Response:
    if not wants_table(request):
        accept = request.headers.get("accept", "")
        if protobuf_encode.prefers_protobuf(accept):
            return negotiate.respond(accept, plain)  # JSON if the table lacks a field and JSON is accepted
        partial = metaonly.requested(accept)
        if partial is not None:
            return json_response(metaonly.convert(partial, plain, "items" in plain),
                                 media_type=metaonly.media_type(partial))
        return json_response(plain)
    include = query_of(request.scope).get("includeObject", "Metadata")
    if include not in ("None", "Metadata", "Object"):
        raise E.bad_request(f"includeObject: unsupported value {include!r}")
    table = to_table(res, items, state.registry.clock(), list_meta=list_meta, include_object=include)
    return json_response(table, media_type=TABLE_MEDIA)


async def api_endpoint(request: Request) -> Response:
    state: ApiServerState = request.app.state.kubesched
    path = url_path(request)
    parts = [p for p in path.split("/") if p]
    started = time.perf_counter()
    try:
        target = parse_target(state, parts, request.headers.get("accept", ""))
        if isinstance(target, Response):
            if request.method not in ("GET", "HEAD"):  # discovery documents are read-only
                raise E.method_not_allowed()
            return target
        return await handle(request, state, target)
    except E.ApiError as exc:
        return status_response(exc)
    except Exception as exc:  # a bug: report it as upstream reports panics, keep serving
        log.exception("%s %s failed", request.method, path)
        return status_response(E.internal(f"{type(exc).__name__}: {exc}"))
    finally:
        log.debug("%s %s %.1fms", request.method, path, (time.perf_counter() - started) * 1e3)
