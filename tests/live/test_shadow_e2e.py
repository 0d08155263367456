"""``kubesched run --shadow`` beside the scheduler inside ``kubesched serve``: it compares
each binding serve's scheduler makes with its own decision, writes nothing, and says so in
``/debug/shadow``, ``/metrics`` and its JSON-lines log.

1. The same configuration (the defaults) and ``--tie-break name`` on both: every pod of a
   200-pod workload agrees. Pods are created one at a time, each once the previous one is
   bound: serve binds in parallel threads, so with pods in flight together a binding can
   reach the shadow before an earlier one, and the shadow would decide on a cluster serve's
   scheduler never saw.
2. MostAllocated in the shadow, the defaults in serve: the verdicts computed by hand below
   (upstream pkg/scheduler/framework/plugins/noderesources/least_allocated.go,
   most_allocated.go, balanced_allocation.go; weights 1 and 1 from
   apis/config/v1/default_plugins.go; the other default scorers score both nodes alike: no
   taints, affinity, images, spread selectors or volumes). Nodes n1 (4 cpu, 16Gi) and n2
   (16 cpu, 64Gi); five pods of 1 cpu / 1Gi, one at a time. Fit score + Balanced score:

   ====  ===================================  ==========================================  =========
   pod   serve (LeastAllocated)               shadow (MostAllocated)                      verdict
   ====  ===================================  ==========================================  =========
   1     n1 84+90=174, n2 95+97=192: n2       n1 (25+6)/2=15+90=105, n2 (6+1)/2=3+97=100: n1  disagree
   2     n1 174, n2 (87+96)/2=91+95=186: n2   n1 105, n2 (12+3)/2=7+95=102: n1            disagree
   3     n1 174, n2 (81+95)/2=88+92=180: n2   n1 105, n2 (18+4)/2=11+92=103: n1           disagree
   4     n1 174, n2 (75+93)/2=84+90=174:      n1 105, n2 (25+6)/2=15+90=105: tie,         agree
         tie, lowest name: n1                 lowest name: n1
   5     n1 (50+87)/2=68+81=149, n2 174: n2   n1 (50+12)/2=31+81=112, n2 105: n1          disagree
   ====  ===================================  ==========================================  =========

   (Balanced: int((1 - |cpu fraction - memory fraction| / 2) * 100), fractions with the pod.)
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from live_harness import eventually
from record_harness import bound_nodes
from serve_harness import REPO, Server

pytestmark = pytest.mark.slow

SERVE = ("--no-node-agent", "--no-node-lifecycle", "--no-controllers", "--tie-break", "name")
CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
MOST_ALLOCATED = CONFIG | {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}


class Shadow:
    """A ``kubesched run --shadow`` process."""

    def __init__(self, server: Server, tmp: Path, config: dict[str, Any]) -> None:
        (tmp / "shadow.yaml").write_text(yaml.safe_dump(config))
        self.log = tmp / "shadow.jsonl"
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kubesched.cli.main", "run", "--shadow", "--kubeconfig", str(server.kubeconfig),
             "--config", str(tmp / "shadow.yaml"), "--port", "0", "--bind-address", "127.0.0.1",
             "--tie-break", "name", "--shadow-log", str(self.log)],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self._pump = threading.Thread(target=self._read, daemon=True)
        self._pump.start()
        eventually(lambda: any("kubesched shadow running" in line for line in self.lines)
                   or self.proc.poll() is not None, timeout=60)
        assert self.proc.poll() is None, self.lines
        found = next(m for m in (re.search(r"serving .* on (https?://\S+)", line) for line in self.lines) if m)
        self.url = found.group(1)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def get(self, path: str) -> str:
        with urllib.request.urlopen(self.url + path, timeout=30) as resp:
            return str(resp.read().decode())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            self.proc.wait(60)
        self._pump.join(5)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def node(name: str, cpu: int) -> dict[str, Any]:
    res = {"cpu": str(cpu), "memory": f"{4 * cpu}Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": res, "allocatable": res}}


def pod(name: str, cpu_m: int, mem_mi: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "shadowed"}},
            "spec": {"containers": [{"name": "c", "image": "registry.example/app:1", "resources": {
                "requests": {"cpu": f"{cpu_m}m", "memory": f"{mem_mi}Mi"}}}]}}


def post(server: Server, obj: dict[str, Any]) -> None:
    path = "/api/v1/nodes" if obj["kind"] == "Node" else "/api/v1/namespaces/default/pods"
    status, body = server.request("POST", path, obj)
    assert status == 201, body


def decisions(shadow: Shadow, n: int) -> list[dict[str, Any]]:
    """The shadow's log, once it holds ``n`` decisions."""
    def read() -> list[dict[str, Any]]:
        text = shadow.log.read_text() if shadow.log.exists() else ""
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return list(eventually(lambda: (lambda rows: rows if len(rows) >= n else None)(read())))


def run_workload(server: Server, pods: list[dict[str, Any]]) -> dict[str, str]:
    placed = {}
    for p in pods:
        post(server, p)
        key = f"default/{p['metadata']['name']}"
        placed[key] = eventually(lambda: bound_nodes(server).get(key))
    return placed


