"""Fan-out of committed changes to watchers, without ever blocking the writer.

The store publishes each committed transaction's events, in revision order and while it
still holds its write lock, to every registered :class:`Watcher` whose kinds match. A
watcher is a bounded buffer: pushing is O(1) and never waits for the consumer. A consumer
that falls too far behind (more than ``capacity`` undelivered events, or, for a watcher
given ``max_bytes``, more than that many bytes of undelivered event text) is terminated, as
kube-apiserver's cacher terminates a watcher whose channel stays full; it sees
``overflowed`` and resumes with a new watch from its last revision (or re-lists on 410).
The bytes of all such watchers together are bounded too (:attr:`WatchHub.max_total_bytes`):
past it, the watchers holding the most are terminated first. A terminated watcher's buffer
is dropped at once, and its ``on_overflow`` callback lets the consumer drop what it holds.

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
WATCH_BUFFER_BYTES = 32 * 1024 * 1024  # undelivered event text one HTTP watcher may hold
TOTAL_WATCH_BUFFER_BYTES = 256 * 1024 * 1024  # ... and all of them together


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

    @property
    def size(self) -> int:
        """The event's text (object, and object before): what a buffer holding it keeps alive."""
        return len(self.data) + (len(self.prev) if self.prev is not None else 0)

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

    def __init__(self, hub: "WatchHub", kinds: frozenset[str] | None, capacity: int,
                 max_bytes: int | None = None) -> None:
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
        self.max_bytes = max_bytes  # None: bounded by the number of events only
        self.bytes = 0  # text of the buffered events, counted when max_bytes is set
        self.on_overflow: Callable[[], None] | None = None  # called (writer's thread) when terminated

    def wants(self, kind: str) -> bool:
        return self.kinds is None or kind in self.kinds

    def push(self, events: list[StoredEvent], upto: int, size: int | None = None) -> None:
        """Called by the hub (writer thread) with the events of a commit that ends at
        revision ``upto`` (possibly none of this watcher's kinds). Never blocks. ``size``:
        the events' text, if the caller summed it once for every watcher."""
        with self._cond:
            if self.closed:
                return
            if upto > self.seen_rv:
                self.seen_rv = upto
            if not events:
                return
            if self.max_bytes is None:
                size = 0
            elif size is None:
                size = sum(e.size for e in events)
            if len(self._buf) + len(events) > self.capacity:
                reason = f"more than {self.capacity} undelivered events"
            elif self.max_bytes is not None and self.bytes + size > self.max_bytes:
                reason = f"more than {self.max_bytes} bytes of undelivered events"
            else:
                self._buf.extend(events)
                self._count(size)
                reason = ""
            if reason:
                self._terminate_locked(reason)
            if self._waiters:
                self._cond.notify_all()
            notify, overflow = self._notify, self.on_overflow if reason else None
        if overflow is not None:
            overflow()
        if notify is not None:
            notify()

    def _count(self, size: int) -> None:
        if size and self.max_bytes is not None:
            self.bytes += size
            self._hub.count_bytes(size)

    def _terminate_locked(self, reason: str) -> None:
        self.overflowed = True
        self.closed = True
        self._buf.clear()
        self._count(-self.bytes)
        log.warning("watcher of %s terminated: %s (the client resumes or re-lists)",
                    ",".join(sorted(self.kinds)) if self.kinds else "every kind", reason)

    def terminate(self, reason: str) -> None:
        """End this watcher as if it overflowed (the hub sheds it to keep its total bound)."""
        with self._cond:
            if self.closed:
                return
            self._terminate_locked(reason)
            self._cond.notify_all()
            notify, overflow = self._notify, self.on_overflow
        if overflow is not None:
            overflow()
        if notify is not None:
            notify()

    def set_notify(self, fn: Callable[[], None] | None) -> None:
        with self._cond:
            self._notify = fn
            pending = bool(self._buf) or self.closed
        if fn is not None and pending:
            fn()

    def drain(self, max_bytes: int | None = None) -> tuple[list[StoredEvent], int]:
        """The buffered events, without waiting, and the revision up to which nothing
        else of this watcher's kinds happened (what a bookmark may announce). With
        ``max_bytes`` (for a watcher that counts bytes), only the oldest events whose text
        fits (at least one); the rest stay buffered and still count against its bound."""
        published = self._hub.published  # before the buffer: see the module's docstring
        with self._cond:
            if max_bytes is None or self.max_bytes is None or self.bytes <= max_bytes:
                out = list(self._buf)
                self._buf.clear()
                self._count(-self.bytes)
                return out, self._seen(published)
            out, size = [], 0
            while self._buf and (not out or size + self._buf[0].size <= max_bytes):
                ev = self._buf.popleft()
                out.append(ev)
                size += ev.size
            self._count(-size)
            return out, out[-1].rv  # later events are still buffered: announce no further

    @property
    def pending(self) -> bool:
        """Whether events are buffered (a bounded drain may leave some)."""
        return bool(self._buf)

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
            self._buf.clear()
            self._count(-self.bytes)
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
        self.max_total_bytes = TOTAL_WATCH_BUFFER_BYTES  # over the watchers given max_bytes
        self.buffered_bytes = 0
        self._bytes_lock = threading.Lock()

    def count_bytes(self, delta: int) -> None:
        with self._bytes_lock:
            self.buffered_bytes += delta

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
                    capacity: int = DEFAULT_CAPACITY, max_bytes: int | None = None) -> Watcher:
        """Register a watcher pre-filled with ``backlog``, the events up to revision
        ``upto`` (the caller holds the store's write lock, so nothing is published
        between reading the backlog and this). ``max_bytes``: its bound on undelivered
        event text (the backlog counts; the caller keeps it within the bound)."""
        w = Watcher(self, None if kinds is None else frozenset(kinds), capacity + len(backlog), max_bytes)
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
            watchers = single.get(kind, ())
            size = sum(e.size for e in evs) if watchers else 0  # once, not once per watcher
            for w in watchers:
                w.push(evs, upto, size)
        for w in other:
            if w.kinds is None:
                w.push(events, upto)
            else:
                w.push([e for e in events if e.kind in w.kinds], upto)
        self.published = upto  # after the pushes: see the module's docstring
        if self.buffered_bytes > self.max_total_bytes:
            self._shed()

    def _shed(self) -> None:
        """Terminate the watchers holding the most undelivered text until all of them
        together are within :attr:`max_total_bytes` (writer's thread, after a publish)."""
        with self._lock:
            bounded = sorted((w for w in self._watchers if w.max_bytes is not None), key=lambda w: -w.bytes)
        for w in bounded:
            if self.buffered_bytes <= self.max_total_bytes:
                return
            w.terminate(f"the watchers' buffers hold more than {self.max_total_bytes} bytes in all")

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
