"""Unit tests of ``kubesched.cluster.kube.leaderelection``: the cases of client-go's
``tools/leaderelection`` tests (kubernetes/kubernetes,
staging/src/k8s.io/client-go/tools/leaderelection/leaderelection_test.go and
healthzadaptor_test.go), ported to an in-memory lock and fake clocks.

The fake lock has LeaseLock's interface (identity, describe, get, create, update,
record_event); the elector's ``monotonic`` and ``wall`` clocks are a FakeClock the test
advances, so nothing sleeps. The run() tests use a retry period of 1 ms (real waits of
``stop.wait``) and advance the fake clock from the lock to reach the renew deadline.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any, cast

import pytest

from kubesched.cluster.kube.errors import ApiStatusError, FencedError, KubeClientError
from kubesched.cluster.kube.leaderelection import (
    LeaderCallbacks,
    LeaderElectionRecord,
    LeaderElector,
    LeaseLock,
)

BASE = datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)
ME = "baz"
OTHER = "bing"


class FakeClock:
    """Monotonic seconds (``clock()``) and a wall clock (``clock.wall()``) that move only
    when the test (or the fake lock) advances them."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def wall(self) -> datetime:
        return BASE + timedelta(seconds=self.now - 1000.0)

    def advance(self, seconds: float) -> None:
        self.now += seconds


class FakeLock:
    """An in-memory Lease ``foo/bar`` with LeaseLock's interface. ``ops`` lists the calls
    ("get", "create", "update"), ``events`` the recorded events as upstream's FakeRecorder
    formats them. ``update_hook(n)`` runs on the n-th update (1-based) before it applies;
    it may raise to make that update fail."""

    def __init__(self, record: LeaderElectionRecord | None = None, identity: str = ME) -> None:
        self.identity = identity
        self.record = record
        self.ops: list[str] = []
        self.events: list[str] = []
        self.updates = 0
        self.update_hook: Callable[[int], None] | None = None
        self._mu = threading.Lock()

    def describe(self) -> str:
        return "foo/bar"

    def raw(self) -> bytes:
        assert self.record is not None
        return json.dumps(self.record.to_spec(), sort_keys=True).encode()

    def get(self) -> tuple[LeaderElectionRecord, bytes]:
        with self._mu:
            self.ops.append("get")
            if self.record is None:
                raise ApiStatusError(404, "NotFound", 'leases.coordination.k8s.io "bar" not found')
            return self.record, self.raw()

    def create(self, record: LeaderElectionRecord) -> None:
        with self._mu:
            self.ops.append("create")
            if self.record is not None:
                raise ApiStatusError(409, "AlreadyExists", 'leases.coordination.k8s.io "bar" already exists')
            self.record = record

    def update(self, record: LeaderElectionRecord) -> None:
        with self._mu:
            self.ops.append("update")
            self.updates += 1
            if self.update_hook is not None:
                self.update_hook(self.updates)
            self.record = record

    def record_event(self, what: str) -> None:
        with self._mu:
            self.events.append(f"Normal LeaderElection {self.identity} {what}")


def conflict(_: int = 0) -> None:
    raise ApiStatusError(409, "Conflict", 'Operation cannot be fulfilled on leases.coordination.k8s.io "bar"')


def noop() -> None:
    pass


def elector(lock: FakeLock, clock: FakeClock, *, lease_duration: float = 10.0, renew_deadline: float = 2.0,
            retry_period: float = 0.001, callbacks: LeaderCallbacks | None = None,
            release_on_cancel: bool = True, name: str = "kube-scheduler") -> LeaderElector:
    return LeaderElector(cast(LeaseLock, lock), lease_duration=lease_duration, renew_deadline=renew_deadline,
                         retry_period=retry_period, callbacks=callbacks or LeaderCallbacks(noop, noop),
                         release_on_cancel=release_on_cancel, name=name, monotonic=clock, wall=clock.wall)


def reported_leader(le: LeaderElector) -> str:
    """Upstream's ``maybeReportTransition`` check: the leader OnNewLeader is called with."""
    got: list[str] = []
    done = threading.Event()

    def on_new_leader(identity: str) -> None:
        got.append(identity)
        done.set()

    le.callbacks.on_new_leader = on_new_leader
    le._maybe_report_transition()
    assert done.wait(1.0), "on_new_leader was not called"
    return got[0]


# -- TestTryAcquireOrRenew (leaderelection_test.go) ------------------------------------------

