"""``kubesched extender`` processes for the tests: started on a free loopback port with
tests/live/plugins importable (LabelGuard), waited for until ``/healthz`` answers ``ok``."""

from __future__ import annotations

import os
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

PLUGINS = Path(__file__).parent / "plugins"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_extender(config: Path, *extra: str, port: int = 0, timeout: float = 60.0,
                   context: ssl.SSLContext | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """A ``kubesched extender`` process serving ``config`` on ``port`` (0: a free one),
    once ``/healthz`` says ``ok`` (with a kubeconfig: its cache has synced)."""
    port = port or free_port()
    env = {**os.environ, "PYTHONPATH": str(PLUGINS)}
    proc = subprocess.Popen([sys.executable, "-m", "kubesched.cli.main", "extender", "--config", str(config),
                             "--port", str(port), *extra], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    scheme = "https" if "--tls-cert-file" in extra else "http"
    url = f"{scheme}://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2, context=context) as r:
                if r.read() == b"ok":
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"kubesched extender did not start (exit {proc.poll()})")
        time.sleep(0.1)
    return proc, url
