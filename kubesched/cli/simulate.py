"""``kubesched simulate`` and ``kubesched explain``: load, run, print."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import yaml

from kubesched.api.decode import load_manifests
from kubesched.api.errors import KubeschedError
from kubesched.cli import progress, render, versionargs
from kubesched.config import load_config
from kubesched.framework.errors import ProfileError
from kubesched.plugins.registry import in_tree_registry
from kubesched.explain.attempt import Attempt
from kubesched.sim.driver import Simulation


def _simulate(args: argparse.Namespace, explain: bool) -> Simulation:
    manifest = load_manifests(args.filename)
    config = load_config(args.config, in_tree_registry())
    fts = versionargs.features(args, lambda: manifest.kubernetes_version)
    try:
        sim = Simulation(manifest, config, seed=args.seed, tie_break=args.tie_break, explain=explain,
                         timeline=getattr(args, "timeline", False), features=fts)
    except ProfileError as exc:  # a profile that cannot be built: name the file it came from
        raise KubeschedError(f"{args.config}: {exc}" if args.config else str(exc)) from exc
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
    doc: dict[str, Any] = {"pods": [o.to_json(args.explain) for o in sim.results()],
                           "summary": sim.summary(), **sim.features.to_json()}
    if annotate:
        _add_result_annotations(sim, doc["pods"])
    ignored = sim.ignored_pods()
    if ignored:  # finished pods, which the scheduler never sees
        doc["ignoredPods"] = ignored
    if args.timeline:
        doc["timeline"] = sim.timeline.entries
    objects: dict[str, Any] = {}
    if sim.storage.pv_map or sim.storage.pvc_map:
        objects.update(sim.storage.to_json())  # the final PVs and PVCs
    if sim.dra.claims:
        objects.update(sim.dra.to_json())  # the final ResourceClaims
    if objects:
        doc["objects"] = objects
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


def _add_result_annotations(sim: Simulation, pods: list[dict[str, Any]]) -> None:
    """``--result-annotations``: each attempted pod's kube-scheduler-simulator annotations
    (``resultAnnotations``), as ``serve``/``run`` would write them after its last attempt."""
    from kubesched.explain.kssresults import HISTORY, ProfilePlugins, result_annotations

    plugins = {name: ProfilePlugins.of(fw.points) for name, fw in sim.sched.profiles.items()}
    for out, pod in zip(sim.results(), pods):
        history: list[dict[str, str]] = []
        ann: dict[str, str] = {}
        for att in out.attempts:
            ann = result_annotations(att, plugins.get(out.pod.scheduler_name, ProfilePlugins()), history)
            history = json.loads(ann[HISTORY])
        if ann:
            pod["resultAnnotations"] = ann


def explain(args: argparse.Namespace) -> int:
    ns, _, name = args.pod.rpartition("/")
    ns = ns or "default"
    sim = _simulate(args, explain=True)
    for out in sim.results():
        if out.pod.namespace == ns and out.pod.name == name:
            render.print_explanation(out)
            return 0
    for pod in sim.completed:
        if pod.namespace == ns and pod.name == name:
            raise KubeschedError(f"pod {ns}/{name}: phase {pod.phase}: finished pods are invisible to the scheduler")
    elsewhere = sorted(o.pod.key for o in sim.results() if o.pod.name == name)
    hint = f" (did you mean {', '.join(elsewhere)}?)" if elsewhere else ""
    raise KubeschedError(f"pod {ns}/{name}: not a pending pod in the given manifests{hint}")
