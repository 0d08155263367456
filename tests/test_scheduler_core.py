"""Pieces of the scheduling cycle that are pure functions of upstream's rules.

- ``num_feasible_nodes_to_find``: upstream schedule_one_test.go TestNumFeasibleNodesToFind.
- ``fit_error_message``: upstream framework/types.go FitError.Error(): reasons counted per
  node, each rendered "<count> <reason>", sorted as strings (so "10 x" sorts before "2 y"),
  joined by ", ", then the PostFilter message.
"""

from __future__ import annotations

import pytest

from kubesched.framework.status import Code, Status
from kubesched.scheduler.fiterror import fit_error_message, num_feasible_nodes_to_find


@pytest.mark.parametrize(("pct", "nodes", "want"), [
    (0, 10, 10),      # not set, <= 50 nodes
    (40, 10, 10),     # set, <= 50 nodes
    (0, 1000, 420),   # adaptive: 50 - 1000/125 = 42%
    (40, 1000, 400),
    (0, 6000, 300),   # adaptive floors at 5%: 6000*5/100
    (100, 5000, 5000),
], ids=["unset-small", "set-small", "adaptive-1000", "set-1000", "adaptive-floor", "all"])
def test_num_feasible_nodes_to_find(pct: int, nodes: int, want: int) -> None:
    assert num_feasible_nodes_to_find(pct, nodes) == want


def test_fit_error_histogram_is_sorted_as_strings() -> None:
    st_cpu = Status(Code.Unschedulable, ("Insufficient cpu",), "NodeResourcesFit")
    st_taint = Status(Code.UnschedulableAndUnresolvable, ("node(s) had untolerated taint {a: b}",), "TaintToleration")
    statuses = {f"n{i}": st_cpu for i in range(10)}
    statuses.update({"m1": st_taint, "m2": st_taint})
    msg = fit_error_message(12, statuses, None, 0, "", "")
    # "10 Insufficient cpu" < "2 node(s)..." as strings, as Go's sort.Strings orders them
    assert msg == "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) had untolerated taint {a: b}."


def test_fit_error_prefilter_and_postfilter_messages() -> None:
    st = Status(Code.UnschedulableAndUnresolvable, ("node(s) didn't satisfy plugin(s) [NodeAffinity]",))
    msg = fit_error_message(5, {"a": Status(Code.Unschedulable, ("Insufficient cpu",))}, st, 4, "",
                            "preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.")
    assert msg == ("0/5 nodes are available: 1 Insufficient cpu, 4 node(s) didn't satisfy plugin(s) "
                   "[NodeAffinity]. preemption: 0/5 nodes are available: 5 Preemption is not helpful "
                   "for scheduling.")
    assert fit_error_message(3, {}, None, 0, "waiting", "") == "0/3 nodes are available: waiting."
