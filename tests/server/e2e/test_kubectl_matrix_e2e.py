"""The kubectl matrix: what a user reaches for after ``get`` and ``describe``, run with the
kubectl on PATH and every ``kubectl.1.NN`` found beside it (CI installs several), against
one real ``kubesched serve`` (controllers, simulated nodes and scheduler on).

Covered here: client-side apply's three-way merge, ``create`` of the kinds no other test
creates (job, configmap, priorityclass, docker-registry secret), ``create --dry-run=server``
and ``delete``/``apply`` dry runs, ``edit`` through ``KUBE_EDITOR``, strategic-merge patch
(list merged by key, ``$patch: delete``) against a merge patch (list replaced), ``rollout
status`` of a StatefulSet, ``wait --for=condition=complete`` of a Job, ``kubectl events``,
client-side ``diff``, ``apply -k`` (kustomize), ``explain`` of the kinds added with them.

Elsewhere (not repeated): server-side apply, ``diff --server-side``, explain of pods, nodes
and deployments, fieldValidation (test_apply_e2e.py); secrets, service accounts and tokens,
DaemonSet rollout, drain with an allowing and a blocking budget, logs/exec/attach/
port-forward/cp messages, cronjob create (test_workctl_kubectl_e2e.py); deployment create,
rollout status, scale, set image (test_workloads_kubectl_e2e.py); merge and json patches,
apply of the examples, cordon/label/taint, drain (test_kubectl_e2e.py); ``auth can-i`` and
``auth whoami`` under RBAC (test_rbac_e2e.py); ``wait`` of a DRA Job (test_dra_kubectl_e2e.py).

Expected outputs are kubectl's own strings (``staging/src/k8s.io/kubectl/pkg/polymorphichelpers/
rollout_status.go`` for the StatefulSet's "partitioned roll out complete: N new pods have been
updated...", as the server defaults ``rollingUpdate.partition`` to 0 like
``pkg/apis/apps/v1/defaults.go``; ``pkg/cmd/wait`` for "condition met"), and the Job
defaults of ``pkg/apis/batch/v1/defaults.go`` (completions 1, parallelism 1, backoffLimit 6).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from serve_harness import Server, eventually, started

pytestmark = pytest.mark.slow

FAST = ("--pod-start-delay", "0.2", "--pod-stop-delay", "0.1", "--node-heartbeat-interval", "0.5",
        "--controller-seed", "7")


def kubectl_binaries() -> list[str]:
    """The kubectl on PATH, then every ``kubectl.1.NN`` on PATH (sorted by minor version)."""
    main = shutil.which("kubectl")
    found = [main] if main else []
    for d in os.environ.get("PATH", "").split(os.pathsep):
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for name in names:
            path = os.path.join(d, name)
            if name.startswith("kubectl.1.") and os.access(path, os.X_OK) and path not in found:
                found.append(path)
    return found


BINARIES = kubectl_binaries()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    if not BINARIES:
        pytest.skip("kubectl is not installed (.ci/run installs Debian's kubernetes-client)")
    yield from started(tmp_path_factory.mktemp("matrix"), "--nodes", "3", *FAST)


class Kubectl:
    """One kubectl binary against the server, in its own namespace (binaries share the server)."""

    def __init__(self, binary: str, server: Server) -> None:
        self.binary, self.server = binary, server
        self.ns = "m-" + os.path.basename(binary).replace(".", "-")

    def __call__(self, *args: str, check: bool = True, input: str | None = None, timeout: float = 60,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        out = subprocess.run([self.binary, "-n", self.ns, *args], capture_output=True, text=True, input=input,
                             stdin=subprocess.DEVNULL if input is None else None, timeout=timeout,
                             env={**os.environ, "KUBECONFIG": str(self.server.kubeconfig), **(env or {})})
        if check and out.returncode != 0:
            raise AssertionError(f"{self.binary} {' '.join(args)} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
        return out

    def json(self, *args: str) -> Any:
        return json.loads(self("get", *args, "-o", "json").stdout)


@pytest.fixture(scope="module", params=BINARIES or ["kubectl"], ids=lambda p: os.path.basename(p))
def kubectl(request: pytest.FixtureRequest, server: Server) -> Kubectl:
    k = Kubectl(request.param, server)
    k("create", "namespace", k.ns)
    return k


def cm(name: str, data: dict[str, str]) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})


def test_client_side_apply_merges_three_ways(kubectl: Kubectl) -> None:
    assert kubectl("apply", "-f", "-", input=cm("csa", {"a": "1", "b": "2"})).stdout.strip() == "configmap/csa created"
    # a key someone else added survives; a key the last apply had and this one lacks is removed
    kubectl("patch", "configmap", "csa", "--type=merge", "-p", '{"data":{"other":"x"}}')
    out = kubectl("apply", "-f", "-", input=cm("csa", {"a": "1"})).stdout.strip()
    assert out == "configmap/csa configured"
    got = kubectl.json("configmap", "csa")
    assert got["data"] == {"a": "1", "other": "x"}
    last = json.loads(got["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert last["data"] == {"a": "1"}
    assert kubectl("apply", "-f", "-", input=cm("csa", {"a": "1"})).stdout.strip() == "configmap/csa unchanged"


def test_create_kinds_and_server_dry_run(kubectl: Kubectl) -> None:
    dry = json.loads(kubectl("create", "job", "dry", "--image=busybox", "--dry-run=server", "-o", "json").stdout)
    spec = dry["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (1, 1, 6)
    assert dry["spec"]["template"]["spec"]["restartPolicy"] == "Never"  # kubectl create job's
    missing = kubectl("get", "job", "dry", check=False)
    assert missing.returncode != 0 and 'jobs.batch "dry" not found' in missing.stderr

    kubectl("create", "configmap", "settings", "--from-literal=mode=fast")
    kubectl("create", "secret", "docker-registry", "pull", "--docker-server=registry.example",
            "--docker-username=u", "--docker-password=p")
    assert kubectl.json("secret", "pull")["type"] == "kubernetes.io/dockerconfigjson"
    pc = f"{kubectl.ns}-batch"
    kubectl("create", "priorityclass", pc, "--value=1000", "--description=matrix")
    assert kubectl.json("priorityclass", pc)["value"] == 1000
    kubectl("delete", "priorityclass", pc)

    out = kubectl("delete", "configmap", "settings", "--dry-run=server").stdout
    assert out.strip() == 'configmap "settings" deleted (server dry run)'
    assert kubectl.json("configmap", "settings")["data"] == {"mode": "fast"}
    out = kubectl("apply", "--dry-run=server", "-f", "-", input=cm("settings", {"mode": "slow"})).stdout
    assert "(server dry run)" in out
    assert kubectl.json("configmap", "settings")["data"] == {"mode": "fast"}


def test_edit_with_an_editor_script(kubectl: Kubectl, tmp_path: Path) -> None:
    kubectl("create", "configmap", "colors", "--from-literal=color=blue")
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/color: blue/color: red/' \"$1\"\n")
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    out = kubectl("edit", "configmap", "colors", env={"KUBE_EDITOR": str(editor)}).stdout
    assert out.strip() == "configmap/colors edited"
    assert kubectl.json("configmap", "colors")["data"] == {"color": "red"}
    # an editor that changes nothing: kubectl says so and writes nothing
    out = kubectl("edit", "configmap", "colors", env={"KUBE_EDITOR": "true"})
    assert "Edit cancelled, no changes made." in out.stdout + out.stderr


def two_containers(name: str) -> str:
    return yaml.safe_dump({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": {
        "replicas": 1, "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
            {"name": "a", "image": "a:1", "ports": [{"containerPort": 80}]}, {"name": "b", "image": "b:1"}]}}}})


def containers(kubectl: Kubectl, name: str) -> list[tuple[str, str]]:
    dep = kubectl.json("deployment", name)
    return [(c["name"], c["image"]) for c in dep["spec"]["template"]["spec"]["containers"]]


def test_strategic_merge_patch_merges_lists_by_key(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=two_containers("smp"))
    # strategic (kubectl's default): containers merged by name
    kubectl("patch", "deployment", "smp", "-p", '{"spec":{"template":{"spec":{"containers":[{"name":"b","image":"b:2"}]}}}}')
    assert containers(kubectl, "smp") == [("a", "a:1"), ("b", "b:2")]
    ports = kubectl.json("deployment", "smp")["spec"]["template"]["spec"]["containers"][0]["ports"]
    assert ports == [{"containerPort": 80, "protocol": "TCP"}]  # untouched, defaulted protocol
    # the $patch: delete directive removes the element with that key
    kubectl("patch", "deployment", "smp", "--type=strategic",
            "-p", '{"spec":{"template":{"spec":{"containers":[{"name":"a","$patch":"delete"}]}}}}')
    assert containers(kubectl, "smp") == [("b", "b:2")]
    # a JSON merge patch replaces the list whole
    kubectl("patch", "deployment", "smp", "--type=merge",
            "-p", '{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"c:1"}]}}}}')
    assert containers(kubectl, "smp") == [("c", "c:1")]
    kubectl("delete", "deployment", "smp")


def test_statefulset_rollout_status(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=yaml.safe_dump({
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"}, "spec": {
            "serviceName": "db", "replicas": 2, "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}},
                         "spec": {"containers": [{"name": "db", "image": "postgres:16"}]}}}}))
    out = kubectl("rollout", "status", "statefulset/db", "--timeout=60s", timeout=90).stdout
    assert out.splitlines()[-1] == "partitioned roll out complete: 2 new pods have been updated..."
    pods = kubectl.json("pods", "-l", "app=db")["items"]
    assert sorted(p["metadata"]["name"] for p in pods) == ["db-0", "db-1"]
    assert kubectl.json("statefulset", "db")["spec"]["updateStrategy"] == {
        "type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    kubectl("delete", "statefulset", "db", "--wait=false")


def test_job_completes_and_wait_says_so(kubectl: Kubectl) -> None:
    job = json.loads(kubectl("create", "job", "done", "--image=busybox", "--dry-run=client", "-o", "json").stdout)
    # simulated pods finish after their run-duration annotation
    job["spec"]["template"].setdefault("metadata", {})["annotations"] = {"kubesched.io/run-duration": "300ms"}
    job["spec"]["completions"] = 2
    kubectl("create", "-f", "-", input=json.dumps(job))
    out = kubectl("wait", "--for=condition=complete", "job/done", "--timeout=60s", timeout=90).stdout
    assert out.strip() == "job.batch/done condition met"
    st = kubectl.json("job", "done")["status"]
    assert st["succeeded"] == 2 and st.get("failed", 0) == 0
    assert kubectl("get", "job", "done", "-o", "name").stdout.strip() == "job.batch/done"


def test_events_for_an_object(kubectl: Kubectl) -> None:
    kubectl("create", "deployment", "ev", "--image=nginx", "--replicas=1")
    kubectl("rollout", "status", "deployment/ev", "--timeout=60s", timeout=90)
    rs = kubectl.json("rs", "-l", "app=ev")["items"][0]["metadata"]["name"]

    def rows() -> list[list[str]]:
        lines = kubectl("events", "--for", "deployment/ev").stdout.splitlines()
        return [line.split(None, 4) for line in lines[1:]] if lines and lines[0].split()[:2] == ["LAST", "SEEN"] else []

    got = eventually(lambda: [r for r in rows() if r[2] == "ScalingReplicaSet"], timeout=30)
    assert [r[1:] for r in got] == [["Normal", "ScalingReplicaSet", "Deployment/ev",
                                     f"Scaled up replica set {rs} from 0 to 1"]]
    assert {r[3] for r in rows()} == {"Deployment/ev"}  # --for: only that object's events
    out = kubectl("events", "--for", "deployment/ev", "--types=Warning")
    assert f"No events found in {kubectl.ns} namespace." in out.stdout + out.stderr
    kubectl("delete", "deployment", "ev", "--wait=false")


def test_client_side_diff(kubectl: Kubectl, tmp_path: Path) -> None:
    path = tmp_path / "cm.yaml"
    path.write_text(cm("diffcs", {"color": "red"}))
    kubectl("apply", "-f", str(path))
    assert kubectl("diff", "-f", str(path)).returncode == 0  # no difference: exit 0, no output
    path.write_text(cm("diffcs", {"color": "green"}))
    out = kubectl("diff", "-f", str(path), check=False)
    assert out.returncode == 1, out.stderr  # kubectl diff: 1 means "differences found"
    lines = out.stdout.splitlines()
    assert "-  color: red" in lines and "+  color: green" in lines
    assert kubectl.json("configmap", "diffcs")["data"] == {"color": "red"}  # a dry run wrote nothing


def test_apply_kustomize_directory(kubectl: Kubectl, tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump({
        "namePrefix": "k-", "resources": ["deployment.yaml"],
        "configMapGenerator": [{"name": "app-config", "literals": ["LEVEL=debug"]}]}))
    (tmp_path / "deployment.yaml").write_text(yaml.safe_dump({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "app"}, "spec": {
            "replicas": 1, "selector": {"matchLabels": {"app": "kz"}},
            "template": {"metadata": {"labels": {"app": "kz"}}, "spec": {"containers": [{
                "name": "app", "image": "app:1", "envFrom": [{"configMapRef": {"name": "app-config"}}]}]}}}}))
    out = kubectl("apply", "-k", str(tmp_path)).stdout.splitlines()
    assert len(out) == 2 and out[1] == "deployment.apps/k-app created"
    generated = out[0].split()[0].split("/", 1)[1]
    assert out[0] == f"configmap/{generated} created" and generated.startswith("k-app-config-")
    assert kubectl.json("configmap", generated)["data"] == {"LEVEL": "debug"}
    dep = kubectl.json("deployment", "k-app")
    assert dep["spec"]["template"]["spec"]["containers"][0]["envFrom"] == [{"configMapRef": {"name": generated}}]
    kubectl("rollout", "status", "deployment/k-app", "--timeout=60s", timeout=90)
    assert kubectl("apply", "-k", str(tmp_path)).stdout.splitlines() == [
        f"configmap/{generated} unchanged", "deployment.apps/k-app unchanged"]
    kubectl("delete", "-k", str(tmp_path), "--wait=false")


@pytest.mark.parametrize("resource, kind", [("cronjobs", "CronJob"), ("daemonsets", "DaemonSet"),
                                            ("statefulsets", "StatefulSet")])
def test_explain_kinds_described_field_by_field(kubectl: Kubectl, resource: str, kind: str) -> None:
    """Their spec and status are their own types, as upstream's explain shows them."""
    out = kubectl("explain", resource).stdout.splitlines()
    assert any(line.split() == ["KIND:", kind] for line in out), out
    fields = {line.split("\t")[0].strip(): line.split("\t")[1] for line in out if "\t<" in line}
    assert (fields["metadata"], fields["spec"], fields["status"]) == ("<ObjectMeta>", f"<{kind}Spec>",
                                                                      f"<{kind}Status>")


