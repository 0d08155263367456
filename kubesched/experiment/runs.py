"""``fill``: one experiment of the FGD paper on an openb-format trace, measured.

The result holds, per integer percent of arrived workload, the GPU allocation ratio, the
unallocated GPUs (100 - allocation), the fragmented share of idle GPU and the fragmented
GPU amount, plus run counts and timings (wall, CPU, pods/s, peak memory).
"""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesched.experiment import engine, series
from kubesched.experiment.openb import TraceNode, TracePod, read_nodes, read_pods
from kubesched.experiment.tables import Table


@dataclass(frozen=True, slots=True)
class FillResult:
    workload: str
    policy: str
    seed: int
    inflation: float
    tie_break: str
    total_gpus: int
    pods_arrived: int
    pods_placed: int
    allocation: dict[int, float]  # percent arrived -> GPU allocation %
    frag_ratio: dict[int, float]  # percent arrived -> fragmented % of idle GPU
    frag_amount: dict[int, float]  # percent arrived -> fragmented GPU, % of the cluster's
    timing: dict[str, float] = field(default_factory=dict)

    @property
    def pods_failed(self) -> int:
        return self.pods_arrived - self.pods_placed

    @property
    def label(self) -> str:
        """The artifact's sc_policy label ("06-FGD")."""
        return engine.POLICIES[self.policy]

    @property
    def last_percent(self) -> int:
        return round(self.inflation * 100)

    @property
    def final_percent(self) -> int | None:
        """The last percent of arrived workload with a measure (the target's, 130 at 1.3,
        unless the last arrivals fell short of it)."""
        return max(self.allocation) if self.allocation else None

    def unallocated(self, percent: int | None = None) -> float | None:
        """Unallocated GPUs (% of the cluster) at ``percent`` arrived (default: the final percent)."""
        p = self.final_percent if percent is None else percent
        a = None if p is None else self.allocation.get(p)
        return None if a is None else round(100 - a, 2)

    def table(self) -> Table:
        rows = [{"arrived": p, "allocation": self.allocation.get(p), "unallocated": self.unallocated(p),
                 "frag_ratio": self.frag_ratio.get(p), "frag_amount": self.frag_amount.get(p)}
                for p in range(self.last_percent + 1)]
        return Table(["arrived", "allocation", "unallocated", "frag_ratio", "frag_amount"], rows)

    def to_json(self) -> dict[str, Any]:
        return {"workload": self.workload, "policy": self.policy, "seed": self.seed, "inflation": self.inflation,
                "tieBreak": self.tie_break, "totalGpus": self.total_gpus, "podsArrived": self.pods_arrived,
                "podsPlaced": self.pods_placed, "podsFailed": self.pods_failed,
                "unallocatedAtEnd": self.unallocated(), "timing": self.timing,
                "allocation": _keyed(self.allocation), "fragRatio": _keyed(self.frag_ratio),
                "fragAmount": _keyed(self.frag_amount)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "FillResult":
        return cls(d["workload"], d["policy"], int(d["seed"]), float(d["inflation"]), d["tieBreak"],
                   int(d["totalGpus"]), int(d["podsArrived"]), int(d["podsPlaced"]),
                   _unkeyed(d["allocation"]), _unkeyed(d["fragRatio"]), _unkeyed(d["fragAmount"]),
                   dict(d.get("timing") or {}))


def _keyed(s: dict[int, float]) -> dict[str, float]:
    return {str(k): v for k, v in s.items()}


def _unkeyed(s: dict[str, float]) -> dict[int, float]:
    return {int(k): float(v) for k, v in s.items()}


def workload_name(pods_path: str | Path) -> str:
    return Path(pods_path).stem


def fill_trace(nodes: list[TraceNode], pods: list[TracePod], *, workload: str, policy: str = "fgd",
               seed: int = 42, inflation: float = 1.3, tie_break: str = "artifact") -> FillResult:
    """Run one experiment on traces already read."""
    wall, cpu = time.perf_counter(), time.process_time()
    arr, steps, gpus = engine.run_fill(nodes, pods, policy, seed, inflation, tie_break)
    last = round(inflation * 100)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    timing = {"wallSeconds": round(wall, 3), "cpuSeconds": round(cpu, 3),
              "podsPerSecond": round(len(arr.pods) / wall, 1) if wall > 0 else 0.0,
              "peakMemoryMiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    return FillResult(workload, policy, seed, inflation, tie_break, gpus, len(arr.pods),
                      sum(1 for n in steps.nodes if n),
                      series.allocation(steps, gpus, last), series.frag_ratio(steps, gpus, last),
                      series.frag_amount(steps, gpus, last), timing)


def fill(nodes: str | Path, pods: str | Path, *, policy: str = "fgd", seed: int = 42, inflation: float = 1.3,
         tie_break: str = "artifact") -> FillResult:
    """Run one experiment of the FGD paper's protocol on openb CSV files (see docs/research.md)."""
    return fill_trace(read_nodes(nodes), read_pods(pods), workload=workload_name(pods), policy=policy,
                      seed=seed, inflation=inflation, tie_break=tie_break)
