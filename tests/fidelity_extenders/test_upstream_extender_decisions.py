"""Differential fidelity for HTTP scheduler extenders: kubesched against the decisions
upstream kube-scheduler v1.34.1 (pkg/scheduler/schedule_one.go findNodesThatPassExtenders /
prioritizeNodes, pkg/scheduler/extender.go) made on the same scenarios with
``test_extender.py`` (the corpus' own extender, standard library) answering.

``expected/*.json`` are facts about upstream (see UPSTREAM_README.md). The extender is
started here on a free port; the configs name port 18999, so the test rewrites the
urlPrefix. Compared per attempt: filter verdicts (an extender verdict is named by the
urlPrefix), per-plugin scores (the extender's weighted score under its urlPrefix), chosen
node, message (the bracketed list of parallel preemption errors as a set), nomination,
victims.
"""

from __future__ import annotations

import dataclasses
import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.api.decode import load_manifests
from kubesched.config import load_config
from kubesched.sim.driver import Simulation

HERE = Path(__file__).parent
CASES = sorted(p.stem for p in (HERE / "cases").glob("*.yaml"))
UPSTREAM_URL = "http://127.0.0.1:18999"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def extender(request: pytest.FixtureRequest) -> Iterator[str]:
    name = request.node.callspec.params["name"]
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(HERE / "test_extender.py"), "--port", str(port),
                             "--nodes-file", str(HERE / "cases" / f"{name}.yaml")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "test_extender.py did not start"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait()


def _name(plugin: Any, url: str) -> Any:
    return UPSTREAM_URL if plugin == url else plugin


def _verdict(v: Any, url: str) -> Any:
    return "ok" if v == "ok" else (_name(v.get("plugin"), url), tuple(v.get("reasons") or ()))


def _msg(m: str | None) -> str | None:
    if not m:
        return m
    return re.sub(r"\[([^\]]*)\]", lambda g: "[" + ", ".join(sorted(g.group(1).split(", "))) + "]", m)


def _compare(exp: dict[str, Any], got: dict[str, Any], url: str) -> list[str]:
    diffs = []
    ef = {n: _verdict(v, UPSTREAM_URL) for n, v in exp["filter"].items()}
    gf = {n: _verdict(v, url) for n, v in got.get("filter", {}).items()}
    diffs += [f"filter[{n}]: want {ef.get(n)} got {gf.get(n)}" for n in sorted(set(ef) | set(gf))
              if ef.get(n) != gf.get(n)]
    es = exp.get("scores", {})
    gs = {n: {_name(p, url): v for p, v in sc.items()} for n, sc in got.get("scores", {}).items()}
    diffs += [f"scores[{n}]: want {es.get(n)} got {gs.get(n)}" for n in sorted(set(es) | set(gs))
              if es.get(n) != gs.get(n)]
    if exp.get("chosen") != got.get("chosen"):
        diffs.append(f"chosen: want {exp.get('chosen')} got {got.get('chosen')}")
    if _msg(exp.get("message")) != _msg(got.get("message")):
        diffs.append(f"message: want {exp.get('message')!r} got {got.get('message')!r}")
    if (exp.get("nominatedNode") or None) != (got.get("nominatedNode") or None):
        diffs.append(f"nominatedNode: want {exp.get('nominatedNode')} got {got.get('nominatedNode')}")
    if sorted(exp.get("victims") or []) != sorted(got.get("victims") or []):
        diffs.append(f"victims: want {exp.get('victims')} got {got.get('victims')}")
    return diffs


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_case_matches_upstream(name: str, extender: str) -> None:
    expected = json.loads((HERE / "expected" / f"{name}.json").read_text())
    cfg = load_config(str(HERE / ("config-cache.yaml" if name.endswith("-cache") else "config.yaml")))
    assert [e.url_prefix for e in cfg.extenders] == expected["extenders"]
    cfg = dataclasses.replace(cfg, extenders=tuple(dataclasses.replace(e, url_prefix=extender)
                                                   for e in cfg.extenders))
    sim = Simulation(load_manifests([str(HERE / "cases" / f"{name}.yaml")]), cfg, tie_break="name", explain=True)
    sim.run(single_pass=True)
    by_key = {(o.pod.namespace, o.pod.name): o.to_json(True) for o in sim.results()}
    diffs = []
    for ep in expected["pods"]:
        gatt = by_key.get((ep["namespace"], ep["name"]), {}).get("attempts", [])
        if len(gatt) != len(ep["attempts"]):
            diffs.append(f"{ep['name']}: want {len(ep['attempts'])} attempts, got {len(gatt)}")
        for i, ea in enumerate(ep["attempts"]):
            diffs += [f"{ep['name']}#{i}: {d}" for d in _compare(ea, gatt[i] if i < len(gatt) else {}, extender)]
    assert not diffs, "\n".join(diffs[:20])