def test_explain_and_validate_secrets_service_accounts_jobs(kubectl: Kubectl) -> None:
    """Field names and types of core/v1 Secret and ServiceAccount and batch/v1 JobSpec
    (``staging/src/k8s.io/api/core/v1/types.go``, ``batch/v1/types.go``)."""
    def fields(what: str) -> dict[str, str]:
        out = kubectl("explain", what).stdout.splitlines()
        return {line.split("\t")[0].strip(): line.split("\t")[1] for line in out if "\t<" in line}

    secret = fields("secrets")
    assert {k: secret[k] for k in ("data", "stringData", "type", "immutable")} == {
        "data": "<map[string]string>", "stringData": "<map[string]string>", "type": "<string>",
        "immutable": "<boolean>"}
    assert "spec" not in secret
    sa = fields("serviceaccounts")
    assert (sa["secrets"], sa["imagePullSecrets"], sa["automountServiceAccountToken"]) == (
        "<[]ObjectReference>", "<[]LocalObjectReference>", "<boolean>")
    out = kubectl("explain", "jobs.spec.backoffLimit").stdout
    assert any(line.split() == ["FIELD:", "backoffLimit", "<integer>"] for line in out.splitlines()), out
    spec = fields("jobs.spec")
    assert spec["template"] == "<PodTemplateSpec> -required-" and spec["completions"] == "<integer>"
    # kubectl's default --validate=strict: an unknown field of a described kind is a 400
    bad = kubectl("create", "-f", "-", check=False, input=yaml.safe_dump(
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "typo"}, "strigData": {"a": "b"}}))
    assert bad.returncode != 0 and 'unknown field "strigData"' in bad.stderr, bad.stderr
