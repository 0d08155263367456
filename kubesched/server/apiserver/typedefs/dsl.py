"""The one description of the served types: fields, JSON types, formats, required fields,
list semantics (``x-kubernetes-list-type``/``-list-map-keys``), patch strategies.

Why: the OpenAPI documents (``kubectl explain``), ``fieldValidation`` (unknown fields) and
server-side apply's list keys must agree, so they all read these definitions. Field names,
types, formats, required fields and list semantics are facts of k8s.io/api v1.34 (its
published OpenAPI); descriptions are our own short words.

A definition whose fields are not all listed is ``open``: explain shows what is listed and
unknown fields under it are not reported (kubesched never drops them either).
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class T:
    """A field's type: a JSON type (``string``, ``integer``, ...), ``array``, ``map`` or ``ref``."""

    kind: str
    fmt: str = ""
    item: T | None = None
    ref: str = ""
    list_type: str = ""
    keys: tuple[str, ...] = ()
    patch: str = ""
    merge_key: str = ""
    map_type: str = ""
    desc: str = ""

    def __call__(self, desc: str) -> T:
        return dataclasses.replace(self, desc=desc)


@dataclasses.dataclass(frozen=True)
class Def:
    name: str
    desc: str
    fields: dict[str, T]
    required: tuple[str, ...] = ()
    open: bool = False
    gvk: tuple[str, str, str] | None = None
    map_type: str = ""


STRING = T("string")
BOOL = T("boolean")
INT32 = T("integer", "int32")
INT64 = T("integer", "int64")
NUMBER = T("number", "double")
QUANTITY = T("ref", ref="io.k8s.apimachinery.pkg.api.resource.Quantity")
TIME = T("ref", ref="io.k8s.apimachinery.pkg.apis.meta.v1.Time")
MICROTIME = T("ref", ref="io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime")
INT_OR_STRING = T("ref", ref="io.k8s.apimachinery.pkg.util.intstr.IntOrString")
ANY = T("object")
STRING_MAP = T("map", item=STRING)
STRING_SET = T("array", item=STRING, list_type="set", patch="merge")
STRING_LIST = T("array", item=STRING, list_type="atomic")

DEFS: dict[str, Def] = {}


def ref(name: str) -> T:
    return T("ref", ref=name)


def atomic(item: T) -> T:
    return T("array", item=item, list_type="atomic")


def listmap(item: T, *keys: str, merge_key: str = "") -> T:
    """An associative list keyed by ``keys``; ``merge_key``: its strategic-merge key (default: the first key)."""
    return T("array", item=item, list_type="map", keys=keys, patch="merge", merge_key=merge_key or keys[0])


def mapof(item: T) -> T:
    return T("map", item=item)


@dataclasses.dataclass(frozen=True)
class Opts:
    """Options of a definition: required fields, open (not all fields listed), its kind, map type."""

    required: tuple[str, ...] = ()
    open: bool = False
    gvk: tuple[str, str, str] | None = None
    map_type: str = ""


def define(name: str, desc: str, opts: Opts | tuple[str, ...] = (), /, **fields: T) -> T:
    """Register a definition (``opts``: an :class:`Opts` or just the required fields); return a reference."""
    o = opts if isinstance(opts, Opts) else Opts(required=opts)
    DEFS[name] = Def(name, desc, dict(fields), o.required, o.open, o.gvk, o.map_type)
    return ref(name)


def resolve(t: T) -> Def | None:
    return DEFS.get(t.ref) if t.kind == "ref" else None


def schema_of(t: T) -> dict[str, Any]:
    """The OpenAPI v3 schema of a field type."""
    out: dict[str, Any]
    if t.kind == "ref":
        out = {"allOf": [{"$ref": f"#/components/schemas/{t.ref}"}]} if t.desc else \
            {"$ref": f"#/components/schemas/{t.ref}"}
    elif t.kind == "array":
        assert t.item is not None
        out = {"type": "array", "items": schema_of(t.item)}
        if t.list_type:
            out["x-kubernetes-list-type"] = t.list_type
        if t.keys:
            out["x-kubernetes-list-map-keys"] = list(t.keys)
        if t.patch:
            out["x-kubernetes-patch-strategy"] = t.patch
        if t.merge_key:
            out["x-kubernetes-patch-merge-key"] = t.merge_key
    elif t.kind == "map":
        assert t.item is not None
        out = {"type": "object", "additionalProperties": schema_of(t.item)}
    elif t.kind == "object":
        out = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    else:
        out = {"type": t.kind}
        if t.fmt:
            out["format"] = t.fmt
    if t.desc:
        out["description"] = t.desc
    if t.map_type:
        out["x-kubernetes-map-type"] = t.map_type
    return out


def def_schema(d: Def) -> dict[str, Any]:
    out: dict[str, Any] = {"description": d.desc, "type": "object",
                           "properties": {k: schema_of(v) for k, v in d.fields.items()}}
    if d.required:
        out["required"] = list(d.required)
    if d.gvk is not None:
        out["x-kubernetes-group-version-kind"] = [{"group": d.gvk[0], "version": d.gvk[1], "kind": d.gvk[2]}]
    if d.map_type:
        out["x-kubernetes-map-type"] = d.map_type
    if d.open:
        out["x-kubernetes-preserve-unknown-fields"] = True
    return out


def closure(roots: list[str]) -> list[str]:
    """The definitions ``roots`` refer to, transitively (roots first)."""
    seen: list[str] = []
    todo = list(roots)
    while todo:
        name = todo.pop(0)
        if name in seen or name not in DEFS:
            continue
        seen.append(name)
        for t in DEFS[name].fields.values():
            while t.item is not None:
                t = t.item
            if t.kind == "ref":
                todo.append(t.ref)
    return seen
