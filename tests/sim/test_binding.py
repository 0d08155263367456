"""The binding side of the scheduler: no double booking under a burst, and assumed pods.

- A burst of 1,000 identical pods onto a nearly full cluster must never overcommit a node:
  every assumed pod counts on its node at once (upstream ``cache.AssumePod``), so the next
  cycle cannot use the same room twice. Expected counts are hand-computed below.
- Assumed pods expire only after their binding finished and the TTL passed (upstream
  ``cache.cleanupAssumedPods``; the scheduler's TTL is 0, "never", since v1.24 — expiry is
  exercised here with an explicit TTL).
"""

from __future__ import annotations

import dataclasses

from kubesched.api.decode import Manifest
from kubesched.cache.cache import Cache
from kubesched.config import load_config
from kubesched.sim.driver import Simulation
from kubesched.testing.wrappers import make_node, make_pod


def test_burst_of_identical_pods_never_overcommits() -> None:
    # 10 nodes of 4 cpu; each already runs a 1500m pod, leaving 2500m: room for exactly two
    # 1-cpu pods per node (2 * 1000m <= 2500m < 3 * 1000m). 10 nodes * 2 = 20 pods fit; the
    # other 980 of the burst of 1,000 must stay Pending.
    nodes = [make_node().name(f"n{i}").capacity(cpu="4", memory="64Gi", pods="110").obj() for i in range(10)]
    running = [make_pod().name(f"r{i}").uid(f"r{i}").req(cpu="1500m", memory="1Gi").node(f"n{i}").obj()
               for i in range(10)]
    base = make_pod().name("b").req(cpu="1", memory="1Gi").obj()
    burst = [dataclasses.replace(base, name=f"b{i}", uid=f"b{i}", seq=10 + i) for i in range(1000)]
    m = Manifest()
    m.nodes, m.pods = nodes, running + burst
    sim = Simulation(m, load_config(None), seed=1)
    sim.run()
    summary = sim.summary()
    assert summary["scheduled"] == 20
    assert summary["unschedulable"] == 980
    per_node: dict[str, int] = {}
    for o in sim.results():
        if o.status == "Scheduled":
            per_node[o.node or ""] = per_node.get(o.node or "", 0) + 1
    assert per_node == {f"n{i}": 2 for i in range(10)}
    for ni in sim.cache.nodes.values():
        assert ni.requested["cpu"] <= ni.allocatable["cpu"]
        assert ni.requested["cpu"] == 1500 + 2 * 1000


def test_assumed_pod_expires_only_after_binding_finished_and_ttl() -> None:
    cache = Cache(ttl=30.0)
    cache.add_node(make_node().name("n").capacity(cpu="2", memory="1Gi", pods="10").obj())
    pod = make_pod().name("p").uid("p").req(cpu="1").node("n").obj()
    cache.assume_pod(pod)
    assert cache.cleanup_expired(now=1000.0) == []  # binding not finished: never expires
    cache.finish_binding(pod, now=10.0)
    assert cache.cleanup_expired(now=39.9) == []     # 10 + 30 = 40 not reached
    assert [p.key for p in cache.cleanup_expired(now=40.0)] == ["default/p"]
    assert cache.nodes["n"].requested.get("cpu", 0) == 0
    assert not cache.is_assumed(pod)


def test_confirmed_pod_does_not_expire() -> None:
    cache = Cache(ttl=30.0)
    cache.add_node(make_node().name("n").capacity(cpu="2", memory="1Gi", pods="10").obj())
    pod = make_pod().name("p").uid("p").req(cpu="1").node("n").obj()
    cache.assume_pod(pod)
    cache.finish_binding(pod, now=0.0)
    cache.add_pod(pod)  # the informer saw the bind
    assert cache.cleanup_expired(now=100.0) == []
    assert cache.nodes["n"].requested["cpu"] == 1000
