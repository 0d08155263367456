"""The comparison part of a recording's replay report (``replay --trace RECORDING
--compare-recorded``): the agreement in numbers, a bar plot of the verdicts, the cumulative
agreement over the replay's bind times, and the pods placed differently."""

from __future__ import annotations

from typing import Any

from kubesched.sim.replay.engine import ReplayResult
from kubesched.sim.report import Report

VERDICTS = ("agree", "disagree", "recordedOnly", "replayOnly", "neither")
MAX_ROWS = 200


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def add_comparison(rep: Report, cmp: dict[str, Any], result: ReplayResult) -> None:
    rep.text(f"Compared with the recording: {cmp['compared']} pods bound in both, {cmp['agree']} on the same "
             f"node ({_rate(cmp['agreement'])}); without the {cmp['ties']} tied attempts: "
             f"{_rate(cmp['agreementWithoutTies'])}. Bound only in the recording: {cmp['recordedOnly']}; "
             f"only in the replay: {cmp['replayOnly']}.")
    rep.bar_plot("placements: this configuration vs the recording", list(VERDICTS),
                 {"pods": [float(cmp[v]) for v in VERDICTS]}, "verdict", "pods")
    bind_time = {p.pod: p.bind for p in result.pods}
    points, agree, both = [], 0, 0
    for p in sorted((p for p in cmp["pods"] if p["result"] in ("agree", "disagree")),
                    key=lambda p: (bind_time.get(p["pod"]) or 0.0, p["pod"])):
        both += 1
        agree += p["result"] == "agree"
        points.append((bind_time.get(p["pod"]) or 0.0, agree / both))
    if points:
        rep.line_plot("cumulative agreement", {"agreement": points}, "virtual time of the replay's bind (s)",
                      "share of pods on the recorded node")
    diff = [p for p in cmp["pods"] if p["result"] != "agree"]
    if diff:
        rep.table("pods placed differently" + (f" (first {MAX_ROWS})" if len(diff) > MAX_ROWS else ""),
                  ["pod", "recorded", "this configuration", "verdict", "tie"],
                  [[p["pod"], p["recorded"], p["replay"], p["result"], "yes" if p["tie"] else ""]
                   for p in diff[:MAX_ROWS]])
