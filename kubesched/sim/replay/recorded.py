"""``kubesched replay --trace RECORDING``: a recording of a live cluster (``kubesched
record``) replayed on the virtual clock, through the real scheduler, with any configuration.

The cluster starts as recorded (the ``initial`` objects, loaded as ``simulate -f`` loads a
snapshot). Then, at their recorded times (virtual seconds since the recording started):

* a pod created **pending** for one of this configuration's profiles joins the queue and
  kubesched schedules it (its recorded binding is kept for the comparison only);
* a pod of another scheduler (a ``schedulerName`` no profile has) waits and is bound where
  the recording bound it, when it bound it; a pod created already bound (DaemonSet pods,
  static pods) arrives bound;
* a pod that finished or was deleted is deleted (pending or bound);
* nodes are added, changed (labels, taints, unschedulable, allocatable) and removed;
  PriorityClasses, PDBs, namespaces and the workload objects PodTopologySpread's default
  constraints read (Services, ReplicaSets, ...) are added, changed and removed.

Storage and DRA objects that appear or go (a new PVC, a claim made from a template, a new
ResourceSlice) are applied, and so are changes of the ones no binding writes
(:mod:`.recorded_objects`); updates of PVs, PVCs, VolumeAttachments and ResourceClaims (the
recorded scheduler's bindings and allocations) are counted in ``notReplayed`` and not
applied: the replay binds volumes and allocates devices after its own decisions.

The comparison (:func:`compare`): for each pod kubesched scheduled and the recording shows
bound by a scheduler, whether both chose the same node. Once one choice differs, the
replayed cluster is no longer the recorded one, and later choices are made on another
cluster; with ``follow`` (``--follow-recorded``) each pod is bound where the recording bound
it, kubesched's own choice is only compared, and every decision is made on the cluster as
recorded (the offline form of ``run --shadow``). An attempt with more than one best
node is a tie: with ``--tie-break random`` its outcome is a draw, so the agreement is also
reported over the pods without ties (with ``--tie-break name`` on both sides, as serve and
run allow, ties are broken alike: the lowest node name).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections import Counter
from collections.abc import Sequence
from typing import Any

from kubesched.api.decode import Manifest, load_manifests
from kubesched.api.defaults import default_manifest
from kubesched.api.errors import DecodeError
from kubesched.api.objects import Node, Pod
from kubesched.api.policy import Namespace, PodDisruptionBudget, PriorityClass
from kubesched.api.workloads import WORKLOAD_KINDS, Workload
from kubesched.cache import cache as cache_module
from kubesched.framework.status import Status
from kubesched.sim.capacity.common import RunOptions
from kubesched.sim.recording.reader import Event, Recording
from kubesched.sim.replay import recorded_objects
from kubesched.sim.replay.engine import Replay, ReplayResult

RECORDED = 2  # heap order of recorded events: after the engine's own at equal times; file order among them


def _initial_objects(rec: Recording) -> list[dict[str, Any]]:
    """The ``initial`` objects, plus any node a starting pod is bound to that was added while
    the kinds were being listed (nodes are listed before pods: its ``add`` came first)."""
    objs = list(rec.initial)
    nodes = {str(o["metadata"].get("name")) for o in objs if o.get("kind") == "Node"}
    wanted = {str((o.get("spec") or {}).get("nodeName")) for o in objs
              if o.get("kind") == "Pod" and (o.get("spec") or {}).get("nodeName")} - nodes
    for ev in rec.events:
        if wanted and ev.kind == "Node" and ev.op == "add" and ev.name in wanted and ev.object is not None:
            objs.append(ev.object)
            wanted.discard(ev.name)
    return objs


def starting_state(rec: Recording) -> Manifest:
    """The recording's ``initial`` objects, as ``simulate -f`` would load them from a snapshot."""
    with tempfile.TemporaryDirectory(prefix="kubesched-recording-") as tmp:
        path = os.path.join(tmp, "initial.json")
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"apiVersion": "v1", "kind": "List", "items": _initial_objects(rec)}, fh)
        try:
            manifest = load_manifests([path])
        except DecodeError as exc:
            raise DecodeError(exc.message, field=exc.field, obj=exc.obj,
                              file=f"{rec.path} (starting state)") from None
    version = rec.header.get("serverVersion")
    if isinstance(version, dict):  # the recorded cluster's release, as a snapshot's ServerVersion
        manifest.server_version, manifest.server_version_file = version, f"{rec.path}: serverVersion"
    return manifest


