"""The offline commands read workloads as their controllers would (kubesched.sim.loading,
kubesched.sim.expand): which pods exist after the controllers' first syncs, and strict
reading. Expected values come from upstream's controllers (each test names the file) or
are worked out by hand in the test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.api.errors import DecodeError
from kubesched.cli.main import main
from kubesched.config import load_config
from kubesched.sim.driver import Simulation
from kubesched.sim.loading import LoadOptions, load

NODES = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {capacity: {cpu: "2", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {capacity: {cpu: "2", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n3, labels: {kubernetes.io/hostname: n3}}
spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}
status: {capacity: {cpu: "2", memory: 8Gi, pods: "110"}}
"""

CONTAINER = '{containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}'


def _write(tmp_path: Path, text: str, name: str = "m.yaml") -> str:
    path = tmp_path / name
    path.write_text(NODES + "---\n" + text)
    return str(path)


def _run(path: str, **opts: Any) -> Simulation:
    sim = Simulation(load([path], LoadOptions(**opts)), _config())
    sim.run()
    return sim


def _config() -> Any:
    from kubesched.plugins.registry import in_tree_registry
    return load_config(None, in_tree_registry())


def _pods(sim: Simulation) -> dict[str, Any]:
    return {o.pod.key: o for o in sim.results()}


def test_deployment_makes_one_replicaset_and_its_pods(tmp_path: Path) -> None:
    """pkg/controller/deployment/sync.go getNewReplicaSet and replicaset/replica_set.go
    manageReplicas: the pods carry the template's labels plus pod-template-hash, are owned
    (controller) by the ReplicaSet ``web-<hash>``, which the Deployment owns; the names are
    the same in every run."""
    path = _write(tmp_path, f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: web}}}}
  template: {{metadata: {{labels: {{app: web}}}}, spec: {CONTAINER}}}
""")
    m = load([path])
    rs = next(w for w in m.workloads if w.kind == "ReplicaSet")
    assert rs.raw["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    h = rs.raw["spec"]["template"]["metadata"]["labels"]["pod-template-hash"]
    assert rs.name == f"web-{h}"
    assert len(m.pods) == 3
    for p in m.pods:
        assert p.name.startswith(f"web-{h}-") and len(p.name) == len(f"web-{h}-") + 5
        assert p.labels == {"app": "web", "pod-template-hash": h}
        ref = p.raw["metadata"]["ownerReferences"]
        assert [(r["kind"], r["name"], r["controller"]) for r in ref] == [("ReplicaSet", rs.name, True)]
    assert [p.name for p in load([path]).pods] == [p.name for p in m.pods]
    assert m.owners == {"Deployment default/web": [p.key for p in m.pods]}


def test_existing_pods_are_adopted_and_only_missing_replicas_created(tmp_path: Path) -> None:
    """pkg/controller/replicaset/replica_set.go syncReplicaSet: claimPods counts the pods the
    ReplicaSet controls and adopts orphans its selector matches; manageReplicas creates
    replicas - active. Here 4 wanted, 1 owned + 1 orphan (adopted) + 1 Succeeded (not
    active) exist, so 2 are created."""
    path = _write(tmp_path, f"""
apiVersion: apps/v1
kind: ReplicaSet
metadata: {{name: rs, uid: rs-uid}}
spec:
  replicas: 4
  selector: {{matchLabels: {{app: a}}}}
  template: {{metadata: {{labels: {{app: a}}}}, spec: {CONTAINER}}}
---
apiVersion: v1
kind: Pod
metadata:
  name: owned
  labels: {{app: a}}
  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: rs-uid, controller: true}}]
spec: {{nodeName: n1, containers: [{{name: c, image: x}}]}}
---
apiVersion: v1
kind: Pod
metadata: {{name: orphan, labels: {{app: a}}}}
spec: {CONTAINER}
---
apiVersion: v1
kind: Pod
metadata:
  name: done
  labels: {{app: a}}
  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: rs-uid, controller: true}}]
spec: {{nodeName: n2, containers: [{{name: c, image: x}}]}}
status: {{phase: Succeeded}}
""")
    m = load([path])
    names = [p.name for p in m.pods]
    assert names[:3] == ["owned", "orphan", "done"] and len(names) == 5
    orphan = m.pods[1]
    assert orphan.raw["metadata"]["ownerReferences"][0]["uid"] == "rs-uid"
    assert all(p.name.startswith("rs-") for p in m.pods[3:])


STS = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: standard}}
provisioner: ebs.csi.example.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db}}
spec:
  replicas: 3
  podManagementPolicy: {policy}
  serviceName: db
  selector: {{matchLabels: {{app: db}}}}
  template: {{metadata: {{labels: {{app: db}}}}, spec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}}}
  volumeClaimTemplates:
  - metadata: {{name: data}}
    spec: {{storageClassName: standard, accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}}}
"""


