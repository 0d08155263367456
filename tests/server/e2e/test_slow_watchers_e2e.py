"""A watch whose client stops reading is ended once its undelivered events pass a bound,
instead of being buffered without end in a real ``kubesched serve``; a client that keeps
reading sees every event.

kube-apiserver's cacher does the same (``storage/cacher/cache_watcher.go``: a watcher whose
buffer stays full is terminated, "Forcing ... watcher close due to unresponsiveness", and its
client watches again or re-lists). The bound here is in bytes of undelivered event text:
``WATCH_BUFFER_BYTES`` (32 MiB) per watch (``kubesched/server/store/watch.py``). A watch that
would start with more than that behind it gets the watch cache's answer for a start outside
its window: one ``ERROR`` event holding 410 ``Expired``.

The numbers: each update below rewrites a ConfigMap whose ``data`` holds 900,000 bytes, so
its MODIFIED event holds the object before and after, ~1.8 MB; 60 updates are ~108 MB, more
than three times the bound, so a stalled watch must be ended before the last of them.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from typing import Any

import pytest
from serve_harness import API_ONLY, Server

pytestmark = pytest.mark.slow

NS = "/api/v1/namespaces/default"
UPDATES = 60
VALUE = 900_000


def stalled_watch(server: Server, path: str) -> socket.socket:
    """A watch request whose client never reads: a small receive buffer, nothing read."""
    host, port = server.url.split("//")[1].rsplit(":", 1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    return sock


def read_to_end(sock: socket.socket, timeout: float = 60) -> tuple[bytes, bool]:
    """Everything the server sent, and whether it ended the connection (a stream the server
    keeps open makes the read time out: False)."""
    sock.settimeout(timeout)
    chunks: list[bytes] = []
    try:
        while True:
            chunk = sock.recv(1 << 20)
            if not chunk:
                return b"".join(chunks), True
            chunks.append(chunk)
            if b"\r\n0\r\n\r\n" in chunks[-1][-16:]:
                return b"".join(chunks), True  # a clean end of the chunked stream
    except ConnectionResetError:
        return b"".join(chunks), True
    except TimeoutError:
        return b"".join(chunks), False
    finally:
        sock.close()


def modified_events(raw: bytes) -> int:
    return raw.count(b'"type":"MODIFIED"')


def reader(server: Server, path: str, want: int) -> tuple[threading.Thread, list[int]]:
    """A client that keeps reading: the resourceVersions of its MODIFIED events."""
    seen: list[int] = []

    def run() -> None:
        for ev in server.stream(path, timeout=120):
            if ev["type"] == "MODIFIED":
                seen.append(int(ev["object"]["metadata"]["resourceVersion"]))
                if len(seen) == want:
                    return

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, seen


@pytest.fixture
def busy(spawn: Callable[..., Server]) -> Server:
    server: Server = spawn("--no-ui", *API_ONLY)
    code, _ = server.request("POST", f"{NS}/configmaps", {"metadata": {"name": "big"}, "data": {"v": "x" * VALUE}})
    assert code == 201
    return server


def update(server: Server, i: int) -> int:
    code, obj = server.request("PUT", f"{NS}/configmaps/big",
                               {"metadata": {"name": "big"}, "data": {"v": str(i % 10) * VALUE}})
    assert code == 200, obj
    return int(obj["metadata"]["resourceVersion"])


def test_stalled_watches_are_ended_and_readers_see_every_event(busy: Server) -> None:
    rv = busy.request("GET", f"{NS}/configmaps/big")[1]["metadata"]["resourceVersion"]
    path = f"{NS}/configmaps?watch=true&resourceVersion={rv}"
    stalled = [stalled_watch(busy, path) for _ in range(3)]
    thread, seen = reader(busy, path, UPDATES)
    written = [update(busy, i) for i in range(UPDATES)]
    thread.join(120)
    assert seen == written  # every event, once, in order, to the client that reads
    for sock in stalled:
        raw, ended = read_to_end(sock)
        assert ended, "the server kept a stalled watch open"
        assert modified_events(raw) < UPDATES
    # the server still serves watches and writes
    thread, seen = reader(busy, f"{NS}/configmaps?watch=true&resourceVersion={written[-1]}", 1)
    last = update(busy, UPDATES)
    thread.join(60)
    assert seen == [last]


def test_a_watch_starting_more_than_the_bound_behind_gets_410(busy: Server) -> None:
    start = busy.request("GET", f"{NS}/configmaps/big")[1]["metadata"]["resourceVersion"]
    for i in range(UPDATES):
        update(busy, i)
    events: list[dict[str, Any]] = list(busy.stream(f"{NS}/configmaps?watch=true&resourceVersion={start}",
                                                    timeout=60))
    assert [e["type"] for e in events] == ["ERROR"]
    status = events[0]["object"]
    assert (status["code"], status["reason"]) == (410, "Expired"), status
    assert json.dumps(status).count("too old resource version") == 1
