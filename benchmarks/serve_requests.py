"""CPU per hot write in a real ``kubesched serve``, over HTTP: what the API server's
process spends on each of the three writes one pod costs in ``bench --serve`` (the pod's
POST, the scheduler's binding POST, its events.k8s.io/v1 Scheduled event), request layer
and registry together. No scheduler, no node agent, no controllers run
in the server, so its CPU during a phase is that phase's requests (and their fsyncs).

Run: ``.venv/bin/python benchmarks/serve_requests.py [N] [CLIENTS]`` (default 2000 pods,
4 keep-alive clients) from a tree's root with that tree's python; compare trees by
running each alternately. Prints serve CPU microseconds per request for each phase.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubesched.cli.servebench import free_port, pod

HEADERS = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "kubesched/0.1.0"}


def start(data: Path, port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-m", "kubesched.cli.main", "serve", "--data-dir", str(data),
                             "--port", str(port), "--nodes", "1", "--no-scheduler", "--no-node-agent",
                             "--no-controllers", "--no-ui", "--no-node-lifecycle"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/readyz")
            if c.getresponse().status == 200:
                c.close()
                return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("serve did not start")


def cpu(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of process ``pid`` (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def phase(port: int, pid: int, n: int, clients: int, make: Callable[[int], tuple[str, dict[str, Any]]]) -> tuple[float, float]:
    """POST ``make(i)`` for i in 0..n from ``clients`` threads; serve's user and system CPU
    µs per request."""
    bodies = [make(i) for i in range(n)]
    errors: list[str] = []

    def client(k: int) -> None:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for path, body in bodies[k::clients]:
            c.request("POST", path, body=json.dumps(body).encode(), headers=HEADERS)
            r = c.getresponse()
            data = r.read()
            if r.status != 201:
                errors.append(f"{r.status} {data[:200]!r}")
        c.close()

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    before = cpu(pid)
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after = cpu(pid)
    if errors:
        raise SystemExit(f"{len(errors)} errors, first: {errors[0]}")
    return (after[0] - before[0]) / n * 1e6, (after[1] - before[1]) / n * 1e6


def event(i: int) -> tuple[str, dict[str, Any]]:  # as cluster/kube/events.py writes Scheduled
    ref = {"kind": "Pod", "namespace": "default", "name": f"p{i}", "uid": f"u{i}", "apiVersion": "v1",
           "resourceVersion": "1"}
    return "/apis/events.k8s.io/v1/namespaces/default/events", {
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": f"p{i}.{i:x}", "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-host", "action": "Binding", "reason": "Scheduled",
        "regarding": ref, "note": f"Successfully assigned default/p{i} to node-0", "type": "Normal"}


def main(n: int, clients: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        port = free_port()
        proc = start(Path(d) / "data", port)
        try:
            time.sleep(1.0)
            phases = {
                "create": phase(port, proc.pid, n, clients,
                                   lambda i: ("/api/v1/namespaces/default/pods", pod(f"p{i}"))),
                "bind": phase(port, proc.pid, n, clients, lambda i: (
                    f"/api/v1/namespaces/default/pods/p{i}/binding",
                    {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": f"p{i}", "namespace": "default"},
                     "target": {"kind": "Node", "name": "node-0"}})),
                "event": phase(port, proc.pid, n, clients, event),
            }
            out: dict[str, Any] = {f"{k}_us": round(u + s) for k, (u, s) in phases.items()}
            out |= {f"{k}_sys_us": round(s) for k, (u, s) in phases.items()}
            out["per_pod_us"] = sum(v for k, v in out.items() if not k.endswith("sys_us"))
            print(json.dumps(out | {"requests_per_phase": n, "clients": clients}))
        finally:
            proc.terminate()
            proc.wait(30)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000, int(sys.argv[2]) if len(sys.argv) > 2 else 4)
