"""Runs the real ``kubesched serve`` process for end-to-end tests, and talks to it with
the real kubectl, the official ``kubernetes`` client, or raw HTTP (stdlib only). Also the
one :func:`eventually` of the cluster and live tests (their helper modules re-export it)."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from base64 import b64decode
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
# The API server alone: no simulated kubelets, node controllers, workload controllers or
# scheduler writing beside the test (those are tested in tests/server/controllers and
# nodes, and tests/live).
API_ONLY = ("--no-node-agent", "--no-node-lifecycle", "--no-controllers", "--no-scheduler")


def eventually(check: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05) -> Any:
    """Poll ``check`` until it returns something truthy and return that; fail with its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not true after {timeout}s: {value!r}")
        time.sleep(interval)


def kubectl_path() -> str:
    path = shutil.which("kubectl")
    if path is None:
        pytest.skip("kubectl is not installed (.ci/run installs Debian's kubernetes-client)")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_process(proc: "subprocess.Popen[str]", pump: threading.Thread, sig: int, timeout: float) -> int:
    """Signal ``proc`` (if still running), wait for it, finish reading its output."""
    if proc.poll() is None:
        proc.send_signal(sig)
    code = proc.wait(timeout)
    pump.join(5)
    assert proc.stdout is not None
    proc.stdout.close()
    return code


class Server:
    """One ``kubesched serve`` process over a data directory; restartable on the same port."""

    def __init__(self, data_dir: Path, *args: str, open_files: int | None = None) -> None:
        self.data_dir = data_dir
        self.args = list(args)
        self.open_files = open_files  # the process's limit on open files (soft and hard), if set
        self.port = free_port()
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.output: list[str] = []

    # -- process --------------------------------------------------------------------------
    def start(self, timeout: float = 30.0) -> "Server":
        cmd = [sys.executable, "-m", "kubesched.cli.main", "serve", "--data-dir", str(self.data_dir),
               "--port", str(self.port), *self.args]
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        with open(self.data_dir.parent / f"{self.data_dir.name}-stderr.log", "a") as log:
            self.proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=log, text=True,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"},
                                         preexec_fn=None if self.open_files is None else self._limit_files)
        lines: queue.Queue[str] = queue.Queue()

        def pump(proc: subprocess.Popen[str]) -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                self.output.append(line)
                lines.put(line)

        self._pump = threading.Thread(target=pump, args=(self.proc,), daemon=True)
        self._pump.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"kubesched serve exited with {self.proc.returncode}: {self.output}")
                continue
            if line.startswith("export KUBECONFIG="):
                # the URL clients use (for a wildcard --host the banner names the bound address)
                self.url = yaml.safe_load(self.kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
                return self
        raise TimeoutError(f"kubesched serve did not start: {self.output}")

    def _limit_files(self) -> None:
        import resource

        assert self.open_files is not None
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.open_files, self.open_files))

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        assert self.proc is not None
        try:
            return stop_process(self.proc, self._pump, sig, timeout)
        except subprocess.TimeoutExpired:
            # still running: SIGABRT makes faulthandler (PYTHONFAULTHANDLER) write every
            # thread's stack to the stderr log, which the failure then shows
            self.proc.send_signal(signal.SIGABRT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
            self._pump.join(5)
            assert self.proc.stdout is not None
            self.proc.stdout.close()
            log = self.data_dir.parent / f"{self.data_dir.name}-stderr.log"
            tail = log.read_text(errors="replace").splitlines()[-120:] if log.exists() else []
            raise AssertionError(f"kubesched serve did not stop within {timeout:.0f}s of signal {sig}; "
                                 "its stderr ends:\n" + "\n".join(tail)) from None

    def stop_if_running(self) -> None:
        """Teardown: a loaded machine may take a while to stop a busy server (graceful
        shutdown of 5 s, then the components and the store), so more time than stop()'s."""
        if self.proc is not None and self.proc.poll() is None:
            self.stop(timeout=60.0)

    def restart(self) -> "Server":
        self.stop()
        return self.start()

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "kubeconfig"

    # -- clients --------------------------------------------------------------------------
    def kubectl(self, *args: str, check: bool = True, input: str | None = None,
                timeout: float = 60) -> subprocess.CompletedProcess[str]:
        # stdin closed unless there is input: a kubeconfig that lacks credentials must fail, not prompt
        out = subprocess.run([kubectl_path(), *args], capture_output=True, text=True, input=input,
                             stdin=subprocess.DEVNULL if input is None else None,
                             timeout=timeout, env={**os.environ, "KUBECONFIG": str(self.kubeconfig)})
        if check and out.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
        return out

    def client(self) -> Any:
        from kubernetes import config

        return config.new_client_from_config(config_file=str(self.kubeconfig))

    def _auth(self) -> tuple[dict[str, str], ssl.SSLContext | None]:
        """The kubeconfig's credentials: a token header and/or a context with its CA and
        client certificate."""
        from kubesched.server.apiserver.kubeconfig import client_credentials

        cfg = yaml.safe_load(self.kubeconfig.read_text())
        return client_credentials(cfg["clusters"][0]["cluster"], cfg["users"][0].get("user") or {})

    def ca_only_context(self) -> ssl.SSLContext | None:
        cfg = yaml.safe_load(self.kubeconfig.read_text())
        ca = cfg["clusters"][0]["cluster"].get("certificate-authority-data")
        return ssl.create_default_context(cadata=b64decode(ca).decode()) if ca else None

    def request(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
                content_type: str = "application/json", headers: dict[str, str] | None = None,
                auth: bool = True, timeout: float = 30) -> tuple[int, Any]:
        """(status, decoded JSON body or text); never raises for HTTP errors. ``auth=False``:
        no token and no client certificate (the server is still verified with the CA)."""
        hdrs, ctx = self._auth()
        if not auth:
            hdrs = {}
            ctx = self.ca_only_context()
        hdrs.update(headers or {})
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        if data is not None:
            hdrs.setdefault("Content-Type", content_type)
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=ctx) as resp:
                status, payload = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            status, payload = exc.code, exc.read()
        try:
            return status, json.loads(payload)
        except ValueError:
            return status, payload.decode(errors="replace")

    def stream(self, path: str, timeout: float = 30) -> Iterator[dict[str, Any]]:
        """The events of a watch request, as they arrive."""
        hdrs, ctx = self._auth()
        req = urllib.request.Request(self.url + path, headers=hdrs)
        with urllib.request.urlopen(req, timeout=timeout, context=ctx) as resp:
            for line in resp:
                if line.strip():
                    yield json.loads(line)


def pod_manifest(name: str, cpu: str = "10m", **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {"app": "load"}},
            "spec": {"containers": [{"name": "c", "image": "registry.example/app:1",
                                     "resources": {"requests": {"cpu": cpu, "memory": "16Mi"}}}]}}


def started(base: Path, *args: str) -> Iterator[Server]:
    """For fixtures: a started server over ``base/data``, stopped afterwards."""
    server = Server(base / "data", *args).start()
    try:
        yield server
    finally:
        server.stop_if_running()


def spawner(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """For fixtures: ``make("--nodes", "3")`` starts a server over ``tmp_path/data<n>``; all
    those still running are stopped afterwards."""
    servers: list[Server] = []

    def make(*args: str) -> Server:
        server = Server(tmp_path / f"data{len(servers)}", *args)
        servers.append(server)
        return server.start()

    yield make
    for server in servers:
        server.stop_if_running()
