"""``pip install .`` gives a working ``kubesched``: the package built as a wheel, installed
into a fresh virtual environment, runs ``kubesched --version`` and a simulation.

The wheel is built from a copy of the tree (``pip wheel --no-deps --no-build-isolation``: the
build backend is the test environment's setuptools, so no network is needed). The fresh
venv gets the wheel alone (``--no-deps``); its dependencies are borrowed from the running
environment through a ``.pth`` line that puts this environment's site-packages after the
venv's own. A line in a ``.pth`` file adds a directory to ``sys.path`` without running the
``.pth`` files inside it, so the source tree's editable install is not seen: the test checks
that ``kubesched`` is imported from the venv.

Expected values: the version is ``pyproject.toml``'s; the placements are those the README's
simulate tour shows for ``examples/mixed-cluster.yaml`` (checked against that file by hand:
``ml/train-big`` asks for more GPUs than any node has).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _clean_env() -> dict[str, str]:
    """The environment without what points Python at the source tree (pip would take the
    tree's kubesched for an installed one)."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def _run(cmd: list[str], cwd: Path) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{cmd}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _build_wheel(tmp: Path) -> Path:
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "kubesched", src / "kubesched",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
          "--quiet", "-w", str(out), str(src)], cwd=tmp)
    wheels = list(out.glob("kubesched-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _fresh_venv(tmp: Path, wheel: Path) -> Path:
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp)
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
          "--no-deps", "--no-index", str(wheel)], cwd=tmp)
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     cwd=tmp).strip())
    (site / "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def test_wheel_installs_a_working_kubesched(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    venv = _fresh_venv(tmp_path, wheel)
    kubesched = str(venv / "bin" / "kubesched")
    work = tmp_path / "elsewhere"
    work.mkdir()
    where = _run([str(venv / "bin" / "python"), "-c", "import kubesched; print(kubesched.__file__)"], cwd=work)
    assert where.startswith(str(venv)), where
    static = Path(where.strip()).parent / "ui" / "static"
    assert any(static.glob("*.js")), f"the web UI's files are missing from the wheel ({static})"
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert _run([kubesched, "--version"], cwd=work).strip() == f"kubesched {version}"
    shutil.copy2(ROOT / "examples" / "mixed-cluster.yaml", work / "cluster.yaml")
    out = _run([kubesched, "simulate", "-f", "cluster.yaml", "--tie-break", "name"], cwd=work)
    assert "scheduled: 4, unschedulable: 1, gated: 1" in out
    assert "ml/train-big: 0/6 nodes are available" in out
