"""``kubesched import openb`` and ``kubesched experiment fill|sweep``, on the Python API
(:mod:`kubesched.experiment`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kubesched.version import with_version
from kubesched.api.errors import KubeschedError

POLICY_NAMES = "random,dotproduct,gpuclustering,gpupacking,bestfit,fgd"


def add_parsers(sub: Any) -> None:
    imp = sub.add_parser("import", help="turn a trace into manifests (openb: Alibaba cluster-trace-gpu-v2023)")
    isub = imp.add_subparsers(dest="format", required=True)
    ob = isub.add_parser("openb", help="openb node and pod CSV files -> nodes.yaml and pods.yaml")
    ob.add_argument("--nodes", required=True, metavar="NODES.csv", help="node list (sn,cpu_milli,memory_mib,gpu,model)")
    ob.add_argument("--pods", required=True, metavar="PODS.csv",
                    help="pod list (name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,qos,...])")
    ob.add_argument("--output-dir", required=True, metavar="DIR", help="directory for nodes.yaml and pods.yaml")

    exp = sub.add_parser("experiment", help="the FGD paper's GPU-sharing experiments on openb traces")
    esub = exp.add_subparsers(dest="experiment", required=True)
    fill = esub.add_parser("fill", help="one run: pods arrive until the cluster is full, measured at every percent")
    _common(fill)
    fill.add_argument("--policy", default="fgd", help=f"one of {POLICY_NAMES} (default fgd)")
    fill.add_argument("--pods", required=True, metavar="PODS.csv", help="openb pod list")
    fill.add_argument("--seed", type=int, default=42, help="seed of the shuffle, inflation and tie order (default 42)")
    fill.add_argument("-o", "--output", choices=("table", "json", "csv"), default="table")
    sw = esub.add_parser("sweep", help="policies x seeds x traces, resumable, with CSVs and an HTML report")
    _common(sw)
    sw.add_argument("--pods", required=True, action="append", metavar="PODS.csv", help="openb pod list (repeatable)")
    sw.add_argument("--policies", default=POLICY_NAMES, help=f"comma-separated (default {POLICY_NAMES})")
    sw.add_argument("--seeds", default="42-51", help="seeds: 42-51, or 42,43,50 (default 42-51)")
    sw.add_argument("--output-dir", required=True, metavar="DIR", help="results directory (a stopped sweep resumes)")
    sw.add_argument("--jobs", type=int, default=None, help="local worker processes (default: the CPU count)")
    sw.add_argument("--ray", nargs="?", const=True, default=None, metavar="ADDRESS",
                    help="run on Ray: a local Ray, or the cluster at ADDRESS (ray://host:10001, auto)")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nodes", required=True, metavar="NODES.csv", help="openb node list")
    p.add_argument("--inflation", type=float, default=1.3,
                   help="arriving GPU requests as a multiple of the cluster's GPUs (default 1.3)")
    p.add_argument("--tie-break", choices=("artifact", "random"), default="artifact",
                   help="equal scores: the artifact's seeded node order (default) or upstream's random choice")


def parse_seeds(text: str) -> list[int]:
    seeds: list[int] = []
    try:
        for part in text.split(","):
            lo, sep, hi = part.strip().partition("-")
            seeds.extend(range(int(lo), int(hi) + 1) if sep else [int(lo)])
    except ValueError:
        raise KubeschedError(f"--seeds {text!r}: give seeds as 42-51 or 42,43,50") from None
    if not seeds:
        raise KubeschedError(f"--seeds {text!r}: no seed")
    return seeds


def run(args: argparse.Namespace) -> int:
    if args.command == "import":
        from kubesched.experiment.importer import import_openb

        for path in import_openb(args.nodes, args.pods, args.output_dir):
            print(path)
        return 0
    import kubesched.experiment as experiment

    if args.experiment == "fill":
        res = experiment.fill(args.nodes, args.pods, policy=args.policy, seed=args.seed,
                              inflation=args.inflation, tie_break=args.tie_break)
        if args.output == "json":
            json.dump(with_version(res.to_json()), sys.stdout, indent=1)
            sys.stdout.write("\n")
        elif args.output == "csv":
            sys.stdout.write(res.table().to_csv())
        else:
            _print_fill(res)
        return 0
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]

    def progress(done: int, total: int, r: Any) -> None:
        print(f"[{done}/{total}] {r.workload} {r.policy} seed {r.seed}: unallocated {r.unallocated()}% at "
              f"{r.final_percent}% arrived ({r.timing.get('wallSeconds', 0):.1f} s)", file=sys.stderr, flush=True)

    out = experiment.sweep(args.nodes, args.pods, policies=policies, seeds=parse_seeds(args.seeds),
                           inflation=args.inflation, out=args.output_dir, ray=args.ray, jobs=args.jobs,
                           tie_break=args.tie_break, progress=progress)
    summary = out.summary()
    for row in summary:
        print(f"{row['workload']:28} {row['policy']:14} unallocated {row['unallocated_median']}% "
              f"(median of {row['runs']}; {row['unallocated_min']}..{row['unallocated_max']})")
    print(f"{args.output_dir}/report.html")
    return 0


def _print_fill(res: Any) -> None:
    print(f"{res.workload} {res.policy} seed {res.seed}: {res.pods_arrived} pods arrived, {res.pods_placed} placed, "
          f"{res.pods_failed} dropped; {res.total_gpus} GPUs; {res.timing['wallSeconds']} s")
    print(f"{'arrived %':>9} {'allocated %':>11} {'unallocated %':>13} {'frag ratio %':>12} {'frag GPU %':>10}")
    for row in res.table():
        if row["arrived"] % 10 == 0 or row["arrived"] == res.last_percent:
            print(f"{row['arrived']:>9} {_f(row['allocation']):>11} {_f(row['unallocated']):>13} "
                  f"{_f(row['frag_ratio']):>12} {_f(row['frag_amount']):>10}")


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"
