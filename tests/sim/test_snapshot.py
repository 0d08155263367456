"""sim/snapshot.py without a server: a ``kubectl get -o yaml`` dump, what is stripped and
left out, errors on bad dumps, and how a refusal to list a kind is handled (a stand-in for
KubeClient that answers from a dict; the real client against a real serve is exercised in
tests/live/test_snapshot_e2e.py)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.decode import load_manifests
from kubesched.api.errors import KubeschedError
from kubesched.cli.main import main
from kubesched.cluster.kube import ApiStatusError
from kubesched.sim import snapshot

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {
    "name": "n1", "resourceVersion": "7", "managedFields": [{"manager": "kubelet"}],
    "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
               "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
               "conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1.34.0"}}}


def pod(name: str, phase: str = "Running", node: str = "n1", ts: str = "2026-01-01T00:00:00Z") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "creationTimestamp": ts},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x",
                                                        "resources": {"requests": {"cpu": "1"}}}]},
            "status": {"phase": phase, "podIP": "10.0.0.1", "containerStatuses": [{"name": "c", "ready": True}]}}


def dump(tmp_path: Path, items: list[dict[str, Any]]) -> Path:
    """What ``kubectl get nodes,pods,secrets,... -A -o yaml`` prints: one List."""
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                                    "items": items}))
    return path


def test_a_snapshot_keeps_declared_features(tmp_path: Path) -> None:
    """NodeDeclaredFeatures reads a node's status.declaredFeatures: kept, as listed."""
    declared: dict[str, Any] = copy.deepcopy(NODE)
    declared["status"]["declaredFeatures"] = ["B", "A"]
    snap = snapshot.from_dump([str(dump(tmp_path, [declared]))])
    assert snap.objects["Node"][0]["status"]["declaredFeatures"] == ["B", "A"]


def test_from_dump_keeps_what_the_scheduler_reads(tmp_path: Path) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"},
              "data": {"k": "aHVudGVyMg=="}}
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default"}}
    items = [pod("late", ts="2026-01-01T00:00:05Z"), pod("early"), pod("done", phase="Succeeded"),
             secret, event, NODE]
    snap = snapshot.from_dump([str(dump(tmp_path, items))])
    assert snap.counts() == {"Node": 1, "Pod": 2}
    assert snap.finished_pods == 1 and dict(snap.left_out) == {"Event": 1, "Secret": 1}
    node = snap.objects["Node"][0]
    assert node["metadata"] == {"name": "n1"}  # managedFields, resourceVersion, last-applied gone
    assert set(node["status"]) == {"allocatable", "capacity"}
    pods = snap.objects["Pod"]
    assert [p["metadata"]["name"] for p in pods] == ["early", "late"]  # by creationTimestamp
    assert pods[0]["status"] == {"phase": "Running"} and pods[0]["metadata"]["uid"] == "uid-early"
    out = tmp_path / "snap.yaml"
    assert snapshot.write(snap, str(out)) == [out]
    text = out.read_text()
    assert text.startswith("# kubesched snapshot of ") and "# left out (not read by the scheduler): 1 Event, 1 Secret" in text
    m = load_manifests([str(out)])  # what simulate reads
    assert [p.name for p in m.pods] == ["early", "late"] and [n.name for n in m.nodes] == ["n1"]

    kept = snapshot.from_dump([str(tmp_path / "dump.yaml")], keep_finished=True)
    assert [p["metadata"]["name"] for p in kept.objects["Pod"]] == ["done", "early", "late"]


def test_directory_output_one_file_per_kind_replacing_an_earlier_snapshot(tmp_path: Path) -> None:
    out = tmp_path / "snap"
    out.mkdir()
    (out / "06-csistoragecapacities.yaml").write_text("stale")
    (out / "notes.txt").write_text("mine")
    snap = snapshot.from_dump([str(dump(tmp_path, [NODE, pod("a")]))])
    written = snapshot.write(snap, str(out), directory=True)
    assert [p.name for p in written] == ["03-nodes.yaml", "21-pods.yaml"]
    assert sorted(p.name for p in out.iterdir()) == ["03-nodes.yaml", "21-pods.yaml", "notes.txt"]


