"""Writes from an event loop, acknowledged once durable, with no worker thread per write.

Why this exists: ``serve``'s API server handled every write in a worker thread because
:meth:`.Store.txn` blocks until its group is committed and fsynced. In a burst of creates
and binds, handing each request to a thread and back (and the threads fighting over the
GIL) cost about a quarter of the server's CPU (issue 16). A write is short CPU work plus
SQLite statements inside the open group's SAVEPOINT; only the COMMIT waits for the disk.
So :meth:`.Store.write_on_loop` runs the write itself on the event loop, and only the wait
is asynchronous:

* the write lock is taken without blocking; when another thread holds it (a writer, or the
  committer in the middle of an fsync), the coroutine waits for its release (woken with
  ``call_soon_threadsafe``, re-checked every 50 ms so a missed wake-up only delays it);
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
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from kubesched.cluster.store.store import Store

T = TypeVar("T")
_Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]"]
LOCK_RECHECK = 0.05  # seconds: a waiter re-tries the lock at least this often


def _resolve(fut: "asyncio.Future[None]", error: BaseException | None) -> None:
    if fut.done():
        return
    if error is None:
        fut.set_result(None)
    else:
        fut.set_exception(error)


def _wake(loop: asyncio.AbstractEventLoop, fut: "asyncio.Future[None]", error: BaseException | None) -> None:
    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    try:
        if running is loop:
            loop.call_soon(_resolve, fut, error)
        else:
            loop.call_soon_threadsafe(_resolve, fut, error)
    except RuntimeError:  # the loop is closed: nobody waits any more
        pass


class LoopWrites:
    """The event-loop side of one :class:`.Store`'s group commit (see the module doc)."""

    def __init__(self, store: "Store") -> None:
        self._store = store
        self._tls = threading.local()
        self._mu = threading.Lock()
        self._lock_waiters: list[_Waiter] = []
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
        await self._acquire(loop)
        self._tls.active, self._tls.batch = True, None
        try:
            result = fn()
        except BaseException:
            batch = self._tls.batch
            self._release(loop, batch)
            if batch is not None:  # an earlier transaction of fn may have written: durable first
                try:
                    await self._durable(loop, batch)
                except Exception:  # the original error is the answer
                    pass
            raise
        batch = self._tls.batch
        self._release(loop, batch)
        if batch is not None:
            await self._durable(loop, batch)
        return result

    async def _acquire(self, loop: asyncio.AbstractEventLoop) -> None:
        lock = self._store._lock
        while not lock.acquire(blocking=False):
            fut: asyncio.Future[None] = loop.create_future()
            with self._mu:
                self._lock_waiters.append((loop, fut))
            if lock.acquire(blocking=False):  # released in between (the releaser saw no waiter)
                return
            timer = loop.call_later(LOCK_RECHECK, _resolve, fut, None)
            try:
                await fut
            finally:
                timer.cancel()

    def _release(self, loop: asyncio.AbstractEventLoop, batch: int | None) -> None:
        self._tls.active = False
        if batch is not None and not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._request_commit)
        self._store._unlock()

    def lock_released(self) -> None:
        """The store's write lock was released (any thread): wake the loop writers waiting."""
        if not self._lock_waiters:
            return
        with self._mu:
            waiters, self._lock_waiters = self._lock_waiters, []
        for loop, fut in waiters:
            _wake(loop, fut, None)

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
        for loop, fut in waiters:
            _wake(loop, fut, error)

    def close(self) -> None:
        """Stop the committer (the store committed its last group) and wake every waiter."""
        with self._kick:
            self._closed = True
            self._kick.notify_all()
            thread = self._thread
            durable, self._durable_waiters = self._durable_waiters, {}
            locks, self._lock_waiters = self._lock_waiters, []
        closed = sqlite3.ProgrammingError("store is closed")
        for waiters in durable.values():
            for loop, fut in waiters:
                _wake(loop, fut, closed)
        for loop, fut in locks:
            _wake(loop, fut, None)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
