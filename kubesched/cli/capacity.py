"""``kubesched capacity fit|plan|drain`` and ``kubesched replay``: argument parsing, progress
bars, JSON and the HTML reports. The work is in :mod:`kubesched.sim.capacity` and
:mod:`kubesched.sim.replay` (each with its ``report`` module); the terminal tables are in
:mod:`kubesched.cli.capacity_render`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kubesched.version import with_version
from kubesched.api.errors import DecodeError, KubeschedError
from kubesched.cli import loadargs, progress, versionargs


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("-f", "--filename", action="append", required=True, metavar="PATH",
                   help="the cluster: manifest file or directory (repeatable), e.g. a snapshot")
    p.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)")
    p.add_argument("--seed", type=int, default=0, help="seed for every random choice (default 0)")
    p.add_argument("--tie-break", choices=("random", "name"), default="random",
                   help="equal scores: seeded random choice (upstream) or the lowest node name")
    p.add_argument("-o", "--output", choices=("table", "json"), default="table",
                   help="the answer as a table (default) or as JSON")
    p.add_argument("--output-dir", metavar="DIR", help="write the HTML report (report.html, report.json, series/)")
    progress.add_arguments(p)
    loadargs.add_arguments(p)
    versionargs.add_arguments(p)


def add_parsers(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    cap = sub.add_parser("capacity", help="capacity questions: how many more fit, which nodes to add, which to drain")
    csub = cap.add_subparsers(dest="capacity_command", required=True)
    fit = csub.add_parser("fit", help="how many more copies of a pod fit, and why the next one does not")
    _common(fit)
    fit.add_argument("--pod", required=True, metavar="TEMPLATE.yaml", help="the pod to copy (one Pod manifest)")
    fit.add_argument("--max", type=int, metavar="N", help="stop after N copies fit")
    plan = csub.add_parser("plan", help="the fewest (or cheapest) nodes to add so the pending pods schedule")
    _common(plan)
    plan.add_argument("--catalogue", required=True, metavar="SHAPES.yaml", help="the node shapes that may be added")
    plan.add_argument("--objective", choices=("count", "price"), default="count",
                      help="fewest nodes (default) or lowest total price")
    drain = csub.add_parser("drain", help="which nodes can be drained, their pods rescheduled elsewhere")
    _common(drain)
    drain.add_argument("--nodes", nargs="+", metavar="NODE",
                       help="candidates, tried in this order (default: every node, least utilised first)")
    rep = sub.add_parser("replay", help="replay a workload trace or a recording on the virtual clock: latencies, "
                                        "utilisation over time, agreement with the recorded scheduler")
    _common(rep)
    rep.add_argument("--trace", required=True, metavar="TRACE.jsonl|csv|RECORDING",
                     help="a workload trace, or a `kubesched record` recording (.jsonl[.gz]): its starting state is "
                          "the cluster (no -f)")
    rep.add_argument("--compare-recorded", action="store_true",
                     help="with a recording: per pod, the recorded node and this configuration's, and the agreement")
    rep.add_argument("--follow-recorded", action="store_true",
                     help="with --compare-recorded: bind each pod where the recording bound it (this configuration's "
                          "choice is only compared), so every decision is made on the recorded cluster")
    for action in rep._actions:
        if action.dest == "filename":
            action.required = False  # a recording brings its cluster


def _options(args: argparse.Namespace, manifest: Any) -> Any:
    from kubesched.config import load_config
    from kubesched.plugins.registry import in_tree_registry
    from kubesched.sim.capacity.common import RunOptions

    return RunOptions(config=load_config(args.config, in_tree_registry()), seed=args.seed,
                      tie_break=args.tie_break, config_file=args.config,
                      features=versionargs.features(args, lambda: manifest.kubernetes_version))


def run(args: argparse.Namespace) -> int:
    from kubesched.cli import loadargs

    if args.command == "replay":
        from kubesched.sim.recording.reader import is_recording

        if is_recording(args.trace):
            from kubesched.cli import replay_recorded

            return replay_recorded.run(args, lambda recorded: _options(args, recorded))
        if args.compare_recorded or args.follow_recorded:
            raise KubeschedError(f"replay --compare-recorded/--follow-recorded: {args.trace} is not a recording "
                                 "(kubesched record)")
        if not args.filename:
            raise KubeschedError("replay: a workload trace needs the cluster (-f)")
    manifest = loadargs.load_manifests(args)
    opts = _options(args, manifest)
    if args.command == "replay":
        return _replay(args, manifest, opts)
    return {"fit": _fit, "plan": _plan, "drain": _drain}[args.capacity_command](args, manifest, opts)


def _write(args: argparse.Namespace, write: Any) -> Any:
    """``write()``; a path that cannot be written is one error line, not a traceback."""
    try:
        return write()
    except OSError as exc:
        what = args.command if args.command == "replay" else f"capacity {args.capacity_command}"
        raise KubeschedError(f"{what} --output-dir {args.output_dir}: {exc.strerror or exc}") from exc


def _emit(args: argparse.Namespace, doc: dict[str, Any], report: Any, table: Any) -> int:
    if args.output_dir:
        path = _write(args, lambda: report().write(args.output_dir))
        print(f"report: {path}", file=sys.stderr)
    if args.output == "json":
        json.dump(with_version(doc), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        table()
    return 0


def _fit(args: argparse.Namespace, manifest: Any, opts: Any) -> int:
    from kubesched.cli import capacity_render as cr
    from kubesched.sim.capacity.common import load_pod_template
    from kubesched.sim.capacity.fit import fit
    from kubesched.sim.capacity.report import fit_report

    if args.max is not None and args.max < 0:
        raise DecodeError(f"must be >= 0, got {args.max}", field="--max")
    template = load_pod_template(args.pod, manifest)
    with progress.Bar("capacity fit", args.max, args.progress) as bar:
        result = fit(manifest, template, opts, args.max, progress=lambda n, _: bar.update(n))
    return _emit(args, result.to_json(), lambda: fit_report(result), lambda: cr.print_fit(result))


def _plan(args: argparse.Namespace, manifest: Any, opts: Any) -> int:
    from kubesched.cli import capacity_render as cr
    from kubesched.sim.capacity.catalogue import load_catalogue
    from kubesched.sim.capacity.plan import plan
    from kubesched.sim.capacity.report import plan_report

    shapes = load_catalogue(args.catalogue)
    try:
        with progress.Bar("capacity plan", None, args.progress) as bar:
            result = plan(manifest, shapes, opts, args.objective,
                          progress=lambda what, runs: bar.update(runs, description=f"plan: {what}"))
    except DecodeError as exc:  # a shape without the price the objective needs
        raise exc.at(file=args.catalogue) from None
    return _emit(args, result.to_json(), lambda: plan_report(result), lambda: cr.print_plan(result))


def _drain(args: argparse.Namespace, manifest: Any, opts: Any) -> int:
    from kubesched.cli import capacity_render as cr
    from kubesched.sim.capacity.drain import drain
    from kubesched.sim.capacity.report import drain_report

    with progress.Bar("capacity drain", None, args.progress) as bar:
        result = drain(manifest, opts, args.nodes,
                       progress=lambda done, total: bar.update(done, total=total))
    return _emit(args, result.to_json(), lambda: drain_report(result), lambda: cr.print_drain(result))


def _replay(args: argparse.Namespace, manifest: Any, opts: Any) -> int:
    from kubesched.cli import capacity_render as cr
    from kubesched.sim.replay.engine import replay
    from kubesched.sim.replay.report import replay_report, write_replay_data
    from kubesched.sim.replay.trace import load_trace

    entries = load_trace(args.trace, manifest)
    with progress.Bar("replay", len(entries), args.progress) as bar:
        result = replay(manifest, entries, opts,
                        progress=lambda done, total, t: bar.update(
                            done, total=total, description=f"replay t={t:,.0f}s"))
    if args.output_dir:
        _write(args, lambda: write_replay_data(result, args.output_dir))
    return _emit(args, result.to_json() if args.output == "json" else {}, lambda: replay_report(result, args.trace),
                 lambda: cr.print_replay(result))
