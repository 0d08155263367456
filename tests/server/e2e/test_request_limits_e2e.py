"""Watches are not requests in flight: a real ``kubesched serve`` holds hundreds of idle
watches while ordinary requests keep their own limit, each limit answering 429 with
``Retry-After: 1`` when exceeded (kube-apiserver's ``filters/maxinflight.go`` exempts
long-running requests and answers 429 + Retry-After 1 beyond ``--max-requests-inflight``)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from serve_harness import API_ONLY, Server, eventually
from test_apiserver_hardening_e2e import call, is_status
from watchload import Watches

pytestmark = pytest.mark.slow

WATCH = "/api/v1/pods?watch=true&resourceVersion=0"


def address(server: Server) -> tuple[str, int]:
    host, port = server.url.split("//")[1].rsplit(":", 1)
    return host, int(port)


def test_500_watches_do_not_use_up_the_request_limit(spawn: Callable[..., Server]) -> None:
    server = spawn(*API_ONLY, "--max-requests-inflight", "5", "--max-mutating-requests-inflight", "5")
    host, port = address(server)
    watches = Watches()

    async def run() -> list[int]:
        await watches.open(host, port, 500, WATCH)
        codes = []
        try:
            for i in range(20):  # while all 500 are open
                codes.append((await asyncio.to_thread(server.request, "GET", "/api/v1/namespaces/default/pods"))[0])
                body = {"metadata": {"name": f"cm-{i}"}, "data": {"k": "v"}}
                codes.append((await asyncio.to_thread(server.request, "POST", "/api/v1/namespaces/default/configmaps",
                                                      body))[0])
        finally:
            await watches.close()
        return codes

    codes = asyncio.run(run())
    assert watches.statuses == [200] * 500
    assert codes == [200, 201] * 20


def test_watches_beyond_max_watches_get_429(spawn: Callable[..., Server]) -> None:
    server = spawn(*API_ONLY, "--max-watches", "30")
    host, port = address(server)
    watches = Watches()

    async def run() -> tuple[int, dict[str, str], object]:
        await watches.open(host, port, 30, WATCH)
        try:
            return await asyncio.to_thread(call, server, "GET", WATCH)
        finally:
            await watches.close()

    code, headers, body = asyncio.run(run())
    assert watches.statuses == [200] * 30
    assert code == 429 and is_status(body, 429, "TooManyRequests") and headers["retry-after"] == "1"
    assert server.request("GET", "/api/v1/nodes")[0] == 200
    # the seats come back when the watches close
    eventually(lambda: call(server, "GET", WATCH.replace("resourceVersion=0", "timeoutSeconds=1"))[0] == 200)


def test_requests_beyond_max_requests_inflight_get_429(spawn: Callable[..., Server]) -> None:
    server = spawn(*API_ONLY, "--max-requests-inflight", "1")
    current = int(server.request("GET", "/api/v1/nodes")[1]["metadata"]["resourceVersion"])
    for _attempt in range(5):  # on a busy machine the seat holder may be admitted late: try again
        slow: list[int] = []
        # a list from a future revision holds its seat for the watch cache's 3 s before its 504
        holder = threading.Thread(target=lambda: slow.append(
            call(server, "GET", f"/api/v1/nodes?resourceVersion={current + 100}")[0]))
        holder.start()
        time.sleep(0.5)
        code, headers, body = call(server, "GET", "/api/v1/nodes")
        holder.join(30)
        if slow == [504] and code == 429:
            break
    assert slow == [504] and code == 429, (slow, code)
    assert is_status(body, 429, "TooManyRequests") and headers["retry-after"] == "1"
    assert body["message"] == "Too many requests, please try again later."
    assert call(server, "GET", "/api/v1/nodes")[0] == 200


def test_writes_have_their_own_limit(spawn: Callable[..., Server]) -> None:
    """A write whose body is still arriving holds its seat (the limit is taken when the
    request head is read, as kube-apiserver's filter runs before the handler reads the body)."""
    server = spawn(*API_ONLY, "--max-mutating-requests-inflight", "1")
    host, port = address(server)
    body = json.dumps({"metadata": {"generateName": "second-"}}).encode()
    slow = socket.create_connection((host, port))
    try:
        slow.sendall(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{")

        def second_write_refused() -> tuple[int, dict[str, str], Any] | None:
            answer = call(server, "POST", "/api/v1/namespaces/default/configmaps", body)
            return answer if answer[0] == 429 else None

        code, headers, status = eventually(second_write_refused, timeout=20, interval=0.1)
        assert is_status(status, 429, "TooManyRequests") and headers["retry-after"] == "1"
        assert server.request("GET", "/api/v1/namespaces/default/configmaps")[0] == 200  # reads unaffected
    finally:
        slow.close()
    eventually(lambda: call(server, "POST", "/api/v1/namespaces/default/configmaps", body)[0] == 201, timeout=20)
