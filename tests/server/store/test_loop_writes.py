"""Writes from an event loop (kubesched/server/store/loopwrite.py, ``Store.write_on_loop``):
they run on the loop's thread, join the open group like a thread's write, and are
acknowledged (the coroutine returns) only once their group is committed, which another
SQLite connection can check; writes of one loop iteration share one COMMIT; a thread
holding the write lock delays them without blocking the loop."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.server.store import AlreadyExists, Store

PODS = "core/pods"


def pod(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}}


def committed_names(path: Path) -> set[str]:
    """What another connection sees: only committed rows."""
    conn = sqlite3.connect(str(path))
    try:
        return {r[0] for r in conn.execute("SELECT name FROM objects WHERE kind=?", (PODS,))}
    finally:
        conn.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "store.db", history=1000)
    yield s
    s.close()


def test_writes_of_one_iteration_share_one_commit_and_are_acknowledged_after_it(
        store: Store, tmp_path: Path, count_handoffs: Callable[[asyncio.AbstractEventLoop], list[object]]) -> None:
    """200 writes started together run in one loop iteration, so they form one group: one
    COMMIT. Each, when acknowledged, is visible to another connection (committed). The
    committer thread hands the group's acknowledgement to the loop once, not once a writer."""
    seen_committed: list[bool] = []
    handoffs: list[list[object]] = []  # the loop's hand-offs from other threads (the committer's)

    async def one(name: str) -> str:
        obj = await store.write_on_loop(lambda: store.create(PODS, "default", name, pod(name)))
        seen_committed.append(name in committed_names(tmp_path / "store.db"))
        return str(obj["metadata"]["resourceVersion"])

    async def main() -> list[str]:
        handoffs.append(count_handoffs(asyncio.get_running_loop()))
        return await asyncio.gather(*(one(f"p{i}") for i in range(200)))

    rvs = asyncio.run(main())
    assert store.commits == 1
    assert len(handoffs[0]) == 1, handoffs[0][:3]
    assert seen_committed == [True] * 200
    assert sorted(int(rv) for rv in rvs) == list(range(1, 201))
    assert store.rv == 200


def test_a_thread_holding_the_lock_delays_a_loop_write_without_blocking_the_loop(store: Store,
                                                                                  tmp_path: Path) -> None:
    entered, release = threading.Event(), threading.Event()

    def holder() -> None:
        with store.txn() as tx:
            tx.create(PODS, "default", "held", pod("held"))
            entered.set()
            release.wait(30)

    t = threading.Thread(target=holder)
    t.start()
    assert entered.wait(30)

    async def main() -> tuple[int, bool]:
        write = asyncio.ensure_future(store.write_on_loop(lambda: store.create(PODS, "default", "x", pod("x"))))
        ticks = 0
        for _ in range(20):  # the loop keeps running while the write waits for the lock
            await asyncio.sleep(0.01)
            ticks += 1
        done_before_release = write.done()
        release.set()
        await write
        return ticks, done_before_release

    ticks, done_before_release = asyncio.run(main())
    t.join(30)
    assert ticks == 20 and not done_before_release
    assert committed_names(tmp_path / "store.db") == {"held", "x"}


def test_a_failing_loop_write_loses_nobody_elses_write(store: Store, tmp_path: Path) -> None:
    store.create(PODS, "default", "taken", pod("taken"))

    def dup() -> None:
        with store.txn() as tx:
            tx.create(PODS, "default", "y", pod("y"))  # rolled back with its savepoint
            tx.create(PODS, "default", "taken", pod("taken"))

    async def main() -> list[Any]:
        return await asyncio.gather(
            store.write_on_loop(lambda: store.create(PODS, "default", "a", pod("a"))),
            store.write_on_loop(dup),
            store.write_on_loop(lambda: store.create(PODS, "default", "b", pod("b"))),
            return_exceptions=True)

    a, err, b = asyncio.run(main())
    assert isinstance(err, AlreadyExists)
    assert committed_names(tmp_path / "store.db") == {"taken", "a", "b"}
    # revisions stay dense: "taken" 1, "a" 2, the rolled-back write gave its revision back, "b" 3
    assert (a["metadata"]["resourceVersion"], b["metadata"]["resourceVersion"]) == ("2", "3")


def test_loop_and_thread_writers_together_all_durable_after_reopen(tmp_path: Path) -> None:
    s = Store(tmp_path / "store.db", history=100)
    acked: dict[str, str] = {}
    lock = threading.Lock()

    def thread_writer(w: int) -> None:
        for i in range(25):
            rv = s.create(PODS, "default", f"t{w}-{i}", pod(f"t{w}-{i}"))["metadata"]["resourceVersion"]
            with lock:
                acked[f"t{w}-{i}"] = rv

    async def loop_writer(w: int) -> None:
        for i in range(25):
            name = f"l{w}-{i}"
            obj = await s.write_on_loop(lambda: s.create(PODS, "default", name, pod(name)))
            with lock:
                acked[name] = obj["metadata"]["resourceVersion"]

    async def main() -> None:
        await asyncio.gather(*(loop_writer(w) for w in range(8)))

    threads = [threading.Thread(target=thread_writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    asyncio.run(main())
    for t in threads:
        t.join(60)
    assert len(acked) == 300
    assert committed_names(tmp_path / "store.db") == set(acked)
    s.close()
    reopened = Store(tmp_path / "store.db")
    try:
        for name, rv in acked.items():
            assert reopened.get(PODS, "default", name)["metadata"]["resourceVersion"] == rv
        assert reopened.rv == 300
    finally:
        reopened.close()


def test_a_failed_commit_fails_every_loop_writer_of_the_group(store: Store, tmp_path: Path) -> None:
    """The group's COMMIT step fails (a trigger refuses the revision update the store makes
    when it commits a group): every writer of that group gets the error, and nothing of the
    group is committed."""
    store.create(PODS, "default", "before", pod("before"))
    conn = sqlite3.connect(str(tmp_path / "store.db"))
    conn.execute("CREATE TRIGGER nope BEFORE UPDATE OF value ON meta WHEN NEW.value > 1 "
                 "BEGIN SELECT RAISE(ABORT, 'commit refused'); END")
    conn.commit()
    conn.close()

    async def main() -> list[Any]:
        return await asyncio.gather(*(store.write_on_loop(
            lambda n=n: store.create(PODS, "default", n, pod(n))) for n in ("a", "b", "c")),
            return_exceptions=True)

    started = time.monotonic()
    results = asyncio.run(main())
    assert time.monotonic() - started < 60
    assert all(isinstance(r, sqlite3.Error) and "commit refused" in str(r) for r in results), results
    assert committed_names(tmp_path / "store.db") == {"before"}
    assert store.rv == 1
