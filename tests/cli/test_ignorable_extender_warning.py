"""An ignorable extender that fails is skipped, as upstream's findNodesThatPassExtenders
skips it (pkg/scheduler/schedule_one.go: ``if extender.IsIgnorable() { klog.InfoS("Skipping
extender as it returned error and has ignorable flag set" ...) }``), and the user is told
which extender failed: a warning on stderr naming it, without -v."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends: nothing listens there


def test_a_failing_ignorable_extender_is_named_in_a_warning(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/scheduler"
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      f"extenders:\n- urlPrefix: {url}\n  filterVerb: filter\n  ignorable: true\n")
    cluster = tmp_path / "c.yaml"
    cluster.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                       "status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n---\n"
                       "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
                       "spec: {containers: [{name: c, image: x}]}\n")
    out = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "simulate", "-f", str(cluster), "--config",
                          str(config), "--no-progress"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "default/p" in out.stdout and "Scheduled" in out.stdout  # the extender was skipped, not fatal
    warnings = [line for line in out.stderr.splitlines() if line.startswith("WARNING")]
    assert any(url in line and "ignorable" in line and "default/p" in line for line in warnings), out.stderr
