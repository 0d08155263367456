"""The HTML report of ``kubesched compare`` (:mod:`kubesched.sim.compare`'s JSON document,
laid out with :mod:`kubesched.sim.report`): a summary table, nodes used, utilisation
histograms, fragmentation, spread per workload and the per-pod diff."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched.sim.report import Cell, Report

MAX_DIFF_ROWS = 500  # the HTML table; report.json has them all


def summary_rows(doc: dict[str, Any]) -> tuple[list[str], list[Sequence[Cell]]]:
    """One row per measure, one column per configuration (also the terminal's table)."""
    runs = doc["configurations"]
    cols = ["measure"] + [r["name"] for r in runs]
    rows: list[Sequence[Cell]] = []
    for key in ("scheduled", "unschedulable", "gated", "preempted"):
        rows.append([key] + [r["summary"].get(key, 0) for r in runs])
    rows.append(["nodes used"] + [f"{r['nodesUsed']}/{r['nodes']}" for r in runs])
    for res in sorted({k for r in runs for k in r["utilisation"]}, key=lambda k: (k not in ("cpu", "memory"), k)):
        for stat in ("mean", "p50", "max"):
            rows.append([f"{res} utilisation {stat}"] + [_pct(r["utilisation"].get(res, {}).get(stat)) for r in runs])
    for res in ("cpu", "memory"):
        rows.append([f"{res} stranded (fragmentation)"] +
                     [_pct(r["fragmentation"][res]["ratio"]) if r["fragmentation"] else "n/a" for r in runs])
    rows.append(["preemptions (victims)"] +
                [f"{r['preemptions']['preemptors']} ({r['preemptions']['victims']})" for r in runs])
    return cols, rows


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}%"


def _gib(n: int) -> str:
    return f"{n / 2**30:.4g}Gi"


def build(doc: dict[str, Any]) -> Report:
    runs = doc["configurations"]
    names = [r["name"] for r in runs]
    rep = Report("kubesched compare: " + " vs ".join(names))
    rep.text(f"Cluster: {', '.join(doc['cluster'])}. {doc['pendingPods']} pending pods scheduled under each "
             f"configuration on a fresh copy of the cluster (seed {doc['seed']}, ties: {doc['tieBreak']}).")
    cols, rows = summary_rows(doc)
    rep.table("Summary", cols, rows)
    rep.bar_plot("Nodes used", names, {"nodes used": [r["nodesUsed"] for r in runs]}, "configuration", "nodes")
    rep.heading("Utilisation per node")
    rep.text("Requested / allocatable on each node, per resource (nodes offering none of it left out).")
    for res in sorted({k for r in runs for k in r["utilisation"]}, key=lambda k: (k not in ("cpu", "memory"), k)):
        samples = {r["name"]: list(r["utilisation"].get(res, {}).get("perNode", {}).values()) for r in runs}
        rep.histogram(f"{res} utilisation", samples, "requested / allocatable", "nodes", bins=10, range=(0.0, 1.0))
    rep.heading("Fragmentation")
    frag = [r for r in runs if r["fragmentation"]]
    if frag:
        ref = frag[0]["fragmentation"]["referencePod"]
        rep.text(f"Reference pod (median pending pod): cpu {ref['cpu']}m, memory {_gib(ref['memory'])}. "
                 "Stranded: free on schedulable nodes that cannot fit it.")
        rep.table("Free and stranded resources", ["configuration", "cpu free (m)", "cpu stranded (m)",
                                                  "memory free", "memory stranded"],
                  [[r["name"], r["fragmentation"]["cpu"]["free"], r["fragmentation"]["cpu"]["stranded"],
                    _gib(r["fragmentation"]["memory"]["free"]), _gib(r["fragmentation"]["memory"]["stranded"])]
                   for r in frag])
    else:
        rep.text("No pod was pending: fragmentation is undefined.")
    reasons = [[r["name"], msg, n] for r in runs for msg, n in r["unschedulableReasons"].items()]
    if reasons:
        rep.heading("Unschedulable pods")
        rep.table("Reasons", ["configuration", "message", "pods"], reasons)
    _spread(rep, runs)
    rep.heading("Placements that differ")
    diff = doc["diff"]
    rep.text(f"{diff['same']} pods placed the same under every configuration; {len(diff['different'])} differently"
             + (f" (first {MAX_DIFF_ROWS} shown; report.json has all)." if len(diff["different"]) > MAX_DIFF_ROWS
                else "."))
    rep.table("Per-pod placements", ["pod"] + names,
              [[d["pod"]] + [d["placements"][n] for n in names] for d in diff["different"][:MAX_DIFF_ROWS]])
    return rep


def _spread(rep: Report, runs: list[dict[str, Any]]) -> None:
    workloads = sorted({w for r in runs for w in r["spread"]})
    if not workloads:
        return
    rep.heading("Spread per workload")
    rows: list[list[Cell]] = []
    for w in workloads:
        row: list[Cell] = [w]
        for r in runs:
            s = r["spread"].get(w)
            row.append(f"{s['pods']} pods on {s['nodes']} nodes / {s['zones']} zones, max {s['maxPerNode']}"
                       if s else "")
        rows.append(row)
    rep.table("Pods, nodes, zones, most pods on one node", ["workload"] + [r["name"] for r in runs], rows)
