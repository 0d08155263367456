"""Fencing of ``kubesched run`` (issue 11 §1), with real processes: a ``kubesched serve``
process and two ``kubesched run`` replicas; the leader is frozen with SIGSTOP while the
standby takes the Lease over and binds, then thawed with SIGCONT.

A thawed ex-leader still believes it leads until its elector notices, and its cache is
stale: without the fence it sends bindings for the pods it has just heard of, the ones the
new leader bound (409) and the ones it left pending for lack of room, onto nodes that are
already full (measured on the unfenced code: some binding sent in 3 of 4 rounds, a node at
4500m of 4000m in about 1 round in 3). With the fence every decision it would write is
refused before it is sent, and its loop pops nothing, because its last renewal (on the
monotonic clock, which went on while it was stopped) is older than ``renewDeadline``.

Expected values by hand: 6 nodes of 4 cpu hold floor(4000/500) = 8 pods of 500m each, 48
in all; 40 + 10 = 50 pods leave exactly 2 pending, reported ``0/6 nodes are available: 6
Insufficient cpu.`` by the new leader. Lease timing (client-go's leaderelection): the
standby takes the Lease ``leaseDuration`` (6 s) after it last saw it change, plus up to
one jittered retry (1 s x 2.2).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from live_harness import RunProcess, api_pods, cpu_millis, create, eventually, scheduled_condition, write_config
from serve_harness import API_ONLY, Server, pod_manifest

LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched"
NODES, NODE_CPU, POD_CPU = 6, 4000, 500
ROUNDS = 3


def holder(server: Server) -> str:
    status, lease = server.request("GET", LEASE)
    return str(lease["spec"].get("holderIdentity") or "") if status == 200 else ""


class NodeNames:
    """The API server's view of every binding: a watch on the pods (resumed from the last
    resourceVersion when the stream ends) records each pod's ``spec.nodeName`` values."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.seen: dict[str, list[str]] = defaultdict(list)  # pod uid -> node names, in order
        self._stop = False
        self._rv = ""
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop:
            query = "watch=true&allowWatchBookmarks=true" + (f"&resourceVersion={self._rv}" if self._rv else "")
            try:
                for ev in self.server.stream(f"/api/v1/namespaces/default/pods?{query}", timeout=5):
                    obj = ev["object"]
                    self._rv = obj["metadata"].get("resourceVersion") or self._rv
                    node = (obj.get("spec") or {}).get("nodeName") or ""
                    uid = obj["metadata"].get("uid", "")
                    if ev["type"] in ("ADDED", "MODIFIED") and node and node not in self.seen[uid][-1:]:
                        self.seen[uid].append(node)
                    if self._stop:
                        return
            except OSError:
                time.sleep(0.05)

    def stop(self) -> None:
        self._stop = True


BINDING_SENT = re.compile(r": (bound default/\S+ to \S+$|binding default/\S+ to \S+ failed: )")


def bindings_sent(path: Path, offset: int) -> list[str]:
    """The binding requests that reached the API server (a success, or the server's refusal:
    409 for a pod already bound) that a ``-v`` run process logged after ``offset`` bytes; a
    binding its fence refused ("not binding ...") was never sent."""
    with path.open(errors="replace") as f:
        f.seek(offset)
        return [line for line in f if BINDING_SENT.search(line.rstrip("\n"))]


