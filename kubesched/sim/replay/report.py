"""The HTML report (:mod:`kubesched.sim.report`) of ``kubesched replay``, and its data files.

Beside ``report.html``/``report.json``/``series/`` the output directory gets the whole
run: ``replay.json`` (summary, series, every pod), ``series.csv`` (one row per sample) and
``pods.csv`` (one row per pod: arrival, bind, node, latency, deletion, attempts). A plot
shows at most :data:`MAX_POINTS` points per line (every k-th sample, the last one kept);
``series.csv`` has every sample.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

from kubesched.sim.replay.engine import ReplayResult
from kubesched.sim.report import Point, Report

MAX_POINTS = 2000
SERIES_COLUMNS = ("time", "pending", "running", "cpu", "memory", "fragmentation")
POD_COLUMNS = ("pod", "arrival", "bind", "node", "latency", "deleted", "attempts", "preempted")


def _thin(points: list[Point]) -> list[Point]:
    if len(points) <= MAX_POINTS:
        return points
    k = -(-len(points) // MAX_POINTS)
    out = points[::k]
    if out[-1] != points[-1]:
        out.append(points[-1])
    return out


def _line(r: ReplayResult, key: str) -> list[Point]:
    return _thin([(s["time"], s[key]) for s in r.series])


def replay_report(r: ReplayResult, trace: str) -> Report:
    rep = Report(f"replay: {os.path.basename(trace)}")
    s = r.summary()
    rep.text(f"{s['pods']} pods on {s['nodes']} nodes over {s['virtualSeconds']:g} s of virtual time "
             f"({s['wallSeconds']:g} s of wall time, {s['attempts']} scheduling attempts): "
             f"{s['scheduled']} scheduled, {s['neverScheduled']} never scheduled, {s['preempted']} preempted.")
    rep.table("summary", ["metric", "value"], [[k, v] for k, v in s.items()])
    rep.line_plot("pods pending and running", {"pending": _line(r, "pending"), "running": _line(r, "running")},
                  "virtual time (s)", "pods", step=True)
    rep.line_plot("utilisation (requested / allocatable)", {"cpu": _line(r, "cpu"), "memory": _line(r, "memory")},
                  "virtual time (s)", "fraction", step=True)
    rep.line_plot("fragmentation (free cpu on nodes that cannot fit the median pod)",
                  {"fragmentation": _line(r, "fragmentation")}, "virtual time (s)", "share of free cpu", step=True)
    lat = r.latencies()
    rep.histogram("scheduling latency (bind - arrival)", {"latency": lat}, "seconds", bins=30)
    never = [p for p in r.pods if p.bind is None]
    if never:
        rep.table("never scheduled", ["pod", "arrival", "deleted"], [[p.pod, p.arrival, p.deleted] for p in never[:200]])
    return rep


def write_replay_data(r: ReplayResult, out_dir: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "replay.json").write_text(json.dumps(r.to_json(), allow_nan=False) + "\n", encoding="utf-8")
    with open(out / "series.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(SERIES_COLUMNS)
        w.writerows([s[c] for c in SERIES_COLUMNS] for s in r.series)
    with open(out / "pods.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(POD_COLUMNS)
        for p in r.pods:
            d = p.to_json()
            w.writerow("" if d[c] is None else d[c] for c in POD_COLUMNS)
