"""Which NodeTable rows hold pods with a given label: an inverted index for cold selectors.

Counting the pods that match a selector on every node is a loop over all nodes and all
pods; per-selector caches make it cheap the second time, but a workload where every pod
brings its own selector (topology spread or affinity in small groups with their own
label) pays the whole loop once per selector. This index maps a label ``(key, value)``
to the rows holding pods that carry it (with those pods, of every namespace), so a
selector with an ``In`` requirement only looks at the pods that could match.

It is built the first time it is asked for and then kept current by the NodeTable row by
row (:meth:`PodLabelIndex.write_row` from ``NodeTable._write_row``), so it never lags the
table's change log.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.api.objects import Pod
from kubesched.api.selectors import LabelSelector
from kubesched.framework.types import NodeInfo

Key = tuple[str, str]  # label key, label value


class PodLabelIndex:
    def __init__(self, infos: Sequence[NodeInfo]) -> None:
        self._rows: dict[Key, dict[int, list[Pod]]] = {}
        self._keys: list[list[Key]] = [[] for _ in infos]  # per row, the keys it is filed under
        for i, ni in enumerate(infos):
            self.write_row(i, ni)

    def write_row(self, i: int, ni: NodeInfo) -> None:
        """Re-file row ``i`` after its pods changed."""
        rows = self._rows
        for k in self._keys[i]:
            by_row = rows.get(k)
            if by_row is not None:
                by_row.pop(i, None)
                if not by_row:
                    del rows[k]
        keys: list[Key] = []
        for p in ni.pods:
            for k in p.labels.items():
                by_row = rows.get(k)
                if by_row is None:
                    by_row = rows[k] = {}
                pods = by_row.get(i)
                if pods is None:
                    by_row[i] = [p]
                    keys.append(k)
                else:
                    pods.append(p)
        self._keys[i] = keys

    def candidates(self, selector: LabelSelector) -> dict[int, list[Pod]] | None:
        """Per row the pods (any namespace) that satisfy the selector's most selective
        ``In`` requirement (a superset of the matching pods), or None when the selector
        has no ``In`` requirement to look up. Rows absent hold no matching pod."""
        best: dict[int, list[Pod]] | None = None
        best_n = -1
        for r in selector.requirements:
            if r.operator != "In":
                continue
            merged: dict[int, list[Pod]] = {}
            for v in r.values:
                for row, pods in self._rows.get((r.key, v), {}).items():
                    merged.setdefault(row, []).extend(pods)
            n = sum(len(ps) for ps in merged.values())
            if best is None or n < best_n:
                best, best_n = merged, n
        return best
