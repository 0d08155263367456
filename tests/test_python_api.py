"""The Python API: ``kubesched.simulate`` gives the document ``kubesched simulate -o json``
prints, from files or objects; ``import kubesched`` stays cheap (nothing heavy until used)."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import kubesched
from kubesched.api.errors import KubeschedError
from kubesched.cli.main import main

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}}


def pod(name: str, cpu: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}}


def test_result_is_the_simulate_json_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all([NODE, pod("a", "1500m"), pod("b", "1")]))
    assert main(["simulate", "-f", str(f), "-o", "json", "--seed", "3"]) == 0
    printed = json.loads(capsys.readouterr().out)
    res = kubesched.simulate(f, seed=3)
    assert res.to_json() == printed
    assert kubesched.simulate(NODE, pod("a", "1500m"), pod("b", "1"), seed=3).to_json() == printed
    assert [(p.namespace, p.name, p.status, p.node) for p in res.pods] == [
        ("default", "a", "Scheduled", "n1"), ("default", "b", "Unschedulable", "")]
    assert "Insufficient cpu" in res.pod("b").message
    assert res.table().column("status") == ["Scheduled", "Unschedulable"]


def test_explain_and_errors() -> None:
    why = kubesched.explain("default/b", NODE, pod("a", "1500m"), pod("b", "1"))
    assert why.to_json()["attempts"][0]["result"] == "Unschedulable"
    with pytest.raises(KubeschedError, match="no such pod in the given manifests"):
        kubesched.explain("default/zz", NODE, pod("a", "1"))
    with pytest.raises(KubeschedError, match="tie_break"):
        kubesched.simulate(NODE, tie_break="lowest")
    with pytest.raises(KubeschedError, match="spec.containers"):
        kubesched.simulate(NODE, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {}})


def test_import_is_lazy() -> None:
    code = ("import sys, kubesched; heavy = [m for m in ('numpy', 'yaml', 'kubesched.sim', 'kubesched.experiment') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
