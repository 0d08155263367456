"""``kubesched run`` as a real process against ``kubesched serve`` (binds a pod, exits 0 on
SIGTERM), its one-line errors, and deploy/: every RBAC rule is a call kubesched/cluster/kube
makes and every call is granted; the ConfigMap's configuration loads; the Deployment probes
the endpoints. (Leader election, endpoints and restarts: test_run_e2e.py.)"""

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
def test_run_without_leader_election_binds_a_pod_and_stops_on_sigterm(spawn: Callable[..., Server], tmp_path: Path) -> None:
    server = spawn("--nodes", "2", *API_ONLY)
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "clientConnection: {qps: 500, burst: 500}\n"
                      "leaderElection: {leaderElect: false}\n"
                      "profiles:\n- schedulerName: default-scheduler\n")
    proc = subprocess.Popen(_kubesched("run", "--kubeconfig", str(server.kubeconfig), "--config", str(config),
                                       "--port", "0"),
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
        # leaderElect: false: it schedules at once, with no Lease (upstream's default one absent)
        assert server.request("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/"
                                     "kube-scheduler")[0] == 404
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
    # client-go refuses it: "renewDeadline must be greater than retryPeriod*JitterFactor" (1.2)
    jitter = tmp_path / "jitter.yaml"
    jitter.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "leaderElection: {leaseDuration: 15s, renewDeadline: 10s, retryPeriod: 9s}\n")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:9"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}], "users": [{"name": "u", "user": {}}]}))
    cases = [(["--config", str(tmp_path / "missing.yaml")], "missing.yaml"),
             (["--config", str(bad)], "bogus"),
             (["--config", str(config), "--kubeconfig", str(tmp_path / "missing-kubeconfig")], "missing-kubeconfig"),
             (["--config", str(jitter), "--kubeconfig", str(kubeconfig)],
              "jitter.yaml: leaderElection: renewDeadline must be greater than retryPeriod*JitterFactor"),
             (["--config", str(config), "--kubeconfig", str(kubeconfig), "--port", "70000"], "--port: 70000"),
             (["--config", str(config), "--tls-cert-file", str(config)],
              "--tls-cert-file and --tls-private-key-file go together"),
             (["--config", str(config), "--tls-cert-file", str(config), "--tls-private-key-file", str(config)],
              f"--tls-cert-file: {config}, {config}: not a certificate and its key"),
             # upstream's path authorizer: only a trailing * (authorization/path/path.go)
             (["--config", str(config), "--authorization-always-allow-paths", "/healthz,/foo*bar"],
              '--authorization-always-allow-paths: only trailing * allowed in "foo*bar"')]
    for args, says in cases:
        res = subprocess.run(_kubesched("run", *args), cwd=REPO, capture_output=True, text=True, timeout=60)
        assert res.returncode == 2, (args, res.stderr)
        assert res.stderr.count("\n") == 1 and res.stderr.startswith("kubesched: error: "), res.stderr
        assert says in res.stderr, res.stderr


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
    ("", "pods", "delete"): r'request\("DELETE", PODS\.object_path\(',
    ("", "pods/binding", "create"): r'PODS\.object_path\([^)]*"binding"\)[\s\S]{0,400}request\("POST", path',
    ("", "pods/status", "patch"): r'PODS\.object_path\([^)]*"status"\)[\s\S]{0,400}request\("PATCH", path',
    ("events.k8s.io", "events", "create"): r'request\("POST", f"\{EVENTS\.prefix\}/namespaces/\{ns\}/events"',
    ("events.k8s.io", "events", "patch"): r'request\("PATCH", EVENTS\.object_path\(',
    # leader election (leaderelection.py): the Lease, and core/v1 LeaderElection events on it
    ("coordination.k8s.io", "leases", "get"): r'request\("GET", self\._path',
    ("coordination.k8s.io", "leases", "create"): r'request\("POST", f"\{LEASES\}/namespaces/\{self\.namespace\}/leases"',
    ("coordination.k8s.io", "leases", "update"): r'request\("PUT", self\._path',
    ("", "events", "create"): r'request\("POST", f"/api/v1/namespaces/\{self\.namespace\}/events"',
    # VolumeBinding's PreBind (storage.py): PV claimRef, PVC selected-node annotation
    ("", "persistentvolumes", "update"): r'request\("PUT", PVS\.object_path\(',
    ("", "persistentvolumeclaims", "update"): r'request\("PUT", PVCS\.object_path\(',
    # DynamicResources' PreBind (dra.py): the claim's finalizer, then its status (allocation, reservedFor)
    ("resource.k8s.io", "resourceclaims", "update"): r'_put\(RESOURCE_CLAIMS\.object_path\(ns, name\),',
    ("resource.k8s.io", "resourceclaims/status", "update"):
        r'_put\(RESOURCE_CLAIMS\.object_path\(ns, name, "status"\)[\s\S]*def _put[\s\S]{0,200}request\("PUT", path',
    # DRA extended resources (dra.py): PreBind creates the pod's claim, Unreserve deletes it
    ("resource.k8s.io", "resourceclaims", "create"):
        r'path = f"\{RESOURCE_CLAIMS\.prefix\}/namespaces/\{ns\}/\{RESOURCE_CLAIMS\.plural\}"[\s\S]{0,80}'
        r'request\("POST", path',
    ("resource.k8s.io", "resourceclaims", "delete"): r'request\("DELETE", RESOURCE_CLAIMS\.object_path\(',
}
# every informer lists then watches its resource (informer.py)
INFORMER_CALLS = {"list": r'request\("GET", self\.resource\.path', "watch": r'\.watch\(self\.resource\.path'}


