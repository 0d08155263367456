"""What the store does so a commit costs its watchers less: a stream line built once per
event, pushes only to the watchers of the commit's kinds, and the revision a watcher has
seen taken from the hub (fixed when the watcher closes); a MODIFIED event's object-before
stays the committed previous version, even after a rolled-back write in between."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from kubesched.server.store import ADDED, DELETED, MODIFIED, Store, StoredEvent
from kubesched.server.store.watch import WatchHub

PODS = "core/pods"


def pod(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default", "labels": labels}}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "store.db", history=1000)
    yield s
    s.close()


def test_a_rolled_back_write_is_never_taken_for_the_previous_version(store: Store) -> None:
    store.create(PODS, "default", "p", pod("p", v="a"))
    w = store.watch([PODS], store.rv)
    with pytest.raises(RuntimeError):
        with store.txn() as tx:
            tx.update(PODS, "default", "p", pod("p", v="rolled-back"))
            raise RuntimeError("abort")
    store.update(PODS, "default", "p", pod("p", v="c"))
    (modified,), _ = w.drain()
    assert modified.prev_obj() == {"metadata": {"name": "p", "namespace": "default", "labels": {"v": "a"},
                                                "resourceVersion": "1"}}
    w.close()


def test_a_stream_line_is_built_once_per_event() -> None:
    e = StoredEvent(3, MODIFIED, PODS, "default", "p", '{"metadata":{"name":"p"}}', "{}")
    line = e.frame(MODIFIED)
    assert line == b'{"type":"MODIFIED","object":{"metadata":{"name":"p"}}}\n'
    assert e.frame(MODIFIED) is line
    assert json.loads(e.frame(DELETED)) == {"type": "DELETED", "object": {"metadata": {"name": "p"}}}
    assert e.frame(MODIFIED) is line  # a selector's other type does not replace the shared line


def test_seen_follows_the_hub_and_is_fixed_at_close() -> None:
    hub = WatchHub()
    pods = hub.new_watcher([PODS], [], 0)
    closing = hub.new_watcher([PODS], [], 0)
    hub.publish([StoredEvent(4, ADDED, "core/nodes", "", "n", "{}")])
    assert pods.drain() == ([], 4)  # nothing of its kind, yet it has seen revision 4
    closing.close()
    hub.publish([StoredEvent(5, ADDED, PODS, "default", "p", "{}")])
    hub.publish([StoredEvent(6, ADDED, "core/nodes", "", "m", "{}")])
    events, seen = pods.drain()
    assert [e.rv for e in events] == [5] and seen == 6
    assert closing.drain() == ([], 4)  # closed at 4: it never claims what it did not get


def test_watchers_of_other_kinds_are_not_pushed_to() -> None:
    hub = WatchHub()
    nodes = hub.new_watcher(["core/nodes"], [], 0)
    pushed: list[int] = []
    real = nodes.push
    nodes.push = lambda events, upto, *size: (  # type: ignore[method-assign]
        pushed.append(upto), real(events, upto, *size))
    hub.publish([StoredEvent(1, ADDED, PODS, "default", "p", "{}")])
    assert pushed == [] and nodes.drain() == ([], 1)
    hub.publish([StoredEvent(2, ADDED, "core/nodes", "", "n", "{}")])
    assert pushed == [2]
