"""Keep-alive connections to a plain-HTTP API server, for :class:`~.client.KubeClient`'s
requests (not its watches).

Why this exists: a request through the ``kubernetes`` library's urllib3 ``PoolManager``
costs ~100-150 µs of CPU in Python besides the socket calls (the URL parsed again, a pool
key built, ``Timeout`` and response wrappers). ``kubesched serve --scheduler-process``
binds every pod over loopback, so that was ~10% of the scheduler's CPU. For an
``http://`` server without a proxy (``serve``'s own) requests go out on ``http.client``
connections kept here instead; TLS, client certificates and proxies stay with the
library's pool, which handles them.

A connection is reused last-in first-out and only while the server keeps it open: one
that became readable while idle (the server closed it, or sent something unasked) is
dropped before use, as urllib3 checks ``is_connection_dropped``, so a request is never
sent on a connection the server has already given up.
"""

from __future__ import annotations

import http.client
import select
import threading
import weakref

from kubesched.cluster.kube.errors import TransportError

MAX_IDLE = 32  # connections kept open between requests (binds run in parallel)


def _dropped(conn: http.client.HTTPConnection) -> bool:
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
    """Requests to one ``host:port`` over reused ``http.client`` connections (thread-safe)."""

    def __init__(self, host: str, port: int, prefix: str = "") -> None:
        self.host, self.port, self.prefix = host, port, prefix
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        # as urllib3's pools: a pool dropped without close() still closes its sockets
        weakref.finalize(self, _close_all, self._idle)

    def request(self, method: str, target: str, body: bytes | None, headers: dict[str, str],
                timeout: float) -> tuple[int, bytes]:
        """Send one request and read the whole answer: (status, body). Connection failures
        and broken answers are :class:`TransportError` (``target``: path and query)."""
        conn = self._take(timeout)
        try:
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
            conn.request(method, self.prefix + target, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except (http.client.HTTPException, OSError) as exc:
            conn.close()
            raise TransportError(f"{method} {target}: {exc or type(exc).__name__}") from exc
        if resp.will_close:
            conn.close()
        else:
            self._give(conn)
        return resp.status, data

    def _take(self, timeout: float) -> http.client.HTTPConnection:
        with self._lock:
            while self._idle:
                conn = self._idle.pop()
                if not _dropped(conn):
                    return conn
                conn.close()
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def _give(self, conn: http.client.HTTPConnection) -> None:
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


def _close_all(conns: list[http.client.HTTPConnection]) -> None:
    for conn in list(conns):
        conn.close()