def test_acquire_from_no_object() -> None:
    """leaderelection_test.go, TestTryAcquireOrRenew "acquire from no object": the Lease is
    created with us as holder, no transition."""
    clock, lock = FakeClock(), FakeLock()
    le = elector(lock, clock)
    assert le.try_acquire_or_renew()
    assert lock.ops == ["get", "create"]
    assert lock.record is not None
    assert lock.record.holder_identity == ME
    assert lock.record.lease_duration_seconds == 10
    assert lock.record.leader_transitions == 0
    assert lock.record.acquire_time == lock.record.renew_time == BASE
    assert le.get_leader() == ME and le.is_leader()
    assert reported_leader(le) == ME
    assert lock.events == []  # only the run loop records events


@pytest.mark.parametrize("record", [
    LeaderElectionRecord.from_spec({}),  # "acquire from object without annotations": an empty spec
    LeaderElectionRecord(),  # "acquire from unled object"
    LeaderElectionRecord(holder_identity="", lease_duration_seconds=15, leader_transitions=0,
                         acquire_time=BASE, renew_time=BASE),  # "acquire from empty led, acked object"
], ids=["without-annotations", "unled", "empty-led-acked"])
def test_acquire_from_unheld_object(record: LeaderElectionRecord) -> None:
    """leaderelection_test.go, TestTryAcquireOrRenew "acquire from object without
    annotations", "acquire from unled object" and "acquire from empty led, acked object": a
    Lease with no holder is taken at once (even freshly observed), with one transition more."""
    clock, lock = FakeClock(), FakeLock(record)
    le = elector(lock, clock)
    assert le.try_acquire_or_renew()
    assert lock.ops == ["get", "update"]
    assert lock.record is not None
    assert lock.record.holder_identity == ME
    assert lock.record.leader_transitions == 1
    assert lock.record.acquire_time == BASE
    assert le.is_leader()
    assert reported_leader(le) == ME


def test_acquire_from_led_object_after_its_lease_duration_seconds() -> None:
    """leaderelection_test.go, TestTryAcquireOrRenew "acquire from led object with the lease
    duration seconds": the first try only observes the holder's record (not acquired); once
    the record's leaseDurationSeconds (3 s, not our own 10 s) passed on our clock without a
    change, the next try takes it."""
    clock = FakeClock()
    lock = FakeLock(LeaderElectionRecord(holder_identity=OTHER, lease_duration_seconds=3))
    le = elector(lock, clock)
    assert not le.try_acquire_or_renew()
    assert le.get_leader() == OTHER
    clock.advance(3.0)
    assert le.try_acquire_or_renew()
    assert lock.ops == ["get", "get", "update"]
    assert lock.record is not None
    assert lock.record.holder_identity == ME
    assert lock.record.leader_transitions == 1
    assert lock.record.lease_duration_seconds == 10
    assert reported_leader(le) == ME


def test_acquire_from_led_unacked_object() -> None:
    """leaderelection_test.go, TestTryAcquireOrRenew "acquire from led, unacked object": the
    record we observed long ago (on our clock) has not changed since, so the holder stopped
    renewing and we take over, one transition more."""
    clock = FakeClock()
    lock = FakeLock(LeaderElectionRecord(holder_identity=OTHER, lease_duration_seconds=10, leader_transitions=4,
                                         acquire_time=BASE, renew_time=BASE))
    le = elector(lock, clock)
    assert not le.try_acquire_or_renew()
    clock.advance(1000 * 3600)  # upstream: observedTime 1000h in the past
    lock.ops.clear()
    assert le.try_acquire_or_renew()
    assert lock.ops == ["get", "update"]
    assert lock.record is not None
    assert lock.record.holder_identity == ME
    assert lock.record.leader_transitions == 5
    assert lock.record.acquire_time == lock.record.renew_time == clock.wall()
    assert reported_leader(le) == ME


def test_dont_acquire_from_led_acked_object() -> None:
    """leaderelection_test.go, TestTryAcquireOrRenew "don't acquire from led, acked object":
    a held lease observed within its duration is not taken (only a get, no write)."""
    clock = FakeClock()
    lock = FakeLock(LeaderElectionRecord(holder_identity=OTHER, lease_duration_seconds=10, leader_transitions=2))
    le = elector(lock, clock)
    assert not le.try_acquire_or_renew()
    assert lock.ops == ["get"]
    assert le.get_leader() == OTHER and not le.is_leader()
    assert lock.record is not None and lock.record.holder_identity == OTHER
    assert lock.record.leader_transitions == 2
    assert reported_leader(le) == OTHER


