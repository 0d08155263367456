"""``EventRecorder``: events.k8s.io/v1 Events as upstream's scheduler writes them
(client-go ``tools/events``).

Recording never blocks the scheduler: events are queued (at most ``max_queued``; more are
dropped, as upstream's broadcaster drops when its channel is full) and written in the
background. Upstream writes each event from its own goroutine, so a slow API server does
not hold up the next one; here one thread correlates them (the series below) and
``writers`` threads send them, each isomorphic event always by the same writer (a series'
patch after its create). One writer, where events queue behind each request's round trip,
kept up with ~20 events/s under a loaded ``serve`` and dropped the rest. Each Event names the object it is about (``regarding``, with its
resourceVersion) and optionally a ``related`` one (the preemptor, for ``Preempted``); its
``reportingController`` is the scheduler profile's name and ``reportingInstance`` that
name plus the host name. ``note`` is cut to 1,024 bytes, ending in `` ...``, as upstream's
``truncateMessage`` cuts it.

``guard`` (the sink's, with leader election the elector's fence) runs right before each
request is sent; what it refuses (``FencedError``) is not written.

Isomorphic events (same type, reason, action, reporter, regarding and related objects)
within six minutes become a series: the first is created, the second patches the first
with ``series.count`` 2, later ones only count (upstream patches them every 30 minutes).
"""

from __future__ import annotations

import datetime as dt
import logging
import queue
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.api.objects import Pod
from kubesched.cluster.kube.client import MERGE_PATCH, KubeClient, call_with_retries
from kubesched.cluster.kube.errors import ApiStatusError, KubeClientError, retriable
from kubesched.cluster.kube.resources import EVENTS

log = logging.getLogger(__name__)

NOTE_LENGTH_LIMIT = 1024
SERIES_FINISH = 6 * 60.0
MAX_QUEUED = 1000
WRITERS = 8


def truncate_message(message: str, limit: int = NOTE_LENGTH_LIMIT) -> str:
    """Upstream ``truncateMessage``: at most ``limit`` bytes, ending in " ..." when cut."""
    data = message.encode()
    if len(data) <= limit:
        return message
    suffix = b" ..."
    return (data[:limit - len(suffix)] + suffix).decode(errors="ignore")


def micro_time(t: float) -> str:
    """A metav1.MicroTime: RFC 3339 with microseconds, in UTC."""
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def object_reference(pod: Pod) -> dict[str, str]:
    """``reference.GetReference`` of a pod."""
    meta = pod.raw.get("metadata") or {}
    ref = {"kind": "Pod", "namespace": pod.namespace, "name": pod.name, "uid": pod.uid, "apiVersion": "v1"}
    rv = str(meta.get("resourceVersion") or "")
    if rv:
        ref["resourceVersion"] = rv
    return ref


@dataclass(slots=True)
class _Series:
    event: dict[str, Any]
    count: int
    last: float


def _ref_key(ref: dict[str, str] | None) -> tuple[tuple[str, str], ...]:
    return () if ref is None else tuple(sorted(ref.items()))


