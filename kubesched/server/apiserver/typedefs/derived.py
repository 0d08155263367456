"""OpenAPI definitions derived from the declared types (:mod:`kubesched.api.types`) into the
DSL (:mod:`.dsl`), so every served kind is described field by field from one place:
``kubectl explain`` shows real fields, ``fieldValidation=Strict`` flags unknown ones and
server-side apply reads list keys and atomic structs, for Pods, Services, StatefulSets,
PDBs, RBAC, storage and DRA kinds alike.

Words come from :mod:`.descriptions`, else a short phrase made from the field name. Kinds
declared nowhere get a generic definition (:func:`generic`: metadata plus free-form spec
and status). Type notation: :mod:`kubesched.api.types.grammar`.
"""

from __future__ import annotations

import re

from kubesched.api.types import TYPES, Message
from kubesched.server.apiserver.typedefs.descriptions import FIELDS, KINDS
from kubesched.server.apiserver.typedefs.dsl import (
    ANY, BOOL, DEFS, INT32, INT64, INT_OR_STRING, MICROTIME, NUMBER, QUANTITY, STRING, TIME, Opts, T, atomic,
    define, listmap, mapof, ref,
)

PREFIX = {"core": "io.k8s.api.core.v1.", "apps": "io.k8s.api.apps.v1.", "batch": "io.k8s.api.batch.v1.",
          "policy": "io.k8s.api.policy.v1.", "rbac": "io.k8s.api.rbac.v1.", "storage": "io.k8s.api.storage.v1.",
          "resource": "io.k8s.api.resource.v1.", "events": "io.k8s.api.events.v1.",
          "scheduling": "io.k8s.api.scheduling.v1.", "coordination": "io.k8s.api.coordination.v1.",
          "autoscaling": "io.k8s.api.autoscaling.v1.", "authentication": "io.k8s.api.authentication.v1.",
          "authorization": "io.k8s.api.authorization.v1.", "meta": "io.k8s.apimachinery.pkg.apis.meta.v1."}
GROUP = {"core": "", "apps": "apps", "batch": "batch", "policy": "policy", "rbac": "rbac.authorization.k8s.io",
         "storage": "storage.k8s.io", "resource": "resource.k8s.io", "events": "events.k8s.io",
         "scheduling": "scheduling.k8s.io", "coordination": "coordination.k8s.io"}
SCALARS = {"s": STRING, "b": BOOL, "i32": INT32, "i64": INT64, "f64": NUMBER, "q": QUANTITY, "t": TIME,
           "mt": MICROTIME, "x": INT_OR_STRING, "y": T("string", "byte"), "any": ANY, "j": ANY}
_WORDS = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def phrase(name: str) -> str:
    """``minAvailable`` -> ``Min available.``; ``podCIDRs`` -> ``Pod CIDRs.``"""
    words = [w if sum(c.isupper() for c in w) > 1 else w.lower() for w in _WORDS.findall(name)]
    text = " ".join(words) or name
    return text[0].upper() + text[1:] + "."


def _full(short: str) -> str:
    group, name = short.split(":")
    return PREFIX[group] + name


def parse_type(spec: str) -> T:
    if spec.startswith("{}"):
        return mapof(parse_type(spec[2:]))
    if spec.startswith("["):
        kind, rest = spec[1:].split("]", 1)
        item = parse_type(rest)
        if kind.startswith("map="):
            return listmap(item, *kind[4:].split(","))
        if kind == "atomic":
            return atomic(item)
        list_type, _, patch = kind.partition("/")
        return T("array", item=item, list_type=list_type, patch=patch)
    if spec.startswith("@"):
        return ref(_full(spec[1:]))
    return SCALARS[spec]


def _register(m: Message) -> None:
    short = f"{m.group}:{m.name}"
    desc, words = FIELDS.get(short, (None, {}))
    members = [f for f in m.fields if not f.embedded]  # an embedded struct's members are listed in m
    fields = {f.json: parse_type(f.type)(words.get(f.json, phrase(f.json))) for f in members}
    required = tuple(f.json for f in members if f.required)
    gvk = (GROUP[m.group], "v1", m.name) if short in KINDS else None
    define(PREFIX[m.group] + m.name, KINDS.get(short) or desc or phrase(m.name),
           Opts(required, gvk=gvk, map_type="atomic" if m.atomic else ""), **fields)


def load() -> None:
    for m in TYPES.values():
        if not m.protobuf_only:
            _register(m)


_BY_GVK: dict[tuple[str, str, str], str] = {}


def generic(group: str, version: str, kind: str) -> str:
    """The definition of a kind, created open (metadata, spec, status) when not declared."""
    known = _BY_GVK.get((group, version, kind))
    if known is not None:
        return known
    for name, d in DEFS.items():
        if d.gvk == (group, version, kind):
            _BY_GVK[(group, version, kind)] = name
            return name
    pkg = (group.split(".")[0] if group else "core")
    name = f"io.k8s.api.{pkg}.{version}.{kind}"
    define(name, f"A {kind}.", Opts(open=True, gvk=(group, version, kind)),
           apiVersion=STRING("Versioned schema of this object."), kind=STRING("Kind of this object."),
           metadata=ref(PREFIX["meta"] + "ObjectMeta")("Standard object metadata."),
           spec=ANY("Desired state."), status=ANY("Observed state."))
    _BY_GVK[(group, version, kind)] = name
    return name
