"""Request bodies read from the client with a bound on their size and on the time they
take (413, 408); :mod:`kubesched.server.apiserver.decoding` turns them into values.
"""

from __future__ import annotations

import asyncio

from starlette.requests import ClientDisconnect, Request

from kubesched.server.apiserver import errors as E


async def read_body(request: Request, limit: int, timeout: float) -> bytes:
    """The whole body: 413 beyond ``limit`` bytes, 408 if it takes longer than ``timeout``.

    Read from the ASGI ``receive`` as ``Request.stream`` reads it (a disconnect raises
    ``ClientDisconnect``), under ``asyncio.timeout``: no task, async generator or
    ``wait_for`` per request (they were a visible share of a small write's CPU)."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise E.too_large(limit)
    chunks: list[bytes] = []
    size = 0
    receive = request.receive
    try:
        async with asyncio.timeout(timeout):
            while True:
                message = await receive()
                kind = message["type"]
                if kind == "http.request":
                    chunk = message.get("body", b"")
                    if chunk:
                        size += len(chunk)
                        if size > limit:
                            raise E.too_large(limit)
                        chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
                elif kind == "http.disconnect":
                    request._is_disconnected = True
                    raise ClientDisconnect()
    except TimeoutError:
        raise E.ApiError(408, "Timeout", "request body was not received in time") from None
    request._stream_consumed = True  # as Request.stream leaves it: the body is gone
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
