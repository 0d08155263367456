"""KubeClient against ``kubesched serve``'s API server over real HTTP: configuration and
auth through the official ``kubernetes`` library (kubeconfig with a token, TLS with the
kubeconfig's CA, an exec credential plugin, the in-cluster service account), Kubernetes
errors, connection errors, retries, the client-side rate limiter."""

from __future__ import annotations

import json
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from kube_helpers import start_server

from kubesched.server.apiserver.server import ApiServer, ServeOptions
from kubesched.cluster.kube import ApiStatusError, KubeClient, KubeClientError, TransportError, call_with_retries
from kubesched.cluster.kube.client import loads
from kubesched.cluster.kube.ratelimit import TokenBucket


def node_names(c: KubeClient) -> list[str]:
    return sorted(n["metadata"]["name"] for n in c.get("/api/v1/nodes")["items"])


def test_kubeconfig_requests_and_errors(client: KubeClient) -> None:
    assert node_names(client) == ["node-01", "node-02"]
    with pytest.raises(ApiStatusError) as err:
        client.get("/api/v1/namespaces/default/pods/missing")
    assert (err.value.code, err.value.reason, err.value.not_found) == (404, "NotFound", True)
    assert err.value.message == 'pods "missing" not found'


def test_connection_refused_is_a_transport_error(tmp_path: Path, connect: Any) -> None:
    server = ApiServer(ServeOptions(data_dir=tmp_path / "data", port=0))  # bound, not yet listening
    try:
        c = connect(str(server.kubeconfig))
        with pytest.raises(TransportError):
            c.get("/api/v1/nodes")
    finally:
        server.store.close()
        server.sock.close()


def test_retries_until_the_server_answers(tmp_path: Path) -> None:
    """A transient failure (no server yet) is retried with backoff until the server is up."""
    server = ApiServer(ServeOptions(data_dir=tmp_path / "data", port=0))
    c = KubeClient.connect(str(server.kubeconfig))
    failures: list[BaseException] = []
    threading.Timer(0.3, server.start_in_thread).start()
    try:
        body = call_with_retries(lambda: c.get("/api/v1/namespaces"), attempts=8, initial=0.05, factor=2.0,
                                 on_retry=failures.append)
        assert "default" in {ns["metadata"]["name"] for ns in body["items"]}
        assert failures and all(isinstance(f, TransportError) for f in failures)
    finally:
        c.close()
        time.sleep(0.1)
        server.stop()


def test_retries_are_bounded() -> None:
    from kubesched.cluster.kube.errors import ApiStatusError as E

    calls = []

    def boom() -> None:
        calls.append(1)
        raise E(503, "ServiceUnavailable", "try later")

    started = time.monotonic()
    with pytest.raises(E):
        call_with_retries(boom, attempts=3, initial=0.01, factor=2.0)
    assert len(calls) == 3 and time.monotonic() - started < 1.0
    calls.clear()
    with pytest.raises(E):  # a 4xx other than 429 is not retried
        call_with_retries(lambda: (calls.append(1), (_ for _ in ()).throw(E(409, "Conflict", "x")))[0])
    assert len(calls) == 1


@pytest.fixture
def secure_server(tmp_path: Path) -> Any:
    token_file = tmp_path / "tokens"
    token_file.write_text("s3cret-token\n")
    server = start_server(tmp_path / "data", tls=True, token_file=token_file)
    yield server
    server.stop()


def test_tls_and_token_from_the_kubeconfig(secure_server: ApiServer, tmp_path: Path, connect: Any) -> None:
    c = connect(str(secure_server.kubeconfig))
    assert c.host.startswith("https://")
    assert node_names(c) == ["node-01", "node-02"]
    cfg = yaml.safe_load(secure_server.kubeconfig.read_text())
    cfg["users"][0]["user"] = {}
    anonymous = tmp_path / "anonymous"
    anonymous.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ApiStatusError) as err:
        connect(str(anonymous)).get("/api/v1/nodes")
    assert err.value.code == 401


