"""``Attempt`` keeps the cycle's score columns and builds the per-node dictionaries that
``--explain`` and ``/debug/explain`` show only when they are read."""

from __future__ import annotations

import json

import numpy as np

from kubesched.explanation.attempt import ScoreDetail
from kubesched.explanation.attempt import Attempt


def record(att: Attempt, names: list[str], weighted: dict[str, np.ndarray], totals: np.ndarray) -> None:
    """What the cycle does: keep its arrays (scheduler.py ``_prioritize``)."""
    att.score_detail = ScoreDetail(names, {}, {}, {}, weighted, totals)


def test_score_columns_read_as_per_node_dicts_of_python_ints() -> None:
    att = Attempt()
    record(att, ["n1", "n2", "n3"],
           {"NodeResourcesFit": np.array([10, 20, 30], np.int64),
            "TaintToleration": np.array([300, 0, 100], np.int64)},
           np.array([310, 20, 130], np.int64))
    assert att.scores == {"n1": {"NodeResourcesFit": 10, "TaintToleration": 300},
                          "n2": {"NodeResourcesFit": 20, "TaintToleration": 0},
                          "n3": {"NodeResourcesFit": 30, "TaintToleration": 100}}
    assert att.totals == {"n1": 310, "n2": 20, "n3": 130}
    assert all(type(v) is int for s in att.scores.values() for v in s.values())
    doc = json.loads(json.dumps(att.to_json()))  # JSON as the endpoints send it
    assert doc["scores"]["n3"] == {"NodeResourcesFit": 30, "TaintToleration": 100}
    assert doc["totals"] == {"n1": 310, "n2": 20, "n3": 130}


def test_no_scores_recorded_reads_empty_and_a_new_record_replaces_the_old() -> None:
    att = Attempt()
    assert att.scores == {} and att.totals == {}
    record(att, ["a"], {"P": np.array([1])}, np.array([1]))
    assert att.totals == {"a": 1}
    record(att, ["b"], {}, np.array([1]))  # no score plugins: every node scores 1
    assert att.scores == {"b": {}} and att.totals == {"b": 1}
