"""``kubesched snapshot`` and ``kubesched compare``: the what-if workbench's commands (the
work itself is in :mod:`kubesched.sim.snapshot` and :mod:`kubesched.sim.compare`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kubesched.version import with_version
from kubesched.api.errors import KubeschedError
from kubesched.api.kubeversion import parse_minor
from kubesched.cli import loadargs, progress, versionargs


def add_parsers(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    snap = sub.add_parser("snapshot", help="what the scheduler needs from a live cluster, as manifests simulate reads")
    src = snap.add_mutually_exclusive_group()
    src.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig of the cluster (default: $KUBECONFIG, ~/.kube/config)")
    src.add_argument("--from-dump", action="append", metavar="FILE",
                     help="read `kubectl get ... -o yaml` output instead of a cluster (repeatable)")
    snap.add_argument("--context", metavar="NAME", help="kubeconfig context")
    out = snap.add_mutually_exclusive_group()
    out.add_argument("--output-dir", metavar="DIR", help="a directory, one file per kind (default: stdout)")
    out.add_argument("--output-file", metavar="FILE", help="one .yaml/.yml/.json file (default: stdout)")
    snap.add_argument("--keep-finished", action="store_true",
                      help="keep Succeeded/Failed pods (simulate lists them as ignored); default: left out")
    progress.add_arguments(snap)

    cmp = sub.add_parser("compare", help="schedule the same pending pods under several configurations, side by side")
    cmp.add_argument("-f", "--filename", action="append", required=True, metavar="PATH",
                     help="the cluster: manifest file or directory (repeatable), e.g. a snapshot; or one "
                          "`kubesched record` recording, replayed under each configuration")
    cmp.add_argument("--config", action="append", required=True, metavar="FILE",
                     help="KubeSchedulerConfiguration (repeatable; `default` for the built-in defaults)")
    cmp.add_argument("-o", "--output", choices=("table", "json"), default="table",
                     help="the comparison as a table (default) or as JSON")
    cmp.add_argument("--output-dir", metavar="DIR", help="write the HTML report (report.html, report.json, series/)")
    cmp.add_argument("--seed", type=int, default=0, help="seed for every random choice (default 0)")
    cmp.add_argument("--tie-break", choices=("random", "name"), default="random",
                     help="equal scores: seeded random choice (upstream) or the lowest node name")
    cmp.add_argument("--max-diff", type=int, default=30, metavar="N",
                     help="pods of the placement diff shown in the terminal (default 30; the JSON has all)")
    progress.add_arguments(cmp)
    loadargs.add_arguments(cmp)
    versionargs.add_arguments(cmp)


def run(args: argparse.Namespace) -> int:
    return snapshot(args) if args.command == "snapshot" else compare(args)


def snapshot(args: argparse.Namespace) -> int:
    from kubesched.cluster.kube import KubeClient
    from kubesched.sim import snapshot as snap_mod

    if args.from_dump:
        snap = snap_mod.from_dump(args.from_dump, keep_finished=args.keep_finished)
    else:
        client = KubeClient.connect(args.kubeconfig or "", context=args.context)
        try:
            with progress.Bar("snapshot", len(snap_mod.ORDER), args.progress) as bar:
                snap = snap_mod.take(client, keep_finished=args.keep_finished,
                                     progress=lambda kind, done, total: bar.update(
                                         done, description=f"listing {kind}" if kind else "done"))
        finally:
            client.close()
    for w in snap.warnings:
        print(f"kubesched: warning: {w}", file=sys.stderr)
    if args.output_file and not args.output_file.endswith((".yaml", ".yml", ".json")):
        raise KubeschedError(f"snapshot --output-file {args.output_file}: the name must end in .yaml, .yml or .json "
                             "(--output-dir writes a directory)")
    try:
        written = snap_mod.write(snap, args.output_dir or args.output_file, directory=bool(args.output_dir))
    except OSError as exc:
        where = f"--output-dir {args.output_dir}" if args.output_dir else f"--output-file {args.output_file}"
        raise KubeschedError(f"snapshot {where}: {exc.strerror or exc}") from exc
    if written:
        counts = ", ".join(f"{n} {k}" for k, n in snap.counts().items())
        print(f"snapshot of {snap.source}: {counts}", file=sys.stderr)
        if snap.finished_pods:
            print(f"finished pods {'kept' if args.keep_finished else 'left out'}: {snap.finished_pods}",
                  file=sys.stderr)
        print(f"written: {args.output_dir or args.output_file}", file=sys.stderr)
    return 0


def compare(args: argparse.Namespace) -> int:
    from kubesched.sim import compare as cmp_mod

    configs = cmp_mod.candidates(args.config)
    with progress.Bar("compare", None, args.progress) as bar:
        done = [0] * len(configs)

        def tick(i: int, att: Any) -> None:
            done[i] += att.result == "Scheduled"
            bar.update(sum(done), description=f"compare: {configs[i].name}")

        version = parse_minor(args.kubernetes_version) if args.kubernetes_version else None
        recording = _recording(args.filename)
        if recording is not None:
            from kubesched.sim.compare_recording import compare_recording

            doc = compare_recording(recording, configs, seed=args.seed, tie_break=args.tie_break,
                                    kubernetes_version=version, feature_gates=args.feature_gates,
                                    on_progress=lambda i, n: bar.update(n, description=f"compare: {configs[i].name}"))
        else:
            doc = cmp_mod.compare(args.filename, configs, seed=args.seed, tie_break=args.tie_break, on_attempt=tick,
                                  load=loadargs.options(args), kubernetes_version=version,
                                  feature_gates=args.feature_gates)
    if args.output_dir:
        from kubesched.sim import compare_report

        try:
            path = compare_report.build(doc).write(args.output_dir)
        except OSError as exc:
            raise KubeschedError(f"compare --output-dir {args.output_dir}: {exc.strerror or exc}") from exc
        print(f"report: {path}", file=sys.stderr)
    if args.output == "json":
        json.dump(with_version(doc), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        _print(doc, args.max_diff)
    return 0


def _recording(paths: list[str]) -> str | None:
    """The recording among ``-f`` (``kubesched record`` output), if one is given: alone."""
    import os

    from kubesched.sim.recording.format import is_recording_name
    from kubesched.sim.recording.reader import is_recording

    found = [p for p in paths if is_recording_name(p) and os.path.isfile(p) and is_recording(p)]
    if found and len(paths) > 1:
        raise KubeschedError(f"compare: {found[0]} is a recording: it brings its own cluster (give it as the only -f)")
    return found[0] if found else None


def _print(doc: dict[str, Any], max_diff: int) -> None:
    from rich.console import Console
    from rich.table import Table

    from kubesched.sim.compare_report import summary_rows

    console = Console(highlight=False)
    cols, rows = summary_rows(doc)
    table = Table(title=f"{doc['pendingPods']} pending pods, seed {doc['seed']}")
    for i, c in enumerate(cols):
        table.add_column(c, justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    console.print(table)
    for r in doc["configurations"]:
        reasons = r.get("unschedulableReasons") or {}
        if reasons:
            console.print(f"Why pending under {r['name']}")
            for message, count in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
                console.print(f"  {count} pod(s): {message}")
    diff = doc["diff"]["different"]
    if not diff:
        console.print("Every pod is placed the same under every configuration.")
        return
    names = [r["name"] for r in doc["configurations"]]
    dt = Table(title=f"{len(diff)} pods placed differently" + (f" (first {max_diff})" if len(diff) > max_diff else ""))
    dt.add_column("pod")
    for n in names:
        dt.add_column(n)
    for d in diff[:max_diff]:
        dt.add_row(d["pod"], *(d["placements"][n] for n in names))
    console.print(dt)