def test_expiry_is_measured_on_our_clock_since_the_last_observed_change() -> None:
    """leaderelection.go's tryAcquireOrRenew (the semantics behind the TestTryAcquireOrRenew
    cases): a lease whose renewTime is far in the past (another replica's clock) is still
    valid when first seen, and every change of the record restarts the lease duration."""
    clock = FakeClock()
    old = BASE - timedelta(days=365)
    lock = FakeLock(LeaderElectionRecord(holder_identity=OTHER, lease_duration_seconds=10,
                                         acquire_time=old, renew_time=old))
    le = elector(lock, clock)
    assert not le.try_acquire_or_renew()  # renewTime a year old: not expired on our clock
    clock.advance(9.0)
    assert not le.try_acquire_or_renew()
    # the holder renews (its record changes): observed at t=9 on our clock
    lock.record = LeaderElectionRecord(holder_identity=OTHER, lease_duration_seconds=10,
                                       acquire_time=old, renew_time=old + timedelta(seconds=2))
    assert not le.try_acquire_or_renew()
    clock.advance(9.0)  # t=18: 9 s since the change
    assert not le.try_acquire_or_renew()
    clock.advance(1.0)  # t=19: 10 s since the change
    assert le.try_acquire_or_renew()
    assert lock.record.holder_identity == ME
    assert lock.record.leader_transitions == 1


def test_renew_already_acquired_object() -> None:
    """leaderelection_test.go, TestTryAcquireOrRenew "renew already acquired object": the
    Lease already names us (and we are not yet leader in our observed state, so the fast path
    is not taken): get + update, acquireTime and transitions kept, no transition."""
    clock = FakeClock()
    acquired = BASE - timedelta(minutes=5)
    lock = FakeLock(LeaderElectionRecord(holder_identity=ME, lease_duration_seconds=10, leader_transitions=3,
                                         acquire_time=acquired, renew_time=acquired))
    le = elector(lock, clock)
    assert le.try_acquire_or_renew()
    assert lock.ops == ["get", "update"]
    assert lock.record is not None
    assert lock.record.holder_identity == ME
    assert lock.record.leader_transitions == 3
    assert lock.record.acquire_time == acquired
    assert lock.record.renew_time == BASE
    assert reported_leader(le) == ME


def test_fast_path_renews_without_get() -> None:
    """leaderelection_test.go, TestFastPathLeaderElection "Exercise fast path after lock
    acquired": the leader's renewals are one update each (of its cached copy), keeping
    acquireTime and transitions and moving renewTime."""
    clock, lock = FakeClock(), FakeLock()
    le = elector(lock, clock)
    assert le.try_acquire_or_renew()
    clock.advance(2.0)
    assert le.try_acquire_or_renew()
    clock.advance(2.0)
    assert le.try_acquire_or_renew()
    assert lock.ops == ["get", "create", "update", "update"]
    assert lock.record is not None
    assert lock.record.acquire_time == BASE
    assert lock.record.renew_time == BASE + timedelta(seconds=4)
    assert lock.record.leader_transitions == 0


def test_fast_path_failure_falls_back_to_get_and_update() -> None:
    """leaderelection_test.go, TestFastPathLeaderElection "Fallback to slow path after fast
    path fails": a conflict on the optimistic update is followed by a get and an update of
    what was read, in the same try."""
    clock, lock = FakeClock(), FakeLock()
    le = elector(lock, clock)
    lock.update_hook = lambda n: conflict() if n == 2 else None
    assert le.try_acquire_or_renew()  # get, create
    assert le.try_acquire_or_renew()  # update (fast)
    assert le.try_acquire_or_renew()  # update (fast, conflict), get, update
    assert le.try_acquire_or_renew()  # update (fast)
    assert lock.ops == ["get", "create", "update", "update", "get", "update", "update"]
    assert lock.record is not None and lock.record.holder_identity == ME
    assert lock.record.leader_transitions == 0


