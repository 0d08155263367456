"""Property: InterPodAffinity's index of existing pods' terms (``tablescore.RowCaches``: a term
filed under a label an incoming pod must carry to match it, terms without an ``In``
requirement always looked at) never hides a term that selects the incoming pod.

After random sequences of existing pods added, removed and relabelled (an update: same
uid, new labels and terms), with terms whose selectors are matchLabels, multi-value ``In``,
``Exists``-only and ``NotIn``-only, the table path's per-domain totals must equal the
reference full recount (``scoring.build_scores``: every existing pod's every term matched
against the incoming pod, upstream ``processExistingPod`` in
pkg/scheduler/framework/plugins/interpodaffinity/scoring.go), and the candidate groups
must include every group whose term matches the incoming pod.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.objects import Pod
from kubesched.cache.cache import Cache
from kubesched.cache.snapshot import Snapshot
from kubesched.plugins.interpodaffinity import InterPodAffinity
from kubesched.plugins.interpodaffinity.common import existing_term_matches, namespace_labels
from kubesched.plugins.interpodaffinity.scoring import build_scores
from kubesched.plugins.interpodaffinity.tablescore import build_totals
from kubesched.testing.handle import FakeHandle, StaticObjects
from kubesched.testing.wrappers import make_node, make_pod

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
NAMESPACES = ("default", "other")


def _selector(rng: random.Random) -> dict[str, Any]:
    r = rng.randrange(4)
    if r == 0:
        return {"matchLabels": {"app": rng.choice("abc")}}
    if r == 1:
        return {"matchExpressions": [{"key": "tier", "operator": "Exists"},
                                     {"key": "app", "operator": "In", "values": rng.sample("abcd", 2)}]}
    if r == 2:
        return {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}  # no In: not indexed
    return {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": [rng.choice("abc")]}]}


def _pod(rng: random.Random, name: str, node: str | None, namespace: str = "") -> Pod:
    w = make_pod().name(name).uid(name).namespace(namespace or rng.choice(NAMESPACES))
    if rng.randrange(4):
        w.label("app", rng.choice("abcd"))
    if rng.randrange(2):
        w.label("tier", rng.choice(("web", "db")))
    for _ in range(rng.randrange(3)):
        kind = rng.choice(["podAffinity", "podAntiAffinity"])
        term = {"labelSelector": _selector(rng), "topologyKey": rng.choice([HOST, ZONE])}
        if rng.randrange(2):
            term["namespaces"] = list(NAMESPACES)
        w.pod_affinity(kind, kind == "podAffinity" and rng.randrange(3) == 0, term, weight=rng.randint(1, 100))
    if node:
        w.node(node)
    return w.obj()


def _domains(totals: Any, snap: Snapshot) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for key, tot in totals.items():
        _, _, values = snap.table.label(key)
        out[key] = {v: int(tot[i]) for i, v in enumerate(values) if tot[i] != 0}
    return out


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.lists(st.integers(0, 2), min_size=1, max_size=30))
def test_term_index_keeps_every_matching_term(seed: int, ops: list[int]) -> None:
    rng = random.Random(seed)
    cache = Cache()
    names = [f"n{i}" for i in range(5)]
    for i, n in enumerate(names):
        cache.add_node(make_node().name(n).label(HOST, n).label(ZONE, f"z{i % 2}").obj())
    snap = Snapshot()
    cache.update_snapshot(snap)
    objects = StaticObjects({})
    plugin = InterPodAffinity({"hardPodAffinityWeight": 3}, FakeHandle(snap, objects))
    rc = plugin._caches.rows
    pods: dict[str, Pod] = {}
    serial = 0
    for op in ops:
        serial += 1
        if op == 0 or not pods:  # a pod lands
            p = _pod(rng, f"e{serial}", rng.choice(names))
            pods[p.uid] = p
            cache.add_pod(p)
        elif op == 1:  # a pod goes
            cache.remove_pod(pods.pop(rng.choice(sorted(pods))))
        else:  # a pod is updated in place: new labels and terms, same uid and node
            old = pods[rng.choice(sorted(pods))]
            new = _pod(rng, old.name, old.node_name, old.namespace)
            pods[old.uid] = new
            cache.update_pod(old, new)
        cache.update_snapshot(snap)
        for k in range(3):
            incoming = _pod(rng, f"in{serial}-{k}", None)
            want = build_scores(incoming, snap.node_infos, True, objects, 3)
            got = build_totals(rc, incoming, snap.table, objects, 3)
            assert got is not None
            assert _domains(got, snap) == {key: {v: c for v, c in m.items() if c} for key, m in want.items()}
            assert set(got) == set(want)
            cands = set(rc.candidate_groups(incoming))
            ns_labels = namespace_labels(objects, incoming.namespace)
            for g in rc.existing.get(None, rc.existing_contrib).sync(snap.table):
                if existing_term_matches(rc.terms[g[1]], incoming, ns_labels):
                    assert g in cands, g

