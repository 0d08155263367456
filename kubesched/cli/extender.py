"""``kubesched extender``: serve one profile's Filter and Score plugins as a scheduler extender.

A stock kube-scheduler (or kubesched) configured with

    extenders:
    - urlPrefix: http://HOST:PORT
      filterVerb: filter
      prioritizeVerb: prioritize
      weight: 1
      nodeCacheCapable: false   # true needs --kubeconfig here

gets the decisions of the profile's plugins (built-in, or custom Python ones named
``package.module:Class``) through extender/v1 JSON. PreFilter runs before Filter, PreScore
before Score. Prioritize answers ``round(T × 10 / (100 × W))``: the weighted total ``T`` of
the Score plugins on extender/v1's 0..10 scale (``W``: the sum of their weights).

With ``--kubeconfig`` the extender keeps a node and pod cache (list + watch, as the
scheduler does): names-only requests (``nodeCacheCapable: true``) work, and the plugins
see the pods on each node. Without it, only the Node objects in the request are known,
with no pods. ``bindVerb: bind`` posts the Binding through the kubeconfig.

The plugins decide as --kubernetes-version's release of kube-scheduler (with --feature-gates
applied): without the flag, the cluster's own release with --kubeconfig, else the newest.

Endpoints: POST /filter, /prioritize, /bind; GET /healthz, /metrics. TLS with
--tls-cert-file and --tls-private-key-file. SIGINT/SIGTERM stop it.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import signal
import ssl
import threading
from types import FrameType

from kubesched.api.errors import KubeschedError
from kubesched.cli import versionargs

log = logging.getLogger(__name__)

DEFAULT_PORT = 8888


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "extender", help="serve a profile's Filter and Score plugins as a scheduler extender (extender/v1)",
        description=(__doc__ or "").replace("``", "`"), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", metavar="FILE", required=True,
                   help="KubeSchedulerConfiguration whose profile's plugins are served")
    p.add_argument("--profile", metavar="NAME", default="",
                   help="schedulerName of the profile to serve (default: the first)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, metavar="N",
                   help=f"port (default {DEFAULT_PORT}; 0: any free port)")
    p.add_argument("--bind-address", metavar="ADDR", default="127.0.0.1", help="address (default 127.0.0.1)")
    p.add_argument("--kubeconfig", metavar="PATH", default="",
                   help="keep a node+pod cache from this cluster (list/watch) and bind through it")
    p.add_argument("--tls-cert-file", metavar="PATH", default="", help="serve HTTPS with this certificate")
    p.add_argument("--tls-private-key-file", metavar="PATH", default="", help="... and this key")
    versionargs.add_arguments(p, default="the --kubeconfig cluster's own, from its /version; else the newest")


def run(args: argparse.Namespace) -> int:
    from kubesched.config import load_config
    from kubesched.live.extender_http import ExtenderServer
    from kubesched.live.plugin_extender import PluginExtender
    from kubesched.plugins.registry import in_tree_registry

    if not 0 <= args.port <= 65535:
        raise KubeschedError(f"--port: {args.port} is not a port")
    if bool(args.tls_cert_file) != bool(args.tls_private_key_file):
        raise KubeschedError("--tls-cert-file and --tls-private-key-file go together")
    registry = in_tree_registry()
    config = load_config(args.config, registry)
    if config.extenders:
        log.warning("%s: extenders: ignored (this process serves the profile's own plugins)", args.config)
    config = dataclasses.replace(config, extenders=())
    # the release: the flag's; else the cluster's (asked once connected); else the default
    asks_server = bool(args.kubeconfig) and not args.kubernetes_version
    fts = None if asks_server else versionargs.features(args)
    client = None
    live = None
    server = None
    try:
        if args.kubeconfig:
            from kubesched.cluster.kube import KubeClient
            from kubesched.live import LiveOptions, LiveScheduler

            client = KubeClient.connect(args.kubeconfig)
            if fts is None:
                fts = versionargs.server_features(args, client)
            try:
                live = LiveScheduler(config, client, LiveOptions(seed=0, explain=False, features=fts), registry)
            except KubeschedError as exc:
                raise KubeschedError(f"{args.config}: {exc}") from exc
        assert fts is not None
        try:
            ext = PluginExtender(config, registry, args.profile or None, live, fts)
        except KubeschedError as exc:
            raise KubeschedError(f"{args.config}: {exc}") from exc
        if args.tls_cert_file:
            try:
                ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(args.tls_cert_file, args.tls_private_key_file)
            except (OSError, ssl.SSLError) as exc:
                raise KubeschedError(f"--tls-cert-file {args.tls_cert_file} / --tls-private-key-file "
                                     f"{args.tls_private_key_file}: {exc.strerror or exc}") from None
        try:
            server = ExtenderServer(ext, client, args.bind_address, args.port,
                                    args.tls_cert_file, args.tls_private_key_file)
        except OSError as exc:
            raise KubeschedError(f"cannot serve on {args.bind_address}:{args.port}: "
                                 f"{exc.strerror or exc}") from None
        if live is not None:
            live.start_informers()
        server.start()
        plugins = ", ".join(dict.fromkeys(pl.name for pl in (*ext.fw.points["filter"], *ext.fw.points["score"])))
        print(f"kubesched extender serving profile {ext.profile} ({plugins}) as Kubernetes {fts.version} on {server.url} "
              f"(filter, prioritize, bind; node cache: {'yes' if live else 'no'})", flush=True)
        stop = threading.Event()

        def on_signal(signum: int, frame: FrameType | None) -> None:
            stop.set()

        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            stop.wait()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
    finally:
        if server is not None:
            server.stop()
        if live is not None:
            live.stop(1.0)
        if client is not None:
            client.close()
    print("kubesched extender stopped", flush=True)
    return 0
