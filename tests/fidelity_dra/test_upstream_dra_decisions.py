"""Differential fidelity for Dynamic Resource Allocation: kubesched against the decisions
upstream kube-scheduler v1.34.1 (its DynamicResources plugin and the structured allocator
of k8s.io/dynamic-resource-allocation) made on the same scenarios.

``expected/*.json`` were produced by running upstream's own scheduler code on
``cases/*.yaml`` (see UPSTREAM_README.md: template claims ``<pod>-<claim>`` created before
the run, Reserve and PreBind run for real after each choice). They are facts about
upstream. Compared: every attempt (filter verdicts, scores, chosen node, message,
nomination, victims), the pods held at PreEnqueue with upstream's reason, each pod's final
node, and the final allocation and reservedFor of every ResourceClaim (``objects``).
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

def run_case(name: str) -> tuple[dict[str, Any], Simulation]:
    manifest = load_manifests([str(HERE / "cases" / f"{name}.yaml")])
    sim = Simulation(manifest, load_config(str(HERE / "config.yaml")), tie_break="name", explain=True)
    sim.run(single_pass=True)
    return {"pods": [o.to_json(True) for o in sim.results()]}, sim


@pytest.mark.parametrize("name", CASES)
def test_case_matches_upstream(name: str) -> None:
    expected = json.loads((HERE / "expected" / f"{name}.json").read_text())
    got, sim = run_case(name)
    by_key = {(p["namespace"], p["name"]): p for p in got["pods"]}
    diffs = []
    for ep in expected["pods"]:
        gp = by_key.get((ep["namespace"], ep["name"]), {})
        gatt = gp.get("attempts", [])
        if len(gatt) != len(ep["attempts"]):
            diffs.append(f"{ep['name']}: want {len(ep['attempts'])} attempts, got {len(gatt)}")
        for i, ea in enumerate(ep["attempts"]):
            diffs += [f"{ep['name']}#{i}: {d}" for d in _compare(ea, gatt[i] if i < len(gatt) else {})]
        if ep.get("gated") != gp.get("gated"):
            diffs.append(f"{ep['name']}: gated: want {ep.get('gated')!r} got {gp.get('gated')!r}")
        if ep.get("gated") and gp.get("status") != "Gated":
            diffs.append(f"{ep['name']}: status {gp.get('status')}, want Gated")
        if ep.get("finalNode") != gp.get("node"):
            diffs.append(f"{ep['name']}: final node: want {ep.get('finalNode')} got {gp.get('node')}")
    want_claims = expected["objects"].get("resourceClaims", {})
    got_claims = sim.dra.to_json()["resourceClaims"]
    for k in sorted(set(want_claims) | set(got_claims)):
        if want_claims.get(k) != got_claims.get(k):
            diffs.append(f"claim {k}: want {want_claims.get(k)} got {got_claims.get(k)}")
    assert not diffs, "\n".join(diffs[:20])
