"""Progress bars (cli/progress.py): on stderr with ``--progress``, never in captured output
otherwise, and never changing what a command prints on stdout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kubesched.cli import progress

REPO = Path(__file__).resolve().parents[2]
CLUSTER = str(REPO / "examples" / "whatif" / "cluster.yaml")


def kubesched(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubesched.cli.main", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def test_simulate_progress_only_when_asked() -> None:
    plain = kubesched("simulate", "-f", CLUSTER, "-o", "json")
    shown = kubesched("simulate", "-f", CLUSTER, "-o", "json", "--progress")
    assert plain.returncode == shown.returncode == 0
    assert plain.stderr == ""  # not a terminal: no bar
    assert shown.stdout == plain.stdout  # the bar is on stderr only
    assert "scheduling (5 attempts)" in shown.stderr and "5/5" in shown.stderr
    assert kubesched("simulate", "-f", CLUSTER, "--no-progress").stderr == ""


def test_loading_progress_comes_first() -> None:
    """Loading has its own bar (kubesched.cli.loadargs), before scheduling's."""
    shown = kubesched("simulate", "-f", CLUSTER, "-o", "json", "--progress")
    assert shown.returncode == 0, shown.stderr
    assert shown.stderr.index("loading") < shown.stderr.index("scheduling")


def test_compare_progress() -> None:
    res = kubesched("compare", "-f", CLUSTER, "--config", "default", "--config", "default", "--progress", "-o", "json")
    assert res.returncode == 0, res.stderr
    assert "compare: default" in res.stderr and "compare: default-2" in res.stderr


def test_auto_mode_waits_for_the_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    with progress.Bar("work", 10, progress.AUTO, delay=2.0) as bar:
        bar.update(1)
        assert bar._progress is None  # 0 s in: nothing shown
        now[0] += 2.5
        bar.update(2)
        assert bar._progress is not None  # past the delay: shown
    assert bar._progress is None  # stopped (and, transient, erased) at the end
    with progress.Bar("work", 10, progress.NEVER) as bar:
        now[0] += 10
        bar.update(5)
        assert bar._progress is None
