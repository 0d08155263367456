"""``kubesched record --kubeconfig K -o TRACE [--duration D]``: record a live cluster's
changes for ``kubesched replay --trace`` (format: docs/record-replay.md).

Progress goes to stderr: a line when the starting state is listed, then one every
``--progress-interval`` seconds with the counts so far, and a last one with the totals.
Ctrl-C (SIGINT) or SIGTERM ends the recording cleanly: the informers stop, an ``end`` line
is written and the file is closed (a gzip file is complete).
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import threading
import time
from types import FrameType
from typing import TYPE_CHECKING

from kubesched.api.errors import KubeschedError

if TYPE_CHECKING:
    from kubesched.sim.recording.recorder import Recorder, Writer

_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?$")


def parse_duration(text: str) -> float:
    """Seconds of ``90``, ``90s``, ``5m``, ``1h30m`` (Go's units h, m, s)."""
    try:
        value = float(text)
    except ValueError:
        m = _DURATION.match(text.strip())
        if not text.strip() or m is None or not any(m.groups()):
            raise KubeschedError(f"--duration: {text!r} is not a duration (e.g. 90, 90s, 5m, 1h30m)") from None
        h, mi, s = (float(g) if g else 0.0 for g in m.groups())
        value = h * 3600 + mi * 60 + s
    if value <= 0:
        raise KubeschedError(f"--duration: {text!r} must be positive")
    return value


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("record", help="record a live cluster's changes (nodes, pods, bindings, ...) for replay",
                       description=(__doc__ or "").replace("``", "`"),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kubeconfig", metavar="FILE", default="",
                   help="kubeconfig of the cluster (default: $KUBECONFIG, ~/.kube/config)")
    p.add_argument("--context", metavar="NAME", help="kubeconfig context")
    p.add_argument("--output-file", required=True, metavar="TRACE.jsonl[.gz]",
                   help="the recording (JSON lines; gzip when the name ends in .gz)")
    p.add_argument("--duration", metavar="D", help="stop after D (90, 90s, 5m, 1h30m); default: until Ctrl-C")
    p.add_argument("--progress-interval", type=float, default=10.0, metavar="SECONDS",
                   help="seconds between two progress lines on stderr (default 10; 0: none)")


def _counts(counts: dict[str, int]) -> str:
    ops = ("add", "update", "bind", "finish", "delete")
    return ", ".join(f"{counts.get(op, 0):,} {op}" for op in ops)


def run(args: argparse.Namespace) -> int:
    from kubesched.cluster.kube import KubeClient
    from kubesched.cluster.kube.errors import KubeClientError
    from kubesched.sim.recording.format import is_recording_name
    from kubesched.sim.recording.recorder import Recorder, Writer

    duration = parse_duration(args.duration) if args.duration else None
    if not is_recording_name(args.output_file):
        raise KubeschedError(f"record --output-file {args.output_file}: the name must end in .jsonl or .jsonl.gz")
    try:
        client = KubeClient.connect(args.kubeconfig, context=args.context)
    except KubeClientError as exc:
        raise KubeschedError(f"record: {exc}") from None
    stop = threading.Event()
    reason = ["duration"]

    def on_signal(signum: int, frame: FrameType | None) -> None:
        reason[0] = "interrupted"
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    writer: "Writer | None" = None
    rec: "Recorder | None" = None
    failed = True
    try:
        from kubesched.sim import snapshot

        probe = snapshot.Snapshot(source=client.host)
        writer = Writer(args.output_file, client.host, server_version=snapshot._server_version(client, probe))
        rec = Recorder(client, writer)
        rec.start()
        for w in probe.warnings + rec.warnings:
            print(f"kubesched: warning: {w}", file=sys.stderr)
        _wait(rec, writer, stop, duration, args.progress_interval)
        failed = False
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if rec is not None:
            rec.stop()
        if writer is not None:
            _finish(writer, args.output_file, reason[0] if not failed else "failed",
                    keep=not failed or writer.counts["synced"] > 0)
        client.close()
    return 0


def _finish(writer: "Writer", output: str, reason: str, keep: bool) -> None:
    """The ``end`` line and the last progress line; a recording that never got its starting
    state (the cluster could not be listed) is removed rather than left half-written."""
    import os

    writer.event("end", reason=reason, counts=dict(writer.counts))
    writer.close()
    if not keep:
        os.unlink(output)
        return
    print(f"recorded {writer.now():,.1f}s: {_counts(writer.counts)}; written: {output}", file=sys.stderr)


def _wait(rec: "Recorder", writer: "Writer", stop: threading.Event, duration: float | None,
          interval: float) -> None:
    started = time.monotonic()
    synced = False
    last = started
    while not stop.wait(0.2):
        now = time.monotonic()
        if not synced and rec.synced:
            synced = True
            with writer.lock:
                rec.mark_synced()
                initial = writer.counts["initial"]
            print(f"record: starting state listed: {initial:,} objects"
                  + (f" ({rec.finished_at_start:,} finished pods left out)" if rec.finished_at_start else ""),
                  file=sys.stderr, flush=True)
        if interval > 0 and now - last >= interval:
            last = now
            print(f"record: {writer.now():,.0f}s: {_counts(writer.counts)}", file=sys.stderr, flush=True)
        writer.flush()
        if duration is not None and now - started >= duration:
            return
