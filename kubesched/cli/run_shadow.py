"""``kubesched run --shadow``: kubesched beside another scheduler, deciding for every pod that
scheduler binds and comparing, never writing to the cluster (:mod:`kubesched.live.shadow`).

No leader election (nothing is written, so replicas cannot conflict). Endpoints on --port,
authenticated and authorized as ``run``'s are: /healthz, /readyz, /metrics (with ``kubesched_shadow_decisions_total{result}``),
/debug/explain/<namespace>/<pod> (the shadow's decision for that pod) and /debug/shadow (the
counts and the explanation of each verdict other than ``agree``). ``--shadow-log FILE``
appends one JSON line per decision.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType
from typing import IO, TYPE_CHECKING, Any

from kubesched.api.errors import KubeschedError

if TYPE_CHECKING:
    from kubesched.live.delegation import PathMatcher


def run(args: argparse.Namespace, allow: "PathMatcher") -> int:
    """``allow``: the paths open to anyone (run's ``--authorization-always-allow-paths``, checked)."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from kubesched.cli import tiebreak
    from kubesched.cli.explain_remote import live_options
    from kubesched.cli.render import document_text
    from kubesched.cluster.kube import KubeClient
    from kubesched.config import load_config
    from kubesched.live import LiveOptions
    from kubesched.cli.run_endpoints import start_endpoints
    from kubesched.live.endpoints import EndpointHooks, EndpointServer
    from kubesched.live.shadow import ShadowScheduler
    from kubesched.plugins.registry import in_tree_registry

    registry = in_tree_registry()
    config = load_config(args.config, registry)
    cc = config.client_connection
    log_file: IO[str] | None = None
    if args.shadow_log:
        try:
            log_file = open(args.shadow_log, "a", encoding="utf-8")
        except OSError as exc:
            raise KubeschedError(f"--shadow-log {args.shadow_log}: {exc.strerror or exc}") from None
    client = KubeClient.connect(args.kubeconfig, qps=cc.qps, burst=cc.burst)
    endpoints: EndpointServer | None = None
    try:
        try:
            shadow = ShadowScheduler(config, client, LiveOptions(**live_options(args), **tiebreak.options(args)),
                                     registry, log_file=log_file)
        except KubeschedError as exc:
            raise KubeschedError(f"{args.config}: {exc}") from exc
        if args.port >= 0:
            def text(ns: str, name: str) -> str | None:
                doc = shadow.live.explain(ns, name)
                return None if doc is None else document_text(doc)

            def synced() -> str | None:
                return None if shadow.synced else "informers not synced"

            async def debug_shadow(request: Request) -> JSONResponse:
                return JSONResponse(shadow.document())

            hooks = EndpointHooks(healthz=[("ping", lambda: None)],
                                  readyz=[("ping", lambda: None), ("sched-handler-sync", synced)],
                                  registry=shadow.live.metrics.registry, explain=shadow.live.explain,
                                  explain_text=text, extra_routes=[Route("/debug/shadow", debug_shadow)])
            endpoints = start_endpoints(args, hooks, client, allow)  # as run's: delegated auth, TLS
        _run_until_signal(shadow)
    finally:
        if endpoints is not None:
            endpoints.stop()
        client.close()
        if log_file is not None:
            log_file.close()
    print("kubesched shadow stopped", flush=True)
    return 0


def _run_until_signal(shadow: Any) -> None:
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        shadow.start()
        while not stop.wait(0.2):
            if shadow.synced:
                live = shadow.live
                print(f"kubesched shadow running (profiles: {', '.join(live.profiles)}; {len(live.nodes)} nodes, "
                      f"{len(live.pods)} pods): comparing the bindings of other schedulers, writing nothing",
                      flush=True)
                break
        stop.wait()
        shadow.stop()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    print(f"shadow decisions: {dict(shadow.counts)}", file=sys.stderr)
