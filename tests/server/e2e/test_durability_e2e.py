"""Restarts and crashes: every acknowledged write survives, resourceVersions are kept, a
watch resumed across a restart under load loses and repeats nothing, no pod is bound twice."""

from __future__ import annotations

import http.client
import json
import signal
import threading
import time
import urllib.error
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from serve_harness import API_ONLY, Server, pod_manifest

pytestmark = pytest.mark.slow

NS = "load"


def created_ok(server: Server, name: str, retries: bool) -> str | None:
    """Create a pod; its resourceVersion once acknowledged (None if never acknowledged)."""
    while True:
        try:
            status, body = server.request("POST", f"/api/v1/namespaces/{NS}/pods", pod_manifest(name), timeout=10)
        except (OSError, urllib.error.URLError, http.client.HTTPException):  # incl. a reply cut short
            if not retries:
                return None
            time.sleep(0.05)
            continue
        if status == 201:
            return str(body["metadata"]["resourceVersion"])
        if status == 409 and retries:  # committed before the connection dropped
            return "existing"
        raise AssertionError(f"create {name}: {status} {body}")


def test_restart_keeps_objects_and_resource_versions(spawn: Callable[..., Server]) -> None:
    server = spawn("--nodes", "2", *API_ONLY)
    for i in range(5):
        created_ok(server, f"keep-{i}", retries=False)
    server.kubectl("label", "node", "node-01", "kept=yes")
    before = {k: server.request("GET", p)[1] for k, p in
              (("pods", f"/api/v1/namespaces/{NS}/pods"), ("nodes", "/api/v1/nodes"))}
    assert server.restart().stop(signal.SIGINT) == 0
    assert "kubesched API server stopped" in "".join(server.output)
    server.start()
    after = {k: server.request("GET", p)[1] for k, p in
             (("pods", f"/api/v1/namespaces/{NS}/pods"), ("nodes", "/api/v1/nodes"))}
    assert after == before
    assert created_ok(server, "keep-next", retries=False) == str(int(before["nodes"]["metadata"]["resourceVersion"]) + 1)


def test_watch_across_restart_under_load(spawn: Callable[..., Server]) -> None:
    server = spawn("--bookmark-interval", "0.5", *API_ONLY)
    total, workers = 1000, 4
    start_rv = server.request("GET", f"/api/v1/namespaces/{NS}/pods")[1]["metadata"]["resourceVersion"]
    received: list[tuple[str, str, int]] = []
    done = threading.Event()
    errors: list[BaseException] = []

    def watcher() -> None:
        rv = start_rv
        while not done.is_set():
            try:
                for ev in server.stream(f"/api/v1/namespaces/{NS}/pods?watch=true&resourceVersion={rv}"
                                        "&allowWatchBookmarks=true&timeoutSeconds=20", timeout=10):
                    meta = ev["object"]["metadata"]
                    if ev["type"] == "ERROR":
                        errors.append(AssertionError(f"watch error: {ev}"))
                        return
                    rv = meta["resourceVersion"]
                    if ev["type"] != "BOOKMARK":
                        received.append((ev["type"], meta["name"], int(rv)))
                    if done.is_set():
                        return
            except (OSError, urllib.error.URLError, http.client.HTTPException, json.JSONDecodeError):
                time.sleep(0.05)  # the server is restarting: resume from the last resourceVersion

    def creator(k: int) -> None:
        try:
            for i in range(k, total, workers):
                assert created_ok(server, f"p-{i:04d}", retries=True) is not None
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    watch_thread = threading.Thread(target=watcher, daemon=True)
    watch_thread.start()
    creators = [threading.Thread(target=creator, args=(k,)) for k in range(workers)]
    for t in creators:
        t.start()
    while sum(1 for e in received if e[0] == "ADDED") < total // 3:
        time.sleep(0.01)
    server.restart()
    for t in creators:
        t.join(120)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len({n for _, n, _ in received}) < total:
        time.sleep(0.1)
    done.set()
    server.stop()
    watch_thread.join(15)
    assert not errors, errors
    names = [n for t, n, _ in received if t == "ADDED"]
    assert len(names) == total and set(names) == {f"p-{i:04d}" for i in range(total)}
    assert all(t == "ADDED" for t, _, _ in received)
    rvs = [rv for _, _, rv in received]
    assert rvs == sorted(set(rvs))  # strictly increasing: nothing repeated, in order


def test_sigkill_during_creates_and_binds_loses_no_acknowledged_write(spawn: Callable[..., Server]) -> None:
    server = spawn("--nodes", "3", "--no-scheduler")  # the test's threads are the schedulers
    acked: dict[str, str] = {}
    binds: Counter[str] = Counter()
    bound_to: dict[str, str] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def bind(name: str, node: str) -> None:
        try:
            status, body = server.request("POST", f"/api/v1/namespaces/{NS}/pods/{name}/binding",
                                          {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                                           "target": {"kind": "Node", "name": node}}, timeout=10)
        except (OSError, urllib.error.URLError, http.client.HTTPException):  # incl. a reply cut short
            stop.set()
            return
        if status == 201:
            with lock:
                binds[name] += 1
                bound_to[name] = node
        else:
            assert status == 409 and body["reason"] == "Conflict", body

    def worker(k: int) -> None:
        i = 0
        while not stop.is_set():
            name = f"w{k}-{i}"
            rv = created_ok(server, name, retries=False)
            if rv is None:
                stop.set()
                return
            with lock:
                acked[name] = rv
            if i % 2 == 0:  # two schedulers race to bind the same pod
                rivals = [threading.Thread(target=bind, args=(name, f"node-0{1 + (i + j) % 3}")) for j in range(2)]
                for t in rivals:
                    t.start()
                for t in rivals:
                    t.join()
            i += 1

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    time.sleep(1.5)
    assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    stop.set()
    for t in threads:
        t.join(30)
    assert len(acked) > 50
    server.start()
    status, pods = server.request("GET", f"/api/v1/namespaces/{NS}/pods")
    assert status == 200
    stored: dict[str, Any] = {p["metadata"]["name"]: p for p in pods["items"]}
    for name, rv in acked.items():
        assert name in stored, f"acknowledged create of {name} lost"
        if name not in bound_to and not stored[name]["spec"].get("nodeName"):
            assert stored[name]["metadata"]["resourceVersion"] == rv
    for name, node in bound_to.items():
        assert stored[name]["spec"]["nodeName"] == node, f"acknowledged bind of {name} lost"
    assert max(binds.values(), default=0) == 1
    history = list(server.stream(f"/api/v1/namespaces/{NS}/pods?watch=true&resourceVersion=1&timeoutSeconds=1"))
    nodes_seen: dict[str, set[str]] = {}
    for ev in history:
        node = ev["object"]["spec"].get("nodeName")
        if node:
            nodes_seen.setdefault(ev["object"]["metadata"]["name"], set()).add(node)
    assert all(len(v) == 1 for v in nodes_seen.values()), "a pod was bound to two nodes"
