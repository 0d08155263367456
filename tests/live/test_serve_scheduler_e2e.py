"""The scheduler inside ``kubesched serve``, driven with the real kubectl: the example
cluster placed as ``kubesched simulate`` places it, the events and conditions ``kubectl
describe`` shows, pods of other schedulers left alone but counted, a clean Ctrl-C."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from live_harness import eventually
from serve_harness import REPO, Server, pod_manifest

from kubesched.api.decode import load_manifests
from kubesched.config import load_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.driver import Simulation

pytestmark = pytest.mark.slow

EXAMPLE = REPO / "examples" / "mixed-cluster.yaml"
# the API server and the scheduler, without the simulated kubelets and controllers
SCHEDULER_ONLY = ("--no-node-agent", "--no-node-lifecycle", "--no-controllers")


def scheduler_running(server: Server) -> bool:
    return any("kubesched scheduler running" in line for line in server.output)


def pods(server: Server, *args: str) -> dict[str, dict[str, Any]]:
    doc = json.loads(server.kubectl("get", "pods", *args, "-o", "json").stdout)
    return {f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in doc["items"]}


def condition(pod: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in pod["status"].get("conditions") or () if c["type"] == type_), None)


def simulated() -> tuple[dict[str, str], dict[str, str]]:
    """What ``simulate --tie-break name`` decides: the node of each pod whose every attempt
    had one best node (no tie to break), and the message of each unschedulable pod."""
    sim = Simulation(load_manifests([str(EXAMPLE)]), load_config(None, in_tree_registry()),
                     tie_break="name", explain=True)
    sim.run()
    placed, failed = {}, {}
    for out in sim.results():
        if out.status == "Scheduled" and all(len(a.best) <= 1 for a in out.attempts):
            placed[out.pod.key] = out.node or ""
        elif out.status == "Unschedulable":
            failed[out.pod.key] = out.message or ""
    return placed, failed


def test_example_cluster_as_simulate_places_it(spawn: Callable[..., Server], tmp_path: Path) -> None:
    server = spawn(*SCHEDULER_ONLY)
    eventually(lambda: scheduler_running(server))
    docs = [d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d]
    pending = [d for d in docs if d["kind"] == "Pod" and not d["spec"].get("nodeName")]
    cluster = [d for d in docs if d not in pending]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(cluster))
    (tmp_path / "pending.yaml").write_text(yaml.safe_dump_all(pending))
    server.kubectl("apply", "-f", str(tmp_path / "cluster.yaml"))
    time.sleep(1.0)  # the scheduler's informers see every node before the first pending pod
    server.kubectl("apply", "-f", str(tmp_path / "pending.yaml"))

    placed, failed = simulated()
    assert placed and failed == {"ml/train-big": failed["ml/train-big"]}
    got = eventually(lambda: (p := pods(server, "-A")) and all(
        p[k]["spec"].get("nodeName") for k in placed) and all(condition(p[k], "PodScheduled") for k in failed)
        and p)
    assert {k: got[k]["spec"]["nodeName"] for k in placed} == placed
    big = condition(got["ml/train-big"], "PodScheduled")
    assert big is not None and (big["status"], big["reason"], big["message"]) == (
        "False", "Unschedulable", failed["ml/train-big"])
    gated = got["batch/nightly-export"]  # waits for its scheduling gate: never tried
    assert not gated["spec"].get("nodeName")

    out = " ".join(server.kubectl("describe", "pod", "-n", "ml", "train-big").stdout.split())
    assert "Warning FailedScheduling" in out and "default-scheduler" in out
    assert failed["ml/train-big"].split(". preemption:")[0] in out
    out = " ".join(server.kubectl("describe", "pod", "-n", "shop", "web-1").stdout.split())
    assert "Normal Scheduled" in out and f"Successfully assigned shop/web-1 to {placed['shop/web-1']}" in out
    events = server.kubectl("get", "events", "-n", "batch").stdout
    assert "nightly-export" not in events


def test_other_schedulers_pods_are_left_alone_but_counted(spawn: Callable[..., Server]) -> None:
    """A pod for another scheduler stays Pending; once bound (here by hand, through the
    binding subresource) its resources count: our scheduler avoids the full node."""
    server = spawn("--nodes", "2", "--node-cpu", "2", *SCHEDULER_ONLY)
    eventually(lambda: scheduler_running(server))
    other = pod_manifest("other", cpu="2")
    other["spec"]["schedulerName"] = "someone-else"
    server.kubectl("apply", "-f", "-", input=json.dumps(other))
    time.sleep(1.0)
    left = pods(server)["default/other"]
    assert not left["spec"].get("nodeName") and condition(left, "PodScheduled") is None
    assert "other" not in server.kubectl("get", "events").stdout
    status, _ = server.request("POST", "/api/v1/namespaces/default/pods/other/binding", {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "other"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "node-01"}})
    assert status == 201
    for name in ("ours-1", "ours-2"):
        server.kubectl("apply", "-f", "-", input=json.dumps(pod_manifest(name, cpu="1500m")))
    got = eventually(lambda: (p := pods(server)) and (p["default/ours-1"]["spec"].get("nodeName")
                                                      or condition(p["default/ours-1"], "PodScheduled"))
                     and condition(p["default/ours-2"], "PodScheduled") and p)
    nodes = {n: got[f"default/{n}"]["spec"].get("nodeName") for n in ("ours-1", "ours-2")}
    assert sorted(map(str, nodes.values())) == ["None", "node-02"]
    loser = next(n for n, node in nodes.items() if not node)
    cond = condition(got[f"default/{loser}"], "PodScheduled")
    assert cond is not None and cond["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert server.stop(signal.SIGINT) == 0  # Ctrl-C: the scheduler and the server stop cleanly
    assert "kubesched API server stopped" in "".join(server.output)
