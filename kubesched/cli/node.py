"""``kubesched node stop|start|kill NAME``: inject node failures into a running ``kubesched serve``.

``stop`` silences the node's simulated kubelet (the node goes NotReady after the node
monitor grace period, is tainted, and its pods are evicted after their toleration
time); ``kill`` deletes the Node; ``start`` brings a stopped or killed node back. The
server is found through ``DATA_DIR/kubeconfig`` (``--data-dir``, as given to serve).
"""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_DATA_DIR = ".kubesched"


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("node", help="inject node failures into a running `kubesched serve` (stop, start, kill)")
    p.add_argument("action", choices=("stop", "start", "kill"),
                   help="stop: stop the heartbeat; start: resume it, or re-create a killed node; kill: delete the node")
    p.add_argument("names", nargs="+", metavar="NAME", help="node name(s)")
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR, metavar="DIR",
                   help=f"the data directory of the running server (default {DEFAULT_DATA_DIR}/)")
    p.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig to use (default DATA_DIR/kubeconfig)")


def run(args: argparse.Namespace) -> int:
    from kubesched.server.nodes import admin

    data_dir = Path(args.data_dir).resolve()
    client = admin.Client(Path(args.kubeconfig) if args.kubeconfig else data_dir / "kubeconfig")
    for name in args.names:
        if args.action == "stop":
            print(admin.stop(client, name))
        elif args.action == "kill":
            print(admin.kill(client, name, data_dir))
        else:
            print(admin.start(client, name, data_dir))
    return 0
