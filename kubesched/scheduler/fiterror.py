"""Upstream's numbers and words for an attempt that finds no node: how many feasible nodes
to look for (``numFeasibleNodesToFind``), the ``0/N nodes are available`` message
(``FitError.Error()``), and the abort a Filter error causes."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kubesched.framework.status import Status

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NO_NODES_AVAILABLE = "no nodes available to schedule pods"


def num_feasible_nodes_to_find(percentage: int, num_all: int) -> int:
    """Upstream numFeasibleNodesToFind; ``percentage`` 0 is the adaptive formula."""
    if num_all < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all
    if percentage == 0:
        percentage = max(50 - num_all // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    n = num_all * percentage // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


def fit_error_message(num_all: int, statuses: Mapping[str, Status], absent: Status | None,
                      absent_count: int, pre_filter_msg: str, post_filter_msg: str) -> str:
    """Upstream ``FitError.Error()``: ``0/N nodes are available: <reasons>. <postfilter>``."""
    msg = f"0/{num_all} nodes are available:"
    if pre_filter_msg:
        msg += f" {pre_filter_msg}."
    else:
        hist: dict[str, int] = {}
        for st in statuses.values():
            for r in st.reasons:
                hist[r] = hist.get(r, 0) + 1
        if absent is not None and absent_count > 0:
            for r in absent.reasons:
                hist[r] = hist.get(r, 0) + absent_count
        parts = sorted(f"{v} {k}" for k, v in hist.items())
        if parts:
            msg += f" {', '.join(parts)}."
    if post_filter_msg:
        msg += f" {post_filter_msg}"
    return msg


class FilterAbort(Exception):
    """A Filter plugin returned Error: the attempt ends with that error (upstream aborts the
    whole filtering); ``statuses`` gives the verdicts found so far, for explanations."""

    def __init__(self, message: str, statuses: Callable[[], dict[str, Status]]) -> None:
        super().__init__(message)
        self.statuses = statuses
