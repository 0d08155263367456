"""What every in-process controller shares: workers over a :class:`WorkQueue`, reading its
own writes, and small helpers on raw objects (owner references, conditions, times).

A controller subclasses :class:`Controller` and implements ``sync(key)``: read the
object from informer caches, compare with the desired state, write the difference. A
``sync`` that raises is retried with backoff; a 409 Conflict (a stale cache) is the usual
cause and is not logged as an error. After writing, a controller calls :meth:`expect`
with the revision it wrote; the next ``sync`` of that key first waits until the informer
has seen it, so a pod just created is never created twice (upstream's "expectations").
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.strategies.base import parse_rfc3339, rfc3339
from kubesched.server.controllers.informer import Informer, Obj
from kubesched.server.controllers.workqueue import WorkQueue

log = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)


class Controller(Generic[K]):
    """Workers that run ``sync`` for queued keys."""

    name = "controller"
    batch = 1  # keys one worker takes at once when that many are queued: each synced, then flush()

    def __init__(self, workers: int = 1) -> None:
        self.queue: WorkQueue[K] = WorkQueue()
        self.workers = workers
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._expectations: dict[K, list[tuple[Informer, int]]] = {}
        self._exp_lock = threading.Lock()

    def sync(self, key: K) -> None:
        raise NotImplementedError

    # -- reading one's own writes -------------------------------------------------------------
    def expect(self, key: K, informer: Informer, written: Obj | None) -> None:
        """Before ``key`` is synced again, wait until ``informer`` has seen ``written``."""
        try:
            rv = int(((written or {}).get("metadata") or {}).get("resourceVersion") or 0)
        except (TypeError, ValueError):
            return
        if rv:
            with self._exp_lock:
                self._expectations.setdefault(key, []).append((informer, rv))

    def _await_expectations(self, key: K) -> None:
        with self._exp_lock:
            pending = self._expectations.pop(key, [])
        best: dict[int, tuple[Informer, int]] = {}
        for inf, rv in pending:
            if rv > best.get(id(inf), (inf, 0))[1]:
                best[id(inf)] = (inf, rv)
        for inf, rv in best.values():
            if not inf.wait_for(rv, timeout=10.0) and not self._stopping.is_set():
                log.warning("%s: %s cache did not reach revision %d", self.name, inf.resource, rv)

    # -- running ------------------------------------------------------------------------------
    def start(self) -> None:
        for i in range(self.workers):
            t = threading.Thread(target=self._worker, name=f"{self.name}-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self) -> None:
        self._stopping.set()
        self.queue.shutdown()
        for t in self._threads:
            t.join(timeout=5)

    def _worker(self) -> None:
        while not self._stopping.is_set():
            key = self.queue.get(timeout=0.5)
            if key is None:
                continue
            keys = [key]
            while len(keys) < self.batch:  # the keys queued now, up to a batch (never waits for more)
                more = self.queue.get(timeout=0)
                if more is None:
                    break
                keys.append(more)
            try:
                for k in keys:
                    self._sync_key(k)
                self._flush()
            finally:
                for k in keys:  # a key is not synced again (by any worker) before its batch is flushed
                    self.queue.done(k)

    def _sync_key(self, key: K) -> None:
        try:
            self._await_expectations(key)
            self.sync(key)
            self.queue.forget(key)
        except ApiError as exc:
            self.failed(key, exc)
        except Exception:
            if self._stopping.is_set():
                return
            log.exception("%s: syncing %s", self.name, key)
            self.queue.add_rate_limited(key)

    def failed(self, key: K, exc: ApiError) -> None:
        """``key``'s sync (or its batch's write) failed with ``exc``: retried with backoff."""
        if exc.code not in (404, 409):
            log.warning("%s: syncing %s: %s", self.name, key, exc.message)
        self.queue.add_rate_limited(key)

    def _flush(self) -> None:
        try:
            self.flush()
        except Exception:
            if not self._stopping.is_set():
                log.exception("%s: writing a batch", self.name)

    def flush(self) -> None:
        """Write what the syncs of this worker's batch (``batch`` keys at most) deferred, after
        the last of them and before their keys are done; report a key's failure with :meth:`failed`."""


# -- helpers on raw objects -------------------------------------------------------------------
def meta(obj: Obj) -> dict[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def uid_of(obj: Obj) -> str:
    return str(meta(obj).get("uid") or "")


def deleting(obj: Obj) -> bool:
    return bool(meta(obj).get("deletionTimestamp"))


def key_of(obj: Obj) -> tuple[str, str]:
    """The work-queue key of an object: (namespace, name); namespace "" when cluster-scoped."""
    m = meta(obj)
    return str(m.get("namespace") or ""), str(m.get("name"))


def owner_key(pod: Obj | None, kind: str) -> tuple[str, str] | None:
    """The key of ``pod``'s controller when it is of ``kind`` (same namespace), else None."""
    ref = controller_ref(pod) if pod is not None else None
    if pod is None or ref is None or ref.get("kind") != kind:
        return None
    return str(meta(pod).get("namespace") or ""), str(ref.get("name"))


def controller_ref(obj: Obj) -> dict[str, Any] | None:
    for ref in meta(obj).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return None


def owner_reference(owner: Obj, api_version: str, kind: str) -> dict[str, Any]:
    """The controller reference a controller puts on what it creates."""
    return {"apiVersion": api_version, "kind": kind, "name": meta(owner).get("name"), "uid": uid_of(owner),
            "controller": True, "blockOwnerDeletion": True}


def timestamp(t: float) -> str:
    return rfc3339(t)


def micro_timestamp(t: float) -> str:
    """metav1.MicroTime: RFC 3339 with microseconds (Lease renewTime, Event eventTime)."""
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(s: Any) -> float | None:
    if not isinstance(s, str):
        return None
    base = parse_rfc3339(s)
    if base is None:
        return None
    if len(s) > 20 and s[19] == ".":
        frac = s[20:].rstrip("Z")
        if frac.isdigit():
            base += float(f"0.{frac}")
    return base


def condition(obj: Obj, type_: str) -> dict[str, Any] | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == type_:
            return c
    return None


def pod_ready(pod: Obj) -> bool:
    c = condition(pod, "Ready")
    return c is not None and c.get("status") == "True"


def pod_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def pod_active(pod: Obj) -> bool:
    """Upstream ``controller.IsPodActive``: not terminal and not being deleted."""
    return not pod_terminal(pod) and not deleting(pod)


def update_with_retry(get: Callable[[], Obj], mutate: Callable[[Obj], Obj | None],
                      write: Callable[[Obj], Obj], attempts: int = 5) -> Obj | None:
    """Read, change and write an object, retrying on 409 with a fresh read; None when
    ``mutate`` finds nothing to change (or the object is gone)."""
    for i in range(attempts):
        try:
            cur = get()
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise
        new = mutate(cur)
        if new is None:
            return None
        try:
            return write(new)
        except ApiError as exc:
            if exc.code != 409 or i + 1 == attempts:
                raise
    return None
