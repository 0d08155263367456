"""Recordings (kubesched/sim/recording) read and replayed without a server: the reader's
errors, and a hand-made recording replayed under the default profile and under
MostAllocated, with the placements computed by hand below.

Hand computation (upstream pkg/scheduler/framework/plugins/noderesources/least_allocated.go,
most_allocated.go, balanced_allocation.go; weights from apis/config/v1/default_plugins.go:
NodeResourcesFit 1, NodeResourcesBalancedAllocation 1; the other default scorers give every
node the same score here: no taints, affinity, images, spread constraints or volumes).
Nodes n1 (4 cpu, 16Gi) and n2 (16 cpu, 64Gi); n3 (32 cpu, 128Gi) joins at t=2. Pods of
1 cpu / 1Gi: ``a`` at t=1, ``b`` at t=3.

* ``a``, default: LeastAllocated n1 = ((4000-1000)*100/4000 + (16-1)*100/16)/2 = (75+93)/2 = 84,
  n2 = (93+98)/2 = 95; Balanced n1 = int((1 - |0.25-0.0625|/2)*100) = 90, n2 = 97.
  Totals 174 < 192: **n2**.
* ``a``, MostAllocated: n1 = (1000*100/4000 + 1*100/16)/2 = (25+6)/2 = 15, n2 = (6+1)/2 = 3;
  totals 105 > 100: **n1**.
* ``b``, default (a on n2): n1 84+90 = 174, n2 ((14000*100/16000=87) + (62*100/64=96))/2 = 91
  + Balanced 95 (|0.125-0.03125|/2) = 186, n3 ((31000*100/32000=96) + (127*100/128=99))/2 = 97
  + 98 = 195: **n3** (the node that joined).
* ``b``, MostAllocated (a on n1): n1 (50+12)/2 = 31 + Balanced 81 (|0.5-0.125|/2) = 112, n2 3+97 = 100,
  n3 (3+0)/2 = 1 + 98 = 99: **n1**.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.api.errors import DecodeError
from kubesched.config import load_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.capacity.common import RunOptions
from kubesched.sim.recording.reader import read_recording
from kubesched.sim.replay.recorded import compare, replay_recording

HEADER = {"format": "kubesched.recording", "version": 1, "source": "test", "started": "2026-01-01T00:00:00Z"}
MOST_ALLOCATED = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                  "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                      {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}


def node(name: str, cpu: int) -> dict[str, Any]:
    res = {"cpu": str(cpu), "memory": f"{4 * cpu}Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": f"uid-{name}"},
            "status": {"capacity": res, "allocatable": res}}


def pod(name: str, scheduler: str = "default-scheduler") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"schedulerName": scheduler, "containers": [{"name": "c", "image": "app", "resources": {
                "requests": {"cpu": "1", "memory": "1Gi"}}}]}}


def ref(name: str) -> dict[str, str]:
    return {"namespace": "default", "name": name, "uid": f"uid-{name}"}


def recording(recorded_a: str = "n2", recorded_b: str = "n3") -> list[dict[str, Any]]:
    return [HEADER,
            {"op": "initial", "object": node("n1", 4)}, {"op": "initial", "object": node("n2", 16)},
            {"op": "synced", "t": 0.0, "counts": {"Node": 2}},
            {"t": 1.0, "op": "add", "object": pod("a")},
            {"t": 1.2, "op": "bind", **ref("a"), "node": recorded_a, "scheduler": "default-scheduler"},
            {"t": 2.0, "op": "add", "object": node("n3", 32)},
            {"t": 3.0, "op": "add", "object": pod("b")},
            {"t": 3.1, "op": "bind", **ref("b"), "node": recorded_b, "scheduler": "default-scheduler"},
            {"t": 4.0, "op": "add", "object": pod("theirs", "their-scheduler")},
            {"t": 4.5, "op": "bind", **ref("theirs"), "node": "n2", "scheduler": "their-scheduler"},
            {"t": 5.0, "op": "finish", **ref("a"), "phase": "Succeeded"},
            {"t": 5.5, "op": "future-op"},  # an op this reader does not know: ignored
            {"t": 6.0, "op": "end", "reason": "duration", "counts": {}}]


def write(path: Path, rows: list[dict[str, Any]]) -> str:
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return str(path)


def opts(config: dict[str, Any] | None = None) -> RunOptions:
    return RunOptions(config=load_config(config, in_tree_registry()), tie_break="name")


@pytest.mark.parametrize("name", ["rec.jsonl", "rec.jsonl.gz"])
def test_default_profile_agrees_with_a_recording_of_its_own_choices(tmp_path: Path, name: str) -> None:
    rec = read_recording(write(tmp_path / name, recording()))
    assert len(rec.initial) == 2 and rec.synced and rec.end is not None and len(rec.events) == 8
    rr, result = replay_recording(rec, opts())
    assert {p.pod: p.node for p in result.pods} == {"default/a": "n2", "default/b": "n3"}
    assert [p.deleted for p in result.pods] == [5.0, None]
    assert rr.sim.cluster.pods["uid-theirs"].node_name == "n2"  # bound as the recording bound it
    cmp = compare(rr, result)
    assert (cmp["compared"], cmp["agree"], cmp["agreement"]) == (2, 2, 1.0)


def test_most_allocated_disagrees_where_computed(tmp_path: Path) -> None:
    rec = read_recording(write(tmp_path / "rec.jsonl", recording()))
    rr, result = replay_recording(rec, opts(MOST_ALLOCATED))
    cmp = compare(rr, result)
    assert [(p["pod"], p["recorded"], p["replay"], p["result"]) for p in cmp["pods"]] == [
        ("default/a", "n2", "n1", "disagree"), ("default/b", "n3", "n1", "disagree")]
    assert (cmp["agreement"], cmp["ties"]) == (0.0, 0)


@pytest.mark.parametrize("rows,message", [
    ([{"op": "initial"}], 'line 1: format: the first line must be a recording header ("format": '
                          '"kubesched.recording")'),
    ([HEADER | {"version": 2}], "line 1: version: recording version 2: this kubesched reads version 1"),
    ([HEADER, {"op": "initial", "object": []}], "line 2: object: must be an object with kind and metadata"),
    ([HEADER, {"t": -1, "op": "delete", "kind": "Node", "name": "n1"}],
     "line 2: t: must be a non-negative number of seconds, got -1"),
    ([HEADER, {"t": 1, "op": "bind", **ref("a")}], "line 2: node: is required (a string)"),
    ([HEADER, {"t": 1, "op": "finish", "name": "a"}], "line 2: namespace: is required (a string)"),
], ids=["no-header", "version", "object", "time", "bind-node", "pod-namespace"])
def test_reader_errors_name_the_line_and_field(tmp_path: Path, rows: list[dict[str, Any]], message: str) -> None:
    path = write(tmp_path / "bad.jsonl", rows)
    with pytest.raises(DecodeError) as info:
        read_recording(path)
    assert str(info.value) == f"{path}: {message}"


def test_reader_refuses_a_cut_gzip_stream_and_bad_json(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in recording()))[:-12])
    with pytest.raises(DecodeError, match="cut short"):
        read_recording(str(path))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(HEADER) + "\n{nope\n")
    with pytest.raises(DecodeError) as info:
        read_recording(str(bad))
    assert str(info.value).startswith(f"{bad}: line 2: invalid JSON: ")


def test_follow_recorded_binds_as_recorded_and_compares_its_own_choice(tmp_path: Path) -> None:
    """The recording bound ``a`` on n1 (the default profile would choose n2, see above);
    following it, the replay binds ``a`` on n1 and reports its own choice, n2, as a
    disagreement. ``b`` is then decided with ``a`` on n1: n1 (50+87)/2=68 + Balanced
    int((1 - |0.5-0.125|/2)*100)=81 = 149, n2 95+97 = 192, n3 97+98 = 195: n3, as recorded."""
    rec = read_recording(write(tmp_path / "rec.jsonl", recording(recorded_a="n1")))
    rr, result = replay_recording(rec, opts(), follow=True)
    assert {p.pod: p.node for p in result.pods} == {"default/a": "n1", "default/b": "n3"}
    cmp = compare(rr, result)
    assert [(p["pod"], p["recorded"], p["replay"], p["result"]) for p in cmp["pods"]] == [
        ("default/a", "n1", "n2", "disagree"), ("default/b", "n3", "n3", "agree")]


def test_a_node_added_while_listing_joins_the_starting_state(tmp_path: Path) -> None:
    """The recorder lists nodes before pods: a node created in between is an ``add`` event, yet
    a starting pod may be bound to it. The replay starts with that node (and its later add is
    an update of a node that is there)."""
    rows: list[dict[str, Any]] = [HEADER, {"op": "initial", "object": node("n1", 4)},
            {"t": 0.1, "op": "add", "object": node("late", 16)},
            {"op": "initial", "object": pod("early") | {"spec": pod("early")["spec"] | {"nodeName": "late"}}},
            {"op": "synced", "t": 0.2, "counts": {}},
            {"t": 1.0, "op": "add", "object": pod("a")}]
    rec = read_recording(write(tmp_path / "rec.jsonl", rows))
    rr, result = replay_recording(rec, opts())
    assert sorted(rr.sim.cluster.nodes) == ["late", "n1"]
    assert rr.sim.cluster.pods["uid-early"].node_name == "late"
    # a on late (16 cpu, early's 1 cpu there): LeastAllocated ((16000-2000)*100/16000=87 + (64-2)*100/64=96)/2
    # = 91, Balanced int((1 - |2/16 - 2/64|/2)*100) = 95: 186; on n1: 84 + 90 = 174
    assert [p.node for p in result.pods] == ["late"]


def test_compare_and_replay_commands_take_a_recording(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``compare -f RECORDING`` replays it under each configuration (placements as computed
    in the module docstring); ``replay`` refuses -f with a recording, and the comparison
    flags without one."""
    import yaml

    from kubesched.cli.main import main

    path = write(tmp_path / "rec.jsonl", recording())
    most = tmp_path / "most.yaml"
    most.write_text(yaml.safe_dump(MOST_ALLOCATED))
    assert main(["compare", "-f", path, "--config", "default", "--config", str(most), "--tie-break", "name",
                 "-o", "json", "--no-progress"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["cluster"] == [path] and doc["pendingPods"] == 2
    assert doc["diff"]["different"] == [
        {"pod": "default/a", "placements": {"default": "n2", "most": "n1"}},
        {"pod": "default/b", "placements": {"default": "n3", "most": "n1"}}]
    out = tmp_path / "report"
    assert main(["replay", "--trace", path, "--tie-break", "name", "--config", str(most), "--compare-recorded",
                 "--output-dir", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr()
    assert "agreement with the recording: 0/2 (0.0%)" in printed.out and "report: " in printed.err
    saved = json.loads((out / "comparison.json").read_text())
    assert [(p["pod"], p["replay"], p["result"]) for p in saved["pods"]] == [
        ("default/a", "n1", "disagree"), ("default/b", "n1", "disagree")]
    assert "cumulative agreement" in (out / "report.html").read_text()
    assert main(["replay", "--trace", path, "-f", path, "--no-progress"]) == 2
    assert capsys.readouterr().err == (f"kubesched: error: replay: {path} is a recording: it brings its own "
                                       "cluster (no -f)\n")
    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"time": 0, "cpu": "1"}\n')
    assert main(["replay", "--trace", str(trace), "-f", path, "--compare-recorded", "--no-progress"]) == 2
    assert capsys.readouterr().err == (f"kubesched: error: replay --compare-recorded/--follow-recorded: {trace} is "
                                       "not a recording (kubesched record)\n")


def test_a_claim_created_during_the_recording_is_there_for_its_pod(tmp_path: Path) -> None:
    """A PVC recorded as created at t=1 (as a StatefulSet's are), its pod at t=2: the only
    PersistentVolume that can satisfy it is a local one on n1 (WaitForFirstConsumer, upstream
    volume_binding.go FindPodVolumes: a PV whose node affinity excludes the node does not
    match), so the pod goes to n1, though n2 (16 cpu) would score higher without it."""
    def labelled(name: str, cpu: int) -> dict[str, Any]:
        n = node(name, cpu)
        n["metadata"]["labels"] = {"kubernetes.io/hostname": name}
        return n

    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
          "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"}
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1", "uid": "uid-pv1"},
          "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                   "local": {"path": "/d"}, "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                       {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}},
          "status": {"phase": "Available"}}
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "data", "namespace": "default", "uid": "uid-data"},
           "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                    "resources": {"requests": {"storage": "1Gi"}}}}
    user = pod("db")
    user["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    rows: list[dict[str, Any]] = [
        HEADER, {"op": "initial", "object": labelled("n1", 4)}, {"op": "initial", "object": labelled("n2", 16)},
        {"op": "initial", "object": sc}, {"op": "initial", "object": pv}, {"op": "synced", "t": 0.0, "counts": {}},
        {"t": 1.0, "op": "add", "object": pvc}, {"t": 2.0, "op": "add", "object": user},
        {"t": 3.0, "op": "update", "object": pvc | {"metadata": pvc["metadata"] | {"annotations": {"a": "b"}}}}]
    rec = read_recording(write(tmp_path / "rec.jsonl", rows))
    rr, result = replay_recording(rec, opts())
    assert [(p.pod, p.node) for p in result.pods] == [("default/db", "n1")]
    assert rr.not_replayed == {"PersistentVolumeClaim": 1}  # the binding's own write: not replayed


