"""In-process informers share one parse of each watch event: the store event caches
its parsed object and every informer of the kind caches that one dictionary (read-only
by contract), instead of each decoding the JSON text again; a copy is still what a
caller gets from :meth:`WatchItem.object`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.watch.api import open_watch
from kubesched.server.controllers.informer import Informer
from kubesched.server.store import Store

from cluster_harness import eventually


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    store = Store(tmp_path / "store.db")
    reg = Registry(store)
    reg.bootstrap()
    yield reg
    store.close()


def pod(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "pause"}]}}


def test_two_informers_cache_the_same_parsed_object(registry: Registry) -> None:
    a, b = Informer(registry, "pods"), Informer(registry, "pods")
    seen: list[tuple[object, object]] = []
    b.add_handler(lambda old, new: seen.append((old, new)))
    for inf in (a, b):
        inf.start()
    try:
        assert a.synced.wait(10) and b.synced.wait(10)
        registry.create("pods", "default", pod("p"))
        eventually(lambda: a.get("default", "p") is not None and b.get("default", "p") is not None)
        shared = a.get("default", "p")
        assert shared is b.get("default", "p")
        assert seen[-1] == (None, shared) and seen[-1][1] is shared
        assert shared is not None and shared["metadata"]["name"] == "p"
    finally:
        a.stop()
        b.stop()


def test_watch_items_still_hand_out_copies(registry: Registry) -> None:
    stream = open_watch(registry, "pods", "default", resource_version=str(registry.store.rv))
    try:
        registry.create("pods", "default", pod("q"))
        items = eventually(lambda: stream.next(0.5))
        item = items[0]
        assert item.shared_object() is item.shared_object()
        copy = item.object()
        assert copy == item.shared_object() and copy is not item.shared_object()
    finally:
        stream.close()
