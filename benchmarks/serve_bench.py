"""End-to-end throughput of ``kubesched serve``, and durability right after the burst.

Why this exists: the in-process benchmarks (``kubesched bench``) measure the scheduling
loop alone; this one measures the whole cluster on one machine — API server, SQLite
store, the scheduler over HTTP, simulated kubelets — as a user of ``kubectl`` sees it.

What it does (issue 16, item 3):

1. starts a real ``kubesched serve`` with ``--nodes N`` (default 1,000) in a fresh data
   directory;
2. opens a watch on pods, then POSTs ``--pods`` pods (default 5,000) from ``--clients``
   threads (default 16), each on its own keep-alive connection;
3. measures from the first create to the last bind seen by the watch (a pod event with
   ``spec.nodeName`` set) and prints pods/s;
4. SIGKILLs serve right after the last bind, restarts it on the same data directory and
   checks that every acknowledged pod (201) is present and bound to the node the watch saw.

Run: ``.venv/bin/python benchmarks/serve_bench.py [--nodes 1000 --pods 5000 --clients 16]``.
Prints one JSON line; exits 1 if a pod was lost or moved. Not a pytest module (a benchmark,
never a timed assertion).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

NS = "default"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_serve(data: Path, port: int, nodes: int, timeout: float, extra: list[str]) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "kubesched.cli.main", "serve", "--data-dir", str(data),
           "--port", str(port), "--nodes", str(nodes), *extra]
    data.parent.mkdir(parents=True, exist_ok=True)
    log = open(data.parent / "serve-stderr.log", "a")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            if proc.poll() is not None:
                raise SystemExit(f"serve exited with {proc.returncode}; see {data.parent / 'serve-stderr.log'}")
            continue
        if line.startswith("kubesched scheduler running"):  # printed once its caches are synced
            return proc
    proc.kill()
    raise SystemExit("serve did not start in time")


def request(conn: http.client.HTTPConnection, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    raw = resp.read()
    return resp.status, (json.loads(raw) if raw else None)


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"containers": [{"name": "c", "image": "pause",
                                     "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}


def wait_nodes_ready(port: int, nodes: int, timeout: float) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _, body = request(conn, "GET", "/api/v1/nodes")
        ready = sum(1 for n in body["items"]
                    if any(c.get("type") == "Ready" and c.get("status") == "True"
                           for c in n.get("status", {}).get("conditions", [])))
        if ready >= nodes:
            return
        time.sleep(0.5)
    raise SystemExit(f"nodes not Ready after {timeout}s")


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
        conn.request("GET", f"/api/v1/namespaces/{NS}/pods?watch=1&resourceVersion={self.rv}")
        resp = conn.getresponse()
        while len(self.bound) < self.expect:
            line = resp.readline()
            if not line:
                break
            ev = json.loads(line)
            obj = ev.get("object", {})
            name = obj.get("metadata", {}).get("name")
            node = obj.get("spec", {}).get("nodeName")
            if ev.get("type") in ("ADDED", "MODIFIED") and node and name not in self.bound:
                self.bound[name] = node
                self.last_bind = time.monotonic()
        self.done.set()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--data-dir", help="data directory (default: a fresh temporary one)")
    ap.add_argument("--scheduler-process", action="store_true",
                    help="run serve's scheduler as a child process (serve --scheduler-process)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for all binds")
    args = ap.parse_args()
    base = Path(args.data_dir) if args.data_dir else Path(tempfile.mkdtemp(prefix="serve-bench-"))
    data = base / "data"
    port = free_port()
    extra = ["--scheduler-process"] if args.scheduler_process else []
    t0 = time.monotonic()
    proc = start_serve(data, port, args.nodes, timeout=300, extra=extra)
    wait_nodes_ready(port, args.nodes, timeout=300)
    setup_s = time.monotonic() - t0

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    _, lst = request(conn, "GET", f"/api/v1/namespaces/{NS}/pods")
    watch = BindWatch(port, lst["metadata"]["resourceVersion"], args.pods)
    watch.start()
    time.sleep(0.5)  # the watch is established before the first create

    acked: list[str] = []
    errors: list[str] = []
    lock = threading.Lock()
    names: queue.Queue[str] = queue.Queue()
    for i in range(args.pods):
        names.put(f"bench-{i:05d}")

    def client() -> None:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while True:
            try:
                name = names.get_nowait()
            except queue.Empty:
                return
            status, body = request(c, "POST", f"/api/v1/namespaces/{NS}/pods", pod(name))
            with lock:
                (acked if status == 201 else errors).append(name if status == 201 else f"{name}: {status} {body}")

    start = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    created_s = time.monotonic() - start
    watch.done.wait(args.timeout)
    bound_n = len(watch.bound)
    elapsed = (watch.last_bind or time.monotonic()) - start
    os.kill(proc.pid, signal.SIGKILL)  # right after the last bind: no clean shutdown
    proc.wait()

    proc = start_serve(data, port, args.nodes, timeout=300, extra=extra)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        _, after = request(conn, "GET", f"/api/v1/namespaces/{NS}/pods")
        stored = {p["metadata"]["name"]: p.get("spec", {}).get("nodeName") for p in after["items"]}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    missing = [n for n in acked if n not in stored]
    moved = [n for n, node in watch.bound.items() if stored.get(n) != node]
    report = {
        "nodes": args.nodes, "pods": args.pods, "clients": args.clients,
        "setup_seconds": round(setup_s, 1),
        "acknowledged": len(acked), "create_errors": len(errors),
        "creates_per_second": round(len(acked) / created_s, 1) if created_s else None,
        "bound_seen_by_watch": bound_n,
        "first_create_to_last_bind_seconds": round(elapsed, 2),
        "pods_per_second": round(bound_n / elapsed, 1) if elapsed > 0 else None,
        "after_sigkill_missing": len(missing), "after_sigkill_moved_or_unbound": len(moved),
        "cpus": os.cpu_count(),
    }
    print(json.dumps(report))
    if errors:
        print("first create errors:", errors[:3], file=sys.stderr)
    return 0 if not missing and not moved and bound_n == args.pods and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
