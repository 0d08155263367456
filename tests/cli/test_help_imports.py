"""``kubesched --help`` builds the whole argument parser; it must not import the scheduler,
the server or NumPy to do so (they are imported by the command that runs). A structural
check of what the parser pulls in, instead of a timed assertion."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("numpy", "kubesched.server.store", "kubesched.server.apiserver.app", "kubesched.explanation.store",
         "kubesched.scheduler.scheduler", "kubesched.sim.driver", "starlette", "uvicorn", "kubernetes",
         "importlib.metadata")


def test_building_the_parser_imports_nothing_heavy() -> None:
    code = ("import json, sys\n"
            "from kubesched.cli.main import build_parser\n"
            "build_parser()\n"
            f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []
