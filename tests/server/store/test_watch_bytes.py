"""Watchers bounded in bytes of undelivered event text, each and all together.

As kube-apiserver's cacher terminates a watcher whose buffer stays full (``cache_watcher.go``
``add``: the watcher is stopped, its client watches again or re-lists), a watcher given
``max_bytes`` is terminated, its buffer dropped, once more than that much text waits for
its consumer; the hub terminates the watchers holding the most once all of them together
hold more than ``max_total_bytes``. Sizes are worked by hand: an event's size is the length
of its object text plus that of the object before it.
"""

from __future__ import annotations

from kubesched.server.store import MODIFIED, StoredEvent
from kubesched.server.store.watch import WatchHub


def ev(rv: int, size: int, prev: int = 0) -> StoredEvent:
    return StoredEvent(rv, MODIFIED, "core/configmaps", "default", "c", "d" * size, "p" * prev if prev else None)


def test_a_watcher_is_terminated_past_its_bound_and_its_buffer_dropped() -> None:
    hub = WatchHub()
    w = hub.new_watcher(["core/configmaps"], [], 0, max_bytes=100)
    ended: list[bool] = []
    w.on_overflow = lambda: ended.append(True)
    hub.publish([ev(1, 30, 30)])  # 60
    hub.publish([ev(2, 40)])  # 100: at the bound, kept
    assert (w.bytes, hub.buffered_bytes, w.closed) == (100, 100, False)
    hub.publish([ev(3, 1)])  # 101
    assert (w.closed, w.overflowed, w.bytes, hub.buffered_bytes, ended) == (True, True, 0, 0, [True])
    assert w.drain()[0] == []


def test_a_bounded_drain_takes_the_oldest_events_that_fit() -> None:
    hub = WatchHub()
    w = hub.new_watcher(None, [], 0, max_bytes=1000)
    hub.publish([ev(1, 300), ev(2, 300), ev(3, 300)])
    events, seen = w.drain(max_bytes=650)
    assert ([e.rv for e in events], seen, w.bytes, w.pending) == ([1, 2], 2, 300, True)
    events, seen = w.drain(max_bytes=100)  # at least one event, even a larger one
    assert ([e.rv for e in events], seen, w.bytes, w.pending) == ([3], 3, 0, False)


def test_the_watchers_holding_the_most_are_shed_to_keep_the_total_bound() -> None:
    hub = WatchHub()
    hub.max_total_bytes = 250
    a = hub.new_watcher(["core/configmaps"], [], 0, max_bytes=200)
    b = hub.new_watcher(["core/configmaps"], [], 0, max_bytes=200)
    c = hub.new_watcher(["core/configmaps"], [], 0, max_bytes=200)
    unbounded = hub.new_watcher(["core/configmaps"], [], 0)  # in-process consumers: not counted
    hub.publish([ev(1, 50)])  # 150 in all
    a.drain()  # a keeps up: 100 in all
    hub.publish([ev(2, 60)])  # a 60, b 110, c 110: 280 > 250, b and c hold the most
    closed = [w.closed for w in (a, b, c, unbounded)]
    assert closed in ([False, True, False, False], [False, False, True, False])  # one of the two goes
    assert hub.buffered_bytes == 170
    assert [e.rv for e in unbounded.drain()[0]] == [1, 2]


def test_closing_a_watcher_releases_its_bytes() -> None:
    hub = WatchHub()
    w = hub.new_watcher(None, [], 0, max_bytes=100)
    hub.publish([ev(1, 80)])
    w.close()
    assert hub.buffered_bytes == 0 and hub.count() == 0
