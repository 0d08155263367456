"""``kubesched record``: watch a live cluster (or a ``serve``) and write what the scheduler
cares about as a recording (:mod:`.format`).

One :class:`~kubesched.cluster.kube.informer.Informer` per kind of the snapshot
(:data:`kubesched.sim.snapshot.ORDER`), pods without the informer's field selector (a pod
that finishes is a ``finish`` line, not a disappearance). The informers do the hard parts:
paginated lists, watches resumed from the last resourceVersion after a dropped connection
or a restarted server, and on a 410 (the server compacted past it) a re-list whose
differences come back as adds, updates and deletes, which are written as events at the time
of the re-list. The starting state is each kind's first list.

Memory is bounded by the cluster, not by the length of the recording: each informer keeps,
per object, its namespace, name and uid, a digest of what the scheduler reads, and for a pod its node and phase
(:class:`Seen`); the cleaned object is held only until its line is written.

What is an event (noise is not): a pod's ``add``, ``bind`` (its ``spec.nodeName`` set),
``finish`` (phase Succeeded or Failed), ``delete``, and ``update`` only when its labels or its
spec other than ``nodeName`` change (not status writes); a node's ``update`` only when its
labels, annotations other than the simulated kubelet's heartbeat, spec or capacity,
allocatable, images or declaredFeatures change (not heartbeats or conditions); a workload object's only when
its labels or spec change (not its status); any other kind's when its cleaned object changes.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any, Protocol

from kubesched.api.errors import KubeschedError
from kubesched.cluster.kube import ApiStatusError, KubeClient, KubeClientError, TransportError
from kubesched.cluster.kube.informer import Informer
from kubesched.sim import snapshot
from kubesched.sim.recording.format import FORMAT, VERSION, open_text

log = logging.getLogger(__name__)

TERMINAL = ("Succeeded", "Failed")
WORKLOADS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet", "Deployment", "DaemonSet",
             "CronJob", "Job")
HEARTBEAT_ANNOTATION = "kubesched.io/heartbeat"  # serve's simulated kubelets write it on each renewal
BACKOFF = (0.2, 2.0, 5.0)  # informer retries: a restarted server is watched again within seconds


@dataclass(slots=True)
class Seen:
    """What the recorder keeps of one object."""

    namespace: str
    name: str
    uid: str
    digest: str
    node: str = ""
    phase: str = ""
    obj: dict[str, Any] | None = None  # the cleaned object, until its line is written


def _digest(value: Any) -> str:
    return hashlib.blake2b(json.dumps(value, sort_keys=True, separators=(",", ":")).encode(), digest_size=12).hexdigest()


def scheduling_view(kind: str, obj: dict[str, Any]) -> Any:
    """The part of a cleaned object whose change is an ``update`` event (module docstring)."""
    meta = obj.get("metadata") or {}
    spec = obj.get("spec")
    if kind == "Pod":
        spec = {k: v for k, v in (spec or {}).items() if k != "nodeName"}
        return [meta.get("labels"), spec]
    if kind == "Node":
        notes = {k: v for k, v in (meta.get("annotations") or {}).items() if k != HEARTBEAT_ANNOTATION}
        return [meta.get("labels"), notes, spec, obj.get("status")]
    if kind in WORKLOADS:
        return [meta.get("labels"), spec]
    return {k: v for k, v in obj.items() if k != "metadata"} | {"metadata": meta}


def _seen(kind: str, api_version: str, raw: dict[str, Any]) -> Seen:
    obj = snapshot.clean(raw, kind, api_version)
    meta = obj.get("metadata") or {}
    status = obj.get("status") or {}
    return Seen(str(meta.get("namespace") or ""), str(meta.get("name") or ""), str(meta.get("uid") or ""), _digest(scheduling_view(kind, obj)),
                str((obj.get("spec") or {}).get("nodeName") or "") if kind == "Pod" else "",
                str(status.get("phase") or "") if kind == "Pod" else "", obj)


def _decoder(kind: str, api_version: str) -> Callable[[dict[str, Any]], Seen]:
    return lambda raw: _seen(kind, api_version, raw)


class Writer:
    """Lines to the recording, from the informers' threads, one lock; counts per op."""

    def __init__(self, path: str, source: str, clock: Callable[[], float] = time.time,
                 server_version: dict[str, Any] | None = None) -> None:
        """``server_version``: the cluster's ``/version``, kept in the header (a replay then
        decides as that release)."""
        self.clock = clock
        self.started = clock()
        self.counts: Counter[str] = Counter()
        self.lock = threading.RLock()
        try:
            self.fh: IO[str] = open_text(path, "w")
        except OSError as exc:
            raise KubeschedError(f"record -o {path}: {exc.strerror or exc}") from None
        started = dt.datetime.fromtimestamp(self.started, dt.timezone.utc).isoformat(timespec="milliseconds")
        header = {"format": FORMAT, "version": VERSION, "source": source, "started": started.replace("+00:00", "Z")}
        self.line(header | ({"serverVersion": server_version} if server_version else {}))

    def now(self) -> float:
        return round(max(0.0, self.clock() - self.started), 3)

    def line(self, row: dict[str, Any]) -> None:
        with self.lock:
            self.fh.write(json.dumps(row, separators=(",", ":")) + "\n")
            op = row.get("op")
            if op is not None:
                self.counts[str(op)] += 1

    def event(self, op: str, **fields: Any) -> None:
        self.line({"t": self.now(), "op": op, **fields})

    def flush(self) -> None:
        with self.lock:
            self.fh.flush()

    def close(self) -> None:
        with self.lock:
            self.fh.close()


