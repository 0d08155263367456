"""``kubesched capacity drain``: which nodes can be drained, their pods rescheduled elsewhere.

Greedy over candidate nodes, each answer verified by the real scheduler, each accepted
drain kept for the next candidate (so the answer is a set of nodes that can all go):

- **candidates**: the nodes named by ``--nodes``, in that order; otherwise every node,
  least utilised first — utilisation being the larger of the requested cpu and memory
  fractions of its allocatable, counting the pods that would move — then fewer such
  pods, then name (the order cluster-autoscaler's scale-down considers nodes in);
- **pods that move**: the node's bound pods except DaemonSet pods and mirror (static)
  pods, which stay with their node as ``kubectl drain --ignore-daemonsets`` leaves them;
- **PDBs**: the node's pods are evicted together, as a drain that does not wait for
  replacements to become ready. For each PodDisruptionBudget, the pods it covers on the
  node must not exceed its ``disruptionsAllowed`` — ``status.disruptionsAllowed`` when
  the manifest gives it, otherwise computed as the disruption controller does
  (:func:`kubesched.plugins.preemption.pdb.disruptions_allowed`) from the bound pods at
  that point (replacements of earlier drains count as healthy again). A node over a
  budget is blocked, naming the PDB;
- **verification**: the node is cordoned, its pods become pending again, the whole
  cluster goes through the scheduler; the node can be drained when every moved pod is
  scheduled on another node and no pod was preempted to make room. The pods then stay
  where the run put them and the node is left out for the next candidates.

Pending pods of the manifest are left out: the question is about the running pods.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.decode import Manifest
from kubesched.api.errors import KubeschedError
from kubesched.api.objects import Node, Pod
from kubesched.plugins.preemption.pdb import disruptions_allowed, pdb_pods
from kubesched.sim.capacity.common import RunOptions, bound_pods, evicted, live_pods, node_requests, simulate

Progress = Callable[[int, int], None]  # (candidates done, total)
MIRROR = "kubernetes.io/config.mirror"


@dataclass
class DrainVerdict:
    node: str
    drainable: bool
    pods: list[str] = field(default_factory=list)  # the pods that move
    moves: dict[str, str] = field(default_factory=dict)  # pod -> new node (drainable)
    blocked_by: list[str] = field(default_factory=list)  # why not: PDB budgets
    unschedulable: dict[str, str] = field(default_factory=dict)  # pod -> scheduler message
    preempted: list[str] = field(default_factory=list)  # pods the moves would preempt
    staying: list[str] = field(default_factory=list)  # DaemonSet / mirror pods left in place

    def reason(self) -> str:
        if self.drainable:
            return f"{len(self.moves)} pod(s) rescheduled" if self.moves else "no pods to move"
        if self.blocked_by:
            return "; ".join(self.blocked_by)
        parts = [f"{p}: {m}" for p, m in self.unschedulable.items()]
        if self.preempted:
            parts.append(f"would preempt {', '.join(self.preempted)}")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "drainable": self.drainable, "pods": self.pods, "moves": self.moves,
                "blockedBy": self.blocked_by, "unschedulable": self.unschedulable,
                "preempted": self.preempted, "staying": self.staying, "reason": self.reason()}


@dataclass
class DrainResult:
    verdicts: list[DrainVerdict] = field(default_factory=list)

    @property
    def drainable(self) -> list[str]:
        return [v.node for v in self.verdicts if v.drainable]

    def to_json(self) -> dict[str, Any]:
        return {"drainable": self.drainable, "nodes": [v.to_json() for v in self.verdicts]}


def stays(pod: Pod) -> bool:
    """A pod a drain leaves on its node: a DaemonSet's or a mirror pod."""
    return pod.owner_kind == "DaemonSet" or MIRROR in pod.annotations


