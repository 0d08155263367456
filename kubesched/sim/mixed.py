"""The heterogeneous "mixed" bench workload: a seeded generator of a scenario manifest.

The scheduler_perf workloads are thousands of identical pods, which per-signature caches
love; this one makes every pod different, so the per-pod work (new selectors, new
requests, new constraints) is what gets measured. Shares are per pod, drawn independently
from one ``random.Random(seed)``:

* requests: cpu 50m-2000m, memory 64Mi-4Gi (every pod its own pair);
* ~25% a ``nodeSelector`` (``disktype``, ``pool`` or zone, as found on some untainted node);
* ~20% a preferred node affinity (zones, random weight);
* ~15% topology spread in groups of 2-5 pods carrying their own ``spread-group`` label
  (zone or hostname, maxSkew 1-3, DoNotSchedule or ScheduleAnyway);
* ~10% preferred pod anti-affinity on the hostname in groups of 2-5 (own ``anti-group`` label);
* ~10% tolerations of the tainted pools (``dedicated=<pool>:NoSchedule``, a tenth of the nodes);
* priority classes ``low``, ``medium``, ``high`` (and some pods with none).

The output is an ordinary manifest (``kubesched bench --scenario``, ``kubesched simulate``):
PriorityClasses, Nodes, the ``init`` pods (annotated ``bench.kubesched.io/phase: init``), then
the measured pods. Nodes are large enough that every pod fits somewhere.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from kubesched.sim.workloads import HOSTNAME_LABEL, ZONE_LABEL

PHASE_ANNOTATION = "bench.kubesched.io/phase"
ZONES = 10
POOLS = 10  # pool-0 .. pool-9; pool-0 is tainted (a tenth of the nodes)
TAINTED_POOLS = ("pool-0",)
PRIORITY_CLASSES = (("low", 100), ("medium", 1000), ("high", 10000))
NAMESPACE = "mixed"


def _node(i: int) -> dict[str, Any]:
    name = f"mixed-node-{i:05d}"
    pool = f"pool-{(i + i // ZONES) % POOLS}"  # every (zone, pool) pair from 100 nodes on
    cpu, mem = ((8, "32Gi"), (16, "64Gi"), (32, "128Gi"))[i % 3]
    spec: dict[str, Any] = {}
    if pool in TAINTED_POOLS:
        spec["taints"] = [{"key": "dedicated", "value": pool, "effect": "NoSchedule"}]
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {
                HOSTNAME_LABEL: name, ZONE_LABEL: f"zone-{i % ZONES}", "pool": pool,
                "disktype": "ssd" if i % 2 else "hdd"}},
            "spec": spec,
            "status": {"capacity": {"cpu": str(cpu), "memory": mem, "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


class _Groups:
    """Pods of one kind of group share a label value until the group (2-5 pods) is full."""

    def __init__(self, rng: random.Random, prefix: str) -> None:
        self.rng, self.prefix = rng, prefix
        self.n = self.left = 0
        self.extra: dict[str, Any] = {}

    def next(self) -> tuple[str, dict[str, Any]]:
        """The group's label value and its fixed parameters (drawn when the group starts)."""
        if self.left == 0:
            self.n += 1
            self.left = self.rng.randint(2, 5)
            self.extra = {"skew": self.rng.randint(1, 3),
                          "key": self.rng.choice((ZONE_LABEL, HOSTNAME_LABEL)),
                          "when": self.rng.choice(("DoNotSchedule", "ScheduleAnyway"))}
        self.left -= 1
        return f"{self.prefix}-{self.n}", self.extra


def _pod(i: int, rng: random.Random, spread: _Groups, anti: _Groups, init: bool,
         selectable: list[tuple[str, str]]) -> dict[str, Any]:
    name = f"mixed-pod-{i:06d}"
    labels: dict[str, str] = {"app": f"app-{rng.randrange(50)}"}
    spec: dict[str, Any] = {}
    cpu = f"{rng.randrange(50, 2001, 10)}m"
    mem = f"{rng.randrange(64, 4097, 16)}Mi"
    if rng.random() < 0.25 and selectable:
        key, value = rng.choice(selectable)
        spec["nodeSelector"] = {key: value}
    affinity: dict[str, Any] = {}
    if rng.random() < 0.20:
        zones = sorted(rng.sample([f"zone-{z}" for z in range(ZONES)], rng.randint(1, 3)))
        affinity["nodeAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": rng.randint(1, 100),
            "preference": {"matchExpressions": [{"key": ZONE_LABEL, "operator": "In", "values": zones}]}}]}
    if rng.random() < 0.15:
        group, p = spread.next()
        labels["spread-group"] = group
        spec["topologySpreadConstraints"] = [{
            "maxSkew": p["skew"], "topologyKey": p["key"], "whenUnsatisfiable": p["when"],
            "labelSelector": {"matchLabels": {"spread-group": group}}}]
    if rng.random() < 0.10:
        group, _ = anti.next()
        labels["anti-group"] = group
        affinity["podAntiAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": rng.randint(1, 100), "podAffinityTerm": {
                "topologyKey": HOSTNAME_LABEL, "labelSelector": {"matchLabels": {"anti-group": group}}}}]}
    if affinity:
        spec["affinity"] = affinity
    if rng.random() < 0.10:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": pool,
                                "effect": "NoSchedule"} for pool in TAINTED_POOLS]
    klass = rng.choice((*(c for c, _ in PRIORITY_CLASSES), ""))
    if klass:
        spec["priorityClassName"] = klass
    spec["containers"] = [{"name": "app", "image": "registry.k8s.io/pause:3.10.1",
                           "resources": {"requests": {"cpu": cpu, "memory": mem}}}]
    meta: dict[str, Any] = {"name": name, "namespace": NAMESPACE, "uid": f"mixed-{i:08d}", "labels": labels}
    if init:
        meta["annotations"] = {PHASE_ANNOTATION: "init"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def mixed_objects(nodes: int, init_pods: int, pods: int, seed: int = 0) -> Iterator[dict[str, Any]]:
    """The mixed workload's objects in file order; the same arguments give the same objects."""
    rng = random.Random(seed)
    for name, value in PRIORITY_CLASSES:
        yield {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
               "metadata": {"name": name}, "value": value}
    # nodeSelectors name labels of untainted nodes only, so that every pod fits somewhere
    selectable: set[tuple[str, str]] = set()
    for i in range(nodes):
        node = _node(i)
        if not node["spec"]:
            selectable.update((k, v) for k, v in node["metadata"]["labels"].items() if k != HOSTNAME_LABEL)
        yield node
    choices = sorted(selectable)
    spread, anti = _Groups(rng, "spread"), _Groups(rng, "anti")
    for i in range(init_pods + pods):
        yield _pod(i, rng, spread, anti, i < init_pods, choices)
