"""The HTTP side of ``kubesched extender``: extender/v1 verbs, health and metrics.

Routes (a kube-scheduler extender entry names them: ``urlPrefix: http://HOST:PORT``,
``filterVerb: filter``, ``prioritizeVerb: prioritize``, ``bindVerb: bind``):

``POST /filter``      ExtenderArgs → ExtenderFilterResult (bad args or a plugin error in ``Error``)
``POST /prioritize``  ExtenderArgs → HostPriorityList (bad args: 400; a plugin error: 500;
                      upstream ignores a failed Prioritize)
``POST /bind``        ExtenderBindingArgs → ExtenderBindingResult (a Binding posted through
                      the kubeconfig; without one, an ``Error``)
``GET /healthz``      ``ok`` once the node/pod cache (if any) has synced, else 500
``GET /metrics``      ``kubesched_extender_requests_total{verb,code}`` and
                      ``kubesched_extender_request_duration_seconds{verb}`` (Prometheus)

Served by uvicorn in a thread on a socket bound before it starts, TLS when given a
certificate and key. Evaluations run in Starlette's thread pool, one at a time (the
plugins share one snapshot).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from kubesched.api.errors import KubeschedError
from kubesched.server.apiserver.http.httpproto import listen, with_header_timeout
from kubesched.cluster.kube.client import KubeClient
from kubesched.cluster.kube.resources import PODS
from kubesched.live.endpoints import start_server_thread, stop_server_thread
from kubesched.live.plugin_extender import ArgsError, EvalError, PluginExtender, decode_args, filter_result

log = logging.getLogger(__name__)

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class ExtenderMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("kubesched_extender_requests_total", "Extender requests by verb and HTTP code.",
                                ["verb", "code"], registry=self.registry)
        self.latency = Histogram("kubesched_extender_request_duration_seconds",
                                 "Extender request latency by verb, in seconds.", ["verb"],
                                 buckets=BUCKETS, registry=self.registry)


def bind(client: KubeClient | None, body: Any) -> dict[str, Any]:
    """ExtenderBindingArgs {PodName, PodNamespace, PodUID, Node} → ExtenderBindingResult."""
    if client is None:
        return {"Error": "this extender binds through a kubeconfig: start it with --kubeconfig"}
    if not isinstance(body, dict):
        return {"Error": "ExtenderBindingArgs: expected a JSON object"}
    low = {str(k).lower(): v for k, v in body.items()}
    name, ns, uid, node = (low.get(k) for k in ("podname", "podnamespace", "poduid", "node"))
    for field, value in (("PodName", name), ("PodNamespace", ns), ("Node", node)):
        if not isinstance(value, str) or not value:
            return {"Error": f"ExtenderBindingArgs.{field}: required"}
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if isinstance(uid, str) and uid:
        meta["uid"] = uid
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": meta,
               "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
    try:
        client.request("POST", PODS.object_path(str(ns), str(name), "binding"), body=binding)
    except KubeschedError as exc:
        return {"Error": str(exc)}
    return {"Error": ""}


def build_app(ext: PluginExtender, client: KubeClient | None, metrics: ExtenderMetrics) -> Starlette:
    def verb(name: str, handle: Callable[[Any], tuple[int, Any]]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            started = time.perf_counter()
            raw = await request.body()
            try:
                body = json.loads(raw) if raw.strip() else None
            except ValueError as exc:
                body = _BadJSON(f"{name}: the request body is not JSON: {exc}")
            code, answer = await run_in_threadpool(handle, body)
            metrics.requests.labels(name, str(code)).inc()
            metrics.latency.labels(name).observe(time.perf_counter() - started)
            if isinstance(answer, str):
                return PlainTextResponse(answer + "\n", status_code=code)
            return JSONResponse(answer, status_code=code)
        return endpoint

    def do_filter(body: Any) -> tuple[int, Any]:
        if isinstance(body, _BadJSON):
            return 200, filter_result(None, None, {}, {}, body.message)
        try:
            args = decode_args(body)
        except ArgsError as exc:
            return 200, filter_result(None, None, {}, {}, f"filter: {exc}")
        return 200, ext.filter(args)

    def do_prioritize(body: Any) -> tuple[int, Any]:
        try:
            if isinstance(body, _BadJSON):
                raise ArgsError(body.message)
            return 200, ext.prioritize(decode_args(body))
        except ArgsError as exc:
            return 400, f"prioritize: {exc}"
        except EvalError as exc:
            return 500, f"prioritize: {exc}"

    def do_bind(body: Any) -> tuple[int, Any]:
        if isinstance(body, _BadJSON):
            return 200, {"Error": body.message}
        return 200, bind(client, body)

    def healthz(request: Request) -> Response:
        if ext.synced():
            return PlainTextResponse("ok")
        return PlainTextResponse("[-]informer-sync failed: the node/pod cache has not synced yet\n"
                                 "healthz check failed\n", status_code=500)

    def scrape(request: Request) -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return Starlette(routes=[
        Route("/filter", verb("filter", do_filter), methods=["POST"]),
        Route("/prioritize", verb("prioritize", do_prioritize), methods=["POST"]),
        Route("/bind", verb("bind", do_bind), methods=["POST"]),
        Route("/healthz", healthz),
        Route("/metrics", scrape),
    ])


class _BadJSON:
    def __init__(self, message: str) -> None:
        self.message = message


class ExtenderServer:
    """uvicorn serving :func:`build_app` in a daemon thread; TLS with ``cert_file`` and
    ``key_file``."""

    def __init__(self, ext: PluginExtender, client: KubeClient | None, host: str = "127.0.0.1", port: int = 8888,
                 cert_file: str = "", key_file: str = "") -> None:
        self.metrics = ExtenderMetrics()
        self.sock, address = listen(host, port)
        self.port = int(self.sock.getsockname()[1])
        self.url = f"{'https' if cert_file else 'http'}://{address}"
        config = uvicorn.Config(build_app(ext, client, self.metrics), http=with_header_timeout(), loop="asyncio",
                                lifespan="off", access_log=False, log_level="warning", limit_concurrency=256,
                                timeout_keep_alive=30, timeout_graceful_shutdown=2, server_header=False,
                                ssl_certfile=cert_file or None, ssl_keyfile=key_file or None)
        if cert_file:
            config.load()  # reads the certificate now: a bad file is a startup error, not a dead thread
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = start_server_thread(self._server, self.sock, "extender-http", wait_seconds=10.0)

    def stop(self) -> None:
        stop_server_thread(self._server, self._thread, self.sock)
