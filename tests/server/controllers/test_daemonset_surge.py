"""The surge branch of upstream ``pkg/controller/daemon/update.go`` (``rollingUpdate`` with
maxSurge > 0) and the two-pods-on-a-node rule of ``podsShouldBeOnNode``, on hand-made
pods: ``new``/``old`` by their ``controller-revision-hash``, availability given."""

from __future__ import annotations

from kubesched.server.controllers.daemonsurge import excess, surge_plan

NEW = "h2"


def pod(name: str, rev: str) -> dict[str, object]:
    return {"metadata": {"name": name, "labels": {"controller-revision-hash": rev}}}


def names(pods: list[dict[str, object]]) -> list[str]:
    return [str(p["metadata"]["name"]) for p in pods]  # type: ignore[index]


def test_surge_plan() -> None:
    available = {"old-a", "old-b", "old-c", "new-d"}
    nodes = {"a": [pod("old-a", "h1")], "b": [pod("old-b", "h1")], "c": [pod("old-c", "h1")],
             "d": [pod("old-d", "h1"), pod("new-d", NEW)],  # new pod available: the old one goes
             "e": [pod("old-e", "h1")],                    # old pod not available: replaced at once
             "f": [pod("old-f", "h1"), pod("new-f", NEW)],  # surging, not yet available: counts
             "g": [pod("new-g", NEW)]}
    avail = lambda p: p["metadata"]["name"] in available  # noqa: E731
    delete, create = surge_plan(nodes, NEW, 2, avail)
    assert names(delete) == ["old-d"]
    # maxSurge 2, one node (f) already surging: one candidate (a), plus e which is free
    assert create == ["e", "a"]
    assert surge_plan(nodes, NEW, 1, avail)[1] == ["e"]


def test_excess_pods_on_a_node() -> None:
    old, new, newer = pod("old", "h1"), pod("new", NEW), pod("newer", NEW)
    always = lambda p: True  # noqa: E731
    never = lambda p: False  # noqa: E731
    assert names(excess([old, new], NEW, False, always, always)) == ["new"]  # no surge: keep the oldest
    assert names(excess([old, new], NEW, True, always, never)) == []        # new one not yet available
    assert names(excess([old, new], NEW, True, always, always)) == ["old"]  # new one available
    assert names(excess([old, new], NEW, True, never, never)) == ["old"]    # old one not ready
    assert names(excess([old, new, newer], NEW, True, always, never)) == ["newer"]