def test_renew_fails_when_someone_else_took_the_lease() -> None:
    """leaderelection.go's tryAcquireOrRenew: after a failed fast path the slow path reads a
    record naming another holder, observes it and does not write."""
    clock, lock = FakeClock(), FakeLock()
    le = elector(lock, clock)
    assert le.try_acquire_or_renew()
    lock.record = LeaderElectionRecord(holder_identity=OTHER, lease_duration_seconds=10, leader_transitions=1)
    lock.update_hook = conflict
    lock.ops.clear()
    assert not le.try_acquire_or_renew()
    assert lock.ops == ["update", "get"]
    assert le.get_leader() == OTHER and not le.is_leader()
    assert lock.record.holder_identity == OTHER


@pytest.mark.parametrize("error", [
    ApiStatusError(500, "InternalError", "etcd is down"),
    KubeClientError("connection refused"),
], ids=["500", "transport"])
def test_get_error_other_than_not_found_fails_the_try(error: KubeClientError) -> None:
    """leaderelection.go's tryAcquireOrRenew: an error retrieving the lock other than
    NotFound fails the try without creating anything."""
    clock, lock = FakeClock(), FakeLock()

    def failing_get() -> tuple[LeaderElectionRecord, bytes]:
        lock.ops.append("get")
        raise error

    lock.get = failing_get  # type: ignore[method-assign]
    le = elector(lock, clock)
    assert not le.try_acquire_or_renew()
    assert lock.ops == ["get"]
    assert lock.record is None
    assert le.get_leader() == ""


def test_create_conflict_fails_the_try() -> None:
    """leaderelection.go's tryAcquireOrRenew: "error initially creating leader election
    record" when another candidate created the Lease between our get and create."""
    clock, lock = FakeClock(), FakeLock()
    real_get = lock.get

    def racing_get() -> tuple[LeaderElectionRecord, bytes]:
        try:
            return real_get()
        finally:
            lock.record = LeaderElectionRecord(holder_identity=OTHER, lease_duration_seconds=10)

    lock.get = racing_get  # type: ignore[method-assign]
    le = elector(lock, clock)
    assert not le.try_acquire_or_renew()
    assert lock.ops == ["get", "create"]
    assert not le.is_leader()


def test_update_conflict_when_acquiring_fails_the_try() -> None:
    """leaderelection.go's tryAcquireOrRenew: two candidates taking an expired lease at once
    get one success and one 409 Conflict; the loser is not leader."""
    clock = FakeClock()
    lock = FakeLock(LeaderElectionRecord())
    lock.update_hook = conflict
    le = elector(lock, clock)
    assert not le.try_acquire_or_renew()
    assert lock.ops == ["get", "update"]
    assert not le.is_leader()


# -- release (testReleaseLease, TestReleaseMethodCallsGet) --------------------------------------

def test_release_acquired_lock() -> None:
    """leaderelection_test.go, testReleaseLease "release acquired lock from no object" and
    TestReleaseMethodCallsGet: release reads the Lease, then writes an empty holder with
    leaseDurationSeconds 1, keeping the transitions; the observed leader becomes ""."""
    clock, lock = FakeClock(), FakeLock()
    le = elector(lock, clock)
    assert le.try_acquire_or_renew()
    assert reported_leader(le) == ME
    lock.record = LeaderElectionRecord(holder_identity=ME, lease_duration_seconds=10, leader_transitions=7,
                                       acquire_time=BASE, renew_time=BASE)
    clock.advance(5.0)
    lock.ops.clear()
    assert le.release()
    assert lock.ops == ["get", "update"]
    assert lock.record.holder_identity == ""
    assert lock.record.lease_duration_seconds == 1
    assert lock.record.leader_transitions == 7
    assert lock.record.acquire_time == lock.record.renew_time == clock.wall()
    assert le.get_leader() == "" and not le.is_leader()
    assert reported_leader(le) == ""


def test_release_does_nothing_when_another_candidate_holds_the_lease() -> None:
    """leaderelection.go's release (its tryRelease: "decide from the record just fetched"):
    when the Lease now names someone else it is not written, and release reports success."""
    clock, lock = FakeClock(), FakeLock()
    le = elector(lock, clock)
    assert le.try_acquire_or_renew()
    taken = LeaderElectionRecord(holder_identity=OTHER, lease_duration_seconds=10, leader_transitions=1)
    lock.record = taken
    lock.ops.clear()
    assert le.release()
    assert lock.ops == ["get"]
    assert lock.record is taken


