"""Watch over HTTP: a chunked stream of ``{"type": ..., "object": ...}`` lines, or of
length-prefixed protobuf ``WatchEvent`` frames for clients that ask for protobuf first
(client-go's typed informers) when the kind has a complete protobuf form.

The stream ends after ``timeoutSeconds`` (default: the server's minimum request timeout,
randomised between 1x and 2x as kube-apiserver does so reconnects spread out), when the
client goes away, when the watcher falls too far behind (the client resumes from its last
resourceVersion), or when the server shuts down. With ``allowWatchBookmarks=true`` a
``BOOKMARK`` carrying the latest resourceVersion is sent every ``bookmark_interval``
seconds. "Too far behind" is more than ``watch_buffer_bytes`` of undelivered event text
(:mod:`kubesched.server.store.watch`); a client that stopped reading holds the stream in a
write, so its connection is dropped, with what was queued for it. Events are written at
most :data:`SEND_CHUNK_BYTES` at a time. A start from a compacted resourceVersion, or one
whose changes since exceed the bound, is answered as kube-apiserver's watch cache answers
it: 200 and a single ``ERROR`` event holding a 410 ``Expired`` Status. So
is a streaming list (``sendInitialEvents=true``) from a revision the store has not reached
within 3 s: the ERROR event holds the 504 ``Too large resource version``. A plain watch
from a future revision is admitted and waits for it, as the watch cache admits it.

The event loop never blocks on the store: the watcher's callback (called in the writer's
thread) only sets an ``asyncio.Event`` through ``call_soon_threadsafe``. An idle watch
costs no CPU (it sleeps until an event, a bookmark, its deadline or its client's
disconnection) and little memory (:class:`WatchResponse`); watches do not count against
the in-flight request limits (:mod:`.limits`).
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.authz.requestinfo import query_of
from kubesched.server.apiserver.http.target import Target, _flag, _int, wants_table
from kubesched.server.apiserver.http.httpproto import ABORT_IF_STALLED
from kubesched.server.apiserver.http.negotiate import accepts_json, not_acceptable
from kubesched.server.apiserver.protobuf.decode import MEDIA_TYPE
from kubesched.server.apiserver.protobuf.encode import prefers_protobuf, streamable, watch_frame
from kubesched.server.apiserver.registry.options import wait_fresh
from kubesched.server.apiserver.printers.tables import to_table
from kubesched.server.apiserver.watch.api import BOOKMARK, ERROR, WatchItem, WatchStream, open_watch
from kubesched.server.store import dumps

PROTO_STREAM = MEDIA_TYPE + ";stream=watch"  # as kube-apiserver labels a protobuf watch
SEND_CHUNK_BYTES = 1024 * 1024  # event text written to a stream at once (a slow client's
                                # connection then holds about one chunk besides its watcher)

if TYPE_CHECKING:
    from kubesched.server.apiserver.app import ApiServerState


def _encode(item: WatchItem, table: tuple[str, float] | None, target: Target, proto: bool = False) -> bytes:
    if proto:
        return watch_frame(item.type, item.obj if item.obj is not None else item.object())
    if table is not None and item.type not in (BOOKMARK, ERROR):
        obj = item.obj if item.obj is not None else item.object()
        tab = to_table(target.resource, [obj], table[1], include_object=table[0])
        return (dumps({"type": item.type, "object": tab}) + "\n").encode()
    if item.stored is not None and item.data is not None:
        return item.stored.frame(item.type)  # built once for every stream of the event
    if item.data is not None:
        return f'{{"type":"{item.type}","object":{item.data}}}\n'.encode()
    return (dumps({"type": item.type, "object": item.obj}) + "\n").encode()


def _error_stream(exc: E.ApiError, proto: bool) -> Response:
    """200 and one ERROR event: how the watch cache reports a failure after a watch has
    been admitted (``newErrWatcher``)."""
    if proto:
        return Response(watch_frame(ERROR, exc.status()), media_type=PROTO_STREAM)
    body = (dumps({"type": ERROR, "object": exc.status()}) + "\n").encode()
    return Response(body, media_type="application/json")


def _wants_protobuf(request: Request, t: Target) -> bool:
    """Protobuf frames when the client asks for protobuf first and every object of the kind
    has a protobuf form; else JSON lines, or 406 if the client accepts no JSON."""
    accept = request.headers.get("accept", "")
    if not prefers_protobuf(accept) or wants_table(request):
        return False
    if streamable(t.resource.api_version, t.resource.kind):
        return True
    if not accepts_json(accept):
        raise not_acceptable()
    return False


async def watch_response(request: Request, state: "ApiServerState", t: Target) -> Response:
    q = query_of(request.scope)
    proto = _wants_protobuf(request, t)
    sie = q.get("sendInitialEvents")
    initial = None if sie is None else _flag(sie)
    rv = q.get("resourceVersion")
    if initial and rv and rv.strip().isdigit():
        # a streaming list must be at least as fresh as its resourceVersion; a plain watch
        # from a future revision simply waits for it (the cacher does not block those)
        try:
            await wait_fresh(state.registry.store, int(rv))
        except E.ApiError as exc:
            return _error_stream(exc, proto)
    try:
        stream = await run_in_threadpool(
            open_watch, state.registry, t.resource, t.namespace, resource_version=rv,
            label_selector=q.get("labelSelector", ""), field_selector=q.get("fieldSelector", ""),
            send_initial_events=initial, max_bytes=state.config.watch_buffer_bytes)
    except E.ApiError as exc:
        if exc.code == 410:
            return _error_stream(exc, proto)
        raise
    timeout = _int(q, "timeoutSeconds")
    if timeout is None:
        base = state.config.min_request_timeout
        timeout = int(base * (1 + random.random()))
    bookmarks = _flag(q.get("allowWatchBookmarks"))
    table = None
    if wants_table(request):
        table = (q.get("includeObject", "Metadata"), 0.0)
    return WatchResponse(_Watch(state, stream, t, float(max(0, timeout)), bookmarks, table, proto))


@dataclass(slots=True)
class _Watch:
    state: "ApiServerState"
    stream: WatchStream
    target: Target
    timeout: float
    bookmarks: bool
    table: tuple[str, float] | None
    proto: bool = False


class WatchResponse(Response):
    """A chunked stream of watch events, lean enough to keep thousands open: one task for
    the request and one waiting for the client to go away, no thread, no polling."""

    media_type = "application/json"

    def __init__(self, watch: _Watch) -> None:
        self.watch = watch
        if watch.proto:
            self.media_type = PROTO_STREAM
        self.status_code = 200
        self.background = None
        self.init_headers(None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        w, loop = self.watch, asyncio.get_running_loop()
        wake = asyncio.Event()
        waker = _waker(w.state, loop)
        gone = loop.create_task(_disconnected(receive))
        gone.add_done_callback(lambda _: wake.set())
        w.stream.set_notify(lambda: waker.wake(wake))
        gauge = w.state.metrics.longrunning.labels("WATCH", w.target.resource.group, w.target.resource.version,
                                                   w.target.resource.plural, "",
                                                   "namespace" if w.target.namespace else "cluster", "apiserver")
        gauge.inc()
        # ended for falling behind: a client that stopped reading holds the pump in send(),
        # so its connection is dropped (and the bytes queued for it with it)
        drop = scope.get(ABORT_IF_STALLED)
        if drop is not None:
            w.stream.on_overflow(lambda: _soon(loop, drop))
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            await _pump(w, wake, gone, send)
            if not gone.done() and not (w.stream.overflowed and drop is not None and drop()):
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:  # the client went away mid-write
            pass
        finally:
            gone.cancel()
            w.stream.on_overflow(None)
            w.stream.set_notify(None)
            w.stream.close()
            gauge.dec()


def _soon(loop: asyncio.AbstractEventLoop, fn: Callable[[], object]) -> None:
    try:
        loop.call_soon_threadsafe(fn)
    except RuntimeError:  # the loop is closed: the connection is gone with it
        pass


class _Waker:
    """Wakes watches from the store's writer thread with one ``call_soon_threadsafe`` per
    batch, not one per watch: a commit seen by two thousand watches costs the writer (which
    holds the store's lock while it publishes) one self-pipe write, not two thousand."""

    def __init__(self, loop: asyncio.AbstractEventLoop, loop_thread: int | None = None) -> None:
        self.loop = loop
        self.loop_thread = loop_thread  # the loop's thread id, when known
        self._lock = threading.Lock()
        self._pending: list[asyncio.Event] = []

    def wake(self, event: asyncio.Event) -> None:
        if self.loop_thread is not None and threading.get_ident() == self.loop_thread:
            event.set()  # a write committed on the loop itself (write_on_loop): no hand-off
            return
        with self._lock:
            self._pending.append(event)
            if len(self._pending) > 1:
                return  # a flush is already scheduled
        try:
            self.loop.call_soon_threadsafe(self._flush)
        except RuntimeError:  # the loop is closed: nothing is waiting any more
            with self._lock:
                self._pending.clear()

    def _flush(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
        for event in pending:
            event.set()


def _waker(state: "ApiServerState", loop: asyncio.AbstractEventLoop) -> _Waker:
    waker = getattr(state, "watch_waker", None)
    if not isinstance(waker, _Waker) or waker.loop is not loop:
        waker = _Waker(loop, threading.get_ident())  # called on the loop's thread
        state.watch_waker = waker
    return waker


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _pump(w: _Watch, wake: asyncio.Event, gone: "asyncio.Task[None]", send: Send) -> None:
    loop = asyncio.get_running_loop()
    interval = w.state.config.bookmark_interval
    deadline = loop.time() + w.timeout
    next_bookmark = loop.time() + interval
    res = w.target.resource
    counter = w.state.metrics.watch_events.labels(res.group, res.version, res.kind)
    timer: asyncio.TimerHandle | None = None  # one timer for the next deadline or bookmark,
    timer_at = -1.0                           # re-armed only when that time changes
    try:
        while True:
            wake.clear()
            items = w.stream.poll(SEND_CHUNK_BYTES)
            if items:
                tab = None if w.table is None else (w.table[0], w.state.registry.clock())
                counter.inc(len(items))
                await send({"type": "http.response.body",
                            "body": b"".join(_encode(i, tab, w.target, w.proto) for i in items), "more_body": True})
            if gone.done() or w.stream.closed or w.state.stopping.is_set():
                return
            if w.stream.pending:
                continue  # a bounded poll left events: send them before waiting
            now = loop.time()
            if now >= deadline:
                return
            if w.bookmarks and now >= next_bookmark:
                await send({"type": "http.response.body", "body": _encode(w.stream.bookmark(), None, w.target, w.proto),
                            "more_body": True})
                next_bookmark = now + interval
            wait_until = min(deadline, next_bookmark) if w.bookmarks else deadline
            if wait_until != timer_at:
                if timer is not None:
                    timer.cancel()
                timer, timer_at = loop.call_at(wait_until, wake.set), wait_until
            await wake.wait()
    finally:
        if timer is not None:
            timer.cancel()
