"""PodGroup status as scheduler-plugins computes it: the cases of ``TestPodGroupController_Run``
in ``pkg/controllers/podgroup_controller_test.go`` whose expectation does not depend on
the 48-hour timeout, and the Coscheduling plugin's PostBind phases (Scheduling below
``minMember`` bound pods, Scheduled at it). Each case runs the controller's reconcile to
its fixed point, as the upstream test reconciles once per pod update."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.server.controllers.podgroup import next_status

NOW = "2027-01-15T08:00:00Z"


def pods(n: int, phase: str, bound: bool = True) -> list[dict[str, Any]]:
    return [{"metadata": {"name": f"p{i}", "namespace": "default",
                          "ownerReferences": [{"name": "job-a"}]},
             "spec": {"nodeName": "n1"} if bound else {}, "status": {"phase": phase}} for i in range(n)]


def settle(old: dict[str, Any], min_member: int, ps: list[dict[str, Any]]) -> dict[str, Any]:
    st = old
    for _ in range(6):
        new = next_status(st, min_member, ps, NOW)
        if new == st:
            return st
        st = new
    raise AssertionError("no fixed point")


@pytest.mark.parametrize(("min_member", "ps", "previous", "want"), [
    (2, pods(2, "Running"), "Scheduling", "Running"),                     # Group running
    (2, pods(4, "Running"), "Scheduling", "Running"),                     # more than min member
    (2, pods(2, "Failed"), "Scheduling", "Failed"),                       # Group failed
    (2, pods(2, "Succeeded"), "Scheduling", "Finished"),                  # Group finished
    (3, pods(2, "Running"), "Pending", "Pending"),                        # keeps pending
    (2, pods(2, "Succeeded"), "Pending", "Finished"),                     # pending to finished
    (3, pods(2, "Pending", bound=False), "Pending", "Pending"),           # min member more than pods
    (4, pods(2, "Pending", bound=False), "Running", "Pending"),           # running to pending
    (2, pods(2, "Pending", bound=False), "Pending", "PreScheduling"),     # quorum of pods, none bound
    (3, pods(2, "Pending"), "PreScheduling", "Scheduling"),               # PostBind below minMember
    (2, pods(2, "Pending"), "PreScheduling", "Scheduled"),                # PostBind at minMember
], ids=["running", "running-more", "failed", "finished", "keeps-pending", "pending-to-finished",
        "min-more-than-pods", "running-to-pending", "prescheduling", "scheduling", "scheduled"])
def test_phase(min_member: int, ps: list[dict[str, Any]], previous: str, want: str) -> None:
    assert settle({"phase": previous}, min_member, ps)["phase"] == want


def test_counts_and_occupied_by() -> None:
    st = settle({}, 2, pods(2, "Pending", bound=False))
    assert st == {"phase": "PreScheduling", "occupiedBy": "default/job-a"}
    ps = pods(3, "Running")
    ps[2]["status"]["phase"] = "Succeeded"
    st = settle(st, 2, ps)
    assert (st["phase"], st["scheduled"], st["running"], st["succeeded"], st["scheduleStartTime"]) == \
        ("Running", 3, 2, 1, NOW)
    assert "failed" not in st  # zero counts are omitted, as upstream's omitempty
