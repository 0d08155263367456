"""``kubesched record``'s argument errors and an unreachable cluster: one line each, exit 2,
no file left behind; the duration syntax (Go's h, m, s units, as ``kubectl --request-timeout``)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubesched.api.errors import KubeschedError
from kubesched.cli.record import parse_duration

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("text,seconds", [("90", 90.0), ("90s", 90.0), ("5m", 300.0), ("1h30m", 5400.0),
                                          ("1.5h", 5400.0), ("2m30s", 150.0)])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "0", "-5", "5x", "m", "1d"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(KubeschedError, match="^--duration: "):
        parse_duration(text)


def record(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubesched.cli.main", "record", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_record_errors_are_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
        "users": [{"name": "u", "user": {}}], "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    out = tmp_path / "rec.jsonl"
    res = record("--kubeconfig", str(kubeconfig), "--output-file", str(out))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.startswith(f"kubesched: error: record: cannot reach the API server at http://127.0.0.1:{port}")
    assert len(res.stderr.splitlines()) == 1 and not out.exists()
    res = record("--kubeconfig", str(kubeconfig), "--output-file", str(tmp_path / "rec.txt"))
    assert res.returncode == 2
    assert res.stderr == f"kubesched: error: record --output-file {tmp_path / 'rec.txt'}: the name must end in .jsonl or .jsonl.gz\n"
    res = record("--kubeconfig", str(kubeconfig), "--output-file", str(out), "--duration", "soon")
    assert res.stderr == "kubesched: error: --duration: 'soon' is not a duration (e.g. 90, 90s, 5m, 1h30m)\n"
