"""Writes from an event loop, acknowledged once durable, with no worker thread per write.

Why this exists: ``serve``'s API server handled every write in a worker thread because
:meth:`.Store.txn` blocks until its group is committed and fsynced. In a burst of creates
and binds, handing each request to a thread and back (and the threads fighting over the
GIL) cost about a quarter of the server's CPU. A write is short CPU work plus
SQLite statements inside the open group's SAVEPOINT; only the COMMIT waits for the disk.
So :meth:`.Store.write_on_loop` runs the write itself on the event loop, and only the wait
is asynchronous:

* the write lock is taken without blocking; when another thread holds it (a writer, or the
  committer in the middle of an fsync), the write is queued, and once the lock is released
  (a wake-up with ``call_soon_threadsafe``, re-checked every 50 ms so a missed one only
  delays it) the loop takes it once and runs every queued write in order: one wake-up and
  one hold of the lock for all of them, however many wait (waking each waiter on every
  release cost more CPU than the thread hops it replaced);
* the write joins the open group, exactly as a thread's write does (one SAVEPOINT), but
  does not commit it: once per loop iteration (``call_soon`` after the requests that arrived
  together) the committer thread is asked to COMMIT the group, one fsync for all of them,
  and publish its events;
* the coroutine awaits a future resolved when that group is committed (by the committer or
  by any thread that committed the group first): the response is sent only then. If the
  COMMIT fails every writer of the group gets the error, as with :meth:`.Store.txn`.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from kubesched.server.store.store import Store

T = TypeVar("T")
_Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]"]
_Outcome = tuple[Any, "int | None", "BaseException | None"]  # fn's result, the group it joined, its error
LOCK_RECHECK = 0.05  # seconds: a waiter re-tries the lock at least this often


def _resolve(fut: "asyncio.Future[Any]", error: BaseException | None, value: Any = None) -> None:
    if fut.done():
        return
    if error is None:
        fut.set_result(value)
    else:
        fut.set_exception(error)


def _call(loop: asyncio.AbstractEventLoop, fn: Callable[..., None], *args: Any) -> None:
    """``fn(*args)`` on ``loop``'s thread, soon (from any thread)."""
    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    try:
        if running is loop:
            loop.call_soon(fn, *args)
        else:
            loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # the loop is closed: nobody waits any more
        pass


def _resolve_all(futs: "list[asyncio.Future[Any]]", error: BaseException | None) -> None:
    for fut in futs:
        _resolve(fut, error)


def _wake(loop: asyncio.AbstractEventLoop, fut: "asyncio.Future[Any]", error: BaseException | None,
          value: Any = None) -> None:
    _call(loop, _resolve, fut, error, value)


