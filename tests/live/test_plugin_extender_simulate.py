"""A plugin behind ``kubesched extender`` decides as the same plugin in-process does.

On tests/fidelity's 44 public scenarios, ``kubesched simulate``'s scheduler runs twice:
with the custom plugin LabelGuard (tests/live/plugins/label_guard.py) in the profile
(``extender_configs/inprocess.yaml``), and with LabelGuard served by a real ``kubesched
extender`` process on loopback and called as an extender (``served.yaml``, weight 1,
nodeCacheCapable false). Per attempt, in queue order: the filter verdicts are identical
(LabelGuard's verdict appears under the extender's urlPrefix), so are the scores (LabelGuard
scores 0..100 in steps of 10; served, ``round(s × 10 / 100) × weight 1 × 10`` = ``s``), the
totals, the chosen node and the message.

Two upstream rules make the runs differ on purpose, so they are set aside:

* with nodeCacheCapable false upstream scores the nodes the extender returned without their
  pods (tests/fidelity_extenders/UPSTREAM_README.md): both configs turn off the four Score
  plugins that reads (NodeResourcesFit, NodeResourcesBalancedAllocation, ImageLocality,
  PodTopologySpread);
* preemption's dry run runs the Filter plugins, never the extender (same README): from the
  first attempt that reaches preemption in either run, the clusters may diverge. That
  attempt's filter verdicts are still compared (they come before PostFilter); the rest of
  the scenario is not.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from extender_harness import PLUGINS, start_extender

from kubesched.api.decode import load_manifests
from kubesched.config import load_config
from kubesched.sim.driver import Simulation

HERE = Path(__file__).parent
CONFIGS = HERE / "extender_configs"
CASES = sorted((HERE.parent / "fidelity" / "cases").glob("*.yaml"))


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    proc, url = start_extender(CONFIGS / "label-guard-only.yaml")
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def _run(config: str, case: Path, url: str | None = None) -> dict[str, dict[str, Any]]:
    cfg = load_config(config)
    if url is not None:
        cfg = dataclasses.replace(cfg, extenders=tuple(dataclasses.replace(e, url_prefix=url)
                                                       for e in cfg.extenders))
    sim = Simulation(load_manifests([str(case)]), cfg, tie_break="name", explain=True)
    sim.run(single_pass=True)
    return {o.pod.name: o.to_json(True) for o in sim.results()}


def _named(d: dict[str, Any], url: str) -> Any:
    """Rename the extender's entries (verdict plugin, score key) to LabelGuard."""
    out = {}
    for node, v in d.items():
        if isinstance(v, dict) and "plugin" in v:
            out[node] = (("LabelGuard" if v["plugin"] == url else v["plugin"]), v.get("code"), tuple(v["reasons"]))
        elif isinstance(v, dict):
            out[node] = {("LabelGuard" if k == url else k): s for k, s in v.items()}
        else:
            out[node] = v
    return out


def _preempts(a: dict[str, Any]) -> bool:
    return bool(a.get("nominatedNode")) or "preemption:" in (a.get("message") or "")


@pytest.mark.slow
def test_served_plugin_decides_as_in_process(served: str) -> None:
    sys.path.insert(0, str(PLUGINS))  # the in-process run imports label_guard too
    try:
        diffs: list[str] = []
        compared = full = rejected_by_guard = scored = 0
        for case in CASES:
            inproc = _run(str(CONFIGS / "inprocess.yaml"), case)
            ext = _run(str(CONFIGS / "served.yaml"), case, served)
            stopped = False
            # attempt order: the queue's (PrioritySort; equal priorities in creation order)
            for pod, got in sorted(inproc.items(), key=lambda kv: -int(kv[1]["priority"] or 0)):
                where = f"{case.stem}/{pod}"
                if not got["attempts"]:  # running pods: no attempt
                    continue
                if not ext.get(pod, {}).get("attempts"):
                    diffs.append(f"{where}: attempted in-process only")
                    continue
                a, b = got["attempts"][0], ext[pod]["attempts"][0]
                fa, fb = _named(a["filter"], served), _named(b["filter"], served)
                if fa != fb:
                    diffs.append(f"{where}: filter {fa} != {fb}")
                rejected_by_guard += sum(1 for v in fa.values() if isinstance(v, tuple) and v[0] == "LabelGuard")
                compared += 1
                if _preempts(a) or _preempts(b):
                    stopped = True
                    break
                if a["chosen"] != b["chosen"] or a["message"] != b["message"]:
                    diffs.append(f"{where}: chosen/message {a['chosen']} {a['message']!r} != "
                                 f"{b['chosen']} {b['message']!r}")
                if len(a["totals"]) < 2:  # one feasible node: explain's scores are informational and
                    continue              # upstream calls no Prioritize then (schedule_one.go)
                scored += 1
                if a["totals"] != b["totals"] or a["best"] != b["best"]:
                    diffs.append(f"{where}: totals {a['totals']} {a['best']} != {b['totals']} {b['best']}")
                if _named(a["scores"], served) != _named(b["scores"], served):
                    diffs.append(f"{where}: scores {a['scores']} != {b['scores']}")
            full += not stopped
        assert not diffs, "\n".join(diffs[:20])
        # not vacuous (preemption is common in these scenarios, so about 90 of their 199
        # attempts come before one): many attempts compared, scored, with LabelGuard rejections
        assert compared > 60 and full > 10 and rejected_by_guard > 20 and scored > 30, (
            compared, full, rejected_by_guard, scored)
    finally:
        sys.path.remove(str(PLUGINS))
