"""``kubesched run --ui``: the web UI beside run's endpoints, read-only, over a real
``kubesched serve`` (the cluster) and a real ``kubesched run`` process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from serve_harness import REPO, eventually, started

pytestmark = pytest.mark.slow

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles:
- schedulerName: kubesched
"""


def get(url: str, method: str = "GET", accept: str = "application/json") -> tuple[int, str]:
    req = urllib.request.Request(url, method=method, headers={"Accept": accept}, data=b"x" if method in ("POST", "PUT") else None)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_run_ui_is_read_only_and_shows_the_cluster(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    for server in started(tmp_path, "--nodes", "3", "--no-scheduler"):
        proc = subprocess.Popen([sys.executable, "-m", "kubesched.cli.main", "run", "--kubeconfig",
                                 str(server.kubeconfig), "--config", str(config), "--port", "0",
                                 "--bind-address", "127.0.0.1", "--ui"],
                                cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            url = _ui_url(proc)
            code, html = get(url, accept="text/html")
            assert code == 200 and "/ui/static/app.js" in html
            assert json.loads(get(url + "ui/api/mode")[1]) == {"readOnly": True, "scheduler": True,
                                                                "profiles": ["kubesched"]}
            nodes = eventually(lambda: (p := json.loads(get(url + "ui/api/nodes?limit=2")[1]))["total"] == 3 and p)
            assert [n["name"] for n in nodes["items"]] == ["node-01", "node-02"]
            # no writes: the routes do not exist in run
            assert get(url + "ui/api/apply", method="POST")[0] == 404
            code, cfg = get(url + "ui/api/config")
            assert code == 200
            cfg = json.loads(cfg)
            assert cfg["readOnly"] is True and cfg["yaml"] == CONFIG and cfg["profiles"] == ["kubesched"]
            # upstream's default score plugins and weights (pkg/scheduler/apis/config/v1/default_plugins.go;
            # VolumeBinding is listed there without a weight, so it gets the default, 1)
            assert cfg["effective"]["kubesched"]["scoreWeights"] == {
                "TaintToleration": 3, "NodeAffinity": 2, "PodTopologySpread": 2, "InterPodAffinity": 2,
                "NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1,
                "VolumeBinding": 1}
            assert get(url + "ui/api/config", method="PUT")[0] == 405
            assert get(url + "ui/api/events")[0] == 200
        finally:
            proc.terminate()
            proc.wait(30)
            assert proc.stdout is not None
            proc.stdout.close()


def test_run_ui_needs_the_port(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    out = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "run", "--kubeconfig", str(tmp_path / "none"),
                          "--config", str(config), "--port", "-1", "--ui"], cwd=REPO, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode != 0 and "--ui needs --port" in out.stderr and "Traceback" not in out.stderr


def _ui_url(proc: "subprocess.Popen[str]", timeout: float = 60.0) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    for line in proc.stdout:
        m = re.search(r"web UI \(read-only\): (http://\S+)", line)
        if m:
            return m.group(1)
        if time.monotonic() > deadline:
            break
    raise AssertionError(f"kubesched run printed no UI address (exit {proc.poll()})")


