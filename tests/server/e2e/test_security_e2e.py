"""Bad requests get Kubernetes Status objects and do not stop the server; a slow client
does not stall others; bearer tokens (401) and TLS with the kubeconfig's CA; the
credential matrix: ``serve`` with {no flags, --tls, --token-file, both} x {real kubectl,
the official Python client, ``kubesched run``}, each with the generated kubeconfig and no
prompt, 401 without credentials, secret files 0600."""

from __future__ import annotations

import json
import socket
import ssl
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_harness import API_ONLY, Server, eventually, pod_manifest, started

pytestmark = pytest.mark.slow

PODS = "/api/v1/namespaces/default/pods"


def bad(status: int, reason: str) -> Any:
    def check(resp: tuple[int, Any]) -> bool:
        code, body = resp
        return code == status and isinstance(body, dict) and body.get("kind") == "Status" \
            and body.get("reason") == reason and body.get("code") == status
    return check


@pytest.mark.parametrize("method,path,kw,check", [
    ("POST", PODS, {"raw": b'{"metadata": {"name": '}, bad(400, "BadRequest")),
    ("POST", PODS, {"body": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "x"}}}, bad(400, "BadRequest")),
    ("POST", PODS, {"body": pod_manifest("q", cpu="1.5.5")}, bad(400, "BadRequest")),  # fails decoding
    ("POST", PODS, {"raw": b"{" + b" " * (4 * 1024 * 1024) + b"}"}, bad(413, "RequestEntityTooLarge")),
    ("GET", "/api/v1/namespaces/default/widgets", {}, bad(404, "NotFound")),
    ("GET", "/apis/nope.example.com/v1", {}, bad(404, "NotFound")),
    ("GET", f"{PODS}/missing", {}, bad(404, "NotFound")),
    # server-side apply without a fieldManager: upstream's 422 on the PatchOptions
    ("PATCH", "/api/v1/nodes/node-01", {"body": {"x": 1}, "content_type": "application/apply-patch+yaml"},
     bad(422, "Invalid")),
    ("GET", f"{PODS}?labelSelector=a%20in%20b", {}, bad(400, "BadRequest")),
    ("PUT", PODS, {"body": {}}, bad(405, "MethodNotAllowed")),
], ids=["malformed-json", "wrong-kind", "invalid-quantity", "oversized-body", "unknown-resource", "unknown-group",
        "missing-object", "apply-patch", "bad-selector", "put-collection"])
def test_bad_requests_get_status_and_server_keeps_serving(server: Server, method: str, path: str,
                                                          kw: dict[str, Any], check: Any) -> None:
    try:
        resp = server.request(method, path, **kw)
    except (ConnectionResetError, BrokenPipeError, urllib.error.URLError):
        assert "raw" in kw and len(kw["raw"]) > 1 << 20  # the server may close before the body is sent
        resp = (413, {"kind": "Status", "reason": "RequestEntityTooLarge", "code": 413})
    assert check(resp), resp
    if resp[0] == 422 and method == "POST":
        assert resp[1]["details"]["causes"][0]["field"] == "spec.containers[0].resources.requests.cpu"
    assert server.request("GET", "/api/v1/namespaces/default")[0] == 200


def test_slow_clients_do_not_stall_others(server: Server) -> None:
    host, port = server.url.split("//")[1].rsplit(":", 1)
    stalled = []
    for partial in (b"GET /api/v1/nodes HTTP/1.1\r\nHost: x\r\n",  # headers never finished
                    b"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 1000\r\n\r\n{\"metadata\":"):  # body never finished
        for _ in range(20):
            s = socket.create_connection((host, int(port)))
            s.sendall(partial)
            stalled.append(s)
    try:
        t = time.monotonic()
        for _ in range(20):
            assert server.request("GET", "/api/v1/nodes", timeout=5)[0] == 200
        assert time.monotonic() - t < 5
    finally:
        for s in stalled:
            s.close()


