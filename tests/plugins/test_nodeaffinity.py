"""NodeAffinity, both forms, against upstream's tables.

Cases ported from upstream ``pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go``
(TestNodeAffinity with its PreFilter statuses and results and addedAffinity cases,
TestNodeAffinityPriority, Test_isSchedulableAfterNodeChange) and, for the args,
``pkg/scheduler/apis/config/validation/validation_pluginargs_test.go``
(TestValidateNodeAffinityArgs).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.errors import ProfileError
from kubesched.framework.events import QueueingHint
from kubesched.framework.status import Code, Status
from kubesched.plugins.nodeaffinity import (
    ERR_REASON_CONFLICT, ERR_REASON_ENFORCED, ERR_REASON_POD, NodeAffinity, parse_args,
)
from kubesched.testing.handle import handle_for
from kubesched.testing.harness import score_all

NAME = "metadata.name"


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    d: dict[str, Any] = {"key": key, "operator": op}
    if values:
        d["values"] = list(values)
    return d


def term(*exprs: dict[str, Any], fields: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    t: dict[str, Any] = {}
    if exprs:
        t["matchExpressions"] = list(exprs)
    if fields:
        t["matchFields"] = list(fields)
    return t


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def preferred(*weighted: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": w, "preference": t} for w, t in weighted]}}


def pod(affinity: dict[str, Any] | None = None, node_selector: dict[str, str] | None = None) -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if affinity is not None:
        spec["affinity"] = affinity
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    return Pod.from_dict({"metadata": {"name": "p", "namespace": "default"}, "spec": spec}, validate=False)


def node(name: str, labels: dict[str, str] | None = None) -> Node:
    return Node.from_dict({"metadata": {"name": name, "labels": dict(labels or {})}}, validate=False)


def plugin(added: dict[str, Any] | None, handle: Any = None) -> NodeAffinity:
    return NodeAffinity(parse_args(None if added is None else {"addedAffinity": added}, "args"), handle)


FOO_BAR = {"foo": "bar"}
GPU = {"GPU": "NVIDIA-GRID-K1"}
POD_ERR = (Code.UnschedulableAndUnresolvable, ERR_REASON_POD)
ENFORCED_ERR = (Code.UnschedulableAndUnresolvable, ERR_REASON_ENFORCED)
SKIP = (Code.Skip, None)
CONFLICT = (Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT)
IN_NODE1 = expr(NAME, "In", "node1")
IN_NODE2 = expr(NAME, "In", "node2")
ADDED_NODE2 = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term(fields=(IN_NODE2,))]}}

# (pod, node name, node labels, added affinity, run PreFilter, PreFilter (code, reason),
#  PreFilter result, Filter (code, reason) or None for success)
FILTER_CASES = [
    pytest.param(pod(node_selector=FOO_BAR), "", None, None, True, None, None, POD_ERR, id="missing-labels"),
    pytest.param(pod(node_selector=FOO_BAR), "", FOO_BAR, None, True, None, None, None, id="same-labels"),
    pytest.param(pod(node_selector=FOO_BAR), "", {"foo": "bar", "baz": "blah"}, None, True, None, None, None,
                 id="node-labels-are-superset"),
    pytest.param(pod(node_selector={"foo": "bar", "baz": "blah"}), "", FOO_BAR, None, True, None, None, POD_ERR,
                 id="node-labels-are-subset"),
    pytest.param(pod(required(term(expr("foo", "In", "bar", "value2")))), "", FOO_BAR, None, True, None, None,
                 None, id="in-operator-matches"),
    pytest.param(pod(required(term(expr("kernel-version", "Gt", "0204")))), "", {"kernel-version": "0206"},
                 None, True, None, None, None, id="gt-operator-matches"),
    pytest.param(pod(required(term(expr("mem-type", "NotIn", "DDR", "DDR2")))), "", {"mem-type": "DDR3"},
                 None, True, None, None, None, id="notin-operator-matches"),
    pytest.param(pod(required(term(expr("GPU", "Exists")))), "", GPU, None, True, None, None, None,
                 id="exists-operator-matches"),
    pytest.param(pod(required(term(expr("foo", "In", "value1", "value2")))), "", FOO_BAR, None, True, None, None,
                 POD_ERR, id="affinity-does-not-match"),
    pytest.param(pod(required({"matchExpressions": []})), "", FOO_BAR, None, True, None, None, POD_ERR,
                 id="empty-match-expressions-matches-nothing"),
    pytest.param(pod(), "", FOO_BAR, None, True, SKIP, None, None, id="no-affinity"),
    pytest.param(pod({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}}), "", FOO_BAR,
                 None, True, SKIP, None, None, id="affinity-with-nil-node-selector"),
    pytest.param(pod(required(term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")))), "", GPU,
                 None, True, None, None, None, id="expressions-anded-match"),
    pytest.param(pod(required(term(expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")))), "", GPU,
                 None, True, None, None, POD_ERR, id="expressions-anded-do-not-match"),
    pytest.param(pod(required(term(expr("foo", "In", "bar", "value2")), term(expr("diffkey", "In", "wrong", "value2")))),
                 "", FOO_BAR, None, True, None, None, None, id="terms-ored-match"),
    pytest.param(pod(required(term(expr("foo", "Exists"))), node_selector=FOO_BAR), "", FOO_BAR, None, True,
                 None, None, None, id="affinity-and-node-selector-both-satisfied"),
    pytest.param(pod(required(term(expr("foo", "Exists"))), node_selector=FOO_BAR), "", {"foo": "barrrrrr"},
                 None, True, None, None, POD_ERR, id="node-selector-not-satisfied"),
    pytest.param(pod(required(term(expr("foo", "NotIn", "invalid value: ___@#$%^")))), "", FOO_BAR, None, True,
                 None, None, POD_ERR, id="invalid-value-in-term"),
    pytest.param(pod(required(term(fields=(IN_NODE1,)))), "node1", None, None, True, None, {"node1"}, None,
                 id="match-fields-in-matches"),
    pytest.param(pod(required(term(fields=(IN_NODE1,)))), "node2", None, None, True, None, {"node1"}, POD_ERR,
                 id="match-fields-in-does-not-match"),
    pytest.param(pod(required(term(fields=(IN_NODE1, IN_NODE2)), term(expr("foo", "In", "bar")))), "node2",
                 FOO_BAR, None, True, None, None, None, id="two-terms-fields-fail-expressions-match"),
    pytest.param(pod(required(term(expr("foo", "In", "bar"), fields=(IN_NODE1,)))), "node2", FOO_BAR, None, True,
                 None, {"node1"}, POD_ERR, id="one-term-fields-fail-expressions-match"),
    pytest.param(pod(required(term(expr("foo", "In", "bar"), fields=(IN_NODE1,)))), "node1", FOO_BAR, None, True,
                 None, {"node1"}, None, id="one-term-both-match"),
    pytest.param(pod(required(term(fields=(IN_NODE1,)), term(expr("foo", "In", "not-match-to-bar")))), "node2",
                 FOO_BAR, None, True, None, None, POD_ERR, id="two-terms-neither-matches"),
    pytest.param(pod(required(term(fields=(IN_NODE1,)), term(fields=(IN_NODE2,)))), "node2", None, None, True,
                 None, {"node1", "node2"}, None, id="two-terms-of-node-name"),
    pytest.param(pod(required(term(fields=(IN_NODE1, IN_NODE2)))), "node2", FOO_BAR, None, True, CONFLICT, None,
                 POD_ERR, id="conflicting-match-fields"),
    pytest.param(pod(required(term(expr("zone", "In", "foo")))), "node2", {"zone": "foo"}, ADDED_NODE2, True,
                 None, None, None, id="matches-added-and-pod-affinity"),
    pytest.param(pod(required(term(expr("zone", "In", "bar")))), "node2", {"zone": "foo"}, ADDED_NODE2, True,
                 None, None, POD_ERR, id="matches-added-not-pod-affinity"),
    pytest.param(pod(), "node2", {"zone": "foo"},
                 {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                     term(expr("zone", "In", "bar"))]}},
                 True, None, None, ENFORCED_ERR, id="does-not-match-added-affinity"),
    pytest.param(pod(node_selector=FOO_BAR), "", {"foo": "bar", "baz": "blah"}, None, False, None, None, None,
                 id="node-selector-without-pre-filter"),
    pytest.param(pod(required(term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")))), "", GPU,
                 None, False, None, None, None, id="node-affinity-without-pre-filter"),
    # Not upstream's table: the PreFilter result reads the raw terms, an empty one included.
    pytest.param(pod(required({}, term(fields=(IN_NODE1,)))), "node1", None, None, True, None, None, None,
                 id="empty-term-admits-every-node-in-pre-filter"),
]


def _pair(st: Status) -> tuple[Code, str | None]:
    return st.code, (st.reasons[0] if st.reasons else None)


@pytest.mark.parametrize("p,name,labels,added,run_pre,want_pre,want_result,want", FILTER_CASES)
def test_node_affinity(p: Pod, name: str, labels: dict[str, str] | None, added: dict[str, Any] | None,
                       run_pre: bool, want_pre: tuple[Code, str | None] | None, want_result: set[str] | None,
                       want: tuple[Code, str] | None) -> None:
    handle = handle_for([], [node(name or "node", labels)])
    pl = plugin(added, handle)
    state = CycleState()
    if run_pre:
        result, pre = pl.pre_filter(state, p, handle.snapshot.node_infos)
        assert _pair(pre) == (want_pre or (Code.Success, None))
        assert (None if result is None else set(result.node_names or ())) == want_result
    table = handle.snapshot.table
    st = pl.filter(state, p, handle.snapshot.node_infos[0])
    ok = pl.filter_nodes(state, p, table, table.all)
    assert _pair(st) == (want or (Code.Success, None))
    assert ok.tolist() == [want is None]


LABEL1, LABEL2, LABEL3 = {"foo": "bar"}, {"key": "value"}, {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}
AFFINITY1 = preferred((2, term(expr("foo", "In", "bar"))))
AFFINITY2 = preferred((2, term(expr("foo", "In", "bar"))), (4, term(expr("key", "In", "value"))),
                      (5, term(expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1"))))

PRIORITY_CASES = [
    pytest.param(pod(AFFINITY1), [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)], None,
                 {"node1": 0, "node2": 0, "node3": 0}, id="no-node-matches"),
    pytest.param(pod(AFFINITY1), [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)], None,
                 {"node1": 100, "node2": 0, "node3": 0}, id="only-node1-matches"),
    pytest.param(pod(AFFINITY2), [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)], None,
                 {"node1": 18, "node5": 100, "node2": 36}, id="all-match-different-priorities"),
    pytest.param(pod(), [("node1", LABEL1), ("node2", LABEL2)], AFFINITY1["nodeAffinity"],
                 {"node1": 100, "node2": 0}, id="added-affinity"),
    pytest.param(pod(AFFINITY1), [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)],
                 preferred((3, term(expr("key", "In", "value"))))["nodeAffinity"],
                 {"node1": 40, "node2": 60, "node3": 100}, id="added-affinity-and-pod-affinity"),
]


@pytest.mark.parametrize("batch", [False, True], ids=["per-node", "batch"])
@pytest.mark.parametrize("p,nodes,added,want", PRIORITY_CASES)
def test_node_affinity_priority(p: Pod, nodes: list[tuple[str, dict[str, str]]], added: dict[str, Any] | None,
                                want: dict[str, int], batch: bool) -> None:
    handle = handle_for([], [node(n, lab) for n, lab in nodes])
    assert score_all(plugin(added, handle), p, handle, batch=batch) == want


def _score_without_pre_score(pl: NodeAffinity, p: Pod, handle: Any, batch: bool) -> dict[str, int]:
    infos = handle.snapshot.node_infos
    if batch:
        table = handle.snapshot.table
        scores = np.asarray(pl.score_nodes(CycleState(), p, table, table.all), dtype=np.int64)
    else:
        scores = np.array([pl.score(CycleState(), p, ni) for ni in infos], dtype=np.int64)
    pl.normalize_score(CycleState(), p, [ni.name for ni in infos], scores)
    return {ni.name: int(s) for ni, s in zip(infos, scores)}


@pytest.mark.parametrize("batch", [False, True], ids=["per-node", "batch"])
@pytest.mark.parametrize("p,nodes,want", [
    pytest.param(pod(), [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
                 {"node1": 0, "node2": 0, "node3": 0}, id="all-same-priority-as-node-affinity-is-nil"),
    pytest.param(pod(AFFINITY2), [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
                 {"node1": 18, "node5": 100, "node2": 36}, id="correct-even-if-pre-score-is-not-called"),
])
def test_priority_without_pre_score(p: Pod, nodes: list[tuple[str, dict[str, str]]], want: dict[str, int],
                                    batch: bool) -> None:
    handle = handle_for([], [node(n, lab) for n, lab in nodes])
    assert _score_without_pre_score(plugin(None, handle), p, handle, batch) == want


def test_pre_score_skips_without_preferred_terms() -> None:
    handle = handle_for([], [node("node1", LABEL1)])
    st = plugin(None, handle).pre_score(CycleState(), pod(), handle.snapshot.node_infos)
    assert st.code == Code.Skip


def test_pre_score_error_on_broken_preferred_term() -> None:
    handle = handle_for([], [node("node1", LABEL1)])
    p = pod(preferred((2, term(expr("invalid key", "In", "bar")))))
    st = plugin(None, handle).pre_score(CycleState(), p, handle.snapshot.node_infos)
    assert st.code == Code.Error
    assert st.reasons == (
        '[0].matchExpressions[0].key: Invalid value: "invalid key": name part must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  "
        "or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",)


POD_FOO_BAR = pod(required(term(expr("foo", "In", "bar"))))
ADDED_FOO_BAR = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    term(expr("foo", "In", "bar"))]}}


@pytest.mark.parametrize("added,old,new,want", [
    pytest.param(None, None, "not-a-node", QueueingHint.Queue, id="backoff-wrong-new-object"),
    pytest.param(None, "not-a-node", node("node"), QueueingHint.Queue, id="backoff-wrong-old-object"),
    pytest.param(None, None, node("node"), QueueingHint.QueueSkip, id="skip-queue-on-add"),
    pytest.param(None, None, node("node", FOO_BAR), QueueingHint.Queue, id="queue-on-add"),
    pytest.param(None, node("node"), node("node"), QueueingHint.QueueSkip, id="skip-unrelated-changes"),
    pytest.param(None, node("node"), node("node", {"k": "v"}), QueueingHint.QueueSkip,
                 id="skip-unrelated-changes-on-labels"),
    pytest.param(None, node("node", FOO_BAR), node("node", {"foo": "bar", "k": "v"}), QueueingHint.QueueSkip,
                 id="skip-labels-changes-on-suitable-node"),
    pytest.param(None, node("node", FOO_BAR), node("node", {"k": "v"}), QueueingHint.QueueSkip,
                 id="skip-labels-changes-on-node-from-suitable-to-unsuitable"),
    pytest.param(None, node("node"), node("node", FOO_BAR), QueueingHint.Queue,
                 id="queue-on-labels-change-makes-pod-schedulable"),
    pytest.param(ADDED_FOO_BAR, None, node("node"), QueueingHint.QueueSkip,
                 id="skip-queue-on-add-scheduler-enforced-node-affinity"),
    pytest.param(ADDED_FOO_BAR, None, node("node", FOO_BAR), QueueingHint.Queue,
                 id="queue-on-add-scheduler-enforced-node-affinity"),
])
def test_is_schedulable_after_node_change(added: dict[str, Any] | None, old: Any, new: Any,
                                          want: QueueingHint) -> None:
    assert plugin(added).is_schedulable_after_node_change(POD_FOO_BAR, old, new) == want


def test_args_defaults_and_valid_added_affinity() -> None:
    assert parse_args(None, "args").added_required is None
    args = parse_args({"addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            term(expr("label-1", "In", "label-1-val"))]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": term(fields=(expr(NAME, "In", "node-1"),))}]}}, "")
    assert args.added_required is not None and len(args.added_required.terms) == 1
    assert args.added_preferred is not None and len(args.added_preferred.terms) == 1


def test_args_invalid_added_affinity() -> None:
    with pytest.raises(ProfileError) as exc:
        parse_args({"addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                term(expr("invalid/label/key", "In", "label-1-val"))]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "preference": term(fields=(expr(NAME, "In", "node-1", "node-2"),))}]}}, "")
    assert exc.value.field == ("addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                               ".nodeSelectorTerms[0].matchExpressions[0].key")
    assert "1 more error" in exc.value.message
    with pytest.raises(ProfileError) as exc:
        parse_args({"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": term(fields=(expr(NAME, "In", "node-1", "node-2"),))}]}}, "args")
    assert exc.value.field == ("args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
                               ".matchFields[0].values")


def test_batch_agrees_with_per_node_on_random_clusters() -> None:
    rng = random.Random(11)
    keys, vals = ["a", "b", "c"], ["1", "2", "10", "x"]
    ops = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]

    def rand_expr() -> dict[str, Any]:
        op = rng.choice(ops)
        if op in ("Exists", "DoesNotExist"):
            return expr(rng.choice(keys), op)
        if op in ("Gt", "Lt"):
            return expr(rng.choice(keys), op, rng.choice(["1", "5"]))
        return expr(rng.choice(keys), op, *rng.sample(vals, rng.randrange(1, 3)))

    def rand_term() -> dict[str, Any]:
        fields = (expr(NAME, rng.choice(["In", "NotIn"]), f"n{rng.randrange(8)}"),) if rng.random() < 0.3 else ()
        return term(*[rand_expr() for _ in range(rng.randrange(0 if fields else 1, 3))], fields=fields)

    for _ in range(40):
        nodes = [node(f"n{i}", {k: rng.choice(vals) for k in keys if rng.random() < 0.6}) for i in range(8)]
        affinity: dict[str, Any] = {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [rand_term() for _ in range(rng.randrange(1, 3))]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": rng.randrange(1, 101), "preference": rand_term()} for _ in range(rng.randrange(3))]}}
        selector = {"a": rng.choice(vals)} if rng.random() < 0.3 else None
        p = pod(affinity, selector)
        added = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [rand_term()]},
                 "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 7, "preference": rand_term()}]} \
            if rng.random() < 0.3 else None
        handle = handle_for([], nodes)
        pl = plugin(added, handle)
        state = CycleState()
        pl.pre_filter(state, p, handle.snapshot.node_infos)
        table = handle.snapshot.table
        want = [pl.filter(state, p, ni).success for ni in handle.snapshot.node_infos]
        assert pl.filter_nodes(state, p, table, table.all).tolist() == want
        assert score_all(pl, p, handle) == score_all(pl, p, handle, batch=True)
