"""A churn soak of ``kubesched serve`` (a benchmark, not a test): a real serve process with
its scheduler, controllers and simulated nodes, under steady churn, watched by three
clients, for ``--minutes`` (30 by default).

Churn, all through HTTP as any client would:

* Deployments scaling: ``--deployments`` Deployments whose replicas are set to a new
  count (0 to ``--max-replicas``) every second, one Deployment at a time;
* Jobs completing: a Job every 2 s (2 completions, 2 in parallel, pods that succeed 3 s
  after they start: ``kubesched.io/run-duration``), deleted with its pods once complete;
* pods deleted while pending: a pod no node can take (a node selector nothing matches)
  created and deleted 0 to 1 s later, twice a second;
* three watchers of every pod, from the revision of the first list; a watch the server
  ends is resumed from the last revision seen (a 410 is a gap, reported).

Every minute: serve's resident memory (VmRSS; printed once the ``--warmup`` minutes have
passed) and the invariants that hold at any moment (no pod on a node that does not exist;
no node whose pods request more CPU, memory or pod slots than it has). At the end, once
the churn has stopped and the cluster has settled, the watchers' invariants: each saw
revisions strictly increasing (in order, none twice) without a gap, all three saw the same
events, and replaying a watcher's events up to a fresh list's revision gives exactly that
list (every pod, at its revision: no event missed).

Run: ``.venv/bin/python benchmarks/churn_soak.py [--minutes 30] [--warmup 2]``; exit status
1 if an invariant failed. Note the machine's load (``uptime``) beside the figures.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubesched.api.quantity import parse_quantity

NS = "soak"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Api:
    """One keep-alive connection per thread to serve's plain-HTTP port."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.local = threading.local()

    def request(self, method: str, path: str, body: Any = None,
                content_type: str = "application/json") -> tuple[int, Any]:
        for attempt in range(3):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            try:
                conn.request(method, path, None if body is None else json.dumps(body),
                             {**HEADERS, "Content-Type": content_type})
                resp = conn.getresponse()
                raw = resp.read()
                try:
                    return resp.status, (json.loads(raw) if raw else None)
                except ValueError:
                    return resp.status, raw.decode(errors="replace")  # a health check's text
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    raise
                time.sleep(0.5)
        raise AssertionError("unreachable")


def start_serve(data: Path, port: int, nodes: int) -> subprocess.Popen[bytes]:
    log = open(data.parent / "serve.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "kubesched.cli.main", "serve", "--data-dir", str(data),
                             "--port", str(port), "--nodes", str(nodes), "--node-cpu", "4", "--node-memory", "8Gi",
                             "--no-ui"], stdout=log, stderr=subprocess.STDOUT)
    api = Api(port)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            try:
                if api.request("GET", "/readyz")[0] == 200:
                    return proc
            except (OSError, http.client.HTTPException):
                pass
            if proc.poll() is not None:
                raise SystemExit(f"serve exited with {proc.returncode}; see {data.parent / 'serve.log'}")
            time.sleep(0.2)
        raise SystemExit("serve did not start within 120 s")
    except BaseException:
        proc.kill()
        proc.wait()
        raise


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def container(cpu: str, memory: str) -> list[dict[str, Any]]:
    return [{"name": "c", "image": "registry.example/app:1",
             "resources": {"requests": {"cpu": cpu, "memory": memory}}}]


def deployment(name: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": container("200m", "256Mi")}}}}


def job(name: str) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": NS},
            "spec": {"completions": 2, "parallelism": 2, "backoffLimit": 2,
                     "template": {"metadata": {"annotations": {"kubesched.io/run-duration": "3s"}},
                                  "spec": {"restartPolicy": "Never", "containers": container("100m", "64Mi")}}}}


def unschedulable(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"nodeSelector": {"soak.kubesched.io/none": "true"}, "containers": container("10m", "16Mi")}}


