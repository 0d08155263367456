"""CPU per registry write in serve's process, without HTTP: what one pod costs the API
server's registry on its create, its binding and the simulated kubelet's Running status
write. A real Store (SQLite, synchronous=NORMAL so the disk does not set
the figure) and Registry; CPU time of this process, in microseconds per write.

Run: ``.venv/bin/python benchmarks/registry_writes.py [PODS]`` (default 2000). Compare two
trees by running it alternately with ``PYTHONPATH=<other tree>``.
"""

from __future__ import annotations

import inspect
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kubesched.server.apiserver.registry import subresources as sub
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.nodes import podstatus as PS
from kubesched.server.store import Store


def pod(name: str) -> dict[str, Any]:  # the pod `kubesched bench --serve` POSTs
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "pause",
                                     "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}


def one_node_registry(d: str) -> tuple[Store, Registry]:
    """A bootstrapped registry in directory ``d`` with one node big enough for every pod."""
    store = Store(Path(d) / "db", synchronous="NORMAL")
    reg = Registry(store)
    reg.bootstrap()
    reg.create("nodes", None, {"metadata": {"name": "n1"},
                               "status": {"allocatable": {"cpu": "1000", "memory": "1000Gi", "pods": "100000"}}})
    return store, reg


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        store, reg = one_node_registry(d)
        handed_over = "owned" in inspect.signature(reg.create).parameters  # as the HTTP handler does
        bodies = [json.loads(json.dumps(pod(f"p{i}"))) for i in range(n)]
        t = time.process_time()
        for b in bodies:
            if handed_over:
                reg.create("pods", "default", b, field_manager="python-requests", owned=True)
            else:
                reg.create("pods", "default", b, field_manager="python-requests")
        create = time.process_time() - t
        t = time.process_time()
        for i in range(n):
            sub.bind(reg, "default", f"p{i}", {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": f"p{i}"},
                                               "target": {"kind": "Node", "name": "n1"}}, False)
        bind = time.process_time() - t
        pods = [reg.get("pods", "default", f"p{i}") for i in range(n)]
        now = time.time()
        t = time.process_time()
        for i, p in enumerate(pods):  # as the simulated kubelet writes a started pod
            new = dict(p)
            new["status"] = PS.running_status(p, now, "10.0.0.1", f"10.1.{i // 250}.{i % 250}")
            reg.update("pods", "default", f"p{i}", new, subresource="status")
        status = time.process_time() - t
        store.close()
    print(f"create {1e6 * create / n:.0f} us  bind {1e6 * bind / n:.0f} us  status {1e6 * status / n:.0f} us")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
