"""Write a synthetic cluster and workload trace for ``kubesched replay`` (how its speed is
measured: ``README.md``, "Replay").

    python benchmarks/replay_trace.py --nodes 200 --pods 20000 -o /tmp/r20k
    kubesched replay -f /tmp/r20k.yaml --trace /tmp/r20k.jsonl -o /tmp/r20k-report

Nodes: 16 cpu / 64Gi / 110 pods, three zones. Pods arrive as a Poisson process (``--rate``
per second), ask for one of five cpu and four memory sizes, carry one of 20 ``app``
labels and run for a uniform 30-300 s. Everything comes from one seeded RNG.
"""

from __future__ import annotations

import argparse
import json
import random


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--pods", type=int, default=20000)
    ap.add_argument("--rate", type=float, default=20.0, help="arrivals per second (default 20)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", required=True, help="prefix: writes PREFIX.yaml and PREFIX.jsonl")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with open(args.output + ".yaml", "w", encoding="utf-8") as f:
        for i in range(args.nodes):
            name = f"node-{i:04d}"
            f.write(f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: "
                    f"{{kubernetes.io/hostname: {name}, topology.kubernetes.io/zone: zone-{i % 3}}}}}\n"
                    "status: {capacity: {cpu: '16', memory: 64Gi, pods: '110'}}\n")
    with open(args.output + ".jsonl", "w", encoding="utf-8") as f:
        t = 0.0
        for i in range(args.pods):
            t += rng.expovariate(args.rate)
            row = {"time": round(t, 3), "name": f"p{i:06d}", "cpu": rng.choice(["250m", "500m", "1", "2", "4"]),
                   "memory": rng.choice(["256Mi", "1Gi", "2Gi", "4Gi"]), "labels": {"app": f"app{i % 20}"},
                   "duration": round(rng.uniform(30, 300), 1)}
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
