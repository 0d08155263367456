"""Keep-alive connections to a plain-HTTP API server, for :class:`~.client.KubeClient`'s
requests (not its watches).

Why this exists: a request through the ``kubernetes`` library's urllib3 ``PoolManager``
costs ~100-150 µs of CPU in Python besides the socket calls (the URL parsed again, a pool
key built, ``Timeout`` and response wrappers), and one through ``http.client`` still ~75 µs
(the answer's headers go through the ``email`` package's parser). ``kubesched serve
--scheduler-process`` binds every pod over loopback and writes an Event for each, so for an
``http://`` server without a proxy (``serve``'s own) requests go out on connections kept
here: one request written in one send, the answer read by httptools' llhttp parser (a body
by Content-Length, chunks or the connection's end; informational 1xx answers skipped): ~25 µs. TLS, client certificates and proxies stay with the library's
pool, which handles them.

A connection is reused last-in first-out and only while the server keeps it open: one
that became readable while idle (the server closed it, or sent something unasked) is
dropped before use, as urllib3 checks ``is_connection_dropped``, so a request is never
sent on a connection the server has already given up.
"""

from __future__ import annotations

import select
import socket
import threading
import weakref

import httptools

from kubesched.cluster.kube.errors import TransportError

MAX_IDLE = 32  # connections kept open between requests (binds run in parallel)


class ProtocolError(Exception):
    """The server's answer is not HTTP/1.x as this client reads it."""


class _Stop(Exception):
    """Raised from a parser callback to stop reading a HEAD answer at its headers."""


class _Answer:
    """httptools' callbacks for one exchange: the final answer's status, framing and body.
    Informational answers (1xx but 101) are read and forgotten, as http.client does."""

    __slots__ = ("parser", "status", "body", "framed", "complete", "extra", "head_only", "keep")

    def __init__(self, head_only: bool) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.status = 0
        self.body: list[bytes] = []
        self.framed = False  # a Content-Length or chunked answer (else: the body runs to EOF)
        self.complete = False
        self.extra = False  # bytes after the answer, which nobody asked for
        self.head_only = head_only
        self.keep = False  # llhttp's verdict, read while the final answer's headers end

    def on_message_begin(self) -> None:
        if self.complete:
            self.extra = True

    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() in (b"content-length", b"transfer-encoding"):
            self.framed = True

    def on_headers_complete(self) -> None:
        if self.complete:
            return
        self.status = self.parser.get_status_code()
        self.keep = self.parser.should_keep_alive()
        if self.head_only and not (100 <= self.status < 200):
            raise _Stop

    def on_body(self, body: bytes) -> None:
        if not self.complete:
            self.body.append(body)

    def on_message_complete(self) -> None:
        if self.complete:
            return
        if 100 <= self.status < 200 and self.status != 101:
            self.body.clear()  # informational: the real answer follows
            self.framed = False
            return
        self.complete = True


class Connection:
    """One keep-alive HTTP/1.1 connection (not thread-safe: the pool lends it to one caller).
    Answers are read by httptools' response parser (llhttp, the parser uvicorn serves with)."""

    __slots__ = ("sock",)

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.sock: socket.socket | None = socket.create_connection((host, port), timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def close(self) -> None:
        sock, self.sock = self.sock, None
        if sock is not None:
            sock.close()

    def exchange(self, request: bytes, head_only: bool, timeout: float) -> tuple[int, bytes, bool]:
        """Send ``request``; return (status, body, whether the connection may be reused)."""
        sock = self.sock
        if sock is None:
            raise ProtocolError("the connection is closed")
        sock.settimeout(timeout)
        sock.sendall(request)
        answer = _Answer(head_only)
        parser = answer.parser
        while not answer.complete:
            data = sock.recv(65536)
            if not data:
                if answer.status >= 200 and not answer.framed and not head_only:
                    return answer.status, b"".join(answer.body), False  # a body delimited by EOF
                raise ProtocolError("the server closed the connection before its answer ended")
            try:
                parser.feed_data(data)
            except httptools.HttpParserCallbackError as exc:
                if isinstance(exc.__context__, _Stop):  # a HEAD answer: its headers are all of it
                    return answer.status, b"", False
                raise ProtocolError(f"not a valid HTTP/1.x answer: {exc}") from exc
            except httptools.HttpParserError as exc:
                if answer.complete:  # garbage after a whole answer: drop the connection
                    answer.extra = True
                    break
                raise ProtocolError(f"not a valid HTTP/1.x answer: {exc}") from exc
        keep = answer.keep and not answer.extra
        return answer.status, b"".join(answer.body), keep


def _dropped(conn: Connection) -> bool:
    sock = conn.sock
    if sock is None:
        return True
    poller = select.poll()
    poller.register(sock, select.POLLIN | select.POLLERR | select.POLLHUP)
    try:
        return bool(poller.poll(0))
    except OSError:
        return True


class HttpPool:
    """Requests to one ``host:port`` over reused connections (thread-safe)."""

    def __init__(self, host: str, port: int, prefix: str = "") -> None:
        self.host, self.port, self.prefix = host, port, prefix
        self._host_header = host if port == 80 else f"{host}:{port}"
        if ":" in host and not host.startswith("["):  # an IPv6 literal
            self._host_header = f"[{host}]" if port == 80 else f"[{host}]:{port}"
        self._idle: list[Connection] = []
        self._lock = threading.Lock()
        # as urllib3's pools: a pool dropped without close() still closes its sockets
        weakref.finalize(self, _close_all, self._idle)

    def _encode(self, method: str, target: str, body: bytes | None, headers: dict[str, str]) -> bytes:
        lines = [f"{method} {self.prefix}{target} HTTP/1.1", f"Host: {self._host_header}"]
        lower = {k.lower() for k in headers}
        if "accept-encoding" not in lower:
            lines.append("Accept-Encoding: identity")  # as http.client: no compressed answers
        lines.extend(f"{k}: {v}" for k, v in headers.items())
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        elif method in ("POST", "PUT", "PATCH"):
            lines.append("Content-Length: 0")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        return head + body if body else head

    def request(self, method: str, target: str, body: bytes | None, headers: dict[str, str],
                timeout: float) -> tuple[int, bytes]:
        """Send one request and read the whole answer: (status, body). Connection failures
        and broken answers are :class:`TransportError` (``target``: path and query)."""
        try:
            data = self._encode(method, target, body, headers)
        except UnicodeEncodeError as exc:
            raise TransportError(f"{method} {target}: a header or the path is not Latin-1: {exc}") from exc
        conn: Connection | None = None
        try:
            conn = self._take(timeout)
            status, answer, keep = conn.exchange(data, method == "HEAD", timeout)
        except (ProtocolError, OSError) as exc:
            if conn is not None:
                conn.close()
            raise TransportError(f"{method} {target}: {exc or type(exc).__name__}") from exc
        if keep:
            self._give(conn)
        else:
            conn.close()
        return status, answer

    def _take(self, timeout: float) -> Connection:
        with self._lock:
            while self._idle:
                conn = self._idle.pop()
                if not _dropped(conn):
                    return conn
                conn.close()
        return Connection(self.host, self.port, timeout)

    def _give(self, conn: Connection) -> None:
        with self._lock:
            if len(self._idle) < MAX_IDLE:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            idle = list(self._idle)
            self._idle.clear()
        _close_all(idle)


def _close_all(conns: list[Connection]) -> None:
    for conn in list(conns):
        conn.close()
