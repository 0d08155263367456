"""Batched updates (:func:`kubesched.server.apiserver.registry.batchwrite.update_many`): several
pods' status writes in one store transaction, each with its own resourceVersion, watch
event and failure, durable when the call returns. Real Store (SQLite) and Registry."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from kubesched.server.apiserver.registry.batchwrite import MAX_BATCH, Update, update_many
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry


def make_pods(reg: Registry, n: int) -> list[dict[str, Any]]:
    return [reg.create("pods", "default", {"metadata": {"name": f"p{i}"}, "spec": {
        "nodeName": "n1", "containers": [{"name": "c", "image": "pause"}]}}) for i in range(n)]


def running(pod: dict[str, Any], ip: str) -> Update:
    """The body a kubelet sends: the pod as it read it (its resourceVersion) with a new status."""
    body = {**pod, "metadata": dict(pod["metadata"]), "status": {**pod["status"], "phase": "Running", "podIP": ip}}
    return Update("pods", "default", pod["metadata"]["name"], body, "status")


def stored(reg: Registry, name: str) -> dict[str, Any]:
    """The pod as a fresh SQLite connection reads it from the file (what survives a crash)."""
    conn = sqlite3.connect(reg.store.path)
    try:
        row = conn.execute("SELECT data FROM objects WHERE kind='core/pods' AND namespace='default' AND name=?",
                           (name,)).fetchone()
    finally:
        conn.close()
    return dict(json.loads(row[0]))


def test_each_update_has_its_own_resource_version_and_event_in_one_commit(reg: Registry) -> None:
    pods = make_pods(reg, 3)
    watcher = reg.store.watch(["core/pods"], reg.store.rv)
    commits = reg.store.commits
    out = update_many(reg, [running(p, f"10.244.0.{i + 2}") for i, p in enumerate(pods)])
    assert reg.store.commits == commits + 1  # one transaction, one COMMIT (one fsync) for the three
    rvs = [int(o["metadata"]["resourceVersion"]) for o in out if isinstance(o, dict)]
    assert len(rvs) == 3 and rvs == sorted(set(rvs))  # three revisions, in order
    events, _ = watcher.get(timeout=5)
    assert [(e.type, e.name, e.rv) for e in events] == [("MODIFIED", f"p{i}", rvs[i]) for i in range(3)]
    for i in range(3):  # durable: a new connection to the file sees every one of them
        on_disk = stored(reg, f"p{i}")
        assert on_disk["status"]["phase"] == "Running" and on_disk["status"]["podIP"] == f"10.244.0.{i + 2}"
        assert on_disk["metadata"]["resourceVersion"] == str(rvs[i])


def test_a_conflict_fails_alone(reg: Registry) -> None:
    pods = make_pods(reg, 3)
    stale = pods[1]
    reg.patch("pods", "default", "p1", "application/merge-patch+json", {"metadata": {"labels": {"x": "y"}}})
    out = update_many(reg, [running(p, "10.244.0.9") for p in (pods[0], stale, pods[2])])
    assert isinstance(out[1], ApiError) and out[1].code == 409
    assert isinstance(out[0], dict) and isinstance(out[2], dict)
    assert stored(reg, "p0")["status"]["phase"] == "Running" and stored(reg, "p2")["status"]["phase"] == "Running"
    assert stored(reg, "p1")["status"]["phase"] == "Pending"  # the stale write changed nothing
    # the others' revisions are consecutive: the failed one took none
    assert int(out[2]["metadata"]["resourceVersion"]) == int(out[0]["metadata"]["resourceVersion"]) + 1


def test_invalid_and_missing_objects_fail_alone(reg: Registry) -> None:
    pods = make_pods(reg, 2)
    bad = running(pods[0], "10.244.0.2")
    bad.body["status"]["conditions"] = "not a list"  # rejected when the body is decoded (400)
    gone = Update("pods", "default", "nope", {"metadata": {"name": "nope"}, "status": {"phase": "Running"}}, "status")
    out = update_many(reg, [bad, gone, running(pods[1], "10.244.0.3")])
    assert isinstance(out[0], ApiError) and out[0].code == 400
    assert isinstance(out[1], ApiError) and out[1].code == 404
    assert isinstance(out[2], dict) and stored(reg, "p1")["status"]["podIP"] == "10.244.0.3"
    assert stored(reg, "p0")["status"]["phase"] == "Pending"


def test_a_status_write_keeps_the_stored_spec_and_metadata(reg: Registry) -> None:
    """As :meth:`Registry.update` on the status subresource: the body's spec and labels are ignored."""
    pod = make_pods(reg, 1)[0]
    update = running(pod, "10.244.0.2")
    body = update.body
    body["spec"] = {**body["spec"], "containers": [{"name": "c", "image": "other"}]}
    body["metadata"]["labels"] = {"sneaky": "yes"}
    [out] = update_many(reg, [update])
    assert isinstance(out, dict)
    on_disk = stored(reg, "p0")
    assert on_disk["spec"]["containers"][0]["image"] == "pause" and "labels" not in on_disk["metadata"]
    assert on_disk["status"]["phase"] == "Running"


def test_more_than_a_batch_is_split_and_all_written(reg: Registry) -> None:
    n = MAX_BATCH + 3
    pods = make_pods(reg, n)
    commits = reg.store.commits
    out = update_many(reg, [running(p, f"10.244.{i // 250}.{i % 250 + 2}") for i, p in enumerate(pods)])
    assert all(isinstance(o, dict) for o in out) and len(out) == n
    assert reg.store.commits == commits + 2  # two transactions: MAX_BATCH, then 3
    assert all(stored(reg, f"p{i}")["status"]["phase"] == "Running" for i in range(n))
