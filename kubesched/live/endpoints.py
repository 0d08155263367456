"""The HTTP endpoints of ``kubesched run``, as kube-scheduler serves them on its port:

``/healthz`` (and ``/livez``)
    checks ``ping`` and ``leaderElection`` (a leader that has not renewed its lease for the
    lease duration plus 20 s is unhealthy, client-go's ``HealthzAdaptor``).
``/readyz``
    adds ``sched-handler-sync`` (the informers' caches have synced) and ``shutdown`` (not
    stopping). A standby replica is ready once synced: it only waits for the lease.
``/metrics``
    kube-scheduler's metrics (upstream names) and ``leader_election_master_status``.
``/debug/explain/<namespace>/<pod>``
    the pod's last scheduling attempt: per-node filter verdicts and per-plugin scores, as
    ``kubesched explain`` shows them (JSON; ``?output=text`` for the table), with every
    blocker of a pod still pending; ``?fixes=N``: at most N verified fixes instead.

Health answers have the apiserver library's form (``k8s.io/apiserver/pkg/server/healthz``):
``ok``, or with ``?verbose`` (or on a failure, status 500) one ``[+]name ok`` /
``[-]name failed: reason withheld`` line per check and ``<endpoint> check passed|failed``;
``?exclude=name`` skips a check; ``/<endpoint>/<check>`` runs one. Served by uvicorn in a thread, on a socket bound
before it starts (``port`` 0: any free port).
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from kubesched.server.apiserver.http.httpproto import listen, with_header_timeout

log = logging.getLogger(__name__)

Check = tuple[str, Callable[[], str | None]]  # name, () -> None if fine, else the reason


@dataclass(slots=True)
class EndpointHooks:
    healthz: list[Check]
    readyz: list[Check]
    registry: CollectorRegistry
    explain: Callable[[str, str], dict[str, Any] | None]
    explain_text: Callable[[str, str], str | None] | None = None
    # ?fixes=N: what would make a pending pod schedule (kubesched.live.whatif)
    explain_fixes: Callable[[str, str, int], dict[str, Any] | None] | None = None
    extra_routes: list[BaseRoute] = field(default_factory=list)  # run --ui: the web UI's routes


NOSNIFF = {"X-Content-Type-Options": "nosniff"}


def _run_check(check: Callable[[], str | None]) -> str | None:
    try:
        return check()
    except Exception as exc:  # noqa: BLE001 - a failing check is a failed check
        return str(exc) or type(exc).__name__


def _health(endpoint: str, checks: list[Check]) -> Callable[[Request], Response]:
    def handler(request: Request) -> Response:
        excluded = set(request.query_params.getlist("exclude"))
        lines, failed = [], False
        for name, check in checks:
            if name in excluded:
                excluded.discard(name)
                lines.append(f"[+]{name} excluded: ok")
                continue
            reason = _run_check(check)
            if reason is None:
                lines.append(f"[+]{name} ok")
            else:
                failed = True
                lines.append(f"[-]{name} failed: reason withheld")
                log.info("%s check %s failed: %s", endpoint, name, reason)
        if excluded:
            lines.append("warn: some health checks cannot be excluded: no matches for "
                         + ",".join(f'"{n}"' for n in sorted(excluded)))
        if failed:
            return PlainTextResponse("\n".join(lines) + f"\n{endpoint} check failed\n", status_code=500,
                                     headers=NOSNIFF)
        if "verbose" in request.query_params:
            return PlainTextResponse("\n".join(lines) + f"\n{endpoint} check passed\n", headers=NOSNIFF)
        return PlainTextResponse("ok", headers=NOSNIFF)
    return handler


def _one_check(check: Callable[[], str | None]) -> Callable[[Request], Response]:
    """``/<endpoint>/<check>``: ``ok``, or 500 ``internal server error: <reason>``."""
    def handler(request: Request) -> Response:
        reason = _run_check(check)
        if reason is None:
            return PlainTextResponse("ok", headers=NOSNIFF)
        return PlainTextResponse(f"internal server error: {reason}\n", status_code=500, headers=NOSNIFF)
    return handler


def build_app(hooks: EndpointHooks) -> Starlette:
    def metrics(request: Request) -> Response:
        return Response(generate_latest(hooks.registry), media_type=CONTENT_TYPE_LATEST)

    def explain(request: Request) -> Response:
        ns, name = request.path_params["namespace"], request.path_params["name"]
        if request.query_params.get("output") == "text" and hooks.explain_text is not None:
            text = hooks.explain_text(ns, name)
            if text is None:
                return PlainTextResponse(f"pod {ns}/{name} has no scheduling attempt\n", status_code=404)
            return PlainTextResponse(text)
        fixes = request.query_params.get("fixes")
        if fixes is not None and hooks.explain_fixes is not None:
            limit = int(fixes) if fixes.isdigit() else 0
            if limit < 1:
                return JSONResponse({"error": f"fixes={fixes!r}: must be a positive integer"}, status_code=400)
            found = hooks.explain_fixes(ns, name, limit)
            if found is None:
                return JSONResponse({"error": f"pod {ns}/{name} is not pending"}, status_code=404)
            return JSONResponse(found)
        doc = hooks.explain(ns, name)
        if doc is None:
            return JSONResponse({"error": f"pod {ns}/{name} has no scheduling attempt"}, status_code=404)
        return JSONResponse(doc)

    routes: list[BaseRoute] = []
    for endpoint, checks in (("healthz", hooks.healthz), ("livez", hooks.healthz), ("readyz", hooks.readyz)):
        routes.append(Route(f"/{endpoint}", _health(endpoint, checks)))
        routes += [Route(f"/{endpoint}/{name}", _one_check(check)) for name, check in checks]
    return Starlette(routes=[
        *routes,
        Route("/metrics", metrics),
        Route("/debug/explain/{namespace}/{name}", explain),
        *hooks.extra_routes,
    ])


def check_tls_files(cert: str, key: str) -> None:
    """ValueError naming the files unless they hold a certificate and its private key."""
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise ValueError(f"{cert}, {key}: not a certificate and its key: "
                         f"{getattr(exc, 'strerror', None) or exc}") from None


class EndpointServer:
    """uvicorn serving :func:`build_app` in a daemon thread; behind ``auth`` (the delegated
    authentication and authorization, :mod:`.delegation`) when given; over HTTPS with
    ``tls`` (a certificate file and its key file, checked here: ValueError naming the file)."""

    def __init__(self, hooks: EndpointHooks, host: str = "0.0.0.0", port: int = 10259,
                 auth: Callable[[ASGIApp], ASGIApp] | None = None, tls: tuple[str, str] | None = None) -> None:
        ssl_options: dict[str, Any] = {}
        if tls is not None:
            check_tls_files(*tls)
            ssl_options = {"ssl_certfile": tls[0], "ssl_keyfile": tls[1]}
        self.sock, address = listen(host, port)
        self.port = int(self.sock.getsockname()[1])
        self.url = f"{'https' if tls else 'http'}://{address}"
        self.bound = str(self.sock.getsockname()[0])  # the address it really listens on
        app: ASGIApp = build_app(hooks)
        if auth is not None:
            app = auth(app)
        config = uvicorn.Config(app, http=with_header_timeout(), loop="asyncio", lifespan="off", access_log=False,
                                log_level="warning", limit_concurrency=64, timeout_keep_alive=30,
                                timeout_graceful_shutdown=2, server_header=False, **ssl_options)
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = start_server_thread(self._server, self.sock, "endpoints", wait_seconds=4.0)

    def stop(self) -> None:
        stop_server_thread(self._server, self._thread, self.sock)


def start_server_thread(server: uvicorn.Server, sock: socket.socket, name: str,
                        wait_seconds: float) -> threading.Thread:
    """Run ``server`` on ``sock`` in a daemon thread; wait (up to ``wait_seconds``) until it
    has started or its thread has died."""
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=name, daemon=True)
    thread.start()
    for _ in range(int(wait_seconds / 0.01)):
        if server.started or not thread.is_alive():
            break
        threading.Event().wait(0.01)
    return thread


def stop_server_thread(server: uvicorn.Server, thread: threading.Thread | None, sock: socket.socket) -> None:
    """Ask ``server`` to exit, give its thread 5 s, close its socket."""
    server.should_exit = True
    if thread is not None:
        thread.join(5)
    sock.close()