def test_rbac_verbs_are_exactly_the_ones_the_client_uses() -> None:
    """Every (group, resource, verb) the ClusterRole grants is a call the client makes, and
    every call the client makes is granted: the explicit calls above, and list + watch of
    each resource the LiveScheduler has an informer for."""
    from kubesched.cluster.kube.resources import DEVICE_TAINT_RULES, SCHEDULER_RESOURCES

    source = "\n".join(p.read_text() for p in sorted(KUBE.glob("*.py")))
    live_source = (REPO / "kubesched" / "live" / "scheduler.py").read_text()
    needed = set(CALLS)
    for res in SCHEDULER_RESOURCES:
        assert re.search(rf"inf\({_const(res)}\)", live_source), f"no informer for {res.plural}"
        needed |= {(res.group, res.plural, verb) for verb in INFORMER_CALLS}
    # DeviceTaintRules: watched where the release's gates make them taint devices
    assert re.search(r"inf\(r\), Resource\.ResourceSlice\) for r in rules", live_source)
    assert re.search(r"rules = DEVICE_TAINT_RULES if", live_source)
    needed |= {(r.group, r.plural, verb) for r in DEVICE_TAINT_RULES for verb in INFORMER_CALLS}
    granted = {(g, r, v) for (g, r), verbs in _rbac_rules().items() for v in verbs}
    assert granted == needed, (f"granted, never used: {sorted(granted - needed)}; "
                               f"used, not granted: {sorted(needed - granted)}")
    for (group, resource, verb), pattern in CALLS.items():
        assert re.search(pattern, source), f"{group or 'core'}/{resource} {verb}: no such call in {KUBE}"
    for verb, pattern in INFORMER_CALLS.items():
        assert re.search(pattern, source), f"informers: no {verb} call in {KUBE}"
    # the client touches no other pod subresource, and no other method on a Lease
    assert set(re.findall(r'PODS\.object_path\([^)]*"(\w+)"\)', source)) == {"binding", "status"}
    assert set(re.findall(r'request\("(\w+)", (?:self\._path|f"\{LEASES\})', source)) == {"GET", "PUT", "POST"}


def _const(res: Any) -> str:
    from kubesched.cluster.kube import resources

    return next(name for name, value in vars(resources).items() if value is res and name.isupper())


def test_deploy_configmap_loads_and_deployment_runs_it() -> None:
    cm = yaml.safe_load((DEPLOY / "configmap.yaml").read_text())
    cfg = load_config(yaml.safe_load(cm["data"]["config.yaml"]), in_tree_registry())
    assert [p.scheduler_name for p in cfg.profiles] == ["kubesched"]
    dep: dict[str, Any] = yaml.safe_load((DEPLOY / "deployment.yaml").read_text())
    assert dep["spec"]["replicas"] == 2
    container = dep["spec"]["template"]["spec"]["containers"][0]
    assert container["args"][:3] == ["run", "--config", "/etc/kubesched/config.yaml"]
    assert dep["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"] == cm["metadata"]["name"]
    # two replicas elect a leader on their own Lease, and are probed on the endpoints' port
    assert cfg.leader_election.leader_elect and cfg.leader_election.resource_name == "kubesched"
    port = int(container["args"][container["args"].index("--port") + 1])
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": port}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port}
