"""Property: InterPodAffinity's PreScore, kept up to date incrementally across scheduling
cycles (NodeTable row columns refreshed by node generation, dict aggregates when there is
no table), gives the same topology scores as the reference full recount
(``scoring.build_scores``, upstream ``PreScore``) after any sequence of cluster changes:
pods added and removed, node labels changed, nodes added and removed.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.objects import Node, Pod
from kubesched.api.policy import Namespace
from kubesched.cache.cache import Cache
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import Code
from kubesched.framework.types import NodeInfo
from kubesched.plugins.interpodaffinity import InterPodAffinity, rowcache, tablescore
from kubesched.plugins.interpodaffinity.scoring import (
    PRE_SCORE_STATE_KEY, build_scores, has_preferred_constraints, score_node,
)
from kubesched.testing.handle import FakeHandle, StaticObjects
from kubesched.testing.wrappers import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
NAMESPACES = ["default", "ns-a", "ns-b"]
NS_OBJECTS = [Namespace.from_dict({"metadata": {"name": n, "labels": {"team": t}}}, validate=False)
              for n, t in (("ns-a", "x"), ("ns-b", "y"))]


def _term(rng: random.Random) -> dict[str, Any]:
    t: dict[str, Any] = {"labelSelector": {"matchLabels": {"app": rng.choice("abc")}},
                         "topologyKey": rng.choice([ZONE, HOST, "rack"])}
    r = rng.randrange(4)
    if r == 1:
        t["namespaces"] = rng.sample(NAMESPACES, 2)
    elif r == 2:
        t["namespaceSelector"] = {"matchLabels": {"team": rng.choice("xy")}}
    elif r == 3:
        t["namespaceSelector"] = {}
    return t


def _pod(rng: random.Random, name: str, node: str | None) -> Pod:
    w = make_pod().name(name).namespace(rng.choice(NAMESPACES)).uid(name)
    if rng.randrange(4):
        w.label("app", rng.choice("abc"))
    for _ in range(rng.randrange(3)):
        kind = rng.choice(["podAffinity", "podAntiAffinity"])
        required = kind == "podAffinity" and rng.randrange(3) == 0
        w.pod_affinity(kind, required, _term(rng), weight=rng.randint(1, 100))
    if node:
        w.node(node)
    return w.obj()


def _node(rng: random.Random, name: str) -> Node:
    w = make_node().name(name).capacity(cpu="8", memory="16Gi", pods="50").label(HOST, name)
    if rng.randrange(5):
        w.label(ZONE, rng.choice(["z1", "z2", "z3"]))
    if rng.randrange(2):
        w.label("rack", rng.choice(["r1", "r2"]))
    return w.obj()


def _reference(plugin: InterPodAffinity, pod: Pod, snap: Snapshot, objects: StaticObjects) -> dict[str, dict[str, int]] | None:
    has = has_preferred_constraints(pod)
    if plugin.args.ignore_preferred_terms_of_existing_pods and not has:
        return None
    ts = build_scores(pod, snap.node_infos, has, objects, plugin.args.hard_pod_affinity_weight)
    return ts or None


def _check(plugin: InterPodAffinity, pod: Pod, snap: Snapshot, objects: StaticObjects) -> None:
    want = _reference(plugin, pod, snap, objects)
    cs = CycleState()
    st = plugin.pre_score(cs, pod, snap.node_infos)
    if want is None:
        assert st.code == Code.Skip
        return
    assert st.success
    s = cs.read(PRE_SCORE_STATE_KEY)
    assert set(s.topology_score) == set(want)
    for key, values in want.items():
        assert s.topology_score[key] == {v: c for v, c in values.items() if c != 0}
    per_node = [plugin.score(cs, pod, ni) for ni in snap.node_infos]
    table = snap.table
    batch = plugin.score_nodes(cs, pod, table, table.all)
    ref = [score_node(type(s)(want), ni.node.labels if ni.node else {}) for ni in snap.node_infos]
    assert per_node == ref
    assert batch.tolist() == ref
    sub = np.arange(0, table.size, 2, dtype=np.intp)
    assert plugin.score_nodes(cs, pod, table, sub).tolist() == ref[::2]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.booleans(), st.sampled_from([0, 1, 7]))
def test_incremental_pre_score_matches_full_recount(seed: int, ignore: bool, hard: int) -> None:
    rng = random.Random(seed)
    cache = Cache()
    nodes = {f"n{i}": _node(rng, f"n{i}") for i in range(rng.randint(1, 6))}
    for n in nodes.values():
        cache.add_node(n)
    pods: dict[str, Pod] = {}
    for j in range(rng.randint(0, 10)):
        p = _pod(rng, f"e{j}", rng.choice(sorted(nodes)))
        pods[p.uid] = p
        cache.add_pod(p)
    snap = Snapshot()
    cache.update_snapshot(snap)
    objects = StaticObjects({n.name: n for n in NS_OBJECTS})
    plugin = InterPodAffinity({"hardPodAffinityWeight": hard,
                               "ignorePreferredTermsOfExistingPods": ignore}, FakeHandle(snap, objects))
    serial = 100
    for _ in range(12):
        op = rng.randrange(6)
        if op <= 1 and nodes:  # a pod lands
            p = _pod(rng, f"p{serial}", rng.choice(sorted(nodes)))
            pods[p.uid] = p
            cache.add_pod(p)
        elif op == 2 and pods:  # a pod goes
            cache.remove_pod(pods.pop(rng.choice(sorted(pods))))
        elif op == 3 and nodes:  # a node's labels change
            name = rng.choice(sorted(nodes))
            nodes[name] = _node(rng, name)
            cache.update_node(nodes[name])
        elif op == 4:  # a node joins
            name = f"m{serial}"
            nodes[name] = _node(rng, name)
            cache.add_node(nodes[name])
        elif op == 5 and len(nodes) > 1:  # an empty node leaves
            name = rng.choice(sorted(nodes))
            if not any(p.node_name == name for p in pods.values()):
                cache.remove_node(nodes.pop(name))
        serial += 1
        cache.update_snapshot(snap)
        for _ in range(2):
            _check(plugin, _pod(rng, f"in{serial}", None), snap, objects)


# -- sparse columns and large counts ---------------------------------------------------------

def _anti_pod(name: str, app: str, node: str | None, weight: int = 100) -> Pod:
    w = make_pod().name(name).uid(name).label("app", app)
    w.pod_affinity("podAntiAffinity", False,
                   {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOST}, weight=weight)
    if node:
        w.node(node)
    return w.obj()


def test_columns_hold_only_rows_with_counted_pods() -> None:
    """Hand-counted: 12 existing pods, each with its own preferred anti-affinity term (app=aJ,
    hostname) and label app=aJ, on 10 nodes (pod j on node j % 10). The existing-terms
    aggregate has 12 groups of one row each (12 cells, where dense columns held 12 x 10),
    and an incoming pod's selector app=aK counts one row; pods leaving empty their groups."""
    n_nodes = 10
    cache = Cache()
    nodes = [make_node().name(f"n{i}").label(HOST, f"n{i}").label(ZONE, f"z{i % 3}").obj()
             for i in range(n_nodes)]
    for n in nodes:
        cache.add_node(n)
    snap = Snapshot()
    cache.update_snapshot(snap)
    objects = StaticObjects({n.name: n for n in NS_OBJECTS})
    plugin = InterPodAffinity({"hardPodAffinityWeight": 1}, FakeHandle(snap, objects))
    rows = plugin._caches.rows
    pods = [_anti_pod(f"e{j}", f"a{j}", nodes[j % n_nodes].name, weight=1 + 9 * j) for j in range(12)]
    for p in pods:
        cache.add_pod(p)
    cache.update_snapshot(snap)
    _check(plugin, _anti_pod("in", "a3", None), snap, objects)
    existing = next(iter(rows.existing._items.values()))
    assert len(existing.cols) == 12 and existing.cells == 12
    selector = next(iter(rows.selector._items.values()))
    assert selector.cells == 1  # e3 on n3
    for p in pods[::2]:  # pods leave: their groups go, still exact
        cache.remove_pod(p)
        cache.update_snapshot(snap)
        _check(plugin, _anti_pod("late", "a1", None), snap, objects)
    assert len(existing.cols) == 6 and existing.cells == 6


