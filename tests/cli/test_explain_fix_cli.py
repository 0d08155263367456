"""``kubesched explain -f CLUSTER NS/POD --fix`` end to end on examples/full-zone.yaml.

Worked out by hand (upstream v1.34.1, ``podtopologyspread/filtering.go`` and
``noderesources/fit.go``): three 2-cpu nodes, one per zone, each full with two 1-cpu pods
(web: 2 in zone-a, 2 in zone-b, 1 in zone-c; one batch pod in zone-c). web-6 (1 cpu,
maxSkew 1 on the zone) is rejected by NodeResourcesFit everywhere (upstream's verdict) and,
beyond it, by PodTopologySpread in zone-a and zone-b (2 + 1 - 1 = 2 > 1). A node like
zone-c-1 fixes it touching nobody (ranked first); scaling the batch ReplicaSet (1 replica)
to 0 deletes its one pod and frees zone-c-1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.cli.main import main

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "full-zone.yaml")


def test_json_has_blockers_and_verified_fixes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "-f", EXAMPLE, "web/web-6", "--fix", "-o", "json", "--no-progress"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["pod"]["status"] == "Unschedulable"
    nodes = doc["blockers"]["nodes"]
    assert [b["plugin"] for b in nodes["zone-a-1"]] == ["NodeResourcesFit", "PodTopologySpread"]
    assert nodes["zone-a-1"][1]["beyondUpstream"] is True
    assert [b["plugin"] for b in nodes["zone-c-1"]] == ["NodeResourcesFit"]
    fixes = doc["fixes"]
    assert [f["kind"] for f in fixes] == ["add-node", "scale-down"]
    for f in fixes:
        assert {"kind", "target", "patch", "node", "verified", "why"} <= set(f) and f["verified"] is True
    assert fixes[0]["target"] == "cluster" and fixes[0]["nodeGroup"] == "zone-c-1"
    assert fixes[0]["patch"]["metadata"]["labels"]["topology.kubernetes.io/zone"] == "zone-c"
    assert fixes[1]["target"] == "workload/ReplicaSet/web/batch" and fixes[1]["patch"] == {"spec": {"replicas": 0}}
    assert fixes[1]["disturbs"] == ["web/batch-x7k2p"] and fixes[1]["node"] == "zone-c-1"


def test_tables(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "-f", EXAMPLE, "web/web-6", "--fix", "--fix-limit", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "Every blocker" in out and "beyond" in out and "may go to zone-c" in out
    assert "What would fix it (1 verified" in out and "1. add-node cluster" in out and "scale-down" not in out


def test_bad_fix_limit(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "-f", EXAMPLE, "web/web-6", "--fix", "--fix-limit", "0"]) == 2
    err = capsys.readouterr().err
    assert err == "kubesched: error: explain --fix-limit: must be at least 1, got 0\n"
