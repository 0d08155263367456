"""The bounded memory of what the live scheduler did to each pod, for ``/debug/explain``.

``serve`` and ``run`` keep, per pod, its last ``per_pod`` attempts (each with per-node
verdicts and scores) and its last ``moves_per_pod`` queue moves (activeQ, backoffQ,
unschedulable, gated, ...), and at most ``max_attempts`` attempts in all: when the cap is
reached the oldest attempt of the pod touched least recently goes first (an LRU over pods),
and a pod left without attempts is forgotten with its moves. Pods that only moved (never
attempted: gated) count towards the same cap, one each, so memory stays bounded.

Written by the scheduling loop and the queue's move listener, both under the scheduler's
lock; read by HTTP threads, which take the store's own lock (cheap: appends and pops).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.explanation.limits import DEFAULT_MAX_ATTEMPTS, DEFAULT_PER_POD
from kubesched.queue.moves import QueueMove
from kubesched.explanation.attempt import Attempt

DEFAULT_MOVES_PER_POD = 20


@dataclass(slots=True)
class _PodRecord:
    attempts: deque[Attempt]
    moves: deque[QueueMove]
    numbers: deque[int] = field(default_factory=deque)  # each kept attempt's number (1 = first)
    total: int = 0  # attempts ever recorded for the pod


class ExplainStore:
    def __init__(self, per_pod: int = DEFAULT_PER_POD, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
                 moves_per_pod: int = DEFAULT_MOVES_PER_POD) -> None:
        if per_pod < 1 or max_attempts < 1:
            raise ValueError("explain store: per_pod and max_attempts must be at least 1")
        self.per_pod = per_pod
        self.max_attempts = max_attempts
        self.moves_per_pod = moves_per_pod
        self._pods: OrderedDict[str, _PodRecord] = OrderedDict()
        self._count = 0  # attempts kept, plus one per pod with moves only
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._count

    def _record(self, key: str) -> _PodRecord:
        rec = self._pods.get(key)
        if rec is None:
            rec = _PodRecord(deque(), deque(maxlen=self.moves_per_pod))
            self._pods[key] = rec
            self._count += 1  # a placeholder until its first attempt
        else:
            self._pods.move_to_end(key)
        return rec

    def add_attempt(self, key: str, att: Attempt) -> None:
        with self._lock:
            rec = self._record(key)
            if not rec.attempts:
                self._count -= 1  # the placeholder gives way to the attempt
            rec.total += 1
            rec.attempts.append(att)
            rec.numbers.append(rec.total)
            self._count += 1
            if len(rec.attempts) > self.per_pod:
                rec.attempts.popleft()
                rec.numbers.popleft()
                self._count -= 1
            self._evict()

    def on_move(self, move: QueueMove) -> None:
        """The queue's listener: remember the pod's move."""
        with self._lock:
            self._record(move.pod).moves.append(move)
            self._evict()

    def _evict(self) -> None:
        while self._count > self.max_attempts and self._pods:
            key, rec = next(iter(self._pods.items()))
            if len(rec.attempts) > 1:
                rec.attempts.popleft()
                rec.numbers.popleft()
                self._count -= 1
            else:
                del self._pods[key]
                self._count -= 1

    def last(self, key: str) -> Attempt | None:
        with self._lock:
            rec = self._pods.get(key)
            return rec.attempts[-1] if rec is not None and rec.attempts else None

    def attempts(self, key: str) -> list[Attempt]:
        with self._lock:
            rec = self._pods.get(key)
            return list(rec.attempts) if rec is not None else []

    def document(self, key: str, to_unix: Callable[[float], float]) -> dict[str, Any] | None:
        """The explain document of a pod (see the README's "Explain JSON"): the last attempt's
        keys at the top level, then ``attempts`` (oldest first) and ``history``."""
        with self._lock:
            rec = self._pods.get(key)
            if rec is None or not rec.attempts:
                return None
            atts = list(zip(rec.numbers, rec.attempts))
            moves = list(rec.moves)
            total = rec.total
        docs = []
        for number, att in atts:
            d = att.to_json()
            d["time"] = to_unix(att.time)
            d["attempt"] = number
            docs.append(d)
        history: list[dict[str, Any]] = [
            {"time": d["time"], "event": "attempt", "attempt": d["attempt"], "result": d["result"],
             "node": d["chosen"], "message": d["message"]} for d in docs]
        for m in moves:
            e: dict[str, Any] = {"time": to_unix(m.time), "event": "move", "from": m.src, "to": m.dst,
                                 "trigger": m.event}
            if m.backoff_expiration is not None and m.backoff_expiration != -math.inf:
                e["backoffExpiration"] = to_unix(m.backoff_expiration)
            history.append(e)
        history.sort(key=lambda e: e["time"])
        doc = dict(docs[-1])
        doc.update({"pod": key, "attemptsTotal": total, "attempts": docs, "history": history})
        return doc
