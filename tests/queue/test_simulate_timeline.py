"""The queue in ``kubesched simulate``: pods retried on cluster events and on the periodic
flushes, on the virtual clock, and the ``--timeline`` output.

Every expected time is worked out by hand from upstream v1.34.1:
- a rejected pod's backoff is ``podInitialBackoffSeconds * 2^(n-1)`` (capped at
  ``podMaxBackoffSeconds``) from its failure, truncated to the whole second
  (SchedulerPopFromBackoffQ's ordering window): ``backoffExpiration``;
- when activeQ is empty the scheduler pops the head of backoffQ at once (PopFromBackoffQ),
  so a pod an event moved to backoffQ is retried at the time of the event;
- flushUnschedulablePodsLeftover runs every 30 s from the start and moves pods that waited
  strictly longer than 5 minutes: a pod rejected at t=0 is retried at t=330;
- the simulation stops when only retries of pods whose cluster did not change since their
  last attempt are left.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.decode import load_manifests
from kubesched.cli.main import main
from kubesched.config import load_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.driver import Simulation


def node(name: str, cpu: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod(name: str, cpu: str, pc: str = "", node_name: str = "", labels: dict[str, str] | None = None,
        affinity_to: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}
    if pc:
        spec["priorityClassName"] = pc
    if node_name:
        spec["nodeName"] = node_name
    if affinity_to:
        spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": affinity_to}, "topologyKey": "kubernetes.io/hostname"}]}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels or {}}, "spec": spec}


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


def write(tmp_path: Path, docs: list[dict[str, Any]]) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def simulate(tmp_path: Path, docs: list[dict[str, Any]], **config: Any) -> Simulation:
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       **config}, in_tree_registry())
    sim = Simulation(load_manifests([str(write(tmp_path, docs))]), cfg, tie_break="name", timeline=True)
    sim.run()
    return sim


def of(sim: Simulation, name: str) -> list[dict[str, Any]]:
    """The timeline entries of one pod, without the fields that are not checked here."""
    keep = ("time", "event", "from", "to", "trigger", "backoffExpiration", "attempt", "result", "node")
    return [{k: e[k] for k in keep if k in e} for e in sim.timeline.entries if e["pod"] == f"default/{name}"]


AFFINITY = [node("n1", "4"), priority_class("high", 100), priority_class("mid", 50),
            pod("web", "1", "high", affinity_to={"app": "db"}), pod("db", "1", "mid", labels={"app": "db"})]


@pytest.mark.parametrize("initial,want_expiration", [(None, 1.0), (4, 4.0)],
                         ids=["default backoff 1s", "podInitialBackoffSeconds 4"])
def test_pod_retried_when_the_pod_it_needs_is_bound(tmp_path: Path, initial: int | None,
                                                    want_expiration: float) -> None:
    """web (priority 100) needs a pod labelled app=db on its node; db (priority 50) is still
    pending. t=0: web is tried first and rejected by InterPodAffinity (unschedulable pool,
    unschedulable count 1); db is bound to n1; the AssignedPod/Add event of db makes
    InterPodAffinity's hint say Queue; web is backing off (0 + initial * 2^0, truncated) so it
    goes to backoffQ; activeQ is empty, so it is popped at once (t=0) and bound to n1."""
    config = {} if initial is None else {"podInitialBackoffSeconds": initial}
    sim = simulate(tmp_path, AFFINITY, **config)
    assert of(sim, "web") == [
        {"time": 0.0, "event": "move", "from": "new", "to": "activeQ", "trigger": "UnschedulablePodAdd"},
        {"time": 0.0, "event": "attempt", "from": "activeQ", "attempt": 1, "result": "Unschedulable", "node": None},
        {"time": 0.0, "event": "move", "from": "inFlight", "to": "unschedulable", "trigger": "ScheduleAttemptFailure"},
        {"time": 0.0, "event": "move", "from": "unschedulable", "to": "backoffQ", "trigger": "AssignedPodAdd",
         "backoffExpiration": want_expiration},
        {"time": 0.0, "event": "attempt", "from": "backoffQ", "attempt": 2, "result": "Scheduled", "node": "n1"},
        {"time": 0.0, "event": "bind", "node": "n1"},
    ]
    assert {o.pod.name: (o.status, o.node) for o in sim.results()} == {"web": ("Scheduled", "n1"),
                                                                       "db": ("Scheduled", "n1")}


PREEMPTION = [node("n1", "4"), priority_class("high", 100), pod("running", "3", node_name="n1"),
              pod("big", "2", "high"), pod("huge", "8")]


def test_preemptor_requeued_by_its_victims_deletion_and_leftover_flush(tmp_path: Path) -> None:
    """t=0: big (priority 100, 2 CPU) does not fit beside running (3 of 4 CPU), preempts it;
    the victim's AssignedPod/Delete arrives while big is in flight and NodeResourcesFit's
    hint says Queue, so big goes to backoffQ (expiration 0 + 1 = 1) instead of the pool, and
    is popped from backoffQ right after huge's attempt: bound to n1. huge (8 CPU) never fits.
    big's bind reaches the unscheduled-pod handler as the delete of a pod that held a
    nominated node (upstream deletePodFromSchedulingQueue): an AssignedPod/Delete for pods of
    lower or equal priority, which NodeResourcesFit's hint queues (the deleted pod had a
    nominated node), so huge is retried at once from backoffQ and fails again; the cluster
    did not change since, so the simulation ends at t=0."""
    sim = simulate(tmp_path, PREEMPTION)
    big = of(sim, "big")
    assert [e for e in big if e["event"] != "move" or e["to"] != "activeQ"] == [
        {"time": 0.0, "event": "attempt", "from": "activeQ", "attempt": 1, "result": "Unschedulable", "node": None},
        {"time": 0.0, "event": "move", "from": "inFlight", "to": "backoffQ", "trigger": "ScheduleAttemptFailure",
         "backoffExpiration": 1.0},
        {"time": 0.0, "event": "attempt", "from": "backoffQ", "attempt": 2, "result": "Scheduled", "node": "n1"},
        {"time": 0.0, "event": "bind", "node": "n1"},
    ]
    attempt1 = next(e for e in sim.timeline.entries if e["pod"] == "default/big" and e["event"] == "attempt")
    assert (attempt1["nominatedNode"], attempt1["victims"]) == ("n1", ["default/running"])
    assert [e["event"] for e in sim.timeline.entries if e["pod"] == "default/running"] == ["deleted"]
    huge = [(e["time"], e["event"], e.get("trigger") or e.get("result")) for e in of(sim, "huge")]
    assert huge == [(0.0, "move", "UnschedulablePodAdd"), (0.0, "attempt", "Unschedulable"),
                    (0.0, "move", "ScheduleAttemptFailure"), (0.0, "move", "AssignedPodDelete"),
                    (0.0, "attempt", "Unschedulable"), (0.0, "move", "ScheduleAttemptFailure")]
    assert sim.clock.now() == 0.0
    assert sim.summary()["scheduled"] == 1 and sim.summary()["unschedulable"] == 1


def test_leftover_flush_retries_a_pod_no_event_helped(tmp_path: Path) -> None:
    """huge (8 CPU) fails at t=0; small's bind is an AssignedPod/Add, which NodeResourcesFit
    does not register, so huge waits in the pool; the cluster changed since its attempt, so
    the 30 s leftover flush retries it when it first sees it waiting longer than 300 s: at
    t=330 (300 is not longer). It fails again; nothing changed since, so the run ends."""
    sim = simulate(tmp_path, [node("n1", "4"), pod("huge", "8"), pod("small", "1")])
    huge = [(e["time"], e["event"], e.get("trigger") or e.get("result")) for e in of(sim, "huge")]
    assert huge == [(0.0, "move", "UnschedulablePodAdd"), (0.0, "attempt", "Unschedulable"),
                    (0.0, "move", "ScheduleAttemptFailure"), (330.0, "move", "UnschedulableTimeout"),
                    (330.0, "attempt", "Unschedulable"), (330.0, "move", "ScheduleAttemptFailure")]
    assert sim.clock.now() == 330.0


def test_nothing_to_retry_ends_at_once(tmp_path: Path) -> None:
    """A pod rejected when nothing else ever changes the cluster is not retried at all: the
    flush would repeat the same failure."""
    sim = simulate(tmp_path, [node("n1", "1"), pod("huge", "8")])
    assert [e["event"] for e in of(sim, "huge")] == ["move", "attempt", "move"]
    assert sim.clock.now() == 0.0


def test_cli_timeline_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--timeline``: a top-level "timeline" list of {time, pod, event, ...}; without it the
    JSON keeps exactly its keys."""
    path = write(tmp_path, AFFINITY)
    assert main(["simulate", "-f", str(path), "--tie-break", "name", "-o", "json"]) == 0
    assert list(json.loads(capsys.readouterr().out)) == ["pods", "summary", "kubernetesVersion", "version"]
    assert main(["simulate", "-f", str(path), "--tie-break", "name", "-o", "json", "--timeline"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc) == ["pods", "summary", "kubernetesVersion", "timeline", "version"]
    assert doc["timeline"] and all({"time", "pod", "event"} <= set(e) for e in doc["timeline"])
    assert {e["event"] for e in doc["timeline"]} == {"move", "attempt", "bind"}
    attempts = [e for e in doc["timeline"] if e["event"] == "attempt"]
    assert all({"attempt", "result", "node", "message", "from"} <= set(e) for e in attempts)


def test_cli_timeline_table(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The table form: one row per entry, with the trigger and the backoff expiration."""
    monkeypatch.setenv("COLUMNS", "200")
    path = write(tmp_path, AFFINITY)
    assert main(["simulate", "-f", str(path), "--tie-break", "name", "--timeline"]) == 0
    out = capsys.readouterr().out
    assert "Timeline (virtual time)" in out and "AssignedPodAdd" in out and "backoff expires 1s" in out
