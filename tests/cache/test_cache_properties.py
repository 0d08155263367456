"""Property tests of the cache and the incremental snapshot (hypothesis).

- Assume then Forget (in any order) leaves every NodeInfo as it was: requested, non-zero
  requests, host ports, pods (and the affinity pod lists), as upstream's cache promises
  (backend/cache/interface.go: Forget undoes Assume).
- Add then Remove of bound pods, and Assume -> Add (binding confirmed) -> Remove, likewise.
- After any sequence of pod and node operations, the incrementally updated snapshot (taken
  at arbitrary points, so only changed NodeInfos and table rows are rewritten) equals a
  snapshot built from scratch by ``snapshot_of`` for requested resources, pod
  lists, affinity lists, node order and the NodeTable columns.

Host ports are unique per pod: the NodePorts filter never lets two pods share a port on a
node, and upstream's HostPortInfo is a set (removing one holder frees the port).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.objects import Node, Pod
from kubesched.cache.cache import Cache, snapshot_of
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.types import NodeInfo
from kubesched.testing.wrappers import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
GPU = "example.com/gpu"
RESOURCES = ("cpu", "memory", GPU)
# (name, zone): zones interleave in the snapshot's node order.
NODES: tuple[tuple[str, str], ...] = (("n0", "a"), ("n1", "b"), ("n2", "a"), ("n3", "c"), ("n4", "b"))


def node(i: int) -> Node:
    name, zone = NODES[i]
    return make_node().name(name).label(ZONE, zone).capacity(
        cpu="8", memory="16Gi", pods="110", **{GPU: "4"}).obj()


@dataclass(frozen=True)
class PodSpec:
    cpu_m: int          # 0: no cpu request (non-zero default 100m counts for scoring)
    mem_mi: int         # 0: no memory request
    gpu: int
    affinity: str       # "", "preferred" (pod affinity) or "anti" (required anti-affinity)


pod_specs = st.builds(
    PodSpec,
    cpu_m=st.sampled_from([0, 100, 250, 1000, 1500]),
    mem_mi=st.sampled_from([0, 64, 512, 2048]),
    gpu=st.integers(0, 2),
    affinity=st.sampled_from(["", "", "preferred", "anti"]),
)


def pod(i: int, spec: PodSpec, node_name: str) -> Pod:
    req: dict[str, Any] = {}
    if spec.cpu_m:
        req["cpu"] = f"{spec.cpu_m}m"
    if spec.mem_mi:
        req["memory"] = f"{spec.mem_mi}Mi"
    if spec.gpu:
        req[GPU] = str(spec.gpu)
    w = make_pod().name(f"p{i}").namespace("ns").label("app", f"a{i % 3}").node(node_name)
    w = w.container(image="img", requests=req or None, limits={GPU: str(spec.gpu)} if spec.gpu else None,
                    ports=[{"containerPort": 8000 + i, "hostPort": 8000 + i, "protocol": "TCP"}])
    term = {"topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "a0"}}}
    if spec.affinity == "preferred":
        w = w.pod_affinity("podAffinity", False, term, weight=10)
    elif spec.affinity == "anti":
        w = w.pod_affinity("podAntiAffinity", True, term)
    return w.obj()


def nonzero(requested: dict[str, int]) -> dict[str, int]:
    """Requests without zero entries: a scalar resource whose last pod left stays in the
    map at 0, as in upstream's Resource.ScalarResources; 0 and absent read the same."""
    return {k: v for k, v in requested.items() if v}


def node_state(ni: NodeInfo) -> dict[str, Any]:
    """What a NodeInfo aggregates, in a comparable form (pod lists in their order)."""
    return {
        "requested": nonzero(ni.requested), "non0": (ni.non0_cpu, ni.non0_mem),
        "ports": {ip: dict(m) for ip, m in ni.used_ports.ports.items()},
        "pods": [p.uid for p in ni.pods],
        "affinity": [p.uid for p in ni.pods_with_affinity],
        "anti": [p.uid for p in ni.pods_with_required_anti_affinity],
    }