@pytest.fixture
def shadows() -> Any:
    made: list[Shadow] = []
    yield made
    for s in made:
        s.stop()


def test_shadow_with_the_same_configuration_agrees_on_every_pod(
        spawn: Callable[..., Server], tmp_path: Path, shadows: list[Shadow]) -> None:
    server = spawn(*SERVE)
    eventually(lambda: any("kubesched scheduler running" in line for line in server.output))
    for i, cpu in enumerate((4, 4, 8, 8, 8, 16, 16, 32, 32, 64)):
        post(server, node(f"node-{i:02d}", cpu))
    shadow = Shadow(server, tmp_path, CONFIG)
    shadows.append(shadow)
    pods = [pod(f"w{i:03d}", 50 + (i * 337) % 900, 64 + (i * 211) % 2000) for i in range(200)]
    placed = run_workload(server, pods)
    rows = decisions(shadow, 200)
    assert [r["result"] for r in rows] == ["agree"] * 200, [r for r in rows if r["result"] != "agree"][:3]
    assert {r["pod"]: r["shadow"] for r in rows} == placed
    doc = json.loads(shadow.get("/debug/shadow"))
    assert doc["counts"]["agree"] == 200 and doc["decisions"] == 200 and doc["kept"] == []
    metrics = shadow.get("/metrics")
    assert 'kubesched_shadow_decisions_total{result="agree"} 200.0' in metrics
    assert 'kubesched_shadow_decisions_total{result="disagree"} 0.0' in metrics


def test_most_allocated_shadow_disagrees_where_computed(
        spawn: Callable[..., Server], tmp_path: Path, shadows: list[Shadow]) -> None:
    server = spawn(*SERVE)
    eventually(lambda: any("kubesched scheduler running" in line for line in server.output))
    post(server, node("n1", 4))
    post(server, node("n2", 16))
    shadow = Shadow(server, tmp_path, MOST_ALLOCATED)
    shadows.append(shadow)
    placed = run_workload(server, [pod(f"p{i}", 1000, 1024) for i in range(1, 6)])
    assert placed == {"default/p1": "n2", "default/p2": "n2", "default/p3": "n2", "default/p4": "n1",
                      "default/p5": "n2"}
    rows = decisions(shadow, 5)
    assert [(r["pod"], r["bound"], r["shadow"], r["result"]) for r in rows] == [
        ("default/p1", "n2", "n1", "disagree"), ("default/p2", "n2", "n1", "disagree"),
        ("default/p3", "n2", "n1", "disagree"), ("default/p4", "n1", "n1", "agree"),
        ("default/p5", "n2", "n1", "disagree")]
    # the other default scorers give both nodes the same: the totals differ by 105 - 100
    totals = rows[0]["explanation"]["totals"]
    assert totals["n1"] - totals["n2"] == 5
    doc = json.loads(shadow.get("/debug/shadow"))
    assert doc["counts"] == {"agree": 1, "tie": 0, "disagree": 4, "unschedulable": 0, "error": 0,
                                  "no-profile": 0}
    assert [k["pod"] for k in doc["kept"]] == ["default/p1", "default/p2", "default/p3", "default/p5"]
    explain = json.loads(shadow.get("/debug/explain/default/p1"))
    assert explain["chosen"] == "n1"


def test_shadow_writes_nothing(spawn: Callable[..., Server], tmp_path: Path, shadows: list[Shadow]) -> None:
    """Without a scheduler in serve, the test binds a pod itself: the shadow decides for it,
    and writes nothing — the bound pod keeps the resourceVersion the binding gave it, and a
    pod no node fits (which a scheduler would mark PodScheduled=False with a FailedScheduling
    event) gets no condition and no event. (The shadow's own choice for ``small`` is n2: 192
    against 174 for n1, the serve column of pod 1 in the module docstring's table.)"""
    server = spawn("--no-node-agent", "--no-node-lifecycle", "--no-controllers", "--no-scheduler")
    post(server, node("n1", 4))
    post(server, node("n2", 16))
    shadow = Shadow(server, tmp_path, CONFIG)
    shadows.append(shadow)
    post(server, pod("huge", 1_000_000, 64))
    post(server, pod("small", 1000, 1024))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "small"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}
    status, body = server.request("POST", "/api/v1/namespaces/default/pods/small/binding", binding)
    assert status == 201, body
    status, small = server.request("GET", "/api/v1/namespaces/default/pods/small")
    assert status == 200 and small["spec"]["nodeName"] == "n1"
    rows = decisions(shadow, 1)
    assert [(r["pod"], r["bound"], r["shadow"], r["result"]) for r in rows] == [("default/small", "n1", "n2", "disagree")]
    status, after = server.request("GET", "/api/v1/namespaces/default/pods/small")
    assert after["metadata"]["resourceVersion"] == small["metadata"]["resourceVersion"]
    status, huge = server.request("GET", "/api/v1/namespaces/default/pods/huge")
    assert not huge["status"].get("conditions") and not huge["spec"].get("nodeName")
    status, events = server.request("GET", "/apis/events.k8s.io/v1/namespaces/default/events")
    assert status == 200 and events["items"] == []
