"""The plain-HTTP keep-alive pool of KubeClient: connections reused, one the server
closed while idle never used again, failures as TransportError."""

from __future__ import annotations

import http.server
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from kubesched.cluster.kube.errors import TransportError
from kubesched.cluster.kube.httppool import HttpPool


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive unless the server decides otherwise
    close_after = False
    peers: list[int] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        close = Handler.close_after  # read before answering: the test changes it once answered
        Handler.peers.append(self.client_address[1])
        out = b'{"echo":' + body + b'}'
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
        self.close_connection = close  # closed without "Connection: close"

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[http.server.ThreadingHTTPServer]:
    Handler.peers, Handler.close_after = [], False
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_connections_are_kept_alive_and_reused(server: http.server.ThreadingHTTPServer) -> None:
    pool = HttpPool("127.0.0.1", server.server_address[1])
    try:
        for i in range(3):
            assert pool.request("POST", "/x", str(i).encode(), {"Content-Type": "application/json"}, 5.0) == \
                (201, b'{"echo":' + str(i).encode() + b'}')
        assert len(set(Handler.peers)) == 1  # one client port: one connection for the three
    finally:
        pool.close()


def test_a_connection_the_server_closed_while_idle_is_not_used(server: http.server.ThreadingHTTPServer) -> None:
    pool = HttpPool("127.0.0.1", server.server_address[1])
    try:
        _server_closes_idle(pool)
    finally:
        pool.close()


def _server_closes_idle(pool: HttpPool) -> None:
    Handler.close_after = True
    assert pool.request("POST", "/x", b"1", {}, 5.0)[0] == 201
    Handler.close_after = False
    idle = pool._idle[0]
    assert idle.sock is not None
    for _ in range(200):  # until the server's close has reached the idle connection
        try:
            if idle.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"":
                break
        except BlockingIOError:
            time.sleep(0.05)
    assert pool.request("POST", "/x", b"2", {}, 5.0) == (201, b'{"echo":2}')
    assert len(set(Handler.peers)) == 2  # a new connection, not a failed request


def test_no_server_is_a_transport_error_naming_the_request() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: refused
    with pytest.raises(TransportError) as info:
        HttpPool("127.0.0.1", port).request("POST", "/api/v1/namespaces/default/pods/p/binding", b"{}", {}, 2.0)
    assert info.value.args[0].startswith("POST /api/v1/namespaces/default/pods/p/binding: ")
