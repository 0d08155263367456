"""Watch over HTTP: a chunked stream of ``{"type": ..., "object": ...}`` lines.

The stream ends after ``timeoutSeconds`` (default: the server's minimum request timeout,
randomised between 1x and 2x as kube-apiserver does so reconnects spread out), when the
client goes away, when the watcher falls too far behind (the client resumes from its last
resourceVersion), or when the server shuts down. With ``allowWatchBookmarks=true`` a
``BOOKMARK`` carrying the latest resourceVersion is sent every ``bookmark_interval``
seconds. A start from a compacted resourceVersion is answered as kube-apiserver's watch
cache answers it: 200 and a single ``ERROR`` event holding a 410 ``Expired`` Status.

The event loop never blocks on the store: the watcher's callback (called in the writer's
thread) only sets an ``asyncio.Event`` through ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from kubesched.cluster.apiserver import errors as E
from kubesched.cluster.apiserver.handlers import Target, _flag, _int, wants_table
from kubesched.cluster.apiserver.tables import to_table
from kubesched.cluster.apiserver.watchapi import BOOKMARK, ERROR, WatchItem, WatchStream, open_watch
from kubesched.cluster.store import dumps

if TYPE_CHECKING:
    from kubesched.cluster.apiserver.app import ApiServerState


def _encode(item: WatchItem, table: tuple[str, float] | None, target: Target) -> bytes:
    if table is not None and item.type not in (BOOKMARK, ERROR):
        obj = item.obj if item.obj is not None else item.object()
        tab = to_table(target.resource, [obj], table[1], include_object=table[0])
        return (dumps({"type": item.type, "object": tab}) + "\n").encode()
    if item.data is not None:
        return f'{{"type":"{item.type}","object":{item.data}}}\n'.encode()
    return (dumps({"type": item.type, "object": item.obj}) + "\n").encode()


def _gone_stream(exc: E.ApiError) -> Response:
    body = (dumps({"type": ERROR, "object": exc.status()}) + "\n").encode()
    return Response(body, media_type="application/json")


async def watch_response(request: Request, state: "ApiServerState", t: Target) -> Response:
    q = request.query_params
    sie = q.get("sendInitialEvents")
    try:
        stream = await run_in_threadpool(
            open_watch, state.registry, t.resource, t.namespace, resource_version=q.get("resourceVersion"),
            label_selector=q.get("labelSelector", ""), field_selector=q.get("fieldSelector", ""),
            send_initial_events=None if sie is None else _flag(sie))
    except E.ApiError as exc:
        if exc.code == 410:
            return _gone_stream(exc)
        raise
    timeout = _int(q, "timeoutSeconds")
    if timeout is None:
        base = state.config.min_request_timeout
        timeout = int(base * (1 + random.random()))
    bookmarks = _flag(q.get("allowWatchBookmarks"))
    table = None
    if wants_table(request):
        table = (q.get("includeObject", "Metadata"), 0.0)
    return StreamingResponse(_events(state, stream, t, float(timeout), bookmarks, table),
                             media_type="application/json")


async def _events(state: "ApiServerState", stream: WatchStream, t: Target, timeout: float, bookmarks: bool,
                  table: tuple[str, float] | None) -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    wake = asyncio.Event()

    def notify() -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closing
            loop.call_soon_threadsafe(wake.set)

    stream.set_notify(notify)
    state.metrics.longrunning.labels("WATCH", t.resource.group, t.resource.version, t.resource.plural, "",
                                     "namespace" if t.namespace else "cluster", "apiserver").inc()
    interval = state.config.bookmark_interval
    deadline = loop.time() + timeout
    next_bookmark = loop.time() + interval
    counter = state.metrics.watch_events.labels(t.resource.group, t.resource.version, t.resource.kind)
    try:
        while True:
            items = stream.poll()
            if items:
                now = state.registry.clock()
                tab = None if table is None else (table[0], now)
                counter.inc(len(items))
                yield b"".join(_encode(i, tab, t) for i in items)
            if stream.closed or state.stopping.is_set():
                return
            now_t = loop.time()
            if now_t >= deadline:
                return
            if bookmarks and now_t >= next_bookmark:
                yield _encode(stream.bookmark(), None, t)
                next_bookmark = now_t + interval
            wait_until = min(deadline, next_bookmark) if bookmarks else deadline
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(wake.wait(), timeout=max(0.005, min(wait_until - now_t, 1.0)))
            wake.clear()
    finally:
        stream.set_notify(None)
        stream.close()
        state.metrics.longrunning.labels("WATCH", t.resource.group, t.resource.version, t.resource.plural, "",
                                         "namespace" if t.namespace else "cluster", "apiserver").dec()
