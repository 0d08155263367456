"""``kubesched extender`` in place of the corpus' own extender: upstream's decisions again.

tests/fidelity_extenders/test_extender.py (standard library) is the extender upstream
kube-scheduler v1.34.1 was run against to record ``expected/*.json`` (UPSTREAM_README.md).
tests/live/plugins/label_guard.py is the same rules written as a kubesched plugin (Filter
messages verbatim; Score ``10 × (rank % 11)``). A real ``kubesched extender`` process serving
that plugin alone (``served/label-guard-only.yaml``) must answer as test_extender.py does
(its Prioritize: ``round(10 × (rank % 11) × 10 / (100 × 1)) = rank % 11``), so ``kubesched
simulate`` with the corpus' ``config.yaml`` pointed at it makes upstream's recorded decisions.

Only the ``nodeCacheCapable: false`` cases: names-only requests need the extender's node
cache, fed by a kubeconfig (tests/live/test_extender_serve_e2e.py covers that), and
``simulate`` has no API server to feed it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_upstream_extender_decisions import _compare, _free_port

from kubesched.api.decode import load_manifests
from kubesched.config import load_config
from kubesched.sim.driver import Simulation

HERE = Path(__file__).parent
PLUGINS = HERE.parent / "live" / "plugins"
CASES = sorted(p.stem for p in (HERE / "cases").glob("*.yaml") if not p.stem.endswith("-cache"))


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(PLUGINS)}
    proc = subprocess.Popen([sys.executable, "-m", "kubesched.cli.main", "extender", "--config",
                             str(HERE / "served" / "label-guard-only.yaml"), "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2) as r:
                    assert r.read() == b"ok"
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
                assert time.monotonic() < deadline, "kubesched extender did not start"
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.mark.slow
def test_served_plugin_makes_upstreams_decisions(served: str) -> None:
    assert len(CASES) == 20
    diffs: list[str] = []
    attempts = 0
    for name in CASES:
        expected = json.loads((HERE / "expected" / f"{name}.json").read_text())
        cfg = load_config(str(HERE / "config.yaml"))
        cfg = dataclasses.replace(cfg, extenders=tuple(dataclasses.replace(e, url_prefix=served)
                                                       for e in cfg.extenders))
        sim = Simulation(load_manifests([str(HERE / "cases" / f"{name}.yaml")]), cfg, tie_break="name",
                         explain=True)
        sim.run(single_pass=True)
        by_key = {(o.pod.namespace, o.pod.name): o.to_json(True) for o in sim.results()}
        for ep in expected["pods"]:
            gatt = by_key.get((ep["namespace"], ep["name"]), {}).get("attempts", [])
            if len(gatt) != len(ep["attempts"]):
                diffs.append(f"{name}/{ep['name']}: want {len(ep['attempts'])} attempts, got {len(gatt)}")
            for i, ea in enumerate(ep["attempts"]):
                attempts += 1
                diffs += [f"{name}/{ep['name']}#{i}: {d}"
                          for d in _compare(ea, gatt[i] if i < len(gatt) else {}, served)]
    assert attempts == 140 - 48  # UPSTREAM_README.md's counts: 140 attempts, 48 in -cache cases
    assert not diffs, "\n".join(diffs[:20])
