"""The durable object store: SQLite, one global revision counter, a change log.

What kube-apiserver gets from etcd, on one machine:

* every write is one SQLite transaction that takes the next revision(s) of one global,
  monotonically increasing counter, writes the objects and appends to the change log;
  it is committed (and fsynced, see :mod:`.schema`) before the call returns;
* reads and lists see a consistent snapshot and the revision it is at;
* watches start from a revision: the change log replays what happened after it and the
  hub (:mod:`.watch`) delivers what happens next, with nothing lost or doubled between
  the two because both are handed over under the write lock;
* the change log is compacted to the last ``history`` revisions; a watch or a list
  continuation from before that raises :class:`Expired` (HTTP 410 Gone).

Thread safety: writers, an event loop's too (:mod:`.loopwrite`), are serialized by one lock;
readers use one connection per thread and never wait for writers (WAL). The store knows
nothing about Kubernetes semantics beyond ``metadata``: validation, defaulting and graceful
deletion belong to the API server's registry, which uses :meth:`Store.txn` and
:meth:`Store.guaranteed_update` to read-modify-write without races.
"""

from __future__ import annotations

import builtins
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from kubesched.server.store import schema
from kubesched.server.store.errors import Expired, NotFound
from kubesched.api.jsontext import loads
from kubesched.server.store.loopwrite import LoopWrites
from kubesched.server.store.txn import KEEP, ListPage, Txn
from kubesched.server.store.watch import DEFAULT_CAPACITY, StoredEvent, Watcher, WatchHub

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_HISTORY = 10_000
_LIST_CHUNK = 500
# Group commit bounds: a group is committed once this many writes joined it, or this
# long after it began, even while more writers are queued.
GROUP_MAX_WRITES = 256
GROUP_MAX_SECONDS = 0.005


