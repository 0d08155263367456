"""``kubesched --version`` names the installed distribution's version, the one pyproject.toml
declares."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_version_flag_prints_the_project_version() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    out = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "--version"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"kubesched {declared}"


def test_json_documents_name_the_version(tmp_path: Path) -> None:
    """simulate's, explain's and capacity's ``-o json`` documents carry ``version``: the one
    pyproject.toml declares."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    cluster = tmp_path / "c.yaml"
    cluster.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                       "status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n---\n"
                       "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
                       "spec: {containers: [{name: c, image: x}]}\n")
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: q, namespace: default}\n"
                   "spec: {containers: [{name: c, image: x}]}\n")
    for args in (["simulate", "-f", str(cluster), "-o", "json"],
                 ["explain", "-f", str(cluster), "default/p", "-o", "json"],
                 ["capacity", "fit", "-f", str(cluster), "--pod", str(pod), "-o", "json", "--max", "1"]):
        out = subprocess.run([sys.executable, "-m", "kubesched.cli.main", *args, "--no-progress"],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["version"] == declared, args
