"""The nominator, ported from upstream v1.34 ``scheduling_queue_test.go``:
TestPriorityQueue_UpdateNominatedPodForNode, TestPriorityQueue_NominatedPodDeleted,
TestPriorityQueue_NominatedPodsForNode, and UpdateNominatedPod's keep-the-reservation rule."""

from __future__ import annotations

import pytest
from queue_helpers import (
    high_pri_nominated_pod, high_priority_pod, med_priority_pod, new_queue, pod, unschedulable_pod,
)

from kubesched.api.objects import Pod
from kubesched.queue.nominator import NominatingInfo, NominatingMode, Nominator
from kubesched.testing.wrappers import make_pod


def lister(*pods: Pod):  # type: ignore[no-untyped-def]
    by_key = {p.key: p for p in pods}
    return lambda p: by_key.get(p.key)


def state(n: Nominator) -> tuple[dict[str, str], dict[str, list[str]]]:
    return dict(n.nominated_pod_to_node), {k: [p.uid for p in v] for k, v in n.nominated_pods.items()}


def test_update_nominated_pod_for_node() -> None:
    """TestPriorityQueue_UpdateNominatedPodForNode."""
    med, up, high = med_priority_pod(), unschedulable_pod(), high_priority_pod()
    scheduled = make_pod().name("sp").namespace("ns1").uid("spns1").node("foo").obj()
    q = new_queue(pod_lister=lister(med, up, high, scheduled))
    q.add(med)
    q.nominator.add_nominated_pod(up, NominatingInfo("node5"))
    q.nominator.add_nominated_pod(high, NominatingInfo("node2"))
    want = ({med.uid: "node1", high.uid: "node2", up.uid: "node5"},
            {"node1": [med.uid], "node2": [high.uid], "node5": [up.uid]})
    assert state(q.nominator) == want
    assert q.pop() is not None
    assert state(q.nominator) == want, "popping does not change nominations"
    q.nominator.add_nominated_pod(high, NominatingInfo("node4"))
    want = ({med.uid: "node1", high.uid: "node4", up.uid: "node5"},
            {"node1": [med.uid], "node4": [high.uid], "node5": [up.uid]})
    assert state(q.nominator) == want
    q.nominator.add_nominated_pod(pod("ne", "ns1", "nens1"), NominatingInfo("node1"))
    assert state(q.nominator) == want, "a deleted pod is not nominated"
    q.nominator.add_nominated_pod(make_pod().name("sp").namespace("ns1").uid("spns1").obj(),
                                  NominatingInfo("node1"))
    assert state(q.nominator) == want, "an already scheduled pod is not nominated"
    q.nominator.delete_nominated_pod_if_exists(high)
    assert state(q.nominator) == ({med.uid: "node1", up.uid: "node5"}, {"node1": [med.uid], "node5": [up.uid]})


@pytest.mark.parametrize("p,deleted,want", [
    (med_priority_pod(), False, 1),
    (high_pri_nominated_pod(), True, 0),
    (high_priority_pod(), False, 0),
], ids=["alive pod gets added", "deleted pod isn't added", "pod without nominatedNodeName isn't added"])
def test_nominated_pod_deleted(p: Pod, deleted: bool, want: int) -> None:
    """TestPriorityQueue_NominatedPodDeleted (Noop mode: the pod's own nominatedNodeName)."""
    n = Nominator(lister() if deleted else lister(p))
    n.add_nominated_pod(p)
    assert len(n.nominated_pods_for_node(p.nominated_node_name)) == want


def test_nominated_pods_for_node() -> None:
    """TestPriorityQueue_NominatedPodsForNode: in nomination order; a copy of the list."""
    q = new_queue()
    med, up, high = med_priority_pod(), unschedulable_pod(), high_priority_pod()
    for p in (med, up, high):
        q.add(p)
    assert q.pop() is not None
    got = q.nominator.nominated_pods_for_node("node1")
    assert [p.uid for p in got] == [med.uid, up.uid]
    got.clear()
    assert len(q.nominator.nominated_pods_for_node("node1")) == 2
    assert q.nominator.nominated_pods_for_node("node2") == []


def test_update_nominated_pod_keeps_in_memory_nomination() -> None:
    """UpdateNominatedPod: an update without nominatedNodeName on either side keeps the
    in-memory nomination; one that removes it removes the nomination."""
    n = Nominator()
    p = high_priority_pod()
    n.add_nominated_pod(p, NominatingInfo("node3"))
    n.update_nominated_pod(p, pod("hpp", "ns1", "hppns1", 1000, labels={"a": "b"}))
    assert n.nominated_pod_to_node == {p.uid: "node3"}
    nominated = high_pri_nominated_pod()
    n.update_nominated_pod(p, nominated)
    assert n.nominated_pod_to_node == {p.uid: "node1"}
    n.update_nominated_pod(nominated, p)
    assert n.nominated_pod_to_node == {}


def test_override_with_empty_node_and_noop() -> None:
    """AddNominatedPod: Override with "" records the pod under no node; Noop uses the pod's
    status; the scheduler-facing ``add(pod, "")`` only clears."""
    n = Nominator()
    p = med_priority_pod()
    n.add_nominated_pod(p, NominatingInfo("", NominatingMode.Override))
    assert n.nominated_pod_to_node == {p.uid: ""}
    n.add_nominated_pod(p, NominatingInfo("", NominatingMode.Noop))
    assert n.nominated_pod_to_node == {p.uid: "node1"}
    n.add(p, "")
    assert n.nodes() == {}
