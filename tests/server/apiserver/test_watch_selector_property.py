"""Watches with selectors after the fan-out was made cheaper (pushes by kind, ``seen``
taken from the hub, shared stream lines): for random sequences of label changes, deletes
and re-creates, each watch reports exactly what upstream's watch cache reports
(``staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go``, ``convertToWatchEvent``):
an object entering the selector is ADDED, one staying is MODIFIED, one leaving is DELETED,
one outside it is not sent; all in revision order. A stream judges a change's object-before
from its own judgement of the previous version; a pod last written before the watches began
(``pre``) is judged from the stored text of its previous version.
Expected events come from a model of the labels, computed before each write."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.watch.api import WatchItem, open_watch
from kubesched.server.store import Store

_names = itertools.count()


@pytest.fixture(scope="module")
def registry() -> Iterator[Registry]:
    with tempfile.TemporaryDirectory() as d:
        store = Store(Path(d) / "store.db", synchronous="NORMAL")
        reg = Registry(store)
        reg.bootstrap()
        yield reg
        store.close()


def pod(name: str, app: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if app is not None:
        meta["labels"] = {"app": app}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "pause"}]}}


# one step: (pod index, new "app" label or None for no label, or "delete"), and whether an
# in-process consumer parses the events before the watches read them (the shared parse)
steps = st.lists(st.tuples(st.integers(0, 2), st.sampled_from(["x", "y", None, "delete"]), st.booleans()),
                 min_size=1, max_size=25)


@settings(max_examples=40, deadline=None)
@given(steps=steps, pre=st.sampled_from(["x", "y", None, "absent"]))
def test_selector_transitions_match_the_model(registry: Registry, steps: list[tuple[int, Any, bool]],
                                               pre: str | None) -> None:
    run = next(_names)
    names = [f"r{run}-p{i}" for i in range(3)]
    labels: dict[str, str | None] = {}  # the model: present pods and their label
    if pre != "absent":  # pod 0 exists before the watches begin
        registry.create("pods", "default", pod(names[0], pre))
        labels[names[0]] = pre
    start = str(registry.store.rv)
    in_x = open_watch(registry, "pods", "default", resource_version=start, label_selector="app=x")
    not_x = open_watch(registry, "pods", "default", resource_version=start, label_selector="app!=x")
    everything = open_watch(registry, "pods", "default", resource_version=start)
    informer = registry.store.watch(["core/pods"], int(start))  # the parse other consumers share
    want: dict[str, list[tuple[str, str]]] = {"x": [], "not_x": [], "all": []}
    try:
        for i, change, parse_first in steps:
            name = names[i]
            before = labels.get(name, "absent")
            if change == "delete":
                if name not in labels:
                    continue
                registry.delete("pods", "default", name)
                del labels[name]
                after: str | None = "absent"
            elif name in labels:
                if labels[name] == change:
                    continue  # an update that changes nothing writes nothing: no event
                cur = registry.get("pods", "default", name)
                cur["metadata"].pop("labels", None)
                if change is not None:
                    cur["metadata"]["labels"] = {"app": change}
                registry.update("pods", "default", name, cur)
                labels[name] = after = change
            else:
                registry.create("pods", "default", pod(name, change))
                labels[name] = after = change
            for key, match in (("x", lambda v: v == "x"), ("not_x", lambda v: v != "x")):
                was = before != "absent" and match(before)
                now = after != "absent" and match(after)
                if was or now:
                    want[key].append((name, "MODIFIED" if was and now else "ADDED" if now else "DELETED"))
            want["all"].append((name, "DELETED" if after == "absent" else "ADDED" if before == "absent"
                                else "MODIFIED"))
            if parse_first:
                for ev in informer.drain()[0]:
                    ev.obj()
        got = {key: _drained(stream.poll()) for key, stream in (("x", in_x), ("not_x", not_x),
                                                                 ("all", everything))}
        assert {k: [(n, t) for n, t, _ in v] for k, v in got.items()} == want
        for items in got.values():
            rvs = [rv for _, _, rv in items]
            assert rvs == sorted(rvs) and len(set(rvs)) == len(rvs)
    finally:
        for s in (in_x, not_x, everything):
            s.close()
        informer.close()
        for name in labels:
            registry.delete("pods", "default", name)


def _drained(items: list[WatchItem]) -> list[tuple[str, str, int]]:
    return [(str(i.shared_object()["metadata"]["name"]), i.type, i.rv) for i in items]
