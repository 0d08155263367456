"""The REST endpoints: Kubernetes URL paths and verbs mapped onto the registry.

``/api/v1/...`` and ``/apis/<group>/<version>/...`` paths are parsed into a
:class:`Target` (resource, namespace, name, subresource) and dispatched by HTTP method:
GET (get, list, ``watch=true``), POST (create, ``binding``, ``eviction``), PUT (update),
PATCH (three patch types), DELETE (delete, deletecollection). Registry calls are blocking
(SQLite), so they run in the thread pool and a slow write never stalls the event loop.

Bodies are read with a size limit (413) and a time limit (408), decoded as JSON (or
YAML) with a 400 for malformed input; every error is a Kubernetes ``Status``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from kubesched.cluster.apiserver import discovery, errors as E, metaonly, podio, protobuf, protobuf_encode
from kubesched.cluster.apiserver import subresources as sub
from kubesched.cluster.apiserver.apply.request import MAX_MANAGER_LENGTH, check_patch_options, server_side_apply
from kubesched.cluster.apiserver.patch import APPLY
from kubesched.cluster.apiserver.resources import Resource
from kubesched.cluster.apiserver.tables import to_table
from kubesched.cluster.apiserver.typedefs.validate import validate_fields, warning_header
from kubesched.cluster.store import dumps

if TYPE_CHECKING:
    from kubesched.cluster.apiserver.app import ApiServerState

log = logging.getLogger(__name__)

TABLE_MEDIA = "application/json;as=Table;v=v1;g=meta.k8s.io"


@dataclass(frozen=True, slots=True)
class Target:
    resource: Resource
    namespace: str | None
    name: str | None
    subresource: str


def json_response(obj: Any, code: int = 200, media_type: str = "application/json") -> Response:
    return Response(dumps(obj).encode(), status_code=code, media_type=media_type)


def status_response(exc: E.ApiError) -> Response:
    return json_response(exc.status(), exc.code)


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


async def read_body(request: Request, limit: int, timeout: float) -> bytes:
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise E.too_large(limit)
    chunks: list[bytes] = []
    size = 0

    async def collect() -> None:
        nonlocal size
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise E.too_large(limit)
            chunks.append(chunk)

    try:
        await asyncio.wait_for(collect(), timeout)
    except asyncio.TimeoutError:
        raise E.ApiError(408, "Timeout", "request body was not received in time") from None
    return b"".join(chunks)


def decode_body(raw: bytes, content_type: str) -> Any:
    ct = content_type.split(";")[0].strip().lower()
    if not raw.strip():
        raise E.bad_request("the request body is empty")
    if ct == protobuf.MEDIA_TYPE:
        return protobuf.decode(raw)
    if ct not in ("", "application/json", "*/*") and not ct.endswith("+json") and "yaml" not in ct:
        raise E.ApiError(415, "UnsupportedMediaType", 'the body of the request was in an unknown format - '
                         'accepted media types include: application/json, application/yaml, '
                         'application/vnd.kubernetes.protobuf')
    if ct in ("application/yaml", "application/x-yaml", "text/yaml", "application/apply-patch+yaml"):
        try:
            return yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            raise E.bad_request(f"couldn't get version/kind; yaml parse error: {exc}") from None
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise E.bad_request(f"couldn't get version/kind; json parse error: {exc}") from None


def field_manager(request: Request) -> str | None:
    """The manager of a write: ``fieldManager``, else the User-Agent up to its first "/" (upstream)."""
    manager = request.query_params.get("fieldManager") or \
        request.headers.get("user-agent", "").split("/")[0][:MAX_MANAGER_LENGTH]
    check_patch_options(False, manager, False)
    return manager or None


def _flag(value: str | None) -> bool:
    return (value or "").lower() in ("true", "1")


def _int(q: Any, key: str) -> int | None:
    v = q.get(key)
    if v in (None, ""):
        return None
    try:
        return int(v)
    except ValueError:
        raise E.bad_request(f"invalid {key}: {v!r}") from None


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
    q = request.query_params
    method = request.method
    watch = method == "GET" and t.name is None and _flag(q.get("watch"))
    labels = {"verb": _verb(method, t, watch), "group": t.resource.group, "version": t.resource.version,
              "resource": t.resource.plural, "subresource": t.subresource,
              "scope": "namespace" if t.namespace else ("resource" if t.name and not t.resource.namespaced
                                                       else "cluster"), "component": "apiserver"}
    request.scope["kubesched.labels"] = labels
    reg = state.registry
    res, ns, name, subr = t.resource, t.namespace, t.name, t.subresource
    dry_run = bool(q.get("dryRun"))
    if res.plural == "pods" and subr in podio.STREAMING and name is not None:
        raise podio.no_runtime(subr, name)
    if method == "GET" and res.plural == "pods" and subr == "log" and name is not None:
        text = await run_in_threadpool(podio.logs, reg, ns or "", name, q)
        return PlainTextResponse(text)
    if method == "GET":
        if watch:
            from kubesched.cluster.apiserver.watchhttp import watch_response

            return await watch_response(request, state, t)
        if name is None:
            lst = await run_in_threadpool(reg.list, res, ns, label_selector=q.get("labelSelector", ""),
                                          field_selector=q.get("fieldSelector", ""), limit=_int(q, "limit") or 0,
                                          continue_=q.get("continue", ""), at_rv=_exact_rv(q))
            return _maybe_table(request, state, res, lst["items"], lst["metadata"], lst)
        if subr == "scale":
            return json_response(await run_in_threadpool(sub.get_scale, reg, res, ns or "", name))
        obj = await run_in_threadpool(reg.get, res, ns, name)
        return _maybe_table(request, state, res, [obj], {"resourceVersion": obj["metadata"].get("resourceVersion")},
                            obj)
    if method == "DELETE":
        options = await _delete_options(request, state)
        if name is None:
            if res.plural == "namespaces":
                raise E.method_not_allowed()
            out = await run_in_threadpool(reg.delete_collection, res, ns, label_selector=q.get("labelSelector", ""),
                                          field_selector=q.get("fieldSelector", ""), options=options)
            return json_response(out)
        obj, _removed = await run_in_threadpool(reg.delete, res, ns, name, options)
        return json_response(obj)
    raw = await read_body(request, state.config.max_body_bytes, state.config.body_timeout)
    body = decode_body(raw, request.headers.get("content-type", "application/json"))
    warnings = validate_fields(q, t, method, request.headers.get("content-type", ""), body, raw)
    resp = await _write(request, state, t, body, dry_run)
    for w in warnings:
        resp.headers.append("Warning", warning_header(w))
    return resp


async def _write(request: Request, state: "ApiServerState", t: Target, body: Any, dry_run: bool) -> Response:
    q = request.query_params
    method = request.method
    reg = state.registry
    res, ns, name, subr = t.resource, t.namespace, t.name, t.subresource
    manager = field_manager(request)
    if method == "POST":
        if name is None:
            obj = await run_in_threadpool(lambda: reg.create(res, ns, body, dry_run=dry_run, field_manager=manager))
            return json_response(obj, 201)
        if subr == "binding" and res.plural == "pods":
            return json_response(await run_in_threadpool(sub.bind, reg, ns or "", name, body), 201)
        if subr == "eviction" and res.plural == "pods":
            return json_response(await run_in_threadpool(sub.evict, reg, ns or "", name, body), 201)
        if subr == "token" and res.plural == "serviceaccounts":
            return json_response(await run_in_threadpool(state.issuer.request, reg, ns or "", name, body), 201)
        raise E.method_not_allowed()
    if name is None or subr not in ("", "status", "scale"):
        raise E.method_not_allowed()
    if method == "PUT":
        if subr == "scale":
            return json_response(await run_in_threadpool(sub.update_scale, reg, res, ns or "", name, body))
        obj = await run_in_threadpool(lambda: reg.update(res, ns, name, body, subresource=subr, dry_run=dry_run,
                                                         field_manager=manager))
        return json_response(obj)
    if method == "PATCH":
        ct = request.headers.get("content-type", "")
        if subr == "scale":
            return json_response(await run_in_threadpool(sub.update_scale, reg, res, ns or "", name, body, ct))
        if ct.split(";")[0].strip().lower() == APPLY:
            applied, created = await run_in_threadpool(
                lambda: server_side_apply(reg, res, ns, name, body, q.get("fieldManager") or "",
                                          _flag(q.get("force")), subr, dry_run))
            return json_response(applied, 201 if created else 200)
        check_patch_options(False, manager, "force" in q)
        obj = await run_in_threadpool(lambda: reg.patch(res, ns, name, ct, body, subresource=subr,
                                                        dry_run=dry_run, field_manager=manager))
        return json_response(obj)
    raise E.method_not_allowed()


async def _delete_options(request: Request, state: "ApiServerState") -> dict[str, Any]:
    q = request.query_params
    options: dict[str, Any] = {}
    raw = await read_body(request, state.config.max_body_bytes, state.config.body_timeout)
    if raw.strip():
        body = decode_body(raw, request.headers.get("content-type", "application/json"))
        if not isinstance(body, dict):
            raise E.bad_request("the body of a delete request must be a DeleteOptions object")
        options.update(body)
    grace = _int(q, "gracePeriodSeconds")
    if grace is not None:
        options["gracePeriodSeconds"] = grace
    if q.get("propagationPolicy"):
        options["propagationPolicy"] = q["propagationPolicy"]
    if q.get("dryRun"):
        options["dryRun"] = [q["dryRun"]]
    policy = options.get("propagationPolicy")
    if policy not in (None, "Orphan", "Background", "Foreground"):
        raise E.invalid("DeleteOptions", "", "", [("FieldValueNotSupported", "propagationPolicy",
                                                   f'Unsupported value: "{policy}": supported values: '
                                                   '"Foreground", "Background", "Orphan"')])
    return options


def wants_table(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "as=Table" in accept.replace(" ", "")


def _maybe_table(request: Request, state: "ApiServerState", res: Resource, items: Sequence[Mapping[str, Any]],
                 list_meta: dict[str, Any], plain: dict[str, Any]) -> Response:
    if not wants_table(request):
        accept = request.headers.get("accept", "")
        if protobuf_encode.prefers_protobuf(accept):
            try:
                return Response(protobuf_encode.encode(plain), media_type=protobuf.MEDIA_TYPE)
            except protobuf_encode.CannotEncode:
                pass  # a field outside the table: JSON, which the client accepts too
        partial = metaonly.requested(accept)
        if partial is not None:
            return json_response(metaonly.convert(partial, plain, "items" in plain),
                                 media_type=metaonly.media_type(partial))
        return json_response(plain)
    include = request.query_params.get("includeObject", "Metadata")
    if include not in ("None", "Metadata", "Object"):
        raise E.bad_request(f"includeObject: unsupported value {include!r}")
    table = to_table(res, items, state.registry.clock(), list_meta=list_meta, include_object=include)
    return json_response(table, media_type=TABLE_MEDIA)


async def api_endpoint(request: Request) -> Response:
    state: ApiServerState = request.app.state.kubesched
    parts = [p for p in request.url.path.split("/") if p]
    started = time.perf_counter()
    try:
        target = parse_target(state, parts, request.headers.get("accept", ""))
        if isinstance(target, Response):
            return target
        return await handle(request, state, target)
    except E.ApiError as exc:
        return status_response(exc)
    except Exception as exc:  # a bug: report it as upstream reports panics, keep serving
        log.exception("%s %s failed", request.method, request.url.path)
        return status_response(E.internal(f"{type(exc).__name__}: {exc}"))
    finally:
        log.debug("%s %s %.1fms", request.method, request.url.path, (time.perf_counter() - started) * 1e3)
