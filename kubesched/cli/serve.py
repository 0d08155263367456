"""``kubesched serve``: a Kubernetes-compatible API server on this machine.

It runs the API server over a durable store in ``--data-dir`` (default
``.kubesched/``), writes ``DATA_DIR/kubeconfig`` for kubectl, creates ``--nodes``
Node objects, and runs the kubesched scheduler inside (``--config``; ``--no-scheduler``
leaves it out), which lists, watches and binds through the server's HTTP API. Ctrl-C or
SIGTERM stops it cleanly; starting it again with the same data directory brings every
object back at the same resourceVersions.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kubesched.api.errors import KubeschedError, QuantityError
from kubesched.api.kubeversion import NEWEST
from kubesched.api.quantity import parse_quantity
from kubesched.cli import serve_cluster, versionargs
from kubesched.cli.serve_scheduler import build_scheduler, load_scheduler_config
from kubesched.server.apiserver.http.inflight import DEFAULT_MAX_MUTATING, DEFAULT_MAX_READONLY, DEFAULT_MAX_WATCHES

if TYPE_CHECKING:
    from kubesched.server.apiserver.server import ApiServer
    from kubesched.framework.features import Features
    from kubesched.live import LiveOptions
    from kubesched.ui import ServeUi

log = logging.getLogger(__name__)

DEFAULT_DATA_DIR = ".kubesched"
DEFAULT_PORT = 6443


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("serve", help="run a Kubernetes-compatible API server that kubectl can drive")
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR, metavar="DIR",
                   help=f"store, kubeconfig and certificates (default {DEFAULT_DATA_DIR}/)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1); any other than a loopback address needs "
                        "--token-file or --tls, or --insecure-allow-any-host")
    p.add_argument("--insecure-allow-any-host", action="store_true",
                   help="listen on a non-loopback --host without authentication: anyone who can reach the "
                        "address may read and change everything")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free)")
    p.add_argument("--token-file", metavar="FILE",
                   help="require a bearer token from FILE (lines token[,user,uid,\"groups\"]; created with a "
                        "random token if missing); implies --tls, as kubectl sends tokens only over HTTPS")
    p.add_argument("--tls", action="store_true",
                   help="serve HTTPS with a generated CA (DATA_DIR/pki) and require a client certificate it "
                        "signed (the kubeconfig carries one) or a token")
    p.add_argument("--authorization-mode", choices=("AlwaysAllow", "RBAC"), default="AlwaysAllow",
                   help="AlwaysAllow (default: every authenticated request may do anything) or RBAC (Roles, "
                        "ClusterRoles and their bindings decide; system:masters, the kubeconfig's "
                        "certificate group, may do anything)")
    p.add_argument("--api-audiences", default="", metavar="A,B",
                   help="identifiers of the API: a ServiceAccount token used against it must be bound to at least "
                        "one of them (default: the service-account issuer, "
                        "https://kubernetes.default.svc.cluster.local, as kube-apiserver)")
    p.add_argument("--nodes", type=int, default=0, metavar="N", help="create N nodes at start-up if absent")
    p.add_argument("--node-cpu", default="8", metavar="Q", help="cpu of each created node (default 8)")
    p.add_argument("--node-memory", default="32Gi", metavar="Q", help="memory of each created node (default 32Gi)")
    p.add_argument("--node-pods", type=int, default=110, metavar="N", help="pods per created node (default 110)")
    p.add_argument("--watch-history", type=int, default=10_000, metavar="N",
                   help="revisions kept for resuming watches (older resumes get 410 Gone; default 10000)")
    p.add_argument("--no-namespace-autoprovision", action="store_true",
                   help="reject objects in namespaces that do not exist (default: create the namespace)")
    p.add_argument("--bookmark-interval", type=float, default=60.0, metavar="SECONDS",
                   help="seconds between watch bookmarks (default 60)")
    p.add_argument("--max-requests-inflight", type=int, default=DEFAULT_MAX_READONLY, metavar="N",
                   help=f"read-only requests served at once, watches not counted; more get 429 "
                        f"(default {DEFAULT_MAX_READONLY}, as kube-apiserver)")
    p.add_argument("--max-mutating-requests-inflight", type=int, default=DEFAULT_MAX_MUTATING, metavar="N",
                   help=f"writes served at once; more get 429 (default {DEFAULT_MAX_MUTATING}, as kube-apiserver)")
    p.add_argument("--max-watches", type=int, default=DEFAULT_MAX_WATCHES, metavar="N",
                   help=f"watches open at once; more get 429 (default {DEFAULT_MAX_WATCHES})")
    serve_cluster.add_flags(p)
    p.add_argument("--sync", action="store_true",
                   help="follow the live cluster of --kubeconfig, read-only towards it (implies --no-controllers, "
                        "--no-node-agent, --no-node-lifecycle; serve's scheduler places only the pods created here)")
    p.add_argument("--kubeconfig", metavar="FILE", default=None,
                   help="with --sync: the live cluster's kubeconfig (default: $KUBECONFIG, ~/.kube/config)")
    p.add_argument("--context", metavar="NAME", help="with --sync: the kubeconfig context")
    p.add_argument("--from", dest="from_path", metavar="SNAPSHOT|RECORDING",
                   help="start an empty cluster with the objects of a `kubesched snapshot` (file or directory) or "
                        "the starting state of a `kubesched record` recording")
    p.add_argument("--config", metavar="FILE",
                   help="KubeSchedulerConfiguration of the scheduler inside (default: upstream's defaults)")
    versionargs.add_arguments(p, default=f"{NEWEST}, or $KUBESCHED_KUBERNETES_VERSION")
    p.add_argument("--no-ui", action="store_true", help="do not serve the web UI at / (default: served)")
    p.add_argument("--check-store", action="store_true",
                   help="check DATA_DIR/store.db with SQLite's integrity check (read-only), print what it finds "
                        "and exit: 0 if the store is sound, 1 if not; serves nothing")
    p.add_argument("--no-scheduler", action="store_true",
                   help="run without the scheduler (pods stay Pending unless another scheduler binds them)")
    p.add_argument("--scheduler-process", action="store_true",
                   help="run the scheduler as a child process against the server's URL (its own interpreter: "
                        "faster with more than one core; its metrics are not on the server's /metrics)")
    from kubesched.cli import tiebreak
    from kubesched.cli.explain_remote import add_live_flags

    add_live_flags(p)
    tiebreak.add_flags(p)


def run(args: argparse.Namespace) -> int:
    from kubesched.server.apiserver.server import ApiServer, ServeOptions

    if args.check_store:
        return check_store(Path(args.data_dir).resolve() / "store.db")

    for flag, value in (("--node-cpu", args.node_cpu), ("--node-memory", args.node_memory)):
        try:
            parse_quantity(value)
        except QuantityError as exc:
            raise KubeschedError(f"{flag}: {exc.message}") from None
    if args.nodes < 0 or args.node_pods <= 0 or args.watch_history <= 0:
        raise KubeschedError("--nodes, --node-pods and --watch-history must be positive")
    for flag in ("max_requests_inflight", "max_mutating_requests_inflight", "max_watches"):
        if getattr(args, flag) <= 0:
            raise KubeschedError(f"--{flag.replace('_', '-')} must be positive")
    _check_host(args)
    _check_sync_flags(args)
    fts = versionargs.features(args)
    config = None if args.no_scheduler else load_scheduler_config(args.config)
    node_pools = serve_cluster.pools(args)
    data_dir = Path(args.data_dir).resolve()
    ui = None if args.no_ui else _web_ui(args)
    opts = ServeOptions(data_dir=data_dir, host=args.host, port=args.port, tls=args.tls,
                        token_file=Path(args.token_file).resolve() if args.token_file else None,
                        watch_history=args.watch_history, bookmark_interval=args.bookmark_interval,
                        autoprovision_namespaces=not args.no_namespace_autoprovision,
                        max_requests_inflight=args.max_requests_inflight,
                        max_mutating_requests_inflight=args.max_mutating_requests_inflight,
                        max_watches=args.max_watches,
                        authorization_mode=args.authorization_mode,
                        api_audiences=tuple(a.strip() for a in args.api_audiences.split(",") if a.strip()),
                        extra_routes=ui.routes() if ui is not None else [],
                        self_authorized=ui.authorizes_itself if ui is not None else None,
                        kubernetes_version=fts.version,
                        clear_nominated_on_binding=fts.enabled("ClearingNominatedNodeNameAfterBinding"))
    open_files = _raise_open_files()
    try:
        server = ApiServer(opts)
    except ValueError as exc:  # an unusable token file
        raise KubeschedError(f"--token-file: {exc}") from None
    except OSError as exc:
        raise KubeschedError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    if args.from_path:
        _load_from(server, args.from_path)
    if args.sync:
        _follow(server, args)
    if server.max_watches < args.max_watches:
        print(f"kubesched: warning: at most {open_files} open files (ulimit -n): serving at most "
              f"{server.connections.limit} connections and {server.max_watches} watches", file=sys.stderr)
    serve_cluster.create_nodes(server.registry, node_pools)
    server.components.extend(serve_cluster.components(args, fts.version))
    component = None
    if config is not None:
        try:  # built here in both cases, so that a profile that cannot be built is an error now
            component = build_scheduler(args.config, config, server.kubeconfig, _live_options(args, fts))
        except KubeschedError:
            server.store.close()
            server.sock.close()
            raise
        if args.scheduler_process:
            from kubesched.cli import tiebreak
            from kubesched.cli.serve_process import SchedulerProcess

            component.live.client.close()  # the child builds its own
            server.components.append(SchedulerProcess(server.kubeconfig, args.config, args.verbose,
                                                      kubernetes_version=fts.version,
                                                      feature_gates=args.feature_gates,
                                                      extra_args=tiebreak.argv(args)))
            component = None  # a child scheduler: the web UI sees the API objects only, no queue or explain
        else:
            server.components.append(component)
    if ui is not None:
        ui.attach(server.registry, component, server.state.stopping)
    if args.token_file and not args.tls:
        print(f"kubesched: --token-file implies --tls: serving HTTPS with the CA in {data_dir / 'pki'}",
              flush=True)
    if args.insecure_allow_any_host and not _authenticated(args):
        print(f"kubesched: warning: listening on {args.host} without authentication (--tls or --token-file): "
              "anyone who can reach it may read and change everything", file=sys.stderr)

    def ready() -> None:
        print(f"kubesched API server listening on {_listening(server)} (store: {data_dir / 'store.db'}, "
              f"resourceVersion {server.store.rv})")
        print(f"kubeconfig: {server.kubeconfig}")
        print(f"export KUBECONFIG={server.kubeconfig}", flush=True)
        if ui is not None:
            print(f"web UI: {server.url}/", flush=True)

    server.serve(on_ready=ready)
    print("kubesched API server stopped", flush=True)
    return 0


def _authenticated(args: argparse.Namespace) -> bool:
    """Whether requests must carry credentials (RBAC implies TLS and its client certificates)."""
    return bool(args.token_file or args.tls or args.authorization_mode == "RBAC")


def _check_host(args: argparse.Namespace) -> None:
    """Refuse to serve a non-loopback address without authentication unless asked to."""
    from kubesched.server.apiserver.http.browser import is_loopback

    if is_loopback(args.host) or _authenticated(args) or args.insecure_allow_any_host:
        return
    raise KubeschedError(
        f"--host {args.host} is not a loopback address: without authentication anyone who can reach it may read "
        "and change everything. Add --token-file or --tls, or --insecure-allow-any-host to serve it anyway")


def _listening(server: "ApiServer") -> str:
    """The address the socket is bound to, as a URL; for a wildcard address, also the URL
    clients on this machine use (the kubeconfig's)."""
    from kubesched.server.apiserver.http.browser import is_wildcard

    host, port = server.sock.getsockname()[:2]
    if not is_wildcard(host):
        return server.url
    shown = f"[{host}]" if ":" in host else host
    scheme = server.url.split("://", 1)[0]
    return f"{scheme}://{shown}:{port} (every address of this machine; the kubeconfig names {server.url})"


def _load_from(server: "ApiServer", path: str) -> None:
    """``--from``: the snapshot's objects, created before any component starts."""
    from kubesched.cli import serve_from

    try:
        objects = serve_from.read_objects(path)
        loaded = serve_from.load(server.registry, objects, path)
    except KubeschedError:
        server.store.close()
        server.sock.close()
        raise
    print(f"loaded from {path}: {loaded.summary()}", flush=True)


def _check_sync_flags(args: argparse.Namespace) -> None:
    if not args.sync:
        if args.kubeconfig is not None or args.context is not None:
            raise KubeschedError("--kubeconfig and --context are for --sync (serve writes its own kubeconfig)")
        return
    if args.from_path or args.nodes or args.node_pool:
        raise KubeschedError("--sync follows a live cluster: it excludes --from, --nodes and --node-pool")
    args.no_controllers = args.no_node_agent = args.no_node_lifecycle = True


def _follow(server: "ApiServer", args: argparse.Namespace) -> None:
    """``--sync``: the live cluster listed now (an unreachable one is an error before serving),
    then followed by a server component."""
    from kubesched.cli import serve_sync
    from kubesched.cluster.kube import KubeClient
    from kubesched.cluster.kube.errors import KubeClientError

    try:
        serve_sync.check_target(server.registry)
        try:
            client = KubeClient.connect(args.kubeconfig or "", context=args.context)
        except KubeClientError as exc:
            raise KubeschedError(f"--sync: {exc}") from None
        sync = serve_sync.LiveSync(client, serve_sync.Mirror(server.registry, client.host))
        try:
            warnings = sync.check()
        except KubeschedError:
            client.close()
            raise
    except KubeschedError:
        server.store.close()
        server.sock.close()
        raise
    for w in warnings:
        print(f"kubesched: warning: --sync: {w}", file=sys.stderr)
    server.components.insert(0, sync)


def check_store(path: Path) -> int:
    """``--check-store``: SQLite's ``PRAGMA integrity_check`` of the store, read-only."""
    from kubesched.server.store.integrity import integrity_check

    problems = integrity_check(path)
    if not problems:
        print(f"{path}: ok")
        return 0
    for line in problems:
        print(f"{path}: {line}", file=sys.stderr)
    return 1


def _raise_open_files() -> int:
    """Every open watch and request holds a socket: raise the soft limit on open files to
    the hard limit (as Go programs such as kube-apiserver do at start); return it. The API
    server keeps its connections below it (:mod:`kubesched.server.apiserver.http.connlimit`)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return 0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):  # above the kernel's nr_open: keep what there is
            pass
    return int(soft)


def _web_ui(args: argparse.Namespace) -> "ServeUi":
    from kubesched.ui import ServeUi

    text = ""
    if args.config and not args.no_scheduler:
        try:
            text = Path(args.config).read_text(encoding="utf-8")
        except OSError:
            text = ""  # load_config has read it already; it reports unreadable files itself
    return ServeUi(text)


def _live_options(args: argparse.Namespace, fts: "Features") -> "LiveOptions":
    from kubesched.cli import tiebreak
    from kubesched.cli.explain_remote import live_options
    from kubesched.live import LiveOptions

    return LiveOptions(**live_options(args), **tiebreak.options(args), features=fts)
