"""``EventRecorder``'s writers: events are sent concurrently (upstream's events/v1 broadcaster
writes each from its own goroutine: client-go tools/events/event_broadcaster.go
``recordToSink``), so a slow API server does not make the queue overflow at a few events a
second; an isomorphic event's series patch still follows its create."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

from kubesched.api.objects import Pod
from kubesched.cluster.kube.events import EventRecorder
from kubesched.testing.wrappers import make_pod


class SlowClient:
    """Answers every request after a random delay, recording (method, event name, series)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.sent: list[tuple[str, str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._rng = random.Random(7)

    def request(self, method: str, path: str, *, body: Any = None, **kw: Any) -> Any:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            pause = self._rng.uniform(0, self.delay)
        time.sleep(pause)
        with self._lock:
            self.in_flight -= 1
            name = body["metadata"]["name"] if method == "POST" else path.rsplit("/", 1)[1]
            self.sent.append((method, name, body.get("series")))
        return {}


def pods(n: int) -> list[Pod]:
    return [make_pod().name(f"p{i}").uid(f"u{i}").obj() for i in range(n)]


def test_events_are_written_concurrently_and_none_is_dropped() -> None:
    """200 events queued at once to a server taking up to 20 ms each: one writer would need
    ~2 s; eight writers send them all within the stop timeout, several at a time."""
    client = SlowClient(0.02)
    rec = EventRecorder(client, hostname="h", max_queued=1000, writers=8)  # type: ignore[arg-type]
    rec.start()
    for p in pods(200):
        rec.eventf(p, None, "Normal", "Scheduled", "Binding", f"Successfully assigned default/{p.name} to n1",
                   "default-scheduler")
    rec.stop(timeout=30.0)
    assert rec.dropped == 0 and rec.written == 200
    assert sorted(name.split(".")[0] for _, name, _ in client.sent) == sorted(f"p{i}" for i in range(200))
    assert client.max_in_flight > 1


def test_a_series_patch_follows_its_create() -> None:
    """Each of 30 pods gets the same FailedScheduling event twice: a create, then a patch to
    series.count 2 of the created event's name, in that order, whatever the delays."""
    client = SlowClient(0.01)
    rec = EventRecorder(client, hostname="h", writers=8)  # type: ignore[arg-type]
    rec.start()
    ps = pods(30)
    for p in ps:
        rec.eventf(p, None, "Warning", "FailedScheduling", "Scheduling", "0/1 nodes are available", "default-scheduler")
    for p in ps:
        rec.eventf(p, None, "Warning", "FailedScheduling", "Scheduling", "0/1 nodes are available", "default-scheduler")
    rec.stop(timeout=30.0)
    assert rec.written == 60
    for p in ps:
        mine = [(m, series) for m, name, series in client.sent if name.startswith(f"{p.name}.")]
        assert [m for m, _ in mine] == ["POST", "PATCH"], p.name
        assert mine[1][1]["count"] == 2
