"""``kubesched snapshot``: what the scheduler needs from a live cluster (or from a ``kubectl
get ... -o yaml`` dump), written as manifests ``kubesched simulate -f`` reads.

Why: what-if questions (compare, capacity) are asked about a real cluster, offline. The
snapshot holds exactly the kinds the scheduler's informers list
(:data:`kubesched.cluster.kube.resources.SCHEDULER_RESOURCES`: nodes, pods, namespaces,
PriorityClasses, PDBs, PodGroups, PVs/PVCs/StorageClasses/CSINodes/CSIDrivers/
CSIStorageCapacities/VolumeAttachments, DRA DeviceClasses/ResourceSlices/ResourceClaims/
ResourceClaimTemplates, and the Services/ReplicationControllers/ReplicaSets/StatefulSets
PodTopologySpread's default constraints read), and the other owners of pods
(:data:`~kubesched.cluster.kube.resources.OWNER_RESOURCES`: Deployments, DaemonSets, CronJobs,
Jobs), so that ``serve --from`` rebuilds a cluster whose pods keep their owners. Nothing
else: no Secrets, ConfigMaps, Events.

What is stripped from each object (noise the scheduler never reads): ``metadata``
managedFields, resourceVersion, selfLink, generation and the kubectl last-applied
annotation; a pod's status except phase, nominatedNodeName, startTime and
resourceClaimStatuses; a node's status except capacity, allocatable, images and
declaredFeatures (what NodeResourcesFit, ImageLocality and NodeDeclaredFeatures read). UIDs are kept (ResourceClaims reserve pods by
UID). Finished pods (Succeeded/Failed) are left out, as the scheduler's informer leaves them
out; ``keep_finished`` keeps them (simulate then lists them as ``ignoredPods``).

Errors (decided here, documented in the README): a cluster that cannot be reached, or that
refuses to list nodes or pods, is an error (a snapshot without them answers nothing). A 403
on any other kind is a warning, and the snapshot goes on without that kind (the warning is
printed and written into the output's header comment). A kind the server does not serve
(404: DRA off, no PodGroup CRD) is left out silently (listed as "not served").

The cluster's ``/version`` is recorded too, as a ``kubesched.io/v1`` ``ServerVersion``
document first (``00-version.yaml`` with ``-o DIR``): simulate, explain, compare and capacity
then decide as that Kubernetes release unless ``--kubernetes-version`` says otherwise.

Objects are written kind by kind in the order of :data:`ORDER` (pods, then the owners the
scheduler does not read: added later, they keep the earlier files' numbers), each kind sorted
by namespace and name, pods by creationTimestamp first (their arrival order, which breaks
queue ties in simulate). ``-o FILE`` writes one multi-document YAML file; ``-o DIR`` one file
per kind (``DIR/NN-<plural>.yaml``, which ``simulate -f DIR`` reads in name order).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.api.documents import documents
from kubesched.api.errors import DecodeError, KubeschedError
from kubesched.api.kubeversion import server_version_document
from kubesched.cluster.kube import ApiStatusError, KubeClient, KubeClientError, TransportError, call_with_retries
from kubesched.cluster.kube.resources import OWNER_RESOURCES, SCHEDULER_RESOURCES, ApiResource

TERMINAL = ("Succeeded", "Failed")
REQUIRED = ("Node", "Pod")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_META_NOISE = ("managedFields", "resourceVersion", "selfLink", "generation")
_POD_STATUS = ("phase", "nominatedNodeName", "startTime", "resourceClaimStatuses")
_NODE_STATUS = ("capacity", "allocatable", "images", "declaredFeatures")

# Kinds in output order: what others refer to first, pods, then the owners nothing else reads.
ORDER = ("Namespace", "PriorityClass", "Node", "StorageClass", "CSIDriver", "CSINode", "CSIStorageCapacity",
         "PersistentVolume", "PersistentVolumeClaim", "VolumeAttachment", "DeviceClass", "ResourceSlice",
         "ResourceClaimTemplate", "ResourceClaim", "Service", "ReplicationController", "ReplicaSet",
         "StatefulSet", "PodDisruptionBudget", "PodGroup", "Pod", "Deployment", "DaemonSet", "CronJob", "Job")
RESOURCES: dict[str, ApiResource] = {r.kind: r for r in SCHEDULER_RESOURCES + OWNER_RESOURCES}
assert set(RESOURCES) == set(ORDER), "a scheduler resource without a place in the snapshot order"

VERSION_FILE = "00-version.yaml"  # -o DIR: the cluster's /version, read first
Progress = Callable[[str, int, int], None]  # (kind, kinds done, kinds in all)


@dataclass
class Snapshot:
    source: str
    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # kind -> cleaned objects
    warnings: list[str] = field(default_factory=list)
    not_served: list[str] = field(default_factory=list)
    finished_pods: int = 0  # left out (or kept, with keep_finished)
    left_out: Counter[str] = field(default_factory=Counter)  # dump kinds not needed, by kind
    server_version: dict[str, Any] | None = None  # the cluster's /version (simulate decides as that release)

    def counts(self) -> dict[str, int]:
        return {k: len(self.objects[k]) for k in ORDER if self.objects.get(k)}

    def header(self) -> str:
        lines = [f"kubesched snapshot of {self.source}",
                 "objects: " + (", ".join(f"{n} {k}" for k, n in self.counts().items()) or "none")]
        if self.server_version:
            lines.append(f"Kubernetes version: {self.server_version.get('gitVersion') or self.server_version.get('minor')}")
        if self.finished_pods:
            lines.append(f"finished pods: {self.finished_pods}")
        if self.left_out:
            lines.append("left out (not read by the scheduler): "
                         + ", ".join(f"{n} {k}" for k, n in sorted(self.left_out.items())))
        if self.not_served:
            lines.append("not served: " + ", ".join(self.not_served))
        lines += [f"warning: {w}" for w in self.warnings]
        return "".join(f"# {line}\n" for line in lines)


# -- cleaning -------------------------------------------------------------------------------
def clean(raw: dict[str, Any], kind: str, api_version: str) -> dict[str, Any]:
    """A copy of ``raw`` with ``kind``/``apiVersion`` set and the noise stripped (see above)."""
    out: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    out.update((k, v) for k, v in raw.items() if k not in ("apiVersion", "kind"))
    meta = dict(out.get("metadata") or {})
    for k in _META_NOISE:
        meta.pop(k, None)
    annotations = meta.get("annotations")
    if isinstance(annotations, dict) and LAST_APPLIED in annotations:
        annotations = {k: v for k, v in annotations.items() if k != LAST_APPLIED}
        if annotations:
            meta["annotations"] = annotations
        else:
            meta.pop("annotations")
    out["metadata"] = meta
    keep = {"Pod": _POD_STATUS, "Node": _NODE_STATUS}.get(kind)
    status = out.get("status")
    if keep is not None and isinstance(status, dict):
        out["status"] = {k: status[k] for k in keep if k in status}
    return out


def _phase(raw: dict[str, Any]) -> str:
    status = raw.get("status")
    return str(status.get("phase") or "") if isinstance(status, dict) else ""


def _sort(kind: str, objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def key(o: dict[str, Any]) -> tuple[str, str, str]:
        m = o.get("metadata") or {}
        first = str(m.get("creationTimestamp") or "") if kind == "Pod" else ""
        return first, str(m.get("namespace") or ""), str(m.get("name") or "")
    return sorted(objs, key=key)


def _add(snap: Snapshot, kind: str, raws: Iterable[dict[str, Any]], keep_finished: bool) -> None:
    api = RESOURCES[kind]
    version = f"{api.group}/{api.version}" if api.group else api.version
    objs = snap.objects.setdefault(kind, [])
    for raw in raws:
        if kind == "Pod" and _phase(raw) in TERMINAL:
            snap.finished_pods += 1
            if not keep_finished:
                continue
        objs.append(clean(raw, kind, version))


# -- from a live cluster --------------------------------------------------------------------
def _list(client: KubeClient, res: ApiResource) -> list[dict[str, Any]]:
    """Every object of ``res``, page by page. Finished pods are listed too (no field
    selector) and filtered here, so that the snapshot can say how many it left out."""
    items: list[dict[str, Any]] = []
    cont = ""
    while True:
        query = {"limit": "500"}
        if cont:
            query["continue"] = cont
        body = call_with_retries(lambda: client.request("GET", res.path, query=query, timeout=120.0), attempts=3)
        items.extend((body or {}).get("items") or [])
        cont = ((body or {}).get("metadata") or {}).get("continue") or ""
        if not cont:
            return items


def take(client: KubeClient, *, keep_finished: bool = False, progress: Progress | None = None) -> Snapshot:
    """List every kind of :data:`ORDER` from ``client``'s API server."""
    snap = Snapshot(source=client.host)
    for i, kind in enumerate(ORDER):
        if progress is not None:
            progress(kind, i, len(ORDER))
        res = RESOURCES[kind]
        try:
            raws = _list(client, res)
        except TransportError as exc:
            raise KubeschedError(f"snapshot: cannot reach the API server at {client.host}: {exc}") from exc
        except ApiStatusError as exc:
            if exc.code == 404 and kind not in REQUIRED:
                snap.not_served.append(kind)
                continue
            if exc.code == 403 and kind not in REQUIRED:
                snap.warnings.append(f"{kind}: forbidden ({exc.message}); left out of the snapshot")
                continue
            raise KubeschedError(f"snapshot: listing {res.plural} at {client.host}: {exc}") from exc
        except KubeClientError as exc:
            raise KubeschedError(f"snapshot: listing {res.plural} at {client.host}: {exc}") from exc
        _add(snap, kind, raws, keep_finished)
        snap.objects[kind] = _sort(kind, snap.objects[kind])
    snap.server_version = _server_version(client, snap)
    if progress is not None:
        progress("", len(ORDER), len(ORDER))
    return snap