class RecordedReplay(Replay):
    def __init__(self, manifest: Manifest, rec: Recording, opts: RunOptions, *, follow: bool = False) -> None:
        """``follow``: bind each pod kubesched schedules where the recording bound it (its own
        choice is kept for the comparison), so every decision is made on the recorded cluster."""
        super().__init__(manifest, [], opts, explain=True)
        self.follow = follow
        self.decided: dict[str, str] = {}  # uid -> kubesched's choice (follow: not where it was bound)
        if follow:
            self._follow({ev.uid: ev.node for ev in rec.events if ev.op == "bind"})
        self.path = rec.path
        self.classes = {pc.name: pc for pc in manifest.priority_classes}
        self.recorded: dict[str, tuple[str, str]] = {}  # uid of a pod we schedule -> (node, scheduler)
        self.ties: set[str] = set()  # uids whose binding attempt had more than one best node
        self.not_replayed: Counter[str] = Counter()
        arrivals = 0
        for ev in rec.events:
            self._push(ev.t, RECORDED, ev)
            arrivals += ev.kind == "Pod" and ev.op == "add"
        self.total += arrivals

    def _follow(self, recorded: dict[str, str]) -> None:
        cluster = self.sim.cluster
        bind = cluster.bind

        def bind_as_recorded(pod: Pod, node_name: str) -> Status:
            target = recorded.get(pod.uid, "")
            return bind(pod, target if target in cluster.nodes else node_name)

        cluster.bind = bind_as_recorded  # type: ignore[method-assign]

    def run(self, progress: Any = None) -> ReplayResult:
        cache_log = logging.getLogger(cache_module.__name__)
        level = cache_log.level
        if self.follow:  # "assumed on A but assigned to B" is the point here, not a warning
            cache_log.setLevel(logging.ERROR)
        try:
            return super().run(progress)
        finally:
            cache_log.setLevel(level)

    # -- the engine's hooks ----------------------------------------------------------------
    def _after_attempt(self, pod: Pod, att: Any) -> None:
        if att.result == "Scheduled":
            self.decided[pod.uid] = att.chosen or ""
            if len(att.best) > 1:
                self.ties.add(pod.uid)

    def _dispatch(self, kind: int, payload: Any) -> None:
        if kind != RECORDED:
            super()._dispatch(kind, payload)
            return
        ev: Event = payload
        try:
            if ev.kind == "Pod":
                self._pod(ev)
            elif ev.kind == "Node":
                self._node(ev)
            elif recorded_objects.applies(ev):
                raw = default_manifest([ev.object], self.classes)[0] if ev.object is not None else {}
                recorded_objects.apply(self.sim, ev, raw)
                self.sim.generation += 1
            elif not self._object(ev):
                self.not_replayed[ev.kind] += 1
        except DecodeError as exc:
            raise exc.at(obj=f"line {ev.line}", file=self.path) from None

    # -- pods --------------------------------------------------------------------------------
    def _decode_pod(self, raw: dict[str, Any]) -> Pod:
        return Pod.from_dict(default_manifest([raw], self.classes)[0], require_limits=False)

    def _pod(self, ev: Event) -> None:
        sim = self.sim
        if ev.op == "add" and ev.object is not None:
            pod = self._decode_pod(ev.object)
            if pod.node_name:  # created bound: nobody's scheduling decision
                sim.cluster.load((), [pod])
                pod = sim.cluster.pods[pod.uid]
                sim.handlers.on_pod_add(pod)
                self.metrics.bound(pod)
                sim.generation += 1
            elif pod.scheduler_name in sim.sched.profiles:
                self._arrive(pod)
            else:
                sim.cluster.load((), [pod])  # another scheduler's: bound when the recording binds it
        elif ev.op == "bind":
            if ev.uid in self.records:  # ours (pending pods of the starting state arrived at 0)
                self.recorded[ev.uid] = (ev.node, ev.scheduler)
                return
            waiting = sim.cluster.pods.get(ev.uid)
            if waiting is not None and not waiting.node_name and ev.node in sim.cluster.nodes:
                sim.cluster.bind(waiting, ev.node)
        elif ev.op in ("finish", "delete"):
            if ev.uid in sim.cluster.pods:
                self._delete(ev.uid)
        else:
            self.not_replayed["Pod"] += 1  # a label or spec change of a pod

    # -- nodes and the other objects the scheduler reads -------------------------------------
    def _node(self, ev: Event) -> None:
        sim = self.sim
        nodes = sim.cluster.nodes
        sim.generation += 1
        if ev.op == "delete":
            old = nodes.pop(ev.name, None)
            if old is not None:
                sim.handlers.on_node_delete(old)
                self.metrics.remove_node(ev.name)
            return
        assert ev.object is not None
        new = Node.from_dict(default_manifest([ev.object])[0])
        old = nodes.get(new.name)
        nodes[new.name] = new
        self.metrics.add_node(new)
        if old is None:
            sim.handlers.on_node_add(new)
        else:
            sim.handlers.on_node_update(old, new)

    def _object(self, ev: Event) -> bool:
        """Apply a PriorityClass, PDB, Namespace or workload change; False for other kinds."""
        c = self.sim.cluster
        gone = ev.op == "delete"
        raw = default_manifest([ev.object], self.classes)[0] if ev.object is not None else {}
        if ev.kind == "PriorityClass":
            if gone:
                c.priority_classes.pop(ev.name, None)
            else:
                c.priority_classes[ev.name] = self.classes[ev.name] = PriorityClass.from_dict(raw)
        elif ev.kind == "PodDisruptionBudget":
            c.pdb_list[:] = [p for p in c.pdb_list if (p.namespace, p.name) != (ev.namespace, ev.name)]
            if not gone:
                c.pdb_list.append(PodDisruptionBudget.from_dict(raw))
        elif ev.kind == "Namespace":
            if gone:
                c.namespaces.pop(ev.name, None)
            else:
                c.namespaces[ev.name] = Namespace.from_dict(raw)
        elif ev.kind in WORKLOAD_KINDS:
            if gone:
                c.workload_index.remove(ev.kind, ev.namespace, ev.name)
            else:
                c.workload_index.put(Workload.from_dict(raw))
        else:
            return False
        self.sim.generation += 1
        return True