class Watcher(threading.Thread):
    """Watches every pod from ``rv``; keeps (revision, type, key) of each event."""

    def __init__(self, port: int, rv: str, stop: threading.Event, index: int) -> None:
        super().__init__(name=f"watcher-{index}", daemon=True)
        self.port, self.rv, self.stop_event = port, rv, stop
        self.events: list[tuple[int, str, str]] = []
        self.gaps: list[str] = []
        self.resumes = 0

    def run(self) -> None:
        while not self.stop_event.is_set():
            try:
                self._stream()
            except (OSError, http.client.HTTPException, ValueError) as exc:
                if self.stop_event.is_set():
                    return
                self.gaps.append(f"stream failed at {self.rv}: {exc}")
                time.sleep(0.5)
            self.resumes += 1

    def _stream(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        try:
            conn.request("GET", f"/api/v1/pods?watch=1&resourceVersion={self.rv}&timeoutSeconds=600",
                         headers={"Accept": "application/json"})
            resp = conn.getresponse()
            assert conn.sock is not None
            conn.sock.settimeout(None)  # events may be minutes apart; the server ends the watch in 600 s
            if resp.status != 200:
                self.gaps.append(f"watch from {self.rv}: HTTP {resp.status}")
                resp.read()
                time.sleep(1)
                return
            while not self.stop_event.is_set():
                line = resp.readline()
                if not line:
                    return  # the server ended the watch: resume from self.rv
                if not line.strip():
                    continue
                ev = json.loads(line)
                obj = ev.get("object") or {}
                if ev.get("type") == "ERROR":
                    self.gaps.append(f"watch from {self.rv}: {obj.get('code')} {obj.get('message')}")
                    return
                rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
                if ev.get("type") != "BOOKMARK":
                    meta = obj.get("metadata") or {}
                    self.events.append((int(rv), str(ev.get("type")), f"{meta.get('namespace')}/{meta.get('name')}"))
                if rv:
                    self.rv = rv
        finally:
            conn.close()


class Churn:
    def __init__(self, api: Api, deployments: int, max_replicas: int, stop: threading.Event) -> None:
        self.api, self.deployments, self.max_replicas, self.stop = api, deployments, max_replicas, stop
        self.counts = {"scales": 0, "jobs": 0, "jobs_deleted": 0, "pending_deleted": 0, "errors": 0}
        self.rng = random.Random(1)

    def _ok(self, status: int) -> None:
        if status >= 400 and status != 404:
            self.counts["errors"] += 1

    def scale(self) -> None:
        i = 0
        while not self.stop.wait(1.0):
            name = f"d{i % self.deployments}"
            status, _ = self.api.request("PATCH", f"/apis/apps/v1/namespaces/{NS}/deployments/{name}/scale",
                                         {"spec": {"replicas": self.rng.randint(0, self.max_replicas)}},
                                         "application/merge-patch+json")
            self._ok(status)
            self.counts["scales"] += 1
            i += 1

    def jobs(self) -> None:
        n = 0
        while not self.stop.wait(2.0):
            self._ok(self.api.request("POST", f"/apis/batch/v1/namespaces/{NS}/jobs", job(f"j{n}"))[0])
            self.counts["jobs"] += 1
            n += 1
            _, jobs = self.api.request("GET", f"/apis/batch/v1/namespaces/{NS}/jobs")
            for j in (jobs or {}).get("items", []):
                if (j.get("status") or {}).get("succeeded", 0) >= 2:
                    name = j["metadata"]["name"]
                    self._ok(self.api.request("DELETE", f"/apis/batch/v1/namespaces/{NS}/jobs/{name}",
                                              {"propagationPolicy": "Background"})[0])
                    self.counts["jobs_deleted"] += 1

    def pending(self) -> None:
        n = 0
        while not self.stop.wait(0.5):
            name = f"pending-{n}"
            n += 1
            self._ok(self.api.request("POST", f"/api/v1/namespaces/{NS}/pods", unschedulable(name))[0])
            if self.stop.wait(self.rng.random()):
                break
            self._ok(self.api.request("DELETE", f"/api/v1/namespaces/{NS}/pods/{name}",
                                      {"gracePeriodSeconds": 0})[0])
            self.counts["pending_deleted"] += 1


def _requests(pod: dict[str, Any]) -> tuple[int, int]:
    cpu = mem = 0
    for c in (pod.get("spec") or {}).get("containers") or []:
        req = (c.get("resources") or {}).get("requests") or {}
        cpu += parse_quantity(req.get("cpu", "0")).milli_value()
        mem += parse_quantity(req.get("memory", "0")).value()
    return cpu, mem


def placement_violations(api: Api) -> list[str]:
    """No pod on a missing node; no node whose pods request more than it has."""
    _, nodes = api.request("GET", "/api/v1/nodes")
    _, pods = api.request("GET", "/api/v1/pods")
    alloc = {n["metadata"]["name"]: n["status"].get("allocatable") or {} for n in nodes["items"]}
    used: dict[str, list[int]] = {name: [0, 0, 0] for name in alloc}
    out = []
    for p in pods["items"]:
        node = (p.get("spec") or {}).get("nodeName")
        if not node or (p.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        if node not in alloc:
            out.append(f"pod {p['metadata']['namespace']}/{p['metadata']['name']} on missing node {node}")
            continue
        cpu, mem = _requests(p)
        used[node][0] += cpu
        used[node][1] += mem
        used[node][2] += 1
    for name, (cpu, mem, count) in used.items():
        a = alloc[name]
        limits = (parse_quantity(a.get("cpu", "0")).milli_value(), parse_quantity(a.get("memory", "0")).value(),
                  int(a.get("pods", "0")))
        if cpu > limits[0] or mem > limits[1] or count > limits[2]:
            out.append(f"node {name} overcommitted: cpu {cpu}m/{limits[0]}m, memory {mem}/{limits[1]}, "
                       f"pods {count}/{limits[2]}")
    return out


def watcher_violations(watchers: list[Watcher], listed: dict[str, int], list_rv: int) -> list[str]:
    out = []
    for w in watchers:
        out += [f"{w.name}: {g}" for g in w.gaps]
        rvs = [rv for rv, _, _ in w.events]
        bad = next((i for i in range(1, len(rvs)) if rvs[i] <= rvs[i - 1]), None)
        if bad is not None:
            out.append(f"{w.name}: revision {rvs[bad]} after {rvs[bad - 1]} (out of order or repeated)")
        state: dict[str, int] = {}
        for rv, kind, key in w.events:
            if rv > list_rv:
                break
            if kind == "DELETED":
                state.pop(key, None)
            else:
                state[key] = rv
        if state != listed:
            missing = sorted(set(listed.items()) ^ set(state.items()))[:5]
            out.append(f"{w.name}: replayed events differ from the list at {list_rv} (e.g. {missing})")
    first = watchers[0].events
    for w in watchers[1:]:
        if w.events != first:
            out.append(f"{w.name}: saw {len(w.events)} events, {watchers[0].name} {len(first)}: not the same")
    return out


def settle(api: Api, watchers: list[Watcher]) -> tuple[dict[str, int], int]:
    """Once the cluster is quiet: a pod list (key -> revision) and its revision, with every
    watcher caught up to that revision's last pod event."""
    time.sleep(15)  # controllers finish what the churn started (scale-downs, completions, GC)
    _, pods = api.request("GET", "/api/v1/pods")
    list_rv = int(pods["metadata"]["resourceVersion"])
    listed = {f"{p['metadata']['namespace']}/{p['metadata']['name']}": int(p["metadata"]["resourceVersion"])
              for p in pods["items"]}
    last = max(listed.values(), default=0)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(int(w.rv) < last for w in watchers):
        time.sleep(0.2)
    time.sleep(2)
    return listed, list_rv


def churn_thread(stop: threading.Event, fn: Callable[[], None]) -> threading.Thread:
    def loop() -> None:
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - a churn thread that dies is reported, not hidden
            print(f"churn thread {fn.__name__} failed: {exc!r}", flush=True)
            stop.set()
    t = threading.Thread(target=loop, name=fn.__name__, daemon=True)
    t.start()
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30.0, help="how long the churn lasts (default 30)")
    ap.add_argument("--warmup", type=float, default=2.0, help="minutes before memory is reported (default 2)")
    ap.add_argument("--nodes", type=int, default=8, help="simulated nodes (default 8: 4 CPU, 8Gi each)")
    ap.add_argument("--deployments", type=int, default=4)
    ap.add_argument("--max-replicas", type=int, default=12)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="churn-soak-") as tmp:
        port = free_port()
        proc = start_serve(Path(tmp) / "data", port, args.nodes)
        api = Api(port)
        try:
            return soak(api, proc, port, args)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()