def test_statefulset_claims_are_made_and_bound_by_the_storage_emulation(tmp_path: Path) -> None:
    """pkg/controller/statefulset/stateful_set_utils.go: claim ``data-db-<i>`` per ordinal,
    the pod's volume ``data`` pointing at it; with a WaitForFirstConsumer class the claims
    bind when their pods are scheduled. 2 nodes x 2 cpu, 1 cpu per pod: all 3 fit."""
    sim = _run(_write(tmp_path, STS.format(policy="OrderedReady", cpu="1")))
    assert [(o.pod.name, o.status) for o in sim.results()] == [
        ("db-0", "Scheduled"), ("db-1", "Scheduled"), ("db-2", "Scheduled")]
    claims = {c.name: c for c in sim.storage.pvc_map.values()}
    assert sorted(claims) == ["data-db-0", "data-db-1", "data-db-2"]
    assert all(c.volume_name for c in claims.values())


@pytest.mark.parametrize(("policy", "statuses", "not_created"), [
    ("OrderedReady", [("db-0", "Unschedulable")], {"default/db-1": "default/db-0", "default/db-2": "default/db-1"}),
    ("Parallel", [("db-0", "Unschedulable"), ("db-1", "Unschedulable"), ("db-2", "Unschedulable")], {}),
], ids=["ordered", "parallel"])
def test_statefulset_ordered_ready_waits_for_the_previous_ordinal(
        tmp_path: Path, policy: str, statuses: list[tuple[str, str]], not_created: dict[str, str]) -> None:
    """pkg/controller/statefulset/stateful_set_control.go: with OrderedReady the controller
    creates pod i+1 only once pod i is Running and Ready (never, when pod i cannot be
    scheduled); Parallel creates them all. Each pod asks for 3 cpu of 2-cpu nodes."""
    sim = _run(_write(tmp_path, STS.format(policy=policy, cpu="3")))
    assert [(o.pod.name, o.status) for o in sim.results()] == statuses
    assert sim.not_created == not_created


@pytest.mark.parametrize(("extra", "want"), [
    ("completions: 3\n  parallelism: 5", 3),  # min(parallelism, completions - succeeded)
    ("completions: 10\n  parallelism: 2", 2),
    ("parallelism: 4", 4),  # a work queue: parallelism
], ids=["completions", "parallelism", "work-queue"])
def test_job_pods_are_parallelism_bounded_by_completions(tmp_path: Path, extra: str, want: int) -> None:
    """pkg/controller/job/job_controller.go manageJob: wantActive = parallelism, bounded by
    completions - succeeded when completions is set."""
    m = load([_write(tmp_path, f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: j}}
spec:
  {extra}
  template: {{spec: {{restartPolicy: Never, containers: [{{name: c, image: x}}]}}}}
""")])
    assert len(m.pods) == want
    assert all(p.labels["batch.kubernetes.io/job-name"] == "j" for p in m.pods)  # the Job strategy's labels


def test_indexed_job_takes_the_lowest_free_indexes(tmp_path: Path) -> None:
    """pkg/controller/job/indexed_job_utils.go firstPendingIndexes: index 0 has a pod already,
    so parallelism 2 of completions 4 creates the pods of indexes 1 and 2."""
    m = load([_write(tmp_path, """
apiVersion: batch/v1
kind: Job
metadata: {name: ix, uid: ix-uid}
spec:
  completions: 4
  parallelism: 2
  completionMode: Indexed
  template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}
---
apiVersion: v1
kind: Pod
metadata:
  name: ix-0-abcde
  annotations: {batch.kubernetes.io/job-completion-index: "0"}
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: ix, uid: ix-uid, controller: true}]
spec: {containers: [{name: c, image: x}]}
""")])
    made = m.pods[1:]
    assert len(made) == 1  # parallelism 2, one active already
    assert made[0].name.startswith("ix-1-") and made[0].raw["spec"]["hostname"] == "ix-1"


CRON = """
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 2 * * *"
  jobTemplate: {spec: {template: {spec: {restartPolicy: OnFailure, containers: [{name: c, image: x}]}}}}
