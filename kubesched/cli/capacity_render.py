"""Terminal tables (rich) for ``kubesched capacity`` and ``kubesched replay``. Programs read
``--json``; these are for people."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kubesched.sim.capacity.drain import DrainResult
from kubesched.sim.capacity.fit import FitResult
from kubesched.sim.capacity.plan import PlanResult
from kubesched.sim.capacity.report import verdict_text
from kubesched.sim.replay.engine import ReplayResult


def _console() -> Console:
    return Console(soft_wrap=False, highlight=False)


def _table(title: str, *columns: str) -> Table:
    t = Table(title=title, title_justify="left")
    for c in columns:
        t.add_column(c, overflow="fold")
    return t


def print_fit(r: FitResult) -> None:
    con = _console()
    stop = " (--max reached)" if r.stopped_by == "max" else ""
    con.print(f"[bold]{r.count}[/] more copies of {escape(r.template.key)} fit{stop}"
              + (f"; {r.pending_first} pending pod(s) scheduled first" if r.pending_first else ""))
    t = _table("copies per node", "NODE", "COPIES")
    for n in sorted(r.per_node):
        t.add_row(escape(n), str(r.per_node[n]))
    con.print(t)
    if r.refusal is None:
        return
    con.print(f"\n[bold]Why copy {r.count + 1} does not fit[/]: {escape(r.refusal.message or '')}")
    t = _table("Filter, node by node", "NODE", "VERDICT", "REASONS")
    for n, v in r.refusal.filter.items():
        verdict, reasons = verdict_text(v)
        t.add_row(escape(n), escape(verdict), escape(reasons))
    con.print(t)


def print_plan(r: PlanResult) -> None:
    con = _console()
    cost = "" if r.cost is None else f", total price {r.cost:g}"
    shapes = ", ".join(f"{n} x {s}" for s, n in r.counts().items())
    con.print(f"[bold]{len(r.added)}[/] node(s) to add{cost}" + (f": {escape(shapes)}" if shapes else ""))
    con.print(f"{r.pending} pending pod(s); {r.scheduled_before} schedule without new nodes; "
              f"{r.runs} scheduler runs")
    new = {n.name for _, n in r.added}
    t = _table("placements (verification run)", "POD", "NODE", "NEW")
    for p, n in r.placements.items():
        t.add_row(escape(p), escape(n), "yes" if n in new else "")
    con.print(t)
    for u in r.unplaceable:
        con.print(f"[red]no shape fits[/] {escape(u.pod)}: {escape(u.message)}")
        for s, v in u.shapes.items():
            verdict, reasons = verdict_text(v)
            con.print(f"  {escape(s)}: {escape(verdict)} {escape(reasons)}")
    for p, m in r.not_placed:
        con.print(f"[red]not placed[/] {escape(p)}: {escape(m)}")
    con.print("verified: every placeable pod schedules" if not r.not_placed else
              "[red]not verified[/]: the search stopped with placeable pods pending")


def print_drain(r: DrainResult) -> None:
    con = _console()
    t = _table("candidates, in the order tried", "NODE", "DRAINABLE", "PODS", "REASON")
    for v in r.verdicts:
        t.add_row(escape(v.node), "[green]yes[/]" if v.drainable else "[red]no[/]", str(len(v.pods)),
                  escape(v.reason()))
    con.print(t)
    con.print(f"drainable: {escape(', '.join(r.drainable)) or 'none'}")


# the replay summary's keys (as -o json has them) as the table shows them, with their units
REPLAY_LABELS = {
    "pods": "pods", "scheduled": "scheduled (pods)", "neverScheduled": "never scheduled (pods)",
    "deletedPending": "deleted while pending (pods)", "preempted": "preempted (pods)",
    "latencyMean": "latency mean (virtual s)", "latencyP50": "latency p50 (virtual s)",
    "latencyP90": "latency p90 (virtual s)", "latencyP99": "latency p99 (virtual s)",
    "latencyMax": "latency max (virtual s)", "virtualSeconds": "virtual time (s)",
    "wallSeconds": "wall time (s)", "attempts": "scheduling attempts", "nodes": "nodes",
}


def print_replay(r: ReplayResult) -> None:
    con = _console()
    t = _table("replay", "METRIC", "VALUE")
    for k, v in r.summary().items():
        t.add_row(REPLAY_LABELS.get(k, k), "" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v)))
    con.print(t)
