"""``kubesched serve --from SNAPSHOT|RECORDING``: start the embedded cluster with the objects
of a snapshot (``kubesched snapshot`` output: a file or a directory) or the starting state of
a recording (``kubesched record`` output), so that people can explore it with kubectl and
the web UI and try pods against it.

Objects are created through the server's registry, with the API server's own defaulting,
validation and admission, as ``kubectl create`` would create them, owners before what
they own. The API server gives every object a new uid, so each ``metadata.ownerReferences``
entry is rewritten to the new uid of its owner (as are the pod uids a ResourceClaim's
``status.reservedFor`` names and the claim uid a PersistentVolume's ``spec.claimRef``
names). Statuses (a node's capacity, a bound claim, a pod's nominated node) are then
written through the status subresource, as the kubelet and the controllers write them; a
pod's phase is not: a bound pod is started by its node's simulated kubelet.

An owner reference to an object the snapshot does not hold (a snapshot taken before
snapshots kept Deployments, DaemonSets, CronJobs and Jobs, or a kind the snapshot's
credentials could not list) is **dropped**, and the count is reported: kept, it would make
serve's garbage collector delete the pod at once (its owner is absent), and an owner made
up from the pod's labels would make the workload controllers act on a guess (scale, roll
out). The pod stays, as an orphan, exactly where the snapshot had it.

A Service's ``clusterIP`` is left for the server to allocate (the scheduler never reads
it, and the snapshot's may be outside serve's range). Objects the server creates itself at
start-up (the ``default`` namespace, the system PriorityClasses) are kept as they are.
Only an empty cluster is loaded: a data directory that already holds nodes or pods is an
error, never a merge.
"""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubesched.api.errors import KubeschedError

if TYPE_CHECKING:
    from kubesched.server.apiserver.registry.registry import Registry

# Creation order: what others refer to (or are owned by) first; anything owned by an object
# later in this list waits for it anyway (see :func:`_ordered`).
CREATE_ORDER = ("Namespace", "PriorityClass", "Node", "StorageClass", "CSIDriver", "CSINode", "CSIStorageCapacity",
                "PersistentVolume", "PersistentVolumeClaim", "VolumeAttachment", "DeviceClass", "ResourceSlice",
                "ResourceClaimTemplate", "Service", "ReplicationController", "Deployment", "DaemonSet", "CronJob",
                "ReplicaSet", "StatefulSet", "Job", "PodDisruptionBudget", "PodGroup", "Pod", "ResourceClaim")


@dataclass
class Loaded:
    """What :func:`load` did, for the line ``serve`` prints."""

    created: Counter[str] = field(default_factory=Counter)  # kind -> objects created
    existing: int = 0  # already there (created by the server at start-up): kept as they are
    dropped_owners: Counter[str] = field(default_factory=Counter)  # kind of the owner not in the snapshot

    def summary(self) -> str:
        parts = [", ".join(f"{n} {k}" for k, n in sorted(self.created.items())) or "no objects"]
        if self.existing:
            parts.append(f"{self.existing} already present kept")
        if self.dropped_owners:
            parts.append("owner references to objects not in the snapshot dropped (their dependents kept): "
                         + ", ".join(f"{n} to a {k}" for k, n in sorted(self.dropped_owners.items())))
        return "; ".join(parts)


def read_objects(path: str) -> list[dict[str, Any]]:
    """The objects of a snapshot file or directory, or a recording's starting state."""
    from kubesched.sim import snapshot

    p = Path(path)
    if not p.exists():
        raise KubeschedError(f"--from {path}: no such file or directory")
    if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")):
        from kubesched.sim.recording.reader import read_recording

        return list(read_recording(path).initial)
    files = sorted(str(f) for f in p.iterdir() if f.suffix in (".yaml", ".yml", ".json")) if p.is_dir() else [path]
    if not files:
        raise KubeschedError(f"--from {path}: no .yaml, .yml or .json files in the directory")
    snap = snapshot.from_dump(files)
    return [o for kind in snapshot.ORDER for o in snap.objects.get(kind, [])]


def _resource_name(obj: dict[str, Any]) -> str:
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    from kubesched.sim.snapshot import RESOURCES

    res = RESOURCES[str(obj["kind"])]
    return f"{res.plural}.{group}" if group else res.plural


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _describe(obj: dict[str, Any]) -> str:
    m = _meta(obj)
    ns = m.get("namespace")
    return f'{obj.get("kind")} "{ns}/{m.get("name")}"' if ns else f'{obj.get("kind")} "{m.get("name")}"'


