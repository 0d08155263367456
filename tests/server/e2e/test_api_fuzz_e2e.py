"""A bounded fuzz of a real ``kubesched serve`` (strategies in :mod:`apifuzz`): hostile
methods, paths, query options, content and patch types and bodies never get a 5xx, every
error is a Kubernetes ``Status`` with its code, the server stays up, and the store reopens
intact afterwards: a restart on the same data directory lists exactly the objects, at the
same resourceVersions, that were there before it.

A bigger run by hand: ``python tests/server/e2e/apifuzz.py --requests 6000``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from apifuzz import Req, problem, requests, seed, send, snapshot
from hypothesis import HealthCheck, given, settings
from serve_harness import API_ONLY, Server

pytestmark = pytest.mark.slow


@pytest.fixture
def target(tmp_path: Path) -> Iterator[Server]:
    server = Server(tmp_path / "data", *API_ONLY).start()
    try:
        seed(server)
        yield server
    finally:
        server.stop_if_running()


def test_hostile_requests_get_4xx_status_and_the_store_reopens(target: Server) -> None:
    answers: list[int] = []

    @settings(max_examples=300, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(requests())
    def fuzz(req: Req) -> None:
        status, body, content_type = send(target, req)
        answers.append(status)
        wrong = problem(req, status, body, content_type)
        assert wrong is None, f"{req.describe()}\n{wrong}"

    fuzz()
    assert len(answers) >= 300 and any(400 <= a < 500 for a in answers) and any(a < 300 for a in answers)
    assert target.request("GET", "/readyz") == (200, "ok")
    before = snapshot(target)
    assert before["/api/v1/namespaces"]
    target.restart()
    assert snapshot(target) == before
