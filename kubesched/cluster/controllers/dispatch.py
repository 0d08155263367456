"""One thread that delivers watch events to every in-process informer of a store.

Why this exists: ``serve`` runs dozens of informers (the controller manager's, the garbage
collector's one per kind, the simulated nodes'), and each pod write reaches several of
them. With a thread per informer blocked on its watcher, every commit woke each of those
threads in turn, and each wake-up is a futex and a GIL hand-over that costs more than the
work it does. Here a watcher's wake-up callback only marks its informer ready; one
dispatcher thread per store takes every ready informer at once and lets each apply what
its watch buffered, so a commit costs one wake-up however many informers it reaches (and
a busy store's commits share one, see ``COALESCE_SECONDS``), and events keep their
per-informer revision order (each informer drains its own watcher).

Handlers therefore run on the dispatcher's thread: as before they should only enqueue
work; a handler that blocks delays the other informers of the store, not just its own.
The informers' own threads still list, open and resume watches (which may block on the
store) and sleep while the dispatcher serves their watch. The thread exits when the last
informer leaves, so a closed store leaves no thread behind.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from typing import Protocol

log = logging.getLogger(__name__)

_IDLE_RECHECK = 1.0  # seconds: a sleeping dispatcher re-checks whether anyone is left
# After serving, the dispatcher lets this long pass before it looks again, so the commits
# of a busy store join one round instead of waking the thread one by one (what the writer
# pays for is the wake-up: ready() notifies only a dispatcher that is asleep). Events wait
# at most this much longer than they would: nothing for a controller.
COALESCE_SECONDS = 0.002


class Served(Protocol):
    def serve_watch(self) -> None:
        """Apply what the informer's watch has buffered (called on the dispatcher thread)."""


class Dispatcher:
    """The ready set of one store's informers, and the thread that serves it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._cond = threading.Condition(threading.Lock())
        self._ready: dict[Served, None] = {}  # insertion-ordered: first ready, first served
        self._members = 0
        self._sleeping = False
        self._thread: threading.Thread | None = None
        self.rounds = 0  # wake-ups that served something (for tests and benchmarks)

    def join(self) -> None:
        """An informer starts watching through this dispatcher."""
        with self._cond:
            self._members += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"informers-{self.name}", daemon=True)
                self._thread.start()

    def leave(self) -> None:
        with self._cond:
            self._members -= 1
            if self._members <= 0 and self._sleeping:
                self._cond.notify()

    def ready(self, target: Served) -> None:
        """Called from a store writer's thread (a watcher's callback): never blocks long."""
        with self._cond:
            if target in self._ready:
                return
            self._ready[target] = None
            if self._sleeping:
                self._sleeping = False
                self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._ready:
                    if self._members <= 0:
                        self._thread = None
                        return
                    self._sleeping = True
                    self._cond.wait(_IDLE_RECHECK)
                    self._sleeping = False
                batch = list(self._ready)
                self._ready.clear()
            self.rounds += 1
            for target in batch:
                try:
                    target.serve_watch()
                except Exception:  # pragma: no cover - one informer's bug must not stop the others
                    log.exception("informer dispatcher %s", self.name)
            time.sleep(COALESCE_SECONDS)  # awake, not waiting: ready() does not notify meanwhile


_lock = threading.Lock()
_by_owner: "weakref.WeakKeyDictionary[object, Dispatcher]" = weakref.WeakKeyDictionary()


def dispatcher_for(owner: object, name: str = "") -> Dispatcher:
    """The dispatcher of ``owner`` (a store): one per store in the process."""
    with _lock:
        d = _by_owner.get(owner)
        if d is None:
            d = _by_owner[owner] = Dispatcher(name or type(owner).__name__)
        return d
