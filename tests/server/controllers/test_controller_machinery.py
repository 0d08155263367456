"""The controllers' building blocks: the work queue (client-go workqueue semantics), names
(FNV-32a, the vowel-free alphabet), and the order in which a scale-down deletes pods."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest

from kubesched.server.controllers.naming import ALPHANUMS, fnv32a, random_suffix, safe_encode, template_hash
from kubesched.server.controllers.replicaset import deletion_order
from kubesched.server.controllers.workqueue import WorkQueue


def test_queue_coalesces_and_never_hands_out_a_key_twice() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.add("a")
    q.add("b")
    assert q.get(0) == "a"
    q.add("a")  # added while processing: queued again only when done
    assert q.get(0) == "b"
    assert q.get(0.01) is None
    q.done("a")
    assert q.get(0) == "a"
    q.done("a")
    q.done("b")
    assert q.get(0.01) is None


def test_add_after_waits_and_the_earliest_time_wins() -> None:
    now = [0.0]
    q: WorkQueue[str] = WorkQueue(clock=lambda: now[0])
    q.add_after("x", 5)
    q.add_after("x", 2)
    q.add_after("x", 9)
    assert q.get(0) is None
    now[0] = 2.0
    assert q.get(0) == "x"
    q.done("x")
    now[0] = 10.0
    assert q.get(0) is None  # the superseded timers do not fire again


def test_rate_limited_retries_back_off_until_forgotten() -> None:
    q: WorkQueue[str] = WorkQueue()
    start = time.monotonic()
    for _ in range(3):
        q.add_rate_limited("k")
        assert q.get(2) == "k"
        q.done("k")
    assert time.monotonic() - start >= 0.05 + 0.1 + 0.2 - 0.02
    q.forget("k")
    q.add_rate_limited("k")
    t0 = time.monotonic()
    assert q.get(2) == "k" and time.monotonic() - t0 < 0.2


def test_shutdown_wakes_waiting_workers() -> None:
    q: WorkQueue[str] = WorkQueue()
    got: list[Any] = []
    t = threading.Thread(target=lambda: got.append(q.get(None)))
    t.start()
    q.shutdown()
    t.join(2)
    assert got == [None]


def test_fnv32a_reference_vectors() -> None:
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C
    assert fnv32a(b"foobar") == 0xBF9CF968


def test_names_use_the_vowel_free_alphabet() -> None:
    assert safe_encode("0123456789") == "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in "0123456789")
    h = template_hash({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}})
    assert h == template_hash({"spec": {"containers": [{"name": "c"}]}, "metadata": {"labels": {"app": "web"}}})
    assert h != template_hash({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}, 1)
    assert set(h) <= set(ALPHANUMS) and 1 <= len(h) <= 10
    a, b = random.Random(3), random.Random(3)
    assert [random_suffix(a) for _ in range(5)] == [random_suffix(b) for _ in range(5)]


def _pod(name: str, node: str = "", phase: str = "Pending", ready: bool = False, created: str = "2026-01-01T00:00:00Z",
         ready_since: str = "2026-01-01T00:00:00Z", restarts: int = 0) -> dict[str, Any]:
    return {"metadata": {"name": name, "creationTimestamp": created}, "spec": {"nodeName": node} if node else {},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                                       "lastTransitionTime": ready_since}],
                       "containerStatuses": [{"restartCount": restarts}]}}


@pytest.mark.parametrize(("pods", "first"), [
    ([_pod("bound", "n1", "Running", True), _pod("unbound")], "unbound"),
    ([_pod("running", "n1", "Running", True), _pod("pending", "n2", "Pending")], "pending"),
    ([_pod("ready", "n1", "Running", True), _pod("not-ready", "n2", "Running", False)], "not-ready"),
    ([_pod("alone", "n1", "Running", True), _pod("crowd-1", "n2", "Running", True),
      _pod("crowd-2", "n2", "Running", True)], "crowd-1"),
    ([_pod("old-ready", "n1", "Running", True, ready_since="2026-01-01T00:00:00Z"),
      _pod("new-ready", "n2", "Running", True, ready_since="2026-01-01T00:05:00Z")], "new-ready"),
    ([_pod("calm", "n1", "Running", True), _pod("restarty", "n2", "Running", True, restarts=3)], "restarty"),
    ([_pod("older", "n1", "Running", True), _pod("newer", "n2", "Running", True, created="2026-01-02T00:00:00Z")],
     "newer"),
], ids=["unassigned-first", "pending-before-running", "not-ready-first", "co-located-first", "recently-ready-first",
        "more-restarts-first", "newest-first"])
def test_scale_down_deletes_pods_in_upstream_order(pods: list[dict[str, Any]], first: str) -> None:
    """The order of upstream ``controller.ActivePodsWithRanks`` (controller_utils.go)."""
    assert deletion_order(pods)[0]["metadata"]["name"] == first


@pytest.mark.parametrize(("existing", "options", "want"), [
    ([], {}, []),
    ([], {"propagationPolicy": "Background"}, []),
    ([], {"propagationPolicy": "Foreground"}, ["foregroundDeletion"]),
    ([], {"propagationPolicy": "Orphan"}, ["orphan"]),
    ([], {"orphanDependents": True}, ["orphan"]),
    (["orphan"], {}, ["orphan"]),
    (["example.com/keep", "foregroundDeletion"], {"propagationPolicy": "Orphan"}, ["example.com/keep", "orphan"]),
    (["foregroundDeletion"], {"propagationPolicy": "Background"}, []),
], ids=["default", "background", "foreground", "orphan", "orphan-dependents", "finalizer-decides", "switch-policy",
        "background-clears"])
def test_delete_options_set_the_garbage_collector_finalizers(existing: list[str], options: dict[str, Any],
                                                              want: list[str]) -> None:
    """The API server's side of garbage collection (upstream ``deletionFinalizersForGarbageCollection``)."""
    from kubesched.server.apiserver.registry.deletion import gc_finalizers

    assert gc_finalizers(existing, options) == want
