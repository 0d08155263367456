"""Helpers of the live end-to-end tests: reading pods from a ``kubesched serve`` process,
waiting for a condition, and running ``kubesched run`` as a real process."""

from __future__ import annotations

import http.client
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from serve_harness import REPO, Server, eventually, stop_process  # noqa: F401  (eventually: re-exported for the tests)


def api_pods(server: Server) -> dict[str, dict[str, Any]]:
    status, body = server.request("GET", "/api/v1/namespaces/default/pods")
    assert status == 200, body
    return {p["metadata"]["name"]: p for p in body["items"]}


def create(server: Server, manifest: dict[str, Any]) -> None:
    status, body = server.request("POST", "/api/v1/namespaces/default/pods", manifest)
    assert status == 201, body


def create_retrying(server: Server, manifest: dict[str, Any]) -> None:
    """Create a pod while the API server may be restarting: retry dropped connections; a 409
    means it was created before the connection dropped."""
    for _ in range(100):
        try:
            status, _ = server.request("POST", "/api/v1/namespaces/default/pods", manifest, timeout=10)
        except (OSError, http.client.HTTPException):  # incl. a reply cut short by the restart
            time.sleep(0.1)
            continue
        if status in (201, 409):
            return
        time.sleep(0.1)
    raise AssertionError(f"could not create {manifest['metadata']['name']}")


def cpu_millis(pod: dict[str, Any]) -> int:
    q = pod["spec"]["containers"][0]["resources"]["requests"]["cpu"]
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def scheduled_condition(pod: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in pod["status"].get("conditions") or () if c["type"] == "PodScheduled"), None)


def settled(pods: dict[str, dict[str, Any]]) -> bool:
    """Every pod bound, or reported unschedulable."""
    return all(p["spec"].get("nodeName") or (scheduled_condition(p) or {}).get("reason") == "Unschedulable"
               for p in pods.values())


def kubesched_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "kubesched.cli.main", *args]


def write_config(path: Path, scheduler_name: str = "default-scheduler", **leader_election: Any) -> Path:
    """A KubeSchedulerConfiguration with one profile; ``leader_election`` fields as given
    (``leaderElect=False`` to turn it off), the lease kube-system/kubesched."""
    le = {"resourceName": "kubesched", **leader_election}
    lines = ["apiVersion: kubescheduler.config.k8s.io/v1", "kind: KubeSchedulerConfiguration",
             "clientConnection: {qps: 500, burst: 500}", "leaderElection:"]
    lines += [f"  {k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in le.items()]
    lines += ["profiles:", f"- schedulerName: {scheduler_name}"]
    path.write_text("\n".join(lines) + "\n")
    return path


class RunProcess:
    """One ``kubesched run`` process (endpoints on a free port), its output read as it comes."""

    def __init__(self, server: Server, config: Path, identity: str = "", log_dir: Path | None = None,
                 python_path: Path | None = None, verbose: bool = False, kubeconfig: Path | None = None,
                 extra: tuple[str, ...] = ()) -> None:
        """``python_path``: a directory of custom plugins the configuration names by import path;
        ``verbose``: log at INFO (``-v``: every successful binding is logged) into :attr:`log_path`;
        ``kubeconfig``: another than the server's; ``extra``: more flags (after the defaults)."""
        args = [*(["-v"] if verbose else []), "run", "--kubeconfig", str(kubeconfig or server.kubeconfig),
                "--config", str(config), "--port", "0", "--bind-address", "127.0.0.1", *extra]
        if identity:
            args += ["--identity", identity]
        self.identity = identity
        self.log_path = (log_dir or config.parent) / f"run-{identity or id(self)}.log"
        stderr = open(self.log_path, "a")
        self.proc = subprocess.Popen(kubesched_cmd(*args), cwd=REPO, stdout=subprocess.PIPE, stderr=stderr,
                                     text=True, env={**os.environ, "PYTHONUNBUFFERED": "1",
                                                     **({"PYTHONPATH": os.pathsep.join(
                                                         filter(None, (str(python_path), os.environ.get("PYTHONPATH"))))}
                                                        if python_path else {})})
        stderr.close()
        self.output: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        self._pump = threading.Thread(target=self._read, daemon=True)
        self._pump.start()
        self.url = self.wait_for(r"serving .* on (https?://\S+)").group(1)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line)
            self._lines.put(line)

    def wait_for(self, pattern: str, timeout: float = 30.0) -> re.Match[str]:
        """The first line of output (from the start) matching ``pattern``."""
        deadline = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < deadline:
            for line in self.output[seen:]:
                seen += 1
                m = re.search(pattern, line)
                if m:
                    return m
            if self.proc.poll() is not None and seen >= len(self.output):
                raise AssertionError(f"kubesched run exited {self.proc.returncode}: {self.output}")
            time.sleep(0.05)
        raise AssertionError(f"no line matching {pattern!r} after {timeout}s: {self.output}")

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def metric(self, metric: str, **labels: str) -> float:
        """The sum of the samples of ``metric`` whose labels include ``labels`` (0 if none)."""
        status, text = self.get("/metrics")
        assert status == 200
        total = 0.0
        for line in text.splitlines():
            m = re.match(r"(\w+)(?:\{(.*)\})? (\S+)$", line)
            if not m or m.group(1) != metric:
                continue
            have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
            if all(have.get(k) == v for k, v in labels.items()):
                total += float(m.group(3))
        return total

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        return stop_process(self.proc, self._pump, sig, timeout)
