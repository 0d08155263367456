"""How many requests the API server works on at once, with watches counted apart.

kube-apiserver's max-in-flight filter (``server/filters/maxinflight.go``) bounds the
requests being served: ``--max-requests-inflight`` (400) read-only ones and
``--max-mutating-requests-inflight`` (200) writes. A request beyond the bound is answered
at once with 429 and ``Retry-After: 1``, which every client (kubectl, client-go, the
Python client) retries. Long-running requests, watches above all, are exempt: a watch
stays open for up to an hour and costs nothing while idle, so a thousand informers must
not use up the seats of short requests. Here they have a bound of their own
(``--max-watches``), high by default, because each open watch holds a socket and some
memory; past it a new watch also gets 429 + Retry-After.

The middleware also answers methods the API does not know (OPTIONS, TRACE, ...) with the
405 ``Status`` kube-apiserver's router gives them, before any handler sees them.

Counters are plain integers: the ASGI app runs on one event loop thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from kubesched.server.apiserver.http.inflight import DEFAULT_MAX_MUTATING, DEFAULT_MAX_READONLY, DEFAULT_MAX_WATCHES
from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.authz.requestinfo import request_info
from kubesched.server.store import dumps

KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"})
READONLY_METHODS = frozenset({"GET", "HEAD"})
RETRY_AFTER = "1"
KIND_KEY = "kubesched.request_kind"


def is_long_running(scope: Scope) -> bool:
    """A watch (the verb of the request's one parse, :mod:`.authz.requestinfo`, as
    apiserver's ``IsLongRunning`` reads it), or a non-resource ``/watch/`` path (the web
    UI's change events)."""
    if scope.get("method") not in READONLY_METHODS:
        return False
    info = request_info(scope)
    return info.verb == "watch" or (not info.resource_request and "/watch/" in info.path)


def kind_of(scope: Scope) -> str:
    """``watch``, ``readOnly`` or ``mutating``: which limit a request counts against (kept
    in the scope: the metrics and the limits both ask)."""
    kind: str | None = scope.get(KIND_KEY)
    if kind is None:
        if is_long_running(scope):
            kind = "watch"
        else:
            kind = "readOnly" if scope.get("method") in READONLY_METHODS else "mutating"
        scope[KIND_KEY] = kind
    return kind


@dataclass(slots=True)
class Pool:
    limit: int
    used: int = 0
    rejected: int = 0


class RequestLimits:
    """ASGI middleware: 405 for unknown methods, then one seat per request from its pool."""

    def __init__(self, app: ASGIApp, *, max_readonly: int = DEFAULT_MAX_READONLY,
                 max_mutating: int = DEFAULT_MAX_MUTATING, max_watches: int = DEFAULT_MAX_WATCHES) -> None:
        self.app = app
        self.pools = {"readOnly": Pool(max_readonly), "mutating": Pool(max_mutating), "watch": Pool(max_watches)}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] not in KNOWN_METHODS:
            await _status(send, E.method_not_allowed())
            return
        kind = kind_of(scope)
        pool = self.pools[kind]
        if pool.used >= pool.limit:
            pool.rejected += 1
            what = "watches" if kind == "watch" else "requests"
            await _status(send, E.ApiError(429, "TooManyRequests", f"Too many {what}, please try again later.",
                                           {"retryAfterSeconds": int(RETRY_AFTER)}))
            return
        pool.used += 1
        try:
            await self.app(scope, receive, send)
        finally:
            pool.used -= 1


async def _status(send: Send, exc: E.ApiError) -> None:
    body = dumps(exc.status()).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    retry = (exc.details or {}).get("retryAfterSeconds")
    if retry:
        headers.append((b"retry-after", str(retry).encode()))
    await send({"type": "http.response.start", "status": exc.code, "headers": headers})
    await send({"type": "http.response.body", "body": body})
