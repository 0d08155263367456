"""Failure injection against a running ``kubesched serve``: ``kubesched node stop|start|kill``.

It goes through the server's REST API with the kubeconfig the server wrote
(``DATA_DIR/kubeconfig``: address, CA and token or client certificate), so it works from any process:

* ``stop NAME``: annotate the node ``kubesched.io/heartbeat=stopped``; its simulated
  kubelet stops renewing the Lease and reporting status (the same as
  ``kubectl annotate node NAME kubesched.io/heartbeat=stopped``);
* ``kill NAME``: delete the Node, as if the machine were gone (its pods are
  garbage-collected after the pod GC quarantine); the Node as it was is kept in
  ``DATA_DIR/killed-nodes/NAME.json``;
* ``start NAME``: a stopped node: remove the annotation; a killed one: create it again
  from the saved copy (same name, labels, taints and capacity; a new uid).
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from kubesched.api.defaults import TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE
from kubesched.api.errors import KubeschedError
from kubesched.server.apiserver.kubeconfig import client_credentials
from kubesched.server.nodes.agent import HEARTBEAT_ANNOTATION, STOPPED

KILLED_DIR = "killed-nodes"


class Client:
    """The few REST calls failure injection needs, authenticated as the kubeconfig says."""

    def __init__(self, kubeconfig: Path) -> None:
        try:
            cfg = yaml.safe_load(kubeconfig.read_text())
            cluster = cfg["clusters"][0]["cluster"]
            self.server = str(cluster["server"]).rstrip("/")
            user = (cfg.get("users") or [{}])[0].get("user") or {}
        except (OSError, yaml.YAMLError, KeyError, IndexError, TypeError) as exc:
            raise KubeschedError(f"cannot read kubeconfig {kubeconfig}: {exc}") from None
        try:
            headers, self.context = client_credentials(cluster, user)
        except (ValueError, ssl.SSLError) as exc:
            raise KubeschedError(f"cannot use the credentials of kubeconfig {kubeconfig}: {exc}") from None
        self.headers = {"Accept": "application/json", **headers}

    def call(self, method: str, path: str, body: Any = None,
             content_type: str = "application/json") -> tuple[int, dict[str, Any]]:
        data = None if body is None else json.dumps(body).encode()
        headers = dict(self.headers)
        if data is not None:
            headers["Content-Type"] = content_type
        req = urllib.request.Request(self.server + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30, context=self.context) as resp:
                return resp.status, json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError as exc:
            try:
                return exc.code, json.loads(exc.read() or b"{}")
            except ValueError:
                return exc.code, {"message": str(exc)}
        except (urllib.error.URLError, OSError) as exc:
            raise KubeschedError(f"cannot reach the kubesched API server at {self.server}: {exc}") from None


def _check(status: int, doc: dict[str, Any], what: str) -> None:
    if status >= 300:
        raise KubeschedError(f"{what}: {doc.get('message') or status}")


def stop(client: Client, name: str) -> str:
    status, doc = client.call("PATCH", f"/api/v1/nodes/{name}",
                              {"metadata": {"annotations": {HEARTBEAT_ANNOTATION: STOPPED}}},
                              "application/merge-patch+json")
    _check(status, doc, f"stopping node {name}")
    return f"node/{name} heartbeat stopped"


def kill(client: Client, name: str, data_dir: Path) -> str:
    status, node = client.call("GET", f"/api/v1/nodes/{name}")
    _check(status, node, f"killing node {name}")
    saved = data_dir / KILLED_DIR
    saved.mkdir(parents=True, exist_ok=True)
    (saved / f"{name}.json").write_text(json.dumps(node, indent=1))
    status, doc = client.call("DELETE", f"/api/v1/nodes/{name}")
    _check(status, doc, f"killing node {name}")
    return f"node/{name} killed"


def start(client: Client, name: str, data_dir: Path) -> str:
    status, doc = client.call("PATCH", f"/api/v1/nodes/{name}",
                              {"metadata": {"annotations": {HEARTBEAT_ANNOTATION: None}}},
                              "application/merge-patch+json")
    if status != 404:
        _check(status, doc, f"starting node {name}")
        return f"node/{name} heartbeat started"
    saved = data_dir / KILLED_DIR / f"{name}.json"
    if not saved.exists():
        raise KubeschedError(f'node "{name}" not found (and not killed by `kubesched node kill`)')
    node = json.loads(saved.read_text())
    node["metadata"] = {k: v for k, v in node.get("metadata", {}).items()
                        if k in ("name", "labels", "annotations")}
    node["metadata"].get("annotations", {}).pop(HEARTBEAT_ANNOTATION, None)
    spec = node.setdefault("spec", {})
    spec.pop("podCIDR", None)
    spec.pop("podCIDRs", None)
    if spec.get("taints"):  # the node controller's, from when it stopped answering
        spec["taints"] = [t for t in spec["taints"] if t.get("key") not in (TAINT_NODE_NOT_READY,
                                                                              TAINT_NODE_UNREACHABLE)]
    node["status"] = {k: v for k, v in (node.get("status") or {}).items() if k not in ("conditions",)}
    status, doc = client.call("POST", "/api/v1/nodes", node)
    _check(status, doc, f"starting node {name}")
    saved.unlink()
    return f"node/{name} started again"