def cache_state(cache: Cache) -> dict[str, dict[str, Any]]:
    return {name: node_state(ni) for name, ni in cache.nodes.items()}




placed = st.lists(st.tuples(pod_specs, st.integers(0, len(NODES) - 1)), max_size=8)


def _cache_with(base: Sequence[tuple[PodSpec, int]]) -> tuple[Cache, list[Pod]]:
    cache = Cache()
    for i in range(len(NODES)):
        cache.add_node(node(i))
    pods = [pod(i, spec, NODES[n][0]) for i, (spec, n) in enumerate(base)]
    for p in pods:
        cache.add_pod(p)
    return cache, pods


@settings(max_examples=60, deadline=None)
@given(base=placed, extra=placed, data=st.data())
def test_assume_forget_round_trip(base: list[tuple[PodSpec, int]], extra: list[tuple[PodSpec, int]],
                                  data: st.DataObject) -> None:
    cache, _ = _cache_with(base)
    before = cache_state(cache)
    assumed = [pod(100 + i, spec, NODES[n][0]) for i, (spec, n) in enumerate(extra)]
    for p in assumed:
        cache.assume_pod(p)
        if data.draw(st.booleans(), label="finish binding"):
            cache.finish_binding(p, now=0.0)
    assert all(cache.is_assumed(p) for p in assumed)
    for p in data.draw(st.permutations(assumed), label="forget order"):
        cache.forget_pod(p)
    after = cache_state(cache)
    assert after == before, "requested/non0/ports/pods must be exactly as before the assumes"


@settings(max_examples=60, deadline=None)
@given(base=placed, extra=placed, data=st.data())
def test_add_remove_round_trip(base: list[tuple[PodSpec, int]], extra: list[tuple[PodSpec, int]],
                               data: st.DataObject) -> None:
    cache, _ = _cache_with(base)
    before = cache_state(cache)
    added = [pod(100 + i, spec, NODES[n][0]) for i, (spec, n) in enumerate(extra)]
    for p in added:
        if data.draw(st.booleans(), label="assumed first"):
            cache.assume_pod(p)   # then the binding is observed: Assumed -> Added
        cache.add_pod(p)
        assert not cache.is_assumed(p)
    for p in data.draw(st.permutations(added), label="remove order"):
        cache.remove_pod(p)
    assert cache_state(cache) == before


# -- a regression: several nodes changed between two snapshot updates -------------------------
def test_snapshot_sees_every_node_changed_since_the_last_update() -> None:
    """Twelve nodes each get a pod between two updates: the snapshot must show all twelve.
    (update_snapshot once raised the snapshot's generation inside its walk over the dirty
    nodes, so a node visited after one with a newer generation was skipped, depending on
    set iteration order; upstream takes the generation after the walk.)"""
    cache, snap = Cache(), Snapshot()
    names = [f"n{i}" for i in range(12)]
    for name in names:
        cache.add_node(make_node().name(name).capacity(cpu="4", memory="4Gi", pods="10").obj())
    cache.update_snapshot(snap)
    for name in names:
        cache.add_pod(make_pod().name(f"on-{name}").node(name).req(cpu="1").obj())
    cache.update_snapshot(snap)
    assert {ni.name: [p.name for p in ni.pods] for ni in snap.node_infos} == {n: [f"on-{n}"] for n in names}
    assert snap.table.requested("cpu").tolist() == [1000] * 12


# -- snapshot against one built from scratch -------------------------------------------------
ops = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(0, 11), pod_specs, st.integers(0, len(NODES) - 1)),
    st.tuples(st.just("assume"), st.integers(0, 11), pod_specs, st.integers(0, len(NODES) - 1)),
    st.tuples(st.just("confirm"), st.integers(0, 11)),
    st.tuples(st.just("forget"), st.integers(0, 11)),
    st.tuples(st.just("remove"), st.integers(0, 11)),
    st.tuples(st.just("move"), st.integers(0, 11), st.integers(0, len(NODES) - 1)),
    st.tuples(st.just("add-node"), st.integers(0, len(NODES) - 1)),
    st.tuples(st.just("remove-node"), st.integers(0, len(NODES) - 1)),
    st.tuples(st.just("snapshot"), st.booleans()),
), max_size=40)


