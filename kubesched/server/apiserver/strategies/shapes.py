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

A schema is a Python type (``str``, ``int``, ``bool``, ``dict`` for any object), a tuple
of types (``int`` or ``str`` for IntOrString), ``[t]`` for a list of ``t``, ``{"*": t}``
for a map of ``t``, or a dict of field schemas for an object with known fields.
"""

from __future__ import annotations

from typing import Any

from kubesched.server.apiserver import errors as E

Schema = Any
STRMAP: Schema = {"*": str}
LABEL_SELECTOR: Schema = {"matchLabels": STRMAP, "matchExpressions": [{"key": str, "operator": str, "values": [str]}]}
OBJECT_META: Schema = {
    "name": str, "generateName": str, "namespace": str, "uid": str, "resourceVersion": str, "selfLink": str,
    "creationTimestamp": str, "deletionTimestamp": str, "generation": int, "deletionGracePeriodSeconds": int,
    "labels": STRMAP, "annotations": STRMAP, "finalizers": [str], "managedFields": [dict],
    "ownerReferences": [{"apiVersion": str, "kind": str, "name": str, "uid": str, "controller": bool,
                         "blockOwnerDeletion": bool}],
}
TEMPLATE: Schema = {"metadata": OBJECT_META, "spec": dict}
OBJECT_REF: Schema = {"kind": str, "namespace": str, "name": str, "uid": str, "apiVersion": str,
                      "resourceVersion": str, "fieldPath": str}
WORKLOAD: Schema = {"spec": {"replicas": int, "selector": LABEL_SELECTOR, "template": TEMPLATE, "minReadySeconds": int,
                             "paused": bool, "strategy": {"type": str, "rollingUpdate": {"maxSurge": (int, str),
                                                                                          "maxUnavailable": (int, str)}},
                             "revisionHistoryLimit": int, "progressDeadlineSeconds": int},
                    "status": {"replicas": int, "readyReplicas": int, "availableReplicas": int,
                               "updatedReplicas": int, "observedGeneration": int, "conditions": [dict]}}
KINDS: dict[str, Schema] = {
    "Pod": {"spec": {"nodeName": str, "schedulerName": str, "priorityClassName": str, "priority": int,
                     "restartPolicy": str, "serviceAccountName": str, "hostNetwork": bool,
                     "nodeSelector": STRMAP, "terminationGracePeriodSeconds": int},
            "status": {"phase": str, "podIP": str, "podIPs": [{"ip": str}], "nominatedNodeName": str,
                       "conditions": [{"type": str, "status": str, "reason": str, "message": str}]}},
    "Node": {"spec": {"unschedulable": bool, "podCIDR": str, "providerID": str},
             "status": {"conditions": [{"type": str, "status": str}], "addresses": [{"type": str, "address": str}],
                        "capacity": STRMAP, "allocatable": STRMAP}},
    "Namespace": {"spec": {"finalizers": [str]}, "status": {"phase": str}},
    "Service": {"spec": {"selector": STRMAP, "type": str, "clusterIP": str, "clusterIPs": [str],
                         "ports": [{"name": str, "protocol": str, "port": int, "targetPort": (int, str),
                                    "nodePort": int}]}},
    "ConfigMap": {"data": STRMAP, "binaryData": STRMAP, "immutable": bool},
    "Event": {"involvedObject": OBJECT_REF, "regarding": OBJECT_REF, "related": OBJECT_REF, "reason": str,
              "message": str, "note": str, "type": str, "action": str, "count": int, "deprecatedCount": int,
              "firstTimestamp": str, "lastTimestamp": str, "eventTime": str, "reportingComponent": str,
              "reportingController": str, "reportingInstance": str,
              "source": {"component": str, "host": str}, "deprecatedSource": {"component": str, "host": str},
              "series": {"count": int, "lastObservedTime": str}},
    "PriorityClass": {"value": int, "globalDefault": bool, "description": str, "preemptionPolicy": str},
    "PodDisruptionBudget": {"spec": {"minAvailable": (int, str), "maxUnavailable": (int, str),
                                     "selector": LABEL_SELECTOR, "unhealthyPodEvictionPolicy": str},
                            "status": {"disruptionsAllowed": int, "currentHealthy": int, "desiredHealthy": int,
                                       "expectedPods": int, "observedGeneration": int, "disruptedPods": STRMAP,
                                       "conditions": [dict]}},
    "Lease": {"spec": {"holderIdentity": str, "leaseDurationSeconds": int, "leaseTransitions": int,
                       "acquireTime": str, "renewTime": str}},
    "Deployment": WORKLOAD, "ReplicaSet": WORKLOAD,
    "PodGroup": {"spec": {"minMember": int, "scheduleTimeoutSeconds": int, "minResources": STRMAP}},
}
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
