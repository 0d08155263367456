"""A custom plugin that raises or returns garbage does not stop ``kubesched run`` or the
scheduler inside ``kubesched serve``: the pod it failed gets upstream's SchedulerError
condition (handleSchedulingFailure: PodScheduled False, reason SchedulerError, the error as
message; framework.go RunFilterPlugins wraps it as ``running %q filter plugin: %w``), is
retried with backoff, and other pods keep being bound. Real processes, real HTTP."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from live_harness import RunProcess, api_pods, create, eventually, scheduled_condition
from serve_harness import API_ONLY, Server, pod_manifest

pytestmark = pytest.mark.slow

PLUGINS = Path(__file__).parent / "plugins"
EXPECTED = {"crash": 'running "Misbehaving" filter plugin: ValueError: boom',
            "junk": "running \"Misbehaving\" filter plugin: filter returned 'junk' (str), not a Status or None"}


def config(path: Path, leader_elect: bool) -> Path:
    doc: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"filter": {"enabled": [{"name": "misbehaving:Misbehaving"}]}}}]}
    if not leader_elect:
        doc["leaderElection"] = {"leaderElect": False}
    path.write_text(json.dumps(doc))
    return path


def labelled(name: str, label: str) -> dict[str, Any]:
    m = pod_manifest(name)
    m["metadata"]["labels"] = {label: "yes"}
    return m


def exercise(server: Server) -> None:
    """A crashing pod, a junk pod, then a good pod: the good one binds; the others report."""
    create(server, labelled("crash", "crash"))
    create(server, labelled("junk", "junk"))
    create(server, pod_manifest("fine"))

    def reported() -> dict[str, Any] | None:
        pods = api_pods(server)
        done = pods["fine"]["spec"].get("nodeName") and all(
            (scheduled_condition(pods[n]) or {}).get("reason") == "SchedulerError" for n in EXPECTED)
        return pods if done else None

    pods = eventually(reported, timeout=60, interval=0.2)
    assert pods["fine"]["spec"]["nodeName"] == "node-01"
    for name, message in EXPECTED.items():
        cond = scheduled_condition(pods[name])
        assert cond is not None and (cond["status"], cond["message"]) == ("False", message), cond
        assert not pods[name]["spec"].get("nodeName")
    create(server, pod_manifest("later"))  # the loop is still going
    eventually(lambda: api_pods(server)["later"]["spec"].get("nodeName"), timeout=60, interval=0.2)


def test_run_survives_a_misbehaving_plugin(spawn: Callable[..., Server], tmp_path: Path) -> None:
    server = spawn("--nodes", "1", *API_ONLY)
    run = RunProcess(server, config(tmp_path / "config.yaml", False), "misbehaving", tmp_path, python_path=PLUGINS)
    try:
        run.wait_for("kubesched scheduler running")
        exercise(server)
        assert run.proc.poll() is None
    finally:
        assert run.stop() == 0
    log = (tmp_path / "run-misbehaving.log").read_text()
    assert "Traceback" not in log
    assert "plugin Misbehaving failed in Filter: ValueError: boom" in log


def test_serve_survives_a_misbehaving_plugin(spawn: Callable[..., Server], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(PLUGINS))
    server = spawn("--nodes", "1", "--no-node-agent", "--no-node-lifecycle", "--no-controllers",
                   "--config", str(config(tmp_path / "config.yaml", True)))
    exercise(server)
    assert server.proc is not None and server.proc.poll() is None
    log = (server.data_dir.parent / f"{server.data_dir.name}-stderr.log").read_text()
    assert "Traceback" not in log
