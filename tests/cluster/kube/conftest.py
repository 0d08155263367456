"""Fixtures of the client-side tests: an in-process API server and a client for it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import time

import pytest

# kube_helpers re-exports serve_harness's eventually
E2E = str(Path(__file__).resolve().parents[2] / "server" / "e2e")
if E2E not in sys.path:
    sys.path.insert(0, E2E)

from kube_helpers import start_server  # noqa: E402

from kubesched.server.apiserver.server import ApiServer  # noqa: E402
from kubesched.cluster.kube import KubeClient  # noqa: E402


@pytest.fixture
def apiserver(tmp_path: Path) -> Iterator[ApiServer]:
    server = start_server(tmp_path / "data")
    yield server
    server.stop()


@pytest.fixture
def client(apiserver: ApiServer) -> Iterator[KubeClient]:
    c = KubeClient.connect(str(apiserver.kubeconfig), qps=0)
    yield c
    c.close()



@pytest.fixture
def connect() -> Iterator[Callable[..., KubeClient]]:
    """``connect(kubeconfig, **kw)``: clients closed at teardown, before the servers the test
    started earlier stop (so no connection is left open on a stopped server)."""
    made: list[KubeClient] = []

    def make(kubeconfig: str = "", **kw: Any) -> KubeClient:
        c = KubeClient.connect(kubeconfig, **kw)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()
    if made:
        time.sleep(0.1)  # let the servers see the connections close before they stop
