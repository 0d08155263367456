"""Helpers of the end-to-end tests of the controllers, the simulated nodes and the
scheduler inside the real ``kubesched serve`` process (which binds the pods): the
``kubesched node`` command, and polling through kubectl's JSON output (:func:`eventually`
is serve_harness's, re-exported)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from serve_harness import REPO, Server, eventually  # noqa: F401  (eventually: re-exported for the tests)

# every simulated-node timing short, so the tests take seconds, not minutes
FAST = ("--pod-start-delay", "0.3", "--pod-stop-delay", "0.2", "--node-heartbeat-interval", "0.5",
        "--node-monitor-period", "0.3", "--node-monitor-grace-period", "2", "--pod-gc-quarantine", "1",
        "--controller-seed", "11")


def get_json(server: Server, *args: str) -> Any:
    return json.loads(server.kubectl("get", *args, "-o", "json").stdout)


def node_cmd(server: Server, action: str, *names: str) -> str:
    out = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "node", action, *names,
                          "--data-dir", str(server.data_dir)], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def ready(node: dict[str, Any]) -> str:
    return next((c["status"] for c in node["status"].get("conditions") or [] if c["type"] == "Ready"), "")

