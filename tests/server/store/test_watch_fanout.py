"""The watch hub's fan-out: a commit's events grouped by kind once, each watcher given
exactly the events of its kinds, in revision order, and every watcher's ``seen_rv``
advanced by every commit, even one with nothing for it (what bookmarks announce)."""

from __future__ import annotations

from kubesched.server.store import ADDED, DELETED, MODIFIED, StoredEvent
from kubesched.server.store.watch import WatchHub


def ev(rv: int, kind: str, name: str, typ: str = ADDED) -> StoredEvent:
    return StoredEvent(rv, typ, kind, "default", name, f'{{"metadata":{{"name":"{name}"}}}}')


def test_each_watcher_gets_exactly_its_kinds_in_revision_order() -> None:
    hub = WatchHub()
    pods = hub.new_watcher(["core/pods"], [], 0)
    both = hub.new_watcher(["core/pods", "core/nodes"], [], 0)
    every = hub.new_watcher(None, [], 0)
    leases = hub.new_watcher(["coordination.k8s.io/leases"], [], 0)
    commit = [ev(1, "core/pods", "a"), ev(2, "core/nodes", "n"), ev(3, "core/pods", "a", MODIFIED),
              ev(4, "core/events", "e"), ev(5, "core/pods", "b", DELETED)]
    hub.publish(commit)
    got = {name: w.drain() for name, w in
           (("pods", pods), ("both", both), ("every", every), ("leases", leases))}
    assert [(e.rv, e.type) for e in got["pods"][0]] == [(1, ADDED), (3, MODIFIED), (5, DELETED)]
    assert [e.rv for e in got["both"][0]] == [1, 2, 3, 5]
    assert [e.rv for e in got["every"][0]] == [1, 2, 3, 4, 5]
    assert got["leases"][0] == []
    assert {name: seen for name, (_, seen) in got.items()} == {"pods": 5, "both": 5, "every": 5, "leases": 5}


def test_a_commit_without_a_watchers_kind_still_advances_what_it_has_seen() -> None:
    hub = WatchHub()
    pods = hub.new_watcher(["core/pods"], [], 0)
    hub.publish([ev(7, "core/nodes", "n")])
    assert pods.drain() == ([], 7)
    hub.publish([ev(8, "core/pods", "p")])
    events, seen = pods.drain()
    assert [e.name for e in events] == ["p"] and seen == 8