@pytest.mark.parametrize(("text", "message"), [
    ("- 1\n- 2\n", "dump.yaml: document 1: must be an object with apiVersion and kind"),
    ("apiVersion: v1\nkind: List\nitems:\n- {metadata: {name: x}}\n",
     "dump.yaml: document 1, items[0]: kind: kind is required"),
    ("apiVersion: v1beta1\nkind: Node\nmetadata: {name: x}\n",
     'dump.yaml: document 1: apiVersion: Node in version "v1beta1": kubesched reads v1'),
])
def test_bad_dumps_name_the_file_and_the_object(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "dump.yaml"
    path.write_text(text)
    with pytest.raises(KubeschedError) as exc:
        snapshot.from_dump([str(path)])
    assert str(exc.value) == str(tmp_path / message)


def test_cli_from_dump_to_stdout_and_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["snapshot", "--from-dump", str(dump(tmp_path, [NODE]))]) == 0
    docs = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d]
    assert [d["kind"] for d in docs] == ["Node"]
    assert main(["snapshot", "--from-dump", str(tmp_path / "nope.yaml")]) == 2
    assert capsys.readouterr().err == f"kubesched: error: {tmp_path / 'nope.yaml'}: No such file or directory\n"


class FakeClient:
    """Answers lists from ``lists`` (plural -> items); ``refuse`` (plural -> status code)."""

    host = "https://cluster.example"

    def __init__(self, lists: dict[str, list[dict[str, Any]]], refuse: dict[str, int]) -> None:
        self.lists = lists
        self.refuse = refuse

    def request(self, method: str, path: str, **_: Any) -> Any:
        if path == "/version":
            return {"major": "1", "minor": "35", "gitVersion": "v1.35.2", "platform": "linux/amd64"}
        plural = path.rsplit("/", 1)[1]
        if plural in self.refuse:
            code = self.refuse[plural]
            raise ApiStatusError(code, {403: "Forbidden", 404: "NotFound"}[code], f"{plural} is {code}")
        return {"items": self.lists.get(plural, []), "metadata": {}}


def test_forbidden_kinds_warn_unserved_kinds_are_left_out_nodes_and_pods_are_required() -> None:
    refuse = {"poddisruptionbudgets": 403, "deviceclasses": 404, "resourceslices": 404,
              "resourceclaims": 404, "resourceclaimtemplates": 404, "podgroups": 404}
    seen: list[str] = []
    client: Any = FakeClient({"nodes": [NODE], "pods": [pod("a")]}, refuse)
    snap = snapshot.take(client, progress=lambda kind, done, total: seen.append(kind))
    assert snap.counts() == {"Node": 1, "Pod": 1}
    assert snap.warnings == ["PodDisruptionBudget: forbidden (poddisruptionbudgets is 403); left out of the snapshot"]
    assert snap.not_served == ["DeviceClass", "ResourceSlice", "ResourceClaimTemplate", "ResourceClaim", "PodGroup"]
    assert seen == list(snapshot.ORDER) + [""]
    assert snap.server_version == {"major": "1", "minor": "35", "gitVersion": "v1.35.2", "platform": "linux/amd64"}
    for plural in ("nodes", "pods"):
        with pytest.raises(KubeschedError, match=f"snapshot: listing {plural} at https://cluster.example: 403"):
            snapshot.take(FakeClient({}, {plural: 403}))  # type: ignore[arg-type]


def test_json_file_output_is_a_list_simulate_reads(tmp_path: Path) -> None:
    snap = snapshot.from_dump([str(dump(tmp_path, [NODE, pod("a"), pod("b", node="")]))])
    out = tmp_path / "snap.json"
    snapshot.write(snap, str(out))
    m = load_manifests([str(out)])
    assert [(p.name, p.node_name) for p in m.pods] == [("a", "n1"), ("b", "")]


def test_recorded_server_version_chooses_the_release(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A snapshot records the cluster's /version as a ServerVersion document; load_manifests
    reads it back and simulate decides as that release unless --kubernetes-version says
    otherwise. A release kubesched does not support is an error naming the file."""
    snap = snapshot.from_dump([str(dump(tmp_path, [NODE, pod("a", node="")]))])
    snap.server_version = {"major": "1", "minor": "35", "gitVersion": "v1.35.4"}
    out = tmp_path / "snap"
    snapshot.write(snap, str(out), directory=True)
    assert (out / "00-version.yaml").read_text().startswith("# kubesched snapshot")
    assert load_manifests([str(out)]).kubernetes_version == "1.35"
    assert main(["simulate", "-f", str(out), "-o", "json"]) == 0
    assert '"kubernetesVersion": "1.35"' in capsys.readouterr().out
    assert main(["simulate", "-f", str(out), "-o", "json", "--kubernetes-version", "1.36"]) == 0
    assert '"kubernetesVersion": "1.36"' in capsys.readouterr().out
    snap.server_version = {"major": "1", "minor": "31", "gitVersion": "v1.31.0"}
    snapshot.write(snap, str(out), directory=True)
    assert main(["simulate", "-f", str(out)]) == 2
    assert capsys.readouterr().err == (f"kubesched: error: {out / '00-version.yaml'}: ServerVersion: Kubernetes 1.31 "
                                       "is not supported; supported: 1.34, 1.35, 1.36, 1.37\n")
