"""Helpers of the end-to-end tests of the controllers and simulated nodes inside the real
``kubesched serve`` process: is the scheduler inside, a stand-in binder when it is not,
the ``kubesched node`` command, and polling through kubectl's JSON output."""

from __future__ import annotations

import functools
import itertools
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from serve_harness import REPO, Server

# every simulated-node timing short, so the tests take seconds, not minutes
FAST = ("--pod-start-delay", "0.3", "--pod-stop-delay", "0.2", "--node-heartbeat-interval", "0.5",
        "--node-monitor-period", "0.3", "--node-monitor-grace-period", "2", "--pod-gc-quarantine", "1",
        "--controller-seed", "11")


@functools.cache
def serve_has_scheduler() -> bool:
    """Whether ``kubesched serve`` runs the scheduler inside (it then has ``--no-scheduler``)."""
    out = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "serve", "--help"], cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    return "--no-scheduler" in out.stdout


NO_SCHEDULER_REASON = ("kubesched serve has no scheduler inside yet (no --no-scheduler flag in "
                       "`kubesched serve --help`): rescheduling of evicted pods cannot be checked")


def eventually(check: Callable[[], Any], timeout: float = 30.0, interval: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not true after {timeout}s: {value!r}")
        time.sleep(interval)


def get_json(server: Server, *args: str) -> Any:
    return json.loads(server.kubectl("get", *args, "-o", "json").stdout)


def node_cmd(server: Server, action: str, *names: str) -> str:
    out = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "node", action, *names,
                          "--data-dir", str(server.data_dir)], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def ready(node: dict[str, Any]) -> str:
    return next((c["status"] for c in node["status"].get("conditions") or [] if c["type"] == "Ready"), "")


class HttpBinder:
    """Stands in for the scheduler when ``kubesched serve`` has none: binds pending pods,
    round robin, to Ready nodes without NoSchedule/NoExecute taints, through the API."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self._stop = threading.Event()
        self._turn = itertools.count()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "HttpBinder":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            try:
                _, nodes = self.server.request("GET", "/api/v1/nodes", timeout=5)
                _, pods = self.server.request("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3D", timeout=5)
            except OSError:
                continue
            healthy = [n["metadata"]["name"] for n in nodes.get("items", []) if ready(n) == "True"
                       and not any(t["effect"] in ("NoSchedule", "NoExecute") for t in n["spec"].get("taints") or [])]
            for p in pods.get("items", []):
                if not healthy or p["metadata"].get("deletionTimestamp"):
                    continue
                node = healthy[next(self._turn) % len(healthy)]
                meta = p["metadata"]
                self.server.request("POST", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/binding",
                                    {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": meta["name"]},
                                     "target": {"kind": "Node", "name": node}}, timeout=5)
