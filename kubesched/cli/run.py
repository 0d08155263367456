"""``kubesched run``: kubesched as a secondary scheduler in a Kubernetes cluster.

It connects with ``--kubeconfig`` (or, without it, the in-cluster service account when
running in a pod, else $KUBECONFIG / ~/.kube/config), schedules the pods whose
``spec.schedulerName`` names one of the configuration's profiles, and stops gracefully on
SIGINT/SIGTERM (bindings in flight finish or are released).

No leader election yet: run a single replica.
"""

from __future__ import annotations

import argparse
import logging
import signal
import threading
from types import FrameType
from typing import Any

from kubesched.api.errors import KubeschedError

log = logging.getLogger(__name__)


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "run", help="schedule pods in a Kubernetes cluster (no leader election yet: one replica)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kubeconfig", metavar="PATH", default="",
                   help="kubeconfig (default: in-cluster service account, else $KUBECONFIG or ~/.kube/config)")
    p.add_argument("--config", metavar="FILE", required=True,
                   help="KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)")
    p.add_argument("--metrics-port", type=int, default=0, metavar="N",
                   help="serve the scheduler's Prometheus metrics on :N/metrics (default: off)")


def run(args: argparse.Namespace) -> int:
    from kubesched.cluster.kube import KubeClient
    from kubesched.config import load_config
    from kubesched.live import LiveScheduler
    from kubesched.plugins.registry import in_tree_registry

    if not 0 <= args.metrics_port <= 65535:
        raise KubeschedError(f"--metrics-port: {args.metrics_port} is not a port")
    registry = in_tree_registry()
    config = load_config(args.config, registry)
    cc = config.client_connection
    client = KubeClient.connect(args.kubeconfig, qps=cc.qps, burst=cc.burst)
    metrics_server: Any = None
    try:
        try:
            live = LiveScheduler(config, client, registry=registry)
        except KubeschedError as exc:  # a profile that cannot be built: name the file
            raise KubeschedError(f"{args.config}: {exc}") from exc
        if args.metrics_port:
            from prometheus_client import start_http_server

            try:
                metrics_server, _ = start_http_server(args.metrics_port, registry=live.metrics.registry)
            except OSError as exc:
                raise KubeschedError(f"cannot serve metrics on port {args.metrics_port}: "
                                     f"{exc.strerror or exc}") from None
        stop = threading.Event()

        def on_signal(signum: int, frame: FrameType | None) -> None:
            stop.set()

        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            live.start()
            while not stop.is_set():
                if live.wait_ready(0.2):
                    print(f"kubesched scheduler running (profiles: {', '.join(live.profiles)}; "
                          f"{len(live.nodes)} nodes, {len(live.pods)} pods)", flush=True)
                    break
            stop.wait()
            log.info("signal received: stopping")
            live.stop()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
    finally:
        if metrics_server is not None:
            metrics_server.shutdown()
            metrics_server.server_close()
        client.close()
    print("kubesched scheduler stopped", flush=True)
    return 0
