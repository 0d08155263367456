"""The interim ``status.nominatedNodeName`` of a binding cycle, per Kubernetes release, seen
through a watch on ``kubesched serve``.

Upstream v1.35 (``pkg/scheduler/schedule_one.go`` ``bindingCycle``, gate
NominatedNodeNameForExpectation, on from 1.35 in ``pkg/features/kube_features.go``): when
``RunPreBindPreFlights`` says a PreBind plugin has work (VolumeBinding's ``PreBindPreFlight``
succeeds for a claim still to bind) or Permit waits, the scheduler writes the chosen node
into ``status.nominatedNodeName`` before PreBind. kube-apiserver v1.35
(``pkg/registry/core/pod/storage/storage.go`` ``setPodNodeAndMetadata``, gate
ClearingNominatedNodeNameAfterBinding, on from 1.35) empties it when it binds the pod. In
1.34 both gates are off: the pod never shows a nominated node on the way.

The pod's claim uses a WaitForFirstConsumer class, so VolumeBinding's PreBind writes the
claim's ``selected-node`` and waits for the simulated provisioner and PV controller. The gang
(scheduler-plugins' Coscheduling, minMember 2) has its first member wait at Permit for the
second: that one is nominated while it waits; the second, allowed at once and with no
PreBind work (every PreBindPreFlight skips), binds without an interim write."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from serve_harness import Server, eventually

pytestmark = pytest.mark.slow

DRIVER = "zonal.csi.example.com"
POOL = [{"count": 1, "namePrefix": "node", "capacity": {"cpu": "4", "memory": "8Gi"},
         "csiDrivers": [{"name": DRIVER, "topologyKeys": ["kubernetes.io/hostname"], "allocatable": 10}]}]
CLASS_AND_CLAIM = f"""
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: late}}
provisioner: {DRIVER}
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: data, namespace: default}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: late
  resources: {{requests: {{storage: 1Gi}}}}
"""
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "image": "postgres:16"}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}}


GANG_CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint: {enabled: [{name: Coscheduling}]}
    queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: "*"}]}
"""
GANG = """
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: gang, namespace: default}
spec: {minMember: 2, scheduleTimeoutSeconds: 60}
"""


def gang_member(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"scheduling.x-k8s.io/pod-group": "gang"}},
            "spec": {"containers": [{"name": "c", "image": "trainer:1",
                                     "resources": {"requests": {"cpu": "100m"}}}]}}


def pod_states_until_bound(server: Server) -> list[tuple[str, str]]:
    """(spec.nodeName, status.nominatedNodeName) of every state of pod ``db`` up to the one
    that binds it, read from a watch opened before the pod is created."""
    status, listed = server.request("GET", "/api/v1/namespaces/default/pods")
    assert status == 200, listed
    rv = listed["metadata"]["resourceVersion"]
    status, created = server.request("POST", "/api/v1/namespaces/default/pods", POD)
    assert status == 201, created
    states = []
    for event in server.stream(f"/api/v1/namespaces/default/pods?watch=1&resourceVersion={rv}"
                               "&fieldSelector=metadata.name%3Ddb", timeout=60):
        obj = event["object"]
        node = obj.get("spec", {}).get("nodeName") or ""
        states.append((node, (obj.get("status") or {}).get("nominatedNodeName") or ""))
        if node:
            return states
    raise AssertionError(f"the watch ended before the pod was bound: {json.dumps(states)}")


@pytest.mark.parametrize("release, expect_interim", [("1.34", False), ("1.35", True), ("1.37", True)])
def test_binding_cycle_nominates_before_prebind_and_binding_clears_it(
        spawn: Callable[..., Server], tmp_path: Path, release: str, expect_interim: bool) -> None:
    pool = tmp_path / "pool.yaml"
    pool.write_text(yaml.safe_dump(POOL))
    server = spawn("--node-pool", str(pool), "--kubernetes-version", release, "--controller-seed", "1")
    eventually(lambda: any("kubesched scheduler running" in line for line in server.output))
    server.kubectl("apply", "-f", "-", input=CLASS_AND_CLAIM)
    states = pod_states_until_bound(server)
    node = states[-1][0]
    interim = [s for s in states if s == ("", node)]
    if expect_interim:
        assert interim, states  # nominated while PreBind worked, before the binding
    else:
        assert not any(nnn for _, nnn in states), states
    assert node == "node-01" and states[-1] == (node, ""), states  # bound, and no nomination left (1.35+: cleared)
    claim: dict[str, Any] = json.loads(server.kubectl("get", "pvc", "data", "-o", "json").stdout)
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == node


@pytest.mark.parametrize("release, expect_interim", [("1.34", False), ("1.35", True)])
def test_a_gang_member_waiting_at_permit_is_nominated_while_it_waits(
        spawn: Callable[..., Server], tmp_path: Path, release: str, expect_interim: bool) -> None:
    config = tmp_path / "gang.yaml"
    config.write_text(GANG_CONFIG)
    server = spawn("--nodes", "1", "--config", str(config), "--kubernetes-version", release)
    eventually(lambda: any("kubesched scheduler running" in line for line in server.output))
    server.kubectl("apply", "-f", "-", input=GANG)
    status, listed = server.request("GET", "/api/v1/namespaces/default/pods")
    assert status == 200, listed
    rv = listed["metadata"]["resourceVersion"]
    for name in ("worker-0", "worker-1"):
        status, created = server.request("POST", "/api/v1/namespaces/default/pods", gang_member(name))
        assert status == 201, created
    states: dict[str, list[tuple[str, str]]] = {"worker-0": [], "worker-1": []}
    for event in server.stream(f"/api/v1/namespaces/default/pods?watch=1&resourceVersion={rv}"
                               "&labelSelector=scheduling.x-k8s.io%2Fpod-group%3Dgang", timeout=60):
        obj = event["object"]
        states[obj["metadata"]["name"]].append(
            (obj.get("spec", {}).get("nodeName") or "", (obj.get("status") or {}).get("nominatedNodeName") or ""))
        if all(s and s[-1][0] for s in states.values()):
            break
    nominated = sorted(name for name, seen in states.items() if ("", seen[-1][0]) in seen)
    assert len(nominated) == (1 if expect_interim else 0), states
    assert not any(nnn for seen in states.values() for node, nnn in seen if node), states
    if not expect_interim:
        assert not any(nnn for seen in states.values() for _, nnn in seen), states
