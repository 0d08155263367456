"""The pool's HTTP/1.1 reading, against a server that answers with scripted bytes: bodies
by Content-Length, by chunks (with extensions and trailers), by the connection's end;
informational answers skipped; ``Connection: close`` and HTTP/1.0 honoured; what is not
HTTP (as httptools' llhttp parser judges it: a status line that is not HTTP, a Content-Length
that is not a number, a chunk size that is not hex, a chunk longer than its size), or ends
early, a TransportError naming the request. Expected bodies are the bytes
the script sends (RFC 9112's framing, worked by hand)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from kubesched.cluster.kube.errors import TransportError
from kubesched.cluster.kube.httppool import HttpPool


class Scripted:
    """Accepts connections; answers the n-th request (over all connections) with
    ``answers[n]``, then closes the connection when the answer's flag says so."""

    def __init__(self, answers: list[tuple[bytes, bool]]) -> None:
        self.answers = answers
        self.requests: list[bytes] = []
        self.connections = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c: socket.socket) -> None:
        f = c.makefile("rb")
        with c:
            while True:
                head = b""
                while not head.endswith(b"\r\n\r\n"):
                    line = f.readline()
                    if not line:
                        return
                    head += line
                n = next((int(h.split(b":")[1]) for h in head.split(b"\r\n")
                          if h.lower().startswith(b"content-length:")), 0)
                self.requests.append(head + f.read(n))
                answer, close = self.answers[len(self.requests) - 1]
                c.sendall(answer)
                if close:
                    c.shutdown(socket.SHUT_WR)
                    return


@pytest.fixture
def script() -> Iterator[list[Scripted]]:
    made: list[Scripted] = []
    yield made
    for s in made:
        s.sock.close()


def run(script: list[Scripted], answers: list[tuple[bytes, bool]]) -> tuple[Scripted, HttpPool]:
    s = Scripted(answers)
    script.append(s)
    return s, HttpPool("127.0.0.1", s.port, "/base")


def test_the_request_on_the_wire(script: list[Scripted]) -> None:
    s, pool = run(script, [(b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}", False)])
    assert pool.request("POST", "/api/v1/x?a=b", b'{"k":1}', {"Content-Type": "application/json"}, 5.0) == (201, b"{}")
    assert s.requests[0] == (f"POST /base/api/v1/x?a=b HTTP/1.1\r\nHost: 127.0.0.1:{s.port}\r\n"
                             "Accept-Encoding: identity\r\nContent-Type: application/json\r\n"
                             "Content-Length: 7\r\n\r\n{\"k\":1}").encode()


def test_bodies_by_length_chunks_and_informational_answers(script: list[Scripted]) -> None:
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"4;ext=1\r\nWiki\r\n6\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\nX-Trailer: 1\r\n\r\n")
    s, pool = run(script, [
        (b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\nX-A: b\r\n\r\nhello", False),
        (chunked, False),
        (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", False),
        (b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", False),
    ])
    assert pool.request("GET", "/a", None, {}, 5.0) == (200, b"hello")
    assert pool.request("GET", "/b", None, {}, 5.0) == (200, b"Wikipedia in \r\n\r\nchunks.")
    assert pool.request("DELETE", "/c", None, {}, 5.0) == (204, b"")
    assert pool.request("GET", "/d", None, {}, 5.0) == (404, b"")
    assert s.connections == 1  # all four on one kept-alive connection


def test_connection_close_http10_and_a_body_to_the_end(script: list[Scripted]) -> None:
    s, pool = run(script, [
        (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\na", True),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nb", True),
        (b"HTTP/1.1 200 OK\r\n\r\nuntil the end", True),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nd", False),
    ])
    assert [pool.request("GET", f"/{i}", None, {}, 5.0) for i in range(4)] == [
        (200, b"a"), (200, b"b"), (200, b"until the end"), (200, b"d")]
    assert s.connections == 4  # none of the first three could be reused


@pytest.mark.parametrize("answer, why", [
    (b"SSH-2.0-OpenSSH\r\n\r\n", "not a valid HTTP/1.x answer"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "closed the connection before its answer ended"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", "not a valid HTTP/1.x answer"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not a valid HTTP/1.x answer"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n", "not a valid HTTP/1.x answer"),
    (b"", "closed the connection before its answer ended"),
])
def test_broken_answers_are_transport_errors(script: list[Scripted], answer: bytes, why: str) -> None:
    _, pool = run(script, [(answer, True)])
    with pytest.raises(TransportError) as info:
        pool.request("POST", "/api/v1/namespaces/default/pods/p/binding", b"{}", {}, 5.0)
    msg = info.value.args[0]
    assert msg.startswith("POST /api/v1/namespaces/default/pods/p/binding: ") and why in msg
    assert not pool._idle  # the broken connection was not kept


def test_a_silent_server_times_out(script: list[Scripted]) -> None:
    s = Scripted([])
    script.append(s)
    s.answers = [(b"", False)]  # never answers, keeps the connection open
    pool = HttpPool("127.0.0.1", s.port)
    with pytest.raises(TransportError) as info:
        pool.request("GET", "/slow", None, {}, 0.3)
    assert info.value.args[0].startswith("GET /slow: ")


def test_a_head_answer_ends_at_its_headers(script: list[Scripted]) -> None:
    """RFC 9110 §9.3.2: a HEAD answer has no body even with a Content-Length; the pool
    returns at the headers and does not reuse the connection (it cannot tell the parser
    the body is absent)."""
    s, pool = run(script, [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n", False),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nz", False),
    ])
    assert pool.request("HEAD", "/h", None, {}, 5.0) == (200, b"")
    assert pool.request("GET", "/g", None, {}, 5.0) == (200, b"z")
    assert s.connections == 2


def test_bytes_after_the_answer_drop_the_connection(script: list[Scripted]) -> None:
    s, pool = run(script, [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 200 OK\r\n", False),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb", False),
    ])
    assert pool.request("GET", "/1", None, {}, 5.0) == (200, b"a")
    assert pool.request("GET", "/2", None, {}, 5.0) == (200, b"b")
    assert s.connections == 2
