"""Differential fidelity: kubesched against the decisions upstream kube-scheduler v1.34.1
made on the same scenarios.

The expected values in ``expected/*.json`` were produced by running upstream v1.34.1's own
scheduler code on ``cases/*.yaml`` with ``config.yaml`` (see UPSTREAM_README.md for how it
was driven: default profile, percentageOfNodesToScore 100, one attempt per pending pod in
queue order, ties to the lowest node name, preemption's random choices pinned). They are
facts about upstream, not outputs of kubesched. Compared per attempt: every node's filter
verdict (plugin and reasons), every feasible node's weighted score per plugin, the chosen
node, the unschedulable message, the nominated node and the victims.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fidelity_compare import compare_attempt

from kubesched.api.decode import load_manifests
from kubesched.config import load_config
from kubesched.sim.driver import Simulation

HERE = Path(__file__).parent
CASES = sorted(p.stem for p in (HERE / "cases").glob("*.yaml"))


def _compare(exp: dict[str, Any], got: dict[str, Any]) -> list[str]:
    return compare_attempt(exp, got)

def run_case(name: str) -> dict[str, Any]:
    manifest = load_manifests([str(HERE / "cases" / f"{name}.yaml")])
    sim = Simulation(manifest, load_config(str(HERE / "config.yaml")), tie_break="name", explain=True)
    sim.run(single_pass=True)
    return {"pods": [o.to_json(True) for o in sim.results()]}


@pytest.mark.parametrize("name", CASES)
def test_case_matches_upstream(name: str) -> None:
    expected = json.loads((HERE / "expected" / f"{name}.json").read_text())
    got = run_case(name)
    by_key = {(p["namespace"], p["name"]): p for p in got["pods"]}
    diffs = []
    for ep in expected["pods"]:
        gp = by_key.get((ep["namespace"], ep["name"]), {})
        gatt = gp.get("attempts", [])
        if len(gatt) != len(ep["attempts"]):
            diffs.append(f"{ep['name']}: want {len(ep['attempts'])} attempts, got {len(gatt)}")
        for i, ea in enumerate(ep["attempts"]):
            ga = gatt[i] if i < len(gatt) else {}
            diffs += [f"{ep['name']}#{i}: {d}" for d in _compare(ea, ga)]
    assert not diffs, "\n".join(diffs[:20])
