"""``kubesched simulate`` and ``kubesched explain``: load, run, print."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import yaml

from kubesched import python_api
from kubesched.version import with_version
from kubesched.cli import loadargs, progress, render
from kubesched.explanation.attempt import Attempt
from kubesched.sim.driver import PodOutcome, Simulation


def _simulate(args: argparse.Namespace, explain: bool) -> Simulation:
    with progress.Bar("loading", None, getattr(args, "progress", progress.AUTO)) as loading:
        sim = python_api.prepare(
            *args.filename, config=args.config, seed=args.seed, tie_break=args.tie_break, explain=explain,
            timeline=getattr(args, "timeline", False), **loadargs.keywords(args),
            kubernetes_version=getattr(args, "kubernetes_version", None),
            feature_gates=getattr(args, "feature_gates", "") or None,
            progress=lambda what, done, total: loading.update(done, total=total or None, description=what))
    with progress.Bar("scheduling", len(sim.outcomes), getattr(args, "progress", progress.NEVER)) as bar:
        attempts = scheduled = 0

        def tick(att: Attempt) -> None:
            nonlocal attempts, scheduled
            attempts += 1
            scheduled += att.result == "Scheduled"
            bar.update(scheduled, description=f"scheduling ({attempts} attempts)")

        sim.on_attempt = tick
        sim.run(single_pass=args.single_pass)
    return sim


def run(args: argparse.Namespace) -> int:
    if args.command == "explain":
        return explain(args)
    annotate = getattr(args, "result_annotations", False)
    sim = _simulate(args, explain=args.explain or annotate)
    doc = python_api.Result(sim, explain=args.explain, timeline=args.timeline).to_json(result_annotations=annotate)
    if args.output == "json":
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif args.output == "yaml":
        yaml.safe_dump(doc, sys.stdout, sort_keys=False)
    else:
        render.print_simulation(sim, pods=args.pods)
        if args.timeline:
            render.print_timeline(sim.timeline.entries)
    return 0


def explain(args: argparse.Namespace) -> int:
    sim = _simulate(args, explain=True)
    out = python_api.find_outcome(sim, args.pod)
    extra = _blockers_and_fixes(args, sim, out)
    if args.output == "json":
        json.dump(with_version({"pod": out.to_json(True), **extra}), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    render.print_explanation(out)
    from kubesched.cli import render_fixes

    con = render._console()
    if "blockers" in extra:
        render_fixes.print_blockers(con, extra["blockers"])
    if "fixSearch" in extra:
        render_fixes.print_fixes(con, extra["fixSearch"])
    elif args.fix:
        con.print(f"nothing to fix: the pod is {out.status}")
    return 0


def _blockers_and_fixes(args: argparse.Namespace, sim: Simulation, out: PodOutcome) -> dict[str, Any]:
    """For a pod the run left pending: every blocker on the final state and, with ``--fix``,
    the verified fixes (``blockers``, ``fixes``, ``fixSearch``)."""
    import dataclasses

    from kubesched.explanation.fixes import find_fixes
    from kubesched.scheduler.whatif import SchedulerWhatIf

    pod = sim.cluster.pods.get(out.pod.uid)
    if pod is None or pod.node_name or out.status not in ("Unschedulable", "Error", "Pending"):
        return {}
    pod = dataclasses.replace(pod, nominated_node_name="")
    world = SchedulerWhatIf(sim.sched, list(sim.cluster.priority_classes.values()))
    if not args.fix:
        return {"blockers": world.blockers(pod).to_json()}
    with progress.Bar("fixes", None, args.progress) as bar:
        report = find_fixes(world, pod, args.fix_limit,
                            progress=lambda i, n, kind: bar.update(i, total=n, description=f"checking {kind}"))
    doc = report.to_json()
    doc["dryCycles"] = world.cycles
    return {"blockers": report.blockers.to_json(), "fixes": doc["fixes"], "fixSearch": doc}
