"""SparseColumn (kubesched/plugins/interpodaffinity/rowcache.py) patches its sorted arrays
with the rows changed since the last read instead of rebuilding them; after any sequence of
adds and reads the arrays must equal the non-zero entries of a plain dictionary of counts,
kept by this test, sorted by row (the expected values are the test's own recount)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.interpodaffinity.rowcache import SparseColumn

_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 40), st.integers(-3, 3).filter(bool)),
        st.tuples(st.just("read"), st.just(0), st.just(0)),
    ),
    max_size=120,
)


@settings(max_examples=200, deadline=None)
@given(_OPS)
def test_arrays_match_a_recount_after_random_changes(ops: list[tuple[str, int, int]]) -> None:
    col = SparseColumn()
    expect: dict[int, int] = {}
    held: list[tuple[np.ndarray, np.ndarray, list[int], list[int]]] = []
    for op, row, v in ops:
        if op == "add":
            col.add(row, v)
            expect[row] = expect.get(row, 0) + v
            if expect[row] == 0:
                del expect[row]
        else:
            rows, vals = col.arrays()
            assert not rows.flags.writeable and not vals.flags.writeable
            items = sorted(expect.items())
            assert rows.tolist() == [r for r, _ in items]
            assert vals.tolist() == [c for _, c in items]
            held.append((rows, vals, rows.tolist(), vals.tolist()))
    assert col.total == sum(expect.values())
    # arrays handed out earlier are never changed by later patches
    for rows, vals, rows_then, vals_then in held:
        assert rows.tolist() == rows_then and vals.tolist() == vals_then


def test_patch_by_hand() -> None:
    """Rows 5 (2 pods) and 9 (1 pod); then row 5 loses both, row 7 gains 3, row 9 gains 1:
    the patched arrays are rows [7, 9] with counts [3, 2]."""
    col = SparseColumn()
    col.add(5, 2)
    col.add(9, 1)
    assert col.arrays()[0].tolist() == [5, 9]
    col.add(5, -2)
    col.add(7, 3)
    col.add(9, 1)
    rows, vals = col.arrays()
    assert rows.tolist() == [7, 9] and vals.tolist() == [3, 2]
    assert col.total == 5
