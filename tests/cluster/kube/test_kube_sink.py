"""KubeSink and EventRecorder against ``kubesched serve``'s API server over real HTTP: the
binding subresource (and its conflicts), PodScheduled and nominatedNodeName in one status
patch (only when something changes), preemption (DisruptionTarget, delete, Preempted
event), events.k8s.io/v1 Events as upstream writes them (truncation, series)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from kube_helpers import eventually, pod_manifest

from kubesched.api.objects import Pod
from kubesched.server.apiserver.server import ApiServer
from kubesched.cluster.kube import EventRecorder, Informer, KubeClient, KubeSink
from kubesched.cluster.kube.errors import FencedError
from kubesched.cluster.kube.events import truncate_message
from kubesched.cluster.kube.resources import PODS
from kubesched.framework.status import Code


class PodWatch:
    """The informer's view of pods, and every update it saw."""

    def __init__(self, client: KubeClient) -> None:
        self.updates: list[tuple[Pod, Pod]] = []
        self.informer: Informer[Pod] = Informer(client, PODS, on_update=lambda a, b: self.updates.append((a, b)))
        self.informer.start()
        assert self.informer.wait_for_sync(10)

    def get(self, name: str) -> Pod:
        p = self.informer.get(f"default/{name}")
        assert p is not None
        return p

    def updates_of(self, name: str) -> list[Pod]:
        return [new for _, new in self.updates if new.name == name]


@pytest.fixture
def pods(client: KubeClient) -> Iterator[PodWatch]:
    w = PodWatch(client)
    yield w
    w.informer.stop()


@pytest.fixture
def sink(client: KubeClient, pods: PodWatch) -> Iterator[KubeSink]:
    recorder = EventRecorder(client)
    recorder.start()

    def by_uid(uid: str) -> Pod | None:
        return next((p for p in pods.informer.values() if p.uid == uid), None)

    s = KubeSink(client, recorder, pod_by_uid=by_uid)
    yield s
    recorder.stop()


def create(server: ApiServer, pods: PodWatch, name: str, **spec: Any) -> Pod:
    server.registry.create("pods", "default", pod_manifest(name, **spec))
    return eventually(lambda: pods.informer.get(f"default/{name}"))


def events(server: ApiServer, name: str) -> list[dict[str, Any]]:
    items = server.registry.list("events.k8s.io/events", "default").get("items", [])  # type: ignore[union-attr]
    return [e for e in items if e["regarding"]["name"] == name]


def test_bind(apiserver: ApiServer, pods: PodWatch, sink: KubeSink, client: KubeClient) -> None:
    p = create(apiserver, pods, "p")
    assert sink.bind(p, "node-01").success
    bound = apiserver.registry.get("pods", "default", "p")
    assert bound["spec"]["nodeName"] == "node-01"
    assert [c["status"] for c in bound["status"]["conditions"] if c["type"] == "PodScheduled"] == ["True"]
    again = sink.bind(p, "node-02")  # never twice
    assert again.code == Code.Error and "already bound" in again.message
    other = KubeSink(client, sink.recorder).bind(p, "node-02")  # another scheduler: the server refuses
    assert other.code == Code.Error and other.message == (
        'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "node-01"')
    gone = KubeSink(client, sink.recorder).bind(
        Pod.from_dict(pod_manifest("missing") | {"metadata": {"name": "missing", "namespace": "default",
                                                              "uid": "u-missing"}}, validate=False), "node-01")
    assert gone.code == Code.Error and gone.message == 'pods "missing" not found'
    sink.close()
    assert sink.bind(create(apiserver, pods, "late"), "node-01").message == "the scheduler is shutting down"


