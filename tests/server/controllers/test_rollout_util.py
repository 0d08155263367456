"""Rollout arithmetic against upstream's tables in
``pkg/controller/deployment/util/deployment_util_test.go`` (TestResolveFenceposts,
TestNewRSNewReplicas, TestDeploymentComplete, TestDeploymentProgressing,
TestDeploymentTimedOut, TestMaxUnavailable, TestSetCondition, TestEqualIgnoreHash)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from kubesched.server.controllers import rollout as R
from kubesched.server.controllers.naming import HASH_LABEL, equal_ignore_hash


@pytest.mark.parametrize(("surge", "unavailable", "desired", "want"), [
    ("0%", "0%", 0, (0, 1)),
    ("39%", "39%", 10, (4, 3)),
    ("oops", "39%", 10, None),
    ("55%", "urg", 10, None),
    (None, "39%", 10, (0, 3)),
    ("39%", None, 10, (4, 0)),
    (None, None, 10, (0, 1)),
], ids=["zero-zero", "percent-rounding", "bad-surge", "bad-unavailable", "no-surge", "no-unavailable", "none"])
def test_resolve_fenceposts(surge: str | None, unavailable: str | None, desired: int,
                            want: tuple[int, int] | None) -> None:
    if want is None:
        with pytest.raises(ValueError):
            R.resolve_fenceposts(surge, unavailable, desired)
    else:
        assert R.resolve_fenceposts(surge, unavailable, desired) == want


def _deployment(desired: int, strategy: str = "RollingUpdate", max_surge: Any = 1, max_unavailable: Any = 1,
                **status: int) -> dict[str, Any]:
    return {"metadata": {}, "spec": {"replicas": desired, "strategy": {
        "type": strategy, "rollingUpdate": {"maxSurge": max_surge, "maxUnavailable": max_unavailable}}},
        "status": status}


def _rs(replicas: int) -> dict[str, Any]:
    return {"metadata": {}, "spec": {"replicas": replicas}}


@pytest.mark.parametrize(("strategy", "dep", "new_rs", "surge", "want"), [
    ("RollingUpdate", 1, 5, 1, 5),
    ("RollingUpdate", 6, 2, 10, 6),
    ("Recreate", 3, 1, 1, 3),
], ids=["can-not-scale-up", "scale-up-to-replicas", "recreate"])
def test_new_rs_new_replicas(strategy: str, dep: int, new_rs: int, surge: int, want: int) -> None:
    d = _deployment(dep, strategy, max_surge=surge)
    # upstream passes allRSs = [rs5] (5 replicas) and the new ReplicaSet separately
    assert R.new_rs_replicas(d, [_rs(5)], new_rs) == want


@pytest.mark.parametrize(("args", "want"), [
    ((5, 5, 5, 4, 1, 0), False),
    ((5, 5, 5, 3, 1, 0), False),
    ((5, 5, 5, 5, 0, 0), True),
    ((5, 5, 4, 5, 0, 0), False),
    ((1, 2, 1, 1, 0, 1), False),
    ((1, 1, 1, 0, 1, 1), False),
], ids=["min-not-all-available", "min-not-honored", "complete", "available-not-updated", "old-pods-running",
        "never-comes-up"])
def test_deployment_complete(args: tuple[int, ...], want: bool) -> None:
    desired, current, updated, available, unavailable, surge = args
    d = _deployment(desired, max_surge=surge, max_unavailable=unavailable, replicas=current,
                    updatedReplicas=updated, availableReplicas=available)
    assert R.complete(d, d["status"]) is want


def _counts(current: int, updated: int, ready: int, available: int) -> dict[str, int]:
    return {"replicas": current, "updatedReplicas": updated, "readyReplicas": ready, "availableReplicas": available}


@pytest.mark.parametrize(("old", "new", "want"), [
    ((10, 4, 4, 4), (10, 6, 4, 4), True),
    ((10, 4, 4, 4), (10, 4, 4, 4), False),
    ((10, 4, 6, 6), (8, 4, 6, 6), True),
    ((10, 7, 3, 3), (10, 6, 3, 3), False),
    ((10, 4, 7, 7), (8, 8, 5, 5), True),
    ((10, 10, 9, 8), (10, 10, 10, 8), True),
    ((10, 10, 10, 9), (10, 10, 10, 10), True),
], ids=["updated-pods", "not-progressing", "old-pods-removed", "less-new-pods", "less-overall-more-new",
        "more-ready", "more-available"])
def test_deployment_progressing(old: tuple[int, ...], new: tuple[int, ...], want: bool) -> None:
    d = {"metadata": {}, "spec": {}, "status": _counts(*old)}
    assert R.progressing(d, _counts(*new)) is want


def _at(minute: int, sec: int) -> float:
    return dt.datetime(2016, 1, 1, 0, minute, sec, tzinfo=dt.timezone.utc).timestamp()


@pytest.mark.parametrize(("reason", "pds", "since", "now", "want"), [
    ("", None, _at(1, 9), _at(1, 20), False),
    ("", 2**31 - 1, _at(1, 9), _at(1, 20), False),
    ("", 10, _at(1, 9), _at(1, 20), True),
    ("", 10, _at(1, 11), _at(1, 20), False),
    (R.NEW_RS_AVAILABLE, None, 0.0, _at(1, 20), False),
], ids=["nil-deadline", "infinite-deadline", "11s-of-10s", "9s-of-10s", "previously-complete"])
def test_deployment_timed_out(reason: str, pds: int | None, since: float, now: float, want: bool) -> None:
    cond = {"type": "Progressing", "status": "True", "reason": reason,
            "lastUpdateTime": dt.datetime.fromtimestamp(since, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    d: dict[str, Any] = {"metadata": {}, "spec": {} if pds is None else {"progressDeadlineSeconds": pds},
                         "status": {"conditions": [cond]}}
    assert R.timed_out(d, d["status"], now) is want


@pytest.mark.parametrize(("replicas", "unavailable", "strategy", "want"), [
    (10, 5, "RollingUpdate", 5),
    (10, 10, "RollingUpdate", 10),
    (5, 10, "RollingUpdate", 5),
    (0, 10, "RollingUpdate", 0),
    (0, None, "Recreate", 0),
    (10, "50%", "RollingUpdate", 5),
    (10, "100%", "RollingUpdate", 10),
    (5, "100%", "RollingUpdate", 5),
], ids=["less", "equal", "greater", "zero-replicas", "recreate", "less-percent", "equal-percent",
        "greater-percent"])
def test_max_unavailable(replicas: int, unavailable: Any, strategy: str, want: int) -> None:
    assert R.max_unavailable(_deployment(replicas, strategy, max_surge=1, max_unavailable=unavailable)) == want


PROGRESSING = {"type": "Progressing", "status": "False", "reason": "ForSomeReason"}
PROGRESSING2 = {"type": "Progressing", "status": "True", "reason": "BecauseItIs"}
AVAILABLE = {"type": "Available", "status": "True", "reason": "AwesomeController"}


@pytest.mark.parametrize(("before", "cond", "after"), [
    ([], AVAILABLE, [AVAILABLE]),
    ([PROGRESSING], AVAILABLE, [PROGRESSING, AVAILABLE]),
    ([PROGRESSING], PROGRESSING2, [PROGRESSING2]),
], ids=["first-time", "simple-set", "overwrite"])
def test_set_condition(before: list[dict[str, str]], cond: dict[str, str], after: list[dict[str, str]]) -> None:
    st: dict[str, Any] = {"conditions": [dict(c) for c in before]} if before else {}
    R.set_condition(st, dict(cond))
    assert st.get("conditions", []) == after


def _template(name: str, node: str, annotations: dict[str, str], labels: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"name": name, "annotations": annotations, "labels": labels}, "spec": {"nodeName": node}}


H = HASH_LABEL


@pytest.mark.parametrize(("a", "b", "want"), [
    (_template("foo", "foo-node", {}, {H: "value-1", "something": "else"}),
     _template("foo", "foo-node", {}, {H: "value-1", "something": "else"}), True),
    (_template("foo", "foo-node", {}, {H: "value-1", "something": "else"}),
     _template("foo", "foo-node", {}, {H: "value-2", "something": "else"}), True),
    (_template("foo", "foo-node", {}, {"something": "else"}),
     _template("foo", "foo-node", {}, {H: "value-2", "something": "else"}), True),
    (_template("foo", "foo-node", {}, {"something": "else"}), _template("foo", "foo-node", {}, {H: "value-2"}), False),
    (_template("foo", "foo-node", {}, {H: "value-1"}), _template("foo", "foo-node", {}, {"something": "else"}), False),
    (_template("foo", "foo-node", {}, {H: "value-1"}),
     _template("foo", "foo-node", {}, {H: "value-1", "something": "else"}), False),
    (_template("foo", "foo-node", {"former": "value"}, {H: "value-1", "something": "else"}),
     _template("foo", "foo-node", {"latter": "value"}, {H: "value-1", "something": "else"}), False),
    (_template("foo-1", "foo-node", {}, {H: "value-1", "something": "else"}),
     _template("foo-2", "foo-node", {}, {H: "value-2", "something": "else"}), False),
    (_template("foo-1", "foo-node-1", {}, {"something": "else"}),
     _template("foo-2", "foo-node-2", {}, {H: "value-2", "something": "else"}), False),
    (_template("foo", "foo-node-1", {}, {"something": "else"}),
     _template("foo", "foo-node-2", {}, {"nothing": "else"}), False),
], ids=["same", "hash-differs", "former-no-hash", "labels-differ-former-no-hash", "labels-differ-latter-no-hash",
        "labels-differ-same-hash", "spec-differs", "spec-and-hash-differ", "spec-differs-no-hash",
        "spec-and-labels-differ"])
def test_equal_ignore_hash(a: dict[str, Any], b: dict[str, Any], want: bool) -> None:
    assert equal_ignore_hash(a, b) is want
    assert equal_ignore_hash(b, a) is want  # upstream checks both orders