def test_release_does_nothing_when_not_leader() -> None:
    """leaderelection.go's release: ``if !le.IsLeader() { return true }`` (after the get)."""
    clock = FakeClock()
    held = LeaderElectionRecord(holder_identity=OTHER, lease_duration_seconds=10)
    lock = FakeLock(held)
    le = elector(lock, clock)
    assert not le.try_acquire_or_renew()
    lock.ops.clear()
    assert le.release()
    assert lock.ops == ["get"]
    assert lock.record is held


def test_release_failures_return_false() -> None:
    """leaderelection.go's release: a failing get (here NotFound: "lease lock not found") or
    a failing update returns false."""
    clock, lock = FakeClock(), FakeLock()
    le = elector(lock, clock)
    assert le.try_acquire_or_renew()
    lock.update_hook = conflict
    assert not le.release()
    assert lock.record is not None and lock.record.holder_identity == ME
    lock.record = None
    assert not le.release()


# -- check (healthzadaptor_test.go) ------------------------------------------------------------

def leader_with_lease_of(lease_duration: float, clock: FakeClock, lock: FakeLock) -> LeaderElector:
    le = elector(lock, clock, lease_duration=lease_duration, renew_deadline=lease_duration / 2, name="foo")
    assert le.try_acquire_or_renew()
    return le


def test_check_not_leader_is_healthy() -> None:
    """healthzadaptor_test.go, TestLeaderElectionHealthChecker "call check before leader
    elector initialized" and "call check when the lease is far expired but held by another
    server": a standby is healthy however old its observation."""
    clock = FakeClock()
    le = elector(FakeLock(), clock, lease_duration=60.0, renew_deadline=30.0, name="foo")
    assert le.check(20.0) is None
    lock = FakeLock(LeaderElectionRecord(holder_identity="otherServer", lease_duration_seconds=60))
    le = elector(lock, clock, lease_duration=60.0, renew_deadline=30.0, name="foo")
    assert not le.try_acquire_or_renew()
    clock.advance(3600.0)
    assert le.check(20.0) is None


def test_check_leader_within_lease_duration_is_healthy() -> None:
    """healthzadaptor_test.go, TestLeaderElectionHealthChecker "call check when the lease is
    not expired"."""
    clock = FakeClock()
    le = leader_with_lease_of(60.0, clock, FakeLock())
    assert le.check(20.0) is None


def test_check_leader_expired_but_inside_tolerance_is_healthy() -> None:
    """healthzadaptor_test.go, TestLeaderElectionHealthChecker "call check when the lease is
    expired but inside the timeout": leaseDuration (1 min) + 1 s < 1 min + 20 s."""
    clock = FakeClock()
    le = leader_with_lease_of(60.0, clock, FakeLock())
    clock.advance(61.0)
    assert le.check(20.0) is None
    clock.advance(19.0)  # exactly leaseDuration + tolerance: not beyond it
    assert le.check(20.0) is None


def test_check_leader_far_expired_is_an_error() -> None:
    """healthzadaptor_test.go, TestLeaderElectionHealthChecker "call check when the lease is
    far expired": "failed election to renew leadership on lease foo"."""
    clock = FakeClock()
    le = leader_with_lease_of(60.0, clock, FakeLock())
    clock.advance(3600.0)
    assert le.check(20.0) == "failed election to renew leadership on lease foo"
    clock.advance(-3600.0 + 80.5)
    assert le.check(20.0) == "failed election to renew leadership on lease foo"
    assert le.check() == "failed election to renew leadership on lease foo"  # default tolerance 20 s


# -- construction (NewLeaderElector's validation) ------------------------------------------------

@pytest.mark.parametrize(("lease", "renew", "retry", "message"), [
    (10.0, 10.0, 1.0, "leaseDuration must be greater than renewDeadline"),
    (10.0, 11.0, 1.0, "leaseDuration must be greater than renewDeadline"),
    (15.0, 1.2, 1.0, "renewDeadline must be greater than retryPeriod\\*JitterFactor"),
    (15.0, 1.0, 1.0, "renewDeadline must be greater than retryPeriod\\*JitterFactor"),
    (15.0, 2.0, 0.0, "retryPeriod must be positive"),
])
def test_constructor_validation(lease: float, renew: float, retry: float, message: str) -> None:
    """leaderelection.go's NewLeaderElector checks (TestLeaderElectionConfigValidation's
    config 15 s / 2 s / 1 s is valid)."""
    with pytest.raises(ValueError, match=message):
        elector(FakeLock(), FakeClock(), lease_duration=lease, renew_deadline=renew, retry_period=retry)