"""


def test_cronjob_makes_nothing_unless_fired(tmp_path: Path) -> None:
    """pkg/controller/cronjob/utils.go getJobName: the Job of the 02:00 UTC run of
    1970-01-01 (7200 s after the epoch) is ``nightly-120``; its pod is ``nightly-120-<5>``."""
    path = _write(tmp_path, CRON)
    assert load([path]).pods == []
    m = load([path], LoadOptions(cronjobs_fire=True))
    assert [w.name for w in m.workloads if w.kind == "Job"] == ["nightly-120"]
    assert [p.name[:-5] for p in m.pods] == ["nightly-120-"]


def test_daemonset_one_pod_per_node_the_controller_chooses(tmp_path: Path) -> None:
    """pkg/controller/daemon/daemon_controller.go nodeShouldRunDaemonPod: n3's NoSchedule
    taint is not tolerated, so no pod for it; the others each get a pod pinned by
    metadata.name affinity, which the scheduler binds there."""
    sim = _run(_write(tmp_path, """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: x}]}}
"""))
    assert sorted((o.node, o.status) for o in sim.results()) == [("n1", "Scheduled"), ("n2", "Scheduled")]


@pytest.mark.parametrize(("text", "message"), [
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeselector: {a: b}\n"
     "  containers: [{name: c, image: x, resources: {request: {cpu: '1'}}}]\n",
     'Pod default/p: strict decoding error: unknown field "spec.nodeselector", '
     'unknown field "spec.containers[0].resources.request"'),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}]\n"
     "  containers: [{name: c, image: y}]\n",
     'Pod default/p: strict decoding error: duplicate field "spec.containers"'),
    ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n",
     'Deployment default/web: Deployment.apps "web" is invalid: spec.template: Required value'),
    ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n"
     "  template: {metadata: {labels: {app: other}}, spec: {containers: [{name: c, image: x}]}}\n",
     'Deployment default/web: Deployment.apps "web" is invalid: spec.template.metadata.labels: '
     'Invalid value: {"app": "other"}: `selector` does not match template `labels`'),
], ids=["unknown", "duplicate", "no-template", "selector"])
def test_strict_reading(tmp_path: Path, text: str, message: str) -> None:
    """Strict field validation as kube-apiserver's fieldValidation=Strict reports it
    (staging/src/k8s.io/apimachinery/pkg/runtime/serializer/json strict errors: unknown field
    and duplicate field with the field path); workloads validated as
    pkg/apis/apps/validation ValidateDeployment (template required, "`selector` does not
    match template `labels`")."""
    path = _write(tmp_path, text)
    with pytest.raises(DecodeError) as err:
        load([path])
    assert str(err.value) == f"{path}: {message}"


def test_validate_warn_and_ignore_read_past_unknown_fields(tmp_path: Path, caplog: Any) -> None:
    path = _write(tmp_path, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeselector: {a: b}\n"
                            "  containers: [{name: c, image: x}]\n")
    assert [p.name for p in load([path], LoadOptions(validate="warn")).pods] == ["p"]
    assert 'unknown field "spec.nodeselector"' in caplog.text
    caplog.clear()
    assert [p.name for p in load([path], LoadOptions(validate="ignore")).pods] == ["p"]
    assert caplog.text == ""


def test_a_directory_without_manifests_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(DecodeError, match="no manifests in this directory"):
        load([str(tmp_path)])


def test_simulate_groups_pods_by_workload_and_json_names_owners(tmp_path: Path, capsys: Any) -> None:
    """``web: 3/3`` in the table; ``-o json`` carries each pod's ownerReferences."""
    path = _write(tmp_path, f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: 5
  selector: {{matchLabels: {{app: web}}}}
  template: {{metadata: {{labels: {{app: web}}}}, spec: {CONTAINER}}}
""")
    assert main(["simulate", "-f", path]) == 0
    out = capsys.readouterr().out
    assert "Deployment default/web" in out and "4/5" in out  # 2 nodes x 2 cpu, 1 cpu per pod
    assert main(["simulate", "-f", path, "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {p["ownerReferences"][0]["kind"] for p in doc["pods"]} == {"ReplicaSet"}
    assert main(["simulate", "-f", path, "--pods"]) == 0
    assert "default/web-" in capsys.readouterr().out


@pytest.mark.parametrize(("template", "fits"), [
    ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 9\n"
     "  selector: {matchLabels: {app: web}}\n"
     "  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: x, "
     "resources: {requests: {cpu: '1'}}}]}}\n", 4),
    ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"
     "  template: {spec: {restartPolicy: Never, containers: [{name: c, image: x, "
     "resources: {requests: {cpu: 1500m}}}]}}\n", 2),
    ("apiVersion: v1\nkind: PodTemplate\nmetadata: {name: t}\n"
     "template: {spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '3'}}}]}}\n", 1),
], ids=["deployment", "job", "podtemplate"])
def test_capacity_fit_takes_a_workload_as_the_pod(tmp_path: Path, capsys: Any, template: str, fits: int) -> None:
    """One replica of the workload is the pod fit copies: on one 4-cpu node, 1 cpu fits 4
    times, 1.5 cpu twice, 3 cpu once (worked out by hand)."""
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                     "status: {capacity: {cpu: '4', memory: 8Gi, pods: '110'}}\n")
    pod = tmp_path / "pod.yaml"
    pod.write_text(template)
    assert main(["capacity", "fit", "-f", str(nodes), "--pod", str(pod), "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["fits"] == fits


def test_statefulset_adopts_its_existing_ordinal_and_waits_only_for_unscheduled_ones(tmp_path: Path) -> None:
    """pkg/controller/statefulset/stateful_set.go (ClaimPods adopts an orphan its selector
    matches) and stateful_set_control.go (ordinal i+1 waits for ordinal i): db-0 exists and
    is bound, so db-1 is created at once and db-2 after db-1."""
    m = load([_write(tmp_path, """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: x}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: db-0, labels: {app: db}}
