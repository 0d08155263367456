"""A write transaction of the store (``with store.txn() as tx``) and one page of a list:
every change a transaction makes takes the next revision, and all are committed and
published together by :class:`~kubesched.server.store.store.Store`."""

from __future__ import annotations

import builtins
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched.api.jsontext import dumps, loads
from kubesched.server.store.errors import AlreadyExists, Conflict, NotFound
from kubesched.server.store.watch import ADDED, DELETED, MODIFIED, StoredEvent

if TYPE_CHECKING:
    from kubesched.server.store.store import Store

KEEP: Any = object()  # Txn.update: keep the stored ``expires``


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta


@dataclass(frozen=True, slots=True)
class ListPage:
    """One page of a list: the items, the revision they are consistent at, and where the
    next page starts (``None`` when this is the last page)."""

    items: list[dict[str, Any]]
    rv: int
    next_key: tuple[str, str] | None


class Txn:
    """A write transaction, used inside ``with store.txn() as tx``. Every change takes
    the next revision; all of them are committed together and then published."""

    def __init__(self, store: "Store", conn: sqlite3.Connection) -> None:
        self._store = store
        self._conn = conn
        self.events: builtins.list[StoredEvent] = []

    @property
    def next_rv(self) -> int:
        return self._store._wrv + len(self.events) + 1

    def get(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        row = self._conn.execute("SELECT data FROM objects WHERE kind=? AND namespace=? AND name=?",
                                 (kind, namespace, name)).fetchone()
        return None if row is None else loads(row[0])

    def list(self, kind: str, namespace: str | None = None) -> builtins.list[dict[str, Any]]:
        if namespace is None:
            rows = self._conn.execute("SELECT data FROM objects WHERE kind=? ORDER BY namespace, name", (kind,))
        else:
            rows = self._conn.execute("SELECT data FROM objects WHERE kind=? AND namespace=? ORDER BY name",
                                      (kind, namespace))
        return [loads(r[0]) for r in rows]

    def kinds_in_namespace(self, namespace: str) -> builtins.list[str]:
        return [r[0] for r in self._conn.execute(
            "SELECT DISTINCT kind FROM objects WHERE namespace=?", (namespace,))]

    def create(self, kind: str, namespace: str, name: str, obj: dict[str, Any],
               expires: float | None = None) -> dict[str, Any]:
        """Insert ``obj`` (taken over: its resourceVersion is set). Raises AlreadyExists."""
        row = self._conn.execute("SELECT 1 FROM objects WHERE kind=? AND namespace=? AND name=?",
                                 (kind, namespace, name)).fetchone()
        if row is not None:
            raise AlreadyExists(kind, namespace, name)
        return self._write(ADDED, kind, namespace, name, obj, None, expires)

    def update(self, kind: str, namespace: str, name: str, obj: dict[str, Any], *,
               expect_rv: int | None = None, expires: float | None | object = KEEP) -> dict[str, Any]:
        """Replace the object. ``expect_rv``: fail with Conflict unless it is current.
        ``expires``: when to remove it (graceful deletion); by default unchanged."""
        row = self._conn.execute("SELECT rv, data, expires FROM objects WHERE kind=? AND namespace=? AND name=?",
                                 (kind, namespace, name)).fetchone()
        if row is None:
            raise NotFound(kind, namespace, name)
        if expect_rv is not None and expect_rv != row[0]:
            raise Conflict(kind, namespace, name, "the object has been modified; please apply your "
                           "changes to the latest version and try again")
        return self._write(MODIFIED, kind, namespace, name, obj, row[1], row[2] if expires is KEEP else expires)

    def delete(self, kind: str, namespace: str, name: str, *, expect_rv: int | None = None,
               expect_uid: str | None = None) -> dict[str, Any]:
        """Remove the object; return its last state, at the deleting revision."""
        row = self._conn.execute("SELECT rv, uid, data FROM objects WHERE kind=? AND namespace=? AND name=?",
                                 (kind, namespace, name)).fetchone()
        if row is None:
            raise NotFound(kind, namespace, name)
        if expect_uid is not None and expect_uid != row[1]:
            raise Conflict(kind, namespace, name, f"Precondition failed: UID in precondition: {expect_uid}, "
                           f"UID in object meta: {row[1]}")
        if expect_rv is not None and expect_rv != row[0]:
            raise Conflict(kind, namespace, name, "Precondition failed: ResourceVersion in precondition: "
                           f"{expect_rv}, ResourceVersion in object meta: {row[0]}")
        obj = loads(row[2])
        rv = self.next_rv
        _meta(obj)["resourceVersion"] = str(rv)
        data = dumps(obj)
        self._conn.execute("DELETE FROM objects WHERE kind=? AND namespace=? AND name=?", (kind, namespace, name))
        self._log(StoredEvent(rv, DELETED, kind, namespace, name, data, None, obj))
        return obj  # type: ignore[no-any-return]

    def _write(self, type_: str, kind: str, namespace: str, name: str, obj: dict[str, Any],
               prev: str | None, expires: Any) -> dict[str, Any]:
        rv = self.next_rv
        meta = _meta(obj)
        meta["resourceVersion"] = str(rv)
        data = dumps(obj)
        self._conn.execute(
            "INSERT OR REPLACE INTO objects(kind, namespace, name, uid, rv, data, expires) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (kind, namespace, name, str(meta.get("uid") or ""), rv, data, expires))
        self._log(StoredEvent(rv, type_, kind, namespace, name, data, prev, obj))
        return obj

    def _log(self, ev: StoredEvent) -> None:
        self._conn.execute("INSERT INTO events(rv, type, kind, namespace, name, data, prev) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (ev.rv, ev.type, ev.kind, ev.namespace, ev.name, ev.data, ev.prev))
        # The caller may keep mutating the object it passed; consumers parse the text.
        ev._obj = None
        self.events.append(ev)
