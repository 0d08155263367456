"""``kubesched simulate`` and ``kubesched explain``: load, run, print."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import yaml

from kubesched.api.errors import KubeschedError
from kubesched.cli import loadargs, progress, render
from kubesched.config import load_config
from kubesched.framework.errors import ProfileError
from kubesched.plugins.registry import in_tree_registry
from kubesched.explain.attempt import Attempt
from kubesched.sim.driver import PodOutcome, Simulation


def _simulate(args: argparse.Namespace, explain: bool) -> Simulation:
    manifest = loadargs.load_manifests(args)
    config = load_config(args.config, in_tree_registry())
    try:
        sim = Simulation(manifest, config, seed=args.seed, tie_break=args.tie_break, explain=explain,
                         timeline=getattr(args, "timeline", False))
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
                           "summary": sim.summary()}
    if annotate:
        _add_result_annotations(sim, doc["pods"])
    ignored = sim.ignored_pods()
    if ignored:  # finished pods, which the scheduler never sees
        doc["ignoredPods"] = ignored
    if sim.not_created:  # OrderedReady pods whose previous ordinal was never scheduled
        doc["notCreated"] = [{"pod": k, "waitsFor": v} for k, v in sim.not_created.items()]
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
        render.print_simulation(sim, pods=args.pods)
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
            extra = _blockers_and_fixes(args, sim, out)
            if args.output == "json":
                json.dump({"pod": out.to_json(True), **extra}, sys.stdout, indent=1)
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
    for pod in sim.completed:
        if pod.namespace == ns and pod.name == name:
            raise KubeschedError(f"pod {ns}/{name}: phase {pod.phase}: finished pods are invisible to the scheduler")
    waits_for = sim.not_created.get(f"{ns}/{name}")
    if waits_for is not None:
        raise KubeschedError(f"pod {ns}/{name}: not created: its StatefulSet creates it once {waits_for} "
                             f"is scheduled (OrderedReady), and {waits_for} is not")
    elsewhere = sorted(o.pod.key for o in sim.results() if o.pod.name == name)
    hint = f" (did you mean {', '.join(elsewhere)}?)" if elsewhere else ""
    raise KubeschedError(f"pod {ns}/{name}: not a pending pod in the given manifests{hint}")


def _blockers_and_fixes(args: argparse.Namespace, sim: Simulation, out: PodOutcome) -> dict[str, Any]:
    """For a pod the run left pending: every blocker on the final state and, with ``--fix``,
    the verified fixes (``blockers``, ``fixes``, ``fixSearch``)."""
    import dataclasses

    from kubesched.explain.fixes import find_fixes
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
