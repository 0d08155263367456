"""``kubesched serve --sync --kubeconfig K``: a serve that follows a live cluster, read-only
towards it, so that people can explore the live cluster's state with kubectl and the web UI
of serve and try pods against it without touching the real one.

The live cluster is watched exactly as ``kubesched record`` watches it
(:class:`~kubesched.sim.recording.recorder.Recorder`: list and watch only, the same kinds,
the same notion of what changed), but each line the recorder would write is applied to
serve's registry instead (:class:`Mirror`): the starting state is loaded as ``serve --from``
loads a snapshot (owner references rewritten to serve's uids), then adds are created,
updates replace labels, annotations and spec (and status through the status subresource),
deletes delete (pods at once), binds bind through the ``binding`` subresource, and a pod's
phase is the live one when it is created and when it finishes (a pod that starts running
later stays Pending here: the recorder does not follow status writes).

Serve's scheduler keeps running, for the pods users create in serve: a pending pod of the
live cluster is mirrored with ``schedulerName`` set to :data:`SYNC_SCHEDULER` (its own kept in
the :data:`ORIGINAL` annotation), so serve's scheduler leaves it to the live binding that
follows. Serve's workload controllers, simulated kubelets and node lifecycle controller are
off (the live cluster's own do that work: two would create pods twice, and mirrored nodes
have no heartbeats). A change that serve refuses (an update of an immutable field) is logged
and counted, never fatal.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from kubesched.cli.serve_from import Loader, _ordered, _resource_name, check_empty
from kubesched.cluster.kube import KubeClient
from kubesched.sim.recording.recorder import Recorder

if TYPE_CHECKING:
    from kubesched.server.apiserver.registry.registry import Registry

log = logging.getLogger(__name__)

SYNC_SCHEDULER = "kubesched-sync"
ORIGINAL = "kubesched.io/live-scheduler-name"


class Mirror:
    """What :class:`Recorder` writes to (a :class:`~kubesched.sim.recording.recorder.Writer`
    in ``record``), applied to serve's registry."""

    def __init__(self, registry: "Registry", source: str) -> None:
        self.registry = registry
        self.loader = Loader(registry, source, flag="--sync")
        self.lock = threading.RLock()
        self.counts: Counter[str] = Counter()
        self.failed: Counter[str] = Counter()
        self.started = time.time()
        self._initial: list[dict[str, Any]] = []
        self._early: list[dict[str, Any]] = []  # events of kinds that synced before the others
        self.loaded = False

    # -- the Writer interface the Recorder uses ----------------------------------------------
    def now(self) -> float:
        return round(time.time() - self.started, 3)

    def event(self, op: str, **fields: Any) -> None:
        self.line({"t": self.now(), "op": op, **fields})

    def line(self, row: dict[str, Any]) -> None:
        op = str(row.get("op"))
        self.counts[op] += 1
        if op == "initial":
            self._initial.append(self._pending_pod(row["object"]))
        elif op == "synced":
            self._load()
        elif not self.loaded:
            self._early.append(row)
        else:
            self._apply(row)

    # -- applying ----------------------------------------------------------------------------
    def _load(self) -> None:
        for obj in _ordered(self._initial):
            self._guarded("initial", lambda o=obj: self._create(o))
        self._initial = []
        self.loaded = True
        for row in self._early:
            self._apply(row)
        self._early = []
        log.info("--sync: starting state loaded (%s)", self.loader.result.summary())

    def _apply(self, row: dict[str, Any]) -> None:
        op = str(row.get("op"))
        if op in ("add", "update"):
            obj = self._pending_pod(row["object"])
            self._guarded(op, lambda: self._upsert(obj))
        elif op == "delete":
            self._guarded(op, lambda: self._delete(row))
        elif op == "bind":
            self._guarded(op, lambda: self._bind(row))
        elif op == "finish":
            self._guarded(op, lambda: self._finish(row))

    def _guarded(self, op: str, fn: Any) -> None:
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - one refused change must not stop the mirror
            self.failed[op] += 1
            log.warning("--sync: %s not applied: %s", op, exc)

    @staticmethod
    def _pending_pod(obj: dict[str, Any]) -> dict[str, Any]:
        """A pending pod waits for the live cluster's binding, not for serve's scheduler."""
        if obj.get("kind") != "Pod" or (obj.get("spec") or {}).get("nodeName"):
            return obj
        obj = copy.deepcopy(obj)
        spec = obj.setdefault("spec", {})
        meta = obj.setdefault("metadata", {})
        meta["annotations"] = {**(meta.get("annotations") or {}),
                               ORIGINAL: str(spec.get("schedulerName") or "default-scheduler")}
        spec["schedulerName"] = SYNC_SCHEDULER
        return obj

    def _upsert(self, obj: dict[str, Any]) -> None:
        from kubesched.server.apiserver.errors import ApiError

        res = _resource_name(obj)
        meta = obj.get("metadata") or {}
        ns, name = meta.get("namespace") or None, str(meta.get("name") or "")
        try:
            cur = self.registry.get(res, ns, name)
        except ApiError as exc:
            if exc.code != 404:
                raise
            self._create(obj)
            return
        body = self.loader.body(obj)
        new_meta = {**(cur.get("metadata") or {}), **{k: v for k, v in (body.get("metadata") or {}).items()
                                                      if k in ("labels", "annotations", "ownerReferences")}}
        new = {**cur, "metadata": new_meta}
        if obj.get("kind") != "Pod":  # a pod's spec is immutable but for what binding sets
            new["spec"] = body.get("spec", cur.get("spec"))
        made = self.registry.update(res, ns, name, new)
        status = self.loader.status(obj)
        if status is not None and self.registry.resource(res).has_status:
            self.registry.update(res, ns, name, {**made, "status": {**(made.get("status") or {}), **status}},
                                 subresource="status")

    def _create(self, obj: dict[str, Any]) -> None:
        """Create ``obj``; a pod gets its live phase (no simulated kubelet runs here to set one)."""
        self.loader.create(obj)
        phase = (obj.get("status") or {}).get("phase")
        if obj.get("kind") == "Pod" and phase and phase != "Pending":
            meta = obj.get("metadata") or {}
            self._finish({"namespace": meta.get("namespace"), "name": meta.get("name"), "phase": phase})

    def _delete(self, row: dict[str, Any]) -> None:
        from kubesched.server.apiserver.errors import ApiError
        from kubesched.sim.snapshot import RESOURCES

        r = RESOURCES[str(row["kind"])]
        res = f"{r.plural}.{r.group}" if r.group else r.plural
        try:
            self.registry.delete(res, row.get("namespace") or None, str(row["name"]), {"gracePeriodSeconds": 0})
        except ApiError as exc:
            if exc.code != 404:
                raise

    def _bind(self, row: dict[str, Any]) -> None:
        from kubesched.server.apiserver.registry.subresources import bind

        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": row["name"]},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": row["node"]}}
        bind(self.registry, str(row["namespace"]), str(row["name"]), binding)

    def _finish(self, row: dict[str, Any]) -> None:
        ns, name = str(row["namespace"]), str(row["name"])
        cur = self.registry.get("pods", ns, name)
        cur["status"] = {**(cur.get("status") or {}), "phase": row["phase"]}
        self.registry.update("pods", ns, name, cur, subresource="status")


class LiveSync:
    """The server component: the recorder's informers on the live cluster, feeding a
    :class:`Mirror` of serve's registry."""

    name = "live-sync"

    def __init__(self, client: KubeClient, mirror: Mirror) -> None:
        self.client = client
        self.mirror = mirror
        self.recorder = Recorder(client, mirror, what="--sync")
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def check(self) -> list[str]:
        """List each kind once (before serving): an unreachable cluster is an error now; the
        warnings (kinds it may not list) are returned."""
        for kind in list(self.recorder.kinds()):
            self.recorder.served(kind)
        return self.recorder.warnings

    def start(self, server: Any) -> None:
        self.recorder.start(checked=True)
        self._thread = threading.Thread(target=self._wait_synced, name="live-sync", daemon=True)
        self._thread.start()

    def _wait_synced(self) -> None:
        while not self._stop.wait(0.1):
            if self.recorder.synced:
                with self.mirror.lock:
                    self.recorder.mark_synced()
                print(f"--sync: following {self.client.host}: {self.mirror.loader.result.summary()}", flush=True)
                return

    def stop(self) -> None:
        self._stop.set()
        self.recorder.stop()
        self.client.close()


def check_target(registry: "Registry") -> None:
    check_empty(registry, "--sync")
