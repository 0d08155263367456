"""A pod's requests while it is being resized in place.

Expected values: upstream ``staging/src/k8s.io/component-helpers/resource/helpers_test.go``
(TestPodResourceRequests' "resized" rows, TestAggregateContainerRequestsAndLimits' status and
"PLR vertical scaling" rows, TestPodRequestsAndLimitsVerticalScalingWrappers), where the
scheduler's options are ``UseStatusResources`` (InPlacePodVerticalScaling, on in every
supported release) and ``InPlacePodLevelResourcesVerticalScalingEnabled`` (the gate, on from
1.36). ``pod.requests`` is the count without the gate; the count with it is kept beside it
when it differs. CPU is in millicores (upstream's ``"3.5"`` is 3500).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.api.objects import Pod
from kubesched.api.resize import POD_LEVEL_RESIZE
from kubesched.framework.features import Features
from kubesched.framework.resized import as_counted

INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]


def ctr(name: str, cpu: str | None = None, restart: str | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": "i", "resources": {"requests": {"cpu": cpu}} if cpu else {}}
    if restart:
        c["restartPolicy"] = restart
    return c


def cstatus(name: str, allocated: str | None = None, actual: str | None = None) -> dict[str, Any]:
    s: dict[str, Any] = {"name": name}
    if allocated is not None:
        s["allocatedResources"] = {"cpu": allocated}
    if actual is not None:
        s["resources"] = {"requests": {"cpu": actual}}
    return s


def pod(containers: list[dict[str, Any]], status: dict[str, Any], pod_cpu: str | None = None,
        inits: list[dict[str, Any]] | None = None, overhead: str | None = None) -> Pod:
    spec: dict[str, Any] = {"containers": containers, "nodeName": "n1"}
    if inits:
        spec["initContainers"] = inits
    if pod_cpu:
        spec["resources"] = {"requests": {"cpu": pod_cpu}}
    if overhead:
        spec["overhead"] = {"cpu": overhead}
    return Pod.from_dict({"metadata": {"name": "p", "namespace": "default"}, "spec": spec, "status": status},
                         validate=False)


def cpu(p: Pod, pod_level_resize: bool) -> int:
    if pod_level_resize and POD_LEVEL_RESIZE in p.extra:
        return int(p.extra[POD_LEVEL_RESIZE][0]["cpu"])
    return p.requests.get("cpu", 0)


@pytest.mark.parametrize("p,off,on", [
    # TestPodResourceRequests
    pytest.param(pod([ctr("container-1", "4")], {"conditions": INFEASIBLE,
                                                 "containerStatuses": [cstatus("container-1", actual="2")]}),
                 2000, 2000, id="resized-infeasible"),
    pytest.param(pod([ctr("container-1", "6")], {"conditions": INFEASIBLE,
                                                 "containerStatuses": [cstatus("container-1", "4", "2")]}),
                 4000, 4000, id="resized-infeasible-and-in-progress"),
    pytest.param(pod([ctr("container-1", "4")], {"containerStatuses": [cstatus("container-1", actual="2")]}),
                 4000, 4000, id="resized-no-resize-status"),
    # TestAggregateContainerRequestsAndLimits
    pytest.param(pod([ctr("container-1")], {"containerStatuses": [cstatus("container-1", actual="2")]}),
                 2000, 2000, id="empty-requests-status-non-empty"),
    pytest.param(pod([], {"initContainerStatuses": [cstatus("container-1", actual="2")]},
                     inits=[ctr("container-1", restart="Always")]),
                 2000, 2000, id="sidecar-empty-requests-status-non-empty"),
    pytest.param(pod([ctr("c1", "1"), ctr("c2", "2")],
                     {"containerStatuses": [cstatus("c1", "2"), cstatus("c2", "1")]}),
                 3000, 3000, id="max-of-sums-not-sum-of-maxes"),
    pytest.param(pod([ctr("c1", "1")], {"allocatedResources": {"cpu": "4"}, "resources": {"requests": {"cpu": "3"}}}),
                 1000, 4000, id="plr-resolves-from-pod-status"),
    pytest.param(pod([ctr("c1", "1")], {"containerStatuses": [cstatus("c1", "6", "5")],
                                        "resources": {"requests": {"cpu": "3"}}}),
                 6000, 6000, id="plr-falls-back-without-pod-allocated"),
    pytest.param(pod([ctr("c1", "1")], {"containerStatuses": [cstatus("c1", "6", "5")],
                                        "allocatedResources": {"cpu": "6"}}),
                 6000, 6000, id="plr-falls-back-without-pod-resources"),
    # TestPodRequestsAndLimitsVerticalScalingWrappers (pod-level spec.resources)
    pytest.param(pod([ctr("c1", "1")], {"allocatedResources": {"cpu": "3"}, "resources": {"requests": {"cpu": "3.5"}}},
                     pod_cpu="2"),
                 2000, 3500, id="pod-level-status-populated"),
    pytest.param(pod([ctr("c1", "1")], {"conditions": INFEASIBLE, "allocatedResources": {"cpu": "3"},
                                        "resources": {"requests": {"cpu": "4"}}}, pod_cpu="10"),
                 10000, 4000, id="pod-level-infeasible-resize"),
])
def test_requests(p: Pod, off: int, on: int) -> None:
    assert (cpu(p, False), cpu(p, True)) == (off, on)


def test_pod_level_status_less_overhead() -> None:
    """Hand computation from ``PodRequests``: status.resources.requests (2500m) includes the
    500m overhead, so 2000m of it is the pod's; max(spec 1000m, 2000m) + overhead = 2500m.
    Without the gate: spec 1000m + 500m."""
    p = pod([ctr("c1", "1")], {"resources": {"requests": {"cpu": "2500m"}}}, pod_cpu="1", overhead="500m")
    assert (cpu(p, False), cpu(p, True)) == (1500, 2500)


def test_pods_never_resized_keep_one_count() -> None:
    p = pod([ctr("c1", "1")], {"phase": "Running", "containerStatuses": [{"name": "c1", "ready": True}]})
    assert p.requests["cpu"] == 1000 and POD_LEVEL_RESIZE not in p.extra


def test_the_gate_chooses_the_count() -> None:
    p = pod([ctr("c1", "1")], {"allocatedResources": {"cpu": "3"}, "resources": {"requests": {"cpu": "3.5"}}},
            pod_cpu="2")
    assert as_counted(p, Features.for_version("1.35")).requests["cpu"] == 2000
    assert as_counted(p, Features.for_version("1.36")).requests["cpu"] == 3500
    assert as_counted(p, Features.for_version("1.37", "InPlacePodLevelResourcesVerticalScaling=false")) is p


BOUND = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: resized, namespace: default}
spec:
  nodeName: n1
  resources: {requests: {cpu: "1"}, limits: {cpu: "4"}}
  containers: [{name: c, image: i}]
status:
  phase: Running
  allocatedResources: {cpu: "3"}
  resources: {requests: {cpu: "3"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: "2"}}}]}
"""


@pytest.mark.parametrize("version,status", [("1.35", "Scheduled"), ("1.36", "Unschedulable"),
                                            ("1.37", "Unschedulable")])
def test_simulate_counts_a_pod_level_resize_from_1_36(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      version: str, status: str) -> None:
    """n1 has 4 CPUs; the bound pod asks 1 in its spec but holds 3 after a pod-level resize.
    1.35 counts 1 (3 free: web's 2 fit); 1.36+ counts 3 (1 free: web does not fit)."""
    from kubesched.cli.main import main

    (tmp_path / "c.yaml").write_text(BOUND)
    assert main(["simulate", "-f", str(tmp_path / "c.yaml"), "-o", "json", "--kubernetes-version", version]) == 0
    pods = {p["name"]: p["status"] for p in json.loads(capsys.readouterr().out)["pods"]}
    assert pods["web"] == status
