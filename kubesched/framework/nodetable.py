"""``NodeTable``: the snapshot's nodes as NumPy columns, for the batch plugin form.

Row ``i`` is ``snapshot.node_infos[i]`` (the zone-interleaved order). Resource columns are
int64 with upstream's integer semantics. Label and taint columns are dictionary-encoded
and built lazily the first time a plugin asks for them, then kept up to date row by row:
when one node changes only its row is rewritten, never the whole table.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from kubesched.api.objects import Taint
from kubesched.framework.podindex import PodLabelIndex
from kubesched.framework.types import NodeInfo

I64 = np.int64


class NodeTable:
    def __init__(self, infos: Sequence[NodeInfo]) -> None:
        self.infos: list[NodeInfo] = list(infos)
        self.names: list[str] = [ni.name for ni in self.infos]
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        n = len(self.infos)
        self.size = n
        self.alloc: dict[str, np.ndarray] = {}
        self.req: dict[str, np.ndarray] = {}
        self.non0_cpu = np.zeros(n, I64)
        self.non0_mem = np.zeros(n, I64)
        self.pod_count = np.zeros(n, I64)
        self.unschedulable = np.zeros(n, bool)
        self._labels: dict[str, tuple[np.ndarray, dict[str, int], list[str]]] = {}
        self._taint_ids: np.ndarray | None = None
        self._taint_sets: list[tuple[Taint, ...]] = []
        self._taint_index: dict[tuple[Taint, ...], int] = {}
        self._images: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._pod_index: PodLabelIndex | None = None
        self.all = np.arange(n, dtype=np.intp)
        # Rows rewritten since the table was built, in order: lets caches of per-node
        # results recompute only what changed (see ``changed_since``).
        self._log: list[int] = []
        self._log_base = 0
        self._last_asked = (-1, -1)  # (version, version then) of the last changed_since
        self._last_answer = np.zeros(0, np.intp)
        for i, ni in enumerate(self.infos):
            self._write_row(i, ni)

    # -- resources --------------------------------------------------------------------
    def _column(self, store: dict[str, np.ndarray], name: str) -> np.ndarray:
        col = store.get(name)
        if col is None:
            col = store[name] = np.zeros(self.size, I64)
        return col

    def allocatable(self, name: str) -> np.ndarray:
        """Allocatable of resource ``name`` per node (0 where the node lacks it)."""
        return self._column(self.alloc, name)

    def requested(self, name: str) -> np.ndarray:
        return self._column(self.req, name)

    def _write_row(self, i: int, ni: NodeInfo) -> None:
        for name, v in ni.allocatable.items():
            self._column(self.alloc, name)[i] = v
        for name, col in self.alloc.items():
            if name not in ni.allocatable:
                col[i] = 0
        for name, v in ni.requested.items():
            self._column(self.req, name)[i] = v
        for name, col in self.req.items():
            if name not in ni.requested:
                col[i] = 0
        self.non0_cpu[i] = ni.non0_cpu
        self.non0_mem[i] = ni.non0_mem
        self.pod_count[i] = len(ni.pods)
        node = ni.node
        self.unschedulable[i] = bool(node is not None and node.unschedulable)
        for key, (codes, ids, values) in self._labels.items():
            codes[i] = self._code(key, ids, values, ni)
        if self._taint_ids is not None:
            self._taint_ids[i] = self._taint_id(ni)
        for name, (sizes, counts) in self._images.items():
            st = ni.image_states.get(name)
            sizes[i], counts[i] = (st.size, st.num_nodes) if st is not None else (0, 0)
        if self._pod_index is not None:
            self._pod_index.write_row(i, ni)

    def update_row(self, i: int, ni: NodeInfo) -> None:
        """Rewrite row ``i`` after its NodeInfo changed (same node name)."""
        self.infos[i] = ni
        self._write_row(i, ni)
        if len(self._log) >= 4 * self.size + 64:
            self._log_base += len(self._log)
            self._log.clear()
        self._log.append(i)

    @property
    def version(self) -> int:
        """A position in the change log; pass it to :meth:`changed_since` later."""
        return self._log_base + len(self._log)

    def changed_since(self, version: int) -> np.ndarray | None:
        """Rows rewritten since ``version`` (unique, ascending, read-only), or None when that
        is too long ago. The last answer is kept: a cycle's caches mostly ask the same."""
        now = self._log_base + len(self._log)
        if self._last_asked[0] == version and self._last_asked[1] == now:
            return self._last_answer
        start = version - self._log_base
        if start < 0:
            return None
        seg = self._log[start:]
        out = np.array(seg if len(seg) <= 1 else sorted(set(seg)), dtype=np.intp)
        out.flags.writeable = False
        self._last_asked, self._last_answer = (version, now), out
        return out

    # -- labels -------------------------------------------------------------------------
    @staticmethod
    def _code(key: str, ids: dict[str, int], values: list[str], ni: NodeInfo) -> int:
        node = ni.node
        v = None if node is None else node.labels.get(key)
        if v is None:
            return -1
        c = ids.get(v)
        if c is None:
            c = ids[v] = len(values)
            values.append(v)
        return c

    def label(self, key: str) -> tuple[np.ndarray, dict[str, int], list[str]]:
        """Dictionary-encoded column of label ``key``: (codes, value->code, values); -1 = absent."""
        entry = self._labels.get(key)
        if entry is None:
            ids: dict[str, int] = {}
            values: list[str] = []
            codes = np.fromiter((self._code(key, ids, values, ni) for ni in self.infos),
                                dtype=np.int32, count=self.size)
            entry = self._labels[key] = (codes, ids, values)
        return entry

    # -- pods by label -----------------------------------------------------------------
    def pod_index(self) -> PodLabelIndex:
        """The rows' pods by (namespace, label key, value), built on first use and kept current."""
        if self._pod_index is None:
            self._pod_index = PodLabelIndex(self.infos)
        return self._pod_index

    # -- images -------------------------------------------------------------------------
    def image(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Per node the size of image ``name`` and the node count its snapshot recorded
        (0, 0 where the node lacks the image)."""
        entry = self._images.get(name)
        if entry is None:
            sizes = np.zeros(self.size, I64)
            counts = np.zeros(self.size, I64)
            for i, ni in enumerate(self.infos):
                st = ni.image_states.get(name)
                if st is not None:
                    sizes[i], counts[i] = st.size, st.num_nodes
            entry = self._images[name] = (sizes, counts)
        return entry

    # -- taints -------------------------------------------------------------------------
    def _taint_id(self, ni: NodeInfo) -> int:
        taints = ni.node.taints if ni.node is not None else ()
        t = self._taint_index.get(taints)
        if t is None:
            t = self._taint_index[taints] = len(self._taint_sets)
            self._taint_sets.append(taints)
        return t

    def taints(self) -> tuple[np.ndarray, list[tuple[Taint, ...]]]:
        """Per node the id of its taint list, and the distinct taint lists."""
        if self._taint_ids is None:
            self._taint_ids = np.fromiter((self._taint_id(ni) for ni in self.infos),
                                          dtype=np.int32, count=self.size)
        return self._taint_ids, self._taint_sets



class RowInfos(Sequence[NodeInfo]):
    """The NodeInfos of the ``table``'s rows ``rows``, in that order, listed only when read:
    a plugin handed the feasible nodes (PreScore) can use the rows instead, without a
    per-node lookup (most built-in PreScores only need the rows and the count)."""

    __slots__ = ("table", "rows", "_list")

    def __init__(self, table: NodeTable, rows: np.ndarray) -> None:
        self.table = table
        self.rows = rows
        self._list: list[NodeInfo] | None = None

    def _materialize(self) -> list[NodeInfo]:
        if self._list is None:
            self._list = list(map(self.table.infos.__getitem__, self.rows.tolist()))
        return self._list

    def __getitem__(self, i: Any) -> Any:
        return self._materialize()[i]

    def __len__(self) -> int:
        return int(self.rows.size)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self._materialize())