def test_health_version_discovery_and_metrics(server: Server) -> None:
    assert server.request("GET", "/healthz") == (200, "ok")
    assert server.request("GET", "/readyz") == (200, "ok")
    assert server.request("GET", "/version")[1]["gitVersion"].startswith("v1.34.1")
    groups = server.request("GET", "/apis")[1]
    assert {g["name"] for g in groups["groups"]} >= {"apps", "events.k8s.io", "policy", "scheduling.k8s.io",
                                                     "coordination.k8s.io", "scheduling.x-k8s.io"}
    code, metrics = server.request("GET", "/metrics")
    assert code == 200 and 'apiserver_request_total{code="404"' in metrics
    assert "apiserver_storage_objects" in metrics


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("secured")
    yield from started(base, "--tls", "--token-file", str(base / "tokens"), "--nodes", "1")


def test_token_required(secured: Server) -> None:
    assert bad(401, "Unauthorized")(secured.request("GET", "/api/v1/nodes", auth=False))
    assert bad(401, "Unauthorized")(secured.request("GET", "/metrics", auth=False))
    code, _ = secured.request("GET", "/api/v1/nodes", auth=False, headers={"Authorization": "Bearer wrong"})
    assert code == 401
    assert secured.request("GET", "/healthz", auth=False)[0] == 200  # health stays open
    assert secured.request("GET", "/api/v1/nodes")[0] == 200


def test_tls_with_the_kubeconfig_ca(secured: Server) -> None:
    from kubernetes import client

    assert secured.url.startswith("https://127.0.0.1:")
    assert "node-01" in secured.kubectl("get", "nodes").stdout
    assert [n.metadata.name for n in client.CoreV1Api(secured.client()).list_node().items] == ["node-01"]
    with pytest.raises(urllib.error.URLError) as info:  # a client that does not trust the CA
        urllib.request.urlopen(secured.url + "/healthz", timeout=5, context=ssl.create_default_context())
    assert isinstance(info.value.reason, ssl.SSLError)
    restarted = secured.restart()  # the same CA and certificate after a restart
    assert "node-01" in restarted.kubectl("get", "nodes").stdout


# -- the credential matrix: every combination of --tls / --token-file gives a kubeconfig that
#    kubectl, the official Python client and `kubesched run` use without prompting ----------
MATRIX = {"none": (), "tls": ("--tls",), "token": ("--token-file",), "tls-token": ("--tls", "--token-file")}
# who each kubeconfig's user is, as kube-apiserver would say (`kubectl auth whoami`): the
# generated token file's line is "<token>,admin,admin,system:masters"; the client
# certificate's CN is kubesched-admin and its O system:masters; without authentication a
# request is system:anonymous in system:unauthenticated
ADMIN = {"username": "admin", "uid": "admin", "groups": ["system:masters", "system:authenticated"]}
WHO: dict[str, dict[str, Any]] = {
    "none": {"username": "system:anonymous", "groups": ["system:unauthenticated"]},
    "tls": {"username": "kubesched-admin", "groups": ["system:masters", "system:authenticated"]},
    "token": ADMIN, "tls-token": ADMIN}
