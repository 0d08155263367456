"""Serving HTTP with uvicorn: a listening socket bound before start-up, and uvicorn's h11
protocol with a deadline on request headers.

:func:`listen` binds the socket (so ``port`` 0 works and the caller knows the real port
before serving) and says how clients reach it.


uvicorn bounds idle keep-alive connections but not a client that starts a request and never
finishes its headers (a "slowloris"): the keep-alive timer is cancelled by the first byte,
and a new connection has no timer at all, so such clients could hold connections until
``limit_concurrency`` is exhausted. kube-apiserver's Go server sets ``ReadHeaderTimeout``
(32 s, just shy of its request timeout bound); this protocol does the same: from the moment
a connection opens, or a response completes on a kept-alive one, the client has
``header_timeout`` seconds to deliver a whole request head, else the connection is closed.
"""

from __future__ import annotations

import asyncio
import logging
import socket

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

READ_HEADER_TIMEOUT = 32.0  # kube-apiserver's http.Server ReadHeaderTimeout


def listen(host: str, port: int) -> tuple[socket.socket, str]:
    """A TCP socket bound to ``host:port`` (not yet listening: uvicorn does that), and the
    ``host:port`` clients use to reach it (a wildcard address becomes the loopback one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets that say so, and
    # without it a keep-alive client waits ~40 ms per response (Nagle + delayed ACK)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    url_host = "127.0.0.1" if host in ("0.0.0.0", "") else ("localhost" if host == "::" else host)
    if ":" in url_host:
        url_host = f"[{url_host}]"
    return sock, f"{url_host}:{sock.getsockname()[1]}"


def with_header_timeout(seconds: float = READ_HEADER_TIMEOUT) -> type[H11Protocol]:
    """An H11Protocol class whose clients must send request heads within ``seconds``."""

    class HeaderTimeoutH11Protocol(H11Protocol):
        header_timeout = seconds
        _header_timer: asyncio.TimerHandle | None = None

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(self.header_timeout, self._expired)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _waiting_for_head(self) -> bool:
            return self.conn.their_state is h11.IDLE

        def _expired(self) -> None:
            self._header_timer = None
            if self._waiting_for_head() and not self.transport.is_closing():
                log.debug("closing a connection whose request head did not arrive in %.0fs", self.header_timeout)
                self.transport.close()

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if not self._waiting_for_head():
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self._waiting_for_head() and not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return HeaderTimeoutH11Protocol
