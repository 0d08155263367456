"""Leader election with a ``coordination.k8s.io/v1`` Lease, as client-go's
``tools/leaderelection`` does it for kube-scheduler (v1.34.1).

* **Acquire**: every ``retry_period`` (stretched by a random jitter of up to 1.2x, client-go's
  ``JitterFactor``) read the Lease; create it if absent; take it if it has no holder, or if
  its record has not changed for ``leaseDurationSeconds`` as measured on *our* clock since
  we last saw it change (never by comparing the record's ``renewTime`` with our clock:
  clocks of replicas differ).
* **Renew**: every ``retry_period`` update the Lease (the fast path writes our cached copy
  directly; on failure, read and retry). If no renewal succeeds within ``renew_deadline``,
  leadership is lost.
* **Release** (upstream's ``ReleaseOnCancel``, which kube-scheduler sets): on a graceful stop
  the leader writes an empty holder with ``leaseDurationSeconds: 1``, so another replica
  takes over at its next try instead of after the lease duration.

Every write is an update of the object read (its ``resourceVersion``): two candidates
writing at once get one success and one 409 Conflict, so at most one holds the lease.

**Fence** (not in client-go; kubesched's addition): :meth:`LeaderElector.fence` is called
right before every write of a decision (a binding, a victim's deletion, a status patch, an
event) and raises :class:`FencedError` unless the lease is provably ours: we lead and our
last successful acquisition or renewal *started* (``renewed_at``, on the monotonic clock)
less than ``renew_deadline`` ago. A standby takes the lease no sooner than
``lease_duration`` after it saw that write, so a write let through has at least
``lease_duration - renew_deadline`` to arrive before anyone else may decide. The monotonic
clock goes on while the process is stopped (SIGSTOP, a frozen VM), so a replica thawed
after a long pause fails the fence at its first write, and its renewal loop, whose deadline
is counted from ``renewed_at`` too, gives leadership up at once instead of trying for
another ``renew_deadline``. The check and the request are not atomic: the check runs
after the client's rate limiter, just before urllib3 writes the request, so the window is
the time that write takes (a pooled connection: well under a millisecond); a pause that
falls inside it goes unseen, as it would in upstream (which does not check at all).

Events as upstream's lock records them: core/v1 ``LeaderElection`` events on the Lease,
``"<identity> became leader"`` and ``"<identity> stopped leading"``, from the first
profile's scheduler name.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from kubesched.cluster.kube.client import KubeClient
from kubesched.cluster.kube.errors import ApiStatusError, FencedError, KubeClientError

log = logging.getLogger(__name__)

JITTER_FACTOR = 1.2  # client-go's leaderelection.JitterFactor
LEASES = "/apis/coordination.k8s.io/v1"


def default_identity() -> str:
    """``<hostname>_<uuid>``, as kube-scheduler makes it (the uuid keeps two processes on
    one host apart)."""
    try:
        host = socket.gethostname() or os.uname().nodename
    except OSError:
        host = "localhost"
    return f"{host}_{uuid.uuid4()}"


def _micro_time(t: datetime | None) -> str | None:
    """metav1.MicroTime's JSON form: RFC 3339 with microseconds, UTC."""
    if t is None:
        return None
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(s: Any) -> datetime | None:
    if not isinstance(s, str) or not s:
        return None
    try:
        return datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class LeaderElectionRecord:
    """client-go's ``LeaderElectionRecord``: what a Lease's spec says about its leader."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: datetime | None = None
    renew_time: datetime | None = None
    leader_transitions: int = 0

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> "LeaderElectionRecord":
        return cls(holder_identity=str(spec.get("holderIdentity") or ""),
                   lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
                   acquire_time=_parse_time(spec.get("acquireTime")),
                   renew_time=_parse_time(spec.get("renewTime")),
                   leader_transitions=int(spec.get("leaseTransitions") or 0))

    def to_spec(self) -> dict[str, Any]:
        """The Lease spec (client-go's ``LeaderElectionRecordToLeaseSpec``; a released lease
        has ``holderIdentity: ""``)."""
        return {"holderIdentity": self.holder_identity, "leaseDurationSeconds": self.lease_duration_seconds,
                "acquireTime": _micro_time(self.acquire_time), "renewTime": _micro_time(self.renew_time),
                "leaseTransitions": self.leader_transitions}


class LeaseLock:
    """A Lease ``namespace/name`` as a lock: get, create, update (of the copy last read or
    written, so a concurrent writer makes this update fail with 409), and events on it."""

    def __init__(self, client: KubeClient, namespace: str, name: str, identity: str, *,
                 event_source: str = "kube-scheduler", timeout: float = 5.0) -> None:
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.event_source = event_source
        self.timeout = timeout
        self.lease: dict[str, Any] | None = None

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def _path(self) -> str:
        return f"{LEASES}/namespaces/{self.namespace}/leases/{self.name}"

    def get(self) -> tuple[LeaderElectionRecord, bytes]:
        """The record and its canonical bytes (to notice changes); raises ApiStatusError (404)."""
        lease = self.client.request("GET", self._path, timeout=self.timeout)
        self.lease = lease
        spec = lease.get("spec") or {}
        return LeaderElectionRecord.from_spec(spec), json.dumps(spec, sort_keys=True).encode()

    def create(self, record: LeaderElectionRecord) -> None:
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace}, "spec": record.to_spec()}
        self.lease = self.client.request("POST", f"{LEASES}/namespaces/{self.namespace}/leases", body=body,
                                         timeout=self.timeout)

    def update(self, record: LeaderElectionRecord) -> None:
        if self.lease is None:
            raise KubeClientError("lease not initialized, call get or create first")
        body = {**self.lease, "spec": record.to_spec()}
        self.lease = self.client.request("PUT", self._path, body=body, timeout=self.timeout)

    def record_event(self, what: str) -> None:
        """A core/v1 ``LeaderElection`` event on the Lease (best effort, in the background,
        as upstream's recorder sends it)."""
        meta = (self.lease or {}).get("metadata") or {}
        now = datetime.now(timezone.utc)
        event = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{self.name}.{time.time_ns():x}", "namespace": self.namespace},
            "involvedObject": {"kind": "Lease", "apiVersion": "coordination.k8s.io/v1", "namespace": self.namespace,
                               "name": self.name, "uid": meta.get("uid", ""),
                               "resourceVersion": meta.get("resourceVersion", "")},
            "reason": "LeaderElection", "message": f"{self.identity} {what}", "type": "Normal",
            "source": {"component": self.event_source},
            "firstTimestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "lastTimestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "count": 1,
        }

        def send() -> None:
            try:
                self.client.request("POST", f"/api/v1/namespaces/{self.namespace}/events", body=event,
                                    timeout=self.timeout)
            except KubeClientError as exc:
                log.debug("leader election event not recorded: %s", exc)

        threading.Thread(target=send, name="leader-election-event", daemon=True).start()


