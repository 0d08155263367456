"""Tables for people (rich). Machine-readable output is JSON/YAML, never these tables."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from kubesched.scheduler import Attempt
from kubesched.sim.driver import PodOutcome, Simulation

STATUS_STYLE = {"Scheduled": "green", "Unschedulable": "red", "Gated": "yellow",
                "Preempted": "magenta", "Error": "bold red"}


def _console() -> Console:
    return Console(soft_wrap=False)


def print_simulation(sim: Simulation) -> None:
    con = _console()
    t = Table(title="kubesched simulate", title_justify="left")
    for col in ("POD", "PRIORITY", "STATUS", "NODE", "DETAIL"):
        t.add_column(col, overflow="fold")
    for o in sim.results():
        detail = o.message or ""
        if o.status == "Preempted" and o.preempted_by:
            detail = f"preempted by {o.preempted_by}"
        elif o.status == "Scheduled" and o.preempted:
            detail = f"after preempting {', '.join(o.preempted)}"
        elif o.nominated_node and o.status != "Scheduled":
            detail = f"nominated to {o.nominated_node}; {detail}"
        style = STATUS_STYLE.get(o.status, "")
        t.add_row(o.pod.key, str(o.pod.priority), f"[{style}]{o.status}[/]" if style else o.status,
                  o.node or "", detail)
    con.print(t)
    s = sim.summary()
    con.print(", ".join(f"{k}: {v}" for k, v in s.items() if v or k in ("scheduled", "unschedulable")))


def _verdict(v: Any) -> tuple[str, str]:
    if v == "ok":
        return "[green]ok[/]", ""
    return f"[red]{v['plugin'] or 'PreFilter'}[/] ({v['code']})", "; ".join(v["reasons"])


def print_attempt(con: Console, i: int, att: Attempt) -> None:
    con.print(f"[bold]attempt {i + 1}[/] at t={att.time:g}s: {att.result}"
              + (f" on [bold]{att.chosen}[/]" if att.chosen else ""))
    ft = Table(title="Filter", title_justify="left")
    ft.add_column("NODE")
    ft.add_column("VERDICT")
    ft.add_column("REASONS", overflow="fold")
    for node, v in att.filter.items():
        verdict, reasons = _verdict(v)
        ft.add_row(node, verdict, reasons)
    con.print(ft)
    if att.scores:
        plugins = sorted({p for s in att.scores.values() for p in s})
        st = Table(title="Score (weighted, after normalisation)", title_justify="left")
        st.add_column("NODE")
        for p in plugins:
            st.add_column(p, justify="right")
        st.add_column("TOTAL", justify="right")
        for node in sorted(att.totals, key=lambda n: (-att.totals[n], n)):
            mark = " *" if node == att.chosen else ""
            st.add_row(node + mark, *[str(att.scores[node].get(p, "")) for p in plugins],
                       str(att.totals[node]))
        con.print(st)
    if att.message:
        con.print(f"[red]message:[/] {att.message}")
    if att.nominated_node:
        con.print(f"preemption: nominated [bold]{att.nominated_node}[/], victims: {', '.join(att.victims)}")


def print_explanation(out: PodOutcome) -> None:
    con = _console()
    con.print(f"[bold]{out.pod.key}[/] priority {out.pod.priority}: {out.status}"
              + (f" on {out.node}" if out.node else ""))
    if not out.attempts:
        con.print(out.message or "no scheduling attempt")
    for i, att in enumerate(out.attempts):
        print_attempt(con, i, att)