@pytest.mark.slow
def test_a_stopped_leader_thawed_after_losing_its_lease_writes_nothing(spawn: Callable[..., Server],
                                                                       tmp_path: Path) -> None:
    server = spawn("--nodes", str(NODES), "--node-cpu", str(NODE_CPU // 1000), *API_ONLY)
    config = write_config(tmp_path / "config.yaml", leaseDuration="6s", renewDeadline="4s", retryPeriod="1s")
    watch = NodeNames(server)
    replicas: dict[str, RunProcess] = {}
    try:
        replicas["replica-a"] = RunProcess(server, config, "replica-a", tmp_path, verbose=True)
        replicas["replica-a"].wait_for("kubesched scheduler running")
        replicas["replica-b"] = RunProcess(server, config, "replica-b", tmp_path, verbose=True)
        eventually(lambda: replicas["replica-b"].get("/readyz")[0] == 200)
        ever_scheduled: dict[str, float] = {}
        for rnd in range(ROUNDS):
            leader_id = holder(server)
            leader = replicas[leader_id]
            standby = next(r for name, r in replicas.items() if name != leader_id)
            first = [pod_manifest(f"r{rnd}-first-{i:02d}", cpu=f"{POD_CPU}m") for i in range(40)]
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda m: create(server, m), first))
            eventually(lambda: all(p["spec"].get("nodeName") for p in api_pods(server).values()))
            scheduled = leader.metric("scheduler_schedule_attempts_total", result="scheduled")
            assert scheduled >= ever_scheduled.get(leader_id, 0) + 40  # counted across its earlier terms
            ever_scheduled[leader_id] = scheduled
            lost_before = sum("lost the lease" in line for line in leader.output)

            os.kill(leader.proc.pid, signal.SIGSTOP)
            try:
                offset = leader.log_path.stat().st_size  # it writes nothing while stopped
                with ThreadPoolExecutor(8) as pool:
                    list(pool.map(lambda i: create(server, pod_manifest(f"r{rnd}-more-{i}", cpu=f"{POD_CPU}m")),
                                  range(10)))
                eventually(lambda: holder(server) == standby.identity, timeout=20)
                time.sleep(4.0)
            finally:
                os.kill(leader.proc.pid, signal.SIGCONT)
            # the thawed ex-leader notices it lost the lease (it would have bound by then)
            eventually(lambda: sum("lost the lease" in line for line in leader.output) == lost_before + 1,
                       timeout=20)
            pods = eventually(lambda: (p := api_pods(server)) and len(p) == 50 and all(
                x["spec"].get("nodeName") or (scheduled_condition(x) or {}).get("reason") == "Unschedulable"
                for x in p.values()) and p)
            per_node: dict[str, int] = defaultdict(int)
            for p in pods.values():
                if p["spec"].get("nodeName"):
                    per_node[p["spec"]["nodeName"]] += cpu_millis(p)
            assert max(per_node.values()) <= NODE_CPU, (rnd, dict(per_node))
            assert sum(1 for p in pods.values() if p["spec"].get("nodeName")) == 48, rnd
            for p in pods.values():
                if not p["spec"].get("nodeName"):
                    assert scheduled_condition(p)["message"].startswith(  # type: ignore[index]
                        f"0/{NODES} nodes are available: {NODES} Insufficient cpu."), p
            # the API server's view (its watch): each pod bound once, to the node it is on now
            eventually(lambda: all(watch.seen[p["metadata"]["uid"]] == [p["spec"]["nodeName"]]
                                   for p in pods.values() if p["spec"].get("nodeName")))
            assert bindings_sent(leader.log_path, offset) == [], rnd  # thawed, it sent no binding
            # its gauge says whether it leads now: 0, unless a loaded machine made the standby miss its
            # renewDeadline and the thawed replica took the lease back (then it is the leader, legitimately)
            eventually(lambda: leader.metric("leader_election_master_status")
                       == (1 if holder(server) == leader.identity else 0))
            # metrics survive the lost lease (the scheduler behind them was rebuilt)
            assert leader.metric("scheduler_schedule_attempts_total", result="scheduled") >= scheduled
            # the next round starts from an empty cluster
            assert server.request("DELETE", "/api/v1/namespaces/default/pods?gracePeriodSeconds=0")[0] == 200
            eventually(lambda: not api_pods(server))
        twice = {uid: nodes for uid, nodes in watch.seen.items() if len(nodes) > 1}
        assert not twice  # no pod ever moved to another node
    finally:
        watch.stop()
        for r in replicas.values():
            if r.proc.poll() is None:
                os.kill(r.proc.pid, signal.SIGCONT)
                r.stop()


CHILD = """
import sys, time
print(time.monotonic(), time.process_time(), flush=True)
sys.stdin.readline()
print(time.monotonic(), time.process_time(), flush=True)
"""


def test_the_monotonic_clock_advances_while_a_process_is_stopped() -> None:
    """The fence relies on CLOCK_MONOTONIC (Python's ``time.monotonic`` on Linux) going on
    while the process is stopped by SIGSTOP, so a thawed replica sees how old its last
    renewal is. The process's CPU clock, by contrast, stands still."""
    with subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as child:
        assert child.stdout is not None and child.stdin is not None
        try:
            mono0, cpu0 = map(float, child.stdout.readline().split())
            os.kill(child.pid, signal.SIGSTOP)
            time.sleep(1.5)
            os.kill(child.pid, signal.SIGCONT)
            child.stdin.write("\n")
            child.stdin.flush()
            mono1, cpu1 = map(float, child.stdout.readline().split())
        finally:
            child.kill()
    assert mono1 - mono0 >= 1.5
    assert cpu1 - cpu0 < 0.5
