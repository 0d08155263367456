"""``kubesched simulate`` end to end on the shipped examples, every expectation worked out
by hand from upstream v1.34.1's rules (no value here was produced by running kubesched).

Rules used (upstream source, pkg/scheduler/framework/...):

- Default profile weights (apis/config/v1/default_plugins.go): TaintToleration 3,
  NodeAffinity 2, NodeResourcesFit 1, PodTopologySpread 2, InterPodAffinity 2,
  NodeResourcesBalancedAllocation 1, ImageLocality 1. Filters run in that profile order
  (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit,
  ..., PodTopologySpread, InterPodAffinity) and a node's verdict is its first failure.
- NodeResourcesFit LeastAllocated (least_allocated.go): per resource
  ``(alloc - req) * 100 // alloc`` with req = node's requests + the pod's, then
  ``sum(score * weight) // sum(weight)`` over cpu and memory (weights 1, 1). A request
  larger than the node's allocatable even when empty makes the status
  UnschedulableAndUnresolvable (fit.go), so preemption skips the node.
- BalancedAllocation (balanced_allocation.go): fractions req/alloc (capped at 1) for cpu and
  memory, std = |f_cpu - f_mem| / 2, score = int((1 - std) * 100). PreScore skips
  best-effort pods.
- TaintToleration score: count of untolerated PreferNoSchedule taints, normalised by
  DefaultNormalizeScore(100, reverse): all 100 when every count is 0, else
  ``100 - 100 * count // max``. NodeAffinity: sum of matching preferred weights, normalised
  ``100 * score // max``; PreScore skips pods without preferred terms.
- InterPodAffinity score (scoring.go): for each existing pod matching a preferred term, the
  term's weight (negative for anti-affinity) goes to every node sharing the existing pod's
  topology value; normalised ``int(100 * (s - min) / (max - min))`` over the feasible
  nodes; skipped when no term matched anything.
- PodTopologySpread scoring is skipped for pods with only DoNotSchedule constraints, and
  for pods without constraints when no Service/ReplicaSet/StatefulSet selects them (the
  system default constraints then have an empty selector).
- ImageLocality (image_locality.go): sum over the pod's images present on the node of
  ``int(size * nodes_with_image / all_nodes)``, clamped to [23 MiB, 1000 MiB * containers],
  then ``100 * (sum - 23 MiB) // (1000 MiB * containers - 23 MiB)``.
- The unschedulable message is FitError.Error() (framework/types.go): ``0/N nodes are
  available: `` + the reasons counted per node, each rendered "<count> <reason>", sorted as
  strings, joined by ", " + "." then the PostFilter message, which for DefaultPreemption is
  ``preemption: `` + another FitError over the preemption statuses (nodes whose filter
  status was UnschedulableAndUnresolvable get "Preemption is not helpful for scheduling";
  nodes without lower-priority pods get "No preemption victims found for incoming pod").
  Upstream's default profile also runs DynamicResources, whose PostFilter comes first and
  says ``no new claims to deallocate`` for a pod without claims (joined with ", ").
- Ties go to the lowest node name (``--tie-break name``).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MIXED = str(EXAMPLES / "mixed-cluster.yaml")
WEB = str(EXAMPLES / "web-tier.yaml")
FULL = str(EXAMPLES / "full-cluster.yaml")
WALK = str(EXAMPLES / "scoring-walkthrough.yaml")
CUSTOM = EXAMPLES / "custom-plugin"

TAINT, NODE_AFF, FIT = "TaintToleration", "NodeAffinity", "NodeResourcesFit"
BALANCED, IMAGE, POD_AFF = "NodeResourcesBalancedAllocation", "ImageLocality", "InterPodAffinity"
UNRESOLVABLE, UNSCHEDULABLE = "UnschedulableAndUnresolvable", "Unschedulable"
CORDONED = ("NodeUnschedulable", UNRESOLVABLE, ["node(s) were unschedulable"])
GPU_TAINT = (TAINT, UNRESOLVABLE, ["node(s) had untolerated taint {dedicated: gpu}"])


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


@functools.lru_cache(maxsize=None)
def _simulate(*argv: str) -> dict[str, Any]:
    """``kubesched simulate ARGV --tie-break name -o json --explain``, parsed (cached:
    callers must not modify it)."""
    rc, out, err = _cli("simulate", *argv, "--tie-break", "name", "-o", "json", "--explain")
    assert (rc, err) == (0, "")
    return json.loads(out)  # type: ignore[no-any-return]


def _pods(path: str) -> dict[str, dict[str, Any]]:
    return {f"{p['namespace']}/{p['name']}": p for p in _simulate("-f", path)["pods"]}


def _outcomes(path: str) -> dict[str, tuple[str, str | None, str | None]]:
    return {k: (p["status"], p["node"], p["message"]) for k, p in _pods(path).items()}


def _verdicts(attempt: dict[str, Any]) -> dict[str, Any]:
    return {n: v if v == "ok" else (v["plugin"], v["code"], v["reasons"]) for n, v in attempt["filter"].items()}


# -- mixed-cluster.yaml ----------------------------------------------------------------------
# Nodes (allocatable = capacity), and what runs on them at the start:
#   general-a1  zone-a  4 CPU 16Gi             shop/web-0      1 CPU  2Gi  (app=web)
#   general-a2  zone-a  4 CPU 16Gi             shop/cache-0    2 CPU  8Gi
#   general-b1  zone-b  8 CPU 32Gi             (has image registry.example/web:1.4, 300 MB)
#   general-b2  zone-b  8 CPU 32Gi  cordoned
#   gpu-a1      zone-a 16 CPU 64Gi 2 GPU, taint dedicated=gpu:NoSchedule
#                                              ml/train-small  4 CPU 16Gi 1 GPU
#   gpu-b1      zone-b 16 CPU 64Gi 2 GPU, same taint
# Queue order: production (10000) first: web-1, web-2; then the globalDefault "batch" (100)
# pods in creation order: train-medium, train-big, report. nightly-export stays gated.
#
# web-1 (1 CPU 2Gi; zone spread maxSkew 1 over app=web): b2 cordoned, gpu-* tainted; web
#   pods per zone a=1 (web-0), b=0, min 0: zone-a nodes give 1+1-0 = 2 > 1 -> a1, a2 fail
#   PodTopologySpread. Only general-b1 is feasible: it is chosen without scoring.
# web-2 (same, plus preferred anti-affinity 100 to app=web per hostname): zones a=1, b=1
#   (web-1), min 1: every zone gives 1+1-1 = 1, so a1, a2, b1 are feasible. Scores below.
# train-medium (8 CPU 32Gi 2 GPU from limits, nodeSelector accelerator=a100, tolerates
#   the taint): general-* lack the label (b2 fails NodeUnschedulable first); gpu-a1 has
#   1+2 = 3 GPUs > 2 -> Insufficient nvidia.com/gpu; only gpu-b1 fits -> gpu-b1.
# train-big (8 CPU 32Gi 4 GPU, tolerates the taint): see test_mixed_cluster_train_big_filter.
# report (500m 1Gi): b2 cordoned, gpu-* tainted; a1, a2, b1 scored below -> general-b1.
TRAIN_BIG_MESSAGE = (
    # reasons per node: b2 "node(s) were unschedulable"; a1, a2, b1 cpu + memory + gpu;
    # gpu-a1, gpu-b1 gpu only -> 1, 3, 3, 5; sorted as strings:
    "0/6 nodes are available: 1 node(s) were unschedulable, 3 Insufficient cpu, "
    "3 Insufficient memory, 5 Insufficient nvidia.com/gpu. "
    # every status is UnschedulableAndUnresolvable (4 GPUs > any node's allocatable)
    "no new claims to deallocate, preemption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling.")


def test_mixed_cluster_outcomes() -> None:
    assert _outcomes(MIXED) == {
        "shop/web-1": ("Scheduled", "general-b1", None),
        "shop/web-2": ("Scheduled", "general-a2", None),
        "ml/train-medium": ("Scheduled", "gpu-b1", None),
        "ml/train-big": ("Unschedulable", None, TRAIN_BIG_MESSAGE),
        "batch/report": ("Scheduled", "general-b1", None),
        # upstream SchedulingGates PreEnqueue: "waiting for scheduling gates: %v" of the names
        "batch/nightly-export": ("Gated", None, "waiting for scheduling gates: [example.com/wait-for-quota]"),
    }
    assert _simulate("-f", MIXED)["summary"] == {
        "scheduled": 4, "unschedulable": 1, "gated": 1, "preempted": 0, "error": 0, "ignored": 0}


def test_mixed_cluster_web_1_only_one_feasible_node() -> None:
    (att,) = _pods(MIXED)["shop/web-1"]["attempts"]
    spread = ("PodTopologySpread", UNSCHEDULABLE, ["node(s) didn't match pod topology spread constraints"])
    assert _verdicts(att) == {"general-a1": spread, "general-a2": spread, "general-b1": "ok",
                              "general-b2": CORDONED, "gpu-a1": GPU_TAINT, "gpu-b1": GPU_TAINT}
    assert att["chosen"] == "general-b1"


def test_mixed_cluster_web_2_scores() -> None:
    # After adding web-2 (1 CPU, 2Gi):
    #   a1: cpu 2000/4000, mem 4/16Gi   a2: cpu 3000/4000, mem 10/16Gi   b1: cpu 2000/8000, mem 4/32Gi
    # Fit:      a1 (50 + 75) // 2 = 62;  a2 (25 + 600//16=37) // 2 = 31;  b1 (75 + 2800//32=87) // 2 = 81
    # Balanced: a1 |0.5-0.25|/2 = .125 -> 87;  a2 |0.75-0.625|/2 = .0625 -> 93;  b1 |0.25-0.125|/2 -> 93
    # Taint: no PreferNoSchedule taints -> 100 each, x3 = 300. NodeAffinity, spread: skipped.
    # InterPodAffinity: app=web pods web-0 (a1) and web-1 (b1) give hostname a1 -100, b1 -100,
    #   a2 0; normalised over min -100..max 0: a1 0, a2 100, b1 0; x2.
    # Image: web:1.4 only on b1: int(300e6 * 1/6) ~ 5e7; 100 * (5e7 - 24117248) // 1024458752 = 2.
    (att,) = _pods(MIXED)["shop/web-2"]["attempts"]
    assert att["scores"] == {
        "general-a1": {TAINT: 300, FIT: 62, POD_AFF: 0, BALANCED: 87, IMAGE: 0},
        "general-a2": {TAINT: 300, FIT: 31, POD_AFF: 200, BALANCED: 93, IMAGE: 0},
        "general-b1": {TAINT: 300, FIT: 81, POD_AFF: 0, BALANCED: 93, IMAGE: 2},
    }
    assert att["totals"] == {"general-a1": 449, "general-a2": 624, "general-b1": 476}
    assert att["chosen"] == "general-a2"


def test_mixed_cluster_train_big_filter() -> None:
    # train-big: 8 CPU, 32Gi, 4 GPU.
    #   a1: cpu 1+8 = 9 > 4, mem 2+32 = 34 > 16, gpu 4 > 0   a2: 2+8 > 4, 8+32 > 16, 4 > 0
    #   b1 (web-1 there): 1+8 = 9 > 8, 2+32 = 34 > 32, 4 > 0   b2: cordoned
    #   gpu-a1: cpu 12 <= 16, mem 48 <= 64, gpu 1+4 > 2       gpu-b1 (train-medium): 16 <= 16, 64 <= 64, 2+4 > 2
    # 4 GPUs exceed every node's allocatable GPUs, so every Fit status is unresolvable.
    three = (FIT, UNRESOLVABLE, ["Insufficient cpu", "Insufficient memory", "Insufficient nvidia.com/gpu"])
    gpu = (FIT, UNRESOLVABLE, ["Insufficient nvidia.com/gpu"])
    attempts = _pods(MIXED)["ml/train-big"]["attempts"]
    assert attempts
    for att in attempts:
        assert _verdicts(att) == {"general-a1": three, "general-a2": three, "general-b1": three,
                                  "general-b2": CORDONED, "gpu-a1": gpu, "gpu-b1": gpu}
        assert att["message"] == TRAIN_BIG_MESSAGE
        assert att["nominatedNode"] is None and att["victims"] == []


def test_mixed_cluster_report_scores() -> None:
    # report (500m, 1Gi) after web-2 on a2, web-1 on b1:
    #   a1: cpu 1500/4000, mem 3/16   a2: cpu 3500/4000, mem 11/16   b1: cpu 1500/8000, mem 3/32
    # Fit:      a1 (2500*100//4000=62 + 1300//16=81) // 2 = 71; a2 (12 + 500//16=31) // 2 = 21;
    #           b1 (6500*100//8000=81 + 2900//32=90) // 2 = 85
    # Balanced: a1 |.375-.1875|/2 = .09375 -> 90; a2 |.875-.6875|/2 -> 90; b1 |.1875-.09375|/2 -> 95
    # InterPodAffinity: report matches no term of web-2 (the only pod with affinity): skipped.
    # Image: registry.example/report:1 is on no node -> 0.
    (att,) = _pods(MIXED)["batch/report"]["attempts"]
    assert att["scores"] == {
        "general-a1": {TAINT: 300, FIT: 71, BALANCED: 90, IMAGE: 0},
        "general-a2": {TAINT: 300, FIT: 21, BALANCED: 90, IMAGE: 0},
        "general-b1": {TAINT: 300, FIT: 85, BALANCED: 95, IMAGE: 0},
    }
    assert att["totals"] == {"general-a1": 461, "general-a2": 411, "general-b1": 480}
    assert att["chosen"] == "general-b1"


# -- web-tier.yaml ---------------------------------------------------------------------------
# Six 4 CPU / 16Gi nodes: web-node-0, -3 in zone-a; -1, -4 in zone-b; -2, -5 in zone-c.
# web/db-0 (2 CPU, 8Gi) runs on web-node-0. Every pod has priority 0.
# frontend-N (500m, 1Gi): zone spread maxSkew 1 (DoNotSchedule) and required anti-affinity
# per hostname over app=frontend. Their scores: spread scoring skipped (no soft
# constraint); InterPodAffinity skipped (no preferred terms anywhere); image on no node.
#   web-node-0:  cpu 2500/4000 mem 9/16: Fit (1500*100//4000=37 + 700//16=43)//2 = 40,
#                Balanced |.625-.5625|/2 = .03125 -> 96; total 300+40+96 = 436
#   empty node:  cpu 500/4000 mem 1/16:  Fit (87 + 93)//2 = 90, Balanced |.125-.0625|/2 -> 96;
#                total 486
# so an empty feasible node always beats web-node-0, ties going to the lowest name:
#   frontend-0: all feasible -> web-node-1
#   frontend-1: zones a0 b1 c0: zone-b nodes give 2 > 1 (spread); feasible 0, 2, 3, 5 -> web-node-2
#   frontend-2: a0 b1 c1: zones b, c fail spread; feasible 0, 3 -> web-node-3
#   frontend-3: a1 b1 c1 (min 1): spread passes everywhere; 1, 2, 3 fail anti-affinity;
#               feasible 0, 4, 5 -> web-node-4
#   frontend-4: a1 b2 c1: zone b fails spread (2+1-1 = 2); 2, 3 anti-affinity; feasible 0, 5
#               -> web-node-5
#   frontend-5: a1 b2 c2: zones b, c fail spread; 3 anti-affinity; only web-node-0
#   frontend-6: a2 b2 c2 (min 2): spread passes, every node has a frontend: 6 anti-affinity
#               failures (Unschedulable); preemption: no pod has a priority below 0.
FRONTEND_6_MESSAGE = ("0/6 nodes are available: 6 node(s) didn't match pod anti-affinity rules. "
                      "no new claims to deallocate, preemption: 0/6 nodes are available: 6 No preemption victims found for incoming pod.")


def test_web_tier_outcomes() -> None:
    assert _outcomes(WEB) == {
        "web/frontend-0": ("Scheduled", "web-node-1", None),
        "web/frontend-1": ("Scheduled", "web-node-2", None),
        "web/frontend-2": ("Scheduled", "web-node-3", None),
        "web/frontend-3": ("Scheduled", "web-node-4", None),
        "web/frontend-4": ("Scheduled", "web-node-5", None),
        "web/frontend-5": ("Scheduled", "web-node-0", None),
        "web/frontend-6": ("Unschedulable", None, FRONTEND_6_MESSAGE),
        "web/api-0": ("Scheduled", "web-node-3", None),
        "web/api-1": ("Scheduled", "web-node-3", None),
    }


def test_web_tier_frontend_0_tie_goes_to_lowest_name() -> None:
    (att,) = _pods(WEB)["web/frontend-0"]["attempts"]
    empty = {TAINT: 300, FIT: 90, BALANCED: 96, IMAGE: 0}
    assert att["scores"] == {"web-node-0": {TAINT: 300, FIT: 40, BALANCED: 96, IMAGE: 0},
                             **{f"web-node-{i}": empty for i in range(1, 6)}}
    assert att["best"] == [f"web-node-{i}" for i in range(1, 6)]
    assert att["chosen"] == "web-node-1"


def test_web_tier_frontend_6_filter() -> None:
    anti = (POD_AFF, UNSCHEDULABLE, ["node(s) didn't match pod anti-affinity rules"])
    for att in _pods(WEB)["web/frontend-6"]["attempts"]:
        assert _verdicts(att) == {f"web-node-{i}": anti for i in range(6)}
        assert att["message"] == FRONTEND_6_MESSAGE


def test_web_tier_api_scores() -> None:
    # api-N (1 CPU, 2Gi) prefer (weight 80) the zone of app=db: db-0 is in zone-a, so zone-a
    # nodes (0 and 3) get 80, the others 0; normalised 100 / 0, x2 = 200 / 0.
    # api-0, after every frontend is placed (0: db + frontend-5 = 2.5 CPU 9Gi; others 500m 1Gi):
    #   node-0: cpu 3500/4000 mem 11/16: Fit (12 + 31)//2 = 21, Balanced |.875-.6875|/2 -> 90
    #   others: cpu 1500/4000 mem 3/16:  Fit (62 + 81)//2 = 71, Balanced |.375-.1875|/2 -> 90
    #   -> node-3: 300+71+90+200 = 661 beats node-0's 611 and the 461 of zones b, c.
    # api-1: node-3 now also has api-0 (1.5 CPU, 3Gi in all):
    #   node-3: cpu 2500/4000 mem 5/16: Fit (37 + 1100//16=68)//2 = 52, Balanced |.625-.3125|/2 -> 84
    #   -> node-3: 300+52+84+200 = 636 still beats node-0's 611.
    pods = _pods(WEB)
    (a0,) = pods["web/api-0"]["attempts"]
    (a1,) = pods["web/api-1"]["attempts"]
    zone_a0 = {TAINT: 300, FIT: 21, POD_AFF: 200, BALANCED: 90, IMAGE: 0}
    other = {TAINT: 300, FIT: 71, POD_AFF: 0, BALANCED: 90, IMAGE: 0}
    assert a0["scores"] == {"web-node-0": zone_a0, "web-node-3": {**other, POD_AFF: 200},
                            **{f"web-node-{i}": other for i in (1, 2, 4, 5)}}
    assert a0["totals"] == {"web-node-0": 611, "web-node-3": 661,
                            **{f"web-node-{i}": 461 for i in (1, 2, 4, 5)}}
    assert a1["scores"]["web-node-3"] == {TAINT: 300, FIT: 52, POD_AFF: 200, BALANCED: 84, IMAGE: 0}
    assert a1["totals"]["web-node-3"] == 636 and a1["totals"]["web-node-0"] == 611
    assert a1["chosen"] == "web-node-3"


# -- full-cluster.yaml -----------------------------------------------------------------------
# Three 4 CPU / 8Gi nodes, each full: two jobs/batch-N (2 CPU, 3Gi, priority 10, app=batch)
# per node, started 01-01 .. 01-06 (batch-0, -1 on full-0; -2, -3 on full-1; -4, -5 on
# full-2). PDB minAvailable 3 over app=batch: 6 healthy -> 3 disruptions allowed.
# urgent (1000; 3 CPU, 4Gi): every node 4+3 > 4 CPU and 6+4 > 8Gi (both resolvable).
#   Preemption: on each node both batch pods must go (one back: 2+3 > 4); 2 victims, no PDB
#   violation (3 allowed). pickOneNodeForPreemption: PDB violations 0 = 0 = 0, highest
#   victim priority 10 everywhere, sum of priorities equal, 2 victims everywhere; then the
#   latest earliest start time among victims: full-0 01-01, full-1 01-03, full-2 01-05
#   -> full-2. The next attempt finds full-2 empty (the only feasible node) -> full-2.
# late-low (10; 2 CPU, 1Gi): full-0, full-1 4+2 > 4; full-2 (urgent) 3+2 > 4: 3 Insufficient
#   cpu (memory fits everywhere). No pod has a priority below 10: no victims anywhere.
LATE_LOW_MESSAGE = ("0/3 nodes are available: 3 Insufficient cpu. "
                    "no new claims to deallocate, preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.")


def test_full_cluster_preemption() -> None:
    assert _outcomes(FULL) == {
        "jobs/batch-4": ("Preempted", "full-2", None),
        "jobs/batch-5": ("Preempted", "full-2", None),
        "jobs/urgent": ("Scheduled", "full-2", None),
        "jobs/late-low": ("Unschedulable", None, LATE_LOW_MESSAGE),
    }
    pods = _pods(FULL)
    assert pods["jobs/urgent"]["preempted"] == ["jobs/batch-4", "jobs/batch-5"]
    assert pods["jobs/batch-4"]["preemptedBy"] == pods["jobs/batch-5"]["preemptedBy"] == "jobs/urgent"
    first, *rest = pods["jobs/urgent"]["attempts"]
    both = (FIT, UNSCHEDULABLE, ["Insufficient cpu", "Insufficient memory"])
    assert _verdicts(first) == {"full-0": both, "full-1": both, "full-2": both}
    # PostFilter succeeded, so the message carries no preemption part.
    assert first["message"] == "0/3 nodes are available: 3 Insufficient cpu, 3 Insufficient memory."
    assert (first["nominatedNode"], sorted(first["victims"])) == ("full-2", ["jobs/batch-4", "jobs/batch-5"])
    assert rest[-1]["result"] == "Scheduled" and rest[-1]["chosen"] == "full-2"
    assert _simulate("-f", FULL)["summary"] == {
        "scheduled": 1, "unschedulable": 1, "gated": 0, "preempted": 2, "error": 0, "ignored": 0}


# -- scoring-walkthrough.yaml (made for hand computation) -------------------------------------
# Three 4 CPU / 8Gi nodes: ssd-noisy (disktype=ssd, PreferNoSchedule taint), ssd-quiet
# (disktype=ssd), hdd (disktype=hdd; runs mem-hog 100m, 4Gi).
# first (1 CPU, 2Gi; prefers disktype=ssd with weight 50):
#   Taint: counts noisy 1, quiet 0, hdd 0 -> reverse-normalised 0, 100, 100; x3
#   NodeAffinity: 50, 50, 0 -> 100, 100, 0; x2
#   Fit: ssd-*: (3000*100//4000=75 + 600//8=75)//2 = 75; hdd cpu 1100/4000, mem 6/8: (72 + 25)//2 = 48
#   Balanced: ssd-*: .25 vs .25 -> 100; hdd |.275-.75|/2 = .2375 -> 76
#   -> noisy 0+200+75+100 = 375, quiet 675, hdd 300+0+48+76 = 424: ssd-quiet.
# second (2 CPU, 512Mi; no affinity: NodeAffinity skipped):
#   noisy: cpu 2000/4000 mem .5/8:  Fit (50 + 750//8=93)//2 = 71, Balanced |.5-.0625|/2 -> 78
#   quiet: cpu 3000/4000 mem 2.5/8: Fit (25 + 550//8=68)//2 = 46, Balanced |.75-.3125|/2 -> 78
#   hdd:   cpu 2100/4000 mem 4.5/8: Fit (1900*100//4000=47 + 350//8=43)//2 = 45,
#          Balanced |.525-.5625|/2 = .01875 -> 98
#   -> noisy 0+71+78 = 149, quiet 300+46+78 = 424, hdd 300+45+98 = 443: hdd. Free space
#   alone (Fit) would pick ssd-quiet; balance decides.


def test_scoring_walkthrough() -> None:
    pods = _pods(WALK)
    (first,) = pods["default/first"]["attempts"]
    (second,) = pods["default/second"]["attempts"]
    assert first["scores"] == {
        "ssd-noisy": {TAINT: 0, NODE_AFF: 200, FIT: 75, BALANCED: 100, IMAGE: 0},
        "ssd-quiet": {TAINT: 300, NODE_AFF: 200, FIT: 75, BALANCED: 100, IMAGE: 0},
        "hdd": {TAINT: 300, NODE_AFF: 0, FIT: 48, BALANCED: 76, IMAGE: 0},
    }
    assert first["totals"] == {"ssd-noisy": 375, "ssd-quiet": 675, "hdd": 424}
    assert second["scores"] == {
        "ssd-noisy": {TAINT: 0, FIT: 71, BALANCED: 78, IMAGE: 0},
        "ssd-quiet": {TAINT: 300, FIT: 46, BALANCED: 78, IMAGE: 0},
        "hdd": {TAINT: 300, FIT: 45, BALANCED: 98, IMAGE: 0},
    }
    assert second["totals"] == {"ssd-noisy": 149, "ssd-quiet": 424, "hdd": 443}
    assert _outcomes(WALK) == {"default/first": ("Scheduled", "ssd-quiet", None),
                               "default/second": ("Scheduled", "hdd", None)}


# -- output formats ----------------------------------------------------------------------------
POD_KEYS = {"namespace", "name", "status", "node", "message"}
ATTEMPT_KEYS = {"filter", "scores", "totals", "chosen", "message", "nominatedNode", "victims", "result"}


def test_json_shape_without_and_with_explain() -> None:
    rc, out, err = _cli("simulate", "-f", MIXED, "--tie-break", "name", "-o", "json")
    assert (rc, err) == (0, "")
    plain = json.loads(out)
    assert set(plain) == {"pods", "summary", "kubernetesVersion", "version"}
    assert all(POD_KEYS <= set(p) and "attempts" not in p for p in plain["pods"])
    explained = _simulate("-f", MIXED)
    assert all(POD_KEYS | {"attempts"} <= set(p) for p in explained["pods"])
    assert all(ATTEMPT_KEYS <= set(a) for p in explained["pods"] for a in p["attempts"])
    # --explain adds the attempts and changes nothing else
    assert [{k: v for k, v in p.items() if k != "attempts"} for p in explained["pods"]] == plain["pods"]
    assert explained["summary"] == plain["summary"]


def test_yaml_output_is_the_json_document() -> None:
    rc, out, err = _cli("simulate", "-f", FULL, "--tie-break", "name", "-o", "yaml")
    assert (rc, err) == (0, "")
    rc, js, _ = _cli("simulate", "-f", FULL, "--tie-break", "name", "-o", "json")
    assert rc == 0
    assert yaml.safe_load(out) == json.loads(js)


def test_table_output_lists_pods_and_why_pending(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    rc, out, err = _cli("simulate", "-f", MIXED, "--tie-break", "name")
    assert (rc, err) == (0, "")
    flat = " ".join(out.split())
    assert re.search(r"shop/web-2 .*10000 .*Scheduled .*general-a2", out)
    assert re.search(r"ml/train-big .*100 .*Unschedulable", out)
    assert f"ml/train-big: {TRAIN_BIG_MESSAGE}" in flat


def test_explain_prints_the_filter_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")  # rich wraps at the terminal width; keep rows whole
    rc, out, err = _cli("explain", "-f", MIXED, "ml/train-big", "--tie-break", "name")
    assert (rc, err) == (0, "")
    unresolvable = r"\(UnschedulableAndUnresolvable\)"
    rows = {
        "general-a1": rf"NodeResourcesFit {unresolvable}\W+Insufficient cpu; Insufficient memory; "
                      r"Insufficient nvidia\.com/gpu",
        "general-b2": rf"NodeUnschedulable {unresolvable}\W+node\(s\) were unschedulable",
        "gpu-a1": rf"NodeResourcesFit {unresolvable}\W+Insufficient nvidia\.com/gpu",
    }
    for node, verdict in rows.items():
        assert re.search(rf"\b{re.escape(node)}\W+{verdict}", out), (node, out)
    assert "ml/train-big priority 100: Unschedulable" in out
    assert TRAIN_BIG_MESSAGE in " ".join(out.split())


def test_explain_prints_the_score_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    rc, out, err = _cli("explain", "-f", MIXED, "shop/web-2", "--tie-break", "name")
    assert (rc, err) == (0, "")
    assert re.search(r"general-a1\s.*\bok\b", out)
    # the chosen node is starred, with its total (hand-computed in test_mixed_cluster_web_2_scores)
    assert re.search(r"general-a2 \*.*\b624\b", out)
    assert re.search(r"general-b1\s.*\b476\b", out)


# -- examples/custom-plugin ----------------------------------------------------------------------
# Two empty nodes: ondemand-1 (8 CPU, 16Gi) and spot-1 (4 CPU, 8Gi, capacity-type spot);
# batch-1, batch-2 request 1 CPU, 2Gi each. Taint 300 everywhere, images on no node.
#   batch-1: ondemand-1 Fit (7000*100//8000=87 + 14*100//16=87)//2 = 87, Balanced .125 vs .125 -> 100: 487
#            spot-1     Fit (75 + 75)//2 = 75, Balanced .25 vs .25 -> 100: 475
#   batch-2 (default profile, batch-1 on ondemand-1): ondemand-1 Fit (75 + 75)//2 = 75 -> 475,
#            spot-1 475: a tie, ondemand-1 by name.
#   With PreferSpot (weight 1): spot-1 gets +100: batch-1 575 > 487; batch-2 (batch-1 on
#            spot-1: Fit (50 + 50)//2 = 50) 300+50+100+100 = 550 > 487.
CLUSTER = str(CUSTOM / "cluster.yaml")
CONFIG = str(CUSTOM / "scheduler-config.yaml")


def test_custom_plugin_changes_the_placement(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _outcomes(CLUSTER) == {"default/batch-1": ("Scheduled", "ondemand-1", None),
                                  "default/batch-2": ("Scheduled", "ondemand-1", None)}
    monkeypatch.syspath_prepend(str(CUSTOM))
    monkeypatch.delitem(sys.modules, "prefer_spot", raising=False)
    rc, out, err = _cli("simulate", "-f", CLUSTER, "--config", CONFIG, "--tie-break", "name",
                        "-o", "json", "--explain")
    assert (rc, err) == (0, "")
    pods = {p["name"]: p for p in json.loads(out)["pods"]}
    assert {n: (p["status"], p["node"]) for n, p in pods.items()} == {
        "batch-1": ("Scheduled", "spot-1"), "batch-2": ("Scheduled", "spot-1")}
    (b1,) = pods["batch-1"]["attempts"]
    assert b1["scores"] == {
        "ondemand-1": {TAINT: 300, FIT: 87, BALANCED: 100, IMAGE: 0, "PreferSpot": 0},
        "spot-1": {TAINT: 300, FIT: 75, BALANCED: 100, IMAGE: 0, "PreferSpot": 100},
    }
    (b2,) = pods["batch-2"]["attempts"]
    assert b2["totals"] == {"ondemand-1": 487, "spot-1": 550}


def test_custom_plugin_args_are_validated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(CUSTOM))
    monkeypatch.delitem(sys.modules, "prefer_spot", raising=False)
    bad = tmp_path / "sched.yaml"
    bad.write_text(Path(CONFIG).read_text().replace("value: spot", "valeu: spot"))
    rc, out, err = _cli("simulate", "-f", CLUSTER, "--config", str(bad))
    assert rc == 2
    assert err == f'kubesched: error: {bad}:18: profiles[0].pluginConfig[0].args.valeu: unknown field "valeu"\n'


def test_custom_plugin_readme_command() -> None:
    """The command examples/custom-plugin/README.md documents, as a user runs it."""
    exe = Path(sys.executable).parent / "kubesched"
    if not exe.exists():  # pragma: no cover
        pytest.skip("the kubesched entry point is not installed next to this Python")
    env = {**os.environ, "PYTHONPATH": "examples/custom-plugin"}
    proc = subprocess.run([str(exe), "simulate", "-f", "examples/custom-plugin/cluster.yaml",
                           "--config", "examples/custom-plugin/scheduler-config.yaml", "--tie-break", "name",
                           "-o", "json"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert [(p["name"], p["node"]) for p in json.loads(proc.stdout)["pods"]] == [
        ("batch-1", "spot-1"), ("batch-2", "spot-1")]
