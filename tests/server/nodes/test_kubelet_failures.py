"""Kubelet-side failures as pure functions: the kubelet's back-off (``pkg/kubelet``:
``backOffPeriod`` 10 s, ``MaxContainerBackOff`` 300 s, doubling; no wait before the first
restart), Go's duration printing in the CrashLoopBackOff message, and resource admission
(``lifecycle.NewPredicateAdmitHandler`` → ``InsufficientResourceError.Error()``:
"Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d", reason
``OutOf<resource>``), with the arithmetic done by hand in each case."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.server.nodes.failures import (
    admission_rejection, backoff, crash_status, failure_mode, go_duration, rejected_status,
)


@pytest.mark.parametrize(("attempt", "want"), [(0, 0.0), (1, 10.0), (2, 20.0), (3, 40.0), (5, 160.0), (6, 300.0),
                                               (12, 300.0)])
def test_backoff(attempt: int, want: float) -> None:
    assert backoff(attempt) == want


@pytest.mark.parametrize(("secs", "want"), [(10, "10s"), (40, "40s"), (80, "1m20s"), (160, "2m40s"), (300, "5m0s")])
def test_go_duration(secs: float, want: str) -> None:
    assert go_duration(secs) == want


def pod(name: str, cpu: str = "", memory: str = "", uid: str = "", phase: str = "Running") -> dict[str, Any]:
    req = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    return {"metadata": {"name": name, "namespace": "default", "uid": uid or name},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i", "resources": {"requests": req}}]},
            "status": {"phase": phase}}


NODE = {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "3"}}}


def test_admission() -> None:
    # 1500m + 2 CPUs admitted, 1 more asked: 3500 + 1000 > 4000
    assert admission_rejection(pod("new", cpu="1"), NODE, [pod("a", cpu="1500m"), pod("b", cpu="2")]) == (
        "OutOfcpu", "Node didn't have enough resource: cpu, requested: 1000, used: 3500, capacity: 4000")
    # memory in bytes: 6Gi + 3Gi > 8Gi
    assert admission_rejection(pod("new", memory="3Gi"), NODE, [pod("a", memory="6Gi")]) == (
        "OutOfmemory", f"Node didn't have enough resource: memory, requested: {3 * 2**30}, used: {6 * 2**30}, "
        f"capacity: {8 * 2**30}")
    # pods: 3 allowed, 3 running
    assert admission_rejection(pod("new"), NODE, [pod("a"), pod("b"), pod("c")]) == (
        "OutOfpods", "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3")
    # terminal pods and the pod itself do not count; an exact fit is admitted
    assert admission_rejection(pod("new", cpu="2"), NODE, [pod("a", cpu="2"), pod("old", cpu="4", phase="Failed"),
                                                           pod("new", cpu="2")]) is None
    status = rejected_status(pod("new"), "OutOfcpu", "Node didn't have enough resource: cpu")
    assert status["phase"] == "Failed" and status["message"] == "Pod was rejected: Node didn't have enough resource: cpu"


def test_failure_mode_pod_first_then_node() -> None:
    p = pod("p")
    node = {"metadata": {"name": "n1", "labels": {"kubesched.io/fail": "image-pull"}}}
    assert failure_mode(p, node) == "image-pull"
    p["metadata"]["annotations"] = {"kubesched.io/fail": "crash-loop"}
    assert failure_mode(p, node) == "crash-loop"
    p["metadata"]["annotations"] = {"kubesched.io/fail": "something-else"}
    assert failure_mode(p, {"metadata": {"name": "n1"}}) is None


def test_crash_status_message() -> None:
    p = pod("web", uid="u-1")
    st = crash_status(p, 1_800_000_100.0, 3, running_since=None, last_exit=(1_800_000_000.0, 1_800_000_090.0),
                      wait=40)
    [cs] = st["containerStatuses"]
    assert cs["restartCount"] == 3 and cs["ready"] is False
    assert cs["state"] == {"waiting": {"reason": "CrashLoopBackOff",
                                       "message": "back-off 40s restarting failed container=c pod=web_default(u-1)"}}
    assert cs["lastState"]["terminated"] == {"exitCode": 1, "reason": "Error", "startedAt": "2027-01-15T08:00:00Z",
                                             "finishedAt": "2027-01-15T08:01:30Z"}
    ready = next(c for c in st["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == ("False", "ContainersNotReady",
                                                                   "containers with unready status: [c]")
