"""Every blocker and the verified fixes of a pending pod, asked of the scheduler inside a real
``kubesched serve``: ``/debug/explain/<ns>/<pod>`` (``blockers``), ``?fixes=N`` and
``kubesched explain --kubeconfig --fix``.

Hand computation: serve's default nodes have 8 cpu allocatable (``kubesched serve --help``)
and nothing else runs here, so a pod asking 20 cpu is rejected by NodeResourcesFit on every
node with 8 cpu free (upstream ``noderesources/fit.go``: request <= allocatable - requested),
and asking 8 cpu instead is enough on any of them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from live_harness import eventually
from serve_harness import REPO, Server, pod_manifest

pytestmark = pytest.mark.slow

SCHEDULER_ONLY = ("--no-node-agent", "--no-node-lifecycle", "--no-controllers")


def test_blockers_and_fixes_of_serve(spawn: Callable[..., Server]) -> None:
    server = spawn("--nodes", "3", *SCHEDULER_ONLY)
    eventually(lambda: any("kubesched scheduler running" in line for line in server.output))
    server.kubectl("apply", "-f", "-", input=json.dumps(pod_manifest("big", cpu="20")))

    def explained() -> Any:
        status, doc = server.request("GET", "/debug/explain/default/big")
        return doc if status == 200 and "blockers" in doc else None
    doc = eventually(explained, timeout=60)
    blockers = doc["blockers"]
    assert blockers["blockedNodes"] == 3 and blockers["byPlugin"] == {"NodeResourcesFit": 3}
    for bs in blockers["nodes"].values():
        cpu = bs[0]["evidence"]["resources"]["cpu"]
        assert (cpu["requested"], cpu["free"], cpu["short"]) == ("20", "8", "12")

    status, text = server.request("GET", "/debug/explain/default/big?output=text")
    assert status == 200 and "Every blocker" in text and "cpu: asks 20, 8 free of 8" in text

    status, found = server.request("GET", "/debug/explain/default/big?fixes=5")
    assert status == 200, found
    lower = next(f for f in found["fixes"] if f["kind"] == "lower-request")
    assert lower["verified"] is True and lower["node"] in blockers["nodes"]
    assert lower["patch"] == [{"op": "add", "path": "/spec/containers/0/resources/requests/cpu", "value": "8"}]
    status, bad = server.request("GET", "/debug/explain/default/big?fixes=x")
    assert status == 400 and "positive integer" in bad["error"]

    out = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "explain", "--kubeconfig",
                          str(server.kubeconfig), "default/big", "--fix"], cwd=REPO, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Every blocker" in out.stdout and "What would fix it" in out.stdout and "lower-request" in out.stdout
