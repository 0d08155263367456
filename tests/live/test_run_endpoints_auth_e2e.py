"""``kubesched run``'s endpoints served as kube-scheduler serves its secure port, against a
real ``kubesched serve --authorization-mode RBAC`` and real ``kubesched run`` processes,
read with raw HTTP and ServiceAccount tokens from ``kubectl create token``.

Upstream facts: delegated authentication with anonymous requests on and delegated
authorization (``k8s.io/apiserver/pkg/server/options`` ``DelegatingAuthenticationOptions``,
``DelegatingAuthorizationOptions``); kube-scheduler's ``AlwaysAllowPaths`` /healthz,
/readyz, /livez (``cmd/kube-scheduler/app/options/options.go``); the 403 text of
``responsewriters.Forbidden`` for a non-resource request (``forbidden: User "u" cannot get
path "/metrics"``) and the 401 ``Unauthorized`` Status; ``system:auth-delegator`` and
``system:masters`` (``AlwaysAllowGroups``) from the bootstrap policy; ``--tls-cert-file`` and
``--tls-private-key-file`` as kube-scheduler's secure serving names them."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from live_harness import REPO, RunProcess, eventually, write_config
from serve_harness import API_ONLY, Server, started

pytestmark = pytest.mark.slow

ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "scraper"},
        "rules": [{"nonResourceURLs": ["/metrics", "/debug/*"], "verbs": ["get"]}]}
BINDING = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
           "metadata": {"name": "scraper"},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "scraper"},
           "subjects": [{"kind": "ServiceAccount", "name": "prom", "namespace": "mon"}]}


@pytest.fixture(scope="module")
def rbac(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    for server in started(tmp_path_factory.mktemp("run-auth"), "--authorization-mode", "RBAC", "--nodes", "1",
                          *API_ONLY):
        server.kubectl("create", "namespace", "mon")
        for name in ("prom", "nobody"):
            server.kubectl("create", "serviceaccount", name, "-n", "mon")
        server.kubectl("apply", "-f", "-", input=yaml.safe_dump_all([ROLE, BINDING]))
        yield server


def token(server: Server, name: str) -> str:
    return server.kubectl("create", "token", name, "-n", "mon").stdout.strip()


def get(url: str, bearer: str = "", context: ssl.SSLContext | None = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10,
                                    context=context) as resp:
            status, body = resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read()
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode(errors="replace")


def test_endpoints_authenticate_and_authorize_through_the_api_server(rbac: Server, tmp_path: Path) -> None:
    # the kubeconfig's certificate is system:masters: it may create the reviews
    run = RunProcess(rbac, write_config(tmp_path / "c.yaml", leaderElect=False), log_dir=tmp_path,
                     extra=("--bind-address", "0.0.0.0"))
    try:
        assert any("delegated to the API server" in line for line in run.output), run.output
        assert run.wait_for(r"serving .* \(listening on (\S+)\)").group(1) == "0.0.0.0"  # every address
        for path in ("/healthz", "/readyz", "/livez"):  # probes need no credentials
            eventually(lambda: get(run.url + path)[0] == 200)  # /readyz: once the caches have synced
        status, body = get(run.url + "/metrics")
        assert (status, body["reason"], body["message"]) == (
            403, "Forbidden", 'forbidden: User "system:anonymous" cannot get path "/metrics"')
        status, body = get(run.url + "/metrics", token(rbac, "nobody"))
        assert status == 403
        assert body["message"] == 'forbidden: User "system:serviceaccount:mon:nobody" cannot get path "/metrics"'
        prom = token(rbac, "prom")
        status, text = get(run.url + "/metrics", prom)
        assert status == 200 and "scheduler_schedule_attempts_total" in text
        # authorized: the explain endpoint itself answers (no attempt for that pod)
        assert get(run.url + "/debug/explain/default/none", prom)[0] == 404
        assert get(run.url + "/debug/explain/default/none")[0] == 403
        status, body = get(run.url + "/metrics", "not-a-token")
        assert (status, body["reason"]) == (401, "Unauthorized")
    finally:
        run.stop()


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubesched-run")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = tmp_path / "run.crt", tmp_path / "run.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


def test_opt_out_opens_a_path_and_tls_on_request(rbac: Server, tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    run = RunProcess(rbac, write_config(tmp_path / "c.yaml", leaderElect=False), log_dir=tmp_path,
                     extra=("--authorization-always-allow-paths", "/healthz,/readyz,/livez,/metrics",
                            "--tls-cert-file", str(cert), "--tls-private-key-file", str(key)))
    try:
        assert run.url.startswith("https://127.0.0.1:")
        ctx = ssl.create_default_context(cafile=str(cert))  # verified against the given certificate
        assert get(run.url + "/metrics", context=ctx)[0] == 200
        assert get(run.url + "/debug/explain/default/none", context=ctx)[0] == 403
        assert get(run.url + "/debug/explain/default/none", token(rbac, "prom"), context=ctx)[0] == 404
    finally:
        run.stop()


def test_without_the_reviews_it_listens_on_loopback_and_says_so(rbac: Server, tmp_path: Path) -> None:
    """An account with deploy/rbac.yaml's ClusterRole but not system:auth-delegator."""
    docs = list(yaml.safe_load_all((REPO / "deploy" / "rbac.yaml").read_text()))
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    binding = {**BINDING, "metadata": {"name": "limited"}, "roleRef": {**BINDING["roleRef"], "name": "kubesched"},
               "subjects": [{"kind": "ServiceAccount", "name": "limited", "namespace": "mon"}]}
    rbac.kubectl("create", "serviceaccount", "limited", "-n", "mon")
    rbac.kubectl("apply", "-f", "-", input=yaml.safe_dump_all([role, binding]))
    cfg = yaml.safe_load(rbac.kubeconfig.read_text())
    cfg["users"][0]["user"] = {"token": token(rbac, "limited")}
    kubeconfig = tmp_path / "limited.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(cfg))
    run = RunProcess(rbac, write_config(tmp_path / "c.yaml", leaderElect=False), log_dir=tmp_path,
                     kubeconfig=kubeconfig, extra=("--bind-address", "0.0.0.0"))
    try:
        said = [line for line in run.output if "delegated authentication is not possible" in line]
        assert said and "tokenreviews" in said[0], run.output
        assert run.wait_for(r"serving .* \(listening on (\S+)\)").group(1) == "127.0.0.1"
        assert get(run.url + "/metrics")[0] == 200  # local clients only, as before
    finally:
        run.stop()


def test_deploy_binds_the_auth_delegator_role() -> None:
    """The reviews the endpoints ask need ``system:auth-delegator``: deploy/rbac.yaml binds
    it to the account the Deployment runs as."""
    docs = list(yaml.safe_load_all((REPO / "deploy" / "rbac.yaml").read_text()))
    bindings = [d for d in docs if d["kind"] == "ClusterRoleBinding"
                and d["roleRef"]["name"] == "system:auth-delegator"]
    assert [s for b in bindings for s in b["subjects"]] == [
        {"kind": "ServiceAccount", "name": "kubesched", "namespace": "kube-system"}]
