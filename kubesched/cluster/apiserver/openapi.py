"""The OpenAPI v3 documents kubectl needs, and no more.

kubectl 1.32 validates manifests by default (``--validate=strict``). It first asks the
server's OpenAPI v3 document whether the PATCH operation of the object's kind takes the
``fieldValidation`` query parameter; if so, it sends ``fieldValidation=Strict`` and lets
the server validate. Otherwise it validates client-side against the OpenAPI v2 schema,
and without one ``kubectl apply`` fails ("failed to download openapi"). So ``/openapi/v3``
lists one document per group-version, and each declares, for every kind, a PATCH
operation with its ``x-kubernetes-group-version-kind`` and the ``fieldValidation``
parameter. Schemas are left out: ``kubectl apply`` then computes strategic merge patches
from its compiled-in types (and JSON merge patches for PodGroups), exactly as with a
server whose OpenAPI has no schema for a kind; ``kubectl explain`` is not supported.
Older kubectl (Debian's 1.20, for one) reads ``/openapi/v2`` instead, as protobuf; it
gets a valid document without definitions, which makes it skip client-side validation
(a kind it finds no schema for is not validated) and use its compiled-in patch metadata.

The server applies ``fieldValidation`` leniently: unknown fields are kept, as with
``Ignore``, while the fields kubesched reads are validated strictly (422 with causes).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from kubesched.cluster.apiserver.resources import Resource, ResourceTable

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
    for r in resources:
        gvk = {"group": r.group, "version": r.version, "kind": r.kind}
        paths[_object_path(r)] = {"patch": {
            "operationId": f"patch{r.kind}", "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": gvk, "parameters": _PARAMS,
            "responses": {"200": {"description": "OK"}}}}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.34.1"}, "paths": paths,
            "components": {"schemas": {}}}


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


def v2_document(accept: str) -> tuple[bytes, str]:
    """An OpenAPI v2 document without paths or definitions: (body, media type)."""
    if "protobuf" in accept:
        info = _pb_string(1, "Kubernetes") + _pb_string(2, "v1.34.1")  # gnostic Info: title, version
        # Go's mime parser rejects the "@" of the protobuf media type name: say octet-stream
        return _pb_string(1, "2.0") + bytes([2 << 3 | 2, len(info)]) + info, "application/octet-stream"
    doc = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.34.1"}, "paths": {},
           "definitions": {}}
    return json.dumps(doc).encode(), "application/json"