RUN_CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles:
- schedulerName: matrix-scheduler
"""


@pytest.fixture(scope="module", params=list(MATRIX))
def flavour(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Server]]:
    """One API-only server per flag combination, shared by the matrix tests."""
    base = tmp_path_factory.mktemp(f"creds-{request.param}")
    args = [a if a != "--token-file" else f"--token-file={base / 'tokens'}" for a in MATRIX[request.param]]
    for server in started(base, *args, "--nodes", "1", *API_ONLY):
        yield request.param, server


def test_matrix_scheme_and_announcement(flavour: tuple[str, Server]) -> None:
    """A token implies TLS, and serve says so; no flags: plain HTTP on 127.0.0.1."""
    name, server = flavour
    assert server.url.startswith("http://127.0.0.1:" if name == "none" else "https://127.0.0.1:")
    implied = [line for line in server.output if "--token-file implies --tls" in line]
    assert len(implied) == (1 if name == "token" else 0), server.output


def test_matrix_kubectl(flavour: tuple[str, Server]) -> None:
    """Real kubectl, stdin closed (a missing credential would prompt, and fail)."""
    name, server = flavour
    assert "node-01" in server.kubectl("get", "nodes").stdout
    server.kubectl("create", "-f", "-", input=json.dumps(pod_manifest(f"kubectl-{name}")))
    assert f"kubectl-{name}" in server.kubectl("get", "pods").stdout
    out = server.kubectl("auth", "whoami", "-o", "json").stdout
    assert json.loads(out)["status"]["userInfo"] == WHO[name]


def test_matrix_python_client(flavour: tuple[str, Server]) -> None:
    from kubernetes import client

    name, server = flavour
    api = server.client()
    assert [n.metadata.name for n in client.CoreV1Api(api).list_node().items] == ["node-01"]
    review = client.AuthenticationV1Api(api).create_self_subject_review(
        client.V1SelfSubjectReview(api_version="authentication.k8s.io/v1", kind="SelfSubjectReview"))
    info = review.status.user_info
    assert (info.username, info.uid, info.groups) == (WHO[name]["username"], WHO[name].get("uid"), WHO[name]["groups"])


def test_matrix_kubesched_run(flavour: tuple[str, Server], tmp_path: Path) -> None:
    """``kubesched run`` with the kubeconfig binds a pod of its profile."""
    name, server = flavour
    config = tmp_path / "run.yaml"
    config.write_text(RUN_CONFIG)
    pod = pod_manifest(f"run-{name}")
    pod["spec"]["schedulerName"] = "matrix-scheduler"
    assert server.request("POST", PODS, pod)[0] == 201
    proc = subprocess.Popen([sys.executable, "-m", "kubesched.cli.main", "run", "--kubeconfig", str(server.kubeconfig),
                             "--config", str(config), "--port", "-1"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        bound = eventually(lambda: server.request("GET", f"{PODS}/run-{name}")[1]["spec"].get("nodeName"),
                           timeout=60, interval=0.2)
        assert bound == "node-01"
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    assert "Traceback" not in out


def test_matrix_unauthenticated(flavour: tuple[str, Server]) -> None:
    """With authentication on (any flag), no credentials or a wrong token: 401 and a Status,
    as kube-apiserver without anonymous access; health stays open; a client certificate
    of another CA is refused. No flags: no authentication."""
    name, server = flavour
    if name == "none":
        assert server.request("GET", "/api/v1/nodes", auth=False)[0] == 200
        return
    assert bad(401, "Unauthorized")(server.request("GET", "/api/v1/nodes", auth=False))
    assert bad(401, "Unauthorized")(server.request("GET", "/api/v1/nodes", auth=False,
                                                   headers={"Authorization": "Bearer wrong"}))
    assert bad(401, "Unauthorized")(server.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                                                   {}, auth=False))
    assert server.request("GET", "/readyz", auth=False) == (200, "ok")
    # a client certificate the server's CA did not sign fails the TLS handshake (see auth.py)
    from kubesched.server.apiserver.authn.tls import ensure_certificates

    other = ensure_certificates(server.data_dir.parent / "other-pki", "127.0.0.1")
    ctx = server.ca_only_context()
    assert ctx is not None
    ctx.load_cert_chain(other.client_cert, other.client_key)
    with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionResetError)):
        urllib.request.urlopen(server.url + "/api/v1/nodes", timeout=10, context=ctx).read()


def test_matrix_secret_files_are_private(flavour: tuple[str, Server]) -> None:
    """Store (and its WAL and shared-memory files), kubeconfig, token file and keys: 0600."""
    name, server = flavour
    data = server.data_dir
    private = [data / "store.db", data / "store.db-wal", data / "store.db-shm", data / "kubeconfig"]
    if name != "none":
        private += [data / "pki" / f for f in ("ca.key", "server.key", "client.key")]
    if "token" in name:
        private.append(data.parent / "tokens")
    for path in private:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    if name != "none":
        assert stat.S_IMODE((data / "pki").stat().st_mode) == 0o700

