"""``kubesched record`` of a real ``kubesched serve``, then ``kubesched replay --trace`` of the
recording: replayed with serve's configuration (the defaults) and ``--tie-break name`` on both
sides, every pod lands where serve's scheduler put it; the recording also holds what the
test did around the scheduler (a pod deleted, a node added, a node cordoned, a pod bound by
"another scheduler" through the binding subresource), and it survives a serve restart in
the middle.

Expected values are what the live serve did (its pods' ``spec.nodeName`` read back through
the API) and what the test itself did; nothing is predicted by running kubesched. Pods are
created one at a time, each after the previous one is bound, so the live scheduler and the
replay see the same cluster at each decision; ties (equal nodes) are broken by the lowest
node name on both sides (``serve --tie-break name``, ``replay --tie-break name``).
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from live_harness import eventually
from record_harness import Recorder, bound_nodes, replay
from serve_harness import Server

pytestmark = pytest.mark.slow

SCHEDULER_ONLY = ("--no-node-agent", "--no-node-lifecycle", "--no-controllers", "--tie-break", "name")


def node(name: str, cpu: int) -> dict[str, Any]:
    res = {"cpu": str(cpu), "memory": f"{4 * cpu}Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": res, "allocatable": res}}


def pod(name: str, cpu_m: int, scheduler: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "registry.example/app:1", "resources": {
        "requests": {"cpu": f"{cpu_m}m", "memory": f"{cpu_m}Mi"}}}]}
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def create(server: Server, obj: dict[str, Any]) -> None:
    path = "/api/v1/nodes" if obj["kind"] == "Node" else "/api/v1/namespaces/default/pods"
    status, body = server.request("POST", path, obj)
    assert status == 201, body


def create_bound(server: Server, name: str, cpu_m: int) -> str:
    create(server, pod(name, cpu_m))
    return str(eventually(lambda: bound_nodes(server).get(f"default/{name}")))


def lines(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        rows = [json.loads(line) for line in fh if line.strip()]
    assert rows[0]["format"] == "kubesched.recording" and rows[0]["version"] == 1, rows[0]
    return rows[1:]  # the events, after the header


def test_record_then_replay_gives_the_recorded_placements(spawn: Callable[..., Server], tmp_path: Path) -> None:
    server = spawn(*SCHEDULER_ONLY)
    eventually(lambda: any("kubesched scheduler running" in line for line in server.output))
    for name, cpu in (("node-a", 4), ("node-b", 8), ("node-c", 8), ("node-d", 16)):
        create(server, node(name, cpu))
    out = tmp_path / "rec.jsonl"
    rec = Recorder(server, out, "--progress-interval", "0")
    try:
        placed: dict[str, str] = {}
        for i in range(12):
            placed[f"default/p{i:02d}"] = create_bound(server, f"p{i:02d}", 250 + (i * 370) % 1300)
            if i == 4:  # a pod goes: its room is free for the next ones
                status, _ = server.request("DELETE", "/api/v1/namespaces/default/pods/p01?gracePeriodSeconds=0")
                assert status == 200
                eventually(lambda: "default/p01" not in bound_nodes(server))
            if i == 6:
                create(server, node("node-e", 32))
            if i == 8:  # node-d is cordoned
                status, body = server.request("PATCH", "/api/v1/nodes/node-d", {"spec": {"unschedulable": True}},
                                              content_type="application/merge-patch+json")
                assert status == 200, body
            if i == 9:  # another scheduler's pod, bound by "that scheduler" (the test)
                create(server, pod("theirs", 3000, scheduler="their-scheduler"))
                binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "theirs"},
                           "target": {"apiVersion": "v1", "kind": "Node", "name": "node-e"}}
                status, body = server.request("POST", "/api/v1/namespaces/default/pods/theirs/binding", binding)
                assert status == 201, body
                eventually(lambda: bound_nodes(server).get("default/theirs") == "node-e")
        eventually(lambda: _has_bind(out, "p11"))  # the recorder has seen the last bind
        assert rec.stop() == 0
    finally:
        rec.kill()
    assert rec.lines[-1].startswith("recorded ") and rec.lines[-1].rstrip().endswith(f"written: {out}")

    rows = lines(out)
    assert rows[-1]["op"] == "end" and rows[-1]["reason"] == "interrupted"
    header = json.loads(out.read_text().splitlines()[0])
    assert header["serverVersion"]["gitVersion"] == server.request("GET", "/version")[1]["gitVersion"]
    initial = {r["object"]["metadata"]["name"] for r in rows if r["op"] == "initial" and r["object"]["kind"] == "Node"}
    assert initial == {"node-a", "node-b", "node-c", "node-d"}
    binds = {f"{r['namespace']}/{r['name']}": (r["node"], r["scheduler"]) for r in rows if r["op"] == "bind"}
    assert binds == {k: (v, "default-scheduler") for k, v in placed.items()} | {
        "default/theirs": ("node-e", "their-scheduler")}
    adds = Counter(r["object"]["metadata"]["name"] for r in rows if r["op"] == "add" and r["object"]["kind"] == "Pod")
    assert adds == Counter([f"p{i:02d}" for i in range(12)] + ["theirs"])
    assert [(r["kind"], r["name"]) for r in rows if r["op"] == "delete"] == [("Pod", "p01")]
    assert [r["object"]["metadata"]["name"] for r in rows if r["op"] == "add" and r["object"]["kind"] == "Node"] \
        == ["node-e"]
    updates = [r["object"] for r in rows if r["op"] == "update" and r["object"]["kind"] == "Node"]
    assert [(u["metadata"]["name"], u["spec"].get("unschedulable")) for u in updates] == [("node-d", True)]

    doc = replay(out, "--tie-break", "name", "--compare-recorded")
    cmp = doc["comparison"]
    assert {p["pod"]: p["replay"] for p in cmp["pods"]} == placed
    assert (cmp["compared"], cmp["agree"], cmp["disagree"], cmp["agreement"]) == (12, 12, 0, 1.0)
    assert (cmp["recordedOnly"], cmp["replayOnly"]) == (0, 0)
    assert doc["notReplayed"] == {}


def test_a_recording_survives_a_serve_restart(spawn: Callable[..., Server], tmp_path: Path) -> None:
    server = spawn(*SCHEDULER_ONLY, "--nodes", "3")
    eventually(lambda: any("kubesched scheduler running" in line for line in server.output))
    out = tmp_path / "rec.jsonl.gz"
    rec = Recorder(server, out, "--progress-interval", "0")
    try:
        placed = {f"default/a{i}": create_bound(server, f"a{i}", 500 + 100 * i) for i in range(5)}
        server.restart()
        eventually(lambda: sum("kubesched scheduler running" in line for line in server.output) == 2)
        placed |= {f"default/b{i}": create_bound(server, f"b{i}", 500 + 100 * i) for i in range(5)}
        # the recorder has seen the last bind before it is stopped
        eventually(lambda: _has_bind(out, "b4"))
        assert rec.stop() == 0
    finally:
        rec.kill()
    rows = lines(out)
    assert rows[-1]["op"] == "end"
    binds = {f"{r['namespace']}/{r['name']}": r["node"] for r in rows if r["op"] == "bind"}
    assert binds == placed
    adds = Counter(r["object"]["metadata"]["name"] for r in rows if r["op"] == "add" and r["object"]["kind"] == "Pod")
    assert adds == Counter(k.split("/")[1] for k in placed), "every pod once: no duplicate after the reconnect"
    assert not [r for r in rows if r["op"] == "delete"]
    doc = replay(out, "--tie-break", "name", "--compare-recorded")
    assert (doc["comparison"]["compared"], doc["comparison"]["agree"]) == (10, 10)


def _has_bind(path: Path, name: str) -> bool:
    """Whether the (still open) recording's flushed part holds ``name``'s bind."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
            return any(f'"op":"bind"' in line and f'"name":"{name}"' in line for line in fh)
    except (EOFError, OSError):
        return False
