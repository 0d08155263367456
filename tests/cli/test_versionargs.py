"""``--kubernetes-version``/``--feature-gates`` resolution: the flag first, else what the
input recorded (a snapshot) or the API server reports (``run``), else the default release.
Expected values: the releases named in the inputs (``/version`` documents as kube-apiserver
serves them: gitVersion, major, minor)."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from kubesched.api.errors import KubeschedError
from kubesched.cli import versionargs
from kubesched.cli.main import build_parser
from kubesched.cluster.kube import TransportError


class FakeClient:
    host = "https://cluster.example"

    def __init__(self, body: Any = None, fail: bool = False) -> None:
        self.body, self.fail, self.asked = body, fail, 0

    def request(self, method: str, path: str, **_: Any) -> Any:
        assert (method, path) == ("GET", "/version")
        self.asked += 1
        if self.fail:
            raise TransportError("GET /version: connection refused")
        return self.body


def args(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["run", "--config", "x.yaml", *argv])


def test_run_decides_as_the_servers_release() -> None:
    client = FakeClient({"major": "1", "minor": "36", "gitVersion": "v1.36.2"})
    assert versionargs.server_features(args(), client).version == "1.36"


def test_the_flag_wins_and_the_server_is_not_asked() -> None:
    client = FakeClient({"gitVersion": "v1.36.2"})
    fts = versionargs.server_features(args("--kubernetes-version", "v1.35.4", "--feature-gates",
                                           "OpportunisticBatching=false"), client)
    assert (fts.version, fts.enabled("OpportunisticBatching"), client.asked) == ("1.35", False, 0)


def test_unsupported_or_unreadable_server_release_is_one_error() -> None:
    with pytest.raises(KubeschedError, match=r"https://cluster.example/version: Kubernetes 1.31 is not supported; "
                                             r"supported: 1.34, 1.35, 1.36, 1.37 \(--kubernetes-version"):
        versionargs.server_features(args(), FakeClient({"gitVersion": "v1.31.9"}))
    with pytest.raises(KubeschedError, match="cannot read https://cluster.example/version"):
        versionargs.server_features(args(), FakeClient(fail=True))


@pytest.mark.parametrize("command", [["simulate", "-f", "x"], ["explain", "p"], ["compare", "-f", "x", "--config", "c"],
                                     ["capacity", "fit", "-f", "x", "--pod", "p"], ["replay", "-f", "x", "--trace", "t"],
                                     ["bench", "--serve"], ["serve"], ["run", "--config", "c"],
                                     ["extender", "--config", "c"]])
def test_every_scheduling_command_takes_the_flags(command: list[str]) -> None:
    ns = build_parser().parse_args([*command, "--kubernetes-version", "1.36", "--feature-gates", "A=true"])
    assert (ns.kubernetes_version, ns.feature_gates) == ("1.36", "A=true")


NODE = """apiVersion: v1
kind: Node
metadata: {name: tainted}
spec:
  taints: [{key: gpu, value: "yes", effect: NoSchedule}]
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
"""
POD = """apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]}
"""


@pytest.mark.parametrize("version,reason", [
    ("1.34", "node(s) had untolerated taint {gpu: yes}"),  # v1.34 taint_toleration.go
    ("1.35", "node(s) had untolerated taint(s)"),  # v1.35 taint_toleration.go
])
def test_capacity_and_compare_decide_as_the_release(tmp_path: Any, capsys: pytest.CaptureFixture[str],
                                                    version: str, reason: str) -> None:
    import json

    from kubesched.cli.main import main

    (tmp_path / "node.yaml").write_text(NODE)
    (tmp_path / "pod.yaml").write_text(POD)
    assert main(["capacity", "fit", "-f", str(tmp_path / "node.yaml"), "--pod", str(tmp_path / "pod.yaml"),
                 "-o", "json", "--kubernetes-version", version]) == 0
    assert json.loads(capsys.readouterr().out)["refusal"]["reasons"][0]["reason"] == reason
    (tmp_path / "c.yaml").write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    assert main(["compare", "-f", str(tmp_path / "node.yaml"), "-f", str(tmp_path / "pod.yaml"),
                 "--config", str(tmp_path / "c.yaml"), "-o", "json", "--kubernetes-version", version]) == 0
    assert json.loads(capsys.readouterr().out)["kubernetesVersion"] == version
