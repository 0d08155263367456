"""``kubesched compare -f RECORDING``: the same recorded traffic replayed under several
configurations (:mod:`kubesched.sim.replay.recorded`), side by side, in the document shape
of :func:`kubesched.sim.compare.compare` (so the same table and HTML report show it).

Each configuration replays the whole recording on a fresh copy of its starting state; the
measures (nodes used, utilisation, fragmentation, spread) are of the cluster at the end of
the recording, and a pod's place is where the replay bound it (``Unschedulable`` if it never
was, ``Deleted`` if the recording deleted it while it was still pending).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesched.api.errors import KubeschedError
from kubesched.config import load_config
from kubesched.framework.errors import ProfileError
from kubesched.framework.features import Features
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.capacity.common import RunOptions
from kubesched.sim.compare import Candidate, measure
from kubesched.sim.recording.reader import read_recording
from kubesched.sim.replay.recorded import replay_recording


def compare_recording(path: str, configs: list[Candidate], *, seed: int = 0, tie_break: str = "random",
                      kubernetes_version: str | None = None, feature_gates: str | None = None,
                      on_progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """``on_progress(i, pods arrived)``: called as configuration ``i`` replays. Without
    ``kubernetes_version`` (and gates), each decides as the release the recording names."""
    rec = read_recording(path)
    features = (Features.for_version(kubernetes_version, feature_gates or None)
                if kubernetes_version or feature_gates else None)
    registry = in_tree_registry()
    runs: list[dict[str, Any]] = []
    places: list[dict[str, str]] = []
    order: list[str] = []
    for i, cand in enumerate(configs):
        opts = RunOptions(config=load_config(cand.config, registry), seed=seed, tie_break=tie_break,
                          config_file=cand.config, features=features)
        try:
            rr, result = replay_recording(rec, opts, progress=None if on_progress is None else (
                lambda done, total, t, i=i: on_progress(i, done)))
        except ProfileError as exc:
            raise KubeschedError(f"{cand.config}: {exc}") from exc
        pending = [p for p in rr.sim.cluster.pods.values()]
        s = result.summary()
        run = {"name": cand.name, "config": cand.config, **measure(rr.sim, pending)}
        run["summary"] = {"scheduled": s["scheduled"], "unschedulable": s["neverScheduled"] - s["deletedPending"],
                          "gated": 0, "preempted": s["preempted"], "deletedPending": s["deletedPending"]}
        runs.append(run)
        place = {}
        for p in result.pods:
            place[p.pod] = p.node if p.node else ("Deleted" if p.deleted is not None else "Unschedulable")
        places.append(place)
        if not order:
            order = [p.pod for p in result.pods]
    different = []
    for key in order:
        row = {c.name: pl.get(key, "Ignored") for c, pl in zip(configs, places)}
        if len(set(row.values())) > 1:
            different.append({"pod": key, "placements": row})
    return {"seed": seed, "tieBreak": tie_break, "cluster": [path], "pendingPods": len(order),
            "configurations": runs, "diff": {"same": len(order) - len(different), "different": different}}
