"""A small column table for results: CSV out, ``to_pandas()`` when pandas is installed.

kubesched does not depend on pandas; a notebook that has it gets a DataFrame with one call.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any


class Table:
    """Rows of equal columns. ``None`` is a missing value (an empty CSV cell, NaN in pandas)."""

    def __init__(self, columns: Sequence[str], rows: Sequence[Mapping[str, Any]] = ()) -> None:
        self.columns = list(columns)
        self.rows: list[dict[str, Any]] = [{c: r.get(c) for c in self.columns} for r in rows]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    def __repr__(self) -> str:
        return f"<Table {len(self.rows)} rows x {len(self.columns)} columns: {', '.join(self.columns[:6])}...>"

    def column(self, name: str) -> list[Any]:
        return [r[name] for r in self.rows]

    def to_csv(self, path: str | Path | None = None) -> str:
        """The CSV text (floats as Python prints them, as pandas writes them); also written to ``path``."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.columns)
        for r in self.rows:
            w.writerow(["" if r[c] is None else r[c] for c in self.columns])
        text = buf.getvalue()
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    def to_pandas(self) -> Any:
        """A pandas DataFrame of the table (ImportError if pandas is not installed)."""
        try:
            import pandas as pd  # type: ignore[import-untyped,unused-ignore]
        except ImportError as exc:
            raise ImportError("Table.to_pandas() needs pandas: pip install pandas") from exc
        return pd.DataFrame(self.rows, columns=self.columns)