class Sink(Protocol):
    """Where the recorder's lines go: a :class:`Writer` (``record``), or serve's mirror of
    the cluster (``serve --sync``). Its ``lock`` is the informers' lock."""

    lock: threading.RLock

    def line(self, row: dict[str, Any]) -> None: ...

    def event(self, op: str, **fields: Any) -> None: ...

    def now(self) -> float: ...


class Recorder:
    def __init__(self, client: KubeClient, writer: Sink, what: str = "record") -> None:
        """``what``: the command named in errors."""
        self.client = client
        self.what = what
        self.w = writer
        self.informers: dict[str, Informer[Seen]] = {}
        self.warnings: list[str] = []
        self.not_served: list[str] = []
        self.watched: list[str] = []  # the kinds :meth:`served` found listable
        self.finished_at_start = 0

    # -- which kinds --------------------------------------------------------------------
    @staticmethod
    def kinds() -> tuple[str, ...]:
        return snapshot.ORDER

    def served(self, kind: str) -> bool:
        """Whether ``kind`` can be listed: 404 not served, 403 forbidden (a warning); nodes
        and pods must be listable (the snapshot's rules). A listable kind is watched."""
        res = snapshot.RESOURCES[kind]
        try:
            self.client.request("GET", res.path, query={"limit": "1"}, timeout=60.0)
            self.watched.append(kind)
            return True
        except TransportError as exc:
            raise KubeschedError(f"{self.what}: cannot reach the API server at {self.client.host}: {exc}") from exc
        except ApiStatusError as exc:
            if kind in snapshot.REQUIRED or exc.code not in (403, 404):
                raise KubeschedError(f"{self.what}: listing {res.plural} at {self.client.host}: {exc}") from exc
            if exc.code == 404:
                self.not_served.append(kind)
            else:
                self.warnings.append(f"{kind}: forbidden ({exc.message}); not recorded")
            return False
        except KubeClientError as exc:
            raise KubeschedError(f"{self.what}: listing {res.plural} at {self.client.host}: {exc}") from exc

    def start(self, *, checked: bool = False) -> None:
        """Start watching; ``checked``: :meth:`served` was called for every kind already."""
        if not checked:
            for kind in self.kinds():
                self.served(kind)
        for kind in self.watched:
            res = snapshot.RESOURCES[kind]
            version = f"{res.group}/{res.version}" if res.group else res.version
            watched = dataclasses.replace(res, decode=_decoder(kind, version), redecode=None, field_selector="", optional=kind not in snapshot.REQUIRED)
            inf: Informer[Seen] = Informer(self.client, watched, lock=self.w.lock, backoff=BACKOFF)
            inf.on_add = lambda s, k=kind, i=inf: self._add(k, i, s)
            inf.on_update = lambda old, new, k=kind: self._update(k, old, new)
            inf.on_delete = lambda s, _stale, k=kind: self._delete(k, s)
            self.informers[kind] = inf
        for inf in self.informers.values():
            inf.start()

    @property
    def synced(self) -> bool:
        return all(i.has_synced for i in self.informers.values())

    def mark_synced(self) -> None:
        self.w.line({"op": "synced", "t": self.w.now(),
                     "counts": {k: len(i) for k, i in self.informers.items() if len(i)}})

    def stop(self) -> None:
        for inf in self.informers.values():
            inf.stop(timeout=5.0)

    # -- informer callbacks (under the writer's lock) -----------------------------------
    def _add(self, kind: str, inf: Informer[Seen], s: Seen) -> None:
        obj, s.obj = s.obj, None
        if not inf.has_synced:  # the first list: the starting state
            if kind == "Pod" and s.phase in TERMINAL:
                self.finished_at_start += 1
                return
            self.w.line({"op": "initial", "object": obj})
            return
        self.w.event("add", object=obj)
        if kind == "Pod" and s.phase in TERMINAL:
            self._pod_event("finish", obj or {}, phase=s.phase)

    def _update(self, kind: str, old: Seen, new: Seen) -> None:
        obj, new.obj = new.obj, None
        if obj is None:
            return
        if new.digest != old.digest:
            self.w.event("update", object=obj)
        if kind != "Pod":
            return
        if new.node and not old.node:
            spec = obj.get("spec") or {}
            self._pod_event("bind", obj, node=new.node, scheduler=str(spec.get("schedulerName") or "default-scheduler"))
        if new.phase in TERMINAL and old.phase not in TERMINAL:
            self._pod_event("finish", obj, phase=new.phase)

    def _delete(self, kind: str, s: Seen) -> None:
        s.obj = None
        self.w.event("delete", kind=kind, namespace=s.namespace, name=s.name, uid=s.uid)

    def _pod_event(self, op: str, obj: dict[str, Any], **fields: Any) -> None:
        meta = obj.get("metadata") or {}
        self.w.event(op, namespace=str(meta.get("namespace") or ""), name=str(meta.get("name") or ""),
                     uid=str(meta.get("uid") or ""), **fields)
