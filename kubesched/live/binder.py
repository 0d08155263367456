"""Binding cycles in worker threads, so API calls overlap the next scheduling cycle
(upstream runs each binding cycle in a goroutine).

:class:`Binder` is what the live scheduler gives ``Scheduler(run_binding=...)``. It counts
the binding cycles in flight so a graceful stop can wait for them; after
:meth:`Binder.shutdown` a new one runs at once in the caller's thread (the sink is closed
by then, so it fails fast and the assumed pod is forgotten).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

log = logging.getLogger(__name__)


class Binder:
    def __init__(self, workers: int, after_each: Callable[[], None] | None = None) -> None:
        """``after_each`` runs in the worker after every binding cycle (the sink's flush
        of pending status updates, a wake-up of the scheduling loop)."""
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="binding")
        self._after_each = after_each
        self._cond = threading.Condition()
        self._in_flight = 0
        self._closed = False

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def submit(self, fn: Callable[[], None]) -> None:
        with self._cond:
            closed = self._closed
            if not closed:
                self._in_flight += 1
        if closed:
            self._run(fn)
            return
        try:
            self._pool.submit(self._tracked, fn)
        except RuntimeError:  # the pool shut down meanwhile
            self._tracked(fn)

    def _tracked(self, fn: Callable[[], None]) -> None:
        try:
            self._run(fn)
        finally:
            with self._cond:
                self._in_flight -= 1
                self._cond.notify_all()

    def _run(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception:  # noqa: BLE001 - a binding cycle's bug must not kill the worker
            log.exception("binding cycle failed")
        finally:
            if self._after_each is not None:
                try:
                    self._after_each()
                except Exception:  # noqa: BLE001
                    log.exception("after binding cycle")

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no binding cycle is in flight; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._in_flight:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def shutdown(self) -> None:
        """No more workers: later binding cycles run in the caller's thread."""
        with self._cond:
            self._closed = True
        self._pool.shutdown(wait=False)
