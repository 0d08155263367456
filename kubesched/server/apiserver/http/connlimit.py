"""A bound on open connections that half-sent requests cannot use up.

Every connection holds a file descriptor. Without a bound below the process's file limit,
a client that opens connections and sends requests slowly (a "slowloris": 1,100 of them
against a limit of 1,024) exhausts the descriptors: real clients cannot connect, serve's own
components cannot open a socket or a database file, and every failed ``accept`` is logged.
The request-head deadline (:mod:`.httpproto`) frees such a connection only after 32 s.

:class:`ConnectionLimit` keeps the count of open connections at most ``limit`` (chosen
below the file limit by :func:`connection_limit`, with room for serve's own files). At the
bound, a new connection makes room by closing the connection *idle* longest: one with no
request in progress (still waiting for, or in the middle of, a request head, or kept alive
between requests). A half-sent request is idle in this sense, so a flood of them only
replaces itself, while a real client's request, whose head arrives at once, is served; a
closed keep-alive connection is one every HTTP client reopens. Only when every connection
is busy with a request (each bounded by the in-flight limits and its timeouts) is the new
connection closed instead.

Counters and the idle order live on the event loop's thread, as the protocols do.
"""

from __future__ import annotations

import logging
from typing import Protocol

log = logging.getLogger(__name__)

RESERVED_FILES = 384  # kept for serve itself: SQLite (two files per thread's connection), sockets
RESERVED_FRACTION = 3  # ... or a third of the file limit, if that is more
ACCEPT_BATCH = 64  # connections asyncio accepts at once before any is counted


class Closable(Protocol):
    def close_idle(self) -> None:
        """Close this connection (it has no request in progress)."""

    def refuse(self) -> None:
        """Close this new connection at once."""


def connection_limit(open_files: int, wanted: int) -> int:
    """The connections to allow with ``open_files`` file descriptors: ``wanted``, or fewer so
    that serve's own files and a batch of accepted connections always fit."""
    reserve = max(RESERVED_FILES, open_files // RESERVED_FRACTION) + ACCEPT_BATCH
    return max(1, min(wanted, open_files - reserve))


class ConnectionLimit:
    """Open connections, at most :attr:`limit`; the idle ones in the order they became idle."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open = 0
        self.shed = 0  # idle connections closed to make room
        self.refused = 0  # new connections closed because every one was busy
        self._idle: dict[Closable, None] = {}  # insertion order: idle longest first

    def opened(self, conn: Closable) -> None:
        self.open += 1
        self._idle[conn] = None  # a new connection has no request yet
        if self.open <= self.limit:
            return
        for victim in self._idle:
            if victim is not conn:
                del self._idle[victim]
                self.shed += 1
                victim.close_idle()
                return
        self.refused += 1
        del self._idle[conn]
        conn.refuse()

    def idle(self, conn: Closable) -> None:
        self._idle.pop(conn, None)
        self._idle[conn] = None  # now the most recently idle

    def busy(self, conn: Closable) -> None:
        self._idle.pop(conn, None)

    def closed(self, conn: Closable) -> None:
        self.open -= 1
        self._idle.pop(conn, None)
