"""The scheduler inside ``kubesched serve``: a server :class:`Component` that runs a
:class:`LiveScheduler` against the server over HTTP, through the kubeconfig the server
wrote, exactly as it would run against a real cluster.

It starts once the server answers ``/readyz`` (the server starts its components just
before it accepts connections). It stops as soon as the server begins to shut down (so its
bindings in flight still get answers and its connections are closed before the server
waits for them), or at the latest when the server stops its components. The component
owns the scheduler's client and closes it; the scheduler's metrics appear on the
server's ``/metrics`` and its explanations on ``/debug/explain/<namespace>/<pod>``.

:meth:`restart` replaces the scheduler with one built from a new configuration (the web
UI's configuration page): the new one is built first (a profile that cannot be built
raises and the old one keeps running), then the old one stops and the new one starts on
the same client and metrics; its caches are rebuilt from the API, as a new leader's are.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from kubesched.cluster.kube.errors import KubeClientError
from kubesched.config import SchedulerConfig
from kubesched.live.scheduler import LiveScheduler

log = logging.getLogger(__name__)


class SchedulerComponent:
    name = "scheduler"

    def __init__(self, live: LiveScheduler, on_ready: Callable[[LiveScheduler], None] | None = None,
                 start_timeout: float = 60.0,
                 explain_text: Callable[[dict[str, Any]], str] | None = None) -> None:
        """``explain_text``: renders an explain document as ``?output=text`` shows it."""
        self.live = live
        self.explain_text = explain_text
        self.on_ready = on_ready
        self.start_timeout = start_timeout
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._started = False
        self._stopped = False

    def start(self, server: Any) -> None:
        api_metrics = getattr(getattr(server, "state", None), "metrics", None)
        if api_metrics is not None:  # the scheduler's metrics on the server's /metrics
            api_metrics.registry.register(self.live.metrics.registry)
        state = getattr(server, "state", None)
        if state is not None and hasattr(state, "explain"):  # the server's /debug/explain
            state.explain = self._explain  # the current scheduler's, across restarts
            state.explain_text = self._explain_text if self.explain_text is not None else None
            if hasattr(state, "explain_fixes"):
                state.explain_fixes = lambda ns, name, limit: self.live.explain_fixes(ns, name, limit)
        stopping = getattr(getattr(server, "state", None), "stopping", None)
        self._thread = threading.Thread(target=self._run, args=(stopping,), name="scheduler-component",
                                        daemon=True)
        self._thread.start()

    def _explain(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.live.explain(namespace, name)

    def _explain_text(self, namespace: str, name: str) -> str | None:
        doc = self.live.explain(namespace, name)
        if doc is None or self.explain_text is None:
            return None
        return self.explain_text(doc)

    def _run(self, server_stopping: threading.Event | None) -> None:
        if not self._wait_for_server():
            return
        with self._lock:
            if self._stopped:
                return
            self.live.start()
            self._started = True
        if self.on_ready is not None and self._wait_ready(server_stopping):
            self.on_ready(self.live)
        while server_stopping is not None and not self._stop.is_set():
            if server_stopping.wait(0.2):
                self._shutdown()
                return

    def _wait_ready(self, server_stopping: threading.Event | None) -> bool:
        """Whether the scheduler's caches synced within ``start_timeout``; False at once
        when :meth:`stop` is called or the server begins to shut down meanwhile (a server
        stopped right after it started answers no list: waiting out the whole timeout kept
        ``stop`` -- and the server's exit -- waiting for it)."""
        deadline = time.monotonic() + self.start_timeout
        while not self._stop.is_set() and not (server_stopping is not None and server_stopping.is_set()):
            left = deadline - time.monotonic()
            if self.live.wait_ready(min(0.1, max(left, 0.0))):
                return not self._stop.is_set()
            if left <= 0:
                return False
        return False

    def _wait_for_server(self) -> bool:
        waited = 0.0
        while not self._stop.is_set():
            try:
                self.live.client.request("GET", "/readyz", timeout=5.0)
                return True
            except KubeClientError as exc:
                if waited >= self.start_timeout:
                    log.error("the API server is not ready after %.0fs (%s): scheduler not started", waited, exc)
                    return False
            self._stop.wait(0.05)
            waited += 0.05
        return False

    def restart(self, config: SchedulerConfig) -> None:
        """Run a scheduler built from ``config`` instead of the current one."""
        old = self.live
        new = LiveScheduler(config, old.client, old.options, metrics=old.metrics)  # raises: old kept
        with self._lock:
            if self._stopped:
                return
            started = self._started
            if started:
                old.stop()
            new.adopt_explanations(old.store)  # explanations survive the restart
            self.live = new
            if started:
                new.start()
        log.info("scheduler restarted with profiles %s", ", ".join(new.profiles))

    def _shutdown(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            started = self._started
        if started:
            self.live.stop()
        self.live.client.close()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(30.0)
        self._shutdown()
