"""Half-sent requests cannot starve a real ``kubesched serve`` of file descriptors: with a
limit of 1,024 open files and 1,100 connections that each send part of a request head and
then trickle, real clients are still answered, serve's own scheduler still binds pods, and
the log stays small.

What upstream does: kube-apiserver's Go server closes a connection whose request head has
not arrived within ``ReadHeaderTimeout`` (32 s), and Go raises its soft file limit to the
hard one at start. serve does both, keeps its connections below the file limit with room for
its own files (``http/connlimit.py``: 1,024 - max(384, 1,024 / 3) - 64 = 576 here), makes room
at that bound by closing the connection idle longest (no request in progress), and
rate-limits repeated log lines (``cli/lograte.py``: 5 of a kind per 10 s).
"""

from __future__ import annotations

import resource
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_harness import Server, eventually, pod_manifest

pytestmark = pytest.mark.slow

ATTACKERS = 1100
FILES = 1024


@pytest.fixture
def own_files() -> Iterator[None]:
    """This test process holds the attackers' sockets: it needs more than 1,100 files."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < ATTACKERS + 400:
        pytest.skip(f"the hard limit on open files ({hard}) is too low to hold {ATTACKERS} sockets")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def half_sent(server: Server, n: int) -> list[socket.socket]:
    host, port = server.url.split("//")[1].rsplit(":", 1)
    out = []
    for _ in range(n):
        sock = socket.create_connection((host, int(port)), timeout=10)
        sock.sendall(b"GET /api/v1/pods HTTP/1.1\r\nHost: x\r\n")  # no blank line: the head never ends
        out.append(sock)
    return out


def trickle(socks: list[socket.socket]) -> None:
    for sock in socks:
        try:
            sock.sendall(b"X-Slow: 1\r\n")
        except OSError:
            pass  # closed by the server to make room


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[Server]:
    """serve (API server, controllers, simulated nodes, scheduler) under a 1,024 file limit."""
    server = Server(tmp_path / "data", "--nodes", "2", "--no-ui", open_files=FILES).start()
    try:
        yield server
    finally:
        server.stop_if_running()


def test_half_sent_requests_do_not_starve_clients_or_the_scheduler(limited: Server, own_files: None) -> None:
    attackers = half_sent(limited, ATTACKERS)
    try:
        for i in range(5):
            trickle(attackers)
            code, body = limited.request("GET", "/api/v1/namespaces/default/pods", timeout=10)
            assert code == 200 and body["kind"] == "PodList", (code, body)
        # serve's own scheduler reaches the API server through HTTP too
        assert limited.request("POST", "/api/v1/namespaces/default/pods", pod_manifest("during"), timeout=10)[0] == 201

        def bound() -> str | None:
            trickle(attackers)
            node: str | None = limited.request("GET", "/api/v1/namespaces/default/pods/during",
                                               timeout=10)[1]["spec"].get("nodeName")
            return node

        assert eventually(bound, timeout=60, interval=0.5)
    finally:
        for sock in attackers:
            sock.close()
    log = limited.data_dir.parent / f"{limited.data_dir.name}-stderr.log"
    text = log.read_text(errors="replace")
    assert "out of system resource" not in text and "Too many open files" not in text, text[-2000:]
    assert len(text) < 16 * 1024, text[-2000:]