def test_constructor_accepts_upstream_valid_config() -> None:
    """leaderelection_test.go, TestLeaderElectionConfigValidation: 15 s / 2 s / 1 s is valid."""
    le = elector(FakeLock(), FakeClock(), lease_duration=15.0, renew_deadline=2.0, retry_period=1.0)
    assert le.identity == ME
    assert le.get_leader() == "" and not le.is_leader()


# -- LeaderElectionRecord <-> Lease spec (TestLeaseSpecToLeaderElectionRecordRoundTrip) ---------

def test_lease_spec_round_trip() -> None:
    """leaderelection_test.go, TestLeaseSpecToLeaderElectionRecordRoundTrip: spec -> record ->
    spec and record -> spec -> record are identities (times as metav1.MicroTime, RFC 3339
    with microseconds in UTC)."""
    spec: dict[str, Any] = {"holderIdentity": "foo", "leaseDurationSeconds": 10,
                            "acquireTime": "2025-01-02T03:04:05.678901Z", "renewTime": "2025-01-02T03:04:15.000001Z",
                            "leaseTransitions": 1}
    record = LeaderElectionRecord.from_spec(spec)
    assert record == LeaderElectionRecord(holder_identity="foo", lease_duration_seconds=10,
                                          acquire_time=BASE, renew_time=datetime(2025, 1, 2, 3, 4, 15, 1, timezone.utc),
                                          leader_transitions=1)
    assert record.to_spec() == spec
    assert LeaderElectionRecord.from_spec(record.to_spec()) == record


def test_micro_time_is_utc_with_microseconds() -> None:
    """resourcelock/leaselock.go writes times as metav1.MicroTime: "%Y-%m-%dT%H:%M:%S.%fZ",
    converted to UTC."""
    plus2 = timezone(timedelta(hours=2))
    record = LeaderElectionRecord(holder_identity="x", acquire_time=datetime(2025, 1, 2, 5, 4, 5, 0, plus2),
                                  renew_time=datetime(2025, 1, 2, 3, 4, 5, 120, timezone.utc))
    spec = record.to_spec()
    assert spec["acquireTime"] == "2025-01-02T03:04:05.000000Z"
    assert spec["renewTime"] == "2025-01-02T03:04:05.000120Z"
    assert datetime.strptime(spec["renewTime"], "%Y-%m-%dT%H:%M:%S.%fZ") == datetime(2025, 1, 2, 3, 4, 5, 120)


def test_empty_record_spec() -> None:
    """An empty record (a released or never-held lease): no holder (upstream writes
    ``holderIdentity: ""``, as upstream's LeaderElectionRecordToLeaseSpec), zero times as
    null, zero counts; an absent or null field reads as its zero value."""
    spec = LeaderElectionRecord().to_spec()
    assert spec["holderIdentity"] == ""
    assert spec["acquireTime"] is None and spec["renewTime"] is None
    assert spec["leaseDurationSeconds"] == 0 and spec["leaseTransitions"] == 0
    assert LeaderElectionRecord.from_spec(spec) == LeaderElectionRecord()
    assert LeaderElectionRecord.from_spec({"holderIdentity": None, "acquireTime": "not a time"}) == LeaderElectionRecord()


# -- run() (testReleaseOnCancellation, TestFastPathLeaderElection, renew failure) --------------

class Recorder:
    """LeaderCallbacks that record what was called."""

    def __init__(self, on_started: Callable[[], None] | None = None) -> None:
        self.started = threading.Event()
        self.stopped = threading.Event()
        self.leaders: list[str] = []
        self._on_started = on_started

    def callbacks(self) -> LeaderCallbacks:
        return LeaderCallbacks(on_started_leading=self._started, on_stopped_leading=self.stopped.set,
                               on_new_leader=self.leaders.append)

    def _started(self) -> None:
        self.started.set()
        if self._on_started is not None:
            self._on_started()


def run_in_thread(le: LeaderElector, stop: threading.Event) -> threading.Thread:
    t = threading.Thread(target=le.run, args=(stop,), daemon=True)
    t.start()
    return t


