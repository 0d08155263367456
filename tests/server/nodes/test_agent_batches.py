"""The simulated kubelets' batches: Lease renewals of nodes due together and pods' status
writes are made in one transaction by the worker's flush, each object with its own
resourceVersion; renewals are due on a grid of 40 slots per period. A real Store,
Registry and informers; the agent's syncs called directly on a fake clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import micro_timestamp
from kubesched.server.controllers.informer import Informer, by_node_name, wait_synced
from kubesched.server.nodes.agent import LEASE_NAMESPACE, AgentOptions, NodeAgent
from kubesched.server.nodes.heartbeat import on_grid
from kubesched.server.store import Store

T0 = 1_800_000_000.0
NODES = [f"n{i}" for i in range(5)]


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> float:
        return self.t


@pytest.mark.parametrize(("due", "period", "want"), [
    (T0 + 10.0, 10.0, T0 + 10.0),  # on a slot already (T0 is a multiple of 0.25)
    (T0 + 10.01, 10.0, T0 + 10.25),  # the next 0.25 s slot
    (T0 + 10.24, 10.0, T0 + 10.25),
    (4.0, 0.4, 4.0), (4.001, 0.4, 4.01),  # 0.4 / 40 = 0.01
])
def test_renewals_are_due_on_a_grid_of_40_slots_per_period(due: float, period: float, want: float) -> None:
    assert on_grid(due, period) == pytest.approx(want)


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[tuple[NodeAgent, Registry, Clock]]:
    clock = Clock()
    store = Store(tmp_path / "db")
    reg = Registry(store, clock=clock)
    reg.bootstrap()
    for name in NODES:
        reg.create("nodes", None, {"metadata": {"name": name}, "status": {
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    nodes, pods = Informer(reg, "nodes"), Informer(reg, "pods")
    pods.add_index("node", by_node_name)
    for inf in (nodes, pods):
        inf.start()
    assert wait_synced([nodes, pods])
    a = NodeAgent(reg, nodes, pods, AgentOptions(pod_start_delay=0.0), clock=clock)  # workers not started
    for name in NODES:  # first heartbeat: Lease created, status posted, pod CIDR given, at once
        a.sync(("node", "", name))
    a.flush()
    assert nodes.wait_for(store.rv)
    yield a, reg, clock
    for inf in (nodes, pods):
        inf.stop()
    store.close()


def test_lease_renewals_due_together_are_one_transaction(agent: tuple[NodeAgent, Registry, Clock]) -> None:
    a, reg, clock = agent
    before = {n: reg.get("leases", LEASE_NAMESPACE, n) for n in NODES}
    clock.t += 10.0
    commits = reg.store.commits
    for name in NODES:
        a.sync(("node", "", name))
    assert reg.store.commits == commits  # deferred to the batch
    a.flush()
    assert reg.store.commits == commits + 1
    after = {n: reg.get("leases", LEASE_NAMESPACE, n) for n in NODES}
    rvs = sorted(int(x["metadata"]["resourceVersion"]) for x in after.values())
    assert len(set(rvs)) == len(NODES) and rvs[-1] - rvs[0] == len(NODES) - 1  # one revision each
    for n in NODES:
        assert after[n]["spec"]["renewTime"] == micro_timestamp(clock.t) != before[n]["spec"]["renewTime"]
        assert after[n]["spec"]["holderIdentity"] == n


def test_pod_starts_on_several_nodes_are_one_transaction(agent: tuple[NodeAgent, Registry, Clock]) -> None:
    a, reg, clock = agent
    for i, name in enumerate(NODES):
        reg.create("pods", "default", {"metadata": {"name": f"p{i}"}, "spec": {
            "nodeName": name, "containers": [{"name": "c", "image": "pause"}]}})
    assert a.pods.wait_for(reg.store.rv)
    commits = reg.store.commits
    for i in range(len(NODES)):
        a.sync(("pod", "default", f"p{i}"))
    a.flush()
    assert reg.store.commits == commits + 1
    got = [reg.get("pods", "default", f"p{i}") for i in range(len(NODES))]
    assert all(p["status"]["phase"] == "Running" and p["status"]["podIP"].startswith("10.244.") for p in got)
    assert len({p["metadata"]["resourceVersion"] for p in got}) == len(NODES)
    assert all(p["spec"]["containers"][0]["image"] == "pause" for p in got)  # the stored spec kept
