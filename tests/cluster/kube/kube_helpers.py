"""Helpers of the client-side tests: an API server (``kubesched serve``'s, in this process,
serving real HTTP on a free port), pod manifests, polling."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubesched.cluster.apiserver.bootstrap import NodeTemplate, ensure_nodes
from kubesched.cluster.apiserver.server import ApiServer, ServeOptions


def start_server(data_dir: Path, **opts: Any) -> ApiServer:
    opts.setdefault("bookmark_interval", 0.2)
    server = ApiServer(ServeOptions(data_dir=data_dir, port=0, **opts))
    ensure_nodes(server.registry, 2, NodeTemplate(cpu="4", memory="8Gi"))
    server.start_in_thread()
    return server


def pod_manifest(name: str, cpu: str = "100m", namespace: str = "default", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "c", "image": "img", "resources": {"requests": {"cpu": cpu}}}],
                     **spec}}


def eventually(check: Callable[[], Any], timeout: float = 10.0, interval: float = 0.02) -> Any:
    """Poll ``check`` until it returns something truthy; fail with its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not true after {timeout}s: {value!r}")
        time.sleep(interval)
