"""``kubesched run`` as a real process against ``kubesched serve`` (binds a pod, exits 0 on
SIGTERM), its one-line errors, and deploy/: the RBAC verbs for pods, bindings, status and
events are the ones kubesched/cluster/kube uses; the ConfigMap's configuration loads."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from serve_harness import API_ONLY, REPO, Server, pod_manifest

from kubesched.config import load_config
from kubesched.plugins.registry import in_tree_registry

KUBE = REPO / "kubesched" / "cluster" / "kube"
DEPLOY = REPO / "deploy"


def _kubesched(*args: str) -> list[str]:
    return [sys.executable, "-m", "kubesched.cli.main", *args]


@pytest.mark.slow
def test_run_binds_a_pod_and_stops_on_sigterm(spawn: Callable[..., Server], tmp_path: Path) -> None:
    server = spawn("--nodes", "2", *API_ONLY)
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "clientConnection: {qps: 500, burst: 500}\n"
                      "profiles:\n- schedulerName: default-scheduler\n")
    proc = subprocess.Popen(_kubesched("run", "--kubeconfig", str(server.kubeconfig), "--config", str(config)),
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        status, _ = server.request("POST", "/api/v1/namespaces/default/pods", pod_manifest("p1"))
        assert status == 201
        deadline = time.monotonic() + 30
        node = ""
        while not node and time.monotonic() < deadline and proc.poll() is None:
            _, pod = server.request("GET", "/api/v1/namespaces/default/pods/p1")
            node = pod["spec"].get("nodeName") or ""
            time.sleep(0.1)
        assert node, f"not bound; run exited {proc.poll()}"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "kubesched scheduler running" in out and "kubesched scheduler stopped" in out


def test_run_bad_config_or_kubeconfig_is_one_line_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nbogus: 1\n")
    for args in (["--config", str(tmp_path / "missing.yaml")], ["--config", str(bad)],
                 ["--config", str(config), "--kubeconfig", str(tmp_path / "missing-kubeconfig")]):
        res = subprocess.run(_kubesched("run", *args), cwd=REPO, capture_output=True, text=True, timeout=60)
        assert res.returncode == 2, (args, res.stderr)
        assert res.stderr.count("\n") == 1 and res.stderr.startswith("kubesched: error: "), res.stderr


def _rbac_rules() -> dict[tuple[str, str], set[str]]:
    docs = list(yaml.safe_load_all((DEPLOY / "rbac.yaml").read_text()))
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    rules: dict[tuple[str, str], set[str]] = {}
    for rule in role["rules"]:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                rules.setdefault((group, resource), set()).update(rule["verbs"])
    return rules


# (group, resource, verb) -> a pattern of the client call that needs it, in kubesched/cluster/kube
CALLS: dict[tuple[str, str, str], str] = {
    ("", "pods", "get"): r'request\("GET", PODS\.object_path\(pod\.namespace, pod\.name\)\)',
    ("", "pods", "list"): r'request\("GET", self\.resource\.path',
    ("", "pods", "watch"): r'\.watch\(self\.resource\.path',
    ("", "pods", "delete"): r'request\("DELETE", PODS\.object_path\(',
    ("", "pods/binding", "create"): r'PODS\.object_path\([^)]*"binding"\)[\s\S]{0,400}request\("POST", path',
    ("", "pods/status", "patch"): r'PODS\.object_path\([^)]*"status"\)[\s\S]{0,400}request\("PATCH", path',
    ("events.k8s.io", "events", "create"): r'request\("POST", f"\{EVENTS\.prefix\}/namespaces/\{ns\}/events"',
    ("events.k8s.io", "events", "patch"): r'request\("PATCH", EVENTS\.object_path\(',
}


def test_rbac_verbs_for_pods_bindings_status_events_are_the_ones_the_client_uses() -> None:
    source = "\n".join(p.read_text() for p in sorted(KUBE.glob("*.py")))
    rules = _rbac_rules()
    checked = {("", "pods"), ("", "pods/binding"), ("", "pods/status"), ("events.k8s.io", "events")}
    granted = {(g, r, v) for (g, r), verbs in rules.items() if (g, r) in checked for v in verbs}
    assert granted == set(CALLS), "RBAC verbs differ from the calls this test knows the client makes"
    for (group, resource, verb), pattern in CALLS.items():
        assert re.search(pattern, source), f"{group or 'core'}/{resource} {verb}: no such call in {KUBE}"
    # the client touches no other pod subresource
    assert set(re.findall(r'PODS\.object_path\([^)]*"(\w+)"\)', source)) == {"binding", "status"}


def test_deploy_configmap_loads_and_deployment_runs_it() -> None:
    cm = yaml.safe_load((DEPLOY / "configmap.yaml").read_text())
    cfg = load_config(yaml.safe_load(cm["data"]["config.yaml"]), in_tree_registry())
    assert [p.scheduler_name for p in cfg.profiles] == ["kubesched"]
    dep: dict[str, Any] = yaml.safe_load((DEPLOY / "deployment.yaml").read_text())
    assert dep["spec"]["replicas"] == 2
    container = dep["spec"]["template"]["spec"]["containers"][0]
    assert container["args"][:3] == ["run", "--config", "/etc/kubesched/config.yaml"]
    assert dep["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"] == cm["metadata"]["name"]
