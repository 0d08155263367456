"""Workload objects the scheduler reads: Service, ReplicationController, ReplicaSet,
StatefulSet (and the Deployment and Job owners found in snapshots).

They exist for one reason: PodTopologySpread's default constraints apply to a pod that a
Service selects or whose controller is a ReplicationController, ReplicaSet or StatefulSet,
with a selector deduced from those objects (upstream ``helper.DefaultSelector``). Only
what that needs is typed (name, namespace, selector); ``raw`` keeps the whole object.

API defaulting that matters here (core/v1 ``SetDefaults_ReplicationController``): an RC
without ``spec.selector`` takes its template's labels. ``metadata.namespace`` defaults to
``default`` before these constructors run (:mod:`kubesched.api.defaults`).

:class:`WorkloadIndex` holds them by kind and namespace: the in-memory lister that
``simulate`` (and plugin tests) hand to the framework, as upstream's informer listers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.selectors import NOTHING, LabelSelector

DEFAULT_NAMESPACE = "default"

# kind -> the apiVersion kubesched reads it in (as upstream v1.34 serves it).
WORKLOAD_KINDS: dict[str, str] = {
    "Service": "v1", "ReplicationController": "v1", "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1", "Deployment": "apps/v1", "Job": "batch/v1",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnerReference:
    api_version: str
    kind: str
    name: str
    uid: str = ""
    controller: bool = False


def controller_of(raw: Mapping[str, Any]) -> OwnerReference | None:
    """``metav1.GetControllerOf``: the first ownerReference with ``controller: true``."""
    meta = raw.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, Mapping) else None
    if not isinstance(refs, list):
        return None
    for ref in refs:
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return OwnerReference(api_version=str(ref.get("apiVersion") or ""), kind=str(ref.get("kind") or ""),
                                  name=str(ref.get("name") or ""), uid=str(ref.get("uid") or ""),
                                  controller=True)
    return None


def _mapping(v: Any, path: str) -> Mapping[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise DecodeError("must be an object", field=path)
    return v


def _label_map(v: Any, path: str) -> dict[str, str] | None:
    """A ``map[string]string``; None stays None (a nil map is not an empty one)."""
    if v is None:
        return None
    if not isinstance(v, Mapping) or not all(isinstance(x, str) for x in v.values()):
        raise DecodeError("must be a map of strings", field=path)
    return {str(k): x for k, x in v.items()}


@dataclass(frozen=True, slots=True, eq=False)
class Workload:
    """One workload object. ``selector`` is the parsed ``spec.selector`` (a label set for
    Services and ReplicationControllers, a LabelSelector for the apps/batch kinds)."""

    raw: dict[str, Any]
    kind: str
    name: str
    namespace: str
    uid: str
    # Service / ReplicationController: a label map (None: a Service without selector).
    label_selector: dict[str, str] | None = None
    # ReplicaSet / StatefulSet / Deployment / Job: metav1.LabelSelector (None -> NOTHING).
    selector: LabelSelector = NOTHING

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "Workload":
        kind = str(raw.get("kind") or "")
        if kind not in WORKLOAD_KINDS:
            raise DecodeError(f'unknown workload kind "{kind}"', field="kind")
        meta = _mapping(raw.get("metadata"), "metadata")
        name = meta.get("name")
        if not isinstance(name, str) or not name:
            raise DecodeError("Required value: name or generateName is required", field="metadata.name")
        ns = str(meta.get("namespace") or DEFAULT_NAMESPACE)
        uid = str(meta.get("uid") or f"{ns}/{name}")
        spec = _mapping(raw.get("spec"), "spec")
        if kind == "Service":
            return cls(raw, kind, name, ns, uid, label_selector=_label_map(spec.get("selector"), "spec.selector"))
        if kind == "ReplicationController":
            sel = _label_map(spec.get("selector"), "spec.selector")
            if not sel:  # SetDefaults_ReplicationController: the template's labels
                template = _mapping(spec.get("template"), "spec.template")
                tmeta = _mapping(template.get("metadata"), "spec.template.metadata")
                sel = _label_map(tmeta.get("labels"), "spec.template.metadata.labels") or {}
            return cls(raw, kind, name, ns, uid, label_selector=sel)
        selector = LabelSelector.parse(spec.get("selector"), "spec.selector")
        return cls(raw, kind, name, ns, uid, selector=selector)


class WorkloadIndex:
    """Workload objects by kind, namespace and name (upstream's listers, in memory)."""

    def __init__(self, objects: Iterable[Workload] = ()) -> None:
        self._by_kind: dict[str, dict[str, dict[str, Workload]]] = {k: {} for k in WORKLOAD_KINDS}
        for o in objects:
            self.put(o)

    def put(self, obj: Workload) -> None:
        self._by_kind[obj.kind].setdefault(obj.namespace, {})[obj.name] = obj

    def remove(self, kind: str, namespace: str, name: str) -> None:
        self._by_kind[kind].get(namespace, {}).pop(name, None)

    def get(self, kind: str, namespace: str, name: str) -> Workload | None:
        return self._by_kind[kind].get(namespace, {}).get(name)

    def list(self, kind: str, namespace: str) -> Sequence[Workload]:
        return list(self._by_kind[kind].get(namespace, {}).values())

    def __len__(self) -> int:
        return sum(len(ns) for by_ns in self._by_kind.values() for ns in by_ns.values())
