"""A simulated kubelet's heartbeats: its node Lease and its node status, as pure builders and
the slow paths of writing them (the agent, :mod:`.agent`, batches the usual renewal).

* Lease (upstream ``pkg/kubelet/nodelease``, ``component-helpers/apimachinery/lease``): renewed
  every 0.25 × ``leaseDurationSeconds`` (40 s: every 10 s) by an update of the Lease the
  kubelet last wrote; when there is none, or it is stale (409) or gone (404), the Lease is
  patched (owner reference to the Node) or created. Renewals are due on a grid of
  ``period / LEASE_SLOTS`` (0.25 s for 10 s) so that the renewals of many nodes fall due
  together and are written in one transaction: each still every ``period``, up to one slot
  late, within upstream's own jitter (``wait.JitterUntil`` with factor 0.04: up to 0.4 s).
* Node status (upstream ``kubelet_node_status.go``): the conditions MemoryPressure,
  DiskPressure, PIDPressure False and Ready True, posted at once when they are not so, and
  otherwise every ``nodeStatusReportFrequency`` (5 min): with Leases, the status is not a
  heartbeat.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from kubesched.api.kubeversion import GIT_VERSION
from kubesched.api.nodedeclaredfeatures import kubelet_declared
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import meta, timestamp, update_with_retry

Obj = dict[str, Any]
LEASE_NAMESPACE = "kube-node-lease"
MERGE = "application/merge-patch+json"
LEASE_SLOTS = 40  # due times per renewal period

KUBELET_CONDITIONS = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)


def on_grid(due: float, period: float) -> float:
    """``due`` rounded up to the next of ``LEASE_SLOTS`` slots per ``period`` (absolute time)."""
    slot = period / LEASE_SLOTS
    return math.ceil(due / slot - 1e-9) * slot


def healthy(node: Obj) -> bool:
    conds = {c.get("type"): c.get("status") for c in (node.get("status") or {}).get("conditions") or []
             if isinstance(c, dict)}
    return all(conds.get(t) == s for t, s, _, _ in KUBELET_CONDITIONS)


def renewed(latest: Obj, spec: Obj) -> Obj:
    """The update of the Lease the kubelet last wrote (its own copy of what it changes)."""
    return {**latest, "metadata": dict(meta(latest)), "spec": {**(latest.get("spec") or {}), **spec}}


def patch_or_create_lease(registry: Registry, name: str, refs: list[Obj], spec: Obj) -> Obj | None:
    """The Lease patched (owner reference and spec), or created when it does not exist."""
    try:
        return registry.patch("leases", LEASE_NAMESPACE, name, MERGE, {"metadata": {"ownerReferences": refs},
                                                                          "spec": spec})
    except ApiError as exc:
        if exc.code != 404:
            raise
    try:
        return registry.create("leases", LEASE_NAMESPACE, {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": LEASE_NAMESPACE, "ownerReferences": refs}, "spec": spec})
    except ApiError as exc2:
        if exc2.reason != "AlreadyExists":
            raise
    return None


def post_status(registry: Registry, name: str, now: float, kubernetes_version: str = "1.34") -> Obj | None:
    """Write the node's kubelet conditions (heartbeat ``now``), and, when the node has none
    yet, the node info and the declared features of a kubelet of ``kubernetes_version``."""
    ts = timestamp(now)

    def mutate(cur: Obj) -> Obj:
        new = copy.deepcopy(cur)
        status = new.setdefault("status", {})
        old = {c.get("type"): c for c in status.get("conditions") or [] if isinstance(c, dict)}
        conds = []
        for type_, value, reason, message in KUBELET_CONDITIONS:
            prev = old.pop(type_, None)
            since = prev.get("lastTransitionTime") if prev and prev.get("status") == value else ts
            conds.append({"type": type_, "status": value, "lastHeartbeatTime": ts, "lastTransitionTime": since,
                          "reason": reason, "message": message})
        status["conditions"] = conds + list(old.values())
        status.setdefault("daemonEndpoints", {"kubeletEndpoint": {"Port": 10250}})
        version = f"{GIT_VERSION[kubernetes_version]}-kubesched"
        info = status.get("nodeInfo")
        if not info:
            status["nodeInfo"] = {"kubeletVersion": version, "operatingSystem": "linux",
                                  "architecture": "amd64", "containerRuntimeVersion": "kubesched://simulated",
                                  "osImage": "kubesched simulated node"}
        elif str(info.get("kubeletVersion", "")).endswith("-kubesched"):  # a node serve made: its release
            info["kubeletVersion"] = version
            if info.get("kubeProxyVersion"):
                info["kubeProxyVersion"] = version
        declared = kubelet_declared(kubernetes_version)
        if declared and "declaredFeatures" not in status:  # a patched list is kept
            status["declaredFeatures"] = declared
        return new

    return update_with_retry(lambda: registry.get("nodes", None, name), mutate,
                             lambda o: registry.update("nodes", None, name, o, subresource="status"))
