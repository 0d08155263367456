"""The bootstrapped registry over a real SQLite store that most registry tests start from,
with a fixed clock (files needing another clock or none define their own ``reg``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.store import Store


@pytest.fixture
def reg(tmp_path: Path) -> Iterator[Registry]:
    store = Store(tmp_path / "db")
    r = Registry(store, clock=lambda: 1_800_000_000.0)
    r.bootstrap()
    yield r
    store.close()
