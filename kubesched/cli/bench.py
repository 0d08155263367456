"""``kubesched bench``: measure the scheduler on scheduler_perf-shaped workloads.

One workload runs in this process (``--workload``). The suite (``--suite``) runs each of
its cases in a fresh child process, so that every case starts from an empty heap and
reports its own peak RSS; a case that outlives ``--timeout`` is stopped and reported as
such. Progress bars are drawn only on a terminal and never with ``-o json``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import queue as queue_mod
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kubesched.api.errors import KubeschedError
from kubesched.api.kubeversion import NEWEST
from kubesched.cli import versionargs
from kubesched.sim.workloads import MIXED, SUITE, WORKLOADS, Case, default_case

if TYPE_CHECKING:  # the scheduler is imported only when a benchmark runs
    from kubesched.sim.bench import BenchSpec


def add_parser(sub: Any) -> None:
    """Register ``bench`` on the ``kubesched`` sub-command parser."""
    p = sub.add_parser("bench", help="measure scheduling throughput and latency (scheduler_perf workloads)",
                       description="Run scheduler_perf-shaped workloads through the real scheduling loop "
                                   "and report pods/s, 1 s throughput percentiles, scheduling-algorithm "
                                   "latency and peak RSS.")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--workload", choices=sorted([*WORKLOADS, MIXED]), help="run one workload")
    what.add_argument("--scenario", metavar="FILE",
                      help="bench a manifest: Nodes, bound pods and other objects loaded first; pending pods "
                           "annotated bench.kubesched.io/phase: init scheduled unmeasured; the other pending "
                           "pods measured in file order")
    what.add_argument("--suite", action="store_true", help="run the whole matrix, one process per case")
    what.add_argument("--serve", action="store_true",
                      help="end to end through a real `kubesched serve` (default 1000 nodes, 5000 pods POSTed by "
                           "16 clients): pods/s from the first create to the last bind seen by a watch, then "
                           "SIGKILL, restart and check every acknowledged pod")
    p.add_argument("--nodes", type=int, metavar="N", help="nodes (default: the workload's suite size)")
    p.add_argument("--init-pods", type=int, metavar="K", help="pods scheduled before measuring")
    p.add_argument("--pods", type=int, metavar="M", help="measured pods")
    p.add_argument("--percentage-of-nodes-to-score", type=int, default=100, metavar="P",
                   help="percentageOfNodesToScore (default 100: every node; 0: upstream's adaptive)")
    p.add_argument("--seed", type=int, default=0, help="seed for the scheduler's random choices")
    p.add_argument("--scale", type=float, default=1.0, metavar="F",
                   help="multiply every size by F in (0, 1], e.g. 0.1 for a quick run")
    p.add_argument("--timeout", type=float, default=0.0, metavar="SECONDS",
                   help="suite only: stop a case that runs longer (default: no limit)")
    p.add_argument("--write-scenario", metavar="FILE",
                   help="with --workload mixed: write the generated manifest to FILE (for --scenario) "
                        "instead of running it")
    p.add_argument("--clients", type=int, default=16, metavar="C", help="--serve: concurrent clients (default 16)")
    p.add_argument("--serve-in-process", action="store_true",
                   help="--serve: the scheduler inside serve's process (default: serve --scheduler-process)")
    p.add_argument("--fast-init", action="store_true",
                   help="with --workload (not mixed): bind the init pods directly, round-robin where they "
                        "fit, all but the last 100 (scheduled, to warm the caches) (kubesched/sim/fastinit.py)")
    p.add_argument("-o", "--output", choices=("table", "json"), default="table")
    versionargs.add_arguments(p, default=f"{NEWEST}, or $KUBESCHED_KUBERNETES_VERSION")


def _spec(args: argparse.Namespace, case: Case) -> "BenchSpec":
    from kubesched.sim.bench import BenchSpec

    fts = versionargs.features(args)
    spec = BenchSpec(workload=case.workload, nodes=case.nodes, init_pods=case.init_pods, pods=case.pods,
                     percentage_of_nodes_to_score=args.percentage_of_nodes_to_score, seed=args.seed,
                     scenario=args.scenario or "", fast_init=bool(getattr(args, "fast_init", False)),
                     kubernetes_version=fts.version, feature_gates=args.feature_gates)
    if not spec.scenario and (spec.nodes < 1 or spec.init_pods < 0 or spec.pods < 0):
        raise KubeschedError("bench: --nodes must be at least 1, --init-pods and --pods at least 0")
    if not 0 <= spec.percentage_of_nodes_to_score <= 100:
        raise KubeschedError("bench: --percentage-of-nodes-to-score must be in [0, 100]")
    return spec


def _scaled(case: Case, f: float) -> Case:
    if f == 1:
        return case
    return Case(workload=case.workload, nodes=max(1, round(case.nodes * f)),
                init_pods=round(case.init_pods * f), pods=round(case.pods * f))


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[str, str, int, int], None]]:
    """``report(key, label, done, total)`` drawing one bar per key, or a no-op."""
    if not enabled:
        yield lambda key, label, done, total: None
        return
    bars: dict[str, Any] = {}
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=Console(), transient=True) as prog:
        def report(key: str, label: str, done: int, total: int) -> None:
            if key not in bars:
                bars[key] = prog.add_task(label, total=max(total, 1))
            prog.update(bars[key], completed=done, description=label)

        yield report


def _fmt(v: Any, digits: int = 1) -> str:
    if v is None:
        return "-"
    return f"{v:,.{digits}f}" if isinstance(v, float) else f"{v:,}"


def _print_table(rows: list[dict[str, Any]]) -> None:
    t = Table(title="kubesched bench", title_justify="left")
    for col in ("workload", "nodes", "init", "pods", "scheduled", "pods/s", "tput avg", "p50", "p90",
                "p99", "cycle p50 ms", "cycle p99 ms", "RSS MB"):
        t.add_column(col, justify="left" if col == "workload" else "right")
    for row in rows:
        r = row["result"]
        if r is None:
            t.add_row(row["workload"], _fmt(row["nodes"]), _fmt(row["init_pods"]), _fmt(row["pods"]),
                      f"[red]{row['error']}[/]", *["-"] * 8)
            continue
        t.add_row(row["workload"], _fmt(r["nodes"]), _fmt(row["init_pods"]), _fmt(r["pods"]),
                  _fmt(r["scheduled"]), _fmt(r["pods_per_second"]), _fmt(r["throughput_1s_avg"]),
                  _fmt(r["throughput_1s_p50"]), _fmt(r["throughput_1s_p90"]), _fmt(r["throughput_1s_p99"]),
                  _fmt(r["algo_latency_p50_ms"], 2), _fmt(r["algo_latency_p99_ms"], 2),
                  _fmt(r["max_rss_mb"], 0))
    # Off a terminal rich would fold the table into 80 columns: give it room instead.
    Console(soft_wrap=False, highlight=False, width=None if sys.stdout.isatty() else 200).print(t)
    pct = {row["result"]["percentage_of_nodes_to_score"] for row in rows if row["result"]}
    if pct:
        print(f"percentageOfNodesToScore: {', '.join(map(str, sorted(pct)))}")


def _row(case: Case, result: dict[str, Any] | None, error: str = "") -> dict[str, Any]:
    row: dict[str, Any] = {"workload": case.workload, "nodes": case.nodes, "init_pods": case.init_pods,
                           "pods": case.pods, "result": result}
    if error:
        row["error"] = error
    return row


def _release(args: argparse.Namespace) -> dict[str, Any]:
    """``kubernetesVersion`` the run decided as, and ``featureGates`` when set (JSON output)."""
    return versionargs.features(args).to_json()


# -- the suite: one child process per case ------------------------------------------------
def _child(spec: "BenchSpec", out: Any) -> None:
    from kubesched.sim.scenario import run_bench

    last = [0.0]

    def report(phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.2 or done >= total:
            last[0] = now
            out.put(("progress", phase, done, total))

    try:
        out.put(("result", run_bench(spec, report).to_json()))
    except Exception as exc:  # reported to the parent as this case's error
        out.put(("error", f"{type(exc).__name__}: {exc}"))


def _run_child(spec: "BenchSpec", label: str, timeout: float,
               report: Callable[[str, str, int, int], None]) -> tuple[dict[str, Any] | None, str]:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=_child, args=(spec, out), daemon=True)
    proc.start()
    started = time.monotonic()
    try:
        while True:
            if timeout and time.monotonic() - started > timeout:
                return None, f"timeout after {timeout:.0f}s"
            try:
                msg = out.get(timeout=0.2)
            except queue_mod.Empty:
                if not proc.is_alive():
                    return None, f"exited with status {proc.exitcode}"
                continue
            if msg[0] == "progress":
                report(label, f"{label} [{msg[1]}]", msg[2], msg[3])
            elif msg[0] == "result":
                return msg[1], ""
            else:
                return None, str(msg[1])
    finally:
        if proc.is_alive():
            proc.terminate()
        proc.join()


def _check_scale(scale: float) -> float:
    if not 0 < scale <= 1:
        raise KubeschedError("bench: --scale must be in (0, 1]")
    return scale


def _suite(args: argparse.Namespace, show: bool) -> list[dict[str, Any]]:
    cases = [_scaled(c, _check_scale(args.scale)) for c in SUITE]
    specs = [_spec(args, c) for c in cases]
    rows = []
    with _progress(show) as report:
        for case, spec in zip(cases, specs):
            label = f"{case.workload} {case.nodes}/{case.init_pods}/{case.pods}"
            result, error = _run_child(spec, label, args.timeout, report)
            rows.append(_row(case, result, error))
    return rows


def run(args: argparse.Namespace) -> int:
    show = args.output == "table" and sys.stdout.isatty()
    if args.serve:
        return _run_serve(args)
    if args.suite:
        if (args.nodes, args.init_pods, args.pods) != (None, None, None):
            raise KubeschedError("bench: --nodes, --init-pods and --pods go with --workload; "
                                 "shrink the suite with --scale")
        rows = _suite(args, show)
        if args.output == "json":
            json.dump([{**row, **_release(args)} for row in rows], sys.stdout, indent=1)
            sys.stdout.write("\n")
        else:
            _print_table(rows)
        return 0 if all(r["result"] is not None for r in rows) else 1
    if args.fast_init and (not args.workload or args.workload == MIXED):
        raise KubeschedError("bench: --fast-init goes with --workload (a built-in workload other than mixed)")
    if args.write_scenario and args.workload != MIXED:
        raise KubeschedError("bench: --write-scenario goes with --workload mixed")
    if args.scenario:
        if (args.nodes, args.init_pods, args.pods, args.scale) != (None, None, None, 1.0):
            raise KubeschedError("bench: --scenario FILE sets its own sizes: drop --nodes, --init-pods, "
                                 "--pods and --scale")
        if not os.path.isfile(args.scenario):
            raise KubeschedError(f"bench: --scenario {args.scenario}: no such file")
        return _run_one(args, Case(workload=f"scenario:{os.path.basename(args.scenario)}", nodes=0,
                                   init_pods=0, pods=0), show)
    d = default_case(args.workload)
    case = Case(workload=args.workload, nodes=d.nodes if args.nodes is None else args.nodes,
                init_pods=d.init_pods if args.init_pods is None else args.init_pods,
                pods=d.pods if args.pods is None else args.pods)
    case = _scaled(case, _check_scale(args.scale))
    if args.write_scenario:
        from kubesched.sim.scenario import write_mixed

        write_mixed(args.write_scenario, case.nodes, case.init_pods, case.pods, args.seed)
        return 0
    return _run_one(args, case, show)


def _run_one(args: argparse.Namespace, case: Case, show: bool) -> int:
    spec = _spec(args, case)
    from kubesched.sim.scenario import run_bench

    with _progress(show) as report:
        result = run_bench(spec, lambda phase, done, total: report(phase, phase, done, total)).to_json()
    if args.output == "json":
        json.dump({**result, **_release(args)}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        row = _row(case, result)
        if args.scenario:
            row["init_pods"] = None  # the file's count, not reported in the result
        _print_table([row])
    return 0


def _run_serve(args: argparse.Namespace) -> int:
    """``--serve``: the end-to-end benchmark (:mod:`kubesched.cli.servebench`)."""
    from kubesched.cli.servebench import run_serve_bench

    if args.init_pods is not None or args.scale != 1.0:
        raise KubeschedError("bench --serve: --init-pods and --scale go with --workload")
    fts = versionargs.features(args)
    serve_args = ["--kubernetes-version", fts.version] + (["--feature-gates", args.feature_gates]
                                                          if args.feature_gates else [])
    res = run_serve_bench(1000 if args.nodes is None else args.nodes, 5000 if args.pods is None else args.pods,
                          args.clients, in_process=args.serve_in_process, serve_args=serve_args)
    if args.output == "json":
        json.dump({**res, **fts.to_json()}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        t = Table(title="kubesched serve, end to end")
        for col in ("nodes", "pods", "clients", "scheduler", "creates/s", "pods/s", "seconds", "lost", "moved"):
            t.add_column(col, justify="left" if col == "scheduler" else "right")
        t.add_row(str(res["nodes"]), str(res["pods"]), str(res["clients"]), res["scheduler"],
                  _fmt(res["creates_per_second"]), _fmt(res["pods_per_second"]),
                  _fmt(res["first_create_to_last_bind_seconds"], 2), str(res["after_sigkill_missing"]),
                  str(res["after_sigkill_moved_or_unbound"]))
        Console().print(t)
        if res["cpu_bound_pods_per_second"] is not None:
            parts = ", ".join(f"{k.replace('_', ' ')} {v:.1f} s" for k, v in res["cpu_seconds_during_burst"].items()
                              if v is not None)
            print(f"CPU per bound pod: {res['cpu_ms_per_pod']:.2f} ms ({parts}); on {res['cpus']} cores "
                  f"that allows at most {res['cpu_bound_pods_per_second']:,.0f} pods/s")
        for err in res["first_create_errors"]:
            print(f"create error: {err}", file=sys.stderr)
    return 0 if res["ok"] else 1