def test_failure_status_and_nomination_in_one_patch(apiserver: ApiServer, pods: PodWatch, sink: KubeSink) -> None:
    """upstream updatePod: the PodScheduled condition and nominatedNodeName together; no
    patch when nothing would change; a nomination alone goes out on flush."""
    p = create(apiserver, pods, "p")
    msg = "0/2 nodes are available: 2 Insufficient cpu."
    sink.set_nominated_node(p, "node-02")
    sink.set_pod_scheduled_condition(p, "False", "Unschedulable", msg)
    eventually(lambda: len(pods.updates_of("p")) == 1)
    cur = pods.get("p")
    assert cur.nominated_node_name == "node-02"
    (cond,) = [c for c in cur.raw["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", msg)
    sink.set_pod_scheduled_condition(cur, "False", "Unschedulable", msg)  # the same: nothing sent
    sink.set_nominated_node(cur, "")
    sink.flush()  # the nomination alone
    eventually(lambda: len(pods.updates_of("p")) == 2)
    assert pods.get("p").nominated_node_name == ""
    assert [c["message"] for c in pods.get("p").raw["status"]["conditions"] if c["type"] == "PodScheduled"] == [msg]


def test_preemption(apiserver: ApiServer, pods: PodWatch, sink: KubeSink) -> None:
    victim = create(apiserver, pods, "victim", nodeName="node-01", terminationGracePeriodSeconds=0)
    preemptor = create(apiserver, pods, "preemptor", schedulerName="my-scheduler")
    message = f"Preempted by pod {preemptor.uid} on node node-01"
    assert sink.delete_pod(victim, "Preempted", message).success
    eventually(lambda: pods.informer.get("default/victim") is None)
    (before_delete,) = pods.updates_of("victim")
    (cond,) = [c for c in before_delete.raw["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True", "PreemptionByScheduler", "my-scheduler: preempting to accommodate a higher priority pod")
    (ev,) = eventually(lambda: events(apiserver, "victim"))
    assert (ev["reason"], ev["action"], ev["type"], ev["note"]) == ("Preempted", "Preempting", "Normal", message)
    assert ev["related"]["name"] == "preemptor" and ev["reportingController"] == "my-scheduler"
    assert sink.delete_pod(victim, "Preempted", message).code == Code.Error  # already gone


def test_events_as_upstream_records_them(apiserver: ApiServer, pods: PodWatch, sink: KubeSink) -> None:
    p = create(apiserver, pods, "p")
    long = "0/5000 nodes are available: " + ", ".join(f"1 node(s) had untolerated taint {{k{i}: v}}"
                                                       for i in range(60))
    sink.record_event(p, "Warning", "FailedScheduling", long)
    (ev,) = eventually(lambda: events(apiserver, "p"))
    assert len(ev["note"].encode()) == 1024 and ev["note"].endswith(" ...") and long.startswith(ev["note"][:-4])
    assert (ev["action"], ev["reportingController"]) == ("Scheduling", "default-scheduler")
    assert ev["reportingInstance"] == f"default-scheduler-{socket.gethostname()}"
    assert (ev["regarding"]["kind"], ev["regarding"]["uid"]) == ("Pod", p.uid)
    sink.record_event(p, "Warning", "FailedScheduling", "again")  # isomorphic: a series
    eventually(lambda: (events(apiserver, "p")[0].get("series") or {}).get("count") == 2)
    assert len(events(apiserver, "p")) == 1
    sink.record_event(p, "Normal", "Scheduled", "Successfully assigned default/p to node-01")
    bound = eventually(lambda: [e for e in events(apiserver, "p") if e["reason"] == "Scheduled"])
    assert bound[0]["action"] == "Binding"


def test_a_fenced_sink_sends_no_decision(apiserver: ApiServer, pods: PodWatch, client: KubeClient) -> None:
    """With the fence closed (leader election: the lease is not provably ours) every write is
    refused before it is sent, and not retried: the binding fails with an Error status (the
    scheduler then forgets the assumed pod), the victim is not touched, no status patch and
    no event reach the server. Opened again, the same sink binds."""
    calls: list[bool] = []
    closed = True

    def fence() -> None:
        calls.append(closed)
        if closed:
            raise FencedError("replica-1 cannot prove it holds the lease kube-system/kubesched")

    recorder = EventRecorder(client)
    sink = KubeSink(client, recorder, fence=fence)
    recorder.guard = sink.guard
    recorder.start()
    p = create(apiserver, pods, "p")
    victim = create(apiserver, pods, "victim", nodeName="node-01")
    st = sink.bind(p, "node-01")
    assert st.code == Code.Error and "cannot prove it holds the lease" in st.message
    assert calls == [True]  # one check, no retry
    sink.set_nominated_node(p, "node-02")
    sink.set_pod_scheduled_condition(p, "False", "Unschedulable", "0/1 nodes are available: 1 Insufficient cpu.")
    assert sink.delete_pod(victim, "Preempted", f"Preempted by pod {p.uid} on node node-01").code == Code.Error
    sink.record_event(p, "Warning", "FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu.")
    recorder.stop()  # writes (tries) what was queued
    assert calls == [True] * 4  # bind, the status patch, the DisruptionTarget patch, the event
    stored = apiserver.registry.get("pods", "default", "p")
    assert not stored["spec"].get("nodeName") and not stored["status"].get("conditions")
    assert not stored["status"].get("nominatedNodeName")
    kept = apiserver.registry.get("pods", "default", "victim")
    assert not kept["metadata"].get("deletionTimestamp") and not kept["status"].get("conditions")
    assert events(apiserver, "p") == [] and events(apiserver, "victim") == []
    closed = False
    assert sink.bind(p, "node-01").success
    assert apiserver.registry.get("pods", "default", "p")["spec"]["nodeName"] == "node-01"
    sink.close()  # a closed sink refuses through the same guard
    with pytest.raises(FencedError, match="the scheduler has stopped"):
        sink.guard()


@pytest.mark.parametrize("message, want", [
    ("short", "short"),
    ("x" * 1024, "x" * 1024),
    ("x" * 1025, "x" * 1020 + " ..."),
    ("é" * 600, ("é" * 510) + " ..."),  # 2-byte runes: cut at 1020 bytes
], ids=["short", "limit", "over", "multibyte"])
def test_truncate_message(message: str, want: str) -> None:
    """upstream truncateMessage: at most validation.NoteLengthLimit (1024) bytes."""
    assert truncate_message(message) == want
