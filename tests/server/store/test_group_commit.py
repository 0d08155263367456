"""Group commit in the store (issue 16, item 3): writers queued behind one another share
one SQLite COMMIT (one fsync), and none of them is acknowledged (returns) before that
COMMIT; a failing writer in a group loses nobody else's write."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kubesched.server.store import AlreadyExists, Store
from kubesched.server.store import store as store_module

PODS = "core/pods"


def pod(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}}


def eventually(check: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"not true after {timeout}s")
        time.sleep(0.01)
    return value


def committed_names(path: Path) -> set[str]:
    """What another connection sees: only committed rows."""
    conn = sqlite3.connect(str(path))
    try:
        return {r[0] for r in conn.execute("SELECT name FROM objects WHERE kind=?", (PODS,))}
    finally:
        conn.close()


@pytest.fixture(autouse=True)
def unbounded_age(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests hold writers inside transactions for a while: no age bound on a group."""
    monkeypatch.setattr(store_module, "GROUP_MAX_SECONDS", 3600.0)


@pytest.fixture
def store(tmp_path: Path):
    s = Store(tmp_path / "store.db", history=1000)
    yield s
    s.close()


def hold_first_writer(store: Store, name: str) -> tuple[threading.Thread, threading.Event, dict[str, Any]]:
    """A writer that creates ``name`` and then waits inside its transaction until released."""
    entered, release, out = threading.Event(), threading.Event(), {}

    def run() -> None:
        with store.txn() as tx:
            tx.create(PODS, "default", name, pod(name))
            entered.set()
            release.wait(30)
        out["returned"] = True

    t = threading.Thread(target=run)
    t.start()
    assert entered.wait(30)
    return t, release, out


def test_queued_writers_share_one_commit_and_are_acknowledged_after_it(store: Store, tmp_path: Path) -> None:
    first, release, out = hold_first_writer(store, "p0")
    results: dict[str, str] = {}

    def create(name: str) -> None:
        results[name] = store.create(PODS, "default", name, pod(name))["metadata"]["resourceVersion"]

    others = [threading.Thread(target=create, args=(f"p{i}",)) for i in range(1, 5)]
    for t in others:
        t.start()
    eventually(lambda: store._waiting == 4)  # all four queued behind the first writer
    assert committed_names(tmp_path / "store.db") == set()
    release.set()
    for t in [first, *others]:
        t.join(30)
    assert out == {"returned": True} and len(results) == 4
    # five writes, one COMMIT; revisions 1..5 in lock order, the first writer took 1
    assert store.commits == 1
    assert sorted(results.values(), key=int) == ["2", "3", "4", "5"]
    assert committed_names(tmp_path / "store.db") == {f"p{i}" for i in range(5)}
    assert store.rv == 5


def test_a_deferring_writer_waits_for_the_groups_commit(store: Store, tmp_path: Path) -> None:
    """The first writer finishes while a second is queued: it leaves the COMMIT to the
    second and must not return while the second is still inside its transaction."""
    first, release_first, out = hold_first_writer(store, "a")
    second_in, release_second = threading.Event(), threading.Event()

    def second() -> None:
        with store.txn() as tx:
            tx.create(PODS, "default", "b", pod("b"))
            second_in.set()
            release_second.wait(30)

    t2 = threading.Thread(target=second)
    t2.start()
    eventually(lambda: store._waiting == 1)
    release_first.set()
    assert second_in.wait(30)  # the first writer deferred: the second holds the lock now
    time.sleep(0.2)
    assert out == {} and first.is_alive()  # not acknowledged: nothing is committed yet
    assert committed_names(tmp_path / "store.db") == set()
    release_second.set()
    first.join(30)
    t2.join(30)
    assert out == {"returned": True}
    assert committed_names(tmp_path / "store.db") == {"a", "b"} and store.commits == 1


def test_a_failing_writer_in_a_group_loses_nobody_elses_write(store: Store, tmp_path: Path) -> None:
    store.create(PODS, "default", "taken", pod("taken"))
    first, release, _ = hold_first_writer(store, "x")
    errors: list[BaseException] = []

    def dup() -> None:
        try:
            with store.txn() as tx:
                tx.create(PODS, "default", "y", pod("y"))  # rolled back with its savepoint
                tx.create(PODS, "default", "taken", pod("taken"))
        except AlreadyExists as exc:
            errors.append(exc)

    def ok() -> None:
        store.create(PODS, "default", "z", pod("z"))

    threads = [threading.Thread(target=dup), threading.Thread(target=ok)]
    threads[0].start()
    eventually(lambda: store._waiting == 1)
    threads[1].start()
    eventually(lambda: store._waiting == 2)
    release.set()
    for t in [first, *threads]:
        t.join(30)
    assert len(errors) == 1
    assert committed_names(tmp_path / "store.db") == {"taken", "x", "z"}
    # revisions stay dense: the rolled-back write gave its revision back
    assert store.get(PODS, "default", "z")["metadata"]["resourceVersion"] == "3"


def test_many_concurrent_writers_all_durable_after_reopen(tmp_path: Path) -> None:
    s = Store(tmp_path / "store.db", history=100)
    acked: list[tuple[str, str]] = []
    lock = threading.Lock()

    def writer(w: int) -> None:
        for i in range(25):
            rv = s.create(PODS, "default", f"w{w}-{i}", pod(f"w{w}-{i}"))["metadata"]["resourceVersion"]
            with lock:
                acked.append((f"w{w}-{i}", rv))

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(acked) == 400 and s.commits <= 400
    # every acknowledged write is committed before close (which could commit a group)
    assert committed_names(tmp_path / "store.db") == {name for name, _ in acked}
    s.close()
    reopened = Store(tmp_path / "store.db")
    try:
        for name, rv in acked:
            assert reopened.get(PODS, "default", name)["metadata"]["resourceVersion"] == rv
        assert reopened.rv == 400
    finally:
        reopened.close()


def test_a_group_is_bounded_in_size(store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A steady stream of queued writers cannot postpone the COMMIT forever: with groups of
    at most 2 writes, 5 queued writes take 3 COMMITs (2 + 2 + 1)."""
    monkeypatch.setattr(store_module, "GROUP_MAX_WRITES", 2)
    first, release, _ = hold_first_writer(store, "g0")
    others = [threading.Thread(target=store.create, args=(PODS, "default", f"g{i}", pod(f"g{i}")))
              for i in range(1, 5)]
    for t in others:
        t.start()
    eventually(lambda: store._waiting == 4)
    release.set()
    for t in [first, *others]:
        t.join(30)
    assert store.commits == 3
    assert committed_names(tmp_path / "store.db") == {f"g{i}" for i in range(5)}