def test_run_acquires_then_loses_leadership_when_renewals_fail_for_renew_deadline() -> None:
    """leaderelection.go's Run/renew: after acquiring, on_started_leading is called; when no
    renewal succeeds within renewDeadline (every update conflicts; each failure costs 1 s on
    our clock, the deadline is 2 s) leadership is lost: leading cleared, "stopped leading"
    recorded, on_stopped_leading called, run returns without a stop request."""
    clock, lock = FakeClock(), FakeLock()
    rec = Recorder()
    le = elector(lock, clock, lease_duration=15.0, renew_deadline=2.0, retry_period=0.001, callbacks=rec.callbacks())

    def fail(_: int) -> None:
        clock.advance(1.0)
        conflict()

    lock.update_hook = fail
    stop = threading.Event()
    t = run_in_thread(le, stop)
    t.join(1.0)
    assert not t.is_alive(), "run did not return after losing leadership"
    assert not stop.is_set()
    assert rec.started.wait(1.0)
    assert rec.stopped.is_set()
    assert not le.leading.is_set()
    assert le.transitions == 1
    assert lock.ops[:2] == ["get", "create"]
    # fast path, then get + update, then the deadline; then, as upstream's renew() with
    # ReleaseOnCancel, an attempt to release (get + update, which conflicts too)
    assert lock.ops[2:] == ["update", "get", "update", "get", "update"]
    assert lock.events == [f"Normal LeaderElection {ME} became leader", f"Normal LeaderElection {ME} stopped leading"]


def test_run_renews_until_stopped_then_releases() -> None:
    """leaderelection_test.go, testReleaseOnCancellation (ReleaseOnCancel, kube-scheduler's
    setting): the leader renews until stopped, then writes an empty holder with
    leaseDurationSeconds 1, records "became leader" and "stopped leading", and calls
    on_stopped_leading."""
    clock, lock = FakeClock(), FakeLock()
    stop = threading.Event()
    lock.update_hook = lambda n: stop.set() if n == 3 else None  # the 3rd renewal: stop
    rec = Recorder()
    le = elector(lock, clock, lease_duration=15.0, renew_deadline=2.0, retry_period=0.001, callbacks=rec.callbacks())
    t = run_in_thread(le, stop)
    t.join(1.0)
    assert not t.is_alive()
    assert rec.started.wait(1.0) and rec.stopped.is_set()
    assert lock.ops == ["get", "create", "update", "update", "update", "get", "update"]
    assert lock.record is not None
    assert lock.record.holder_identity == ""
    assert lock.record.lease_duration_seconds == 1
    assert lock.record.leader_transitions == 0
    assert not le.leading.is_set()
    assert lock.events == [f"Normal LeaderElection {ME} became leader", f"Normal LeaderElection {ME} stopped leading"]


@pytest.mark.parametrize(("fail_second", "expected"), [
    (False, ["get", "create", "update", "update"]),
    (True, ["get", "create", "update", "update", "get", "update", "update"]),
], ids=["fast-path", "fallback-to-slow-path"])
def test_run_fast_path(fail_second: bool, expected: list[str]) -> None:
    """leaderelection_test.go, TestFastPathLeaderElection "Exercise fast path after lock
    acquired" (stop on the 2nd update) and "Fallback to slow path after fast path fails"
    (the 2nd update conflicts, stop on the 4th), without ReleaseOnCancel: the same lock
    operations."""
    clock, lock = FakeClock(), FakeLock()
    stop = threading.Event()
    last = 4 if fail_second else 2

    def hook(n: int) -> None:
        if fail_second and n == 2:
            conflict()
        if n == last:
            stop.set()

    lock.update_hook = hook
    le = elector(lock, clock, lease_duration=15.0, renew_deadline=2.0, retry_period=0.001, release_on_cancel=False)
    t = run_in_thread(le, stop)
    t.join(1.0)
    assert not t.is_alive()
    assert lock.ops == expected
    assert lock.record is not None and lock.record.holder_identity == ME


def test_run_stopped_before_acquiring_calls_only_on_stopped_leading() -> None:
    """leaderelection.go's Run: OnStoppedLeading is deferred, so it runs even when acquire
    returns false because the context is already done; OnStartedLeading is not called and
    the lock is not touched."""
    clock, lock = FakeClock(), FakeLock()
    rec = Recorder()
    le = elector(lock, clock, callbacks=rec.callbacks())
    stop = threading.Event()
    stop.set()
    le.run(stop)
    assert rec.stopped.is_set()
    assert not rec.started.is_set()
    assert lock.ops == [] and lock.events == []
    assert le.transitions == 0 and not le.leading.is_set()


