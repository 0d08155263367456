"""The kubelet's resource admission with its decodes cached (``FailureDriver``'s
``RequestCache``: pods by uid and generation, nodes by resourceVersion) agrees with the
plain recount (:func:`~kubesched.server.nodes.failures.admission_rejection`, which decodes
every pod again) after random sequences of pods added, resized (a spec change: the API
server bumps ``metadata.generation``), ended, deleted, and node allocatable changes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from kubesched.server.nodes.failing import FailureDriver
from kubesched.server.nodes.failures import admission_rejection

Obj = dict[str, Any]


def pod(uid: str, cpu: int, mem: int, generation: int = 1, phase: str = "Running") -> Obj:
    return {"metadata": {"name": f"p-{uid}", "namespace": "default", "uid": uid, "generation": generation},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i", "resources": {
                "requests": {"cpu": f"{cpu}m", "memory": f"{mem}Mi"}}}]},
            "status": {"phase": phase}}


def node(rv: int, cpu: int, mem: int, pods: int) -> Obj:
    return {"metadata": {"name": "n1", "uid": "node-uid", "resourceVersion": str(rv)},
            "status": {"allocatable": {"cpu": f"{cpu}m", "memory": f"{mem}Mi", "pods": str(pods)}}}


OPS = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(0, 3000), st.integers(0, 4000)),
    st.tuples(st.just("resize"), st.integers(0, 30), st.integers(0, 3000), st.integers(0, 4000)),
    st.tuples(st.just("end"), st.integers(0, 30)),
    st.tuples(st.just("delete"), st.integers(0, 30)),
    st.tuples(st.just("node"), st.integers(500, 8000), st.integers(500, 16000), st.integers(1, 12)),
), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(OPS, st.integers(1, 2000), st.integers(1, 3000))
def test_cached_admission_agrees_with_a_recount(ops: list[tuple[Any, ...]], cpu: int, mem: int) -> None:
    driver = FailureDriver(lambda name: pytest.fail("admission records no event here"))
    on_node: dict[str, Obj] = {}
    n = node(1, 4000, 8000, 6)
    serial = 0
    for op in ops:
        if op[0] == "add":
            serial += 1
            on_node[f"u{serial}"] = pod(f"u{serial}", op[1], op[2])
        elif op[0] == "node":
            n = node(int(n["metadata"]["resourceVersion"]) + 1, op[1], op[2], op[3])
        elif on_node:
            uid = sorted(on_node)[op[1] % len(on_node)]
            cur = on_node[uid]
            if op[0] == "resize":
                on_node[uid] = pod(uid, op[2], op[3], cur["metadata"]["generation"] + 1)
            elif op[0] == "end":
                on_node[uid] = pod(uid, 0, 0, cur["metadata"]["generation"], phase="Failed") | {"spec": cur["spec"]}
            else:
                driver.forget(on_node.pop(uid))
        new = pod("new", cpu, mem)
        admitted = list(on_node.values())
        assert driver._resources(new, n, admitted) == admission_rejection(new, n, admitted)


def test_a_resize_is_seen() -> None:
    """By hand: 3000m used of 4000m; a pod asking 1000m fits; after a resize of the pod
    using 3000m to 3500m (generation 2) it does not: used 3500 + 1000 > 4000."""
    driver = FailureDriver(lambda name: pytest.fail("admission records no event here"))
    n = node(1, 4000, 8000, 10)
    first = [pod("a", 3000, 10)]
    assert driver._resources(pod("new", 1000, 10), n, first) is None
    resized = [pod("a", 3500, 10, generation=2)]
    assert driver._resources(pod("new", 1000, 10), n, resized) == (
        "OutOfcpu", "Node didn't have enough resource: cpu, requested: 1000, used: 3500, capacity: 4000")
