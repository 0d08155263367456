"""Fixtures of the end-to-end tests of ``kubesched serve``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from serve_harness import Server, started


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server shared by a module's tests: 3 nodes, bookmarks every 0.5 s."""
    yield from started(tmp_path_factory.mktemp("serve"), "--nodes", "3", "--bookmark-interval", "0.5",
                       "--no-node-agent", "--no-node-lifecycle", "--no-scheduler")


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Start servers for one test (``spawn("--nodes", "3")``); all stopped at teardown."""
    servers: list[Server] = []

    def make(*args: str) -> Server:
        server = Server(tmp_path / f"data{len(servers)}", *args)
        servers.append(server)
        return server.start()

    yield make
    for server in servers:
        if server.proc is not None and server.proc.poll() is None:
            server.stop()