def test_run_waits_for_a_held_lease_and_stops_as_standby() -> None:
    """leaderelection.go's acquire (wait.JitterUntil): a standby keeps trying while another
    holder renews; stopped, it calls on_stopped_leading only, reports the observed leader
    through on_new_leader, and releases nothing."""
    clock = FakeClock()
    lock = FakeLock(LeaderElectionRecord(holder_identity=OTHER, lease_duration_seconds=10))
    rec = Recorder()
    le = elector(lock, clock, retry_period=0.001, callbacks=rec.callbacks())
    stop = threading.Event()
    gets = 0
    real_get = lock.get

    def counting_get() -> tuple[LeaderElectionRecord, bytes]:
        nonlocal gets
        gets += 1
        if gets == 5:
            stop.set()
        return real_get()

    lock.get = counting_get  # type: ignore[method-assign]
    t = run_in_thread(le, stop)
    t.join(1.0)
    assert not t.is_alive()
    assert gets == 5 and set(lock.ops) == {"get"}
    assert rec.stopped.is_set() and not rec.started.is_set()
    assert lock.events == []
    assert le.get_leader() == OTHER
    assert lock.record is not None and lock.record.holder_identity == OTHER
    for _ in range(100):
        if rec.leaders:
            break
        threading.Event().wait(0.01)
    assert rec.leaders == [OTHER]


# -- the fence (kubesched's addition: no upstream test) ---------------------------------------

def test_fence_holds_from_the_start_of_the_last_successful_renewal_for_renew_deadline() -> None:
    """Renew deadline 2 s. The lease is provably ours from the *start* of the last successful
    try (before its request was sent) for 2 s: a try whose update takes 1.5 s on our clock,
    started at t, lets writes through until t + 2 (not t + 1.5 + 2). A failed try moves
    nothing. Not leading: refused whatever the renewal."""
    clock, lock = FakeClock(), FakeLock()
    le = elector(lock, clock, lease_duration=10.0, renew_deadline=2.0)
    with pytest.raises(FencedError, match="never renewed"):
        le.fence()
    assert le.try_acquire_or_renew()  # created at 1000
    assert le.renewed_at == 1000.0
    with pytest.raises(FencedError, match="not leading"):
        le.fence()  # run() sets leading once acquired
    le.leading.set()
    clock.advance(1.999)
    le.fence()
    assert le.holds()
    clock.advance(0.001)  # 1002: exactly renew_deadline old
    assert not le.holds()
    with pytest.raises(FencedError, match=r"last renewed 2\.0s ago; renewDeadline 2s"):
        le.fence()
    lock.update_hook = lambda n: clock.advance(1.5)  # a slow renewal, started at 1002
    assert le.try_acquire_or_renew()
    assert le.renewed_at == 1002.0 and clock.now == 1003.5
    clock.advance(0.499)  # 1003.999
    le.fence()
    clock.advance(0.001)  # 1004
    assert not le.holds()
    lock.update_hook = conflict  # a failed try: still 1002
    assert not le.try_acquire_or_renew()
    assert le.renewed_at == 1002.0 and not le.holds()


def test_run_thawed_after_a_pause_gives_leadership_up_without_another_try() -> None:
    """A leader stopped (SIGSTOP) for 10 s while its 3rd renewal was in flight (the update
    applies, the clock jumps): its writes are refused at once (the renewal that "succeeded"
    started 10 s ago), and its renewal loop, whose deadline counts from that start, gives
    leadership up without trying again: the next lock operations are the release's (get,
    update), and on_stopped_leading is called."""
    clock, lock = FakeClock(), FakeLock()
    rec = Recorder()
    le = elector(lock, clock, lease_duration=15.0, renew_deadline=2.0, retry_period=0.001, callbacks=rec.callbacks())
    fenced: list[bool] = []

    def pause(n: int) -> None:
        if n == 3:
            clock.advance(10.0)
            fenced.append(not le.holds())

    lock.update_hook = pause
    stop = threading.Event()
    t = run_in_thread(le, stop)
    t.join(1.0)
    assert not t.is_alive(), "run did not return after the pause"
    assert fenced == [True]
    assert rec.started.wait(1.0) and rec.stopped.is_set() and not le.leading.is_set()
    assert lock.ops == ["get", "create", "update", "update", "update", "get", "update"]
    assert lock.record is not None and lock.record.holder_identity == ""  # released
    with pytest.raises(FencedError):
        le.fence()
