"""Writes the kubeconfig that points kubectl and client libraries at this server, and reads
one back for our own small HTTP clients (``kubesched node``, tests).

The user in it is whatever the server accepts without prompting: the bearer token
(``--token-file``), else the generated client certificate and key (``--tls``), else
nothing (plain HTTP on the loopback interface, no authentication).
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from pathlib import Path
from typing import Any

import yaml

CLUSTER = "kubesched"
USER = "kubesched-admin"


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def write_kubeconfig(path: Path, server: str, *, ca_file: Path | None = None, token: str | None = None,
                     client_cert: tuple[Path, Path] | None = None) -> Path:
    """Write ``path`` (mode 0600, atomically): one cluster, user and context, current.
    ``client_cert``: (certificate, key) files, used when there is no ``token``."""
    cluster: dict[str, str] = {"server": server}
    if ca_file is not None:
        cluster["certificate-authority-data"] = _b64(ca_file)
    user: dict[str, str] = {}
    if token:
        user["token"] = token
    elif client_cert is not None:
        user["client-certificate-data"] = _b64(client_cert[0])
        user["client-key-data"] = _b64(client_cert[1])
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


def client_credentials(cluster: dict[str, Any], user: dict[str, Any],
                       ) -> tuple[dict[str, str], ssl.SSLContext | None]:
    """HTTP headers and an SSL context for the first cluster and user of a kubeconfig
    written by :func:`write_kubeconfig` (``*-data`` fields only)."""
    headers: dict[str, str] = {}
    if user.get("token"):
        headers["Authorization"] = f"Bearer {user['token']}"
    if not cluster.get("certificate-authority-data"):
        return headers, None
    ctx = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    if user.get("client-certificate-data") and user.get("client-key-data"):
        # ssl loads a certificate chain only from files: a private temporary directory, gone at once
        with tempfile.TemporaryDirectory(prefix="kubesched-") as d:
            cert, key = Path(d) / "client.crt", Path(d) / "client.key"
            for p, field in ((cert, "client-certificate-data"), (key, "client-key-data")):
                fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(base64.b64decode(user[field]))
            ctx.load_cert_chain(cert, key)
    return headers, ctx
