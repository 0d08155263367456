"""In-process clusters for the controller and node tests: ``kubesched serve``'s API server
in this process (real HTTP on a free port, the store in a temporary directory) with the
controller manager and the simulated nodes as its Components, on short timings.

Pods are bound by :class:`ToyBinder` (first Ready node without NoSchedule/NoExecute
taints the pod does not tolerate, round robin) so these tests do not depend on the
scheduler; the end-to-end tests use the real one.
"""

from __future__ import annotations

import itertools
import threading
from pathlib import Path
from typing import Any

from serve_harness import eventually  # noqa: F401  (re-exported for the tests)

from kubesched.api.objects import Taint, Toleration
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.server import ApiServer, ServeOptions
from kubesched.server.apiserver.registry.subresources import bind
from kubesched.server.controllers import ControllerManager, ControllerOptions
from kubesched.server.nodes import (
    AgentOptions, LifecycleOptions, NodeOptions, NodePool, NodeSimulator, PodGCOptions, ensure_pools,
)

FAST_NODES = NodeOptions(
    agent_options=AgentOptions(heartbeat_interval=0.3, status_interval=5.0, pod_start_delay=0.2, pod_stop_delay=0.2),
    lifecycle_options=LifecycleOptions(monitor_period=0.2, monitor_grace_period=1.5, startup_grace_period=3.0,
                                       eviction_rate=10.0),
    podgc_options=PodGCOptions(period=0.3, quarantine=1.0))


class ToyBinder:
    """Binds pending pods, in creation order, to schedulable Ready nodes in turn."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._stop = threading.Event()
        self._turn = itertools.count()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "ToyBinder":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def _fits(self, node: dict[str, Any], pod: dict[str, Any]) -> bool:
        ready = next((c for c in node.get("status", {}).get("conditions") or [] if c.get("type") == "Ready"), {})
        if ready.get("status") != "True" or node.get("spec", {}).get("unschedulable"):
            return False
        tols = [Toleration.parse(t, "t") for t in pod["spec"].get("tolerations") or []]
        for t in node.get("spec", {}).get("taints") or []:
            taint = Taint.parse(t, "t")
            if taint.effect in ("NoSchedule", "NoExecute") and not any(x.tolerates(taint) for x in tols):
                return False
        return True

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            try:
                nodes = self.registry.list("nodes")["items"]
                pending = self.registry.list("pods", field_selector="spec.nodeName=")["items"]
            except Exception:
                if self.registry.store.closed:
                    return
                continue
            for pod in pending:
                if pod["metadata"].get("deletionTimestamp"):
                    continue
                fit = [n for n in nodes if self._fits(n, pod)]
                if not fit:
                    continue
                node = fit[next(self._turn) % len(fit)]["metadata"]["name"]
                try:
                    bind(self.registry, pod["metadata"]["namespace"], pod["metadata"]["name"],
                         {"target": {"kind": "Node", "name": node}})
                except ApiError:
                    pass


class Cluster:
    def __init__(self, data_dir: Path, pools: list[NodePool], *, controllers: bool = True,
                 nodes: NodeOptions | None = FAST_NODES, binder: bool = True, seed: int = 7) -> None:
        components: list[Any] = []
        if controllers:
            components.append(ControllerManager(ControllerOptions(seed=seed)))
        if nodes is not None:
            components.append(NodeSimulator(nodes))
        self.server = ApiServer(ServeOptions(data_dir=data_dir, port=0, reap_interval=0.1), components)
        self.registry = self.server.registry
        ensure_pools(self.registry, pools)
        self.server.start_in_thread()
        self.binder = ToyBinder(self.registry).start() if binder else None

    def stop(self) -> None:
        if self.binder is not None:
            self.binder.stop()
        self.server.stop()

    # -- reads --------------------------------------------------------------------------------
    def pods(self, namespace: str = "default", label_selector: str = "") -> list[dict[str, Any]]:
        return list(self.registry.list("pods", namespace, label_selector=label_selector)["items"])

    def get(self, res: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        try:
            return self.registry.get(res, namespace, name)
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise


def deployment(name: str, replicas: int, *, image: str = "nginx:1", labels: dict[str, str] | None = None,
               tolerations: list[dict[str, Any]] | None = None, strategy: dict[str, Any] | None = None,
               annotations: dict[str, str] | None = None) -> dict[str, Any]:
    labels = labels or {"app": name}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": image,
                                            "resources": {"requests": {"cpu": "100m"}}}]}
    if tolerations:
        spec["tolerations"] = tolerations
    tmeta: dict[str, Any] = {"labels": labels}
    if annotations:
        tmeta["annotations"] = annotations
    out: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
                           "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                                    "template": {"metadata": tmeta, "spec": spec}}}
    if strategy:
        out["spec"]["strategy"] = strategy
    return out


def active(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")
            and p.get("status", {}).get("phase") not in ("Succeeded", "Failed")]


def running(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in active(pods) if p.get("status", {}).get("phase") == "Running"]