def _server_version(client: KubeClient, snap: Snapshot) -> dict[str, Any] | None:
    """The server's ``/version`` (a warning, and none recorded, when it cannot be read)."""
    try:
        body = call_with_retries(lambda: client.request("GET", "/version", timeout=30.0), attempts=3)
    except (TransportError, KubeClientError) as exc:
        snap.warnings.append(f"/version: {exc}; the cluster's Kubernetes version is not recorded")
        return None
    if not isinstance(body, dict) or not (body.get("gitVersion") or body.get("minor")):
        snap.warnings.append("/version: no gitVersion; the cluster's Kubernetes version is not recorded")
        return None
    return {k: v for k, v in body.items() if isinstance(v, str)}


# -- from a dump ----------------------------------------------------------------------------
def _flatten(obj: Any, where: str) -> Iterable[tuple[str, dict[str, Any]]]:
    if not isinstance(obj, dict):
        raise DecodeError("must be an object with apiVersion and kind", obj=where)
    kind = obj.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(obj.get("items"), list):
        for i, item in enumerate(obj["items"]):
            if isinstance(item, dict) and not item.get("kind") and kind != "List":
                item = {"kind": kind[:-4], "apiVersion": obj.get("apiVersion"), **item}
            yield from _flatten(item, f"{where}, items[{i}]")
        return
    if not isinstance(kind, str) or not kind:
        raise DecodeError("kind is required", field="kind", obj=where)
    yield where, obj


