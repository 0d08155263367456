"""``kubesched run`` as real processes against a real ``kubesched serve`` process, over HTTP:
a secondary scheduler beside the server's own (default-scheduler), leader election between
replicas (SIGKILL and SIGTERM hand-overs), its endpoints, and a burst across an API server
restart.

Expected values are computed by hand in each test (CPU arithmetic, lease timing from
client-go's leaderelection semantics: a standby takes an unrenewed lease once
``leaseDuration`` has passed on its own clock since it last saw the record change, and
tries every ``retryPeriod`` stretched by up to 1.2x jitter; a released lease has no holder
and is taken at the next try)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from live_harness import (RunProcess, api_pods, cpu_millis, create, create_retrying, eventually,
                          scheduled_condition, settled, write_config)
from serve_harness import API_ONLY, Server, pod_manifest

pytestmark = pytest.mark.slow

LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched"


def for_scheduler(name: str, scheduler: str, cpu: str) -> dict[str, Any]:
    m = pod_manifest(name, cpu=cpu)
    m["spec"]["schedulerName"] = scheduler
    return m


def events_about(server: Server, pod: str) -> list[dict[str, Any]]:
    status, body = server.request("GET", "/apis/events.k8s.io/v1/namespaces/default/events")
    assert status == 200, body
    return [e for e in body["items"] if e["regarding"]["name"] == pod]


def holder(server: Server) -> str:
    status, lease = server.request("GET", LEASE)
    return str(lease["spec"].get("holderIdentity") or "") if status == 200 else ""


def node_cpu(pods: dict[str, dict[str, Any]]) -> Counter[str]:
    per_node: Counter[str] = Counter()
    for p in pods.values():
        if p["spec"].get("nodeName"):
            per_node[p["spec"]["nodeName"]] += cpu_millis(p)
    return per_node


def test_run_schedules_its_pods_and_counts_other_schedulers_pods(spawn: Callable[..., Server],
                                                                 tmp_path: Path) -> None:
    """One node of 4 CPU. The server's own scheduler (default-scheduler) binds ``big`` (3 CPU);
    ``orphan`` names a scheduler nobody runs. kubesched (profile ``kubesched``) binds ``a``
    (500m: 3000 + 500 <= 4000) and must refuse ``b`` (1 CPU: 3500 + 1000 > 4000), which only
    holds if it counts ``big``, a pod it did not schedule (without it: 500 + 1000 fits).
    It leaves ``big`` and ``orphan`` alone: no condition, no event from it."""
    server = spawn("--nodes", "1", "--node-cpu", "4", "--no-node-agent", "--no-node-lifecycle", "--no-controllers")
    create(server, for_scheduler("big", "default-scheduler", "3"))
    eventually(lambda: api_pods(server)["big"]["spec"].get("nodeName") == "node-01")
    create(server, for_scheduler("orphan", "nobody", "100m"))
    run = RunProcess(server, write_config(tmp_path / "config.yaml", "kubesched"), "only", tmp_path)
    try:
        run.wait_for("kubesched scheduler running")
        assert run.get("/readyz") == (200, "ok") and run.get("/healthz") == (200, "ok")
        create(server, for_scheduler("a", "kubesched", "500m"))
        eventually(lambda: api_pods(server)["a"]["spec"].get("nodeName") == "node-01")
        create(server, for_scheduler("b", "kubesched", "1"))
        cond = eventually(lambda: scheduled_condition(api_pods(server)["b"]))
        assert cond["status"] == "False" and cond["reason"] == "Unschedulable"
        assert cond["message"].startswith("0/1 nodes are available: 1 Insufficient cpu."), cond
        pods = api_pods(server)
        assert not pods["orphan"]["spec"].get("nodeName") and scheduled_condition(pods["orphan"]) is None
        assert not events_about(server, "orphan")
        assert {e["reportingController"] for e in events_about(server, "big")} == {"default-scheduler"}
        scheduled = [e for e in events_about(server, "a") if e["reason"] == "Scheduled"]
        assert [e["reportingController"] for e in scheduled] == ["kubesched"]
        assert scheduled[0]["note"] == "Successfully assigned default/a to node-01"
        # endpoints
        assert run.metric("scheduler_schedule_attempts_total", result="scheduled", profile="kubesched") == 1
        assert run.metric("scheduler_schedule_attempts_total", result="unschedulable", profile="kubesched") >= 1
        assert run.metric("scheduler_schedule_attempts_total", profile="default-scheduler") == 0
        assert run.metric("leader_election_master_status", name="kube-scheduler") == 1
        status, body = run.get("/debug/explain/default/b")
        doc = json.loads(body)
        assert status == 200 and doc["chosen"] is None
        assert doc["filter"]["node-01"]["plugin"] == "NodeResourcesFit"
        assert doc["filter"]["node-01"]["reasons"] == ["Insufficient cpu"]
        status, text = run.get("/debug/explain/default/b?output=text")
        assert status == 200 and "NodeResourcesFit" in text and "Insufficient cpu" in text
        assert run.get("/debug/explain/default/big")[0] == 404  # not kubesched's pod
        # the same, asked from the terminal: `kubesched explain --scheduler-url`
        ask = [sys.executable, "-m", "kubesched.cli.main", "explain", "--scheduler-url", run.url]
        out = subprocess.run([*ask, "default/b"], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0 and "Insufficient cpu" in out.stdout and "History" in out.stdout, out.stderr
        out = subprocess.run([*ask, "default/big"], capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and "pod default/big: no scheduling attempt" in out.stderr
    finally:
        assert run.stop() == 0
    assert "kubesched scheduler stopped" in "".join(run.output)


def test_two_replicas_one_leads_sigkill_and_sigterm_hand_over(spawn: Callable[..., Server],
                                                              tmp_path: Path) -> None:
    """Lease 3 s, renew deadline 2 s, retry 0.5 s. Four nodes of 2 CPU, pods of 200m: 40 of
    them fill the 8 CPU exactly.

    * replica-1 leads, replica-2 is ready but idle: the first 20 pods are all bound by
      replica-1 (its scheduled count is 20, replica-2's 0).
    * replica-1 is SIGKILLed; 20 more pods arrive. replica-2 waits for the lease to expire:
      it last saw a renewal at most one retry (0.5 s) before the kill, so it takes over no
      sooner than 3 - 0.5 = 2.5 s after the kill (asserted >= 2 s) and no later than 3 s
      after the last renewal it noticed, which it notices up to one jittered retry (1.1 s)
      late, plus one more jittered retry to try: 3 + 2 x 1.1 = 5.2 s (asserted < 7.5 s: the
      processes share a busy machine).
    * replica-2 binds exactly the 20 new pods (its count is 20: none of the first batch is
      bound again) and no node goes over 2000m.
    * replica-2 gets SIGTERM: it gives the lease up (no holder, leaseDurationSeconds 1, as
      client-go's release), so replica-3, started then, takes it at its first try.
    """
    server = spawn("--nodes", "4", "--node-cpu", "2", *API_ONLY)
    config = write_config(tmp_path / "config.yaml", leaseDuration="3s", renewDeadline="2s", retryPeriod="500ms")
    r1 = RunProcess(server, config, "replica-1", tmp_path)
    r2: RunProcess | None = None
    r3: RunProcess | None = None
    try:
        r1.wait_for("kubesched scheduler running")
        r2 = RunProcess(server, config, "replica-2", tmp_path)
        eventually(lambda: r2 is not None and r2.get("/readyz")[0] == 200)
        assert holder(server) == "replica-1"
        for i in range(20):
            create(server, pod_manifest(f"first-{i:02d}", cpu="200m"))
        eventually(lambda: all(p["spec"].get("nodeName") for p in api_pods(server).values()))
        assert r1.metric("scheduler_schedule_attempts_total", result="scheduled") == 20
        assert r2.metric("scheduler_schedule_attempts_total") == 0
        assert r2.metric("leader_election_master_status") == 0
        assert not any("scheduler running" in line for line in r2.output)

        killed = time.monotonic()
        r1.stop(signal.SIGKILL)
        for i in range(20):
            create(server, pod_manifest(f"second-{i:02d}", cpu="200m"))
        eventually(lambda: holder(server) == "replica-2", timeout=15)
        took = time.monotonic() - killed
        assert 2.0 <= took < 7.5, took
        pods = eventually(lambda: (p := api_pods(server)) and all(x["spec"].get("nodeName") for x in p.values())
                          and p)
        assert len(pods) == 40
        assert max(node_cpu(pods).values()) <= 2000 and sum(node_cpu(pods).values()) == 8000
        eventually(lambda: r2 is not None and r2.metric("scheduler_schedule_attempts_total", result="scheduled") == 20)
        assert r2.metric("leader_election_master_status") == 1
        r2.wait_for("kubesched scheduler running")

        assert r2.stop() == 0  # SIGTERM: graceful; the lease is given up
        status, lease = server.request("GET", LEASE)
        assert status == 200 and lease["spec"]["holderIdentity"] == "" and lease["spec"]["leaseDurationSeconds"] == 1
        r3 = RunProcess(server, config, "replica-3", tmp_path)  # takes it at its first try: no holder
        r3.wait_for("kubesched scheduler running")
        assert holder(server) == "replica-3"
        status, lease = server.request("GET", LEASE)
        assert lease["spec"]["leaseTransitions"] == 2  # replica-1 -> replica-2 -> replica-3
        status, body = server.request("GET", "/api/v1/namespaces/kube-system/events")
        became = [e["message"] for e in body["items"] if e["reason"] == "LeaderElection"]
        for r in ("replica-1", "replica-2", "replica-3"):
            assert f"{r} became leader" in became, became
        assert "replica-2 stopped leading" in became
    finally:
        for r in (r1, r2, r3):
            if r is not None and r.proc.poll() is None:
                r.stop()


def test_run_across_an_api_server_restart_mid_burst(spawn: Callable[..., Server], tmp_path: Path) -> None:
    """200 pods of 150m onto 6 nodes of 4 CPU (floor(4000/150) = 26 per node: 156 fit) with the
    API server restarted half-way through the burst: in the end 156 pods are bound, each
    exactly once (a second binding of a bound pod is refused by the API server, so more than
    156 successful scheduling attempts would show it), no node over 4000m, and 44 reported
    ``0/6 nodes are available: 6 Insufficient cpu.``"""
    server = spawn("--nodes", "6", "--node-cpu", "4", "--bookmark-interval", "1", *API_ONLY)
    run = RunProcess(server, write_config(tmp_path / "config.yaml"), "burst", tmp_path)
    run.wait_for("kubesched scheduler running")

    def make(i: int) -> None:
        create_retrying(server, pod_manifest(f"p-{i:03d}", cpu="150m"))

    try:
        with ThreadPoolExecutor(6) as pool:
            list(pool.map(make, range(100)))
            server.restart()
            list(pool.map(make, range(100, 200)))
        pods = eventually(lambda: (p := api_pods(server)) and len(p) == 200 and settled(p) and p, timeout=90)
        per_node = node_cpu(pods)
        assert max(per_node.values()) <= 4000, per_node
        assert sum(1 for p in pods.values() if p["spec"].get("nodeName")) == 156
        pending = [p for p in pods.values() if not p["spec"].get("nodeName")]
        assert len(pending) == 44
        assert all(scheduled_condition(p)["message"].startswith("0/6 nodes are available: 6 Insufficient cpu.")
                   for p in pending)
        assert run.metric("scheduler_schedule_attempts_total", result="scheduled") == 156
        assert run.get("/readyz")[0] == 200
    finally:
        assert run.stop() == 0


def test_a_leader_that_cannot_renew_stops_and_rebuilds_its_cache(spawn: Callable[..., Server],
                                                                 tmp_path: Path) -> None:
    """Renew deadline 2 s; the API server stays down until the leader reports it could not renew:
    it stops scheduling, throws its cache away and becomes a candidate again (kube-scheduler
    exits instead; see kubesched/live/replica.py). When the server is back, its new cache is
    listed from the API (the pod bound before the outage is counted: the node of 1 CPU has
    room for one more 500m pod only) and it leads and schedules again."""
    server = spawn("--nodes", "1", "--node-cpu", "1", *API_ONLY)
    run = RunProcess(server, write_config(tmp_path / "config.yaml", leaseDuration="3s", renewDeadline="2s",
                                          retryPeriod="500ms"), "alone", tmp_path)
    try:
        run.wait_for("kubesched scheduler running")
        create(server, pod_manifest("before", cpu="500m"))
        eventually(lambda: api_pods(server)["before"]["spec"].get("nodeName") == "node-01")
        server.stop()
        run.wait_for("lost the lease kube-system/kubesched", timeout=15)
        server.start()
        create(server, pod_manifest("after", cpu="500m"))
        create(server, pod_manifest("too-many", cpu="500m"))
        eventually(lambda: sum("kubesched scheduler running" in line for line in run.output) == 2, timeout=30)
        pods = eventually(lambda: (p := api_pods(server)) and settled(p) and p)
        assert sum(1 for p in pods.values() if p["spec"].get("nodeName")) == 2  # 1000m: two of 500m
        assert pods["after"]["spec"].get("nodeName") == "node-01"  # first in the queue (older)
        assert scheduled_condition(pods["too-many"])["message"].startswith(
            "0/1 nodes are available: 1 Insufficient cpu.")
        assert run.get("/healthz")[0] == 200 and run.metric("leader_election_master_status") == 1
    finally:
        assert run.stop() == 0


def test_bind_conflicts_leave_nothing_assumed(spawn: Callable[..., Server], tmp_path: Path) -> None:
    """Two nodes of 2 CPU; pods of 2 CPU. A PreBind gate (tests/live/plugins/file_gate.py)
    holds ``vanishing`` after kubesched assumed it on a node; the test deletes it, then lets
    it go: the binding gets 404. Then ``contested`` is held; the test binds it to the *other*
    node itself, then lets it go: the binding gets 409. Both assumed pods must be forgotten:
    once ``contested`` is deleted the API has no pod, so of ``after-1..3`` (2 CPU each) two
    bind, one per node, and the third is refused with "0/2 nodes are available: 2
    Insufficient cpu." -- a leaked assumption (2 CPU) on either node would leave room for
    one pod only."""
    server = spawn("--nodes", "2", "--node-cpu", "2", *API_ONLY)
    gate = tmp_path / "gate"
    gate.mkdir()
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"preBind": {"enabled": [{"name": "file_gate:FileGate"}]}},
                      "pluginConfig": [{"name": "file_gate:FileGate", "args": {"dir": str(gate)}}]}]}))
    run = RunProcess(server, config, "gated", tmp_path, python_path=Path(__file__).parent / "plugins")

    def gated(name: str) -> dict[str, Any]:
        m = pod_manifest(name, cpu="2")
        m["metadata"]["labels"] = {"gate": "yes"}
        return m

    try:
        run.wait_for("kubesched scheduler running")
        create(server, gated("vanishing"))
        eventually(lambda: (gate / "held-vanishing").exists())
        assert server.request("DELETE", "/api/v1/namespaces/default/pods/vanishing")[0] == 200
        (gate / "release-vanishing").touch()

        create(server, gated("contested"))
        chosen = eventually(lambda: (gate / "held-contested").exists() and (gate / "held-contested").read_text())
        other = "node-02" if chosen == "node-01" else "node-01"
        status, body = server.request("POST", "/api/v1/namespaces/default/pods/contested/binding", {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "contested"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": other}})
        assert status == 201, body
        (gate / "release-contested").touch()

        status, _ = server.request("DELETE", "/api/v1/namespaces/default/pods/contested?gracePeriodSeconds=0")
        assert status == 200
        eventually(lambda: not api_pods(server))
        for name in ("after-1", "after-2", "after-3"):
            create(server, pod_manifest(name, cpu="2"))
        pods = eventually(lambda: (p := api_pods(server)) and settled(p) and p)
        assert {pods[n]["spec"].get("nodeName") for n in ("after-1", "after-2")} == {"node-01", "node-02"}
        cond = scheduled_condition(pods["after-3"])
        assert cond is not None and cond["message"].startswith("0/2 nodes are available: 2 Insufficient cpu."), cond
    finally:
        assert run.stop() == 0
