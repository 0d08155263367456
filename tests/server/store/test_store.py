"""The SQLite store: revisions, optimistic concurrency, lists, watches, compaction, restart."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from kubesched.server.store import (
    ADDED, DELETED, MODIFIED, AlreadyExists, Conflict, Expired, NotFound, Store,
)

PODS = "core/pods"


def pod(name: str, ns: str = "default", **labels: str) -> dict:
    return {"metadata": {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}", "labels": labels}}


@pytest.fixture
def store(tmp_path: Path):
    s = Store(tmp_path / "store.db", history=1000)
    yield s
    s.close()


def test_revisions_are_global_and_monotonic(store: Store) -> None:
    a = store.create(PODS, "default", "a", pod("a"))
    n = store.create("core/nodes", "", "n1", {"metadata": {"name": "n1"}})
    b = store.update(PODS, "default", "a", pod("a"), expect_rv=1)
    d = store.delete(PODS, "default", "a")
    assert [int(o["metadata"]["resourceVersion"]) for o in (a, n, b, d)] == [1, 2, 3, 4]
    assert store.rv == 4


@pytest.mark.parametrize("op", ["create", "update", "delete_rv", "delete_uid", "get"], ids=str)
def test_errors(store: Store, op: str) -> None:
    store.create(PODS, "default", "a", pod("a"))
    with pytest.raises((AlreadyExists, Conflict, NotFound)) as info:
        if op == "create":
            store.create(PODS, "default", "a", pod("a"))
        elif op == "update":
            store.update(PODS, "default", "a", pod("a"), expect_rv=99)
        elif op == "delete_rv":
            store.delete(PODS, "default", "a", expect_rv=99)
        elif op == "delete_uid":
            store.delete(PODS, "default", "a", expect_uid="other")
        else:
            store.get(PODS, "default", "missing")
    expected = {"create": AlreadyExists, "update": Conflict, "delete_rv": Conflict, "delete_uid": Conflict,
                "get": NotFound}[op]
    assert isinstance(info.value, expected)
    assert store.rv == 1  # a failed write takes no revision


def test_list_pages_namespaces_and_predicate(store: Store) -> None:
    for i in range(7):
        store.create(PODS, "a" if i % 2 else "b", f"p{i}", pod(f"p{i}", "a" if i % 2 else "b", app="x" if i < 4 else "y"))
    everything = store.list(PODS)
    assert [o["metadata"]["name"] for o in everything.items] == ["p1", "p3", "p5", "p0", "p2", "p4", "p6"]
    assert [o["metadata"]["name"] for o in store.list(PODS, "a").items] == ["p1", "p3", "p5"]
    names, after = [], None
    while True:
        page = store.list(PODS, limit=3, after=after)
        names += [o["metadata"]["name"] for o in page.items]
        if page.next_key is None:
            break
        after = page.next_key
    assert names == [o["metadata"]["name"] for o in everything.items]
    only_x = store.list(PODS, predicate=lambda o: o["metadata"]["labels"].get("app") == "x")
    assert sorted(o["metadata"]["name"] for o in only_x.items) == ["p0", "p1", "p2", "p3"]


def test_watch_replays_then_follows_without_gaps_or_doubles(store: Store) -> None:
    for i in range(5):
        store.create(PODS, "default", f"p{i}", pod(f"p{i}"))
    w = store.watch([PODS], since=2)
    store.update(PODS, "default", "p0", pod("p0", x="1"))
    store.create("core/nodes", "", "n", {"metadata": {"name": "n"}})  # another kind: not delivered
    store.delete(PODS, "default", "p1")
    events, seen = w.get(1)
    assert [(e.rv, e.type) for e in events] == [(3, ADDED), (4, ADDED), (5, ADDED), (6, MODIFIED), (8, DELETED)]
    assert seen == 8
    assert events[3].prev_obj()["metadata"]["labels"] == {}
    w.close()


def test_watch_from_a_compacted_revision_is_expired(store: Store) -> None:
    for i in range(20):
        store.create(PODS, "default", f"p{i}", pod(f"p{i}"))
    assert store.compact(keep=5) == 15
    with pytest.raises(Expired):
        store.watch([PODS], since=10)
    events, _ = store.watch([PODS], since=15).get(0)
    assert [e.rv for e in events] == [16, 17, 18, 19, 20]


def test_automatic_compaction_keeps_history(tmp_path: Path) -> None:
    s = Store(tmp_path / "db", history=100)
    for i in range(400):
        s.create(PODS, "default", f"p{i}", pod(f"p{i}"))
    assert 200 <= s.compacted_rv <= 300
    s.close()


def test_restart_keeps_objects_revisions_and_history(tmp_path: Path) -> None:
    s = Store(tmp_path / "db")
    s.create(PODS, "default", "a", pod("a"))
    s.update(PODS, "default", "a", pod("a", v="2"))
    s.create(PODS, "default", "b", pod("b"))
    s.close()
    s = Store(tmp_path / "db")
    assert s.rv == 3
    assert s.get(PODS, "default", "a")["metadata"] == {**pod("a", v="2")["metadata"], "resourceVersion": "2"}
    events, _ = s.watch([PODS], since=1).get(0)
    assert [(e.rv, e.type, e.name) for e in events] == [(2, MODIFIED, "a"), (3, ADDED, "b")]
    assert s.create(PODS, "default", "c", pod("c"))["metadata"]["resourceVersion"] == "4"
    s.close()


def test_guaranteed_update_has_no_lost_updates_under_threads(store: Store) -> None:
    store.create("core/configmaps", "default", "counter", {"metadata": {"name": "counter"}, "data": {"n": "0"}})

    def bump(cur: dict, tx) -> dict:
        cur["data"]["n"] = str(int(cur["data"]["n"]) + 1)
        return tx.update("core/configmaps", "default", "counter", cur)

    def worker() -> None:
        for _ in range(50):
            store.guaranteed_update("core/configmaps", "default", "counter", bump)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.get("core/configmaps", "default", "counter")["data"]["n"] == "400"
    assert store.rv == 401


def test_expires_is_kept_by_updates_until_changed(store: Store) -> None:
    store.create(PODS, "default", "a", pod("a"), expires=100.0)
    store.update(PODS, "default", "a", pod("a", x="1"))
    assert store.expired(100.0) == [(PODS, "default", "a")]
    assert store.expired(99.0) == []
    store.update(PODS, "default", "a", pod("a"), expires=None)
    assert store.expired(1e12) == []


def test_slow_watcher_is_terminated_not_waited_for(tmp_path: Path) -> None:
    s = Store(tmp_path / "db", watch_capacity=10)
    w = s.watch([PODS], since=0)
    for i in range(20):
        s.create(PODS, "default", f"p{i}", pod(f"p{i}"))
    assert w.closed and w.overflowed
    assert s.rv == 20
    s.close()
