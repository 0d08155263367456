"""``Replica`` (what ``kubesched run`` runs) in this process against a ``kubesched serve``
process: a standby is ready before it leads; an unexpected error inside leader election does
not end the election (the replica stands again and leads); a graceful stop gives the lease up."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from live_harness import api_pods, create, eventually
from serve_harness import API_ONLY, Server, pod_manifest

from kubesched.cluster.kube import KubeClient
from kubesched.config import load_config
from kubesched.live import LiveOptions
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
