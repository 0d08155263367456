"""``kubesched run``: kubesched as a secondary scheduler in a Kubernetes cluster.

It connects with ``--kubeconfig`` (or, without it, the in-cluster service account when
running in a pod, else $KUBECONFIG / ~/.kube/config) and schedules the pods whose
``spec.schedulerName`` names one of the configuration's profiles; pods of other
schedulers are left alone, but the resources they use are counted.

With ``leaderElection.leaderElect`` (the default) replicas elect a leader with a
``coordination.k8s.io/v1`` Lease (``resourceNamespace``/``resourceName``, default
kube-system/kube-scheduler: give kubesched its own, as deploy/configmap.yaml does); only
the leader schedules, the others keep their caches warm and take over when it dies.

Endpoints on --port: /healthz, /readyz, /metrics, /debug/explain/<namespace>/<pod>
(``?output=text`` for the table). As kube-scheduler's, they authenticate and authorize
through the API server (TokenReview and SubjectAccessReview: give kubesched's account
``system:auth-delegator``, as deploy/rbac.yaml does); /healthz, /readyz and /livez are open
to anyone (``--authorization-always-allow-paths``). Where the API server will not answer
those reviews, the endpoints listen on 127.0.0.1 only, and say so. SIGINT/SIGTERM stop it
gracefully: bindings in flight finish or are released, then the lease is given up.
"""

from __future__ import annotations

import argparse
import functools
import logging
import signal
import threading
from types import FrameType
from typing import TYPE_CHECKING

from kubesched.api.errors import KubeschedError
from kubesched.cli import versionargs
from kubesched.cli.run_endpoints import start_endpoints

if TYPE_CHECKING:
    from kubesched.live.delegation import PathMatcher

log = logging.getLogger(__name__)

DEFAULT_PORT = 10259  # kube-scheduler's port
ALWAYS_ALLOW = ("/healthz", "/readyz", "/livez")  # kube-scheduler's --authorization-always-allow-paths


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "run", help="schedule pods in a Kubernetes cluster (a secondary scheduler, with leader election)",
        description=(__doc__ or "").replace("``", "`"), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kubeconfig", metavar="PATH", default="",
                   help="kubeconfig (default: in-cluster service account, else $KUBECONFIG or ~/.kube/config)")
    p.add_argument("--config", metavar="FILE", required=True,
                   help="KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)")
    p.add_argument("--bind-address", metavar="ADDR", default="0.0.0.0",
                   help="address of the endpoints (default 0.0.0.0)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, metavar="N",
                   help=f"port of /healthz, /readyz, /metrics and /debug/explain (default {DEFAULT_PORT}; "
                        "0: any free port; -1: none)")
    p.add_argument("--authorization-always-allow-paths", metavar="PATHS", default=",".join(ALWAYS_ALLOW),
                   help="paths of the endpoints anyone may read without authorization, comma-separated; an "
                        f"entry ending in * matches by prefix (default {','.join(ALWAYS_ALLOW)}, as kube-scheduler)")
    p.add_argument("--tls-cert-file", metavar="FILE", default="",
                   help="serve the endpoints over HTTPS with this certificate (with --tls-private-key-file); "
                        "without it they speak plain HTTP, and the bearer tokens callers send cross the network "
                        "in clear")
    p.add_argument("--tls-private-key-file", metavar="FILE", default="", help="the key of --tls-cert-file")
    p.add_argument("--ui", action="store_true",
                   help="also serve the web UI (read-only) at / on --port")
    p.add_argument("--identity", metavar="ID", default="",
                   help="this replica's name in the Lease (default: <hostname>_<uuid>, as kube-scheduler)")
    from kubesched.cli import tiebreak
    from kubesched.cli.explain_remote import add_live_flags

    add_live_flags(p)
    versionargs.add_arguments(p, default="the API server's own, from its /version")
    tiebreak.add_flags(p)
    p.add_argument("--shadow", action="store_true",
                   help="decide and explain, never bind, evict, patch or write events: compare each binding another "
                        "scheduler makes with this configuration's decision (/debug/shadow, "
                        "kubesched_shadow_decisions_total); no leader election")
    p.add_argument("--shadow-log", metavar="FILE", help="with --shadow: append one JSON line per decision to FILE")


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:  # load_config read it a moment ago; shown as the defaults' header then
        return ""