def soak(api: Api, proc: subprocess.Popen[bytes], port: int, args: argparse.Namespace) -> int:
    api.request("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    for i in range(args.deployments):
        api.request("POST", f"/apis/apps/v1/namespaces/{NS}/deployments", deployment(f"d{i}"))
    _, pods = api.request("GET", "/api/v1/pods")
    stop_watch, stop_churn = threading.Event(), threading.Event()
    watchers = [Watcher(port, pods["metadata"]["resourceVersion"], stop_watch, i) for i in range(3)]
    for w in watchers:
        w.start()
    churn = Churn(api, args.deployments, args.max_replicas, stop_churn)
    threads = [churn_thread(stop_churn, fn) for fn in (churn.scale, churn.jobs, churn.pending)]
    print(f"serve pid {proc.pid}, {args.nodes} nodes; churn for {args.minutes:g} min, memory reported after "
          f"{args.warmup:g} min; load {os.getloadavg()[0]:.2f}", flush=True)
    violations: list[str] = []
    started = time.monotonic()
    minute = 0
    while minute < args.minutes and not stop_churn.is_set():
        stop_churn.wait(max(0.0, started + 60 * (minute + 1) - time.monotonic()))
        minute += 1
        found = placement_violations(api)
        violations += [f"minute {minute}: {v}" for v in found]
        if minute >= args.warmup:
            _, live = api.request("GET", f"/api/v1/namespaces/{NS}/pods")
            print(f"minute {minute:>3}: serve RSS {rss_mb(proc.pid):7.1f} MB; {len(live['items'])} pods; "
                  f"events per watcher {len(watchers[0].events)}; {churn.counts}; "
                  f"placement {'ok' if not found else found[:2]}; load {os.getloadavg()[0]:.2f}", flush=True)
    stop_churn.set()
    for t in threads:
        t.join(30)
    listed, list_rv = settle(api, watchers)
    stop_watch.set()
    violations += placement_violations(api)
    violations += watcher_violations(watchers, listed, list_rv)
    print(f"end: {len(watchers[0].events)} pod events per watcher, {sum(w.resumes for w in watchers)} resumed "
          f"watches, {len(listed)} pods at revision {list_rv}; churn {churn.counts}", flush=True)
    if churn.counts["errors"]:
        violations.append(f"{churn.counts['errors']} churn requests failed")
    for v in violations:
        print("VIOLATION:", v, flush=True)
    print("invariants: " + ("all held" if not violations else f"{len(violations)} violated"), flush=True)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
