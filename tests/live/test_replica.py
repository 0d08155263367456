"""``Replica`` (what ``kubesched run`` runs) in this process against a ``kubesched serve``
process: a standby is ready before it leads; an unexpected error inside leader election does
not end the election (the replica stands again and leads); a graceful stop gives the lease up;
its metrics go on across a lost lease. And a LiveScheduler whose fence refuses its writes:
the binding fails like any other (the assumed pod is forgotten and requeued)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from live_harness import api_pods, create, eventually
from serve_harness import API_ONLY, Server, pod_manifest

from kubesched.cluster.kube import KubeClient
from kubesched.cluster.kube.errors import FencedError
from kubesched.config import load_config
from kubesched.framework.registry import PluginSpec, Registry
from kubesched.framework.status import SUCCESS, Status
from kubesched.live import LiveOptions, LiveScheduler
from kubesched.live.replica import Replica
from kubesched.plugins.registry import in_tree_registry

pytestmark = pytest.mark.slow

LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched"


@pytest.fixture
def replica() -> Iterator[Callable[..., Replica]]:
    made: list[tuple[Replica, KubeClient]] = []

    def make(server: Server, identity: str) -> Replica:
        cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                           "leaderElection": {"leaseDuration": "3s", "renewDeadline": "2s", "retryPeriod": "200ms",
                                              "resourceName": "kubesched"}}, in_tree_registry())
        client = KubeClient.connect(str(server.kubeconfig))
        r = Replica(cfg, client, identity=identity, options=LiveOptions(informer_backoff=(0.1, 2.0, 1.0)))
        made.append((r, client))
        return r

    yield make
    for r, client in made:
        r.stop()
        client.close()


def test_an_error_inside_leader_election_does_not_end_it(spawn: Callable[..., Server],
                                                         replica: Callable[..., Replica]) -> None:
    server = spawn("--nodes", "1", *API_ONLY)
    r = replica(server, "flaky")
    assert r.elector is not None
    real = r.elector.try_acquire_or_renew
    calls = {"n": 0}

    def flaky() -> bool:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ValueError("a malformed answer")
        return real()

    r.elector.try_acquire_or_renew = flaky  # type: ignore[method-assign]
    r.start()
    eventually(lambda: r.leading, timeout=15)
    assert calls["n"] >= 2
    create(server, pod_manifest("p"))
    eventually(lambda: api_pods(server)["p"]["spec"].get("nodeName") == "node-01")


def test_standby_is_ready_and_a_graceful_stop_gives_the_lease_up(spawn: Callable[..., Server],
                                                                 replica: Callable[..., Replica]) -> None:
    server = spawn("--nodes", "1", *API_ONLY)
    leader, standby = replica(server, "one"), replica(server, "two")
    leader.start()
    eventually(lambda: leader.leading and leader.live.ready)
    standby.start()
    ready = {name: check for name, check in standby.hooks().readyz}
    eventually(lambda: all(check() is None for check in ready.values()))
    assert not standby.leading and not standby.live.ready  # synced, not scheduling
    leader.stop()

    def lease() -> dict[str, Any]:
        return server.request("GET", LEASE)[1]["spec"]  # type: ignore[no-any-return]

    eventually(lambda: lease().get("holderIdentity") == "two", timeout=10)
    eventually(lambda: standby.leading and standby.live.ready)
    assert lease()["leaseTransitions"] == 1


def test_metrics_go_on_across_a_lost_lease(spawn: Callable[..., Server], replica: Callable[..., Replica]) -> None:
    """The API server stops until the leader loses its lease (renew deadline 2 s): it throws
    its scheduler away and builds a new one. Once the server is back and the replica leads
    again, ``scheduler_schedule_attempts_total{result="scheduled"}`` counts the pod of the
    first term and the pod of the second: 1 + 1 = 2 (the rebuilt scheduler used to start
    from 0 and report 1)."""
    server = spawn("--nodes", "1", *API_ONLY)
    r = replica(server, "one")
    labels = {"result": "scheduled", "profile": "default-scheduler"}

    def scheduled() -> float | None:
        return r.metrics_registry.get_sample_value("scheduler_schedule_attempts_total", labels)

    r.start()
    eventually(lambda: r.leading and r.live.ready)
    create(server, pod_manifest("first"))
    eventually(lambda: api_pods(server)["first"]["spec"].get("nodeName") == "node-01")
    assert scheduled() == 1
    first_live = r.live
    server.stop()
    eventually(lambda: r.lost == 1, timeout=15)
    assert r.live is not first_live
    server.start()
    eventually(lambda: r.leading and r.live.ready, timeout=20)
    create(server, pod_manifest("second"))
    eventually(lambda: api_pods(server)["second"]["spec"].get("nodeName") == "node-01")
    eventually(lambda: scheduled() == 2)
    assert r.metrics_registry.get_sample_value("scheduler_pending_pods", {"queue": "active"}) == 0
    assert r.metrics_registry.get_sample_value("leader_election_master_status", {"name": "kube-scheduler"}) == 1


class _Hold:
    """PreBind: holds each binding cycle until ``release`` is set (``held`` tells it holds)."""

    name = "Hold"

    def __init__(self) -> None:
        self.held = threading.Event()
        self.release = threading.Event()

    def pre_bind(self, state: Any, pod: Any, node_name: str) -> Status:
        self.held.set()
        self.release.wait(30)
        return SUCCESS


def test_a_fenced_binding_is_forgotten_and_requeued(spawn: Callable[..., Server],
                                                    live: Callable[..., LiveScheduler]) -> None:
    """One node of 1 CPU. The 600m pod ``a`` is assumed on node-01 while the fence is open;
    its binding cycle is held at PreBind while the fence closes (the lease is no longer
    provably ours), then let go: the binding is refused before it is sent, the attempt ends
    in Error, the assumption is forgotten (nothing of ``a`` in the cache), the pod waits in
    the queue, and nothing reached the API (no nodeName, no PodScheduled condition). While
    the fence stays closed the loop pops nothing. Opened again, ``a`` is bound at its next
    try (an assumption left behind would make that try fail: a pod cannot be assumed twice),
    and ``b`` (600m) is refused: 600 + 600 > 1000."""
    server = spawn("--nodes", "1", "--node-cpu", "1", *API_ONLY)
    hold = _Hold()
    registry = in_tree_registry().merged(Registry([PluginSpec("Hold", lambda args, handle: hold)]))
    is_open = True

    def fence() -> None:
        if not is_open:
            raise FencedError("test-replica cannot prove it holds the lease kube-system/kubesched")

    sched = live(server, {"profiles": [{"schedulerName": "default-scheduler",
                                        "plugins": {"preBind": {"enabled": [{"name": "Hold"}]}}}]},
                 registry=registry, fence=fence)
    create(server, pod_manifest("a", cpu="600m"))
    assert hold.held.wait(30)
    is_open = False
    hold.release.set()
    att = eventually(lambda: (a := sched.attempt("default", "a")) is not None and a.result == "Error" and a)
    assert "cannot prove it holds the lease" in (att.message or "")
    pod = api_pods(server)["a"]
    with sched.sched.lock:
        assert pod["metadata"]["uid"] not in sched.cache.pod_states
        queued = sched.pods.get("default/a")
        assert queued is not None and sched.queue.where(queued) is not None  # waiting for another try
    assert not pod["spec"].get("nodeName") and not pod["status"].get("conditions")
    cycles = sched.loop.cycles
    time.sleep(2.5)  # past the pod's backoff (1 s, then 2 s): a loop that popped would have tried again
    assert sched.loop.cycles == cycles
    is_open = True
    sched.loop.wake()
    eventually(lambda: api_pods(server)["a"]["spec"].get("nodeName") == "node-01", timeout=30)
    create(server, pod_manifest("b", cpu="600m"))
    cond = eventually(lambda: next((c for c in api_pods(server)["b"]["status"].get("conditions") or ()
                                    if c["type"] == "PodScheduled"), None))
    assert cond["message"].startswith("0/1 nodes are available: 1 Insufficient cpu."), cond