def _check_endpoint_flags(args: argparse.Namespace) -> "PathMatcher":
    """The endpoints' flags checked before anything starts; the always-allowed paths."""
    from kubesched.live.delegation import PathMatcher
    from kubesched.live.endpoints import check_tls_files

    if not -1 <= args.port <= 65535:
        raise KubeschedError(f"--port: {args.port} is not a port")
    if args.ui and args.port < 0:
        raise KubeschedError("--ui needs --port (it is served on the endpoints' port)")
    if bool(args.tls_cert_file) != bool(args.tls_private_key_file):
        raise KubeschedError("--tls-cert-file and --tls-private-key-file go together")
    if args.tls_cert_file:
        try:
            check_tls_files(args.tls_cert_file, args.tls_private_key_file)
        except ValueError as exc:
            raise KubeschedError(f"--tls-cert-file: {exc}") from None
    try:
        return PathMatcher([p.strip() for p in args.authorization_always_allow_paths.split(",") if p.strip()])
    except ValueError as exc:
        raise KubeschedError(f"--authorization-always-allow-paths: {exc}") from None


def run(args: argparse.Namespace) -> int:
    from kubesched.cli import tiebreak
    from kubesched.cli.explain_remote import live_options
    from kubesched.cli.render import document_text
    from kubesched.live import LiveOptions
    from kubesched.cluster.kube import KubeClient
    from kubesched.config import load_config
    from kubesched.live.endpoints import EndpointServer
    from kubesched.live.replica import Replica
    from kubesched.plugins.registry import in_tree_registry

    allow = _check_endpoint_flags(args)
    if args.shadow_log and not args.shadow:
        raise KubeschedError("--shadow-log needs --shadow")
    if args.shadow:
        if args.ui:
            raise KubeschedError("--ui and --shadow exclude each other")
        from kubesched.cli import run_shadow

        return run_shadow.run(args, allow)
    registry = in_tree_registry()
    config = load_config(args.config, registry)
    cc = config.client_connection
    client = KubeClient.connect(args.kubeconfig, qps=cc.qps, burst=cc.burst)
    # the release: the flag's, else the server's (asked when the first scheduler is built,
    # after the configuration is checked)
    fts = functools.cache(lambda: versionargs.server_features(args, client))
    # leader election gets a client of its own (its own rate limit), as kube-scheduler's does
    lease_client = KubeClient(client.api, qps=cc.qps, burst=cc.burst)
    endpoints: EndpointServer | None = None
    le = config.leader_election

    def on_event(what: str) -> None:
        if what == "leading":
            live = replica.live
            live.wait_ready(None)
            print(f"kubesched scheduler running (Kubernetes {live.sched.features.version}; "
                  f"profiles: {', '.join(live.profiles)}; "
                  f"{len(live.nodes)} nodes, {len(live.pods)} pods)", flush=True)
        elif what.startswith("standby "):
            print(f"standing by: the lease {le.resource_namespace}/{le.resource_name} is held by "
                  f"{what.split(' ', 1)[1]}", flush=True)
        elif what == "lost":
            print(f"kubesched lost the lease {le.resource_namespace}/{le.resource_name}: "
                  "scheduling stopped; cache rebuilt from the API; candidate again", flush=True)

    try:
        try:
            replica = Replica(config, client, registry=registry, identity=args.identity or None,
                              lease_client=lease_client, on_event=on_event,
                              options=LiveOptions(**live_options(args), **tiebreak.options(args), features=fts))
        except KubeschedError as exc:  # a profile that cannot be built: name the file
            raise KubeschedError(f"{args.config}: {exc}") from exc
        if args.port >= 0:
            hooks = replica.hooks(document_text)
            if args.ui:
                from kubesched.ui import run_routes
                hooks.extra_routes = run_routes(lambda: replica.live, _read_text(args.config))
            endpoints = start_endpoints(args, hooks, client, allow)
        stop = threading.Event()

        def on_signal(signum: int, frame: FrameType | None) -> None:
            stop.set()

        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            if le.leader_elect:
                print(f"candidate for the lease {le.resource_namespace}/{le.resource_name} "
                      f"as {replica.identity}", flush=True)
            replica.start()
            stop.wait()
            log.info("signal received: stopping")
            replica.stop()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
    finally:
        if endpoints is not None:
            endpoints.stop()
        client.close()
    print("kubesched scheduler stopped", flush=True)
    return 0