class LoopWrites:
    """The event-loop side of one :class:`.Store`'s group commit (see the module doc)."""

    def __init__(self, store: "Store") -> None:
        self._store = store
        self._tls = threading.local()
        self._mu = threading.Lock()
        self._queue: deque[tuple[asyncio.AbstractEventLoop, Callable[[], Any], asyncio.Future[_Outcome]]] = deque()
        self._wanted: asyncio.AbstractEventLoop | None = None  # drain there when the lock is released
        self._timer: asyncio.TimerHandle | None = None
        self._durable_waiters: dict[int, list[_Waiter]] = {}
        self._kick = threading.Condition(self._mu)
        self._requested = False  # the committer has a group to commit
        self._scheduled = False  # a request to the committer is queued on the loop
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def active(self) -> bool:
        """Whether this thread is inside :meth:`run` (its transactions leave the COMMIT)."""
        return bool(getattr(self._tls, "active", False))

    def joined(self, batch: int) -> None:
        """A deferred transaction of this thread joined group ``batch`` (under the write lock)."""
        self._tls.batch = batch

    async def run(self, fn: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        if not self._queue and self._store._lock.acquire(blocking=False):
            outcome = self._run_locked(fn)
            self._release(loop, outcome[1])
        else:  # queued behind the lock's holder; drained in one go once it is free
            fut: asyncio.Future[_Outcome] = loop.create_future()
            self._queue.append((loop, fn, fut))
            self._want_lock(loop)
            outcome = await fut
        result, batch, error = outcome
        if batch is not None:
            if error is None:
                await self._durable(loop, batch)
            else:  # an earlier transaction of fn may have written: durable first, the error is the answer
                try:
                    await self._durable(loop, batch)
                except Exception:
                    pass
        if error is not None:
            raise error
        return result  # type: ignore[no-any-return]

    def _run_locked(self, fn: Callable[[], Any]) -> _Outcome:
        """``fn()`` under the write lock (held by the caller), its transactions deferred."""
        self._tls.active, self._tls.batch = True, None
        try:
            return fn(), self._tls.batch, None
        except BaseException as exc:  # answered to its writer; the lock is released by the caller
            return None, self._tls.batch, exc
        finally:
            self._tls.active = False

    def _want_lock(self, loop: asyncio.AbstractEventLoop) -> None:
        """Drain the queue on ``loop`` when the lock is released (and re-check now and then)."""
        self._wanted = loop
        lock = self._store._lock
        if lock.acquire(blocking=False):  # released before ``_wanted`` was seen
            lock.release()
            self._wanted = None
            loop.call_soon(self._drain, loop)
        elif self._timer is None:
            self._timer = loop.call_later(LOCK_RECHECK, self._recheck, loop)

    def _recheck(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        self._drain(loop)

    def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        """Every queued write, in order, under one hold of the lock: one group."""
        if not self._queue:
            return
        if self._store.closed or not self._store._lock.acquire(blocking=False):
            if self._store.closed:
                self._fail_queue()
            else:
                self._want_lock(loop)
            return
        batch = None
        try:
            while self._queue:
                owner, fn, fut = self._queue.popleft()
                outcome = self._run_locked(fn)
                batch = outcome[1] if outcome[1] is not None else batch
                _wake(owner, fut, None, outcome)
        finally:
            self._release(loop, batch)

    def _fail_queue(self) -> None:
        closed = sqlite3.ProgrammingError("store is closed")
        while self._queue:
            owner, _, fut = self._queue.popleft()
            _wake(owner, fut, None, (None, None, closed))

    def _release(self, loop: asyncio.AbstractEventLoop, batch: int | None) -> None:
        if batch is not None and not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._request_commit)
        self._store._unlock()

    def lock_released(self) -> None:
        """The store's write lock was released (any thread): drain the queued loop writes."""
        loop = self._wanted
        if loop is None:
            return
        self._wanted = None
        _call(loop, self._drain, loop)

    def _request_commit(self) -> None:
        self._scheduled = False
        with self._kick:
            if self._closed:
                return
            self._requested = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._committer, name="store-committer", daemon=True)
                self._thread.start()
            self._kick.notify()

    def _committer(self) -> None:
        store = self._store
        while True:
            with self._kick:
                while not self._requested and not self._closed:
                    self._kick.wait()
                if self._closed:
                    return
                self._requested = False
            store._lock.acquire()
            try:
                if not store.closed:
                    store._commit_locked()
            finally:
                store._unlock()

    async def _durable(self, loop: asyncio.AbstractEventLoop, batch: int) -> None:
        store = self._store
        fut: asyncio.Future[None] = loop.create_future()
        with self._mu:
            self._durable_waiters.setdefault(batch, []).append((loop, fut))
        if store._committed >= batch:  # committed before this registered: committed() may have missed it
            with self._mu:  # every waiter of a committed group checks this itself after registering
                self._durable_waiters.pop(batch, None)
            _resolve(fut, store._failed.get(batch))
        elif store.closed:
            _resolve(fut, sqlite3.ProgrammingError("store is closed"))
        await fut

    def committed(self, batch: int, error: BaseException | None) -> None:
        """Group ``batch`` was committed (or failed with ``error``): wake its loop writers."""
        if not self._durable_waiters:
            return
        with self._mu:
            waiters = self._durable_waiters.pop(batch, [])
        # one hand-off per loop for the whole group (each is a self-pipe write and a wake-up
        # of the loop), not one per writer
        by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
        for loop, fut in waiters:
            by_loop.setdefault(loop, []).append(fut)
        for loop, futs in by_loop.items():
            _call(loop, _resolve_all, futs, error)

    def close(self) -> None:
        """Stop the committer (the store committed its last group) and wake every waiter."""
        with self._kick:
            self._closed = True
            self._kick.notify_all()
            thread = self._thread
            durable, self._durable_waiters = self._durable_waiters, {}
        closed = sqlite3.ProgrammingError("store is closed")
        for waiters in durable.values():
            for loop, fut in waiters:
                _wake(loop, fut, closed)
        self._fail_queue()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
