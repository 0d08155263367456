"""Orders that preemption decides by: which pod is more important, and which candidate
node is the best one to preempt on (upstream ``util.MoreImportantPod``,
``util.GetEarliestPodStartTime`` and ``preemption.pickOneNodeForPreemption``).

Start times are compared as instants in integer nanoseconds. A pod without
``status.startTime`` counts as started "now" (upstream ``GetPodStartTime`` uses
``time.Now()``), that is after every recorded start time: the scheduler's clock is a
virtual or monotonic one, not wall-clock time, so it cannot be compared with start
times. Such pods tie with each other (upstream reads the clock at each comparison).
"""

from __future__ import annotations

import calendar
import logging
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from kubesched.api.objects import Pod

log = logging.getLogger(__name__)

MAX_INT32 = 2**31 - 1
MIN_INT64 = -(2**63)
LATEST_NS = 2**63 - 1  # "now": later than any recorded start time


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node the preemptor could be nominated to, with the pods to evict there (most
    important first) and how many of them would violate a PodDisruptionBudget."""

    name: str
    victims: tuple[Pod, ...]
    num_pdb_violations: int


_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
                      r"(?:([Zz])|([+-])(\d{2}):(\d{2}))")


@lru_cache(maxsize=4096)
def parse_time_ns(value: str) -> int | None:
    """An RFC 3339 timestamp as nanoseconds since the epoch; None when unparseable."""
    m = _RFC3339.fullmatch(value.strip())
    if m is None:
        return None
    y, mo, d, h, mi, sec = (int(g) for g in m.groups()[:6])
    secs = calendar.timegm((y, mo, d, h, mi, sec, 0, 0, 0))
    if m.group(9):
        offset = int(m.group(10)) * 3600 + int(m.group(11)) * 60
        secs -= offset if m.group(9) == "+" else -offset
    frac = (m.group(7) or "")[:9].ljust(9, "0")
    return secs * 1_000_000_000 + int(frac)


class StartTimes:
    """``GetPodStartTime`` with one "now" (nanoseconds) for pods that have no start time."""

    __slots__ = ("now_ns",)

    def __init__(self, now_ns: int = LATEST_NS) -> None:
        self.now_ns = now_ns

    def of(self, pod: Pod) -> int:
        if pod.start_time:
            t = parse_time_ns(pod.start_time)
            if t is not None:
                return t
        return self.now_ns

    def more_important(self, a: Pod, b: Pod) -> bool:
        """``MoreImportantPod``: higher priority, then the earlier start time."""
        if a.priority != b.priority:
            return a.priority > b.priority
        return self.of(a) < self.of(b)

    def earliest_start_of_highest_priority(self, victims: Sequence[Pod]) -> int | None:
        """``GetEarliestPodStartTime``: the earliest start among the highest-priority victims."""
        if not victims:
            return None
        earliest = self.of(victims[0])
        top = victims[0].priority
        for p in victims:
            if p.priority == top:
                t = self.of(p)
                if t < earliest:
                    earliest = t
            elif p.priority > top:
                top = p.priority
                earliest = self.of(p)
        return earliest


def score_functions(by_node: Mapping[str, Candidate], times: StartTimes,
                    ) -> list[Callable[[str], int]]:
    """Upstream's ordered criteria, each a score where higher is better."""

    def fewest_pdb_violations(node: str) -> int:
        return -by_node[node].num_pdb_violations

    def lowest_highest_priority(node: str) -> int:
        return -by_node[node].victims[0].priority

    def lowest_priority_sum(node: str) -> int:
        # Shifting every priority by MaxInt32+1 makes them all >= 0, so that more
        # victims never look better than fewer ones of the same negative priority.
        return -sum(p.priority + MAX_INT32 + 1 for p in by_node[node].victims)

    def fewest_victims(node: str) -> int:
        return -len(by_node[node].victims)

    def latest_start_time(node: str) -> int:
        t = times.earliest_start_of_highest_priority(by_node[node].victims)
        if t is None:
            log.error("unexpected nil earliest start time for node %s", node)
            return MIN_INT64
        return t

    return [fewest_pdb_violations, lowest_highest_priority, lowest_priority_sum,
            fewest_victims, latest_start_time]


def pick_tie_set(candidates: Sequence[Candidate], times: StartTimes) -> list[str]:
    """``pickOneNodeForPreemption`` up to the last criterion: the nodes still tied (a
    single node when a criterion decided). Kept in ``candidates``' order."""
    by_node = {c.name: c for c in candidates}
    remaining = list(by_node)
    for f in score_functions(by_node, times):
        if len(remaining) <= 1:
            break
        scores = [f(n) for n in remaining]
        best = max(scores)
        remaining = [n for n, s in zip(remaining, scores) if s == best]
    return remaining


def choose_from_ties(ties: Sequence[str], by_name: bool, rng: random.Random) -> str:
    """Upstream takes the first node of a Go map iteration, i.e. a random one; with
    ``by_name`` the lexicographically smallest name is taken instead."""
    if not ties:
        return ""
    if len(ties) == 1 or by_name:
        return min(ties)
    return ties[rng.randrange(len(ties))]
