"""Running Filter and Score in their batch form, through the caches of node-local plugins.

A node-local plugin (one with ``signature``) gives the same result on a node to every pod
of the same signature, so its results for every NodeTable row are kept
(:class:`~kubesched.framework.runtime.outcome.SignatureCache`) and only the rows the table's change
log names are recomputed; binding a pod changes one row. A built-in plugin recomputes a few
rows with its per-node form, which costs less than NumPy calls over one row (the two forms
agree: ``tests/plugins/test_batch_agreement.py``). Scores of the built-in node-local
plugins that need no normalisation are summed per row and kept with their best rows
(:mod:`.scoresum`), so a cycle on identical pods makes no pass over every node.

Kept apart from :mod:`.runtime` so the runtime reads as upstream's framework.go does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Set
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.runtime.outcome import CacheEntry, SignatureCache, read_only
from kubesched.framework.runtime.results import as_rows, call as _call
from kubesched.framework.runtime.scoresum import ScoreSums
from kubesched.framework.status import Code, Status

log = logging.getLogger(__name__)

FEW_ROWS = 4  # changed rows a cached built-in plugin recomputes with its per-node form


def checked_rows(pl: Any, what: str, fn: Callable[..., Any], state: CycleState, pod: Pod, table: NodeTable,
                 rows: np.ndarray) -> np.ndarray | Status:
    """One batch call over ``rows``, its result checked (an array per row, or an Error)."""
    return as_rows(_call(pl, what, fn, state, pod, table, rows), fn.__name__, pl.name, int(rows.size),
                   "b" if what == "Filter" else "i")


def built_in(pl: Any) -> bool:
    """An in-tree plugin: its batch results need no checking (tests hold them to their
    per-node forms), which keeps the checks off the built-in scheduling path."""
    return type(pl).__module__.startswith("kubesched.plugins.")


def per_node(pl: Any, what: str, state: CycleState, pod: Pod, table: NodeTable,
             rows: np.ndarray) -> np.ndarray | None:
    """A built-in plugin's results on a few rows from its per-node form; None when a row
    gives anything but a verdict or a score (the batch form then runs and reports it)."""
    infos = table.infos
    out: list[Any] = []
    try:
        if what == "Filter":
            for i in rows.tolist():
                st = pl.filter(state, pod, infos[i])
                if st is None or st.code == Code.Success:
                    out.append(True)
                elif st.rejected:
                    out.append(False)
                else:
                    return None
            return np.array(out, dtype=bool)
        for i in rows.tolist():
            v = pl.score(state, pod, infos[i])
            if type(v) is not int:
                return None
            out.append(v)
    except Exception:  # noqa: BLE001 - the batch form runs and reports it as the plugin's error
        return None
    return np.array(out, dtype=np.int64)


class BatchRunner:
    """One profile's caches of batch results (``node_local``, ``in_tree``: plugin names)."""

    def __init__(self, node_local: Set[str], in_tree: Set[str]) -> None:
        self.node_local = node_local
        self.in_tree = in_tree
        self.results = SignatureCache()
        self.sums = ScoreSums()
        # the last totals() from the sums: (totals, the rows of their maximum, rows scored)
        self._best: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def _call_rows(self, pl: Any) -> Callable[..., Any]:
        return _call if pl.name in self.in_tree else checked_rows

    def cached(self, pl: Any, what: str, fn: Callable[..., Any], state: CycleState, pod: Pod,
               table: NodeTable) -> CacheEntry | Status | None:
        """A node-local plugin's results for every row, brought up to date through the
        signature cache (only the rows the table's change log names are recomputed); None
        when not cached: not node-local, no signature, or the first pod of its kind."""
        if pl.name not in self.node_local:
            return None
        try:
            sig = pl.signature(pod)
        except Exception as exc:  # noqa: BLE001 - a plugin bug: run the plugin without the cache
            log.error("plugin %s failed in signature: %s: %s", pl.name, type(exc).__name__, exc)
            return None
        if sig is None:
            return None
        rows = self._call_rows(pl)
        key = (pl.name, what, sig)
        entry = self.results.lookup(key, table)
        if entry is None:
            if not self.results.seen(key):
                return None
            res = rows(pl, what, fn, state, pod, table, table.all)
            return res if isinstance(res, Status) else self.results.store(key, table, np.asarray(res))
        changed = table.changed_since(entry.version)
        if changed is None or changed.size:
            res = None
            if changed is not None and changed.size <= FEW_ROWS and rows is _call and not state.record_plugin_metrics:
                res = per_node(pl, what, state, pod, table, changed)
            if res is None:
                res = rows(pl, what, fn, state, pod, table, table.all if changed is None else changed)
            if isinstance(res, Status):
                return res
            entry.refresh(changed, res)
        else:
            entry.version = table.version
        return entry

    def rows_of(self, pl: Any, what: str, fn: Callable[..., Any], state: CycleState, pod: Pod,
                table: NodeTable, idx: np.ndarray, got: CacheEntry | Status | None) -> Any:
        """Rows ``idx`` of the cache's answer ``got``; without one, the plugin run on them."""
        if got is None:
            return self._call_rows(pl)(pl, what, fn, state, pod, table, idx)
        if isinstance(got, Status):
            return got
        return read_only(got.arr) if idx is table.all else got.arr[idx]  # every row: no gather, no copy

    def totals(self, table: NodeTable, idx: np.ndarray, summed: list[tuple[CacheEntry, int]],
               others: list[np.ndarray], const: int) -> np.ndarray:
        """``const`` + the maintained sum of ``summed`` + ``others``, over rows ``idx``."""
        self._best = None
        if not summed:
            totals = np.full(idx.size, const, np.int64)
        else:
            ssum = self.sums.get(table, summed, const)
            if idx is not table.all:
                totals = ssum.arr[idx]
                if not others and not idx.flags.writeable:  # a filter's kept passing rows
                    self._best = (totals, ssum.best_rows(idx), idx)
            elif others:
                totals = ssum.arr.copy()
            else:  # the sum is the totals: no pass over the column, and its best rows are known
                totals = read_only(ssum.arr)
                self._best = (totals, ssum.best_rows(), idx)
        for o in others:
            totals += o
        return totals

    def best_rows(self, rows: np.ndarray, totals: np.ndarray) -> np.ndarray:
        """``rows[totals == totals.max()]``; without a pass over the column when ``totals``
        came from the last :meth:`totals` over ``rows`` and the sums kept its best rows."""
        best = self._best
        if best is not None and best[0] is totals and rows is best[2]:
            return best[1]
        out: np.ndarray = rows[totals == totals.max()]
        return out