@dataclass(slots=True)
class LeaderCallbacks:
    on_started_leading: Callable[[], None]
    on_stopped_leading: Callable[[], None]
    on_new_leader: Callable[[str], None] | None = None


@dataclass(slots=True)
class _Observed:
    record: LeaderElectionRecord = field(default_factory=LeaderElectionRecord)
    raw: bytes = b""
    time: float = 0.0  # our monotonic clock when the record was last seen to change


class LeaderElector:
    """One candidate. :meth:`run` blocks: it acquires (until ``stop``), calls
    ``on_started_leading`` in a new thread, renews until leadership is lost or ``stop`` is
    set, releases the lease on a graceful stop, and calls ``on_stopped_leading`` (always,
    as client-go does, even when the lease was never acquired)."""

    def __init__(self, lock: LeaseLock, *, lease_duration: float, renew_deadline: float, retry_period: float,
                 callbacks: LeaderCallbacks, release_on_cancel: bool = True, name: str = "kube-scheduler",
                 monotonic: Callable[[], float] = time.monotonic,
                 wall: Callable[[], datetime] = lambda: datetime.now(timezone.utc)) -> None:
        if lease_duration <= renew_deadline:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
        if retry_period < 0.001:
            raise ValueError("retryPeriod must be positive")
        self.lock = lock
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.callbacks = callbacks
        self.release_on_cancel = release_on_cancel
        self.name = name
        self.monotonic = monotonic
        self.wall = wall
        self._observed = _Observed()
        self._observed_lock = threading.Lock()
        self._reported_leader = ""
        self.leading = threading.Event()  # set while this candidate holds the lease
        self.transitions = 0  # times this candidate acquired the lease
        # monotonic time at which our last successful acquisition or renewal was started
        self.renewed_at: float | None = None

    # -- state -----------------------------------------------------------------------------
    @property
    def identity(self) -> str:
        return self.lock.identity

    def _observed_record(self) -> LeaderElectionRecord:
        with self._observed_lock:
            return self._observed.record

    def _set_observed(self, record: LeaderElectionRecord, raw: bytes | None = None) -> None:
        with self._observed_lock:
            self._observed.record = record
            if raw is not None:
                self._observed.raw = raw
            self._observed.time = self.monotonic()

    def get_leader(self) -> str:
        return self._observed_record().holder_identity

    def is_leader(self) -> bool:
        return self._observed_record().holder_identity == self.identity

    def _lease_valid(self, now: float) -> bool:
        with self._observed_lock:
            return self._observed.time + self._observed.record.lease_duration_seconds > now

    def holds(self) -> bool:
        """The lease is provably ours: we lead and our last renewal started less than
        ``renew_deadline`` ago (one monotonic read)."""
        renewed = self.renewed_at
        return self.leading.is_set() and renewed is not None and self.monotonic() - renewed < self.renew_deadline

    def fence(self) -> None:
        """Raise :class:`FencedError` unless :meth:`holds`: called right before each write of
        a decision."""
        if self.holds():
            return
        renewed = self.renewed_at
        age = "never renewed" if renewed is None else f"last renewed {self.monotonic() - renewed:.1f}s ago"
        raise FencedError(f"{self.identity} cannot prove it holds the lease {self.lock.describe()} "
                          f"({'leading' if self.leading.is_set() else 'not leading'}, {age}; "
                          f"renewDeadline {self.renew_deadline:g}s): the write was not sent")

    def check(self, max_tolerable_expired_lease: float = 20.0) -> str | None:
        """The health check (client-go's ``HealthzAdaptor``): an error when this candidate
        thinks it leads but has not renewed for the lease duration plus the tolerance."""
        if not self.is_leader():
            return None
        with self._observed_lock:
            since = self.monotonic() - self._observed.time
        if since > self.lease_duration + max_tolerable_expired_lease:
            return f"failed election to renew leadership on lease {self.name}"
        return None

    # -- the loops -------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        try:
            if not self._acquire(stop):
                return
            self.leading.set()
            self.transitions += 1
            threading.Thread(target=self.callbacks.on_started_leading, name="leader", daemon=True).start()
            self._renew(stop)
        finally:
            self.leading.clear()
            self.callbacks.on_stopped_leading()

    def _acquire(self, stop: threading.Event) -> bool:
        log.info("attempting to acquire leader lease %s...", self.lock.describe())
        while not stop.is_set():
            succeeded = self.try_acquire_or_renew()
            self._maybe_report_transition()
            if succeeded:
                self.lock.record_event("became leader")
                log.info("successfully acquired lease %s", self.lock.describe())
                return True
            # wait.JitterUntil, sliding: the period (plus jitter) starts after the try
            if stop.wait(self.retry_period * (1 + random.random() * JITTER_FACTOR)):
                break
        return False

    def _renew(self, stop: threading.Event) -> None:
        try:
            while not stop.is_set():
                renewed = self._poll_renew(stop)
                self._maybe_report_transition()
                if stop.is_set():
                    break
                if not renewed:
                    log.error("failed to renew lease %s: timed out waiting for the condition", self.lock.describe())
                    self.leading.clear()
                    break
                stop.wait(self.retry_period)
            if self.release_on_cancel:  # as upstream, also after a failed renewal (if still ours)
                self.release()
        finally:
            self.lock.record_event("stopped leading")

    def _poll_renew(self, stop: threading.Event) -> bool:
        """wait.PollUntilContextTimeout (immediate): try now, then every retry period, until
        a try succeeds (True) or ``renew_deadline`` has passed or ``stop`` is set (False).
        The deadline counts from the start of the last successful renewal (upstream: from
        the start of this poll, a retry period later), the instant the fence stops our writes;
        a replica thawed after a long pause finds it passed and tries no more."""
        start = self.renewed_at if self.renewed_at is not None else self.monotonic()
        deadline = start + self.renew_deadline
        while not stop.is_set():
            if self.monotonic() >= deadline:
                return False
            if self.try_acquire_or_renew():
                return True
            left = deadline - self.monotonic()
            if left <= 0 or stop.wait(min(self.retry_period, left)) or self.monotonic() >= deadline:
                return False  # no try once the deadline has passed, as the context's timeout
        return False

    def _ours(self, now: datetime, kept_from: LeaderElectionRecord | None = None) -> LeaderElectionRecord:
        """Our record renewed at ``now``: a renewal keeps ``kept_from``'s acquire time and
        transitions; a new acquisition (``kept_from`` None) starts both afresh."""
        duration = int(self.lease_duration)
        if kept_from is None:
            return LeaderElectionRecord(holder_identity=self.identity, lease_duration_seconds=duration,
                                        acquire_time=now, renew_time=now)
        return LeaderElectionRecord(holder_identity=self.identity, lease_duration_seconds=duration,
                                    acquire_time=kept_from.acquire_time, renew_time=now,
                                    leader_transitions=kept_from.leader_transitions)

    def try_acquire_or_renew(self) -> bool:
        """One try; on success ``renewed_at`` is the monotonic time at which the try began
        (before its request was sent: a conservative start of the lease)."""
        started = self.monotonic()
        if self._try_acquire_or_renew():
            self.renewed_at = started
            return True
        return False

    def _try_acquire_or_renew(self) -> bool:
        now_wall = self.wall()
        record = self._ours(now_wall)
        # fast path: the leader updates its cached copy without reading it first
        if self.is_leader() and self._lease_valid(self.monotonic()):
            fast = self._ours(now_wall, kept_from=self._observed_record())
            try:
                self.lock.update(fast)
                self._set_observed(fast)
                return True
            except KubeClientError as exc:
                log.warning("failed to update lock optimistically: %s, falling back to slow path", exc)
        try:
            old, raw = self.lock.get()
        except ApiStatusError as exc:
            if not exc.not_found:
                log.warning("error retrieving resource lock %s: %s", self.lock.describe(), exc)
                return False
            try:
                self.lock.create(record)
            except KubeClientError as exc2:
                log.warning("error initially creating leader election record: %s", exc2)
                return False
            self._set_observed(record)
            return True
        except KubeClientError as exc:
            log.warning("error retrieving resource lock %s: %s", self.lock.describe(), exc)
            return False
        with self._observed_lock:
            changed = raw != self._observed.raw
        if changed:
            self._set_observed(old, raw)
        if old.holder_identity and self._lease_valid(self.monotonic()) and not self.is_leader():
            log.debug("lock is held by %s and has not yet expired", old.holder_identity)
            return False
        if self.is_leader():
            record = self._ours(now_wall, kept_from=old)
        else:
            record = dataclasses.replace(record, leader_transitions=old.leader_transitions + 1)
        return self._write(record, "failed to update lock")

    def _write(self, record: LeaderElectionRecord, failure: str) -> bool:
        """Update the lock with ``record`` and observe it; False (logged) if that fails."""
        try:
            self.lock.update(record)
        except KubeClientError as exc:
            log.warning("%s: %s", failure, exc)
            return False
        self._set_observed(record)
        return True

    def release(self) -> bool:
        """Give the lease up (if still ours): no holder, a one-second duration."""
        try:
            old, _ = self.lock.get()
        except KubeClientError as exc:
            log.warning("error retrieving resource lock %s: %s", self.lock.describe(), exc)
            return False
        if not self.is_leader() or old.holder_identity != self.identity:
            return True
        now = self.wall()
        record = LeaderElectionRecord(lease_duration_seconds=1, acquire_time=now, renew_time=now,
                                      leader_transitions=old.leader_transitions)
        if not self._write(record, "failed to release lock"):
            return False
        log.info("released lease %s", self.lock.describe())
        return True

    def _maybe_report_transition(self) -> None:
        holder = self._observed_record().holder_identity
        if holder == self._reported_leader:
            return
        self._reported_leader = holder
        if self.callbacks.on_new_leader is not None:
            threading.Thread(target=self.callbacks.on_new_leader, args=(holder,), daemon=True).start()
