"""Keep-alive connections to a plain-HTTP API server, for :class:`~.client.KubeClient`'s
requests (not its watches).

Why this exists: a request through the ``kubernetes`` library's urllib3 ``PoolManager``
costs ~100-150 µs of CPU in Python besides the socket calls (the URL parsed again, a pool
key built, ``Timeout`` and response wrappers), and one through ``http.client`` still ~75 µs
(the answer's headers go through the ``email`` package's parser). ``kubesched serve
--scheduler-process`` binds every pod over loopback and writes an Event for each, so for an
``http://`` server without a proxy (``serve``'s own) requests go out on connections kept
here, which speak just enough HTTP/1.1 (one request written in one send; the status line,
the headers, a body by Content-Length, chunks or the connection's end; informational 1xx
answers skipped): ~25 µs. TLS, client certificates and proxies stay with the library's
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

from kubesched.cluster.kube.errors import TransportError

MAX_IDLE = 32  # connections kept open between requests (binds run in parallel)
MAX_HEAD = 256 * 1024  # the longest status line and headers accepted
_NO_BODY = frozenset((204, 304))


class ProtocolError(Exception):
    """The server's answer is not HTTP/1.x as this client reads it."""


class Connection:
    """One keep-alive HTTP/1.1 connection (not thread-safe: the pool lends it to one caller)."""

    __slots__ = ("sock", "_buf")

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.sock: socket.socket | None = socket.create_connection((host, port), timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buf = bytearray()

    def close(self) -> None:
        sock, self.sock = self.sock, None
        if sock is not None:
            sock.close()

    def _fill(self, sock: socket.socket) -> None:
        data = sock.recv(65536)
        if not data:
            raise ProtocolError("the server closed the connection before its answer ended")
        self._buf += data

    def exchange(self, request: bytes, head_only: bool, timeout: float) -> tuple[int, bytes, bool]:
        """Send ``request``; return (status, body, whether the connection may be reused)."""
        sock = self.sock
        if sock is None:
            raise ProtocolError("the connection is closed")
        sock.settimeout(timeout)
        sock.sendall(request)
        buf = self._buf
        while True:
            end = buf.find(b"\r\n\r\n")
            while end < 0:
                if len(buf) > MAX_HEAD:
                    raise ProtocolError("the answer's headers are too long")
                self._fill(sock)
                end = buf.find(b"\r\n\r\n")
            lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
            del buf[:end + 4]
            version, _, rest = lines[0].partition(" ")
            code = rest[:3]
            if not version.startswith("HTTP/1.") or len(code) != 3 or not code.isdigit():
                raise ProtocolError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
            status = int(code)
            if 100 <= status < 200 and status != 101:
                continue  # informational (100 Continue): the real answer follows
            break
        length: int | None = None
        chunked = False
        conn_tokens = ""
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            if name == "content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    raise ProtocolError(f"bad Content-Length: {value.strip()[:40]!r}") from None
                if length < 0:
                    raise ProtocolError(f"bad Content-Length: {length}")
            elif name == "transfer-encoding":
                chunked = "chunked" in value.lower()
            elif name == "connection":
                conn_tokens = value.lower()
        keep = ("close" not in conn_tokens) if version == "HTTP/1.1" else ("keep-alive" in conn_tokens)
        if head_only or status in _NO_BODY or status < 200:
            body = b""
        elif chunked:
            body = self._chunked(sock)
        elif length is not None:
            while len(buf) < length:
                self._fill(sock)
            body = bytes(buf[:length])
            del buf[:length]
        else:  # delimited by the end of the connection
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                buf += data
            body = bytes(buf)
            buf.clear()
            keep = False
        if buf:  # bytes nobody asked for: do not trust the connection again
            keep = False
        return status, body, keep

    def _chunked(self, sock: socket.socket) -> bytes:
        buf = self._buf
        out = bytearray()
        while True:
            end = buf.find(b"\r\n")
            while end < 0:
                if len(buf) > MAX_HEAD:
                    raise ProtocolError("a chunk size line is too long")
                self._fill(sock)
                end = buf.find(b"\r\n")
            size_text = bytes(buf[:end]).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise ProtocolError(f"bad chunk size: {size_text[:40]!r}") from None
            del buf[:end + 2]
            if size == 0:  # the trailer section, ended by an empty line
                while True:
                    end = buf.find(b"\r\n")
                    while end < 0:
                        if len(buf) > MAX_HEAD:
                            raise ProtocolError("the trailers are too long")
                        self._fill(sock)
                        end = buf.find(b"\r\n")
                    del buf[:end + 2]
                    if end == 0:
                        return bytes(out)
            while len(buf) < size + 2:
                self._fill(sock)
            if buf[size:size + 2] != b"\r\n":
                raise ProtocolError("a chunk does not end with CRLF")
            out += buf[:size]
            del buf[:size + 2]


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
