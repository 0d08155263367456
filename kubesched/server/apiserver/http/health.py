"""``/healthz``, ``/livez`` and ``/readyz`` as kube-apiserver answers them
(``k8s.io/apiserver/pkg/server/healthz/healthz.go``): named checks, ``?verbose`` listing
each as ``[+]name ok`` / ``[-]name failed: reason withheld`` and a closing ``readyz
check passed``, ``?exclude=name`` leaving one out, ``/readyz/<name>`` running one, and
500 with the listing when any check fails (plain ``ok`` otherwise).

Checks: ``ping`` (always), ``log`` (logging works), ``store`` (the SQLite store answers; it
stands where upstream has ``etcd``) and, for readiness only, ``shutdown`` (fails once the
server is stopping, as upstream's graceful-termination check).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from kubesched.server.apiserver.authz.requestinfo import query_of

if TYPE_CHECKING:
    from kubesched.server.apiserver.app import ApiServerState

Check = tuple[str, Callable[[], bool]]


def checks(state: "ApiServerState", readiness: bool) -> list[Check]:
    store = state.registry.store

    def store_ok() -> bool:
        if store.closed:
            return False
        try:
            _ = store.count("core/namespaces")
            return True
        except Exception:  # any failure to read is the check failing, never a 500 of its own
            return False

    out: list[Check] = [("ping", lambda: True), ("log", lambda: logging.getLogger().handlers is not None),
                        ("store", store_ok)]
    if readiness:
        out.append(("shutdown", lambda: state.ready.is_set() and not state.stopping.is_set()))
    return out


def endpoint(name: str, readiness: bool) -> Callable[[Request], Awaitable[Response]]:
    """The handler of ``/<name>`` and ``/<name>/<check>``."""

    async def handle(request: Request) -> Response:
        state: ApiServerState = request.app.state.kubesched
        all_checks = checks(state, readiness)
        sub = request.path_params.get("rest", "").strip("/")
        if sub:
            found = [c for c in all_checks if c[0] == sub]
            if not found:
                return PlainTextResponse("404 page not found\n", status_code=404)
            ok = await run_in_threadpool(found[0][1])
            return (PlainTextResponse("ok") if ok else
                    PlainTextResponse(f"internal server error: {sub} failed\n", status_code=500))
        excluded = set(query_of(request.scope).getlist("exclude"))
        lines, failed = [], False
        for check_name, fn in all_checks:
            if check_name in excluded:
                lines.append(f"[+]{check_name} excluded: ok")
                continue
            if await run_in_threadpool(fn):
                lines.append(f"[+]{check_name} ok")
            else:
                lines.append(f"[-]{check_name} failed: reason withheld")
                failed = True
        listing = "".join(line + "\n" for line in lines)
        if failed:
            return PlainTextResponse(f"{listing}{name} check failed\n", status_code=500)
        if "verbose" in query_of(request.scope):
            return PlainTextResponse(f"{listing}{name} check passed\n")
        return PlainTextResponse("ok")

    return handle
