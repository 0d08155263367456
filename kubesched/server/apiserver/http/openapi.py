"""The OpenAPI documents kubectl reads: ``/openapi/v3`` (one document per group-version)
and ``/openapi/v2``.

Each v3 document declares, for every kind, a PATCH operation with its
``x-kubernetes-group-version-kind`` and the ``fieldValidation`` parameter (so kubectl
1.2x+ validates server-side, ``--validate=strict`` sending ``fieldValidation=Strict``), and
the kinds' schemas under ``components.schemas``, generated from the one description of the
served types (:mod:`.typedefs`): ``kubectl explain`` reads them, and ``kubectl apply`` takes
its strategic-merge metadata (``x-kubernetes-patch-merge-key``) from them.
``/openapi/v2`` in JSON carries the same schemas as ``definitions`` (references rewritten
to ``#/definitions/``) and a PATCH path per kind. Older kubectl (Debian's 1.20, for one)
asks for v2 as protobuf (gnostic's OpenAPIv2 message); it gets a valid document without
definitions, which makes it skip client-side validation (a kind it finds no schema for is
not validated) and use its compiled-in patch metadata.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from kubesched.server.apiserver.registry.resources import Resource, ResourceTable
from kubesched.server.apiserver.typedefs import definition_for
from kubesched.server.apiserver.typedefs.dsl import DEFS, closure, def_schema

_META = "io.k8s.apimachinery.pkg."
# the schemas upstream gives its JSON-string types
PRIMITIVES: dict[str, Any] = {
    _META + "api.resource.Quantity": {"description": "A fixed-point amount: 100m, 1Gi, 2.", "type": "string"},
    _META + "apis.meta.v1.Time": {"description": "An RFC 3339 time in seconds.", "type": "string",
                                  "format": "date-time"},
    _META + "apis.meta.v1.MicroTime": {"description": "An RFC 3339 time in microseconds.", "type": "string",
                                       "format": "date-time"},
    _META + "util.intstr.IntOrString": {"description": "An integer or a string (25%).", "type": "string",
                                        "format": "int-or-string", "x-kubernetes-int-or-string": True},
}

_PARAMS = [{"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
           for n in ("dryRun", "fieldManager", "fieldValidation", "force", "pretty")]


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _object_path(r: Resource) -> str:
    prefix = f"/{_gv_path(r.group, r.version)}"
    if r.namespaced:
        return f"{prefix}/namespaces/{{namespace}}/{r.plural}/{{name}}"
    return f"{prefix}/{r.plural}/{{name}}"


def group_versions(table: ResourceTable) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = [("", "v1")]
    for g, versions in table.groups().items():
        out.extend((g, v) for v in versions)
    return out


def document(table: ResourceTable, group: str, version: str) -> dict[str, Any] | None:
    resources = table.in_version(group, version)
    if not resources:
        return None
    paths: dict[str, Any] = {}
    names = [definition_for(r.group, r.version, r.kind) for r in resources]
    schemas: dict[str, Any] = {n: def_schema(DEFS[n]) for n in closure(names)}
    schemas.update(PRIMITIVES)
    for r in resources:
        gvk = {"group": r.group, "version": r.version, "kind": r.kind}
        paths[_object_path(r)] = {"patch": {
            "operationId": f"patch{r.kind}", "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": gvk, "parameters": _PARAMS,
            "responses": {"200": {"description": "OK"}}}}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.34.1"}, "paths": paths,
            "components": {"schemas": schemas}}


def _hash(doc: dict[str, Any]) -> str:
    return hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()


def root(table: ResourceTable) -> dict[str, Any]:
    paths = {}
    for g, v in group_versions(table):
        doc = document(table, g, v)
        if doc is not None:
            path = _gv_path(g, v)
            paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={_hash(doc)}"}
    return {"paths": paths}


def _pb_string(num: int, value: str) -> bytes:
    data = value.encode()
    return bytes([num << 3 | 2, len(data)]) + data


def _v2_refs(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (v.replace("#/components/schemas/", "#/definitions/") if k == "$ref" else _v2_refs(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_v2_refs(v) for v in value]
    return value


def v2_json(table: ResourceTable) -> dict[str, Any]:
    """The swagger 2.0 form of every group-version's document, merged."""
    paths: dict[str, Any] = {}
    definitions: dict[str, Any] = {}
    for g, v in group_versions(table):
        doc = document(table, g, v)
        if doc is None:
            continue
        definitions.update(doc["components"]["schemas"])
        for path, ops in doc["paths"].items():
            patch = dict(ops["patch"])
            patch["parameters"] = [{"name": p["name"], "in": "query", "type": "string", "uniqueItems": True}
                                   for p in patch["parameters"]]
            paths[path] = {"patch": patch}
    return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.34.1"}, "paths": paths,
            "definitions": _v2_refs(definitions)}


def v2_document(accept: str, table: ResourceTable) -> tuple[bytes, str]:
    """The OpenAPI v2 document (JSON), or a protobuf one without paths or definitions:
    (body, media type)."""
    if "protobuf" in accept:
        info = _pb_string(1, "Kubernetes") + _pb_string(2, "v1.34.1")  # gnostic Info: title, version
        # Go's mime parser rejects the "@" of the protobuf media type name: say octet-stream
        return _pb_string(1, "2.0") + bytes([2 << 3 | 2, len(info)]) + info, "application/octet-stream"
    return json.dumps(v2_json(table)).encode(), "application/json"
