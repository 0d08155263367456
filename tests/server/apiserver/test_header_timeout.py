"""The API server's deadline and size bound on request heads (kubesched/server/apiserver/http/httpproto.py):
kube-apiserver's Go server has ``ReadHeaderTimeout`` (32 s); a client that opens a connection
(or keeps one alive after a response) and never finishes a request head is disconnected
after ``header_timeout``, while clients that send whole requests are served as before.
A head larger than 64 KiB is answered as Go's net/http answers one beyond MaxHeaderBytes
(``431 Request Header Fields Too Large``, connection closed). Real server on a free port, in
this process; raw sockets."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.server.apiserver.server import ApiServer, ServeOptions

TIMEOUT = 1.0


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ApiServer]:
    s = ApiServer(ServeOptions(data_dir=tmp_path / "data", port=0, header_timeout=TIMEOUT))
    s.start_in_thread()
    yield s
    s.stop()


def closed_within(sock: socket.socket, seconds: float) -> float | None:
    """Seconds until the server closes ``sock`` (reads until EOF), None if still open."""
    started = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def read_response(sock: socket.socket) -> bytes:
    """One whole HTTP/1.1 response (head and Content-Length body), however it is segmented."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed before a whole head: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "closed before the whole body"
        body += chunk
    assert len(body) == length, "more than one response"
    return head


def connect(server: ApiServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=5)


def test_a_head_that_never_ends_is_disconnected(server: ApiServer) -> None:
    with connect(server) as sock:
        sock.sendall(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n")  # no blank line: never ends
        took = closed_within(sock, 10 * TIMEOUT)
    assert took is not None, "the connection stayed open"


def test_a_connection_that_sends_nothing_is_disconnected(server: ApiServer) -> None:
    with connect(server) as sock:
        assert closed_within(sock, 10 * TIMEOUT) is not None


def test_after_a_response_the_next_head_has_the_same_deadline(server: ApiServer) -> None:
    """A kept-alive connection: the first request is answered; a second head trickles in one
    byte at a time (each byte would cancel uvicorn's own keep-alive timer) and never ends."""
    with connect(server) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(5)
        assert read_response(sock).startswith(b"HTTP/1.1 200")
        sock.sendall(b"G")
        deadline = time.monotonic() + 10 * TIMEOUT
        closed = False
        for ch in b"ET /healthz HTTP/1.1\r\nHost: x\r\n":
            time.sleep(TIMEOUT / 5)
            try:
                sock.sendall(bytes([ch]))
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            if time.monotonic() > deadline:
                break
        assert closed or closed_within(sock, 10 * TIMEOUT) is not None


def test_whole_requests_are_served_on_a_kept_alive_connection(server: ApiServer) -> None:
    """Within the deadline nothing changes: two requests on one connection, the second sent
    after a pause shorter than the deadline, both answered."""
    with connect(server) as sock:
        sock.settimeout(5)
        for _ in range(2):
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert read_response(sock).startswith(b"HTTP/1.1 200")
            time.sleep(TIMEOUT / 2)


def test_a_head_beyond_the_bound_is_431_and_closed(server: ApiServer) -> None:
    big = b"x" * (70 * 1024)
    with connect(server) as sock:
        sock.settimeout(5)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + big + b"\r\n\r\n")
        data = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
    assert data.startswith(b"HTTP/1.1 431 "), data[:80]
    assert b"connection: close" in data.lower()


def test_a_large_head_within_the_bound_is_served(server: ApiServer) -> None:
    """60 KiB of headers over several header lines, sent in small pieces: served."""
    headers = b"".join(b"X-H%d: %s\r\n" % (i, b"y" * 6000) for i in range(10))
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n"
    with connect(server) as sock:
        sock.settimeout(5)
        for i in range(0, len(request), 4096):
            sock.sendall(request[i:i + 4096])
        assert read_response(sock).startswith(b"HTTP/1.1 200")
