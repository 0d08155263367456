"""A sweep's results in the artifact's file layouts, a per-policy summary, and the report.

``allocation.csv`` has the columns of the artifact's ``analysis_allo_discrete.csv``
(``workload,sc_policy,tune,seed,total_gpus,0,1,...,130``: GPU allocation % at each percent of
arrived workload); ``fragmentation.csv`` and ``fragmentation_amount.csv`` those of
``analysis_frag_ratio_discrete.csv`` and ``analysis_frag_discrete.csv``
(``workload,sc_policy,tune,seed,0,...,130``), so the artifact's plotting scripts read them.
The report shows the paper's figures: unallocated GPUs (100 - allocation) and the
fragmentation ratio against arrived workload per policy, median over seeds with the
spread (min to max) shaded.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kubesched.experiment.engine import POLICIES
from kubesched.experiment.runs import FillResult
from kubesched.experiment.tables import Table

if TYPE_CHECKING:
    from kubesched.sim.report import Report


def _last(runs: Sequence[FillResult]) -> int:
    return max((r.last_percent for r in runs), default=0)


def _series_table(runs: Sequence[FillResult], attr: str, with_gpus: bool) -> Table:
    last = _last(runs)
    meta = ["workload", "sc_policy", "tune", "seed"] + (["total_gpus"] if with_gpus else [])
    rows = []
    for r in runs:
        row: dict[str, object] = {"workload": r.workload, "sc_policy": r.label, "tune": r.inflation, "seed": r.seed}
        if with_gpus:
            row["total_gpus"] = r.total_gpus
        row.update({str(p): v for p, v in getattr(r, attr).items()})
        rows.append(row)
    return Table(meta + [str(p) for p in range(last + 1)], rows)


def allocation_table(runs: Sequence[FillResult]) -> Table:
    return _series_table(runs, "allocation", True)


def frag_ratio_table(runs: Sequence[FillResult]) -> Table:
    return _series_table(runs, "frag_ratio", False)


def frag_amount_table(runs: Sequence[FillResult]) -> Table:
    return _series_table(runs, "frag_amount", False)


def _groups(runs: Sequence[FillResult]) -> dict[tuple[str, str], list[FillResult]]:
    groups: dict[tuple[str, str], list[FillResult]] = defaultdict(list)
    for r in runs:
        groups[(r.workload, r.policy)].append(r)
    order = list(POLICIES)
    return dict(sorted(groups.items(), key=lambda kv: (kv[0][0], order.index(kv[0][1]))))


def summary_table(runs: Sequence[FillResult]) -> Table:
    """Per trace and policy: unallocated GPUs at the final percent of arrived workload
    (median, min, max over seeds), pods failed (median) and run time (median wall seconds)."""
    rows = []
    for (workload, policy), rs in _groups(runs).items():
        un = [u for u in (r.unallocated() for r in rs) if u is not None]
        rows.append({"workload": workload, "policy": policy, "runs": len(rs),
                     "unallocated_median": round(statistics.median(un), 2) if un else None,
                     "unallocated_min": min(un) if un else None, "unallocated_max": max(un) if un else None,
                     "pods_failed_median": statistics.median(r.pods_failed for r in rs),
                     "wall_seconds_median": round(statistics.median(r.timing.get("wallSeconds", 0.0) for r in rs), 2)})
    return Table(["workload", "policy", "runs", "unallocated_median", "unallocated_min", "unallocated_max",
                  "pods_failed_median", "wall_seconds_median"], rows)


def _bands(rs: Sequence[FillResult], attr: str, invert: bool) -> tuple[list[tuple[float, float]],
                                                                        list[tuple[float, float, float]]]:
    median: list[tuple[float, float]] = []
    band: list[tuple[float, float, float]] = []
    for p in range(_last(rs) + 1):
        vals = [getattr(r, attr)[p] for r in rs if p in getattr(r, attr)]
        if not vals:
            continue
        if invert:
            vals = [100 - v for v in vals]
        median.append((p, statistics.median(vals)))
        band.append((p, min(vals), max(vals)))
    return median, band


def report(runs: Sequence[FillResult]) -> "Report":
    from kubesched.sim.report import Report

    rep = Report("GPU sharing: the FGD paper's experiment")
    rep.text("Pods of an openb trace arrive one at a time (shuffled by seed, inflated to the "
             "target share of the cluster's GPUs); each goes to the best node of the policy or is "
             "dropped. Lines: median over seeds; shading: min to max.")
    summ = summary_table(runs)
    rep.table("Unallocated GPUs (%) at the final percent of arrived workload", summ.columns,
              [[r[c] for c in summ.columns] for r in summ.rows])
    for workload in sorted({r.workload for r in runs}):
        mine = [r for r in runs if r.workload == workload]
        for attr, title, ylabel, invert, start in (
                ("allocation", "unallocated GPUs", "unallocated GPU (%)", True, 0),
                ("allocation", "unallocated GPUs from 80% arrived", "unallocated GPU (%)", True, 80),
                ("frag_ratio", "fragmentation ratio", "fragmented share of idle GPU (%)", False, 0)):
            lines, bands = {}, {}
            for (_, policy), rs in _groups(mine).items():
                line, band = _bands(rs, attr, invert)
                lines[policy] = [pt for pt in line if pt[0] >= start]
                bands[policy] = [b for b in band if b[0] >= start]
            rep.line_plot(f"{workload}: {title}", lines, "arrived workload (% of cluster GPUs)", ylabel, bands=bands)
    return rep


def write_all(runs: Sequence[FillResult], out: Path) -> Path:
    """Write the CSVs and the report into ``out``; returns the report's path."""
    out.mkdir(parents=True, exist_ok=True)
    allocation_table(runs).to_csv(out / "allocation.csv")
    frag_ratio_table(runs).to_csv(out / "fragmentation.csv")
    frag_amount_table(runs).to_csv(out / "fragmentation_amount.csv")
    summary_table(runs).to_csv(out / "summary.csv")
    return report(runs).write(out)