class Model:
    """Drives a Cache and a Snapshot through an op sequence, tracking what should be there."""

    def __init__(self, allow_node_removal: bool) -> None:
        self.cache = Cache()
        self.snap = Snapshot()
        self.allow_node_removal = allow_node_removal
        self.nodes: list[int] = []              # node indexes, in the order they were added
        self.pods: dict[int, Pod] = {}          # present pods (bound or assumed)
        self.assumed: set[int] = set()
        self.specs: dict[int, PodSpec] = {}

    def _hosts(self, n: int) -> bool:
        return any(p.node_name == NODES[n][0] for p in self.pods.values())

    def apply(self, op: tuple[Any, ...]) -> None:
        kind = op[0]
        if kind == "add-node" and op[1] not in self.nodes:
            self.cache.add_node(node(op[1]))
            self.nodes.append(op[1])
        elif kind == "remove-node" and self.allow_node_removal and op[1] in self.nodes and not self._hosts(op[1]):
            self.cache.remove_node(node(op[1]))
            self.nodes.remove(op[1])
        elif kind in ("add", "assume") and op[1] not in self.pods and op[3] in self.nodes:
            p = pod(op[1], op[2], NODES[op[3]][0])
            self.specs[op[1]] = op[2]
            if kind == "add":
                self.cache.add_pod(p)
            else:
                self.cache.assume_pod(p)
                self.assumed.add(op[1])
            self.pods[op[1]] = p
        elif kind == "confirm" and op[1] in self.assumed:
            self.cache.add_pod(self.pods[op[1]])
            self.assumed.discard(op[1])
        elif kind == "forget" and op[1] in self.assumed:
            self.cache.forget_pod(self.pods.pop(op[1]))
            self.assumed.discard(op[1])
        elif kind == "remove" and op[1] in self.pods and op[1] not in self.assumed:
            self.cache.remove_pod(self.pods.pop(op[1]))
        elif kind == "move" and op[1] in self.pods and op[1] not in self.assumed and op[2] in self.nodes:
            old = self.pods[op[1]]
            new = pod(op[1], self.specs[op[1]], NODES[op[2]][0])
            self.cache.update_pod(old, new)
            self.pods[op[1]] = new
        elif kind == "snapshot":
            self.cache.update_snapshot(self.snap)
            if op[1]:
                _ = self.snap.table            # build the table so later updates rewrite rows
                self.snap.table.label(ZONE)    # and a lazily built label column


def _table_columns(snap: Snapshot) -> dict[str, list[Any]]:
    t = snap.table
    codes, _, values = t.label(ZONE)
    return {
        "names": list(t.names),
        **{f"req:{r}": t.requested(r).tolist() for r in RESOURCES},
        **{f"alloc:{r}": t.allocatable(r).tolist() for r in RESOURCES},
        "non0_cpu": t.non0_cpu.tolist(), "non0_mem": t.non0_mem.tolist(), "pods": t.pod_count.tolist(),
        "zone": [values[c] if c >= 0 else None for c in codes.tolist()],
    }