def compare(replay: RecordedReplay, result: ReplayResult) -> dict[str, Any]:
    """Per pod: the recorded node and this configuration's; the agreement rates."""
    pods = []
    counts: Counter[str] = Counter()
    by_uid = {uid: rec for uid, rec in replay.records.items()}
    for uid, rec in by_uid.items():
        recorded, scheduler = replay.recorded.get(uid, ("", ""))
        ours = replay.decided.get(uid, "") if rec.node else ""
        if recorded and ours:
            verdict = "agree" if recorded == ours else "disagree"
        elif recorded:
            verdict = "recorded-only"
        elif ours:
            verdict = "replay-only"
        else:
            verdict = "neither"
        tie = uid in replay.ties
        counts[verdict] += 1
        counts[f"{verdict}-tie"] += tie
        pods.append({"pod": rec.pod, "recorded": recorded or None, "recordedScheduler": scheduler or None,
                     "replay": ours or None, "result": verdict, "tie": tie})
    both = counts["agree"] + counts["disagree"]
    untied = both - counts["agree-tie"] - counts["disagree-tie"]
    return {
        "pods": sorted(pods, key=lambda p: str(p["pod"])),
        "compared": both, "agree": counts["agree"], "disagree": counts["disagree"],
        "recordedOnly": counts["recorded-only"], "replayOnly": counts["replay-only"], "neither": counts["neither"],
        "ties": counts["agree-tie"] + counts["disagree-tie"],
        "agreement": counts["agree"] / both if both else None,
        "agreementWithoutTies": (counts["agree"] - counts["agree-tie"]) / untied if untied else None,
    }


def replay_recording(rec: Recording, opts: RunOptions, progress: Any = None, *, follow: bool = False,
                     ) -> tuple[RecordedReplay, ReplayResult]:
    manifest = starting_state(rec)
    rr = RecordedReplay(manifest, rec, opts, follow=follow)
    result = rr.run(progress)
    result.extra["notReplayed"] = dict(rr.not_replayed)
    return rr, result


__all__: Sequence[str] = ("RecordedReplay", "compare", "replay_recording", "starting_state")
