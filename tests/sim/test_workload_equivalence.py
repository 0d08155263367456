"""For each workload kind: ``simulate`` on the workload places pods exactly as ``simulate``
on the pods written out by hand, as the kind's upstream controller would create them
(the hand-written pods below follow the controllers' rules, named in each case). Placements
are compared in creation order as (status, node).

The configuration turns PodTopologySpread's system default constraints off: those apply
only to pods with a controller (or a Service), and the hand-written pods have no owner
objects to point at; what is compared is the pods themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.config import load_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.driver import Simulation
from kubesched.sim.loading import LoadOptions, load

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args: {defaultingType: List, defaultConstraints: []}
"""

NODES = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {capacity: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n3, labels: {kubernetes.io/hostname: n3}}
spec:
  unschedulable: true
  taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n4, labels: {kubernetes.io/hostname: n4}}
spec: {taints: [{key: dedicated, value: x, effect: NoSchedule}]}
status: {capacity: {cpu: "8", memory: 8Gi, pods: "110"}}
"""

SPEC = '{containers: [{name: c, image: x, resources: {requests: {cpu: 500m, memory: 256Mi}}}]}'


def _pod(name: str, labels: str = "{app: w}", spec: str = SPEC, extra_meta: str = "") -> str:
    return f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, labels: {labels}{extra_meta}}}\nspec: {spec}\n---\n"


DAEMON_SPEC = ("{{containers: [{{name: c, image: x, resources: {{requests: {{cpu: 500m, memory: 256Mi}}}}}}], "
               "tolerations: [{{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute}}, "
               "{{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}}, "
               "{{key: node.kubernetes.io/disk-pressure, operator: Exists, effect: NoSchedule}}, "
               "{{key: node.kubernetes.io/memory-pressure, operator: Exists, effect: NoSchedule}}, "
               "{{key: node.kubernetes.io/pid-pressure, operator: Exists, effect: NoSchedule}}, "
               "{{key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoSchedule}}], "
               "affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: "
               "[{{matchFields: [{{key: metadata.name, operator: In, values: [{node}]}}]}}]}}}}}}}}")

CASES = {
    # replica_set.go manageReplicas: replicas copies of the template (Deployment: via its ReplicaSet)
    "deployment": (f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: 5
  selector: {{matchLabels: {{app: w}}}}
  template: {{metadata: {{labels: {{app: w}}}}, spec: {SPEC}}}
""", "".join(_pod(f"web-{i}") for i in range(5))),
    "replicaset": (f"""
apiVersion: apps/v1
kind: ReplicaSet
metadata: {{name: rs}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: w}}}}
  template: {{metadata: {{labels: {{app: w}}}}, spec: {SPEC}}}
""", "".join(_pod(f"rs-{i}") for i in range(3))),
    "replicationcontroller": (f"""
apiVersion: v1
kind: ReplicationController
metadata: {{name: rc}}
spec:
  replicas: 3
  template: {{metadata: {{labels: {{app: w}}}}, spec: {SPEC}}}
""", "".join(_pod(f"rc-{i}") for i in range(3))),
    # stateful_set_utils.go newStatefulSetPod: <set>-<i>, hostname, subdomain
    "statefulset": (f"""
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db}}
spec:
  replicas: 3
  serviceName: db
  selector: {{matchLabels: {{app: w}}}}
  template: {{metadata: {{labels: {{app: w}}}}, spec: {SPEC}}}
""", "".join(_pod(f"db-{i}", spec=SPEC[:-1] + f", hostname: db-{i}, subdomain: db}}") for i in range(3))),
    # job_controller.go manageJob: parallelism pods, bounded by completions; indexed_job_utils.go
    "indexed-job": ("""
apiVersion: batch/v1
kind: Job
metadata: {name: ix}
spec:
  completions: 6
  parallelism: 4
  completionMode: Indexed
  template: {spec: {restartPolicy: Never, containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]}}
""", "".join(_pod(f"ix-{i}", labels="{job-name: ix}",
                  spec=f"{{restartPolicy: Never, hostname: ix-{i}, containers: [{{name: c, image: x, "
                       f"resources: {{requests: {{cpu: 500m}}}}}}]}}") for i in range(4))),
    # cronjob_controllerv2.go: one Job of the template, then its pod
    "cronjob": ("""
apiVersion: batch/v1
kind: CronJob
metadata: {name: cj}
spec:
  schedule: "*/5 * * * *"
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}}}
""", _pod("cj-0", labels="{job-name: cj}",
          spec='{restartPolicy: Never, containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}')),
    # daemon_controller.go: a pod per node that should run it (n1, n2, n3: unschedulable but
    # tolerated; not n4: its taint is not), with the daemon tolerations and the node pinned
    "daemonset": (f"""
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: ds}}
spec:
  selector: {{matchLabels: {{app: w}}}}
  template: {{metadata: {{labels: {{app: w}}}}, spec: {SPEC}}}
""", "".join(_pod(f"ds-{n}", spec=DAEMON_SPEC.format(node=n)) for n in ("n1", "n2", "n3"))),
}


def _placements(tmp_path: Path, name: str, text: str) -> list[tuple[str, str | None]]:
    path = tmp_path / f"{name}.yaml"
    path.write_text(NODES + "---\n" + text)
    cfg = tmp_path / "config.yaml"
    cfg.write_text(CONFIG)
    sim = Simulation(load([str(path)], LoadOptions(cronjobs_fire=True)), load_config(str(cfg), in_tree_registry()))
    sim.run()
    return [(o.status, o.node) for o in sim.results()]


@pytest.mark.parametrize("kind", sorted(CASES))
def test_workload_places_like_its_pods_written_by_hand(tmp_path: Path, kind: str) -> None:
    workload, pods = CASES[kind]
    made = _placements(tmp_path, "workload", workload)
    by_hand = _placements(tmp_path, "pods", pods)
    assert made == by_hand
    assert made and all(status == "Scheduled" for status, _ in made)
    if kind == "daemonset":
        assert sorted(n for _, n in made if n) == ["n1", "n2", "n3"]