def from_dump(paths: list[str], *, keep_finished: bool = False) -> Snapshot:
    """The snapshot of the objects in ``kubectl get ... -o yaml`` (or json) output files."""
    snap = Snapshot(source=", ".join(paths))
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DecodeError(getattr(exc, "strerror", None) or str(exc), file=path) from None
        try:
            for n, doc in documents(path, text):
                if doc is None:
                    continue
                for where, obj in _flatten(doc, f"document {n}"):
                    kind = str(obj["kind"])
                    if kind not in RESOURCES:
                        snap.left_out[kind] += 1
                        continue
                    res = RESOURCES[kind]
                    want = f"{res.group}/{res.version}" if res.group else res.version
                    if obj.get("apiVersion") != want:
                        raise DecodeError(f'{kind} in version "{obj.get("apiVersion")}": kubesched reads {want}',
                                          field="apiVersion", obj=where)
                    _add(snap, kind, [obj], keep_finished)
        except DecodeError as exc:
            raise exc.at(file=path) from None
    for kind, objs in snap.objects.items():
        snap.objects[kind] = _sort(kind, objs)
    return snap


# -- writing --------------------------------------------------------------------------------
def _yaml(objs: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(objs, sort_keys=False, default_flow_style=False) if objs else ""


def write(snap: Snapshot, out: str | None, *, directory: bool = False) -> list[Path]:
    """Write ``snap``: to stdout (``out`` None or ``-``), to the directory ``out`` (one file
    per kind) when ``directory``, else to the one file ``out`` (YAML, or JSON for a name
    ending in .json). Returns the files written."""
    import sys

    version = [server_version_document(snap.server_version)] if snap.server_version else []
    everything = version + [o for k in ORDER for o in snap.objects.get(k, [])]
    if out in (None, "-"):
        sys.stdout.write(snap.header() + _yaml(everything))
        return []
    path = Path(out)
    if not directory:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".json":
            import json

            path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": everything}, indent=1) + "\n")
        else:
            path.write_text(snap.header() + _yaml(everything))
        return [path]
    path.mkdir(parents=True, exist_ok=True)
    for old in path.glob("[0-9][0-9]-*.yaml"):  # an earlier snapshot's files: replaced, not mixed
        if old.name[3:-5] in {r.plural for r in RESOURCES.values()} | {VERSION_FILE[3:-5]}:
            old.unlink()
    written: list[Path] = []
    if version:
        f = path / VERSION_FILE
        f.write_text(snap.header() + _yaml(version))
        written.append(f)
    for i, kind in enumerate(ORDER, 1):
        objs = snap.objects.get(kind)
        if not objs:
            continue
        f = path / f"{i:02d}-{RESOURCES[kind].plural}.yaml"
        f.write_text((snap.header() if not written else "") + _yaml(objs))
        written.append(f)
    return written
