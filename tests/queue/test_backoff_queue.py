"""backoffQ, ported from upstream ``backend/queue/backoff_queue_test.go`` and
``TestBackOffFlow`` of ``scheduling_queue_test.go`` (v1.34 semantics: the backoff count is
the unschedulable count, or the consecutive error count after an error; expiries are
truncated to whole seconds with SchedulerPopFromBackoffQ)."""

from __future__ import annotations

import math

import pytest
from queue_helpers import START, FakeClock, new_queue, pod

from kubesched.framework.interface import QueuedPodInfo
from kubesched.plugins.queuesort import PrioritySort
from kubesched.queue.backoff_queue import NS, BackoffQueue
from kubesched.queue.clusterevents import EVENT_UNSCHEDULABLE_TIMEOUT

MAX_INT32, MAX_INT64 = 2**31 - 1, 2**63 - 1


@pytest.mark.parametrize("initial_ns,max_ns,count,want_ns", [
    (1, 32, 0, 0),
    (1, 32, 16, 32),
    (1, MAX_INT32, 32, MAX_INT32),
    (1, MAX_INT64, 64, MAX_INT64),
], ids=["no backoff", "normal", "overflow_32bit", "overflow_64bit"])
def test_calculate_backoff_duration(initial_ns: int, max_ns: int, count: int, want_ns: int) -> None:
    """TestBackoffQueue_calculateBackoffDuration (the count is the attempts of older tests)."""
    bq = BackoffQueue(FakeClock().now, initial_ns / NS, max_ns / NS, PrioritySort().sort_key)
    bq.initial_ns, bq.max_ns = initial_ns, max_ns  # exact nanoseconds, as upstream's durations
    assert bq.calculate_backoff_duration_ns(count) == want_ns


@pytest.mark.parametrize("windowed", [True, False], ids=["popFromBackoffQ", "noPopFromBackoffQ"])
def test_backoff_flow(windowed: bool) -> None:
    """TestBackOffFlow: 1s, 2s, 4s, 8s, then capped at 10s; still in backoffQ one window
    after the failure, out after the backoff (rounded up to the window with PopFromBackoffQ)."""
    clock = FakeClock(START + 0.25)
    q = new_queue(clock, pop_from_backoff_q=windowed)
    p = pod("test-pod", "test-ns", "test-uid")
    q.add(p)
    for i, want in enumerate([1, 2, 4, 8, 10, 10, 10]):
        ts = clock.now()
        qpi = q.active_q.pop()[0]  # not q.pop(): that would flush the backoff first
        assert qpi is not None and qpi.attempts == i + 1
        qpi.unschedulable_plugins.add("unsched-plugin")
        q.add_unschedulable(qpi)
        q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
        assert q.backoff_q.has(p)
        backoff = qpi.backoff_expiration - ts
        if windowed:
            backoff = math.floor(backoff) + 1
        assert backoff == pytest.approx(want)
        clock.step(1.0)
        q.flush_backoff_q_completed()
        assert q.backoff_q.has(p), "still backing off after an early flush"
        clock.step(backoff)
        q.flush_backoff_q_completed()
        assert not q.backoff_q.has(p)


def _info(name: str, ts: float, plugins: bool, priority: int = 0) -> QueuedPodInfo:
    return QueuedPodInfo(pod=pod(name, "default", name, priority), timestamp=ts, attempts=1,
                         unschedulable_count=1 if plugins else 0, consecutive_errors=0 if plugins else 1,
                         unschedulable_plugins={"plugin"} if plugins else set())


@pytest.mark.parametrize("in_backoff,want", [
    ([], []),
    (["pod0", "pod1"], ["pod0"]),
    (["pod2", "pod3"], ["pod2"]),
    (["pod0", "pod1", "pod2", "pod3"], ["pod0", "pod2"]),
    (["pod0", "pod2"], ["pod0", "pod2"]),
    (["pod1", "pod3"], []),
], ids=["both empty", "only backoffQ", "only errorBackoffQ", "both some", "both all", "both none"])
@pytest.mark.parametrize("windowed", [True, False])
def test_pop_all_backoff_completed(in_backoff: list[str], want: list[str], windowed: bool) -> None:
    """TestBackoffQueue_popEachBackoffCompleted: plugin-rejected pods first, then errored."""
    clock = FakeClock()
    now = clock.now()
    infos = {"pod0": _info("pod0", now - 2, True), "pod1": _info("pod1", now + 1, True),
             "pod2": _info("pod2", now - 2, False), "pod3": _info("pod3", now + 1, False)}
    bq = BackoffQueue(clock.now, 1.0, 10.0, PrioritySort().sort_key, windowed)
    for n in in_backoff:
        bq.add(infos[n])
    assert [q.pod.name for q in bq.pop_all_backoff_completed()] == want
    assert len(bq) == len(in_backoff) - len(want)


@pytest.mark.parametrize("windowed,want", [
    (True, ["pod5", "pod4", "pod2", "pod3"]),
], ids=["same window ordered by priority"])
def test_backoff_queue_ordering(windowed: bool, want: list[str]) -> None:
    """TestBackoffQueueOrdering (clock aligned with the ordering window). Its case without
    PopFromBackoffQ is left out: there pod3 and pod4 expire together and their order is
    whatever Go's heap makes of a tie."""
    clock = FakeClock()
    now = clock.now()
    infos = [_info("pod0", now, True, 1), _info("pod1", now - 1, True, 1),
             _info("pod2", now - 2 + 0.001, True, 2), _info("pod3", now - 2, True, 1),
             _info("pod4", now - 2, True, 2), _info("pod5", now - 3, True, 1)]
    bq = BackoffQueue(clock.now, 1.0, 10.0, PrioritySort().sort_key, windowed)
    for qpi in infos:
        bq.add(qpi)
    assert [q.pod.name for q in bq.pop_all_backoff_completed()] == want


def test_new_with_options() -> None:
    """TestPriorityQueue_NewWithOptions."""
    q = new_queue(initial_backoff=2.0, max_backoff=20.0)
    assert (q.backoff_q.initial_backoff, q.backoff_q.max_backoff) == (2.0, 20.0)


def test_zero_max_backoff_disables_backoff() -> None:
    """getBackoffTime: podMaxBackoffDuration 0 means no backoff at all."""
    clock = FakeClock()
    bq = BackoffQueue(clock.now, 0.0, 0.0, PrioritySort().sort_key)
    qpi = _info("p", clock.now(), True)
    assert bq.get_backoff_time(qpi) == -math.inf and not bq.is_pod_backing_off(qpi)
