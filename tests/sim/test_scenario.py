"""``kubesched bench --scenario FILE`` and the generated mixed workload (issue 16, item 1)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kubesched.cli.main import main
from kubesched.cluster.inprocess import ClusterChange
from kubesched.sim.bench import RESULT_KEYS, BenchSpec
from kubesched.sim.mixed import PHASE_ANNOTATION, mixed_objects
from kubesched.sim.scenario import ScenarioBench, write_mixed


def _node(name: str, cpu: str = "4") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, node: str = "", init: bool = False, cpu: str = "1") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if init:
        meta["annotations"] = {PHASE_ANNOTATION: "init"}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _write(tmp_path: Path, objs: list[dict[str, Any]]) -> str:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
    return str(path)


def _spec(path: str) -> BenchSpec:
    return BenchSpec(workload="scenario", nodes=0, init_pods=0, pods=0, scenario=path)


def test_scenario_phases(tmp_path: Path) -> None:
    """Two 4-cpu nodes; a 3-cpu pod bound to n1 in the file; two 1-cpu init pods; three 1-cpu
    measured pods. Only the three count; all five pending pods end up bound; n1 can take only
    one more cpu, so at most one of the five lands there."""
    objs = [_node("n1"), _node("n2"), _pod("bound", node="n1", cpu="3"),
            _pod("m0"), _pod("i0", init=True), _pod("m1"), _pod("i1", init=True), _pod("m2")]
    bench = ScenarioBench(_spec(_write(tmp_path, objs)), _write(tmp_path, objs))
    order: list[str] = []
    bench.sim.cluster.listeners.append(
        lambda ch: order.append(ch.pod.name) if isinstance(ch, ClusterChange) and ch.kind == "pod-bound" else None)
    r = bench.run().to_json()
    assert list(r) == list(RESULT_KEYS)
    assert (r["nodes"], r["pods"], r["scheduled"]) == (2, 3, 3)
    assert bench.spec.init_pods == 2
    assert order == ["i0", "i1", "m0", "m1", "m2"]  # init first, then the measured in file order
    pods = {p.name: p.node_name for p in bench.sim.cluster.pods.values()}
    assert pods["bound"] == "n1"
    assert sum(1 for n, node in pods.items() if n != "bound" and node == "n1") <= 1


def test_scenario_rejects_an_unknown_phase(tmp_path: Path) -> None:
    bad = _pod("p")
    bad["metadata"]["annotations"] = {PHASE_ANNOTATION: "warmup"}
    path = _write(tmp_path, [_node("n1"), bad])
    with pytest.raises(Exception, match=r"pod default/p: metadata.annotations\[bench.kubesched.io/phase\]"):
        ScenarioBench(_spec(path), path)


@pytest.mark.parametrize("argv, message", [
    (["--scenario", "/nonexistent/x.yaml"], "no such file"),
    (["--scenario", "X", "--pods", "3"], "sets its own sizes"),
    (["--workload", "basic", "--write-scenario", "x.json"], "goes with --workload mixed"),
], ids=["missing-file", "sizes", "write-not-mixed"])
def test_cli_scenario_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["bench", *argv])
    assert rc != 0
    assert message in capsys.readouterr().err


def test_cli_scenario_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, [_node("n1"), _pod("a"), _pod("b", init=True)])
    assert main(["bench", "--scenario", path, "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["nodes"], doc["pods"], doc["scheduled"]) == (1, 1, 1)


def test_mixed_is_seeded_and_shaped() -> None:
    """Same seed, same objects; another seed, other pods. Over 4,000 pods the shares are the
    generator's probabilities (25/20/15/10/10%) within 3 points (binomial sd < 0.7 points)."""
    a = list(mixed_objects(200, 1000, 3000, seed=1))
    assert a == list(mixed_objects(200, 1000, 3000, seed=1))
    assert a != list(mixed_objects(200, 1000, 3000, seed=2))
    kinds = Counter(o["kind"] for o in a)
    assert kinds == {"PriorityClass": 3, "Node": 200, "Pod": 4000}
    pods = [o for o in a if o["kind"] == "Pod"]
    assert sum(1 for p in pods if p["metadata"].get("annotations")) == 1000
    share = {
        "nodeSelector": sum("nodeSelector" in p["spec"] for p in pods),
        "nodeAffinity": sum("nodeAffinity" in p["spec"].get("affinity", {}) for p in pods),
        "spread": sum("topologySpreadConstraints" in p["spec"] for p in pods),
        "anti": sum("podAntiAffinity" in p["spec"].get("affinity", {}) for p in pods),
        "tolerations": sum("tolerations" in p["spec"] for p in pods),
    }
    want = {"nodeSelector": 0.25, "nodeAffinity": 0.20, "spread": 0.15, "anti": 0.10, "tolerations": 0.10}
    for k, v in want.items():
        assert abs(share[k] / 4000 - v) < 0.03, (k, share[k])
    requests = {json.dumps(p["spec"]["containers"][0]["resources"]) for p in pods}
    # 196 cpu x 253 memory values = 49,588 pairs; 4,000 draws repeat about 4000**2 / (2 * 49588)
    # = 161 of them, so about 3,840 distinct
    assert len(requests) > 3700
    groups = Counter(p["metadata"]["labels"]["spread-group"] for p in pods if "spread-group" in p["metadata"]["labels"])
    assert groups and max(groups.values()) <= 5


def test_mixed_small_schedules_every_pod(tmp_path: Path) -> None:
    path = str(tmp_path / "mixed.json")
    write_mixed(path, 100, 50, 300, seed=3)
    r = ScenarioBench(_spec(path), path).run()
    assert (r.nodes, r.pods, r.scheduled) == (100, 300, 300)
