"""The cluster's durable store (SQLite): objects, one global resourceVersion, a change log.

See :mod:`.store` for the guarantees and :mod:`.schema` for the tables.
"""

from kubesched.server.store.errors import AlreadyExists, Conflict, Expired, NotFound, StoreError
from kubesched.api.jsontext import dumpb, dumps, loads
from kubesched.server.store.store import DEFAULT_HISTORY, Store
from kubesched.server.store.txn import ListPage, Txn
from kubesched.server.store.watch import ADDED, DELETED, MODIFIED, StoredEvent, Watcher

__all__ = [
    "ADDED", "DELETED", "MODIFIED", "DEFAULT_HISTORY", "AlreadyExists", "Conflict", "Expired",
    "ListPage", "NotFound", "Store", "StoreError", "StoredEvent", "Txn", "Watcher", "dumpb", "dumps", "loads",
]
