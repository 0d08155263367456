"""What the web UI's tests share besides fixtures (a module of its own: ``conftest`` is
not importable by name once several test folders have one)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server" / "e2e"))

from serve_harness import Server, eventually  # noqa: E402

# two nodes of 4 cpu and 8Gi: small enough to compute every score by hand
TINY = ("--nodes", "2", "--node-cpu", "4", "--node-memory", "8Gi")


def scheduling(server: Server) -> Server:
    """``server`` once its scheduler has synced and runs."""
    eventually(lambda: any("scheduler running" in line for line in server.output), timeout=60)
    return server
