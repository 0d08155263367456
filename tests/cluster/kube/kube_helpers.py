"""Helpers of the client-side tests: an API server (``kubesched serve``'s, in this process,
serving real HTTP on a free port), pod manifests, polling."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from serve_harness import eventually  # noqa: F401  (re-exported for the tests)

from kubesched.server.apiserver.bootstrap import NodeTemplate, ensure_nodes
from kubesched.server.apiserver.server import ApiServer, ServeOptions


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
