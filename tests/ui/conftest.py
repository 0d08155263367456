"""Fixtures of the web UI's tests: real ``kubesched serve`` processes (through
tests/cluster/e2e/serve_harness.py) with the UI at ``/``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cluster" / "e2e"))

from serve_harness import Server, eventually, started  # noqa: E402

# two nodes of 4 cpu and 8Gi: small enough to compute every score by hand
TINY = ("--nodes", "2", "--node-cpu", "4", "--node-memory", "8Gi")


def scheduling(server: Server) -> Server:
    """``server`` once its scheduler has synced and runs."""
    eventually(lambda: any("scheduler running" in line for line in server.output), timeout=60)
    return server


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A serve process shared by a module's tests: two 4-cpu, 8Gi nodes and the scheduler."""
    for server in started(tmp_path_factory.mktemp("ui"), *TINY):
        yield scheduling(server)
