"""``kubesched serve --authorization-mode RBAC`` driven by the real kubectl and by a real
``kubesched run``: ``auth can-i`` (and ``--list``), ``auth whoami``, upstream's 403 text for
a refused verb, a RoleBinding taking effect at once, and ``deploy/rbac.yaml`` proven
sufficient: ``kubesched run`` with a token whose user is the ServiceAccount those rules bind
schedules a pod (leader election, binding, events) without one refused call.

Expected texts are upstream's: the 403 message of ``responsewriters/errors.go``; kubectl
prints "yes"/"no" and exits 0/1 for ``auth can-i`` (``kubectl/pkg/cmd/auth/cani.go``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from serve_harness import API_ONLY, REPO, Server, kubectl_path, pod_manifest, started

pytestmark = pytest.mark.slow

SA_USER = "system:serviceaccount:kube-system:kubesched"
TOKENS = f'admintok,admin,1,system:masters\nbobtok,bob,2,"dev,qa"\nsatok,{SA_USER},3\n'


@pytest.fixture(scope="module")
def rbac(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base = tmp_path_factory.mktemp("rbac")
    (base / "tokens").write_text(TOKENS)
    yield from started(base, "--token-file", str(base / "tokens"), "--authorization-mode", "RBAC",
                       "--nodes", "2", *API_ONLY)


def _kubeconfig(server: Server, token: str) -> Path:
    """A kubeconfig holding only ``token`` (the server's CA, no client certificate)."""
    cfg = yaml.safe_load(server.kubeconfig.read_text())
    cfg["users"][0]["user"] = {"token": token}
    path = server.data_dir.parent / f"kubeconfig-{token}"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _as(server: Server, token: str, *args: str, input: str | None = None) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([kubectl_path(), *args], capture_output=True, text=True, input=input,
                          stdin=subprocess.DEVNULL if input is None else None, timeout=60,
                          env={**os.environ, "KUBECONFIG": str(_kubeconfig(server, token))})


def test_whoami_and_can_i(rbac: Server) -> None:
    who = _as(rbac, "bobtok", "auth", "whoami", "-o", "yaml")
    assert who.returncode == 0, who.stderr
    info = yaml.safe_load(who.stdout)["status"]["userInfo"]
    assert info == {"username": "bob", "uid": "2", "groups": ["dev", "qa", "system:authenticated"]}
    no = _as(rbac, "bobtok", "auth", "can-i", "list", "pods")
    assert (no.returncode, no.stdout.strip()) == (1, "no"), no.stderr
    # the kubeconfig serve writes under RBAC is the system:masters certificate; admin's token too
    assert rbac.kubectl("auth", "can-i", "delete", "nodes").stdout.strip() == "yes"
    yes = _as(rbac, "admintok", "auth", "can-i", "create", "pods", "--subresource=binding")
    assert (yes.returncode, yes.stdout.strip()) == (0, "yes")
    # system:basic-user's rules are everyone's: the self reviews themselves
    rules = _as(rbac, "bobtok", "auth", "can-i", "--list")
    assert rules.returncode == 0, rules.stderr
    assert "selfsubjectaccessreviews.authorization.k8s.io" in rules.stdout
    assert not any(line.split()[0] == "pods" for line in rules.stdout.splitlines()[1:] if line.split())


def test_forbidden_verb_then_a_role_binding_grants_it(rbac: Server) -> None:
    denied = _as(rbac, "bobtok", "get", "pods", "-n", "dev")
    assert denied.returncode == 1
    assert ('Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API '
            'group "" in the namespace "dev"') in denied.stderr
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "pod-reader", "namespace": "dev"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "qa-reads-pods", "namespace": "dev"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "qa"}]}
    rbac.kubectl("create", "namespace", "dev", check=False)
    rbac.kubectl("apply", "-f", "-", input=yaml.safe_dump_all([role, binding]))
    listed = _as(rbac, "bobtok", "get", "pods", "-n", "dev")
    assert listed.returncode == 0, listed.stderr
    assert _as(rbac, "bobtok", "auth", "can-i", "list", "pods", "-n", "default").stdout.strip() == "no"
    delete = _as(rbac, "bobtok", "delete", "pod", "x", "-n", "dev")
    assert ('pods "x" is forbidden: User "bob" cannot delete resource "pods" in API group "" in the namespace '
            '"dev"') in delete.stderr
    rules = _as(rbac, "bobtok", "auth", "can-i", "--list", "-n", "dev").stdout
    row = next(line.split() for line in rules.splitlines() if line.split() and line.split()[0] == "pods")
    assert row[-3:] == ["[get", "list", "watch]"]
    # a binding to a role that does not exist: upstream's reason follows the message
    rbac.kubectl("create", "rolebinding", "dangling", "-n", "dev", "--clusterrole=nope", "--user=bob")
    denied = _as(rbac, "bobtok", "get", "configmaps", "-n", "dev")
    assert denied.stderr.strip().endswith(': RBAC: clusterrole.rbac.authorization.k8s.io "nope" not found')