def test_a_resource_claim_created_during_the_recording_is_there_for_its_pod(tmp_path: Path) -> None:
    """A ResourceClaim recorded as created at t=1 for a device of class ``gpu``; its pod at t=2.
    Only n1 publishes a ResourceSlice of that driver, so only n1 can allocate the claim
    (upstream dynamicresources.go Filter: no device, the node is unschedulable), and the pod goes
    there although n2 (16 cpu) would score higher without the claim."""
    dra = "resource.k8s.io/v1"
    cls = {"apiVersion": dra, "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
    slice_ = {"apiVersion": dra, "kind": "ResourceSlice", "metadata": {"name": "n1-gpu"},
              "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                       "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                       "devices": [{"name": "gpu-0"}]}}
    claim = {"apiVersion": dra, "kind": "ResourceClaim", "metadata": {"name": "c1", "namespace": "default",
                                                                      "uid": "uid-c1"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}
    user = pod("trainer")
    user["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "c1"}]
    user["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    rows: list[dict[str, Any]] = [
        HEADER, {"op": "initial", "object": node("n1", 4)}, {"op": "initial", "object": node("n2", 16)},
        {"op": "initial", "object": cls}, {"op": "initial", "object": slice_}, {"op": "synced", "t": 0.0, "counts": {}},
        {"t": 1.0, "op": "add", "object": claim}, {"t": 2.0, "op": "add", "object": user}]
    rec = read_recording(write(tmp_path / "rec.jsonl", rows))
    rr, result = replay_recording(rec, opts())
    assert [(p.pod, p.node) for p in result.pods] == [("default/trainer", "n1")]
    allocated = rr.sim.dra.claims[("default", "c1")]
    assert allocated.allocation is not None


def test_the_recorded_release_is_the_replays(tmp_path: Path) -> None:
    """The header's ``serverVersion`` (the cluster's /version) is the starting state's
    release, as a snapshot's ServerVersion document is."""
    from kubesched.sim.replay.recorded import starting_state

    rows = recording()
    rows[0] = HEADER | {"serverVersion": {"major": "1", "minor": "35", "gitVersion": "v1.35.2"}}
    assert starting_state(read_recording(write(tmp_path / "rec.jsonl", rows))).kubernetes_version == "1.35"
    assert starting_state(read_recording(write(tmp_path / "old.jsonl", recording()))).kubernetes_version is None
