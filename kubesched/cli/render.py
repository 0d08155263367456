"""Tables for people (rich). Machine-readable output is JSON/YAML, never these tables."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kubesched.explanation.attempt import NOT_EVALUATED, Attempt
from kubesched.sim.driver import PodOutcome, Simulation

SHORT = {"NodeResourcesFit": "Fit", "NodeResourcesBalancedAllocation": "Balanced",
         "ImageLocality": "Image", "TaintToleration": "Taint", "NodeAffinity": "NodeAff",
         "InterPodAffinity": "PodAff", "PodTopologySpread": "Spread", "VolumeBinding": "Volume",
         "DynamicResources": "DRA"}

STATUS_STYLE = {"Scheduled": "green", "Unschedulable": "red", "Gated": "yellow",
                "Preempted": "magenta", "Error": "bold red", "Waiting": "cyan"}


def _console() -> Console:
    return Console(soft_wrap=False, highlight=False)


def _status(s: str) -> str:
    style = STATUS_STYLE.get(s, "")
    return f"[{style}]{s}[/]" if style else s


def _detail(o: PodOutcome) -> str:
    if o.skipped:
        return o.skipped
    if o.status == "Preempted" and o.preempted_by:
        return f"preempted by {o.preempted_by}"
    if o.status == "Scheduled" and o.preempted:
        return f"preempted {', '.join(o.preempted)}"
    if o.nominated_node and o.status != "Scheduled":
        return f"nominated to {o.nominated_node}"
    if o.status == "Gated":
        return o.message or ""
    return ""


def workload_rows(sim: Simulation) -> tuple[list[tuple[str, int, int, str]], set[str]]:
    """Per workload: (name, pods scheduled or running, pods it wants, note), and the keys of
    the pods some workload made or adopted. A pod bound before the run counts as scheduled."""
    by_key = {o.pod.key: o for o in sim.results()}
    bound = {p.key for p in sim.cluster.pods.values() if p.node_name}
    waiting = {k: v for k, v in sim.not_created.items()}
    rows, owned = [], set()
    for name, keys in sim.owners.items():
        owned.update(keys)
        done = sum(1 for k in keys if k in bound)
        notes = []
        if any(k in waiting for k in keys):
            first = next(k for k in keys if k in waiting)
            notes.append(f"{sum(1 for k in keys if k in waiting)} not created: waiting for "
                         f"{waiting[first]} (OrderedReady)")
        pending = [by_key[k] for k in keys if k in by_key and by_key[k].status != "Scheduled"]
        if pending:
            notes.append(f"{pending[0].pod.key}: {pending[0].status}")
        rows.append((name, done, len(keys), "; ".join(notes)))
    return rows, owned


def print_simulation(sim: Simulation, pods: bool = False) -> None:
    """The outcome table: per workload (``web: 9/10 scheduled``) and the pods no workload
    made, or with ``pods`` every pod."""
    con = _console()
    rows, owned = workload_rows(sim)
    if rows and not pods:
        wt = Table(title="kubesched simulate: workloads", title_justify="left")
        for col in ("WORKLOAD", "SCHEDULED", "NOTE"):
            wt.add_column(col, overflow="fold")
        for name, done, want, note in rows:
            style = "green" if done == want else "red"
            wt.add_row(escape(name), f"[{style}]{done}/{want}[/]", escape(note))
        con.print(wt)
    t = Table(title="kubesched simulate" if pods or not rows else "pods of no workload", title_justify="left")
    for col in ("POD", "PRIORITY", "STATUS", "NODE", "NOTE"):
        t.add_column(col, overflow="fold")
    pending = []
    for o in sim.results():
        if pods or o.pod.key not in owned:
            t.add_row(escape(o.pod.key), str(o.pod.priority), _status(o.status), o.node or "",
                      escape(_detail(o)))
        if o.status in ("Unschedulable", "Error") and o.message:
            pending.append(o)
    if t.row_count or not rows:
        con.print(t)
    s = sim.summary()
    con.print(", ".join(f"{k}: {v}" for k, v in s.items() if v or k in ("scheduled", "unschedulable")))
    ignored = sim.ignored_pods()
    if ignored:
        con.print(f"ignored (finished, invisible to the scheduler): {escape(', '.join(ignored))}")
    if pending:
        con.print("\n[bold]Why pending[/]")
        for o in pending:
            con.print(f"  [bold]{escape(o.pod.key)}[/]: {escape(o.message or '')}")


def _verdict(v: Any) -> tuple[str, str]:
    if v == "ok":
        return "[green]ok[/]", ""
    if v == NOT_EVALUATED:
        return "[dim]not evaluated[/]", ""
    reasons = "; ".join(v["reasons"]) + (f" ({v['detail']})" if v.get("detail") else "")
    return f"[red]{escape(v['plugin'] or 'PreFilter')}[/] ({v['code']})", escape(reasons)


def print_attempt(con: Console, i: int, att: Attempt | dict[str, Any], at: str | None = None) -> None:
    """One attempt (an :class:`Attempt` or its JSON document, as ``/debug/explain`` serves it);
    ``at``: when, as shown (default: the simulation's ``t=...s``)."""
    doc = att.to_json() if isinstance(att, Attempt) else att
    chosen, result = doc.get("chosen"), str(doc.get("result"))
    when = at or f"t={float(doc.get('time') or 0):g}s"
    con.print(f"[bold]attempt {i + 1}[/] at {when}: {_status(result)}"
              + (f" on [bold]{escape(chosen)}[/]" if chosen else ""))
    _print_filter(con, doc)
    scores, totals = doc.get("scores") or {}, doc.get("totals") or {}
    if scores:
        _print_scores(con, doc, scores, totals, chosen)
    if doc.get("scoreSkipped"):
        con.print(f"score: skipped ({escape(doc['scoreSkipped'])})")
    if doc.get("message"):
        con.print(f"[red]message:[/] {escape(doc['message'])}")
    if doc.get("nominatedNode"):
        con.print(f"preemption: nominated [bold]{escape(doc['nominatedNode'])}[/], "
                  f"victims: {escape(', '.join(doc.get('victims') or []))}")
    if doc.get("preemption"):
        _print_preemption(con, doc["preemption"])


def _print_filter(con: Console, doc: dict[str, Any]) -> None:
    ft = Table(title="Filter", title_justify="left")
    ft.add_column("NODE")
    ft.add_column("VERDICT")
    ft.add_column("REASONS", overflow="fold")
    ev = doc.get("evaluation") or {}
    only = ev.get("upstreamEvaluatedOnly")
    for node, v in (doc.get("filter") or {}).items():
        verdict, reasons = _verdict(v)
        if only and node != only and v != NOT_EVALUATED:
            verdict += " [dim](upstream: not evaluated)[/]"
        ft.add_row(escape(node), verdict, reasons)
    con.print(ft)
    if ev.get("notEvaluated"):
        con.print(f"not evaluated: {ev['notEvaluated']} of {ev['nodes']} node(s): {escape(str(ev.get('reason')))}")


def _print_scores(con: Console, doc: dict[str, Any], scores: dict[str, dict[str, int]],
                  totals: dict[str, int], chosen: str | None) -> None:
    raw, norm = doc.get("rawScores") or {}, doc.get("normalizedScores") or {}
    every = sorted({p for s in scores.values() for p in s})
    # a plugin that gave 0 to every node (raw and weighted) is named once, not given a column
    zero = [p for p in every if all(not s.get(p) for s in scores.values())
            and all(not r.get(p) for r in raw.values())]
    plugins = [p for p in every if p not in zero]
    order = sorted(totals, key=lambda n: (-totals[n], n))
    st = Table(title="Score (weighted, after normalisation)", title_justify="left")
    st.add_column("NODE", no_wrap=True)
    for p in plugins:
        st.add_column(SHORT.get(p, p), justify="right", overflow="fold")
    st.add_column("TOTAL", justify="right")
    for node in order:
        mark = " *" if node == chosen else ""
        st.add_row(escape(node) + mark, *[str(scores[node].get(p, "")) for p in plugins], str(totals[node]))
    con.print(st)
    weights = doc.get("weights") or {}
    if raw:
        dt = Table(title="Score detail (raw -> normalised; weight)", title_justify="left")
        dt.add_column("NODE", no_wrap=True)
        for p in plugins:
            dt.add_column(f"{SHORT.get(p, p)} x{weights[p]}" if p in weights else SHORT.get(p, p),
                          justify="right", overflow="fold")
        for node in order:
            r, n = raw.get(node, {}), norm.get(node, {})
            dt.add_row(escape(node), *[f"{r[p]}->{n.get(p, '')}" if p in r else "" for p in plugins])
        con.print(dt)
    if zero:
        con.print("0 on every node: " + escape(", ".join(zero)))
    legend = [f"{SHORT[p]}={p}" for p in plugins if p in SHORT]
    if legend:
        con.print("[dim]" + escape(", ".join(legend)) + "[/]")


def _print_preemption(con: Console, pre: dict[str, Any]) -> None:
    if not pre.get("candidates"):
        return
    t = Table(title="Preemption candidates", title_justify="left")
    for col in ("NODE", "PDB VIOL.", "TOP VICTIM PRIO", "PRIO SUM", "VICTIMS"):
        t.add_column(col, overflow="fold")
    for c in pre["candidates"]:
        mark = " *" if c["node"] == pre.get("chosen") else ""
        t.add_row(escape(c["node"]) + mark, str(c["pdbViolations"]), str(c["highestVictimPriority"]),
                  str(c["victimPrioritySum"]), escape(", ".join(c["victims"])))
    con.print(t)
    con.print(f"chosen: {escape(str(pre.get('chosen')))}, decided by: {escape(str(pre.get('decidedBy')))}")


def _iso(t: Any) -> str:
    from datetime import datetime, timezone

    try:
        return datetime.fromtimestamp(float(t), timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"
    except (TypeError, ValueError, OverflowError, OSError):
        return str(t)


def print_document(con: Console, doc: dict[str, Any]) -> None:
    """An explain document of ``serve``/``run`` (``/debug/explain``): its attempts, oldest
    first, then the pod's history (attempts and queue moves), times in UTC."""
    total = doc.get("attemptsTotal", len(doc.get("attempts") or [doc]))
    con.print(f"[bold]{escape(str(doc.get('pod', '')))}[/]: {_status(str(doc.get('result')))}"
              + (f" on {escape(doc['chosen'])}" if doc.get("chosen") else "")
              + f" ({total} attempt(s); the last {len(doc.get('attempts') or [doc])} kept)")
    for d in doc.get("attempts") or [doc]:
        print_attempt(con, int(d.get("attempt", 1)) - 1, d, at=_iso(d.get("time")))
    history = doc.get("history") or []
    if history:
        t = Table(title="History", title_justify="left")
        for col in ("TIME", "EVENT", "DETAIL"):
            t.add_column(col, overflow="fold")
        for e in history:
            if e["event"] == "attempt":
                detail = f"#{e['attempt']}: {e['result']}" + (f" on {e['node']}" if e.get("node") else "")
            else:
                detail = f"{e.get('from') or '-'} -> {e['to']} ({e['trigger']})"
                if e.get("backoffExpiration") is not None:
                    detail += f", backoff until {_iso(e['backoffExpiration'])}"
            t.add_row(_iso(e["time"]), e["event"], escape(detail))
        con.print(t)
    if doc.get("blockers"):  # a pod still pending: every blocker (kubesched.explanation.blockers)
        from kubesched.cli.render_fixes import print_blockers

        print_blockers(con, doc["blockers"])


def document_text(doc: dict[str, Any], width: int = 120) -> str:
    """:func:`print_document` as plain text (``?output=text``)."""
    import io

    buf = io.StringIO()
    print_document(Console(file=buf, width=width, no_color=True, highlight=False, soft_wrap=False), doc)
    return buf.getvalue()


def print_explanation(out: PodOutcome) -> None:
    con = _console()
    con.print(f"[bold]{escape(out.pod.key)}[/] priority {out.pod.priority}: {_status(out.status)}"
              + (f" on {out.node}" if out.node else ""))
    if not out.attempts:
        con.print(escape(out.message or (f"not scheduled: {out.skipped}" if out.skipped else "no scheduling attempt")))
    for i, att in enumerate(out.attempts):
        print_attempt(con, i, att)


def _timeline_detail(e: dict[str, Any]) -> str:
    ev = e["event"]
    if ev == "attempt":
        origin = f"#{e.get('attempt', '?')} from {e['from']}: " if e.get("from") else f"#{e.get('attempt', '?')}: "
        text = origin + str(e.get("result"))
        if e.get("node"):
            text += f" on {e['node']}"
        if e.get("message"):
            text += f": {e['message']}"
        if e.get("nominatedNode"):
            text += f"; nominated {e['nominatedNode']}, victims {', '.join(e.get('victims') or []) or 'none'}"
        return text
    if ev == "move":
        text = f"{e.get('from') or '-'} -> {e['to']} ({e['trigger']})"
        if e.get("backoffExpiration") is not None:
            text += f", backoff expires {e['backoffExpiration']:g}s"
        return text
    if ev == "bind":
        return f"bound to {e.get('node')}"
    return str(e.get("message") or "")


def print_timeline(entries: list[dict[str, Any]]) -> None:
    """The ``--timeline`` table: one row per attempt, queue move, bind or deletion."""
    con = _console()
    t = Table(title="Timeline (virtual time)", title_justify="left")
    for col in ("TIME", "POD", "EVENT", "DETAIL"):
        t.add_column(col, overflow="fold", justify="right" if col == "TIME" else "left")
    for e in entries:
        event = e["event"]
        if event == "attempt":
            event = f"attempt {_status(str(e.get('result')))}"
        t.add_row(f"{e['time']:g}s", escape(e["pod"]), event, escape(_timeline_detail(e)))
    con.print(t)
