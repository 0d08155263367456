"""Loading and scheduling a large snapshot of workloads offline (docs/performance.md).

A snapshot as ``kubesched snapshot`` writes one: NODES nodes, WORKLOADS Deployments each
with its ReplicaSet (the current template's, owned by the Deployment) and PODS_PER
running pods bound to nodes and owned by the ReplicaSet; GROWN of the Deployments (and
their ReplicaSets) ask for EXTRA more replicas, so the offline loading adopts the running
pods and creates GROWN * EXTRA pending ones, which are then scheduled.

    PYTHONPATH=. python benchmarks/workload_snapshot.py [--nodes 5000 --workloads 3000 ...]

Prints the seconds (wall clock, and CPU time of this process) to load the snapshot (read
strictly, admit, expand, decode), to build the simulation and to schedule, and the peak
resident memory. Writing the snapshot first is not measured.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from kubesched.config import load_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.server.controllers.naming import template_hash
from kubesched.sim.driver import Simulation
from kubesched.sim.loading import load

CONTAINER = {"name": "app", "image": "registry.k8s.io/pause:3.10.1", "imagePullPolicy": "IfNotPresent",
             "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
             "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}
POD_SPEC = {"containers": [CONTAINER], "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
            "schedulerName": "default-scheduler", "terminationGracePeriodSeconds": 30,
            "securityContext": {}, "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0}


def _node(i: int) -> dict[str, Any]:
    name = f"node-{i:05d}"
    cap = {"cpu": "32", "memory": "128Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": f"zone-{i % 3}"}},
            "status": {"capacity": cap, "allocatable": cap,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def _workload(w: int, replicas: int, pods: int, nodes: int) -> list[dict[str, Any]]:
    app = f"app-{w:04d}"
    template = {"metadata": {"labels": {"app": app}}, "spec": POD_SPEC}
    h = template_hash(template)
    d_uid, rs_uid = f"d-{w:04d}", f"rs-{w:04d}"
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": app, "namespace": "default",
                                                                        "uid": d_uid},
           "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app}}, "template": template}}
    rs_template = {"metadata": {"labels": {"app": app, "pod-template-hash": h}}, "spec": POD_SPEC}
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": f"{app}-{h}", "namespace": "default", "uid": rs_uid,
                       "labels": {"app": app, "pod-template-hash": h},
                       "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": app,
                                            "uid": d_uid, "controller": True, "blockOwnerDeletion": True}]},
          "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app, "pod-template-hash": h}},
                   "template": rs_template}}
    out = [dep, rs]
    for p in range(pods):
        out.append({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": f"{app}-{h}-{p:05d}", "namespace": "default",
                                 "labels": {"app": app, "pod-template-hash": h},
                                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                      "name": f"{app}-{h}", "uid": rs_uid, "controller": True,
                                                      "blockOwnerDeletion": True}]},
                    "spec": {**POD_SPEC, "nodeName": f"node-{(w * pods + p) % nodes:05d}"},
                    "status": {"phase": "Running"}})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--workloads", type=int, default=3000)
    ap.add_argument("--pods-per", type=int, default=50)
    ap.add_argument("--grown", type=int, default=1000)
    ap.add_argument("--extra", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "snapshot.json"
        items: list[dict[str, Any]] = [_node(i) for i in range(args.nodes)]
        for w in range(args.workloads):
            replicas = args.pods_per + (args.extra if w < args.grown else 0)
            items += _workload(w, replicas, args.pods_per, args.nodes)
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
        del items
        size = path.stat().st_size
        t0, c0 = time.perf_counter(), time.process_time()
        manifest = load([str(path)])
        t1, c1 = time.perf_counter(), time.process_time()
        sim = Simulation(manifest, load_config(None, in_tree_registry()))
        t2, c2 = time.perf_counter(), time.process_time()
        sim.run()
        t3, c3 = time.perf_counter(), time.process_time()
    s = sim.summary()
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"snapshotMiB": round(size / 2**20, 1), "pods": len(manifest.pods), "pending": len(sim.outcomes),
                      "scheduled": s["scheduled"], "loadSeconds": round(t1 - t0, 1), "loadCpu": round(c1 - c0, 1),
                      "wireSeconds": round(t2 - t1, 1), "wireCpu": round(c2 - c1, 1),
                      "scheduleSeconds": round(t3 - t2, 1), "scheduleCpu": round(c3 - c2, 1),
                      "peakRssMiB": round(peak_mib)}))


if __name__ == "__main__":
    main()
