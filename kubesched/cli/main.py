"""The ``kubesched`` command.

Every user error (bad manifest, bad configuration, unknown pod) is a ``KubeschedError``:
printed as one line on stderr with exit status 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from kubesched.api.errors import KubeschedError
from kubesched.cli import loadargs, lograte


class _VersionAction(argparse.Action):
    """``--version``: the version is looked up only when asked for (importlib.metadata is
    slow to import, and ``--help`` should be quick)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        from kubesched.version import package_version

        print(f"kubesched {package_version()}")
        parser.exit()


from kubesched.cli import versionargs


def _common_sim_args(p: argparse.ArgumentParser, files_required: bool = True) -> None:
    p.add_argument("-f", "--filename", action="append", required=files_required, metavar="PATH",
                   help="manifest file or directory (repeatable): nodes, pods, PriorityClasses, PDBs")
    p.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)")
    p.add_argument("--seed", type=int, default=0, help="seed for every random choice (default 0)")
    p.add_argument("--tie-break", choices=("random", "name"), default="random",
                   help="equal scores: seeded random choice (upstream) or the lowest node name")
    loadargs.add_arguments(p)
    p.add_argument("--single-pass", action="store_true",
                   help="give every pending pod exactly one attempt, in queue order")
    versionargs.add_arguments(p)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kubesched", description="kubesched: a Kubernetes-compatible pod scheduler (simulate, serve, run).")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-v INFO, -vv DEBUG)")
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="print kubesched's version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    sim = sub.add_parser("simulate", help="where would these pods land, and why is that one Pending?")
    _common_sim_args(sim)
    sim.add_argument("-o", "--output", choices=("table", "json", "yaml"), default="table")
    sim.add_argument("--pods", action="store_true",
                     help="the table lists every pod (default: one line per workload, then the pods of none)")
    sim.add_argument("--explain", action="store_true", help="include every attempt: per-node filter verdicts and scores")
    sim.add_argument("--result-annotations", action="store_true",
                     help="with -o json/yaml: each pod's kube-scheduler-simulator result annotations "
                          "(kube-scheduler-simulator.sigs.k8s.io/filter-result, ...) as resultAnnotations")
    sim.add_argument("--timeline", action="store_true",
                     help="also show what happened when (virtual time): attempts, queue moves, backoffs, binds")
    from kubesched.cli import capacity, progress, workbench

    progress.add_arguments(sim)
    workbench.add_parsers(sub)
    capacity.add_parsers(sub)
    exp = sub.add_parser("explain", help="per-node, per-plugin explanation of one pod's scheduling "
                         "(simulated with -f, or asked of a running serve/run)")
    _common_sim_args(exp, files_required=False)
    exp.add_argument("pod", metavar="POD", help="NAMESPACE/NAME (or NAME in namespace default)")
    exp.add_argument("--kubeconfig", metavar="PATH",
                     help="ask the scheduler inside a running `kubesched serve` (its API server, from this kubeconfig)")
    exp.add_argument("--scheduler-url", metavar="URL",
                     help="ask a running `kubesched run` at its endpoint port (e.g. http://127.0.0.1:10259)")
    exp.add_argument("-o", "--output", choices=("table", "json"), default="table",
                     help="the tables, or the explain JSON document (with -f: the pod's outcome, "
                          "its blockers and, with --fix, its fixes)")
    exp.add_argument("--fix", action="store_true",
                     help="what would make a Pending pod schedule, each change verified by the scheduler "
                          "(with -f; with --kubeconfig/--scheduler-url the running scheduler searches)")
    exp.add_argument("--fix-limit", type=int, default=10, metavar="N",
                     help="with --fix: offer at most N fixes (default 10); the search stops once N are verified")
    progress.add_arguments(exp)
    from kubesched.cli import bench

    bench.add_parser(sub)
    from kubesched.cli import serve

    serve.add_parser(sub)
    from kubesched.cli import node

    node.add_parser(sub)
    from kubesched.cli import run as run_cmd

    run_cmd.add_parser(sub)
    from kubesched.cli import extender

    extender.add_parser(sub)
    from kubesched.cli import experiment

    experiment.add_parsers(sub)
    from kubesched.cli import record

    record.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    level = {0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    lograte.install()  # a flood of one message (a client can cause one) cannot fill the disk
    try:
        if args.command == "explain" and args.fix_limit < 1:
            raise KubeschedError(f"explain --fix-limit: must be at least 1, got {args.fix_limit}")
        if args.command == "explain" and (args.kubeconfig or args.scheduler_url):
            from kubesched.cli import explain_remote

            if args.filename:
                raise KubeschedError("explain: -f (simulate) and --kubeconfig/--scheduler-url (ask a running "
                                     "scheduler) exclude each other")
            return explain_remote.run(args)
        if args.command == "explain" and not args.filename:
            raise KubeschedError("explain: give manifests (-f) to simulate, or --kubeconfig (serve) or "
                                 "--scheduler-url (run) to ask a running scheduler")
        if args.command in ("simulate", "explain"):
            from kubesched.cli import simulate

            return simulate.run(args)
        if args.command == "bench":
            from kubesched.cli import bench

            return bench.run(args)
        if args.command == "serve":
            from kubesched.cli import serve

            return serve.run(args)
        if args.command == "node":
            from kubesched.cli import node

            return node.run(args)
        if args.command in ("snapshot", "compare"):
            from kubesched.cli import workbench

            return workbench.run(args)
        if args.command in ("capacity", "replay"):
            from kubesched.cli import capacity

            return capacity.run(args)
        if args.command == "run":
            from kubesched.cli import run as run_cmd

            return run_cmd.run(args)
        if args.command in ("import", "experiment"):
            from kubesched.cli import experiment

            return experiment.run(args)
        if args.command == "record":
            from kubesched.cli import record

            return record.run(args)
        if args.command == "extender":
            from kubesched.cli import extender

            return extender.run(args)
    except KubeschedError as exc:
        print(f"kubesched: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
