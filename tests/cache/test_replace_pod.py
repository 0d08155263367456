"""``NodeInfo.replace_pod`` and ``Cache`` updates against upstream's two steps.

Upstream's cache updates a pod (``updatePod``, and ``addPod`` confirming an assumed pod:
pkg/scheduler/backend/cache/cache.go) as ``removePod(old)`` then ``addPod(new)``; NodeInfo's
RemovePod swaps the removed pod with the last one (framework/types.go ``removeFromSlice``).
``replace_pod`` must leave a NodeInfo exactly as those two steps do: the pod lists in the same
order, the same sums (including zero entries and dict order), host ports, claim counters.
The reference here is the two-step path itself, ``remove_pod`` then ``add_pod``, run on a twin
NodeInfo holding the same pods.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.objects import Pod
from kubesched.cache.cache import Cache
from kubesched.framework.types import NodeInfo
from kubesched.testing.wrappers import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"

# (cpu millis, memory Mi, host port, claim, affinity) of one pod version
versions = st.tuples(st.sampled_from([0, 100, 250]), st.sampled_from([0, 64, 512]),
                     st.sampled_from([0, 0, 8080, 9090]), st.sampled_from(["", "", "data"]),
                     st.sampled_from(["", "", "preferred", "anti"]))


def build(i: int, v: tuple[int, int, int, str, str], phase: str = "Pending") -> Pod:
    cpu, mem, port, claim, aff = v
    req: dict[str, Any] = {}
    if cpu:
        req["cpu"] = f"{cpu}m"
    if mem:
        req["memory"] = f"{mem}Mi"
    w = make_pod().name(f"p{i}").namespace("ns").uid(f"u{i}").node("n0").label("app", "a")
    w = w.container(image="img", requests=req or None,
                    ports=[{"containerPort": port, "hostPort": port, "protocol": "TCP"}] if port else None)
    if claim:
        w = w.pvc(claim)
    term = {"topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "a"}}}
    if aff == "preferred":
        w = w.pod_affinity("podAffinity", False, term, weight=10)
    elif aff == "anti":
        w = w.pod_affinity("podAntiAffinity", True, term)
    return w.set("status.phase", phase).obj()


def state(ni: NodeInfo) -> dict[str, Any]:
    """Everything a NodeInfo holds, in order (dicts as item lists, so their order counts)."""
    return {
        "requested": list(ni.requested.items()), "non0": (ni.non0_cpu, ni.non0_mem),
        "ports": [(ip, list(m.items())) for ip, m in ni.used_ports.ports.items()],
        "pvc": list(ni.pvc_ref_counts.items()),
        "pods": [(p.uid, id(p)) for p in ni.pods],
        "affinity": [(p.uid, id(p)) for p in ni.pods_with_affinity],
        "anti": [(p.uid, id(p)) for p in ni.pods_with_required_anti_affinity],
    }


@settings(max_examples=150, deadline=None)
@given(base=st.lists(versions, min_size=1, max_size=6), updates=st.lists(
    st.tuples(st.integers(0, 5), versions, st.booleans()), min_size=1, max_size=10))
def test_replace_equals_remove_then_add(base: list[tuple[int, int, int, str, str]],
                                        updates: list[tuple[int, tuple[int, int, int, str, str], bool]]) -> None:
    pods = [build(i, v) for i, v in enumerate(base)]
    two_steps, one_step = NodeInfo(), NodeInfo()
    for p in pods:
        two_steps.add_pod(p)
        one_step.add_pod(p)
    current = {i: (p, base[i]) for i, p in enumerate(pods)}
    for i, v, same in updates:
        if i not in current:
            continue
        old, old_v = current[i]
        # ``same``: a status-only version (what a bind confirm or a kubelet write brings)
        new = build(i, old_v if same else v, phase="Running")
        gen = one_step.generation
        assert two_steps.remove_pod(old)
        two_steps.add_pod(new)
        assert one_step.replace_pod(old, new)
        assert one_step.generation > gen, "a changed NodeInfo must get a new generation (snapshot copy)"
        assert state(one_step) == state(two_steps)
        current[i] = (new, old_v if same else v)


def test_replace_of_an_absent_pod_changes_nothing() -> None:
    ni = NodeInfo()
    ni.add_pod(build(0, (100, 64, 0, "", "")))
    before, gen = state(ni), ni.generation
    assert not ni.replace_pod(build(1, (100, 64, 0, "", "")), build(1, (100, 64, 0, "", "")))
    assert state(ni) == before and ni.generation == gen


def test_confirm_and_status_update_in_the_cache() -> None:
    """The cache paths that use it: an assumed pod confirmed by its bind, then a status
    write (phase Running) on the same node; a move to another node takes the two steps.
    Worked by hand: p0 (250m, 64Mi) and p1 (100m, no memory: 200Mi non-zero) on n0."""
    cache = Cache()
    cache.add_node(make_node().name("n0").capacity(cpu="4", memory="4Gi", pods="10").obj())
    cache.add_node(make_node().name("n1").capacity(cpu="4", memory="4Gi", pods="10").obj())
    p0, p1 = build(0, (250, 64, 0, "", "")), build(1, (100, 0, 0, "", "anti"))
    cache.add_pod(p0)
    cache.assume_pod(p1)
    confirmed = build(1, (100, 0, 0, "", "anti"))
    cache.add_pod(confirmed)
    assert not cache.is_assumed(confirmed) and cache.get_pod("u1") is confirmed
    running = build(0, (250, 64, 0, "", ""), phase="Running")
    cache.update_pod(p0, running)
    ni = cache.nodes["n0"]
    # p0 was first: removing it swaps p1 into its place, and the new p0 goes last
    assert ni.pods == [confirmed, running]
    assert ni.pods_with_required_anti_affinity == [confirmed]
    assert ni.requested == {"cpu": 350, "memory": 64 * 2**20}
    assert (ni.non0_cpu, ni.non0_mem) == (350, 64 * 2**20 + 200 * 2**20)
    moved = Pod.from_dict({**running.raw, "spec": {**running.raw["spec"], "nodeName": "n1"}}, validate=False)
    cache.update_pod(running, moved)
    assert [p.name for p in cache.nodes["n0"].pods] == ["p1"]
    assert [p.name for p in cache.nodes["n1"].pods] == ["p0"]
    assert cache.nodes["n0"].requested == {"cpu": 100, "memory": 0}
