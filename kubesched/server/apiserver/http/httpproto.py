"""Serving HTTP with uvicorn: a listening socket bound before start-up, and uvicorn's
httptools protocol with a deadline and a size bound on request heads.

:func:`listen` binds the socket (so ``port`` 0 works and the caller knows the real port
before serving) and says how clients reach it.

The protocol is uvicorn's ``HttpToolsProtocol`` (llhttp, the C parser of Node.js, through
``httptools``): parsing a request with h11, in pure Python, cost as much CPU as handling it
(~20% of ``serve``'s API server during a burst). It lacks two things h11 gave or
this module added, so :func:`with_header_timeout` adds them:

* a deadline on request heads. uvicorn bounds idle keep-alive connections but not a client
  that starts a request and never finishes its headers (a "slowloris"): the keep-alive timer
  is cancelled by the first byte, and a new connection has no timer at all, so such clients
  could hold connections until ``limit_concurrency`` is exhausted. kube-apiserver's Go
  server sets ``ReadHeaderTimeout`` (32 s, just shy of its request timeout bound); here too,
  from the moment a connection opens, or a response completes on a kept-alive one, the
  client has ``header_timeout`` seconds to deliver a whole request head, else the
  connection is closed;
* a bound on the size of a request head (:data:`MAX_HEAD_BYTES`; h11 had one, llhttp has
  none): beyond it the answer is Go's ``431 Request Header Fields Too Large`` and the
  connection is closed;
* methods llhttp does not know (``FOO``) get the 405 ``Status`` kube-apiserver gives any
  method it does not serve, not a bare 400;
* a bound on open connections below the file limit (:mod:`.connlimit`): at the bound a new
  connection replaces the one idle longest (no request in progress);
* a way for a watch to drop its connection when the client has stopped reading
  (:data:`ABORT_IF_STALLED`).
"""

from __future__ import annotations

import asyncio
import logging
import socket

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.http.connlimit import ConnectionLimit
from kubesched.server.store import dumps

log = logging.getLogger(__name__)

READ_HEADER_TIMEOUT = 32.0  # kube-apiserver's http.Server ReadHeaderTimeout
# in a request's ASGI scope: drops the connection if its client has stopped reading (what
# is queued for it is over the write buffer's high-water mark); True if it did
ABORT_IF_STALLED = "kubesched.abort_if_stalled"
MAX_HEAD_BYTES = 64 * 1024  # request line and headers
_TOO_LARGE = b"431 Request Header Fields Too Large"


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


class _HeadTooLarge(Exception):
    """Raised from a parser callback: llhttp stops and uvicorn answers (see send_400_response)."""


def with_header_timeout(seconds: float = READ_HEADER_TIMEOUT, max_head_bytes: int = MAX_HEAD_BYTES,
                        connections: ConnectionLimit | None = None) -> type[HttpToolsProtocol]:
    """An HttpToolsProtocol class whose clients must send request heads of at most
    ``max_head_bytes`` within ``seconds``; with ``connections``, whose connections count
    against that bound (:mod:`.connlimit`)."""

    class ApiHttpProtocol(HttpToolsProtocol):
        header_timeout = seconds
        head_limit = max_head_bytes
        limit = connections
        _header_timer: asyncio.TimerHandle | None = None
        _awaiting_head = True  # between a response (or the connection's start) and a whole head
        _head_bytes = 0
        _too_large = False
        _head_deadline = 0.0

        def _arm(self) -> None:
            """Start the head's deadline. One timer per connection, not one per request: while
            it is pending a new deadline is only noted, and the timer, when it fires early,
            waits out the rest of the latest one."""
            self._awaiting_head = True
            if self.limit is not None:
                self.limit.idle(self)
            self._head_deadline = self.loop.time() + self.header_timeout
            if self._header_timer is None:
                self._header_timer = self.loop.call_at(self._head_deadline, self._expired)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _expired(self) -> None:
            self._header_timer = None
            if not self._awaiting_head or self.transport.is_closing():
                return  # a head arrived: the next response arms again
            if self.loop.time() < self._head_deadline:
                self._header_timer = self.loop.call_at(self._head_deadline, self._expired)
                return
            log.debug("closing a connection whose request head did not arrive in %.0fs", self.header_timeout)
            self.transport.close()

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if self.limit is not None:
                self.limit.opened(self)
            if not transport.is_closing():
                self._arm()

        def close_idle(self) -> None:
            """Closed to make room for a new connection (:mod:`.connlimit`)."""
            log.debug("closing a connection without a request in progress: at the connection limit")
            self.transport.close()

        def refuse(self) -> None:
            log.debug("refusing a connection: at the connection limit, every connection busy")
            self.transport.close()

        def data_received(self, data: bytes) -> None:
            if self._too_large:
                return  # answered and closing
            self._unset_keepalive_if_required()
            try:
                self.parser.feed_data(data)
            except httptools.HttpParserInvalidMethodError:
                self._method_not_allowed()
            except httptools.HttpParserError:
                self.send_400_response("Invalid HTTP request received.")
            except httptools.HttpParserUpgrade:
                if self._should_upgrade():
                    self.handle_websocket_upgrade()
                else:
                    self._unsupported_upgrade_warning()

        def _method_not_allowed(self) -> None:
            """A method llhttp does not know (``FOO``): kube-apiserver's router answers any
            method it does not serve with the 405 Status, as :mod:`.limits` does for known ones;
            the parser cannot go on, so the connection closes."""
            body = dumps(E.method_not_allowed().status()).encode()
            self.transport.write(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-type: application/json\r\n"
                                 b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n"
                                 + body)
            self.transport.close()

        def on_message_begin(self) -> None:
            self._head_bytes = 0
            super().on_message_begin()

        def _count(self, n: int) -> None:
            self._head_bytes += n
            if self._head_bytes > self.head_limit:
                self._too_large = True
                raise _HeadTooLarge()

        def on_url(self, url: bytes) -> None:
            self._count(len(url))
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._count(len(name) + len(value) + 4)
            super().on_header(name, value)

        def on_headers_complete(self) -> None:
            self._awaiting_head = False  # the timer, if pending, lapses when it fires
            if self.limit is not None:
                self.limit.busy(self)
            self.scope[ABORT_IF_STALLED] = self._abort_if_stalled  # type: ignore[literal-required]
            super().on_headers_complete()

        def _abort_if_stalled(self) -> bool:
            if self.flow is None or not self.flow.write_paused or self.transport.is_closing():
                return False
            log.debug("dropping a connection whose client stopped reading")
            self.transport.abort()
            return True

        def send_400_response(self, msg: str) -> None:
            if not self._too_large:
                super().send_400_response(msg)
                return
            body = b"431 Request Header Fields Too Large"
            self.transport.write(b"HTTP/1.1 " + _TOO_LARGE + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
                                 b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n"
                                 + body)
            self.transport.close()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            # a pipelined request whose head is already complete is the current cycle now
            if (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if self.limit is not None:
                self.limit.closed(self)
            super().connection_lost(exc)

    return ApiHttpProtocol
