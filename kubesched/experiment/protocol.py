"""The FGD artifact's workload protocol: which pods arrive, in which order, and the node order
its scheduler breaks ties by.

From hkust-adsl/kubernetes-scheduler-simulator ``pkg/simulator/simulator.go``, with one seeded
random source used in the artifact's order:

1. ``SortClusterPods``: the trace's pods sorted by name, then shuffled;
2. ``TunePodsByNodeTotalResource``: if the pods ask for more milli-GPU than ``inflation`` x
   the cluster's, random pods are removed until they do not (thinning); if they ask for
   less, copies of uniformly drawn trace pods are appended, stopping at the first copy whose
   milli-GPU *per GPU* would take the total past the target (the artifact's test);
3. ``syncClusterResourceList``: nodes sorted by name get the prefixes of a random
   permutation ("0042-node"), so the smallest name - the artifact's tie-break - follows a
   seed-dependent order: :attr:`Arrival.rank`.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from dataclasses import dataclass

from kubesched.api.errors import KubeschedError
from kubesched.contrib.gpushare.model import MILLI
from kubesched.experiment.openb import TraceNode, TracePod


@dataclass(frozen=True, slots=True)
class Arrival:
    """The pods in arrival order and the tie-break rank of each node (lower wins)."""

    pods: list[TracePod]
    rank: list[int]
    target_milli: float


def arrival(pods: Sequence[TracePod], nodes: Sequence[TraceNode], inflation: float,
            rng: random.Random) -> Arrival:
    """Apply the artifact's shuffle, inflation or thinning, and node permutation."""
    if inflation <= 0:
        raise KubeschedError(f"inflation {inflation}: must be greater than 0")
    capacity = sum(n.gpus for n in nodes) * MILLI
    if capacity <= 0:
        raise KubeschedError("the node list has no GPU: the experiment measures GPU allocation")
    base = sorted(pods, key=lambda p: p.name)
    if not any(p.gpu.wants_gpu for p in base):
        raise KubeschedError("the pod list asks for no GPU: the experiment measures GPU allocation")
    ordered = list(base)
    rng.shuffle(ordered)
    target = inflation * float(capacity)
    total = sum(p.gpu.total for p in ordered)
    if total > target:
        while total > target:
            total -= ordered.pop(rng.randrange(len(ordered))).gpu.total
    elif total < target:
        i = 0
        while True:
            p = base[rng.randrange(len(base))]
            if total + p.gpu.milli > target:
                break
            total += p.gpu.total
            ordered.append(dataclasses.replace(p, name=f"{p.name}-tuned-{i}"))
            i += 1
    rank = list(range(len(nodes)))
    rng.shuffle(rank)
    by_name = sorted(range(len(nodes)), key=lambda i: nodes[i].name)
    node_rank = [0] * len(nodes)
    for pos, i in enumerate(by_name):
        node_rank[i] = rank[pos]
    return Arrival(ordered, node_rank, target)
