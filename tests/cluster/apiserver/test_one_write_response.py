"""A response's head goes out with its body (kubesched/cluster/apiserver/httpproto.py), the
bytes and their order unchanged: fixed-length responses in one write, streamed (chunked)
ones, ``HEAD`` answers and writes before the response as uvicorn writes them, and a held
head is never lost when the connection closes. Unit checks on the transport shim, then a
real server in this process over raw sockets (pipelined requests, HEAD, a watch)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.cluster.apiserver.httpproto import _OneWriteResponse
from kubesched.cluster.apiserver.server import ApiServer, ServeOptions


class FakeTransport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else None


class FakeCycle:
    """The state of uvicorn's RequestResponseCycle the shim reads."""

    def __init__(self, method: str = "GET") -> None:
        self.scope = {"method": method}
        self.response_started = False
        self.response_complete = False
        self.chunked_encoding: bool | None = None
        self.expected_content_length = 0


def start(cycle: FakeCycle, length: int | None) -> None:
    cycle.response_started = True
    cycle.chunked_encoding = length is None
    cycle.expected_content_length = length or 0


def test_fixed_length_head_goes_with_the_body() -> None:
    t, c = FakeTransport(), FakeCycle()
    w = _OneWriteResponse(t, c)  # type: ignore[arg-type]
    start(c, 4)
    w.write(b"HEAD\r\n\r\n")
    assert t.writes == []
    w.write(b"body")
    assert t.writes == [b"HEAD\r\n\r\nbody"]
    w.write(b"more")  # later writes pass through
    assert t.writes == [b"HEAD\r\n\r\nbody", b"more"]
    assert w.get_extra_info("peername") == ("127.0.0.1", 1) and not w.is_closing()


@pytest.mark.parametrize("method,length", [("GET", None), ("HEAD", 4), ("GET", 0)], ids=["chunked", "head", "empty"])
def test_streamed_head_and_empty_responses_pass_through(method: str, length: int | None) -> None:
    t, c = FakeTransport(), FakeCycle(method)
    w = _OneWriteResponse(t, c)  # type: ignore[arg-type]
    w.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # before the response: as written
    start(c, length)
    w.write(b"head")
    assert t.writes == [b"HTTP/1.1 100 Continue\r\n\r\n", b"head"]


def test_close_sends_a_held_head() -> None:
    t, c = FakeTransport(), FakeCycle()
    w = _OneWriteResponse(t, c)  # type: ignore[arg-type]
    start(c, 10)
    w.write(b"head")
    w.close()
    assert t.writes == [b"head"] and t.closed


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ApiServer]:
    s = ApiServer(ServeOptions(data_dir=tmp_path / "data", port=0))
    s.start_in_thread()
    yield s
    s.stop()


def _connect(server: ApiServer) -> socket.socket:
    host, port = server.url.split("//", 1)[1].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=30)
    return sock


def _read_all(sock: socket.socket, responses: int) -> list[tuple[bytes, bytes]]:
    """``responses`` whole Content-Length responses, however segmented."""
    data, out = b"", []
    while len(out) < responses:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            assert chunk, f"closed early: {data!r}"
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        while len(rest) < length:
            chunk = sock.recv(65536)
            assert chunk, "closed before the whole body"
            rest += chunk
        out.append((head, rest[:length]))
        data = rest[length:]
    assert data == b""
    return out


def test_pipelined_writes_and_reads_answer_whole_and_in_order(server: ApiServer) -> None:
    pod = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                      "spec": {"containers": [{"name": "c", "image": "i"}]}}).encode()
    reqs = (b"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(len(pod)).encode() + b"\r\n\r\n" + pod
            + b"GET /api/v1/namespaces/default/pods/p HTTP/1.1\r\nHost: x\r\n\r\n"
            + b"GET /api/v1/namespaces/default/pods/absent HTTP/1.1\r\nHost: x\r\n\r\n")
    with _connect(server) as sock:
        sock.sendall(reqs)
        (h1, b1), (h2, b2), (h3, b3) = _read_all(sock, 3)
    assert h1.startswith(b"HTTP/1.1 201 ") and json.loads(b1)["metadata"]["name"] == "p"
    assert h2.startswith(b"HTTP/1.1 200 ") and json.loads(b2)["metadata"]["name"] == "p"
    assert h3.startswith(b"HTTP/1.1 404 ") and json.loads(b3)["reason"] == "NotFound"


def test_head_request_gets_its_head_and_a_watch_streams(server: ApiServer) -> None:
    with _connect(server) as sock:
        sock.sendall(b"HEAD /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n\r\n")
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            assert chunk
            data += chunk
        assert data.startswith(b"HTTP/1.1 200 ") and data.endswith(b"\r\n\r\n")
    with _connect(server) as sock:  # a chunked stream: its head comes before any event
        sock.sendall(b"GET /api/v1/namespaces?watch=1&resourceVersion=0 HTTP/1.1\r\nHost: x\r\n\r\n")
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            assert chunk
            data += chunk
        assert data.startswith(b"HTTP/1.1 200 ") and b"transfer-encoding: chunked" in data.lower()
