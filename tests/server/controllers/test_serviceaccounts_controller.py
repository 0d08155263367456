"""The ``default`` ServiceAccount of every namespace (upstream
``pkg/controller/serviceaccount/serviceaccounts_controller.go``: created for each active
namespace, re-created when deleted), in an in-process cluster."""

from __future__ import annotations

import time
from collections.abc import Callable

from cluster_harness import Cluster, eventually


def test_every_namespace_gets_a_default_service_account(cluster: Callable[..., Cluster]) -> None:
    c = cluster(nodes=1)
    eventually(lambda: c.get("serviceaccounts", "default", "default") is not None)
    eventually(lambda: c.get("serviceaccounts", "kube-system", "default") is not None)
    c.registry.create("namespaces", None, {"metadata": {"name": "team-a"}})
    eventually(lambda: c.get("serviceaccounts", "team-a", "default") is not None)
    first = c.get("serviceaccounts", "team-a", "default")
    assert first is not None
    c.registry.delete("serviceaccounts", "team-a", "default")
    again = eventually(lambda: c.get("serviceaccounts", "team-a", "default"))
    assert again["metadata"]["uid"] != first["metadata"]["uid"]


def test_a_deleted_namespace_stays_deleted(cluster: Callable[..., Cluster]) -> None:
    c = cluster(nodes=1)
    for i in range(5):  # the account is deleted with its namespace: it must not bring the namespace back
        name = f"gone-{i}"
        c.registry.create("namespaces", None, {"metadata": {"name": name}})
        eventually(lambda: c.get("serviceaccounts", name, "default") is not None)
        c.registry.delete("namespaces", None, name)
        eventually(lambda: c.get("namespaces", None, name) is None, timeout=30)
    time.sleep(1.0)  # give a wrongly re-created namespace time to appear
    assert all(c.get("namespaces", None, f"gone-{i}") is None for i in range(5))
