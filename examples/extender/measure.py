"""What a slow or down extender does to scheduling: `kubesched simulate` on 10 nodes and 20
pods with no extender, with `kubesched extender` serving PreferSpot, with a filter extender
that answers after 200 ms, and with one that is down (not ignorable, then ignorable).

Run from the repository root: `python examples/extender/measure.py` (uses .venv/bin/kubesched
when present). Prints, per setting, how many pods were scheduled, how many on spot nodes
(odd-numbered: PreferSpot's), the first failure message and the wall time of the simulate
process (start-up included).
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KUBESCHED = str(ROOT / ".venv" / "bin" / "kubesched") if (ROOT / ".venv").exists() else shutil.which("kubesched")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cluster() -> str:
    docs = []
    for i in range(10):
        kind = "spot" if i % 2 else "on-demand"
        docs.append(f"""apiVersion: v1
kind: Node
metadata: {{name: node-{i:02d}, labels: {{kubernetes.io/hostname: node-{i:02d}, karpenter.sh/capacity-type: {kind}}}}}
status: {{capacity: {{cpu: "8", memory: 16Gi, pods: "110"}}}}""")
    for i in range(20):
        docs.append(f"""apiVersion: v1
kind: Pod
metadata: {{name: pod-{i:02d}, namespace: default}}
spec: {{containers: [{{name: c, image: app, resources: {{requests: {{cpu: 500m, memory: 512Mi}}}}}}]}}""")
    return "\n---\n".join(docs) + "\n"


class SlowFilter(http.server.BaseHTTPRequestHandler):
    """A filter extender that keeps every node, 200 ms after each request."""

    def do_POST(self) -> None:
        args = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        time.sleep(0.2)
        body = json.dumps({"Nodes": args.get("Nodes"), "NodeNames": args.get("NodeNames"),
                           "FailedNodes": {}, "FailedAndUnresolvableNodes": {}, "Error": ""}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def config(path: Path, extender: str) -> Path:
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + extender)
    return path


def simulate(manifest: Path, cfg: Path) -> tuple[int, int, str, float]:
    started = time.monotonic()
    out = subprocess.run([KUBESCHED, "simulate", "-f", str(manifest), "--config", str(cfg), "-o", "json"],
                         capture_output=True, text=True, check=True)
    wall = time.monotonic() - started
    pods = json.loads(out.stdout)["pods"]
    failed = [p.get("message") or "" for p in pods if p["status"] != "Scheduled"]
    spot = sum(int((p.get("node") or "node-00")[-2:]) % 2 for p in pods if p["status"] == "Scheduled")
    return sum(p["status"] == "Scheduled" for p in pods), spot, (failed[0] if failed else ""), wall


def main() -> None:
    tmp = Path(tempfile.mkdtemp())
    manifest = tmp / "cluster.yaml"
    manifest.write_text(cluster())
    slow = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowFilter)
    threading.Thread(target=slow.serve_forever, daemon=True).start()
    served_port, down_port = free_port(), free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "examples" / "custom-plugin")}
    served = subprocess.Popen([KUBESCHED, "extender", "--config", str(ROOT / "examples" / "extender" / "plugins.yaml"),
                               "--port", str(served_port)], env=env, stdout=subprocess.DEVNULL)
    try:
        time.sleep(5)  # its start-up
        rows = [
            ("none", ""),
            ("kubesched extender (PreferSpot), prioritize", f'extenders: [{{urlPrefix: "http://127.0.0.1:{served_port}", '
                                                           'prioritizeVerb: prioritize, weight: 1}]\n'),
            ("filter answers in 200 ms", f'extenders: [{{urlPrefix: "http://127.0.0.1:{slow.server_port}", '
                                         'filterVerb: filter}]\n'),
            ("down, not ignorable", f'extenders: [{{urlPrefix: "http://127.0.0.1:{down_port}", filterVerb: filter}}]\n'),
            ("down, ignorable", f'extenders: [{{urlPrefix: "http://127.0.0.1:{down_port}", filterVerb: filter, '
                                'ignorable: true}]\n'),
        ]
        print("| extender | scheduled (of 20) | on spot nodes | first failure | wall time |\n|---|---|---|---|---|")
        for i, (name, ext) in enumerate(rows):
            n, spot, msg, wall = simulate(manifest, config(tmp / f"c{i}.yaml", ext))
            print(f"| {name} | {n} | {spot} | {msg or '-'} | {wall:.1f} s |", flush=True)
    finally:
        served.terminate()
        served.wait()
        slow.shutdown()
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