def test_large_counts_and_weights_match_recount() -> None:
    cache = Cache()
    nodes = [make_node().name(f"n{i}").label(HOST, f"n{i}").label(ZONE, f"z{i % 2}").obj()
             for i in range(3)]
    for n in nodes:
        cache.add_node(n)
    for j in range(600):  # many pods per node, each carrying weight-100 terms
        w = make_pod().name(f"e{j}").uid(f"e{j}").label("app", "web")
        w.pod_affinity("podAntiAffinity", False,
                       {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": ZONE}, weight=100)
        w.pod_affinity("podAffinity", False,
                       {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}, weight=100)
        w.pod_affinity("podAffinity", True,
                       {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST})
        cache.add_pod(w.node(nodes[j % 2].name).obj())
    snap = Snapshot()
    cache.update_snapshot(snap)
    objects = StaticObjects({})
    plugin = InterPodAffinity({"hardPodAffinityWeight": 100}, FakeHandle(snap, objects))
    incoming = make_pod().name("in").uid("in").label("app", "web")
    incoming.pod_affinity("podAntiAffinity", False,
                          {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": ZONE}, weight=100)
    _check(plugin, incoming.obj(), snap, objects)
    assert plugin._caches.rows.cells > 0


def test_rows_sum_sparse_columns_in_int64() -> None:
    """Rows 0 and 2 hold 2**30 and 2**31 - 1 pods' worth of counts: weighted by 100, 1 and -7
    the sums (94 x each) exceed int32 and must come out exact, per domain."""
    col = rowcache.SparseColumn()
    col.add(0, 2**30)
    col.add(2, 2**31 - 1)
    r = tablescore._Rows()
    r.add(HOST, 100, col)
    r.add(HOST, 1, col)
    r.add(HOST, -7, col)
    nodes = [make_node().name(f"n{i}").label(HOST, f"n{i}").obj() for i in range(3)]
    table = NodeTable([NodeInfo(n) for n in nodes])
    tot = r.totals(table)[HOST]
    assert tot.dtype == np.int64 and tot.tolist() == [94 * 2**30, 0, 94 * (2**31 - 1), 0]
