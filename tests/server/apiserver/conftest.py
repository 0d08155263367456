"""The bootstrapped registry over a real SQLite store that most registry tests start from,
on a clock the test moves by hand (``clock.t = ...``; files needing no clock define their
own ``reg``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.store import Store
from kubesched.testing.clock import ManualClock


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def reg(tmp_path: Path, clock: ManualClock) -> Iterator[Registry]:
    store = Store(tmp_path / "db")
    r = Registry(store, clock=clock)
    r.bootstrap()
    yield r
    store.close()
