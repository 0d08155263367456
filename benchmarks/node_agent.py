"""CPU per pod of the simulated kubelets (and optionally the controller manager) in serve's
process, without HTTP: what starting one bound pod costs the node agent,
its informers and the registry writes it makes.

A real Store (SQLite, synchronous=NORMAL so the disk does not set the figure), Registry,
informers, :class:`~kubesched.server.nodes.simulator.NodeSimulator` (kubelets, node
lifecycle, taint eviction, pod GC) and, with ``--controllers``, the
:class:`~kubesched.server.controllers.manager.ControllerManager`. N nodes are created and
left to settle (Leases, node status, pod CIDRs); then M pods are created already bound
(``spec.nodeName``, round robin, in one transaction) and the figure is the CPU time of
every thread but the main one (which creates the pods) until all M are Running, divided by
M, also per thread group (``node-agent``: the kubelets' workers and the writes they make). Also printed:
the idle CPU-s/s of the N nodes over ``--idle`` seconds before the pods (heartbeats).

Run: ``.venv/bin/python benchmarks/node_agent.py [--nodes N] [--pods M] [--controllers]``.
Compare two trees by running it alternately with ``PYTHONPATH=<other tree>``.
"""

from __future__ import annotations

import argparse
import os
import threading
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.nodes.agent import AgentOptions
from kubesched.server.nodes.simulator import NodeOptions, NodeSimulator
from kubesched.server.store import Store


def node(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                       "allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}


def pod(name: str, node_name: str) -> dict[str, Any]:  # the pod `kubesched bench --serve` POSTs, bound
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node_name, "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}


def others_cpu(main0: float, proc0: float) -> float:
    """CPU seconds of every thread but this one since (main0, proc0)."""
    return (time.process_time() - proc0) - (time.thread_time() - main0)


def by_thread() -> dict[str, float]:
    """CPU seconds so far of the live threads, summed by name without its worker number."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    for t in threading.enumerate():
        try:
            fields = Path(f"/proc/self/task/{t.native_id}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        group = t.name.rsplit("-", 1)[0] if t.name[-1:].isdigit() else t.name
        out[group] = out.get(group, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def running(reg: Registry) -> int:
    return sum(1 for p in reg.list("pods", "default")["items"]
               if (p.get("status") or {}).get("phase") == "Running")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--pods", type=int, default=2000)
    ap.add_argument("--idle", type=float, default=3.0, help="seconds of idle nodes measured before the pods")
    ap.add_argument("--controllers", action="store_true", help="run the controller manager too")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        store = Store(Path(d) / "db", synchronous="NORMAL")
        reg = Registry(store)
        reg.bootstrap()
        for i in range(args.nodes):
            reg.create("nodes", None, node(f"n{i}"))
        server = SimpleNamespace(registry=reg)
        parts: list[Any] = [NodeSimulator(NodeOptions(agent_options=AgentOptions(pod_start_delay=0.0)))]
        if args.controllers:
            from kubesched.server.controllers.manager import ControllerManager
            parts.append(ControllerManager())
        for p in parts:
            p.start(server)  # type: ignore[arg-type]
        deadline = time.monotonic() + 60
        while store.count("coordination.k8s.io/leases") < args.nodes and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)  # the first node status posts and CIDRs
        m0, p0, w0 = time.thread_time(), time.process_time(), time.monotonic()
        time.sleep(args.idle)
        idle = others_cpu(m0, p0) / (time.monotonic() - w0)
        m0, p0, w0, t0 = time.thread_time(), time.process_time(), time.monotonic(), by_thread()
        with store.txn():  # one commit: the agent's threads do not publish the creates' events
            for i in range(args.pods):
                reg.create("pods", "default", pod(f"p{i}", f"n{i % args.nodes}"))
        deadline = time.monotonic() + 300
        while running(reg) < args.pods and time.monotonic() < deadline:
            time.sleep(0.05)
        wall = time.monotonic() - w0
        cpu = others_cpu(m0, p0)
        threads = {k: v - t0.get(k, 0.0) for k, v in by_thread().items()}
        done = running(reg)
        for p in reversed(parts):
            p.stop()
        store.close()
    print(f"nodes {args.nodes} pods {args.pods} running {done}: {1e3 * cpu / args.pods:.3f} ms CPU/pod "
          f"(other threads {cpu:.2f} s in {wall:.1f} s wall); idle {idle:.3f} CPU-s/s")
    busy = sorted(((v, k) for k, v in threads.items() if v > 0 and k != "MainThread"), reverse=True)
    print("  ms/pod by thread: " + ", ".join(f"{k} {1e3 * v / args.pods:.3f}" for v, k in busy))


if __name__ == "__main__":
    main()
