"""The HTML reports (:mod:`kubesched.sim.report`) of ``kubesched capacity fit|plan|drain``:
the same numbers as the terminal tables and the JSON, with a plot where one helps."""

from __future__ import annotations

from typing import Any

from kubesched.sim.capacity.drain import DrainResult
from kubesched.sim.capacity.fit import FitResult
from kubesched.sim.capacity.plan import PlanResult
from kubesched.sim.report import Report


def verdict_text(v: Any) -> tuple[str, str]:
    """(plugin and code, reasons) of an explain Filter verdict."""
    if v == "ok":
        return "ok", ""
    if not isinstance(v, dict):
        return str(v), ""
    return f"{v.get('plugin') or 'PreFilter'} ({v.get('code')})", "; ".join(v.get("reasons") or [])


def fit_report(r: FitResult) -> Report:
    rep = Report(f"capacity fit: {r.template.key}")
    stop = "--max reached" if r.stopped_by == "max" else "the next copy did not fit"
    rep.text(f"{r.count} more copies of {r.template.key} fit ({stop}); "
             f"{r.pending_first} pending pod(s) of the cluster were scheduled first.")
    nodes = sorted(r.per_node)
    rep.bar_plot("copies per node", nodes, {"copies": [r.per_node[n] for n in nodes]}, "node", "copies")
    rep.table("copies per node", ["node", "copies"], [[n, r.per_node[n]] for n in nodes])
    if r.refusal is not None:
        rep.heading("Why the next copy does not fit")
        rep.text(r.refusal.message or "")
        rep.table("reasons", ["plugin", "reason", "nodes"],
                  [[x["plugin"], x["reason"], x["nodes"]] for x in r.reasons()])
        rep.table("Filter, node by node", ["node", "verdict", "reasons"],
                  [[n, *verdict_text(v)] for n, v in r.refusal.filter.items()])
    return rep


def plan_report(r: PlanResult) -> Report:
    rep = Report(f"capacity plan ({r.objective})")
    cost = "" if r.cost is None else f", total price {r.cost:g}"
    rep.text(f"{len(r.added)} node(s) to add{cost}. {r.pending} pending pod(s), "
             f"{r.scheduled_before} of them schedule without new nodes; {len(r.unplaceable)} fit no shape; "
             f"{'verified: every placeable pod schedules' if not r.not_placed else f'{len(r.not_placed)} not placed'} "
             f"({r.runs} scheduler runs).")
    counts = r.counts()
    if counts:
        rep.bar_plot("nodes to add per shape", list(counts), {"nodes": list(counts.values())}, "shape", "nodes")
    rep.table("nodes to add", ["node", "shape", "price"], [[n.name, s.name, s.price] for s, n in r.added])
    new = {n.name for _, n in r.added}
    rep.table("placements (verification run)", ["pod", "node", "new node"],
              [[p, n, n in new] for p, n in r.placements.items()])
    if r.unplaceable:
        rep.heading("Pods no shape can fit")
        rows = [[u.pod, s, *verdict_text(v)] for u in r.unplaceable for s, v in u.shapes.items()]
        rep.table("per shape", ["pod", "shape", "verdict", "reasons"], rows)
        rep.table("scheduler messages", ["pod", "message"], [[u.pod, u.message] for u in r.unplaceable])
    if r.not_placed:
        rep.table("placeable, but not placed by the search", ["pod", "message"], [list(x) for x in r.not_placed])
    return rep


def drain_report(r: DrainResult) -> Report:
    rep = Report("capacity drain")
    rep.text(f"{len(r.drainable)} of {len(r.verdicts)} candidate node(s) can be drained: "
             f"{', '.join(r.drainable) or 'none'}.")
    rep.table("candidates, in the order tried", ["node", "drainable", "pods", "reason"],
              [[v.node, v.drainable, len(v.pods), v.reason()] for v in r.verdicts])
    moves = [[v.node, p, n] for v in r.verdicts if v.drainable for p, n in v.moves.items()]
    if moves:
        rep.table("moves", ["from node", "pod", "to node"], moves)
    return rep
