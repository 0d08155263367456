"""Refusing a broken store instead of serving from it, or starting empty over it.

SQLite opens most damaged files without complaint and reports the damage only when a query
reaches the bad page, so a corrupt or truncated ``store.db`` would otherwise surface as 500s
long after start-up, and a missing or zero-length one would silently become an empty
cluster. Before the API server serves, :func:`verify` therefore

* refuses a missing or empty file in a data directory that held a cluster (the caller knows
  that: serve writes ``DATA_DIR/kubeconfig`` once its store is open), naming the file and how
  to start anew on purpose;
* runs SQLite's ``PRAGMA quick_check`` (every page of every table and index is read, without
  the slower cross-checks of indexes against tables), refusing the file on the first problem
  with SQLite's own words.

:func:`integrity_check` is the full ``PRAGMA integrity_check``, for ``kubesched serve
--check-store``: it opens the file read-only and changes nothing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kubesched.server.store.errors import StoreError

__all__ = ["integrity_check", "verify"]

_MAX_PROBLEMS = 20  # lines of an integrity check report


def verify(path: Path, *, held_cluster: bool) -> None:
    """Raise :class:`StoreError` (one line naming ``path``) if the store must not be served."""
    size = path.stat().st_size if path.exists() else None
    if held_cluster and not size:
        what = "missing" if size is None else "empty (0 bytes)"
        raise StoreError(f"{path} is {what}, but {path.parent} held a cluster: refusing to start an empty "
                         f"cluster over lost data; to start anew on purpose, remove {path.parent} (or pass "
                         "another --data-dir)")
    if not size:
        return  # a new data directory: the store is created
    problems = _check(path, "quick_check", 1)
    if problems:
        raise StoreError(f"{path}: {problems[0]} (see kubesched serve --check-store)")


def integrity_check(path: Path) -> list[str]:
    """SQLite's ``PRAGMA integrity_check`` of the file at ``path``: no problems, or the first
    of them in SQLite's words. Raises :class:`StoreError` if there is no file to check."""
    if not path.exists():
        raise StoreError(f"{path}: no such file")
    return _check(path, "integrity_check", _MAX_PROBLEMS)


def _check(path: Path, pragma: str, limit: int) -> list[str]:
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
    except sqlite3.Error as exc:
        return [str(exc)]
    try:
        rows = conn.execute(f"PRAGMA {pragma}({limit})").fetchall()
    except sqlite3.Error as exc:  # a bad header: "file is not a database"
        return [str(exc)]
    finally:
        conn.close()
    # a row may hold several lines, under a "*** in database main ***" heading
    lines = [ln for r in rows for ln in str(r[0]).splitlines() if ln.strip() and not ln.startswith("***")]
    return [] if lines == ["ok"] else lines[:limit]