def test_invalid_role_is_a_422_naming_the_field(rbac: Server) -> None:
    bad = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "bad"},
           "rules": [{"apiGroups": [""], "resources": ["pods"]}]}
    out = rbac.kubectl("apply", "-f", "-", input=yaml.safe_dump(bad), check=False)
    assert out.returncode == 1
    assert "rules[0].verbs: Required value: verbs must contain at least one value" in out.stderr


def test_deploy_rbac_is_sufficient_for_kubesched_run(rbac: Server, tmp_path: Path) -> None:
    docs = [d for d in yaml.safe_load_all((REPO / "deploy" / "rbac.yaml").read_text())
            if d["kind"] != "ServiceAccount"]  # the token file holds the ServiceAccount's user
    assert {s["kind"] for d in docs if d["kind"] == "ClusterRoleBinding" for s in d["subjects"]} == {"ServiceAccount"}
    rbac.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(docs))
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "clientConnection: {qps: 500, burst: 500}\n"
                      "profiles:\n- schedulerName: default-scheduler\n")  # leader election on (default)
    proc = subprocess.Popen([sys.executable, "-m", "kubesched.cli.main", "run", "--kubeconfig",
                             str(_kubeconfig(rbac, "satok")), "--config", str(config), "--port", "0"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        status, _ = rbac.request("POST", "/api/v1/namespaces/default/pods", pod_manifest("rbac-p1"))
        assert status == 201
        deadline = time.monotonic() + 60
        node = ""
        while not node and time.monotonic() < deadline and proc.poll() is None:
            _, pod = rbac.request("GET", "/api/v1/namespaces/default/pods/rbac-p1")
            node = pod["spec"].get("nodeName") or ""
            time.sleep(0.2)
        assert node, f"not bound; run exited {proc.poll()}"
        status, lease = rbac.request("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/"
                                            "kube-scheduler")
        assert status == 200 and lease["spec"]["holderIdentity"]
        status, events = rbac.request("GET", "/apis/events.k8s.io/v1/namespaces/default/events")
        assert any(e.get("reason") == "Scheduled" and e["regarding"]["name"] == "rbac-p1" for e in events["items"])
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "forbidden" not in (out + err).lower(), err


def test_health_checks_listed_as_upstream(rbac: Server) -> None:
    """healthz.go's format: ``[+]<check> ok`` lines and ``<endpoint> check passed`` with
    ``?verbose``; ``exclude``; one check by path; the bare endpoint answers ``ok``. Anonymous
    users may read the bare endpoints (system:public-info-viewer), as upstream."""
    assert rbac.request("GET", "/readyz", auth=False) == (200, "ok")
    assert rbac.request("GET", "/readyz?verbose", auth=False) == (
        200, "[+]ping ok\n[+]log ok\n[+]store ok\n[+]shutdown ok\nreadyz check passed\n")
    assert rbac.request("GET", "/livez?verbose&exclude=log", auth=False) == (
        200, "[+]ping ok\n[+]log excluded: ok\n[+]store ok\nlivez check passed\n")
    assert rbac.request("GET", "/readyz/shutdown") == (200, "ok")
    assert rbac.request("GET", "/readyz/nope")[0] == 404
    # a path public-info-viewer does not list is refused to anonymous users
    status, body = rbac.request("GET", "/readyz/ping", auth=False)
    assert status == 403 and body["message"] == 'forbidden: User "system:anonymous" cannot get path "/readyz/ping"'


def test_always_allow_answers_the_reviews(server: Server) -> None:
    """The default mode: every request is allowed, and the reviews say so (kubectl auth can-i
    works against a default ``serve``); no bootstrap roles are created."""
    assert server.kubectl("auth", "can-i", "delete", "nodes").stdout.strip() == "yes"
    rules = server.kubectl("auth", "can-i", "--list").stdout.splitlines()
    assert rules[1].split() == ["*.*", "[]", "[]", "[*]"]
    assert server.kubectl("get", "clusterroles", "-o", "name").stdout.strip() == ""
