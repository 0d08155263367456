"""RBAC escalation prevention and ClusterRole aggregation against a real ``kubesched serve
--authorization-mode RBAC`` with its controllers, driven by the real kubectl.

Expected texts are upstream's: ``ConfirmNoEscalation`` in
``pkg/registry/rbac/validation/rule.go`` ("user %q (groups=%q) is attempting to grant RBAC
permissions not currently held:\\n" + the missing rules as ``CompactString``, verbs of one
group and resource merged), wrapped in the 403 of ``errors.NewForbidden``; the aggregated
rules follow ``pkg/controller/clusterroleaggregation`` (matching roles by name, each rule once).
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest
import yaml
from serve_harness import Server, eventually, kubectl_path, started

pytestmark = pytest.mark.slow

TOKENS = 'admintok,admin,1,system:masters\ncaroltok,carol,2,"ops"\n'
CAROL = 'user "carol" (groups=["ops" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:'
RBAC_API = "/apis/rbac.authorization.k8s.io/v1"


@pytest.fixture(scope="module")
def rbac(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base = tmp_path_factory.mktemp("rbacesc")
    (base / "tokens").write_text(TOKENS)
    yield from started(base, "--token-file", str(base / "tokens"), "--authorization-mode", "RBAC",
                       "--nodes", "1", "--no-node-agent", "--no-scheduler")


def _as(server: Server, token: str, *args: str, input: str | None = None) -> "subprocess.CompletedProcess[str]":
    cfg = yaml.safe_load(server.kubeconfig.read_text())
    cfg["users"][0]["user"] = {"token": token}
    path = server.data_dir.parent / f"kubeconfig-{token}"
    path.write_text(yaml.safe_dump(cfg))
    return subprocess.run([kubectl_path(), *args], capture_output=True, text=True, input=input,
                          stdin=subprocess.DEVNULL if input is None else None, timeout=60,
                          env={**os.environ, "KUBECONFIG": str(path)})


def _role(name: str, *rules: dict[str, Any], kind: str = "Role", **extra: Any) -> str:
    meta: dict[str, Any] = {"name": name, **({"namespace": "default"} if kind == "Role" else {})}
    meta.update(extra.pop("metadata", {}))
    return json.dumps({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
                       "rules": list(rules), **extra})


def _pods(*verbs: str) -> dict[str, Any]:
    return {"apiGroups": [""], "resources": ["pods"], "verbs": list(verbs)}


def test_roles_and_bindings_cannot_grant_more_than_held(rbac: Server) -> None:
    admin = "admintok"
    assert _as(rbac, admin, "apply", "-f", "-", input=_role("carol-rights", _pods("get", "list"), {
        "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"],
        "verbs": ["create", "get", "update", "patch"]})).returncode == 0
    assert _as(rbac, admin, "create", "rolebinding", "carol-rights", "--role=carol-rights",
               "--user=carol").returncode == 0
    assert _as(rbac, admin, "apply", "-f", "-", input=_role("deleter", _pods("delete"))).returncode == 0
    # rules she holds: allowed
    ok = _as(rbac, "caroltok", "create", "-f", "-", input=_role("reader", _pods("get", "list")))
    assert ok.returncode == 0, ok.stderr
    # more than she holds: refused, the missing verbs of one resource merged
    out = _as(rbac, "caroltok", "create", "-f", "-", input=_role("wider", _pods("get", "delete", "deletecollection")))
    assert out.returncode == 1
    assert (f'roles.rbac.authorization.k8s.io "wider" is forbidden: {CAROL}\n'
            '{APIGroups:[""], Resources:["pods"], Verbs:["delete" "deletecollection"]}') in out.stderr
    # a patch is judged on the object it would store
    out = _as(rbac, "caroltok", "patch", "role", "reader", "--type=json",
              "-p", '[{"op": "add", "path": "/rules/0/verbs/-", "value": "watch"}]')
    assert out.returncode == 1 and 'Verbs:["watch"]' in out.stderr and CAROL in out.stderr
    # binding a role whose rules she lacks: refused; one she holds: allowed
    out = _as(rbac, "caroltok", "create", "rolebinding", "self-delete", "--role=deleter", "--user=carol")
    assert out.returncode == 1
    assert (f'rolebindings.rbac.authorization.k8s.io "self-delete" is forbidden: {CAROL}\n'
            '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}') in out.stderr
    ok = _as(rbac, "caroltok", "create", "rolebinding", "self-read", "--role=reader", "--user=carol")
    assert ok.returncode == 0, ok.stderr
    # escalate on roles and bind on the role lift the checks
    assert _as(rbac, admin, "apply", "-f", "-", input=_role("carol-escalate", {
        "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["escalate", "bind"]})
    ).returncode == 0
    assert _as(rbac, admin, "create", "rolebinding", "carol-escalate", "--role=carol-escalate",
               "--user=carol").returncode == 0
    ok = _as(rbac, "caroltok", "create", "-f", "-", input=_role("wider", _pods("get", "delete", "deletecollection")))
    assert ok.returncode == 0, ok.stderr
    ok = _as(rbac, "caroltok", "create", "rolebinding", "self-delete", "--role=deleter", "--user=carol")
    assert ok.returncode == 0, ok.stderr


def test_cluster_role_aggregation(rbac: Server) -> None:
    admin = "admintok"
    label = {"labels": {"rbac.example.com/aggregate-to-monitoring": "true"}}
    agg = {"clusterRoleSelectors": [{"matchLabels": {"rbac.example.com/aggregate-to-monitoring": "true"}}]}
    assert _as(rbac, admin, "apply", "-f", "-", input=_role("monitoring", kind="ClusterRole",
                                                             aggregationRule=agg)).returncode == 0
    services = {"apiGroups": [""], "resources": ["services", "endpoints"], "verbs": ["get", "list", "watch"]}
    assert _as(rbac, admin, "apply", "-f", "-", input=_role("monitoring-svc", services, kind="ClusterRole",
                                                             metadata=label)).returncode == 0
    assert _as(rbac, admin, "apply", "-f", "-", input=_role("monitoring-a-pods", _pods("get"), services,
                                                             kind="ClusterRole", metadata=label)).returncode == 0

    def rules() -> Any:
        return rbac.request("GET", f"{RBAC_API}/clusterroles/monitoring")[1].get("rules")

    # by name: monitoring-a-pods first; the services rule it shares with monitoring-svc once
    eventually(lambda: rules() == [_pods("get"), services])
    assert _as(rbac, admin, "delete", "clusterrole", "monitoring-a-pods").returncode == 0
    eventually(lambda: rules() == [services])
    # an aggregated role needs full authority to create, whatever rules it lists
    assert _as(rbac, admin, "apply", "-f", "-", input=_role("carol-cluster", {
        "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["create"]},
        kind="ClusterRole")).returncode == 0
    assert _as(rbac, admin, "create", "clusterrolebinding", "carol-cluster", "--clusterrole=carol-cluster",
               "--user=carol").returncode == 0
    out = _as(rbac, "caroltok", "create", "-f", "-", input=_role("carol-agg", kind="ClusterRole", aggregationRule=agg))
    assert out.returncode == 1
    assert ('clusterroles.rbac.authorization.k8s.io "carol-agg" is forbidden: '
            "must have cluster-admin privileges to use the aggregationRule") in out.stderr
