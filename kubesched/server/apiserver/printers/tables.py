"""Server-side printing: ``meta.k8s.io/v1`` Tables for ``kubectl get``.

kubectl asks for ``application/json;as=Table;v=v1;g=meta.k8s.io`` and prints the cells it
gets; columns with ``priority`` 1 appear only with ``-o wide``. The columns and cell
values follow upstream's printers (``pkg/printers/internalversion/printers.go``): pods
``NAME READY STATUS RESTARTS AGE`` (+ ``IP NODE NOMINATED NODE READINESS GATES``), nodes
``NAME STATUS ROLES AGE VERSION`` (+ addresses, OS, kernel, runtime), and so on; a
resource without a printer gets ``NAME AGE``. Ages use upstream's ``HumanDuration``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched.server.apiserver.strategies.apps import selector_string
from kubesched.server.apiserver.registry.resources import Resource
from kubesched.server.apiserver.printers.dra import dra_printers
from kubesched.server.apiserver.printers.storage import storage_printers
from kubesched.server.apiserver.printers.workctl import workctl_printers
from kubesched.server.apiserver.strategies.base import parse_rfc3339

Row = list[Any]
NONE = "<none>"


def human_duration(seconds: float) -> str:
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def age(ts: Any, now: float) -> str:
    t = parse_rfc3339(ts) if isinstance(ts, str) else None
    return "<unknown>" if t is None else human_duration(now - t)


def _col(name: str, priority: int = 0, type_: str = "string", fmt: str = "") -> dict[str, Any]:
    return {"name": name, "type": type_, "format": fmt, "description": name, "priority": priority}


NAME = _col("Name", fmt="name")
AGE = _col("Age")


def _pod_reason(pod: Mapping[str, Any]) -> str:
    status = pod.get("status") or {}
    meta = pod.get("metadata") or {}
    reason = status.get("reason") or status.get("phase") or "Pending"
    for c in status.get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    init_statuses = status.get("initContainerStatuses") or []
    for i, cs in enumerate(init_statuses):
        state = cs.get("state") or {}
        term, wait = state.get("terminated"), state.get("waiting")
        if term and term.get("exitCode") == 0:
            continue
        if term:
            reason = "Init:" + (term.get("reason") or f"ExitCode:{term.get('exitCode')}")
        elif wait and wait.get("reason") and wait["reason"] != "PodInitializing":
            reason = "Init:" + wait["reason"]
        else:
            reason = f"Init:{i}/{len((pod.get('spec') or {}).get('initContainers') or [])}"
        break
    else:
        running = False
        for cs in reversed(status.get("containerStatuses") or []):
            state = cs.get("state") or {}
            if (state.get("waiting") or {}).get("reason"):
                reason = state["waiting"]["reason"]
            elif (state.get("terminated") or {}).get("reason"):
                reason = state["terminated"]["reason"]
            elif state.get("terminated"):
                t = state["terminated"]
                reason = f"Signal:{t['signal']}" if t.get("signal") else f"ExitCode:{t.get('exitCode')}"
            elif cs.get("ready") and state.get("running") is not None:
                running = True
        if reason == "Completed" and running:
            ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                        for c in status.get("conditions") or [])
            reason = "Running" if ready else "NotReady"
    if meta.get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return str(reason)


def pod_row(pod: Mapping[str, Any], now: float) -> Row:
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    total = len(spec.get("containers") or []) + sum(
        1 for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always")
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for c in statuses if c.get("ready"))
    restarts = sum(int(c.get("restartCount") or 0) for c in statuses)
    gates = spec.get("readinessGates") or []
    gates_cell = NONE
    if gates:
        true = {c.get("type") for c in status.get("conditions") or [] if c.get("status") == "True"}
        gates_cell = f"{sum(1 for g in gates if g.get('conditionType') in true)}/{len(gates)}"
    return [meta.get("name"), f"{ready}/{total}", _pod_reason(pod), restarts, age(meta.get("creationTimestamp"), now),
            status.get("podIP") or NONE, spec.get("nodeName") or NONE, status.get("nominatedNodeName") or NONE,
            gates_cell]


def node_row(node: Mapping[str, Any], now: float) -> Row:
    meta, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
    ready = next((c.get("status") for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    # upstream printNode: Ready when True, NotReady for False and Unknown, Unknown if absent
    state = "Unknown" if ready is None else ("Ready" if ready == "True" else "NotReady")
    if spec.get("unschedulable"):
        state += ",SchedulingDisabled"
    roles = set()
    for k, v in (meta.get("labels") or {}).items():
        if k.startswith("node-role.kubernetes.io/"):
            roles.add(k.split("/", 1)[1])
        elif k == "kubernetes.io/role" and v:
            roles.add(v)
    info = status.get("nodeInfo") or {}
    addrs = {a.get("type"): a.get("address") for a in status.get("addresses") or []}
    return [meta.get("name"), state, ",".join(sorted(r for r in roles if r)) or NONE,
            age(meta.get("creationTimestamp"), now), info.get("kubeletVersion", ""),
            addrs.get("InternalIP") or NONE, addrs.get("ExternalIP") or NONE, info.get("osImage") or "<unknown>",
            info.get("kernelVersion") or "<unknown>", info.get("containerRuntimeVersion") or "<unknown>"]


def _event_row(ev: Mapping[str, Any], now: float) -> Row:
    io = ev.get("involvedObject") or {}
    last = ev.get("lastTimestamp") or (ev.get("series") or {}).get("lastObservedTime") or ev.get("eventTime")
    first = ev.get("firstTimestamp") or ev.get("eventTime")
    src = (ev.get("source") or {}).get("component") or ev.get("reportingComponent") or ""
    kind = str(io.get("kind") or "").lower()
    return [age(last, now), ev.get("type", ""), ev.get("reason", ""), f"{kind}/{io.get('name', '')}",
            io.get("fieldPath", ""), src, ev.get("message", ""), age(first, now), int(ev.get("count") or 1),
            (ev.get("metadata") or {}).get("name")]


def _deployment_row(d: Mapping[str, Any], now: float) -> Row:
    spec, status = d.get("spec") or {}, d.get("status") or {}
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    return [d["metadata"].get("name"), f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
            status.get("updatedReplicas", 0), status.get("availableReplicas", 0),
            age(d["metadata"].get("creationTimestamp"), now), ",".join(c.get("name", "") for c in containers),
            ",".join(c.get("image", "") for c in containers), selector_string(spec.get("selector")) or NONE]


def _replicaset_row(r: Mapping[str, Any], now: float) -> Row:
    spec, status = r.get("spec") or {}, r.get("status") or {}
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    return [r["metadata"].get("name"), spec.get("replicas", 0), status.get("replicas", 0),
            status.get("readyReplicas", 0), age(r["metadata"].get("creationTimestamp"), now),
            ",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers),
            selector_string(spec.get("selector")) or NONE]


def _simple(*fields: Callable[[Mapping[str, Any]], Any]) -> Callable[[Mapping[str, Any], float], Row]:
    def row(obj: Mapping[str, Any], now: float) -> Row:
        meta = obj.get("metadata") or {}
        return [meta.get("name")] + [f(obj) for f in fields] + [age(meta.get("creationTimestamp"), now)]
    return row


def _ports(svc: Mapping[str, Any]) -> str:
    ports = (svc.get("spec") or {}).get("ports") or []
    return ",".join(f"{p.get('port')}/{p.get('protocol', 'TCP')}" for p in ports) or NONE


def _pdb_field(key: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda o: "N/A" if (o.get("spec") or {}).get(key) is None else str(o["spec"][key])


PRINTERS: dict[str, tuple[list[dict[str, Any]], Callable[[Mapping[str, Any], float], Row]]] = {
    "core/pods": ([NAME, _col("Ready"), _col("Status"), _col("Restarts", type_="integer"), AGE,
                   _col("IP", 1), _col("Node", 1), _col("Nominated Node", 1), _col("Readiness Gates", 1)], pod_row),
    "core/nodes": ([NAME, _col("Status"), _col("Roles"), AGE, _col("Version"), _col("Internal-IP", 1),
                    _col("External-IP", 1), _col("OS-Image", 1), _col("Kernel-Version", 1),
                    _col("Container-Runtime", 1)], node_row),
    "core/namespaces": ([NAME, _col("Status"), AGE],
                        lambda o, now: [o["metadata"].get("name"), (o.get("status") or {}).get("phase", ""),
                                        age(o["metadata"].get("creationTimestamp"), now)]),
    "core/events": ([_col("Last Seen"), _col("Type"), _col("Reason"), _col("Object"), _col("Subobject", 1),
                     _col("Source", 1), _col("Message"), _col("First Seen", 1), _col("Count", 1, "integer"),
                     _col("Name", 1)], _event_row),
    "apps/deployments": ([NAME, _col("Ready"), _col("Up-to-date", type_="integer"),
                          _col("Available", type_="integer"), AGE, _col("Containers", 1), _col("Images", 1),
                          _col("Selector", 1)], _deployment_row),
    "apps/replicasets": ([NAME, _col("Desired", type_="integer"), _col("Current", type_="integer"),
                          _col("Ready", type_="integer"), AGE, _col("Containers", 1), _col("Images", 1),
                          _col("Selector", 1)], _replicaset_row),
    "core/configmaps": ([NAME, _col("Data", type_="integer"), AGE],
                        _simple(lambda o: len(o.get("data") or {}) + len(o.get("binaryData") or {}))),
    "core/services": ([NAME, _col("Type"), _col("Cluster-IP"), _col("External-IP"), _col("Port(s)"), AGE],
                      _simple(lambda o: (o.get("spec") or {}).get("type", ""),
                              lambda o: (o.get("spec") or {}).get("clusterIP") or NONE, lambda o: NONE, _ports)),
    "scheduling.k8s.io/priorityclasses": (
        [NAME, _col("Value", type_="integer"), _col("Global-Default", type_="boolean"), AGE,
         _col("PreemptionPolicy")],
        lambda o, now: [o["metadata"].get("name"), o.get("value", 0), bool(o.get("globalDefault")),
                        age(o["metadata"].get("creationTimestamp"), now), o.get("preemptionPolicy", "")]),
    "policy/poddisruptionbudgets": (
        [NAME, _col("Min Available"), _col("Max Unavailable"), _col("Allowed Disruptions", type_="integer"), AGE],
        _simple(_pdb_field("minAvailable"), _pdb_field("maxUnavailable"),
                lambda o: (o.get("status") or {}).get("disruptionsAllowed", 0))),
    "coordination.k8s.io/leases": ([NAME, _col("Holder"), AGE],
                                   _simple(lambda o: (o.get("spec") or {}).get("holderIdentity", ""))),
}
PRINTERS.update(storage_printers(age))
PRINTERS.update(workctl_printers(age))
PRINTERS.update(dra_printers(age))


def _row_object(obj: Mapping[str, Any], include: str) -> dict[str, Any] | None:
    if include == "None":
        return None
    if include == "Object":
        return dict(obj)
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata") or {}}


def to_table(res: Resource, items: Sequence[Mapping[str, Any]], now: float, *, list_meta: Mapping[str, Any] | None = None,
             include_object: str = "Metadata", with_columns: bool = True) -> dict[str, Any]:
    """A Table of ``items`` (the objects as the REST resource ``res`` shows them)."""
    columns, printer = PRINTERS.get(res.storage, ([NAME, AGE], _simple()))
    if res.storage == "core/events" and res.group:  # events.k8s.io/v1 objects: print the core view
        from kubesched.server.apiserver.strategies.base import EventV1Strategy

        conv = EventV1Strategy().to_storage
        rows = [{"cells": printer(conv(dict(o)), now), "object": _row_object(o, include_object)} for o in items]
    else:
        rows = [{"cells": printer(o, now), "object": _row_object(o, include_object)} for o in items]
    for r in rows:
        if r["object"] is None:
            del r["object"]
    table: dict[str, Any] = {"kind": "Table", "apiVersion": "meta.k8s.io/v1",
                             "metadata": dict(list_meta or {}), "rows": rows}
    if with_columns:
        table["columnDefinitions"] = columns
    return table
