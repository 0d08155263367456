"""``kubesched simulate`` and ``kubesched explain``: load, run, print."""

from __future__ import annotations

import argparse
import json
import sys

import yaml

from kubesched import python_api
from kubesched.cli import progress, render
from kubesched.explain.attempt import Attempt
from kubesched.sim.driver import Simulation


def _simulate(args: argparse.Namespace, explain: bool) -> Simulation:
    sim = python_api.prepare(*args.filename, config=args.config, seed=args.seed, tie_break=args.tie_break,
                             explain=explain, timeline=getattr(args, "timeline", False))
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
    result = python_api.Result(sim, explain=args.explain, timeline=args.timeline)
    doc = result.to_json(result_annotations=annotate)
    if args.output == "json":
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif args.output == "yaml":
        yaml.safe_dump(doc, sys.stdout, sort_keys=False)
    else:
        render.print_simulation(sim)
        if args.timeline:
            render.print_timeline(sim.timeline.entries)
    return 0


def explain(args: argparse.Namespace) -> int:
    sim = _simulate(args, explain=True)
    render.print_explanation(python_api.find_outcome(sim, args.pod))
    return 0
