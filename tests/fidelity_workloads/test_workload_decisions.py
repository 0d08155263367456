"""Differential fidelity on workload scenarios: PodTopologySpread's default constraints
(System and List), Services and controllers selecting pods, finished and terminating pods,
against the decisions upstream kube-scheduler v1.34.1 made (UPSTREAM_README.md).

``expected/*.json`` were produced by upstream's own scheduler code on ``cases/*.yaml``:
cases named ``*-cfglist`` with ``config-list.yaml`` (List defaulting: zone maxSkew 1
DoNotSchedule, hostname maxSkew 2 ScheduleAnyway), the others with ``config.yaml``
(System defaulting). They are facts about upstream, not kubesched outputs. Compared per
attempt: every node's filter verdict, every feasible node's weighted scores, the chosen
node, the message, the nominated node and the victims; per case, the finished pods the
scheduler never saw (``ignoredPods``) and the pending pods it skipped (being deleted).
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

def run_case(name: str) -> Simulation:
    config = "config-list.yaml" if name.endswith("-cfglist") else "config.yaml"
    manifest = load_manifests([str(HERE / "cases" / f"{name}.yaml")])
    sim = Simulation(manifest, load_config(str(HERE / config)), tie_break="name", explain=True)
    sim.run(single_pass=True)
    return sim


@pytest.mark.parametrize("name", CASES)
def test_case_matches_upstream(name: str) -> None:
    expected = json.loads((HERE / "expected" / f"{name}.json").read_text())
    sim = run_case(name)
    by_key = {(o.pod.namespace, o.pod.name): o.to_json(True) for o in sim.results()}
    diffs = []
    assert sim.ignored_pods() == expected.get("ignoredPods", [])
    for ep in expected["pods"]:
        gp = by_key.get((ep["namespace"], ep["name"]), {})
        assert gp.get("skipped") == ep.get("skipped"), ep["name"]
        gatt = gp.get("attempts", [])
        if len(gatt) != len(ep["attempts"]):
            diffs.append(f"{ep['name']}: want {len(ep['attempts'])} attempts, got {len(gatt)}")
        for i, ea in enumerate(ep["attempts"]):
            ga = gatt[i] if i < len(gatt) else {}
            diffs += [f"{ep['name']}#{i}: {d}" for d in _compare(ea, ga)]
    assert not diffs, "\n".join(diffs[:20])
