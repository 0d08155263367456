"""The JSON types of the fields the API server itself reads, checked before any strategy
touches a body.

kube-apiserver decodes every body into Go structs, so ``"metadata": []`` or
``"labels": {"a": 5}`` never reach its registry: the decoder answers 400
``Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal array into Go
struct field Pod.metadata of type v1.ObjectMeta``. This server keeps objects as JSON, so
it checks the same shapes up front, for object metadata and the fields of each kind that
the registry, strategies, subresources, tables and selectors use. The scheduling fields
of pods and nodes (containers, tolerations, taints, ...) are decoded and checked by
``kubesched.api`` (its ``DecodeError`` becomes a 422 naming the field).

:data:`READS` lists the fields per kind; their JSON types come from the declared types
(:mod:`kubesched.api.types`). A schema is a Python type (``str``, ``int``, ``bool``,
``dict`` for any object), a tuple of types (``int`` or ``str`` for IntOrString), ``[t]``
for a list of ``t``, ``{"*": t}`` for a map of ``t``, or a dict of field schemas for an
object with known fields.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kubesched.api.types import TYPES, ref
from kubesched.server.apiserver import errors as E

Schema = Any
STRMAP: Schema = {"*": str}
# the JSON types of the declared types (notation: kubesched.api.types.grammar); Quantity, Time and bytes are strings
_PY: dict[str, Schema] = {"s": str, "q": str, "t": str, "mt": str, "y": str, "b": bool, "i32": int, "i64": int,
                          "f64": float, "x": (int, str), "any": dict, "j": dict}
# the fields this server reads: kind -> (the groups declaring it, first match wins; field paths)
_META_READS = (
    "name", "generateName", "namespace", "uid", "resourceVersion", "selfLink", "creationTimestamp",
    "deletionTimestamp", "generation", "deletionGracePeriodSeconds", "labels", "annotations", "finalizers",
    "managedFields", "ownerReferences.apiVersion", "ownerReferences.kind", "ownerReferences.name",
    "ownerReferences.uid", "ownerReferences.controller", "ownerReferences.blockOwnerDeletion")
READS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "Pod": (("core",), (
        "spec.nodeName", "spec.schedulerName", "spec.priorityClassName", "spec.priority", "spec.restartPolicy",
        "spec.serviceAccountName", "spec.hostNetwork", "spec.nodeSelector", "spec.terminationGracePeriodSeconds",
        "status.phase", "status.podIP", "status.podIPs.ip", "status.nominatedNodeName", "status.conditions.type",
        "status.conditions.status", "status.conditions.reason", "status.conditions.message")),
    "Node": (("core",), (
        "spec.unschedulable", "spec.podCIDR", "spec.providerID", "status.conditions.type",
        "status.conditions.status", "status.addresses.type", "status.addresses.address", "status.capacity",
        "status.allocatable")),
    "Namespace": (("core",), (
        "spec.finalizers", "status.phase")),
    "Service": (("core",), (
        "spec.selector", "spec.type", "spec.clusterIP", "spec.clusterIPs", "spec.ports.name", "spec.ports.protocol",
        "spec.ports.port", "spec.ports.targetPort", "spec.ports.nodePort")),
    "ConfigMap": (("core",), (
        "data", "binaryData", "immutable")),
    "Event": (("core", "events"), (
        "involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
        "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath", "regarding.kind",
        "regarding.namespace", "regarding.name", "regarding.uid", "regarding.apiVersion",
        "regarding.resourceVersion", "regarding.fieldPath", "related.kind", "related.namespace", "related.name",
        "related.uid", "related.apiVersion", "related.resourceVersion", "related.fieldPath", "reason", "message",
        "note", "type", "action", "count", "deprecatedCount", "firstTimestamp", "lastTimestamp", "eventTime",
        "reportingComponent", "reportingController", "reportingInstance", "source.component", "source.host",
        "deprecatedSource.component", "deprecatedSource.host", "series.count", "series.lastObservedTime")),
    "PriorityClass": (("scheduling",), (
        "value", "globalDefault", "description", "preemptionPolicy")),
    "PodDisruptionBudget": (("policy",), (
        "spec.minAvailable", "spec.maxUnavailable", "spec.selector.matchLabels",
        "spec.selector.matchExpressions.key", "spec.selector.matchExpressions.operator",
        "spec.selector.matchExpressions.values", "spec.unhealthyPodEvictionPolicy", "status.disruptionsAllowed",
        "status.currentHealthy", "status.desiredHealthy", "status.expectedPods", "status.observedGeneration",
        "status.disruptedPods", "status.conditions")),
    "Lease": (("coordination",), (
        "spec.holderIdentity", "spec.leaseDurationSeconds", "spec.leaseTransitions", "spec.acquireTime",
        "spec.renewTime")),
    "Deployment": (("apps",), (
        "spec.replicas", "spec.selector.matchLabels", "spec.selector.matchExpressions.key",
        "spec.selector.matchExpressions.operator", "spec.selector.matchExpressions.values",
        *(f"spec.template.metadata.{p}" for p in _META_READS), "spec.template.spec", "spec.minReadySeconds",
        "spec.paused", "spec.strategy.type", "spec.strategy.rollingUpdate.maxSurge",
        "spec.strategy.rollingUpdate.maxUnavailable", "spec.revisionHistoryLimit", "spec.progressDeadlineSeconds",
        "status.replicas", "status.readyReplicas", "status.availableReplicas", "status.updatedReplicas",
        "status.observedGeneration", "status.conditions")),
    "ReplicaSet": (("apps",), (
        "spec.replicas", "spec.selector.matchLabels", "spec.selector.matchExpressions.key",
        "spec.selector.matchExpressions.operator", "spec.selector.matchExpressions.values",
        *(f"spec.template.metadata.{p}" for p in _META_READS), "spec.template.spec", "spec.minReadySeconds",
        "status.replicas", "status.readyReplicas", "status.availableReplicas", "status.observedGeneration",
        "status.conditions")),
}


def _typed(spec: str, rest: list[str]) -> Schema:
    if spec.startswith("["):
        return [_typed(spec.split("]", 1)[1], rest)]
    if spec.startswith("{}"):
        return {"*": _typed(spec[2:], rest)}
    target = ref(spec)
    if target is not None:
        return _declared((target[0],), target[1], rest) if rest else dict
    return _PY[spec]


def _declared(groups: tuple[str, ...], name: str, paths: Iterable[str]) -> dict[str, Schema]:
    """The schema of the listed fields of a declared type, with their declared JSON types."""
    firsts: dict[str, list[str]] = {}
    for path in paths:
        head, _, rest = path.partition(".")
        firsts.setdefault(head, []).extend([rest] if rest else [])
    out: dict[str, Schema] = {}
    for head, subpaths in firsts.items():
        field = next(f for f in (TYPES[(g, name)].field(head) for g in groups if (g, name) in TYPES) if f)
        out[head] = _typed(field.type, subpaths)
    return out


OBJECT_META: Schema = _declared(("meta",), "ObjectMeta", _META_READS)
KINDS: dict[str, Schema] = {kind: _declared(groups, kind, paths) for kind, (groups, paths) in READS.items()}
KINDS["PodGroup"] = {"spec": {"minMember": int, "scheduleTimeoutSeconds": int, "minResources": STRMAP}}  # a CRD
_GO_TYPES: dict[Any, str] = {str: "string", int: "int64", bool: "bool", dict: "object", float: "float64"}


def json_type(value: Any) -> str:
    for t, name in ((bool, "bool"), (dict, "object"), (list, "array"), (str, "string")):
        if isinstance(value, t):
            return name
    return "number"


def _want(schema: Schema) -> str:
    if isinstance(schema, tuple):
        return "intstr.IntOrString"
    if isinstance(schema, list):
        return "[]" + _want(schema[0])
    if isinstance(schema, dict):
        return "map[string]" + _want(schema["*"]) if "*" in schema else "object"
    return _GO_TYPES.get(schema, "value")


def _fits(value: Any, schema: Schema) -> bool:
    if isinstance(schema, tuple):
        return any(_fits(value, s) for s in schema)
    if isinstance(schema, list):
        return isinstance(value, list)
    if isinstance(schema, dict):
        return isinstance(value, dict)
    if schema is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, schema)


def _where(kind: str, node: Any) -> str:
    """The field path of a ``(parent, key)`` chain: ``Pod.status.conditions[0].type``."""
    parts: list[str] = []
    while node is not None:
        node, key = node
        parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    return kind + "".join(reversed(parts))


_ROOTS: dict[str, Schema] = {}


def _root(kind: str) -> Schema:
    schema = _ROOTS.get(kind)
    if schema is None:
        schema = _ROOTS[kind] = {"apiVersion": str, "kind": str, "metadata": OBJECT_META, "spec": dict,
                                 "status": dict, **KINDS.get(kind, {})}
    return schema


def _ok(value: Any, sch: Schema) -> bool:
    """Whether every field of ``value`` that ``sch`` describes fits it: the same pairs of
    value and schema :func:`check` visits, in any order, stopping at the first misfit."""
    if value is None:
        return True
    t = type(sch)
    if t is type:
        if sch is int:
            return isinstance(value, int) and not isinstance(value, bool)
        return isinstance(value, sch)
    if t is tuple:
        return _fits(value, sch)
    if t is list:
        if type(value) is not list:
            return isinstance(value, list) and all(_ok(v, sch[0]) for v in value)
        item = sch[0]
        return all(_ok(v, item) for v in value)
    if not isinstance(value, dict):
        return False
    if "*" in sch:
        item = sch["*"]
        return all(_ok(v, item) for v in value.values())
    if len(value) < len(sch):
        for k, v in value.items():
            s = sch.get(k)
            if s is not None and not _ok(v, s):
                return False
        return True
    for k, s in sch.items():
        if k in value and not _ok(value[k], s):
            return False
    return True


def check(kind: str, version: str, obj: dict[str, Any]) -> None:
    """400, naming the field, if a field this server reads has the wrong JSON type. Every
    write passes here: a body that fits (nearly all) is judged by :func:`_ok` in one
    recursive pass; one that does not is walked again below, depth first in a fixed order,
    so the error names the same field whichever misfit :func:`_ok` met first. The path of a
    field is a (parent, key) chain, made a string only for the error."""
    schema = _root(kind)
    if not _ok(obj, schema):
        walk(kind, version, obj, schema)


def walk(kind: str, version: str, obj: dict[str, Any], schema: Schema) -> None:
    """The 400 of the first misfit, depth first: the reference :func:`_ok` agrees with."""
    stack: list[tuple[Any, Schema, Any]] = [(obj, schema, None)]
    while stack:
        value, sch, node = stack.pop()
        if value is None:
            continue  # null is every type's zero value
        if not _fits(value, sch):
            raise E.bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: json: cannot '
                                f"unmarshal {json_type(value)} into Go struct field {_where(kind, node)} of "
                                f"type {_want(sch)}")
        if isinstance(sch, list):
            stack.extend((v, sch[0], (node, i)) for i, v in enumerate(value))
        elif isinstance(sch, dict) and "*" in sch:
            stack.extend((v, sch["*"], (node, k)) for k, v in value.items())
        elif isinstance(sch, dict):
            stack.extend((value[k], s, (node, k)) for k, s in sch.items() if k in value)