def test_exec_credential_plugin(secure_server: ApiServer, tmp_path: Path, connect: Any) -> None:
    """The token comes from an exec plugin (client.authentication.k8s.io/v1 ExecCredential)."""
    plugin = tmp_path / "cred.py"
    plugin.write_text('import json\nprint(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", '
                      '"kind": "ExecCredential", "status": {"token": "s3cret-token"}}))\n')
    cfg = yaml.safe_load(secure_server.kubeconfig.read_text())
    cfg["users"][0]["user"] = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                                        "args": [str(plugin)], "interactiveMode": "Never"}}
    path = tmp_path / "exec-kubeconfig"
    path.write_text(yaml.safe_dump(cfg))
    assert node_names(connect(str(path))) == ["node-01", "node-02"]


def test_in_cluster_service_account(secure_server: ApiServer, tmp_path: Path, connect: Any,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside a pod: KUBERNETES_SERVICE_HOST/PORT, the service account token and CA."""
    from kubernetes.config import incluster_config

    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("s3cret-token")
    ca.write_bytes((secure_server.opts.data_dir / "pki" / "ca.crt").read_bytes())
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(ca))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(secure_server.port))
    c = connect()  # no kubeconfig, in a pod: the in-cluster configuration
    assert c.host == f"https://127.0.0.1:{secure_server.port}"
    assert node_names(c) == ["node-01", "node-02"]


def test_a_bad_kubeconfig_is_a_client_error(tmp_path: Path) -> None:
    bad = tmp_path / "kubeconfig"
    bad.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n")
    bad.chmod(stat.S_IRUSR | stat.S_IWUSR)
    with pytest.raises(KubeClientError, match="cannot load the kubeconfig"):
        KubeClient.connect(str(bad))


# -- the rate limiter ------------------------------------------------------------------------------
class FakeTime:
    def __init__(self) -> None:
        self.t = 0.0
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, d: float) -> None:
        self.slept.append(round(d, 6))
        self.t += d


@pytest.mark.parametrize("qps, burst, requests, gap, want_sleeps", [
    (10.0, 3, 3, 0.0, []),  # a burst passes at once
    (10.0, 3, 5, 0.0, [0.1, 0.1]),  # then one every 1/qps (sleeping moves the clock)
    (10.0, 1, 3, 0.05, [0.05, 0.05]),  # time between requests refills the bucket
    (0.0, 1, 5, 0.0, []),  # qps 0: no limit
], ids=["burst", "then-qps", "refill", "unlimited"])
def test_token_bucket(qps: float, burst: int, requests: int, gap: float, want_sleeps: list[float]) -> None:
    ft = FakeTime()
    bucket = TokenBucket(qps, burst, clock=ft.now, sleep=ft.sleep)
    for _ in range(requests):
        bucket.wait()
        ft.t += gap
    assert ft.slept == want_sleeps


def test_client_honours_qps_and_burst(apiserver: ApiServer, connect: Any) -> None:
    c = connect(str(apiserver.kubeconfig), qps=20, burst=5)
    started = time.monotonic()
    for _ in range(15):
        c.get("/api/v1/namespaces/default")
    assert time.monotonic() - started >= 0.45  # 5 at once, then 10 at 20/s


@pytest.mark.parametrize("text", [
    b'{"n": 18446744073709551616}',  # beyond 64 bits: orjson would give a float
    b'{"n": -9223372036854775809, "s": "x"}',
    b'{"s": "1234567890123456789", "n": 1}',  # a 19-digit run in a string: the standard library
    b'{"n": 18446744073709551615, "f": 0.5, "u": "\\u00e9"}',  # 20 digits, still exact either way
    b'{"metadata": {"name": "p", "resourceVersion": "42"}, "spec": {"priority": 100}}',
    b'{"x": 1e400}',  # orjson refuses: the standard library's answer (inf)
])
def test_watch_and_response_json_reads_as_the_standard_library(text: bytes) -> None:
    """client.loads gives exactly json.loads's values (store/jsontext.py's rule), integers
    beyond 64 bits included."""
    got, want = loads(text), json.loads(text)
    assert got == want and repr(got) == repr(want)


def test_watch_json_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        loads(b'{"type": "ADDED", "object": ')
