"""The list and map semantics server-side apply needs, read from the type descriptions.

Server-side apply merges lists according to ``x-kubernetes-list-type``: ``map`` lists
merge item by item, identified by ``x-kubernetes-list-map-keys``; ``set`` lists merge
scalar by scalar; every other list (``atomic``, and lists without the extension) is
replaced whole and owned as one field. Structs marked ``x-kubernetes-map-type: atomic``
(label selectors, owner references, ...) are likewise owned whole.

A field path is given as ``names``: the definition name of the object's kind first
(:func:`kubesched.server.apiserver.typedefs.definition_for`), then the field names (and
map keys) down to the field. Kinds and fields the descriptions in :mod:`..typedefs` cover
are resolved there (the same facts the OpenAPI documents publish); under open
definitions the name tables below apply (facts of k8s.io/api v1.34's struct tags
``listType``/``listMapKey``/``structType``). A key field missing from an item takes its
schema default (``protocol: TCP``), as structured-merge-diff does, so a port written
without a protocol and the stored, defaulted port are the same item.
"""

from __future__ import annotations

import functools
from typing import Literal

from kubesched.server.apiserver.typedefs.dsl import DEFS, T

ListKind = Literal["atomic", "set", "map"]

# field name -> list-map keys (the same wherever the field appears in the served types)
_MAP_KEYS: dict[str, tuple[str, ...]] = {
    "containers": ("name",), "initContainers": ("name",), "ephemeralContainers": ("name",),
    "volumes": ("name",), "env": ("name",), "volumeMounts": ("mountPath",),
    "volumeDevices": ("devicePath",), "imagePullSecrets": ("name",), "conditions": ("type",),
    "ownerReferences": ("uid",), "hostAliases": ("ip",), "resourceClaims": ("name",),
    "schedulingGates": ("name",), "topologySpreadConstraints": ("topologyKey", "whenUnsatisfiable"),
    "podIPs": ("ip",), "hostIPs": ("ip",), "claims": ("name",), "containerStatuses": ("name",),
    "initContainerStatuses": ("name",),
}
# ports of a container are keyed by containerPort and protocol, a Service's by port and protocol
_CONTAINER_PORTS = ("containerPort", "protocol")
_SERVICE_PORTS = ("port", "protocol")
_SETS = frozenset({"finalizers", "podCIDRs"})
# structs owned as a whole (structType=atomic / mapType=atomic)
_ATOMIC_MAPS = frozenset({
    "selector", "labelSelector", "namespaceSelector", "fieldRef", "resourceFieldRef",
    "secretKeyRef", "configMapKeyRef", "targetRef", "claimRef", "dataSource", "dataSourceRef",
})
# schema defaults of list-map key fields
KEY_DEFAULTS: dict[str, object] = {"protocol": "TCP"}
_CONTAINER_FIELDS = frozenset({"containers", "initContainers", "ephemeralContainers"})


def _resolve(names: tuple[str, ...]) -> T | None:
    """The described type at ``names`` (root definition first), or None if not described."""
    if not names or names[0] not in DEFS:
        return None
    t: T | None = T("ref", ref=names[0])
    for n in names[1:]:
        while t is not None and t.kind == "array":
            t = t.item
        if t is None:
            return None
        if t.kind == "map":
            t = t.item
        elif t.kind == "ref" and t.ref in DEFS:
            t = DEFS[t.ref].fields.get(n)
        else:
            return None
    return t


@functools.lru_cache(maxsize=16384)  # pure: DEFS is complete once typedefs is imported
def list_kind(names: tuple[str, ...]) -> tuple[ListKind, tuple[str, ...]]:
    """The kind of the list at the field path ``names`` (root definition, then field names), and its keys."""
    t = _resolve(names)
    if t is not None and t.kind == "array":
        if t.list_type == "map":
            return "map", t.keys
        return ("set", ()) if t.list_type == "set" else ("atomic", ())
    names = names[1:]
    field = names[-1] if names else ""
    if field == "ports":
        if len(names) >= 2 and names[-2] in _CONTAINER_FIELDS:
            return "map", _CONTAINER_PORTS
        if names[:2] == ("spec", "ports"):
            return "map", _SERVICE_PORTS
        return "atomic", ()
    if field in _SETS:
        return "set", ()
    keys = _MAP_KEYS.get(field)
    if keys is not None and names and names[0] in ("spec", "status", "metadata", "template"):
        return "map", keys
    return "atomic", ()


@functools.lru_cache(maxsize=16384)
def atomic_map(names: tuple[str, ...]) -> bool:
    """Whether the object at ``names`` (root definition, then field names) is owned as one field."""
    t = _resolve(names)
    if t is not None and t.kind != "object":
        return t.map_type == "atomic" or (t.kind == "ref" and t.ref in DEFS and DEFS[t.ref].map_type == "atomic")
    names = names[1:]
    return bool(names) and names[-1] in _ATOMIC_MAPS and names[0] != "metadata"
