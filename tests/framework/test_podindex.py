"""Property: the counting structures for cold selectors agree with a full recount.

The NodeTable's pod label index (``framework/podindex.py``), PodTopologySpread's per-selector
count arrays (``MatchCounter.counts_array``: built from the index the first time, then kept
current from the table's change log) and InterPodAffinity's selector columns (``RowAggregate``
rebuilt from the index's rows) must give, after any sequence of pods added, removed and
relabelled, the counts that matching every pod on every node gives (upstream
``countPodsMatchSelector`` in pkg/scheduler/framework/plugins/podtopologyspread/common.go:
same namespace, not terminating, labels match).
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.objects import Pod
from kubesched.api.selectors import LabelSelector
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.types import NodeInfo
from kubesched.plugins.interpodaffinity.rowcache import RowAggregate
from kubesched.plugins.interpodaffinity.tablescore import _selector_contrib, _selector_rows
from kubesched.plugins.podtopologyspread.common import MatchCounter
from kubesched.testing.wrappers import make_node, make_pod

NODES = 6
NAMESPACES = ("default", "other")
HOST = "kubernetes.io/hostname"
SELECTORS = [LabelSelector.parse(d) for d in (
    {"matchLabels": {"app": "a"}},
    {"matchLabels": {"app": "b", "tier": "web"}},
    {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "c"]}]},
    {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},  # no In: the full loop
    {"matchLabels": {"app": "a"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]},
)]


def _pod(rng: random.Random, uid: int) -> Pod:
    w = make_pod().name(f"p{uid}").uid(f"p{uid}").namespace(rng.choice(NAMESPACES))
    if rng.randrange(5):
        w.label("app", rng.choice("abc"))
    if rng.randrange(2):
        w.label("tier", rng.choice(("web", "db")))
    return w.obj()


def _recount(infos: list[NodeInfo], sel: LabelSelector, ns: str) -> list[int]:
    return [sum(1 for p in ni.pods if p.namespace == ns and sel.matches(p.labels)) for ni in infos]


def _recount_by_ns(infos: list[NodeInfo], sel: LabelSelector) -> dict[str, list[int]]:
    out = {ns: [0] * len(infos) for ns in NAMESPACES}
    for i, ni in enumerate(infos):
        for p in ni.pods:
            if sel.matches(p.labels):
                out[p.namespace][i] += 1
    return {ns: c for ns, c in out.items() if any(c)}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.lists(st.integers(0, 2), min_size=1, max_size=40))
def test_cold_and_incremental_counts_agree_with_recount(seed: int, ops: list[int]) -> None:
    rng = random.Random(seed)
    nodes = [make_node().name(f"n{i}").label(HOST, f"n{i}").obj() for i in range(NODES)]
    pods: list[list[Pod]] = [[] for _ in nodes]
    table = NodeTable([NodeInfo(n) for n in nodes])
    warm = MatchCounter()
    aggs = [RowAggregate(_selector_contrib(s, HOST), _selector_rows(s)) for s in SELECTORS]
    uid = 0
    for op in ops:
        row = rng.randrange(NODES)
        if op == 0 or not pods[row]:  # add a pod
            uid += 1
            pods[row].append(_pod(rng, uid))
        elif op == 1:  # remove one
            pods[row].pop(rng.randrange(len(pods[row])))
        else:  # relabel one (an update: same uid, new labels)
            k = rng.randrange(len(pods[row]))
            old = pods[row][k]
            new = _pod(rng, 0)
            pods[row][k] = make_pod().name(old.name).uid(old.uid).namespace(new.namespace).labels(new.labels).obj()
        table.update_row(row, NodeInfo(nodes[row], tuple(pods[row])))
        for sel, agg in zip(SELECTORS, aggs):
            for ns in NAMESPACES:
                want = _recount(table.infos, sel, ns)
                assert warm.counts_array(table, ns, sel).tolist() == want, (sel, ns)
                assert MatchCounter().counts_array(table, ns, sel).tolist() == want, (sel, ns)
            cols = agg.sync(table)
            assert {ns: c.dense(table.size).tolist() for ns, c in cols.items()} == _recount_by_ns(table.infos, sel)
            assert all(c.counts and 0 not in c.counts.values() for c in cols.values())  # sparse: no zero cells
            fresh = RowAggregate(_selector_contrib(sel, HOST), _selector_rows(sel)).sync(table)
            assert {ns: c.dense(table.size).tolist() for ns, c in fresh.items()} == _recount_by_ns(table.infos, sel)


def test_index_candidates_cover_only_rows_with_the_label() -> None:
    """Hand-built: app=a pods on rows 0 and 2 (one in another namespace); app=b on row 1."""
    nodes = [make_node().name(f"n{i}").obj() for i in range(3)]
    p = [make_pod().name(f"p{i}").uid(f"p{i}").label("app", a).namespace(ns).obj()
         for i, (a, ns) in enumerate((("a", "default"), ("b", "default"), ("a", "other")))]
    table = NodeTable([NodeInfo(nodes[0], (p[0],)), NodeInfo(nodes[1], (p[1],)), NodeInfo(nodes[2], (p[2],))])
    cands = table.pod_index().candidates(SELECTORS[0])
    assert cands is not None and sorted(cands) == [0, 2]
    assert table.pod_index().candidates(SELECTORS[3]) is None  # Exists only: nothing to look up
    assert MatchCounter().counts_array(table, "default", SELECTORS[0]).tolist() == [1, 0, 0]
    table.update_row(0, NodeInfo(nodes[0]))  # p0 gone
    assert sorted(table.pod_index().candidates(SELECTORS[0]) or {}) == [2]
    assert np.array_equal(MatchCounter().counts_array(table, "other", SELECTORS[0]), [0, 0, 1])
