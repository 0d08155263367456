"""Result tables: CSV cells as pandas writes them (floats as Python prints them, empty for
a missing value), and ``to_pandas`` needing pandas only when called."""

import sys

import pytest

from kubesched.experiment.tables import Table


def test_csv_cells() -> None:
    t = Table(["a", "b", "c"], [{"a": "x", "b": 91.53, "c": None}, {"a": "y", "b": 6.0, "c": 1}])
    assert t.to_csv() == "a,b,c\nx,91.53,\ny,6.0,1\n"
    assert t.column("b") == [91.53, 6.0] and len(t) == 2


def test_to_pandas_without_pandas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas -> ImportError
    with pytest.raises(ImportError, match="pip install pandas"):
        Table(["a"], [{"a": 1}]).to_pandas()
