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
without re-encoding (:meth:`StoredEvent.frame` builds a stream line once for every stream);
:meth:`StoredEvent.obj` parses it once and caches the result, which is shared by every
consumer and must not be mutated. (Taking a MODIFIED event's object-before from the
previous event's parse instead of parsing ``prev`` was tried: keeping recent events to link
to kept their parses alive, and the cyclic GC's work on them cost more than the parse.)

The hub's cost per commit does not grow with watchers of other kinds: it pushes only to
the watchers of the commit's kinds; the others learn that the hub moved on from
:attr:`WatchHub.published` when they drain (what ``seen`` reports, read before the buffer
is taken, so it never announces a revision whose events are not in the buffer taken).
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.jsontext import loads

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
    _frame: bytes | None = field(default=None, repr=False)

    def obj(self) -> dict[str, Any]:
        """The object, parsed once; shared by all consumers: never mutate it."""
        if self._obj is None:
            self._obj = loads(self.data)
        return self._obj  # type: ignore[no-any-return]

    def prev_obj(self) -> dict[str, Any] | None:
        """The object before a MODIFIED change, parsed once; shared: never mutate it."""
        if self.prev is None:
            return None
        if self._prev_obj is None:
            self._prev_obj = loads(self.prev)
        return self._prev_obj  # type: ignore[no-any-return]

    def frame(self, type_: str) -> bytes:
        """The JSON watch-stream line ``{"type":...,"object":<stored text>}`` of this event
        as ``type_`` (a selector can turn MODIFIED into ADDED or DELETED); the line of the
        event's own type is built once for every stream that sends the stored text as is."""
        if type_ != self.type:
            return f'{{"type":"{type_}","object":{self.data}}}\n'.encode()
        if self._frame is None:
            self._frame = f'{{"type":"{type_}","object":{self.data}}}\n'.encode()
        return self._frame


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
        self._waiters = 0  # threads blocked in get(): notified only when there are some

    def wants(self, kind: str) -> bool:
        return self.kinds is None or kind in self.kinds

    def push(self, events: list[StoredEvent], upto: int) -> None:
        """Called by the hub (writer thread) with the events of a commit that ends at
        revision ``upto`` (possibly none of this watcher's kinds). Never blocks."""
        with self._cond:
            if self.closed:
                return
            if upto > self.seen_rv:
                self.seen_rv = upto
            if not events:
                return
            if len(self._buf) + len(events) <= self.capacity:
                self._buf.extend(events)
            else:
                self.overflowed = True
                self.closed = True
                self._buf.clear()
                log.warning("watcher terminated: more than %d undelivered events", self.capacity)
            if self._waiters:
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
        published = self._hub.published  # before the buffer: see the module's docstring
        with self._cond:
            out = list(self._buf)
            self._buf.clear()
            return out, self._seen(published)

    def get(self, timeout: float | None = None) -> tuple[list[StoredEvent], int]:
        """Like :meth:`drain`, waiting up to ``timeout`` seconds for an event."""
        with self._cond:
            if not self._buf and not self.closed:
                self._waiters += 1
                try:
                    self._cond.wait(timeout)
                finally:
                    self._waiters -= 1
        return self.drain()

    def _seen(self, published: int) -> int:
        # a closed watcher receives nothing more: what it saw was fixed when it closed
        return self.seen_rv if self.closed or published < self.seen_rv else published

    def close(self) -> None:
        """Stop receiving events and wake the consumer (idempotent)."""
        published = self._hub.published
        with self._cond:
            if not self.closed:
                self.seen_rv = self._seen(published)
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
        self.published = 0  # every event up to this revision has been pushed to its watchers
        # who gets what, rebuilt when a watcher comes or goes (publish reads it without the lock)
        self._routes: tuple[dict[str, tuple[Watcher, ...]], tuple[Watcher, ...]] = ({}, ())

    def _reroute(self) -> None:
        single: dict[str, list[Watcher]] = {}
        other: list[Watcher] = []
        for w in self._watchers:
            if w.only is not None:
                single.setdefault(w.only, []).append(w)
            else:
                other.append(w)
        self._routes = ({k: tuple(v) for k, v in single.items()}, tuple(other))

    def new_watcher(self, kinds: Iterable[str] | None, backlog: list[StoredEvent], upto: int,
                    capacity: int = DEFAULT_CAPACITY) -> Watcher:
        """Register a watcher pre-filled with ``backlog``, the events up to revision
        ``upto`` (the caller holds the store's write lock, so nothing is published
        between reading the backlog and this)."""
        w = Watcher(self, None if kinds is None else frozenset(kinds), capacity + len(backlog))
        w.push(backlog, upto)
        with self._lock:
            self._watchers.add(w)
            self._reroute()
        return w

    def remove(self, w: Watcher) -> None:
        with self._lock:
            if w in self._watchers:
                self._watchers.discard(w)
                self._reroute()

    def publish(self, events: list[StoredEvent]) -> None:
        """Push a commit's events (in revision order) to the watchers of their kinds; called
        by the store's writer, one commit at a time."""
        if not events:
            return
        upto = events[-1].rv
        single, other = self._routes
        by_kind: dict[str, list[StoredEvent]] = {}  # grouped once, not filtered per watcher
        for e in events:
            by_kind.setdefault(e.kind, []).append(e)
        for kind, evs in by_kind.items():
            for w in single.get(kind, ()):
                w.push(evs, upto)
        for w in other:
            if w.kinds is None:
                w.push(events, upto)
            else:
                w.push([e for e in events if e.kind in w.kinds], upto)
        self.published = upto  # after the pushes: see the module's docstring

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
