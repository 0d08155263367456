"""What the recorder writes for each informer callback (kubesched/sim/recording/recorder.py),
without a server: which changes are events and which are noise, and that no cleaned object
is kept once written (memory bounded by the cluster, not by the recording)."""

from __future__ import annotations

import threading
from typing import Any

from kubesched.sim.recording.recorder import HEARTBEAT_ANNOTATION, Recorder, Seen, _seen


class Lines:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.rows: list[dict[str, Any]] = []

    def line(self, row: dict[str, Any]) -> None:
        self.rows.append(row)

    def event(self, op: str, **fields: Any) -> None:
        self.rows.append({"op": op, **fields})

    def now(self) -> float:
        return 0.0


class Synced:
    def __init__(self, synced: bool) -> None:
        self.has_synced = synced


def node(**changes: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {"metadata": {"name": "n1", "uid": "u1", "resourceVersion": "1",
                                        "annotations": {HEARTBEAT_ANNOTATION: "t0"}},
                           "spec": {}, "status": {"allocatable": {"cpu": "4"},
                                                  "conditions": [{"type": "Ready", "status": "True"}]}}
    for path, value in changes.items():
        part, key = path.split("__")
        raw[part][key] = value
    return raw


def pod(node_name: str = "", phase: str = "Pending", labels: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "app"}], "schedulerName": "default-scheduler"}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": "p", "namespace": "ns", "uid": "up", "labels": labels or {"a": "1"}},
            "spec": spec, "status": {"phase": phase}}


def recorder() -> tuple[Recorder, Lines]:
    lines = Lines()
    return Recorder(None, lines), lines  # type: ignore[arg-type]


def seen(kind: str, raw: dict[str, Any]) -> Seen:
    return _seen(kind, "v1", raw)


def test_node_heartbeats_and_conditions_are_noise_taints_are_not() -> None:
    rec, lines = recorder()
    first = seen("Node", node())
    rec._add("Node", Synced(False), first)  # type: ignore[arg-type]
    assert lines.rows[-1]["op"] == "initial" and first.obj is None
    beat = seen("Node", node(metadata__annotations={HEARTBEAT_ANNOTATION: "t1"},
                             status__conditions=[{"type": "Ready", "status": "False"}]))
    rec._update("Node", first, beat)
    assert len(lines.rows) == 1 and beat.obj is None
    tainted = seen("Node", node(spec__taints=[{"key": "k", "effect": "NoSchedule"}]))
    rec._update("Node", beat, tainted)
    assert lines.rows[-1]["op"] == "update" and lines.rows[-1]["object"]["spec"]["taints"][0]["key"] == "k"
    rec._delete("Node", tainted)
    assert lines.rows[-1] == {"op": "delete", "kind": "Node", "namespace": "", "name": "n1", "uid": "u1"}


def test_a_pods_life_add_bind_finish_without_status_noise() -> None:
    rec, lines = recorder()
    created = seen("Pod", pod())
    rec._add("Pod", Synced(True), created)
    assert lines.rows[-1]["op"] == "add" and lines.rows[-1]["object"]["metadata"]["name"] == "p"
    bound = seen("Pod", pod("n1"))
    rec._update("Pod", created, bound)
    assert lines.rows[-1] == {"op": "bind", "namespace": "ns", "name": "p", "uid": "up", "node": "n1",
                              "scheduler": "default-scheduler"}
    running = seen("Pod", pod("n1", "Running"))
    rec._update("Pod", bound, running)
    assert len(lines.rows) == 2  # a status write: not an event
    relabelled = seen("Pod", pod("n1", "Running", {"a": "2"}))
    rec._update("Pod", running, relabelled)
    assert lines.rows[-1]["op"] == "update"
    done = seen("Pod", pod("n1", "Succeeded", {"a": "2"}))
    rec._update("Pod", relabelled, done)
    assert lines.rows[-1] == {"op": "finish", "namespace": "ns", "name": "p", "uid": "up", "phase": "Succeeded"}
    assert all(s.obj is None for s in (created, bound, running, relabelled, done))


def test_finished_pods_are_left_out_of_the_starting_state() -> None:
    rec, lines = recorder()
    rec._add("Pod", Synced(False), seen("Pod", pod("n1", "Failed")))
    assert lines.rows == [] and rec.finished_at_start == 1