class Store:
    """A SQLite-backed object store with a global revision and watchable change log."""

    def __init__(self, path: str | Path, *, history: int = DEFAULT_HISTORY,
                 synchronous: str = "FULL", watch_capacity: int = DEFAULT_CAPACITY) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.history = max(1, history)
        self.watch_capacity = watch_capacity
        self._synchronous = synchronous
        self._lock = threading.RLock()
        # group commit (see txn): the open SQLite transaction, its changes not yet
        # committed, the revision last handed out in it, and the group numbers
        self._cv = threading.Condition(threading.Lock())
        self._waiting = 0
        self._depth = 0
        self._open = False
        self._opened_at = 0.0
        self._group_size = 0
        self._pending: builtins.list[StoredEvent] = []
        self._batch = 1
        self._committed = 0
        self._failed: dict[int, BaseException] = {}
        self._loop_writes = LoopWrites(self)  # writes from an event loop (write_on_loop)
        self.commits = 0  # SQLite COMMITs that wrote something (one fsync each)
        self._wconn = schema.connect(self.path, synchronous)
        self._rv, self._compacted = schema.initialize(self._wconn)
        self._wrv = self._rv
        self._local = threading.local()
        self._readers: builtins.list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._since_compaction = 0
        self.hub = WatchHub()
        self.closed = False
        log.info("store %s opened at revision %d (compacted %d)", self.path, self._rv, self._compacted)

    # -- lifecycle ----------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            if self.closed:
                return
            self._commit_locked()
            self.closed = True
            self.hub.close_all()
            with self._cv:
                self._cv.notify_all()
            with self._readers_lock:
                for c in self._readers:
                    c.close()
                self._readers.clear()
            self._wconn.close()
        self._loop_writes.close()

    @property
    def rv(self) -> int:
        """The last committed revision."""
        return self._rv

    @property
    def compacted_rv(self) -> int:
        return self._compacted

    def _reader(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = schema.connect(self.path, self._synchronous)
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        conn = self._reader()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    # -- reads --------------------------------------------------------------------------
    def get(self, kind: str, namespace: str, name: str) -> dict[str, Any]:
        row = self._reader().execute("SELECT data FROM objects WHERE kind=? AND namespace=? AND name=?",
                                     (kind, namespace, name)).fetchone()
        if row is None:
            raise NotFound(kind, namespace, name)
        return loads(row[0])  # type: ignore[no-any-return]

    def list(self, kind: str, namespace: str | None = None, *, after: tuple[str, str] | None = None,
             limit: int = 0, predicate: Callable[[dict[str, Any]], bool] | None = None) -> ListPage:
        """Objects of ``kind`` (in ``namespace``, or all), ordered by namespace and name,
        starting after the key ``after``, at most ``limit`` of them (0: all) passing
        ``predicate``."""
        sql = "SELECT namespace, name, data FROM objects WHERE kind=?"
        args: builtins.list[Any] = [kind]
        if namespace is not None:
            sql += " AND namespace=?"
            args.append(namespace)
        if after is not None:
            sql += " AND (namespace, name) > (?, ?)"
            args.extend(after)
        sql += " ORDER BY namespace, name"
        items: builtins.list[dict[str, Any]] = []
        next_key: tuple[str, str] | None = None
        with self._snapshot() as conn:
            rv = int(conn.execute("SELECT value FROM meta WHERE key='rv'").fetchone()[0])
            cur = conn.execute(sql, args)
            last: tuple[str, str] | None = None
            while True:
                rows = cur.fetchmany(_LIST_CHUNK)
                if not rows:
                    break
                for ns, nm, data in rows:
                    if limit and len(items) >= limit:
                        next_key = last
                        break
                    last = (ns, nm)
                    obj = loads(data)
                    if predicate is None or predicate(obj):
                        items.append(obj)
                if next_key is not None:
                    break
            cur.close()
        return ListPage(items, rv, next_key)

    def count(self, kind: str) -> int:
        return int(self._reader().execute("SELECT COUNT(*) FROM objects WHERE kind=?", (kind,)).fetchone()[0])

    def counts(self) -> dict[str, int]:
        return dict(self._reader().execute("SELECT kind, COUNT(*) FROM objects GROUP BY kind").fetchall())

    def expired(self, now: float) -> builtins.list[tuple[str, str, str]]:
        """Objects whose ``expires`` time (graceful deletion) is at or before ``now``."""
        return [(k, ns, n) for k, ns, n in self._reader().execute(
            "SELECT kind, namespace, name FROM objects WHERE expires IS NOT NULL AND expires <= ?", (now,))]

    def next_expiry(self) -> float | None:
        row = self._reader().execute("SELECT MIN(expires) FROM objects WHERE expires IS NOT NULL").fetchone()
        return None if row is None or row[0] is None else float(row[0])

    # -- writes -------------------------------------------------------------------------
    async def write_on_loop(self, fn: Callable[[], T]) -> T:
        """``fn()`` (writes through :meth:`txn`; short, blocking on nothing but SQLite) on the
        calling event loop's thread; returns once its group is durable (:mod:`.loopwrite`)."""
        return await self._loop_writes.run(fn)

    @contextmanager
    def txn(self) -> Iterator[Txn]:
        """A write transaction; committed when the block exits without an exception, and
        durable (fsynced) before this returns.

        Group commit: transactions run one at a time under the write lock, each inside a
        SAVEPOINT of one open SQLite transaction. A writer that finishes while others are
        queued for the lock leaves the COMMIT to them; the last writer of the group commits
        (one fsync for all of them) and publishes every change. Each writer returns (its
        write is acknowledged) only once its group is committed; if the COMMIT fails, every
        writer of the group gets the error and nothing of the group is published."""
        with self._cv:
            self._waiting += 1
        self._lock.acquire()
        with self._cv:
            self._waiting -= 1
        outer = self._depth == 0
        deferred = self._loop_writes.active  # write_on_loop: the committer commits, not this thread
        self._depth += 1
        failure: BaseException | None = None
        batch = self._batch
        try:
            if self.closed:
                raise sqlite3.ProgrammingError("store is closed")
            conn = self._wconn
            if not self._open:
                conn.execute("BEGIN IMMEDIATE")
                self._open = True
                self._opened_at = time.monotonic()
                self._group_size = 0
            self._group_size += 1
            conn.execute("SAVEPOINT w")
            tx = Txn(self, conn)
            try:
                yield tx
            except BaseException as exc:
                conn.execute("ROLLBACK TO w")
                conn.execute("RELEASE w")
                failure = exc
            else:
                conn.execute("RELEASE w")
                if tx.events:
                    self._wrv = tx.events[-1].rv
                    self._pending.extend(tx.events)
            if outer and deferred:
                self._loop_writes.joined(batch)
            elif outer:
                with self._cv:
                    others = self._waiting
                # a group is bounded (size, age) so a steady stream of writers cannot
                # keep postponing its COMMIT
                if (others == 0 or self._group_size >= GROUP_MAX_WRITES
                        or time.monotonic() - self._opened_at >= GROUP_MAX_SECONDS):
                    self._commit_locked()
        finally:
            self._depth -= 1
            self._unlock()
        if outer and not deferred:
            self._wait_committed(batch)
        if failure is not None:
            raise failure

    def _commit_locked(self) -> None:
        """Commit the open group (under the write lock): one COMMIT, one fsync."""
        if not self._open:
            return
        conn = self._wconn
        events, self._pending = self._pending, []
        batch = self._batch
        error: BaseException | None = None
        try:
            if events:
                new_rv = events[-1].rv
                conn.execute("UPDATE meta SET value=? WHERE key='rv'", (new_rv,))
                self._since_compaction += len(events)
                if self._since_compaction >= max(64, self.history // 8):
                    self._compact_locked(conn, new_rv - self.history)
            conn.execute("COMMIT")
        except BaseException as exc:
            error = exc
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            self._wrv = self._rv
            self._compacted = int(conn.execute("SELECT value FROM meta WHERE key='compacted'").fetchone()[0])
        self._open = False
        if error is None and events:
            self.commits += 1
            self._rv = events[-1].rv
            self.hub.publish(events)
        with self._cv:
            self._batch += 1
            if error is not None:
                self._failed[batch] = error
                for old in [b for b in self._failed if b < batch - 1024]:
                    del self._failed[old]
            self._committed = batch
            self._cv.notify_all()
        self._loop_writes.committed(batch, error)

    def _unlock(self) -> None:
        free = self._depth == 0  # not a nested transaction's release: the lock is free now
        self._lock.release()
        if free:
            self._loop_writes.lock_released()

    def _wait_committed(self, batch: int) -> None:
        with self._cv:
            while self._committed < batch and not self.closed:
                self._cv.wait(1.0)
            # every writer of a failed group gets the error (get, not pop: they all wait for it)
            error = self._failed.get(batch) if self._committed >= batch else None
            if self._committed < batch:
                raise sqlite3.ProgrammingError("store is closed")
        if error is not None:
            raise error

    def flush(self) -> None:
        """Commit the open group now (nothing to do when none is open)."""
        self._lock.acquire()
        try:
            self._commit_locked()
        finally:
            self._unlock()

    def create(self, kind: str, namespace: str, name: str, obj: dict[str, Any],
               expires: float | None = None) -> dict[str, Any]:
        with self.txn() as tx:
            return tx.create(kind, namespace, name, obj, expires)

    def update(self, kind: str, namespace: str, name: str, obj: dict[str, Any], *,
               expect_rv: int | None = None, expires: Any = KEEP) -> dict[str, Any]:
        with self.txn() as tx:
            return tx.update(kind, namespace, name, obj, expect_rv=expect_rv, expires=expires)

    def delete(self, kind: str, namespace: str, name: str, *, expect_rv: int | None = None,
               expect_uid: str | None = None) -> dict[str, Any]:
        with self.txn() as tx:
            return tx.delete(kind, namespace, name, expect_rv=expect_rv, expect_uid=expect_uid)

    def guaranteed_update(self, kind: str, namespace: str, name: str,
                          fn: Callable[[dict[str, Any], Txn], dict[str, Any] | None]) -> dict[str, Any]:
        """Read-modify-write without a race: ``fn(current, tx)`` runs under the write lock,
        writes through ``tx`` (update, delete, or other objects) and returns the result,
        or ``None`` when nothing changed (the current object is returned); it may raise,
        which rolls everything back."""
        with self.txn() as tx:
            cur = tx.get(kind, namespace, name)
            if cur is None:
                raise NotFound(kind, namespace, name)
            out = fn(cur, tx)
            return cur if out is None else out

    # -- watch --------------------------------------------------------------------------
    def watch(self, kinds: Iterable[str] | None, since: int, max_bytes: int | None = None) -> Watcher:
        """A watcher receiving every change after revision ``since`` of ``kinds``
        (``None``: all kinds). Raises :class:`Expired` if ``since`` was compacted, or if
        the changes since then hold more than ``max_bytes`` of text (the watcher's bound:
        such a client must list again, as one behind the watch cache's window does)."""
        kinds = None if kinds is None else tuple(kinds)
        self._lock.acquire()
        try:
            self._commit_locked()  # the backlog and the hub hand over at a committed revision
            if since < self._compacted:
                raise Expired(f"too old resource version: {since} ({self._compacted + 1})",
                              since, self._compacted + 1)
            backlog = self._events_after(kinds, since, max_bytes) if since < self._rv else []
            return self.hub.new_watcher(kinds, backlog, max(since, self._rv), self.watch_capacity, max_bytes)
        finally:
            self._unlock()

    def _events_after(self, kinds: tuple[str, ...] | None, since: int,
                      max_bytes: int | None = None) -> builtins.list[StoredEvent]:
        sql = "SELECT rv, type, kind, namespace, name, data, prev FROM events WHERE rv > ?"
        args: builtins.list[Any] = [since]
        if kinds is not None:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            args.extend(kinds)
        out: builtins.list[StoredEvent] = []
        size = 0
        for row in self._wconn.execute(sql + " ORDER BY rv", args):  # read no further than the bound
            ev = StoredEvent(*row)
            size += ev.size
            if max_bytes is not None and size > max_bytes:
                raise Expired(f"too old resource version: {since} (the changes since hold more than "
                              f"{max_bytes} bytes)", since, self._rv)
            out.append(ev)
        return out

    # -- compaction ---------------------------------------------------------------------
    def compact(self, keep: int | None = None) -> int:
        """Drop change-log entries older than the last ``keep`` revisions (default: the
        configured history); return the compacted revision."""
        with self.txn() as tx:
            self._compact_locked(tx._conn, self._rv - (self.history if keep is None else keep))
        return self._compacted

    def _compact_locked(self, conn: sqlite3.Connection, upto: int) -> None:
        self._since_compaction = 0
        if upto <= self._compacted:
            return
        conn.execute("DELETE FROM events WHERE rv <= ?", (upto,))
        conn.execute("UPDATE meta SET value=? WHERE key='compacted'", (upto,))
        self._compacted = upto
        log.debug("change log compacted up to revision %d", upto)
