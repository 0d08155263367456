"""Bad requests get Kubernetes Status objects and do not stop the server; a slow client
does not stall others; bearer tokens (401) and TLS with the kubeconfig's CA."""

from __future__ import annotations

import socket
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from serve_harness import Server, pod_manifest, started

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
    ("PATCH", "/api/v1/nodes/node-01", {"body": {"x": 1}, "content_type": "application/apply-patch+yaml"},
     bad(415, "UnsupportedMediaType")),
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
    if resp[0] == 422:
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
