"""``kubesched simulate`` on malformed manifests (issue 11 §2): every manifest either
simulates (exit 0) or is refused with exit 2 and exactly one line
``kubesched: error: FILE: ...`` naming the file, never a traceback.

The fuzz calls the CLI's ``main`` in-process for speed; two cases run the real command."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from manifest_fuzz import base_objects, manifest_files

from kubesched.cli.main import main


def simulate(path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["simulate", "-f", str(path)])
    return rc, out.getvalue(), err.getvalue()


def assert_clean_outcome(path: Path, rc: int, stderr: str) -> None:
    assert "Traceback" not in stderr
    if rc == 0:
        return
    assert rc == 2, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"kubesched: error: {path}: "), stderr


def test_the_unmutated_manifest_simulates(tmp_path: Path) -> None:
    """The fuzz's starting point is valid (else every case would stop at the same error)."""
    path = tmp_path / "base.yaml"
    path.write_text(yaml.safe_dump_all(base_objects(), sort_keys=False))
    rc, out, stderr = simulate(path)
    assert (rc, stderr) == (0, "")
    assert "team/web" in out


@pytest.mark.slow
@settings(max_examples=250, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=manifest_files())
def test_simulate_refuses_malformed_manifests_in_one_line(tmp_path: Path, case: tuple[str, bytes]) -> None:
    suffix, data = case
    path = tmp_path / f"m{suffix}"
    path.write_bytes(data)
    rc, _, stderr = simulate(path)
    assert_clean_outcome(path, rc, stderr)


TOLERATION_VALUE_5 = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: nginx}]
  tolerations: [{key: k, operator: Equal, value: 5}]
"""


@pytest.mark.parametrize("text,expected", [
    # the reproduction; the message is Go's UnmarshalTypeError as kube-apiserver writes it
    (TOLERATION_VALUE_5, "Pod default/p: spec.tolerations[0].value: json: cannot unmarshal number into Go struct "
                         "field Toleration.spec.tolerations.value of type string"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}], priority: .inf}\n",
     "invalid YAML at line 4, column 53: .inf is not a JSON number (JSON has no Infinity or NaN)"),
], ids=["toleration-value-number", "non-finite"])
def test_real_command_prints_one_line_and_exits_2(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "simulate", "-f", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr == f"kubesched: error: {path}: {expected}\n"
