"""The bounded explain store of ``serve`` and ``run``: N attempts per pod, a global cap with
the least recently tried pod's oldest attempt dropped first, queue moves in the history."""

from __future__ import annotations

import pytest

from kubesched.explanation.store import ExplainStore
from kubesched.queue.moves import QueueMove
from kubesched.explanation.attempt import Attempt


def att(t: float, result: str = "Unschedulable") -> Attempt:
    return Attempt(time=t, result=result, message=f"at {t}")


def test_per_pod_limit_keeps_the_latest() -> None:
    store = ExplainStore(per_pod=3, max_attempts=100)
    for t in range(5):
        store.add_attempt("ns/p", att(t))
    doc = store.document("ns/p", lambda t: 1000 + t)
    assert doc is not None
    assert [a["attempt"] for a in doc["attempts"]] == [3, 4, 5] and doc["attemptsTotal"] == 5
    assert [a["time"] for a in doc["attempts"]] == [1002, 1003, 1004]
    assert doc["time"] == 1004 and doc["message"] == "at 4"  # the last attempt's keys at the top
    assert len(store) == 3


def test_global_cap_drops_least_recently_tried_first() -> None:
    store = ExplainStore(per_pod=5, max_attempts=4)
    store.add_attempt("ns/a", att(0))
    store.add_attempt("ns/a", att(1))
    store.add_attempt("ns/b", att(2))
    store.add_attempt("ns/c", att(3))
    store.add_attempt("ns/c", att(4))  # 5 > 4: a (least recently tried) loses its oldest
    assert [x.time for x in store.attempts("ns/a")] == [1]
    store.add_attempt("ns/d", att(5))  # a's last attempt goes, and a with it
    assert store.attempts("ns/a") == [] and store.document("ns/a", float) is None
    assert len(store) == 4 and store.last("ns/d") is not None and store.last("ns/b") is not None


def test_moves_are_history_and_bounded() -> None:
    store = ExplainStore(per_pod=2, max_attempts=3, moves_per_pod=2)
    store.on_move(QueueMove(0.0, "ns/p", "new", "activeQ", "PodAdd"))
    store.on_move(QueueMove(1.0, "ns/p", "activeQ", "inFlight", "Pop"))
    store.add_attempt("ns/p", att(1.0))
    store.on_move(QueueMove(2.0, "ns/p", "inFlight", "backoffQ", "ScheduleAttemptFailure", 3.0))
    doc = store.document("ns/p", float)
    assert doc is not None
    assert [(e["event"], e["time"]) for e in doc["history"]] == [("attempt", 1.0), ("move", 1.0), ("move", 2.0)]
    assert doc["history"][-1] == {"time": 2.0, "event": "move", "from": "inFlight", "to": "backoffQ",
                                  "trigger": "ScheduleAttemptFailure", "backoffExpiration": 3.0}
    # pods that only moved (gated, never tried) count against the cap too
    for i in range(5):
        store.on_move(QueueMove(3.0, f"ns/g{i}", None, "gated", "PodAdd"))
    assert len(store) <= 3


def test_bad_bounds_refused() -> None:
    with pytest.raises(ValueError):
        ExplainStore(per_pod=0)
