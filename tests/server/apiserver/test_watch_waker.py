"""The batched wake-ups of HTTP watches: every watch woken from another thread is woken,
with far fewer hand-offs to the event loop than watches."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from kubesched.server.apiserver.http.watch import _Waker


def test_every_event_is_set_with_batched_handoffs(count_handoffs: Callable[[asyncio.AbstractEventLoop], list[object]]) -> None:
    async def run() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        waker = _Waker(loop)
        handoffs = count_handoffs(loop)
        events = [asyncio.Event() for _ in range(2000)]
        writer = threading.Thread(target=lambda: [waker.wake(e) for e in events])
        writer.start()
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), 30)
        writer.join()
        return sum(e.is_set() for e in events), len(handoffs)

    woken, handoffs = asyncio.run(run())
    assert woken == 2000
    assert 1 <= handoffs < 500  # the writer wakes many watches per hand-off (the GIL switches every 5 ms)


def test_a_closed_loop_drops_pending_wakeups() -> None:
    loop = asyncio.new_event_loop()
    waker = _Waker(loop)
    loop.close()
    event = asyncio.Event()
    waker.wake(event)  # no exception: nothing waits on a closed loop
    waker.wake(event)
    assert waker._pending == []


def test_a_write_committed_on_the_loop_wakes_its_watches_without_a_handoff(
        count_handoffs: Callable[[asyncio.AbstractEventLoop], list[object]]) -> None:
    async def run() -> tuple[bool, int]:
        loop = asyncio.get_running_loop()
        waker = _Waker(loop, threading.get_ident())
        handoffs = count_handoffs(loop)
        on_loop, from_thread = asyncio.Event(), asyncio.Event()
        waker.wake(on_loop)  # as the store's publish does inside write_on_loop
        set_at_once = on_loop.is_set()
        writer = threading.Thread(target=waker.wake, args=(from_thread,))
        writer.start()
        await asyncio.wait_for(from_thread.wait(), 30)
        writer.join()
        return set_at_once, len(handoffs)

    set_at_once, handoffs = asyncio.run(run())
    assert set_at_once and handoffs == 1  # only the other thread's wake-up was handed over