def _compare(snap: Snapshot, fresh: Snapshot) -> None:
    assert [ni.name for ni in snap.node_infos] == [ni.name for ni in fresh.node_infos]
    for got, want in zip(snap.node_infos, fresh.node_infos):
        assert nonzero(got.requested) == nonzero(want.requested), got.name
        assert (got.non0_cpu, got.non0_mem) == (want.non0_cpu, want.non0_mem), got.name
        assert sorted(p.uid for p in got.pods) == sorted(p.uid for p in want.pods), got.name
        assert sorted(p.uid for p in got.pods_with_affinity) == sorted(p.uid for p in want.pods_with_affinity)
        assert (sorted(p.uid for p in got.pods_with_required_anti_affinity)
                == sorted(p.uid for p in want.pods_with_required_anti_affinity))
        assert got.used_ports.ports == want.used_ports.ports, got.name
        assert got.allocatable == want.allocatable
    assert ([ni.name for ni in snap.have_pods_with_affinity]
            == [ni.name for ni in fresh.have_pods_with_affinity])
    assert ([ni.name for ni in snap.have_pods_with_required_anti_affinity]
            == [ni.name for ni in fresh.have_pods_with_required_anti_affinity])
    assert snap.get("nope") is None and all(snap.get(ni.name) is ni for ni in snap.node_infos)
    assert _table_columns(snap) == _table_columns(fresh)


@settings(max_examples=80, deadline=None)
@given(seq=ops)
def test_incremental_snapshot_equals_snapshot_from_scratch(seq: list[tuple[Any, ...]]) -> None:
    """Nodes are only added here, so the zone-interleaved order built from scratch (nodes
    given in the order they were added) must be exactly the incremental one."""
    m = Model(allow_node_removal=False)
    for i in range(2):  # start with two nodes, so pods have somewhere to go
        m.apply(("add-node", i))
    for op in seq:
        m.apply(op)
    m.cache.update_snapshot(m.snap)
    fresh = snapshot_of(list(m.pods.values()), [node(i) for i in m.nodes])
    _compare(m.snap, fresh)


@settings(max_examples=60, deadline=None)
@given(seq=ops)
def test_incremental_snapshot_with_node_removals(seq: list[tuple[Any, ...]]) -> None:
    """With removals the zone order depends on history (upstream's node tree keeps a zone's
    place while it has nodes), so the from-scratch snapshot is given the nodes in the
    cache's current order; every aggregate must still match."""
    m = Model(allow_node_removal=True)
    for i in range(2):
        m.apply(("add-node", i))
    for op in seq:
        m.apply(op)
    m.cache.update_snapshot(m.snap)
    assert sorted(ni.name for ni in m.snap.node_infos) == sorted(NODES[i][0] for i in m.nodes)
    by_name = {NODES[i][0]: i for i in m.nodes}
    order = [by_name[name] for name in m.cache.tree.list()]
    fresh = snapshot_of(list(m.pods.values()), [node(i) for i in order])
    _compare(m.snap, fresh)


def test_snapshot_requested_is_the_sum_of_pod_requests() -> None:
    """A fixed example worked by hand, so the properties above compare against something
    known: n0 holds p0 (1500m, 512Mi, 1 GPU) and p1 (no requests: 0 requested, 100m/200Mi
    non-zero); n1 holds p2 (250m, 64Mi)."""
    specs = [PodSpec(1500, 512, 1, ""), PodSpec(0, 0, 0, "anti"), PodSpec(250, 64, 0, "preferred")]
    pods = [pod(0, specs[0], "n0"), pod(1, specs[1], "n0"), pod(2, specs[2], "n1")]
    snap = snapshot_of(pods, [node(0), node(1)])
    n0, n1 = snap.get("n0"), snap.get("n1")
    assert n0 is not None and n1 is not None
    assert nonzero(n0.requested) == {"cpu": 1500, "memory": 512 * 2**20, GPU: 1}
    assert (n0.non0_cpu, n0.non0_mem) == (1600, 512 * 2**20 + 200 * 2**20)
    assert nonzero(n1.requested) == {"cpu": 250, "memory": 64 * 2**20}
    assert [ni.name for ni in snap.have_pods_with_affinity] == ["n0", "n1"]
    assert [ni.name for ni in snap.have_pods_with_required_anti_affinity] == ["n0"]
    assert np.array_equal(snap.table.requested("cpu"), [1500, 250])
