"""A ``kubesched record`` process for the end-to-end tests: started against a serve's
kubeconfig, its stderr collected, stopped with SIGINT as Ctrl-C stops it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from live_harness import eventually
from serve_harness import REPO, Server


class Recorder:
    def __init__(self, server: Server, out: Path, *args: str) -> None:
        self.out = out
        self.lines: list[str] = []
        self.proc = subprocess.Popen([sys.executable, "-m", "kubesched.cli.main", "record", "--kubeconfig",
                                      str(server.kubeconfig), "--output-file", str(out), *args], cwd=REPO,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self._pump = threading.Thread(target=self._read, daemon=True)
        self._pump.start()
        eventually(lambda: any(line.startswith("record: starting state listed") for line in self.lines)
                   or self.proc.poll() is not None, timeout=60)
        assert self.proc.poll() is None, self.lines

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(60)
        self._close()
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._close()

    def _close(self) -> None:
        self._pump.join(5)
        if self.proc.stderr is not None and not self.proc.stderr.closed:
            self.proc.stderr.close()


def replay(recording: Path, *args: str) -> dict[str, Any]:
    res = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "replay", "--trace", str(recording),
                          "-o", "json", *args], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    doc: dict[str, Any] = json.loads(res.stdout)
    return doc


def bound_nodes(server: Server, namespace: str = "default") -> dict[str, str]:
    """pod namespace/name -> node, of the bound pods."""
    status, body = server.request("GET", f"/api/v1/namespaces/{namespace}/pods")
    assert status == 200, body
    return {f"{namespace}/{p['metadata']['name']}": p["spec"]["nodeName"] for p in body["items"]
            if p["spec"].get("nodeName")}
