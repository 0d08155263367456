"""``kubesched serve --sync --kubeconfig LIVE``: a second serve follows a "live" serve
(with its scheduler, controllers and kubelets) read-only, as the real kubectl shows: the
same nodes and pods on the same nodes at the start, after a scale-up, a deleted pod the
ReplicaSet replaces and a cordoned node; a pod tried in the mirror is placed by the
mirror's own scheduler and never reaches the live cluster.

Expected values are what the live serve shows through kubectl at each step.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from live_harness import eventually
from serve_harness import REPO, Server

pytestmark = pytest.mark.slow


def placements(server: Server) -> dict[str, str]:
    items = json.loads(server.kubectl("get", "pods", "-o", "json").stdout)["items"]
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in items}


def nodes(server: Server) -> dict[str, Any]:
    items = json.loads(server.kubectl("get", "nodes", "-o", "json").stdout)["items"]
    return {n["metadata"]["name"]: (n["spec"].get("unschedulable", False), n["status"]["allocatable"]) for n in items}


def all_bound(server: Server, n: int) -> dict[str, str] | None:
    got = placements(server)
    return got if len(got) == n and all(got.values()) else None


def test_serve_sync_follows_a_live_cluster(spawn: Callable[..., Server], tmp_path: Path) -> None:
    live = spawn("--nodes", "3")
    live.kubectl("create", "deployment", "web", "--image=registry.example/web:1", "--replicas=3")
    start = eventually(lambda: all_bound(live, 3))
    mirror = spawn("--sync", "--kubeconfig", str(live.kubeconfig))
    eventually(lambda: any(line.startswith("--sync: following ") for line in mirror.output))
    assert placements(mirror) == start
    assert nodes(mirror) == nodes(live)

    live.kubectl("scale", "deployment", "web", "--replicas=5")
    live.kubectl("cordon", "node-01")
    victim = sorted(start)[0]
    live.kubectl("delete", "pod", victim, "--wait=false")
    now = eventually(lambda: (lambda p: p if p is not None and victim not in p else None)(all_bound(live, 5)))
    eventually(lambda: placements(mirror) == now)
    eventually(lambda: nodes(mirror) == nodes(live))
    assert nodes(mirror)["node-01"][0] is True

    mirror.kubectl("run", "tryout", "--image=registry.example/web:1")
    assert eventually(lambda: placements(mirror).get("tryout"))
    assert "tryout" not in placements(live)


def test_serve_sync_errors_are_one_line(tmp_path: Path) -> None:
    def serve(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kubesched.cli.main", "serve", "--data-dir", str(tmp_path / "d"),
                               "--port", "0", *args], cwd=REPO, capture_output=True, text=True, timeout=120)

    res = serve("--sync", "--nodes", "3")
    assert res.returncode == 2
    assert res.stderr == "kubesched: error: --sync follows a live cluster: it excludes --from, --nodes and --node-pool\n"
    res = serve("--kubeconfig", "x")
    assert res.stderr == "kubesched: error: --kubeconfig and --context are for --sync (serve writes its own kubeconfig)\n"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:9"}}],
        "users": [{"name": "u", "user": {}}], "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    res = serve("--sync", "--kubeconfig", str(kubeconfig))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.startswith("kubesched: error: --sync: cannot reach the API server at http://127.0.0.1:9")
