"""The Go types of the kinds kubesched decodes, as :mod:`kubesched.api.schema` schemas,
derived from the declared types (:mod:`kubesched.api.types`).

Every declared kind is registered (this module owns the registry: :func:`register`,
:func:`schema_for`, :func:`check_object`), and every declared field is checked with its exact JSON
type and named in errors with its Go type (``v1.TaintEffect``, ``v1.ResourceList``,
``types.UID``), as Go's decoder does; a struct referred to but not declared is only checked
to be an object. scheduler-plugins'
``scheduling.x-k8s.io/v1alpha1`` PodGroup, a custom resource, is declared here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.schema import (
    ANY, BOOL, FLOAT64, INT32, INT64, INT_OR_STRING, QUANTITY, STRING, TIME, ListOf, MapOf, Node, Str, Struct,
    check,
)
from kubesched.api.types import GROUPS, TYPES
from kubesched.api.types.grammar import go_name

__all__ = ["NODE", "OBJECT_META", "POD", "POD_GROUP", "RESOURCE_LIST", "check_object", "register", "schema_for", "struct"]

# metav1.MicroTime unmarshals as metav1.Time does (a string first); bytes are base64 strings
_SCALARS: dict[str, Node] = {"s": STRING, "b": BOOL, "i32": INT32, "i64": INT64, "f64": FLOAT64, "q": QUANTITY,
                             "t": TIME, "mt": TIME, "x": INT_OR_STRING, "any": ANY, "j": ANY, "y": STRING}
_STRUCTS: dict[tuple[str, str], Struct] = {}


def _node(spec: str) -> Node:
    """The schema of a declared type, Go type names included (notation: :mod:`kubesched.api.types.grammar`)."""
    if spec.startswith("{"):
        name, rest = spec[1:].split("}", 1)
        go = go_name(name) if name else ("map[string][]uint8" if rest == "y" else "")
        return MapOf(_node(rest), go, key_in_path=rest != "s")  # string maps (labels ...) are named whole
    if spec.startswith("["):
        return ListOf(_node(spec.split("]", 1)[1]))
    if spec.startswith("@"):
        group, name = spec[1:].split(":", 1)
        return struct(group, name)
    if spec.endswith(">"):
        return Str(go_name(spec[spec.index("<") + 1:-1]))
    return _SCALARS[spec]


def struct(group: str, name: str) -> Struct:
    """The schema of a declared struct (made once; structs may refer to each other)."""
    key = (group, name)
    out = _STRUCTS.get(key)
    if out is None:
        out = _STRUCTS[key] = Struct(go_name(name))
        message = TYPES.get(key)
        if message is not None:  # an embedded struct's members are listed in the message itself
            out.fields.update({f.json: _node(f.go_spec) for f in message.fields if not f.embedded})
    return out


OBJECT_META = struct("meta", "ObjectMeta")
RESOURCE_LIST = MapOf(QUANTITY, "v1.ResourceList")
POD = struct("core", "Pod")
NODE = struct("core", "Node")
POD_GROUP = Struct(
    "v1alpha1.PodGroup", kind=STRING, apiVersion=STRING, metadata=OBJECT_META,
    spec=Struct("v1alpha1.PodGroupSpec", minMember=INT32, minResources=RESOURCE_LIST,
                scheduleTimeoutSeconds=INT32),
    status=Struct("v1alpha1.PodGroupStatus", phase=Str("v1alpha1.PodGroupPhase"), occupiedBy=STRING,
                  running=INT32, succeeded=INT32, failed=INT32, scheduleStartTime=TIME))



_REGISTRY: dict[str, Struct] = {}


def register(kind: str, schema: Struct) -> None:
    """Declare the schema of ``kind`` (once; a second registration is a bug). A kind whose
    name another group also uses is registered as ``<apiVersion>/<Kind>``
    (``events.k8s.io/v1/Event``)."""
    if kind in _REGISTRY and _REGISTRY[kind] is not schema:
        raise ValueError(f"a schema for {kind} is already registered")
    _REGISTRY[kind] = schema


def schema_for(kind: str, api_version: str = "") -> Struct | None:
    """The registered schema of ``kind`` (of ``api_version``), if any (the built-in kinds are
    registered when this module is imported)."""
    return _REGISTRY.get(f"{api_version}/{kind}") or _REGISTRY.get(kind)


def check_object(raw: Mapping[str, Any], kind: str | None = None, api_version: str | None = None) -> Any:
    """:func:`~kubesched.api.schema.check` an object of a registered kind (``kind`` and
    ``api_version`` default to the object's own); objects of other kinds are returned unchanged."""
    schema = schema_for(kind if kind is not None else str(raw.get("kind") or ""),
                        api_version if api_version is not None else str(raw.get("apiVersion") or ""))
    return raw if schema is None else check(raw, schema)


def _kinds() -> dict[str, Struct]:
    """Every declared kind (a message with ``apiVersion``, ``kind`` and ``metadata``), by
    kind name; a name two groups use is ``<apiVersion>/<Kind>`` outside core/v1 (the core and
    ``events.k8s.io`` Events differ)."""
    kinds = [key for key, m in TYPES.items() if m.field("apiVersion") and m.field("metadata")]
    names = [name for _, name in kinds]
    return {(name if group == "core" or names.count(name) == 1 else f"{GROUPS[group][0]}/{name}"): struct(group, name)
            for group, name in kinds}


for _kind, _schema in {**_kinds(), "PodGroup": POD_GROUP}.items():
    register(_kind, _schema)