spec: {nodeName: n1, containers: [{name: c, image: x}]}
""")])
    assert [p.name for p in m.pods] == ["db-0", "db-1", "db-2"]
    assert m.pods[0].raw["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    assert m.after == {"default/db-2": "default/db-1"}


def test_manifests_without_objects_are_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("# nothing here\n---\n")
    with pytest.raises(DecodeError, match="no objects in these manifests"):
        load([str(tmp_path)])


@pytest.mark.parametrize(("flags", "pods"), [
    ([], 2), (["--single-pass"], 0), (["--single-pass", "--controllers"], 2), (["--no-controllers"], 0),
], ids=["default", "single-pass", "single-pass-controllers", "no-controllers"])
def test_controllers_switch(tmp_path: Path, capsys: Any, flags: list[str], pods: int) -> None:
    """The controllers run unless --no-controllers, or --single-pass (the fidelity corpora's
    scheduler-alone setting) without --controllers."""
    path = _write(tmp_path, f"""
apiVersion: apps/v1
kind: ReplicaSet
metadata: {{name: rs}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: a}}}}
  template: {{metadata: {{labels: {{app: a}}}}, spec: {CONTAINER}}}
""")
    assert main(["simulate", "-f", path, "-o", "json", *flags]) == 0
    assert len(json.loads(capsys.readouterr().out)["pods"]) == pods


def test_duplicate_fields_of_json_name_their_path(tmp_path: Path) -> None:
    """A JSON object naming a field twice (the last value would win) is refused with the
    field's path, as strict decoding reports it; in a List, the path within the item."""
    path = tmp_path / "m.json"
    path.write_text('{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod", '
                    '"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x", "image": "y"}]}}]}')
    with pytest.raises(DecodeError) as err:
        load([str(path)])
    assert str(err.value) == (f'{path}: Pod default/p: strict decoding error: '
                              'duplicate field "spec.containers[0].image"')


def test_a_deployment_reuses_its_replicaset_from_a_snapshot(tmp_path: Path) -> None:
    """pkg/controller/deployment/sync.go getNewReplicaSet: the ReplicaSet the Deployment
    controls whose template equals the Deployment's, ignoring pod-template-hash
    (EqualIgnoreHash), is the new one: no second ReplicaSet; its 2 running pods are
    adopted and 1 is created for replicas 3."""
    m = load([_write(tmp_path, f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, uid: d-uid}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: web}}}}
  template: {{metadata: {{labels: {{app: web}}}}, spec: {CONTAINER}}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-abc12
  uid: rs-uid
  ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: web, uid: d-uid, controller: true}}]
spec:
  replicas: 3
  selector: {{matchLabels: {{app: web, pod-template-hash: abc12}}}}
  template: {{metadata: {{labels: {{app: web, pod-template-hash: abc12}}}}, spec: {CONTAINER}}}
""" + "".join(f"""---
apiVersion: v1
kind: Pod
metadata:
  name: web-abc12-{i}
  labels: {{app: web, pod-template-hash: abc12}}
  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc12, uid: rs-uid, controller: true}}]
spec: {{nodeName: n{i + 1}, containers: [{{name: c, image: x}}]}}
""" for i in range(2)))])
    assert [w.name for w in m.workloads if w.kind == "ReplicaSet"] == ["web-abc12"]
    assert [p.name for p in m.pods][:2] == ["web-abc12-0", "web-abc12-1"]
    assert len(m.pods) == 3 and m.pods[2].name.startswith("web-abc12-")
    assert m.owners == {"Deployment default/web": [p.key for p in m.pods]}
