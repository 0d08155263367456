"""``kubesched bench --serve``: end-to-end throughput of ``kubesched serve``, and
durability right after the burst.

Why this exists: the in-process benchmarks (``kubesched bench --workload``) measure the
scheduling loop alone; this one measures the whole cluster on one machine (API server,
SQLite store, the scheduler over HTTP, simulated kubelets) as a user of ``kubectl`` sees it
(the end-to-end figure of the performance page):

1. starts a real ``kubesched serve --nodes N`` (default 1,000) in a fresh data directory,
   with its scheduler in a child process (``serve --scheduler-process``) unless
   ``--serve-in-process``, and waits until the scheduler runs and every node is Ready;
2. opens a watch on pods, then POSTs ``--pods`` pods (default 5,000) from ``--clients``
   threads (default 16), each on its own keep-alive connection;
3. measures from the first create to the last bind seen by the watch (a pod event with
   ``spec.nodeName`` set) and reports pods/s;
4. SIGKILLs serve right after the last bind, restarts it on the same data directory and
   checks that every acknowledged pod (201) is present and bound to the node the watch saw.

A benchmark, never a timed assertion; exits 1 if a pod was lost, moved or not bound, or a
create failed. ``benchmarks/serve_bench.py`` runs the same.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from collections.abc import Sequence
from typing import Any

from kubesched.api.errors import KubeschedError

NS = "default"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_serve(data: Path, port: int, nodes: int, timeout: float, extra: list[str]) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "kubesched.cli.main", "serve", "--data-dir", str(data),
           "--port", str(port), "--nodes", str(nodes), *extra]
    data.parent.mkdir(parents=True, exist_ok=True)
    with open(data.parent / "serve-stderr.log", "a") as log:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        with proc.stdout:
            for line in proc.stdout:
                lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            if proc.poll() is not None:
                raise KubeschedError(f"bench --serve: serve exited with {proc.returncode}; "
                                     f"see {data.parent / 'serve-stderr.log'}")
            continue
        if line.startswith("kubesched scheduler running"):  # printed once its caches are synced
            return proc
    proc.kill()
    raise KubeschedError(f"bench --serve: serve did not start in {timeout:.0f}s; "
                         f"see {data.parent / 'serve-stderr.log'}")


def request(conn: http.client.HTTPConnection, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    raw = resp.read()
    return resp.status, (json.loads(raw) if raw else None)


def proc_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` (all its threads) from /proc; None
    where there is no /proc (or the process is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child_pids(pid: int) -> list[int]:
    """The direct children of ``pid`` (serve's scheduler process), from /proc."""
    out = []
    for d in Path("/proc").glob("[0-9]*"):
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:
            out.append(int(d.name))
    return sorted(out)


class CpuMeter:
    """CPU seconds spent between :meth:`start` and :meth:`stop` by serve, by serve's child
    processes (the scheduler with ``--scheduler-process``) and by this benchmark process
    (its clients and its watch), measured on each side of the burst."""

    def __init__(self, serve_pid: int) -> None:
        self.serve_pid = serve_pid
        self._start: dict[str, float | None] = {}
        self.seconds: dict[str, float | None] = {}

    def _sample(self) -> dict[str, float | None]:
        kids = [proc_cpu_seconds(p) for p in child_pids(self.serve_pid)]
        return {"serve": proc_cpu_seconds(self.serve_pid),
                "scheduler_process": sum(k for k in kids if k is not None) if kids else None,
                "bench": time.process_time()}

    def start(self) -> None:
        self._start = self._sample()

    def stop(self) -> None:
        self.seconds = {}
        for k, v in self._sample().items():
            before = self._start.get(k)
            self.seconds[k] = None if v is None or before is None else round(v - before, 2)


def cpu_ceiling(seconds: dict[str, float | None], pods: int, cpus: int | None) -> tuple[float | None, float | None]:
    """CPU milliseconds per bound pod, every measured process together, and the pods per
    second that cost allows with every one of ``cpus`` cores busy: the burst's ceiling on
    this machine whatever the overlap (``(None, None)`` when a figure is missing)."""
    known = [v for v in seconds.values() if v is not None]
    if not known or pods <= 0 or not cpus:
        return None, None
    ms = sum(known) / pods * 1000
    return round(ms, 3), (round(cpus * 1000 / ms, 1) if ms > 0 else None)


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"containers": [{"name": "c", "image": "pause",
                                     "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}


def wait_nodes_ready(port: int, nodes: int, timeout: float) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            _, body = request(conn, "GET", "/api/v1/nodes")
            ready = sum(1 for n in body["items"]
                        if any(c.get("type") == "Ready" and c.get("status") == "True"
                               for c in n.get("status", {}).get("conditions", [])))
            if ready >= nodes:
                return
            time.sleep(0.5)
    finally:
        conn.close()
    raise KubeschedError(f"bench --serve: the nodes are not Ready after {timeout:.0f}s")


class BindWatch(threading.Thread):
    """Streams pod watch events; records pod -> node at the first event that carries a node."""

    def __init__(self, port: int, rv: str, expect: int) -> None:
        super().__init__(daemon=True)
        self.port, self.rv, self.expect = port, rv, expect
        self.bound: dict[str, str] = {}
        self.last_bind = 0.0
        self.done = threading.Event()

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        try:
            conn.request("GET", f"/api/v1/namespaces/{NS}/pods?watch=1&resourceVersion={self.rv}")
            resp = conn.getresponse()
            while len(self.bound) < self.expect:
                line = resp.readline()
                if not line:
                    break
                if b'"nodeName"' not in line:
                    continue  # a pod not bound yet: nothing to record, not parsed
                ev = json.loads(line)
                obj = ev.get("object", {})
                name = obj.get("metadata", {}).get("name")
                node = obj.get("spec", {}).get("nodeName")
                if ev.get("type") in ("ADDED", "MODIFIED") and node and name not in self.bound:
                    self.bound[name] = node
                    self.last_bind = time.monotonic()
        except OSError:  # serve was killed under the stream
            pass
        finally:
            conn.close()
            self.done.set()


def run_serve_bench(nodes: int = 1000, pods: int = 5000, clients: int = 16, *, in_process: bool = False,
                    data_dir: str | None = None, timeout: float = 600.0,
                    serve_args: Sequence[str] = ()) -> dict[str, Any]:
    """Run the benchmark; return the report (``ok`` False if a pod was lost, moved or not
    bound, or a create failed). ``serve_args``: more ``kubesched serve`` flags (the release)."""
    if nodes <= 0 or pods <= 0 or clients <= 0:
        raise KubeschedError("bench --serve: --nodes, --pods and --clients must be positive")
    temporary = data_dir is None
    base = Path(tempfile.mkdtemp(prefix="serve-bench-")) if data_dir is None else Path(data_dir)
    try:
        extra = [*serve_args] + ([] if in_process else ["--scheduler-process"])
        return _run(base / "data", nodes, pods, clients, extra, timeout)
    finally:
        if temporary:
            shutil.rmtree(base, ignore_errors=True)


def _run(data: Path, nodes: int, pods: int, clients: int, extra: list[str], timeout: float) -> dict[str, Any]:
    port = free_port()
    t0 = time.monotonic()
    proc = start_serve(data, port, nodes, 300, extra)
    try:
        wait_nodes_ready(port, nodes, timeout=300)
        setup_s = time.monotonic() - t0
        meter = CpuMeter(proc.pid)
        acked, errors, watch, elapsed, created_s = _burst(port, pods, clients, timeout, meter)
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # right after the last bind: no clean shutdown
        proc.wait()
    proc = start_serve(data, port, nodes, 300, extra)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        _, after = request(conn, "GET", f"/api/v1/namespaces/{NS}/pods")
        conn.close()
        stored = {p["metadata"]["name"]: p.get("spec", {}).get("nodeName") for p in after["items"]}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    missing = [n for n in acked if n not in stored]
    moved = [n for n, node in watch.bound.items() if stored.get(n) != node]
    bound_n = len(watch.bound)
    cpu_ms, ceiling = cpu_ceiling(meter.seconds, bound_n, os.cpu_count())
    return {
        "nodes": nodes, "pods": pods, "clients": clients,
        "scheduler": "process" if "--scheduler-process" in extra else "in-process",
        "setup_seconds": round(setup_s, 1),
        "acknowledged": len(acked), "create_errors": len(errors), "first_create_errors": errors[:3],
        "creates_per_second": round(len(acked) / created_s, 1) if created_s else None,
        "bound_seen_by_watch": bound_n,
        "first_create_to_last_bind_seconds": round(elapsed, 2),
        "pods_per_second": round(bound_n / elapsed, 1) if elapsed > 0 else None,
        "after_sigkill_missing": len(missing), "after_sigkill_moved_or_unbound": len(moved),
        "cpu_seconds_during_burst": meter.seconds,
        "cpu_ms_per_pod": cpu_ms, "cpu_bound_pods_per_second": ceiling,
        "load_average_1m": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
        "ok": not missing and not moved and bound_n == pods and not errors,
    }


def _burst(port: int, pods: int, clients: int, timeout: float, meter: CpuMeter
           ) -> tuple[list[str], list[str], BindWatch, float, float]:
    """POST the pods from ``clients`` threads; return the acknowledged names, the errors,
    the watch, seconds from the first create to the last bind, and seconds of creating."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    _, lst = request(conn, "GET", f"/api/v1/namespaces/{NS}/pods")
    conn.close()
    watch = BindWatch(port, lst["metadata"]["resourceVersion"], pods)
    watch.start()
    time.sleep(0.5)  # the watch is established before the first create

    acked: list[str] = []
    errors: list[str] = []
    lock = threading.Lock()
    names: queue.Queue[str] = queue.Queue()
    for i in range(pods):
        names.put(f"bench-{i:05d}")

    path, headers = f"/api/v1/namespaces/{NS}/pods", {"Content-Type": "application/json"}

    def client() -> None:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            while True:
                try:
                    name = names.get_nowait()
                except queue.Empty:
                    return
                c.request("POST", path, body=json.dumps(pod(name)).encode(), headers=headers)
                resp = c.getresponse()
                raw = resp.read()  # an acknowledged pod's body is not needed: not parsed
                with lock:
                    (acked if resp.status == 201 else errors).append(
                        name if resp.status == 201 else f"{name}: {resp.status} {raw[:300]!r}")
        finally:
            c.close()

    meter.start()
    start = time.monotonic()
    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    created_s = time.monotonic() - start
    watch.done.wait(timeout)
    meter.stop()
    elapsed = (watch.last_bind or time.monotonic()) - start
    return acked, errors, watch, elapsed, created_s