def _owner_uids(obj: dict[str, Any]) -> list[str]:
    refs = _meta(obj).get("ownerReferences")
    return [str(r.get("uid") or "") for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []


def _ordered(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``objects`` by :data:`CREATE_ORDER`, each after the owners it has in ``objects``
    (a reference cycle, which the API cannot produce, keeps the kind order)."""
    rank = {k: i for i, k in enumerate(CREATE_ORDER)}
    todo = sorted(objects, key=lambda o: rank.get(str(o.get("kind")), len(rank)))
    present = {str(_meta(o).get("uid")) for o in objects if _meta(o).get("uid")}
    done: set[str] = set()
    out: list[dict[str, Any]] = []
    while todo:
        later = [o for o in todo if any(u in present and u not in done for u in _owner_uids(o))]
        ready = [o for o in todo if not any(u in present and u not in done for u in _owner_uids(o))] or later
        out.extend(ready)
        done.update(str(_meta(o).get("uid")) for o in ready)
        todo = later if ready is not later else []
    return out


class Loader:
    def __init__(self, registry: "Registry", source: str, flag: str = "--from") -> None:
        self.registry = registry
        self.source = source
        self.flag = flag
        self.uids: dict[str, str] = {}  # snapshot uid -> the server's
        self.result = Loaded()

    def error(self, obj: dict[str, Any], message: str) -> KubeschedError:
        return KubeschedError(f"{self.flag} {self.source}: {_describe(obj)}: {message}")

    def body(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The object to create: no status, no uid, owners' uids rewritten (or dropped)."""
        body = copy.deepcopy(obj)
        body.pop("status", None)
        meta = _meta(body)
        for k in ("uid", "creationTimestamp", "resourceVersion", "generation", "deletionTimestamp"):
            meta.pop(k, None)
        refs = meta.get("ownerReferences")
        if isinstance(refs, list):
            kept = []
            for ref in refs:
                new = self.uids.get(str(ref.get("uid") or "")) if isinstance(ref, dict) else None
                if new is None:
                    self.result.dropped_owners[str(ref.get("kind") if isinstance(ref, dict) else "?")] += 1
                    continue
                kept.append({**ref, "uid": new})
            if kept:
                meta["ownerReferences"] = kept
            else:
                meta.pop("ownerReferences")
        spec = body.get("spec")
        if isinstance(spec, dict):
            if body.get("kind") == "Service":
                for k in ("clusterIP", "clusterIPs"):
                    spec.pop(k, None)
            ref = spec.get("claimRef")
            if body.get("kind") == "PersistentVolume" and isinstance(ref, dict) and ref.get("uid"):
                spec["claimRef"] = {**ref, "uid": self.uids.get(str(ref["uid"]), "")} if str(
                    ref["uid"]) in self.uids else {k: v for k, v in ref.items() if k != "uid"}
        return body

    def status(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        status = obj.get("status")
        if not isinstance(status, dict) or not status:
            return None
        status = copy.deepcopy(status)
        if obj.get("kind") == "Pod":  # its node's simulated kubelet starts it and reports the phase
            status.pop("phase", None)
            status.pop("startTime", None)
        reserved = status.get("reservedFor")
        if obj.get("kind") == "ResourceClaim" and isinstance(reserved, list):
            status["reservedFor"] = [{**r, "uid": self.uids[str(r.get("uid"))]} for r in reserved
                                     if isinstance(r, dict) and str(r.get("uid")) in self.uids]
        return status

    def create(self, obj: dict[str, Any]) -> None:
        from kubesched.server.apiserver.errors import ApiError

        res = _resource_name(obj)
        meta = _meta(obj)
        ns, name = meta.get("namespace") or None, str(meta.get("name") or "")
        try:
            made = self.registry.create(res, ns, self.body(obj))
        except ApiError as exc:
            if exc.reason != "AlreadyExists" or obj.get("kind") not in ("Namespace", "PriorityClass"):
                raise self.error(obj, exc.message) from None
            made = self.registry.get(res, ns, name)
            self.result.existing += 1
            self.uids[str(meta.get("uid") or "")] = str(_meta(made).get("uid"))
            return
        self.uids[str(meta.get("uid") or "")] = str(_meta(made).get("uid"))
        self.result.created[str(obj.get("kind"))] += 1
        status = self.status(obj)
        if status is None or not self.registry.resource(res).has_status:
            return
        made["status"] = {**(made.get("status") or {}), **status}
        try:
            self.registry.update(res, ns, name, made, subresource="status")
        except ApiError as exc:
            raise self.error(obj, f"status: {exc.message}") from None


def check_empty(registry: "Registry", flag: str) -> None:
    for res in ("nodes", "pods"):
        if registry.list(res, limit=1)["items"]:
            raise KubeschedError(f"{flag}: the data directory already holds {res}: start from an empty --data-dir")


def load(registry: "Registry", objects: list[dict[str, Any]], source: str, loader: Loader | None = None) -> Loaded:
    """Create ``objects`` (from ``source``, for messages) in the server behind ``registry``
    (through ``loader``, which then knows the uids; default a new one)."""
    check_empty(registry, f"--from {source}")
    loader = loader or Loader(registry, source)
    for obj in _ordered(objects):
        loader.create(obj)
    return loader.result