def candidate_order(nodes: Sequence[Node], pods: Sequence[Pod]) -> list[str]:
    """Every node, least utilised first (see the module docstring)."""
    moving = [p for p in pods if not stays(p)]
    req = node_requests(moving, nodes)
    count = {n.name: 0 for n in nodes}
    for p in moving:
        if p.node_name in count:
            count[p.node_name] += 1

    def util(n: Node) -> float:
        fr = [req[n.name].get(r, 0) / n.allocatable[r] for r in ("cpu", "memory") if n.allocatable.get(r)]
        return max(fr, default=0.0)

    return [n.name for n in sorted(nodes, key=lambda n: (util(n), count[n.name], n.name))]


def _pdb_blocks(manifest: Manifest, running: Sequence[Pod], moving: Sequence[Pod]) -> list[str]:
    out = []
    for pdb in manifest.pdbs:
        covered = pdb_pods(pdb, moving)
        if not covered:
            continue
        allowed = disruptions_allowed(pdb, running)
        if len(covered) > allowed:
            out.append(f"PodDisruptionBudget {pdb.namespace}/{pdb.name} allows {allowed} disruption(s), "
                       f"the node has {len(covered)} of its pods")
    return out


def drain(manifest: Manifest, opts: RunOptions, nodes: Sequence[str] | None = None,
          progress: Progress | None = None) -> DrainResult:
    known = {n.name: n for n in manifest.nodes}
    for name in nodes or ():
        if name not in known:
            raise KubeschedError(f"--nodes: node {name!r} not found in the manifests")
    running = [p for p in live_pods(manifest) if p.node_name]
    order = list(nodes) if nodes else candidate_order(manifest.nodes, running)
    result = DrainResult()
    cluster = list(manifest.nodes)
    for i, name in enumerate(order):
        verdict = _try(manifest, opts, cluster, running, name)
        result.verdicts.append(verdict)
        if verdict.drainable:
            cluster = [n for n in cluster if n.name != name]
            running = verdict_state(verdict, running)
        if progress is not None:
            progress(i + 1, len(order))
    return result


def verdict_state(verdict: DrainVerdict, running: Sequence[Pod]) -> list[Pod]:
    """The bound pods after an accepted drain: the moved pods on their new nodes."""
    out = []
    for p in running:
        new = verdict.moves.get(p.key)
        if new is not None:
            raw = {**p.raw, "spec": {**p.raw.get("spec", {}), "nodeName": new}}
            p = dataclasses.replace(p, raw=raw, node_name=new)
        out.append(p)
    return out


def _try(manifest: Manifest, opts: RunOptions, cluster: list[Node], running: list[Pod],
         name: str) -> DrainVerdict:
    here = [p for p in running if p.node_name == name]
    moving = [p for p in here if not stays(p)]
    verdict = DrainVerdict(name, False, pods=[p.key for p in moving],
                           staying=[p.key for p in here if stays(p)])
    verdict.blocked_by = _pdb_blocks(manifest, running, moving)
    if verdict.blocked_by:
        return verdict
    if not moving:
        verdict.drainable = True
        return verdict
    cordoned = [_cordon(n) if n.name == name else n for n in cluster]
    moved = {p.uid for p in moving}
    pods = [evicted(p) if p.uid in moved else p for p in running]
    sim = simulate(dataclasses.replace(manifest, nodes=cordoned, pods=pods), opts)
    for p in moving:
        o = sim.outcomes[p.uid]
        if o.status == "Scheduled" and o.node and o.node != name:
            verdict.moves[p.key] = o.node
        else:
            verdict.unschedulable[p.key] = o.message or o.status
    verdict.preempted = sorted(o.pod.key for o in sim.outcomes.values() if o.status == "Preempted")
    still = {p.uid for p in bound_pods(sim)}
    verdict.preempted += sorted(p.key for p in running if p.uid not in moved and p.uid not in still
                                and p.key not in verdict.preempted)
    verdict.drainable = not verdict.unschedulable and not verdict.preempted
    return verdict


def _cordon(node: Node) -> Node:
    raw = {**node.raw, "spec": {**node.raw.get("spec", {}), "unschedulable": True}}
    return dataclasses.replace(node, raw=raw, unschedulable=True)
