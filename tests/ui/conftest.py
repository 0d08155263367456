"""Fixtures of the web UI's tests: real ``kubesched serve`` processes (through
tests/server/e2e/serve_harness.py) with the UI at ``/``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server" / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from serve_harness import Server, started  # noqa: E402
from ui_harness import TINY, scheduling  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A serve process shared by a module's tests: two 4-cpu, 8Gi nodes and the scheduler."""
    for server in started(tmp_path_factory.mktemp("ui"), *TINY):
        yield scheduling(server)
