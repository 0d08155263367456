"""CPU per pod of the fan-out from a store commit to every watcher, as in ``serve`` during
``kubesched bench --serve``: a real Store and Registry; the in-process
informers serve runs (the real garbage collector, with an informer of every collected kind,
pods included, and its handlers; two more pod informers, the controller manager's and the
simulated kubelets' with their indexes; informers of nodes, ReplicaSets, Deployments,
DaemonSets and namespaces) and two pod watch streams served on an event loop through the
HTTP layer's waker and encoder (the scheduler's, with its phase field selector, and the
bench's).

Per pod, the writes ``bench --serve`` makes: create, binding, the kubelet's Running status,
an event. The figure is this process's CPU (every thread) per pod with no watchers, and
what the streams, the informers and both add to it (the fan-out), the least of REPS
alternated runs.

Run: ``.venv/bin/python benchmarks/watch_fanout.py [PODS [REPS]]`` (default 2000, 3). Compare
two trees by running a copy of it from outside the tree with ``PYTHONPATH=<other tree>``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import threading
import time
from typing import Any

from kubesched.server.apiserver.registry import subresources as sub
from kubesched.server.apiserver.registry.resources import TABLE
from kubesched.server.apiserver.watch.api import WatchStream, open_watch
from kubesched.server.apiserver.http.watch import _encode, _Waker
from kubesched.server.controllers.garbagecollector import GarbageCollector
from kubesched.server.controllers.informer import Informer, by_namespace, by_node_name
from kubesched.server.nodes import podstatus as PS
from registry_writes import one_node_registry, pod  # the same pod and set-up (benchmarks/ is on sys.path)

SCHEDULER_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"


def event(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"p{i}.1", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": f"p{i}"},
            "reason": "Scheduled", "message": f"Successfully assigned default/p{i} to n1", "type": "Normal",
            "source": {"component": "default-scheduler"}}


class StreamReader:
    """Serves watch streams as the HTTP layer does: on one event loop (its own thread here,
    serve's main thread there), woken through the same batching waker, every item encoded."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.waker = _Waker(self.loop)
        self.streams: list[WatchStream] = []
        self.bytes = 0
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def add(self, stream: WatchStream) -> None:
        self.streams.append(stream)
        asyncio.run_coroutine_threadsafe(self._pump(stream), self.loop).result()

    async def _pump(self, stream: WatchStream) -> None:
        wake = asyncio.Event()
        stream.set_notify(lambda: self.waker.wake(wake))
        self.loop.create_task(self._serve(stream, wake))

    async def _serve(self, stream: WatchStream, wake: asyncio.Event) -> None:
        while not stream.closed:
            wake.clear()
            items = stream.poll()
            if items:
                self.bytes += len(b"".join(_encode(i, None, None) for i in items))  # type: ignore[arg-type]
            await wake.wait()

    def stop(self) -> None:
        for s in self.streams:
            s.close()
        asyncio.run_coroutine_threadsafe(asyncio.sleep(0.1), self.loop).result()  # the pumps see it
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)


def run(n: int, informers_on: bool, streams_on: bool) -> float:
    with tempfile.TemporaryDirectory() as d:
        store, reg = one_node_registry(d)
        informers: list[Informer] = []
        reader: StreamReader | None = None
        gc: GarbageCollector | None = None
        if informers_on:
            kubelet = Informer(reg, "pods")
            kubelet.add_index("node", by_node_name)
            kubelet.add_index("namespace", by_namespace)
            informers += [Informer(reg, "pods"), kubelet]
            gc = GarbageCollector(reg)  # its informers: every collected kind, metadata only
            gc.start()
            for plural in ("nodes", "replicasets.apps", "deployments.apps", "daemonsets.apps", "namespaces"):
                informers.append(Informer(reg, plural))
            for inf in informers:
                inf.start()
            for inf in informers:
                assert inf.synced.wait(30)
        if streams_on:
            rv = str(store.rv)
            reader = StreamReader()
            reader.add(open_watch(reg, "pods", None, resource_version=rv, field_selector=SCHEDULER_SELECTOR))
            reader.add(open_watch(reg, "pods", "default", resource_version=rv))
        bodies = [json.loads(json.dumps(pod(f"p{i}"))) for i in range(n)]
        now = time.time()
        t = time.process_time()
        for i, b in enumerate(bodies):
            reg.create("pods", "default", b, field_manager="python-requests", owned=True)
            sub.bind(reg, "default", f"p{i}", {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": f"p{i}"},
                                               "target": {"kind": "Node", "name": "n1"}}, False)
            p = reg.get("pods", "default", f"p{i}")
            new = dict(p)
            new["status"] = PS.running_status(p, now, "10.0.0.1", f"10.1.{i // 250}.{i % 250}")
            reg.update("pods", "default", f"p{i}", new, subresource="status")
            last = store.rv  # the last pod event
            reg.create("events", "default", event(i))
        deadline = time.monotonic() + 120
        while any(inf.rv < last for inf in informers if inf.resource == "pods") or \
                any(st.last_rv < last for st in (reader.streams if reader else [])):
            if time.monotonic() > deadline:
                late = [(i.resource, i.rv) for i in informers if i.resource == "pods" and i.rv < last]
                late += [("stream", st.last_rv) for st in (reader.streams if reader else []) if st.last_rv < last]
                raise SystemExit(f"watchers did not catch up to {last} within 120 s: {late}")
            time.sleep(0.005)
        cpu = time.process_time() - t
        if reader is not None:
            reader.stop()
        for inf in informers:
            inf.stop()
        if gc is not None:
            gc.stop()
        store.close()
        assert TABLE.resources
    return cpu


def main(n: int, reps: int) -> None:
    cases = {"none": (False, False), "streams": (False, True), "informers": (True, False), "all": (True, True)}
    cpu: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(reps):  # alternated; the least of each is the least disturbed by the machine
        for name, (informers_on, streams_on) in cases.items():
            cpu[name].append(run(n, informers_on, streams_on))
    least = {k: 1e3 * min(v) / n for k, v in cpu.items()}
    print(f"CPU ms per pod (4 writes), least of {reps}: no watchers {least['none']:.3f}; fan-out to the two "
          f"streams {least['streams'] - least['none']:.3f}, to the informers {least['informers'] - least['none']:.3f}, "
          f"to all {least['all'] - least['none']:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000, int(sys.argv[2]) if len(sys.argv) > 2 else 3)
