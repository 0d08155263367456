"""An attempt's per-node filter verdicts and best nodes are built when read, from what the
cycle handed over (``explanation.record_filter``, ``Attempt.record_best``): the live
scheduler records every attempt and few are read, so the cycle must not build a map over
every node per pod. What a reader gets must be exactly what the eager code built: every
node in node order, ``ok`` for those that passed, the rejecting status, the absent
(PreFilter-excluded) status, or ``not evaluated``. Expected values are written out by hand."""

from __future__ import annotations

import numpy as np

from kubesched.explanation.attempt import NOT_EVALUATED, record_filter
from kubesched.framework.status import Code, Status
from kubesched.explanation.attempt import Attempt

NAMES = ["n1", "n2", "n3", "n4", "n5"]
FIT = Status(Code.Unschedulable, ("Insufficient cpu",), "NodeResourcesFit")
TAINT = Status(Code.UnschedulableAndUnresolvable, ("node(s) had untolerated taint {a: b}",), "TaintToleration")
ABSENT = Status(Code.UnschedulableAndUnresolvable, ("node(s) didn't satisfy plugin(s) [NodeAffinity]",),
                "NodeAffinity")


def test_filter_verdicts_in_node_order_as_the_eager_map() -> None:
    att = Attempt()
    statuses = {"n4": FIT, "n2": TAINT}
    record_filter(att, statuses, ABSENT, ["n3", "n4"], NAMES, not_evaluated=["n5"], reason="sampling")
    assert att.evaluation == {"nodes": 5, "evaluated": 4, "notEvaluated": 1, "reason": "sampling"}
    # n3 absent from the PreFilter result; n4 too, but its own status wins (it was evaluated)
    assert list(att.filter.items()) == [
        ("n1", "ok"), ("n2", TAINT.to_json()), ("n3", ABSENT.to_json()), ("n4", FIT.to_json()),
        ("n5", NOT_EVALUATED)]
    assert att.to_json()["filter"] is att.filter  # built once, then kept


def test_later_changes_to_the_cycles_maps_do_not_reach_a_recorded_attempt() -> None:
    att = Attempt()
    statuses = {"n1": FIT}
    absent_names = ["n2"]
    record_filter(att, statuses, ABSENT, absent_names, NAMES)
    statuses["n3"] = TAINT  # the next cycle reusing or changing what it handed over
    absent_names.append("n5")
    assert att.filter == {"n1": FIT.to_json(), "n2": ABSENT.to_json(), "n3": "ok", "n4": "ok", "n5": "ok"}


def test_a_new_record_or_an_assigned_map_replaces_the_old() -> None:
    att = Attempt()
    record_filter(att, {"n1": FIT}, None, [], NAMES)
    assert att.filter["n1"] == FIT.to_json()
    record_filter(att, {}, None, [], ["m1"])
    assert att.filter == {"m1": "ok"}
    att.filter = {"x": "ok"}
    assert att.filter == {"x": "ok"}
    assert Attempt().filter == {}


def test_nominated_fast_path_evaluation_is_set_at_record_time() -> None:
    att = Attempt()
    record_filter(att, {}, None, [], NAMES, reason="nominated", fast_path_node="n2")
    assert att.evaluation == {"nodes": 5, "evaluated": 1, "notEvaluated": 4,
                              "upstreamEvaluatedOnly": "n2", "reason": "nominated"}
    assert set(att.filter.values()) == {"ok"}


def test_best_is_the_rows_names_sorted_by_name() -> None:
    att = Attempt()
    names = ["z", "b", "m", "a"]
    att.record_best(names, np.array([0, 1, 3], np.intp))
    assert att.best == ["a", "b", "z"]
    assert att.to_json()["best"] == ["a", "b", "z"]
    att.best = ["m"]
    assert att.best == ["m"]
    assert Attempt().best == []
