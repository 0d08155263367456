"""In-process informers of one store are served by one dispatcher thread: every informer
still sees every event of its kind in revision order (its own watch), handlers run on that
thread, an informer's revision still follows commits of other kinds, and the thread goes
away with the last informer."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.cluster.apiserver.registry import Registry
from kubesched.cluster.controllers.dispatch import dispatcher_for
from kubesched.cluster.controllers.informer import Informer
from kubesched.cluster.store import Store

from cluster_harness import eventually


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    store = Store(tmp_path / "store.db")
    reg = Registry(store)
    reg.bootstrap()
    yield reg
    store.close()


def pod(name: str, app: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                             "labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "image": "pause"}]}}


def test_every_informer_sees_every_event_in_order_on_one_thread(registry: Registry) -> None:
    informers = [Informer(registry, "pods") for _ in range(4)] + [Informer(registry, "nodes")]
    seen: list[list[tuple[str | None, str | None, str]]] = [[] for _ in informers]
    threads: set[str] = set()

    def handler(i: int) -> Any:
        def on(old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
            threads.add(threading.current_thread().name)
            label = lambda o: None if o is None else o["metadata"]["labels"]["app"]  # noqa: E731
            seen[i].append((label(old), label(new), (new or old or {})["metadata"]["name"]))
        return on

    for i, inf in enumerate(informers):
        inf.add_handler(handler(i))
        inf.start()
    try:
        assert all(inf.synced.wait(10) for inf in informers)
        for n in range(20):
            registry.create("pods", "default", pod(f"p{n}", "a"))
        for n in range(20):
            cur = registry.get("pods", "default", f"p{n}")
            cur["metadata"]["labels"]["app"] = "b"
            registry.update("pods", "default", f"p{n}", cur)
        for n in range(0, 20, 2):
            registry.delete("pods", "default", f"p{n}")
        want = ([(None, "a", f"p{n}") for n in range(20)] + [("a", "b", f"p{n}") for n in range(20)]
                + [("b", None, f"p{n}") for n in range(0, 20, 2)])
        eventually(lambda: all(s == want for s in seen[:4]), timeout=30)
        assert seen[4] == []
        assert threads == {"informers-store"}
        # a commit of another kind: the pod informers' revision follows it (within a poll)
        registry.create("nodes", None, {"metadata": {"name": "n1"}})
        rv = registry.store.rv
        eventually(lambda: all(inf.rv >= rv for inf in informers), timeout=10)
        assert all(inf.wait_for(rv, timeout=1) for inf in informers)
    finally:
        for inf in informers:
            inf.stop()
    eventually(lambda: not any(t.name == "informers-store" and t.is_alive() for t in threading.enumerate()),
               timeout=10)
    assert dispatcher_for(registry.store)._members == 0
