"""One fill experiment: the artifact's pods arrive one at a time, each goes to the best
node of the policy or is dropped, and the cluster is measured after every pod.

After each arrival (placed or dropped, as the artifact's ``ClusterGpuFragReport`` logs it)
a :class:`Step` records the milli-GPU that has arrived, the milli-GPU allocated, the
fragmented milli-GPU (:mod:`kubesched.contrib.gpushare.frag`) and the idle milli-GPU.

Ties between equal scores: ``artifact`` takes the node of lowest :attr:`Arrival.rank` (the
artifact's patched ``selectHost`` takes the smallest node name, and its node names start
with a seeded permutation); ``random`` draws uniformly among them, as upstream's
``selectHost`` does (reservoir sampling).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kubesched.api.errors import KubeschedError
from kubesched.contrib.gpushare.frag import Shape, TypicalShape, idle_weight, typical_shapes
from kubesched.experiment import scorers
from kubesched.experiment.cluster import Cluster, PodRow
from kubesched.experiment.openb import TraceNode, TracePod
from kubesched.experiment.protocol import Arrival, arrival

# Policy name -> the artifact's sc_policy label (its result files and plots use these).
POLICIES: dict[str, str] = {
    "random": "01-Random",
    "dotproduct": "02-DotProd",
    "gpuclustering": "03-GpuClustering",
    "gpupacking": "04-GpuPacking",
    "bestfit": "05-BestFit",
    "fgd": "06-FGD",
}
TIE_BREAKS = ("artifact", "random")


@dataclass(frozen=True, slots=True)
class Steps:
    """Per arrival: milli-GPU arrived, allocated, fragmented and idle; the pod's node or ''."""

    arrived: npt.NDArray[np.int64]
    used: npt.NDArray[np.int64]
    frag: npt.NDArray[np.float64]
    idle: npt.NDArray[np.float64]
    nodes: list[str]
    gpus: list[str]


def policy_scorer(policy: str, typical: Sequence[TypicalShape]) -> scorers.Scorer | scorers.Random:
    made: dict[str, Callable[[], scorers.Scorer | scorers.Random]] = {
        "random": scorers.Random, "dotproduct": scorers.DotProduct, "gpuclustering": scorers.GpuClustering,
        "gpupacking": scorers.GpuPacking, "bestfit": scorers.BestFit, "fgd": lambda: scorers.FGD(typical)}
    if policy not in made:
        raise KubeschedError(f"policy {policy!r}: not one of {', '.join(POLICIES)}")
    return made[policy]()


def workload_shapes(pods: Sequence[TracePod]) -> list[TypicalShape]:
    """The target workload of FGD and of the fragmentation measure: the trace's typical shapes."""
    return typical_shapes([Shape(p.cpu, p.gpu) for p in pods])


def run_fill(nodes: Sequence[TraceNode], pods: Sequence[TracePod], policy: str, seed: int,
             inflation: float, tie_break: str = "artifact") -> tuple[Arrival, Steps, int]:
    """Run one experiment; returns the arrivals, the steps and the cluster's GPU count."""
    if tie_break not in TIE_BREAKS:
        raise KubeschedError(f"tie-break {tie_break!r}: not one of {', '.join(TIE_BREAKS)}")
    if not nodes:
        raise KubeschedError("the node list is empty")
    rng = random.Random(seed)
    arr = arrival(pods, nodes, inflation, rng)
    typical = workload_shapes(pods)
    cl = Cluster(nodes, typical)
    steps = place_all(cl, arr.pods, policy_scorer(policy, typical), np.array(arr.rank, dtype=np.int64),
                      rng, tie_break, idle_weight(typical))
    return arr, steps, cl.total_gpus


def place_all(cl: Cluster, pods: Sequence[TracePod], scorer: scorers.Scorer | scorers.Random,
              rank: npt.NDArray[np.int64], rng: random.Random, tie_break: str, weight: float) -> Steps:
    """Place ``pods`` one at a time in that order, measuring the cluster after each."""
    n = len(pods)
    arrived, used = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    frag, idle = np.zeros(n), np.zeros(n)
    placed_on: list[str] = []
    gpus_of: list[str] = []
    total = 0
    for k, pod in enumerate(pods):
        row = cl.pod_row(pod)
        total += pod.gpu.total
        cand = cl.candidates(row)
        node, gpus = "", ""
        if len(cand):
            i = _choose(cl, cand, row, scorer, rng, rank, tie_break)
            chosen = scorer.gpus(cl, i, row, rng)
            cl.place(i, row, chosen)
            node, gpus = cl.names[i], "-".join(map(str, chosen))
        arrived[k], used[k] = total, cl.used_milli
        frag[k], idle[k] = float(cl.frag.sum()), float(cl.left.sum()) * weight
        placed_on.append(node)
        gpus_of.append(gpus)
    return Steps(arrived, used, frag, idle, placed_on, gpus_of)


def _choose(cl: Cluster, cand: npt.NDArray[np.intp], row: PodRow, scorer: scorers.Scorer | scorers.Random,
            rng: random.Random, rank: npt.NDArray[np.int64], tie_break: str) -> int:
    if isinstance(scorer, scorers.Random):
        return int(cand[rng.randrange(len(cand))])
    s = scorer.scores(cl, cand, row)
    ties = cand[s == s.max()]
    if len(ties) == 1:
        return int(ties[0])
    if tie_break == "artifact":
        return int(ties[np.argmin(rank[ties])])
    return int(ties[rng.randrange(len(ties))])
