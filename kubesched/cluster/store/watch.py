"""Fan-out of committed changes to watchers, without ever blocking the writer.

The store publishes each committed transaction's events, in revision order and while it
still holds its write lock, to every registered :class:`Watcher` whose kinds match. A
watcher is a bounded buffer: pushing is O(1) and never waits for the consumer. A consumer
that falls too far behind (more than ``capacity`` undelivered events) is terminated, as
kube-apiserver terminates a watcher whose channel is full; it sees ``overflowed`` and
resumes with a new watch from its last revision (or re-lists on 410).

Two kinds of consumers read a watcher:

* threads (controllers in the same process): :meth:`Watcher.get` blocks with a timeout;
* asyncio tasks (the HTTP watch stream): :meth:`Watcher.set_notify` installs a callback,
  called from the writer's thread after each push (it should only schedule a wake-up,
  e.g. ``loop.call_soon_threadsafe(event.set)``), then :meth:`Watcher.drain` reads.

Events carry the object's JSON text exactly as stored, so an HTTP stream writes it out
without re-encoding; :meth:`StoredEvent.obj` parses it once and caches the result, which
is shared by every consumer and must not be mutated.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kubesched.cluster.store.jsontext import loads

log = logging.getLogger(__name__)

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"
DEFAULT_CAPACITY = 100_000


@dataclass(slots=True, eq=False)
class StoredEvent:
    """One change: the object after it (for DELETED, its last state at the deleting rv)."""

    rv: int
    type: str
    kind: str
    namespace: str
    name: str
    data: str
    prev: str | None = None  # the object before a MODIFIED change
    _obj: Any = field(default=None, repr=False)
    _prev_obj: Any = field(default=None, repr=False)

    def obj(self) -> dict[str, Any]:
        """The object, parsed once; shared by all consumers: never mutate it."""
        if self._obj is None:
            self._obj = loads(self.data)
        return self._obj  # type: ignore[no-any-return]

    def prev_obj(self) -> dict[str, Any] | None:
        if self.prev is None:
            return None
        if self._prev_obj is None:
            self._prev_obj = loads(self.prev)
        return self._prev_obj  # type: ignore[no-any-return]


class Watcher:
    """A bounded, thread-safe queue of events for one consumer."""

    def __init__(self, hub: "WatchHub", kinds: frozenset[str] | None, capacity: int) -> None:
        self._hub = hub
        self.kinds = kinds
        self.only = next(iter(kinds)) if kinds is not None and len(kinds) == 1 else None  # the one kind
        self.capacity = capacity
        self._buf: collections.deque[StoredEvent] = collections.deque()
        self._cond = threading.Condition(threading.Lock())
        self._notify: Callable[[], None] | None = None
        self.closed = False
        self.overflowed = False
        self.seen_rv = 0  # every event of this watcher's kinds up to here has been pushed

    def wants(self, kind: str) -> bool:
        return self.kinds is None or kind in self.kinds

    def push(self, events: list[StoredEvent], upto: int) -> None:
        """Called by the hub (writer thread) with the events of a commit that ends at
        revision ``upto`` (possibly none of this watcher's kinds). Never blocks."""
        with self._cond:
            if self.closed:
                return
            self.seen_rv = max(self.seen_rv, upto)
            if not events:
                return
            for ev in events:
                if len(self._buf) >= self.capacity:
                    self.overflowed = True
                    self.closed = True
                    self._buf.clear()
                    log.warning("watcher terminated: more than %d undelivered events", self.capacity)
                    break
                self._buf.append(ev)
            self._cond.notify_all()
            notify = self._notify
        if notify is not None:
            notify()

    def set_notify(self, fn: Callable[[], None] | None) -> None:
        with self._cond:
            self._notify = fn
            pending = bool(self._buf) or self.closed
        if fn is not None and pending:
            fn()

    def drain(self) -> tuple[list[StoredEvent], int]:
        """Every buffered event, without waiting, and the revision up to which nothing
        else of this watcher's kinds happened (what a bookmark may announce)."""
        with self._cond:
            out = list(self._buf)
            self._buf.clear()
            return out, self.seen_rv

    def get(self, timeout: float | None = None) -> tuple[list[StoredEvent], int]:
        """Like :meth:`drain`, waiting up to ``timeout`` seconds for an event."""
        with self._cond:
            if not self._buf and not self.closed:
                self._cond.wait(timeout)
            out = list(self._buf)
            self._buf.clear()
            return out, self.seen_rv

    def close(self) -> None:
        """Stop receiving events and wake the consumer (idempotent)."""
        with self._cond:
            self.closed = True
            self._cond.notify_all()
            notify = self._notify
        self._hub.remove(self)
        if notify is not None:
            notify()


class WatchHub:
    """The set of live watchers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watchers: set[Watcher] = set()

    def new_watcher(self, kinds: Iterable[str] | None, backlog: list[StoredEvent], upto: int,
                    capacity: int = DEFAULT_CAPACITY) -> Watcher:
        """Register a watcher pre-filled with ``backlog``, the events up to revision
        ``upto`` (the caller holds the store's write lock, so nothing is published
        between reading the backlog and this)."""
        w = Watcher(self, None if kinds is None else frozenset(kinds), capacity + len(backlog))
        w.push(backlog, upto)
        with self._lock:
            self._watchers.add(w)
        return w

    def remove(self, w: Watcher) -> None:
        with self._lock:
            self._watchers.discard(w)

    def publish(self, events: list[StoredEvent]) -> None:
        if not events:
            return
        upto = events[-1].rv
        with self._lock:
            watchers = list(self._watchers)
        by_kind: dict[str, list[StoredEvent]] = {}  # grouped once, not filtered per watcher
        for e in events:
            by_kind.setdefault(e.kind, []).append(e)
        none: list[StoredEvent] = []
        for w in watchers:
            if w.kinds is None:
                w.push(events, upto)
            elif w.only is not None:
                w.push(by_kind.get(w.only, none), upto)
            else:
                w.push([e for e in events if e.kind in w.kinds], upto)

    def count(self) -> int:
        with self._lock:
            return len(self._watchers)

    def counts_by_kind(self) -> dict[str, int]:
        with self._lock:
            out: dict[str, int] = {}
            for w in self._watchers:
                for k in w.kinds or ("*",):
                    out[k] = out.get(k, 0) + 1
            return out

    def close_all(self) -> None:
        with self._lock:
            watchers = list(self._watchers)
        for w in watchers:
            w.close()
