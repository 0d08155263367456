"""``kubesched replay --trace RECORDING [--compare-recorded]``: a ``kubesched record``
recording replayed on the virtual clock (the work is in :mod:`kubesched.sim.replay.recorded`):
the replay's table, and with ``--compare-recorded`` the agreement with the recorded
scheduler and the pods placed differently; ``--json`` for the document, ``-o DIR`` for the
HTML report with its plots (and ``comparison.json``: every pod's verdict)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubesched.version import with_version
from kubesched.api.errors import KubeschedError
from kubesched.cli import progress

MAX_SHOWN = 30


class _Recorded:
    """What the run options read of the input: the Kubernetes release the recording names."""

    def __init__(self, rec: Any) -> None:
        self.rec = rec

    @property
    def kubernetes_version(self) -> str | None:
        from kubesched.api.kubeversion import from_version_info

        info = self.rec.header.get("serverVersion")
        return from_version_info(info, f"{self.rec.path}: serverVersion") if isinstance(info, dict) else None


def run(args: argparse.Namespace, options: Callable[[Any], Any]) -> int:
    """``options(input)``: the run options (the configuration, and the release ``input`` names)."""
    from kubesched.cli import capacity_render as cr
    from kubesched.sim.recording.reader import read_recording
    from kubesched.sim.replay.recorded import compare, replay_recording

    if args.filename:
        raise KubeschedError(f"replay: {args.trace} is a recording: it brings its own cluster (no -f)")
    if args.follow_recorded and not args.compare_recorded:
        raise KubeschedError("replay: --follow-recorded needs --compare-recorded")
    rec = read_recording(args.trace)
    opts = options(_Recorded(rec))
    with progress.Bar("replay", None, args.progress) as bar:
        rr, result = replay_recording(rec, opts, progress=lambda done, total, t: bar.update(
            done, total=total, description=f"replay t={t:,.0f}s"), follow=args.follow_recorded)
    cmp = compare(rr, result) if args.compare_recorded else None
    doc = result.to_json() | {"notReplayed": dict(rr.not_replayed)}
    if cmp is not None:
        doc["comparison"] = cmp
    if args.output_dir:
        _write_report(args, result, cmp)
    if args.output == "json":
        json.dump(with_version(doc), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    cr.print_replay(result)
    if rr.not_replayed:
        print("recorded changes not replayed (starting state used): "
              + ", ".join(f"{n} {k}" for k, n in sorted(rr.not_replayed.items())))
    if cmp is not None:
        _print_comparison(cmp)
    return 0


def _write_report(args: argparse.Namespace, result: Any, cmp: dict[str, Any] | None) -> None:
    from kubesched.sim.replay.recorded_report import add_comparison
    from kubesched.sim.replay.report import replay_report, write_replay_data

    try:
        write_replay_data(result, args.output_dir)
        if cmp is not None:  # every pod's verdict, beside replay.json
            Path(args.output_dir, "comparison.json").write_text(json.dumps(cmp, allow_nan=False) + "\n", encoding="utf-8")
        rep = replay_report(result, args.trace)
        if cmp is not None:
            add_comparison(rep, cmp, result)
        path = rep.write(args.output_dir)
    except OSError as exc:
        raise KubeschedError(f"replay --output-dir {args.output_dir}: {exc.strerror or exc}") from exc
    print(f"report: {path}", file=sys.stderr)


def _rate(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}%"


def _print_comparison(cmp: dict[str, Any]) -> None:
    print(f"agreement with the recording: {cmp['agree']}/{cmp['compared']} ({_rate(cmp['agreement'])}); "
          f"without ties ({cmp['ties']} tied): {_rate(cmp['agreementWithoutTies'])}; "
          f"bound only in the recording: {cmp['recordedOnly']}, only in the replay: {cmp['replayOnly']}")
    diff = [p for p in cmp["pods"] if p["result"] != "agree"]
    for p in diff[:MAX_SHOWN]:
        print(f"  {p['pod']}: recorded {p['recorded'] or '-'}, this configuration {p['replay'] or '-'}"
              f" ({p['result']}{', tie' if p['tie'] else ''})")
    if len(diff) > MAX_SHOWN:
        print(f"  ... {len(diff) - MAX_SHOWN} more (--json lists every pod)")
