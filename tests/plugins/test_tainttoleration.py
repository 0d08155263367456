"""TaintToleration, both forms, against upstream's tables.

Cases ported from upstream ``pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go``
(TestTaintTolerationScore, TestTaintTolerationFilter, TestIsSchedulableAfterNodeChange,
Test_isSchedulableAfterPodChange as of v1.34: only the pod's own toleration update queues it).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.features import Features
from kubesched.framework.status import Code
from kubesched.plugins.tainttoleration import TaintToleration
from kubesched.testing.handle import handle_for
from kubesched.testing.harness import score_all

T = tuple[str, str, str]  # key, value, effect


def node(name: str, taints: list[T]) -> Node:
    return Node.from_dict({"metadata": {"name": name},
                           "spec": {"taints": [{"key": k, "value": v, "effect": e} for k, v, e in taints]}}, validate=False)


def pod(tolerations: list[dict[str, Any]], name: str = "pod1", uid: str = "") -> Pod:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if uid:
        meta["uid"] = uid
    return Pod.from_dict({"metadata": meta, "spec": {"containers": [{"name": "c"}], "tolerations": tolerations}}, validate=False)


def tol(key: str = "", value: str = "", effect: str = "", operator: str = "") -> dict[str, Any]:
    d: dict[str, Any] = {"key": key, "value": value, "effect": effect}
    if operator:
        d["operator"] = operator
    return d


PNS, NS = "PreferNoSchedule", "NoSchedule"

SCORE_CASES = [
    pytest.param(pod([tol("foo", "bar", PNS, "Equal")]),
                 [node("nodeA", [("foo", "bar", PNS)]), node("nodeB", [("foo", "blah", PNS)])],
                 {"nodeA": 100, "nodeB": 0}, id="tolerated-taint-scores-higher"),
    pytest.param(pod([tol("cpu-type", "arm64", PNS, "Equal"), tol("disk-type", "ssd", PNS, "Equal")]),
                 [node("nodeA", []), node("nodeB", [("cpu-type", "arm64", PNS)]),
                  node("nodeC", [("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)])],
                 {"nodeA": 100, "nodeB": 100, "nodeC": 100}, id="count-of-tolerated-taints-does-not-matter"),
    pytest.param(pod([tol("foo", "bar", PNS, "Equal")]),
                 [node("nodeA", []), node("nodeB", [("cpu-type", "arm64", PNS)]),
                  node("nodeC", [("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)])],
                 {"nodeA": 100, "nodeB": 50, "nodeC": 0}, id="more-intolerable-taints-lower-score"),
    pytest.param(pod([tol("cpu-type", "arm64", NS, "Equal"), tol("disk-type", "ssd", NS, "Equal")]),
                 [node("nodeA", []), node("nodeB", [("cpu-type", "arm64", NS)]),
                  node("nodeC", [("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS)])],
                 {"nodeA": 100, "nodeB": 100, "nodeC": 0}, id="only-prefer-no-schedule-counts"),
    pytest.param(pod([]), [node("nodeA", []), node("nodeB", [("cpu-type", "arm64", PNS)])],
                 {"nodeA": 100, "nodeB": 0}, id="no-tolerations-prefers-untainted"),
]


@pytest.mark.parametrize("batch", [False, True], ids=["per-node", "batch"])
@pytest.mark.parametrize("p,nodes,want", SCORE_CASES)
def test_score(p: Pod, nodes: list[Node], want: dict[str, int], batch: bool) -> None:
    handle = handle_for([], nodes)
    assert score_all(TaintToleration(None, handle), p, handle, batch=batch) == want


UNTOL = "node(s) had untolerated taint {%s}"
FILTER_CASES = [
    pytest.param(pod([]), [("dedicated", "user1", NS)], UNTOL % "dedicated: user1", id="no-tolerations"),
    pytest.param(pod([tol("dedicated", "user1", NS)]), [("dedicated", "user1", NS)], None,
                 id="tolerated-dedicated-user1"),
    pytest.param(pod([tol("dedicated", "user2", NS, "Equal")]), [("dedicated", "user1", NS)],
                 UNTOL % "dedicated: user1", id="value-mismatch"),
    pytest.param(pod([tol("foo", "", NS, "Exists")]), [("foo", "bar", NS)], None, id="exists-operator"),
    pytest.param(pod([tol("dedicated", "user2", NS, "Equal"), tol("foo", "", NS, "Exists")]),
                 [("dedicated", "user2", NS), ("foo", "bar", NS)], None, id="all-taints-tolerated"),
    pytest.param(pod([tol("foo", "bar", PNS, "Equal")]), [("foo", "bar", NS)], UNTOL % "foo: bar",
                 id="effect-mismatch"),
    pytest.param(pod([tol("foo", "bar", "", "Equal")]), [("foo", "bar", NS)], None, id="empty-effect-tolerates"),
    pytest.param(pod([tol("dedicated", "user2", NS, "Equal")]), [("dedicated", "user1", PNS)], None,
                 id="prefer-no-schedule-ignored"),
    pytest.param(pod([]), [("dedicated", "user1", PNS)], None, id="no-toleration-prefer-no-schedule"),
    # Not upstream's table: the first untolerated taint is reported, an empty value as is.
    pytest.param(pod([tol("a", "", NS, "Exists")]), [("a", "1", NS), ("b", "", "NoExecute"), ("c", "x", NS)],
                 UNTOL % "b: ", id="first-untolerated-no-execute-empty-value"),
]


@pytest.mark.parametrize("p,taints,want", FILTER_CASES)
def test_filter(p: Pod, taints: list[T], want: str | None) -> None:
    handle = handle_for([], [node("nodeA", taints)])
    pl = TaintToleration(None, handle)
    table = handle.snapshot.table
    st = pl.filter(CycleState(), p, handle.snapshot.node_infos[0])
    ok = pl.filter_nodes(CycleState(), p, table, table.all)
    if want is None:
        assert st.success
        assert ok.tolist() == [True]
    else:
        assert (st.code, st.reasons) == (Code.UnschedulableAndUnresolvable, (want,))
        assert ok.tolist() == [False]


@pytest.mark.parametrize("p,taints,want", FILTER_CASES)
@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_filter_reason_from_v1_35(p: Pod, taints: list[T], want: str | None, version: str) -> None:
    """v1.35's taint_toleration.go Filter returns one reason for every rejected node,
    ``node(s) had untolerated taint(s)`` (its TestTaintTolerationFilter table expects it for
    each rejecting case); which nodes pass is unchanged."""
    handle = handle_for([], [node("nodeA", taints)])
    handle.features = Features.for_version(version)
    pl = TaintToleration(None, handle)
    st = pl.filter(CycleState(), p, handle.snapshot.node_infos[0])
    if want is None:
        assert st.success
    else:
        assert (st.code, st.reasons) == (Code.UnschedulableAndUnresolvable, ("node(s) had untolerated taint(s)",))


def test_pre_score_does_not_skip() -> None:
    handle = handle_for([], [node("n", [])])
    assert TaintToleration(None, handle).pre_score(CycleState(), pod([]), handle.snapshot.node_infos).success


def test_score_without_pre_score_is_an_error() -> None:
    handle = handle_for([], [node("n", [])])
    pl = TaintToleration(None, handle)
    got = pl.score(CycleState(), pod([]), handle.snapshot.node_infos[0])
    assert not isinstance(got, int) and got.code == Code.Error


POD_USER2 = pod([tol("dedicated", "user2", NS, "Equal")])


@pytest.mark.parametrize("old,new,want", [
    pytest.param(None, node("nodeA", [("dedicated", "user1", NS)]), QueueingHint.QueueSkip,
                 id="skip-queue-on-untoleratedtaint-node-added"),
    pytest.param(None, node("nodeA", [("dedicated", "user2", NS)]), QueueingHint.Queue,
                 id="queue-on-toleratedtaint-node-added"),
    pytest.param(node("nodeA", [("dedicated", "user1", NS)]),
                 node("nodeA", [("dedicated", "user1", NS), ("dedicated", "user3", NS)]),
                 QueueingHint.QueueSkip, id="skip-unrelated-change"),
    pytest.param(node("nodeA", [("dedicated", "user1", NS)]), node("nodeA", [("dedicated", "user2", NS)]),
                 QueueingHint.Queue, id="queue-on-taint-change"),
    pytest.param(None, "not-a-node", QueueingHint.Queue, id="backoff-wrong-new-object"),
    pytest.param("not-a-node", node("nodeA", []), QueueingHint.Queue, id="backoff-wrong-old-object"),
])
def test_is_schedulable_after_node_change(old: Any, new: Any, want: QueueingHint) -> None:
    assert TaintToleration().is_schedulable_after_node_change(POD_USER2, old, new) == want


@pytest.mark.parametrize("target,new,want", [
    pytest.param(pod([], "pod-1", "uid0"), pod([tol("foo", "", NS, "Exists")], "pod-2", "uid1"),
                 QueueingHint.QueueSkip, id="skip-updates-other-pod"),
    pytest.param(pod([], "pod-1", "uid0"), pod([tol("foo", "", NS, "Exists")], "pod-1", "uid0"),
                 QueueingHint.Queue, id="queue-on-toleration-added"),
])
def test_is_schedulable_after_pod_toleration_change(target: Pod, new: Pod, want: QueueingHint) -> None:
    assert TaintToleration().is_schedulable_after_pod_toleration_change(target, target, new) == want


def test_batch_agrees_with_per_node_on_random_clusters() -> None:
    rng = random.Random(7)
    keys, values, effects = ["a", "b", "c"], ["", "1", "2"], [NS, PNS, "NoExecute"]
    for _ in range(30):
        nodes = [node(f"n{i}", [(rng.choice(keys), rng.choice(values), rng.choice(effects))
                                for _ in range(rng.randrange(4))]) for i in range(12)]
        tols = [tol(rng.choice(keys), rng.choice(values[1:]), rng.choice(["", *effects]), "Equal")
                for _ in range(rng.randrange(3))]
        if rng.random() < 0.3:
            tols.append(tol(rng.choice(keys), "", rng.choice(["", *effects]), "Exists"))
        p = pod(tols)
        handle = handle_for([], nodes)
        pl = TaintToleration(None, handle)
        table = handle.snapshot.table
        per_node = [pl.filter(CycleState(), p, ni).success for ni in handle.snapshot.node_infos]
        assert pl.filter_nodes(CycleState(), p, table, table.all).tolist() == per_node
        idx = np.array(rng.sample(range(12), 6), dtype=np.intp)
        sub = [handle.snapshot.node_infos[i] for i in idx.tolist()]
        assert pl.filter_nodes(CycleState(), p, table, idx).tolist() == \
            [pl.filter(CycleState(), p, ni).success for ni in sub]
        assert score_all(pl, p, handle) == score_all(pl, p, handle, batch=True)
