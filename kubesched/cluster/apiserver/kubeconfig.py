"""Writes the kubeconfig that points kubectl and client libraries at this server."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import yaml

CLUSTER = "kubesched"
USER = "kubesched-admin"


def write_kubeconfig(path: Path, server: str, *, ca_file: Path | None = None, token: str | None = None) -> Path:
    """Write ``path`` (mode 0600, atomically): one cluster, user and context, current."""
    cluster: dict[str, str] = {"server": server}
    if ca_file is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_file.read_bytes()).decode()
    user: dict[str, str] = {"token": token} if token else {}
    doc = {
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": CLUSTER, "cluster": cluster}],
        "users": [{"name": USER, "user": user}],
        "contexts": [{"name": CLUSTER, "context": {"cluster": CLUSTER, "user": USER, "namespace": "default"}}],
        "current-context": CLUSTER,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        yaml.safe_dump(doc, fh, sort_keys=False)
    os.replace(tmp, path)
    return path