class EventRecorder:
    def __init__(self, client: KubeClient, *, hostname: str | None = None,
                 clock: Callable[[], float] = time.time, max_queued: int = MAX_QUEUED,
                 guard: Callable[[], None] | None = None, writers: int = WRITERS) -> None:
        self.client = client
        self.guard = guard
        self.hostname = hostname if hostname is not None else socket.gethostname()
        self.clock = clock
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue(max_queued)
        self._series: OrderedDict[tuple[Any, ...], _Series] = OrderedDict()  # least recently seen first
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.dropped = 0
        self.written = 0
        self._written_lock = threading.Lock()
        # each writer's own queue (bounded: when the writers fall behind, the main queue
        # fills and drops, as before)
        self._writer_queues: list[queue.Queue[tuple[dict[str, Any], dict[str, Any] | None] | None]] = [
            queue.Queue(max(1, max_queued // max(1, writers))) for _ in range(max(1, writers))]
        self._writers: list[threading.Thread] = []

    def start(self) -> None:
        self._writers = [threading.Thread(target=self._write_loop, args=(q,), name=f"event-writer-{i}", daemon=True)
                         for i, q in enumerate(self._writer_queues)]
        for t in self._writers:
            t.start()
        self._thread = threading.Thread(target=self._run, name="event-recorder", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Write what is queued (for up to ``timeout`` seconds), then stop."""
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:
            pass
        deadline = time.monotonic() + timeout
        if self._thread is not None:
            self._thread.join(timeout)
        for t in self._writers:
            t.join(max(0.0, deadline - time.monotonic()))
        self._stop.set()

    def eventf(self, regarding: Pod, related: Pod | None, type_: str, reason: str, action: str,
               note: str, controller: str) -> None:
        """Queue one Event (never blocks)."""
        now = self.clock()
        ref = object_reference(regarding)
        ev: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": f"{regarding.name}.{int(now * 1e9):x}", "namespace": regarding.namespace or "default"},
            "eventTime": micro_time(now), "reportingController": controller,
            "reportingInstance": f"{controller}-{self.hostname}", "action": action, "reason": reason,
            "regarding": ref, "note": truncate_message(note), "type": type_,
        }
        if related is not None:
            ev["related"] = object_reference(related)
        try:
            self._queue.put_nowait(ev)
        except queue.Full:
            self.dropped += 1
            log.debug("event queue full: dropped %s %s", reason, regarding.key)

    # -- the writer ------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            ev = self._queue.get()
            if ev is None:
                for q in self._writer_queues:
                    q.put(None)  # each writer sends what it has, then stops
                return
            try:
                self._record(ev)
            except Exception:  # noqa: BLE001 - a bad event must not stop the writer
                log.exception("recording event %s", ev.get("reason"))

    def _send(self, key: tuple[Any, ...], ev: dict[str, Any], series: dict[str, Any] | None) -> None:
        """Hand the write to the writer of ``key`` (waits while that writer's queue is full)."""
        if not self._writers:  # not started: write here
            self._write(ev, series)
            return
        self._writer_queues[hash(key) % len(self._writer_queues)].put((ev, series))

    def _write_loop(self, q: "queue.Queue[tuple[dict[str, Any], dict[str, Any] | None] | None]") -> None:
        while True:
            item = q.get()
            if item is None:
                return
            try:
                self._write(*item)
            except Exception:  # noqa: BLE001 - a bad event must not stop the writer
                log.exception("writing event %s", item[0].get("reason"))

    def _key(self, ev: dict[str, Any]) -> tuple[Any, ...]:
        return (ev["type"], ev["action"], ev["reason"], ev["reportingController"], ev["reportingInstance"],
                _ref_key(ev["regarding"]), _ref_key(ev.get("related")))

    def _record(self, ev: dict[str, Any]) -> None:
        now = self.clock()
        while self._series:
            first = next(iter(self._series.values()))
            if now - first.last <= SERIES_FINISH:
                break
            self._series.popitem(last=False)
        key = self._key(ev)
        known = self._series.get(key)
        if known is None:
            self._series[key] = _Series(ev, 1, now)
            self._send(key, ev, None)
            return
        known.count += 1
        known.last = now
        self._series.move_to_end(key)
        if known.count == 2:
            self._send(key, known.event, {"count": 2, "lastObservedTime": micro_time(now)})

    def _write(self, ev: dict[str, Any], series: dict[str, Any] | None) -> None:
        ns, name = ev["metadata"]["namespace"], ev["metadata"]["name"]

        def create(body: dict[str, Any]) -> None:
            self.client.request("POST", f"{EVENTS.prefix}/namespaces/{ns}/events", body=body, guard=self.guard)

        def send() -> None:
            if series is None:
                create(ev)
                return
            try:
                self.client.request("PATCH", EVENTS.object_path(ns, name), body={"series": series},
                                    content_type=MERGE_PATCH, guard=self.guard)
            except ApiStatusError as exc:
                if not exc.not_found:
                    raise
                create({**ev, "series": series})

        try:
            call_with_retries(send, attempts=4, initial=0.2, stop=self._stop, should_retry=retriable)
            with self._written_lock:
                self.written += 1
        except KubeClientError as exc:
            log.info("event %s for %s/%s not written: %s", ev["reason"], ns, ev["regarding"]["name"], exc)
