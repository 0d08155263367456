"""Fixtures of the end-to-end tests of ``kubesched serve``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from serve_harness import Server, spawner, started


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server shared by a module's tests: 3 nodes, bookmarks every 0.5 s."""
    yield from started(tmp_path_factory.mktemp("serve"), "--nodes", "3", "--bookmark-interval", "0.5",
                       "--no-node-agent", "--no-node-lifecycle", "--no-scheduler")


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Start servers for one test (``spawn("--nodes", "3")``); all stopped at teardown."""
    yield from spawner(tmp_path)
