"""``kubesched capacity plan``: the fewest (or cheapest) nodes to add so the pending pods schedule.

The method: a greedy search, every step of which is a full run of the real scheduler.

1. **Base run**: the manifest as it is. The pending pods it leaves pending are the ones
   to place.
2. **Probe**: one node of every shape is added and the pods left pending are tried on
   it (all at once, then one by one for those that found no feasible node): a pod that
   does not schedule even alone, with one node of each shape beside the cluster, can
   never be placed by adding nodes of this catalogue (too big for every shape, a
   selector or taint no shape satisfies, ...). It is reported with the scheduler's
   message and each shape's Filter verdict, and left out of the goal.
3. **Greedy**: while some placeable pod is pending, try adding one node of each shape
   (within its ``max``) and keep the one that schedules the most more pods — per unit of
   price with ``--objective price`` (ties: cheaper, then name). If that node placed g
   pods and r remain, about r / g nodes of the shape are needed: half of them are added
   at once (checked by a run: kept only if they place more), so a plan of n nodes takes
   about log(n) steps, not n.
4. **Prune**: try removing each added node (most expensive first, latest first); a node
   whose removal leaves every placeable pod scheduled is dropped. Nodes of one shape are
   alike, so once one of a shape is needed the others of that shape are not tried.
5. **Verify**: the answer is the final run — the cluster plus the added nodes through
   the real scheduler with every pending pod — and its placements are reported.

Limits: node shapes interact with the scheduler's scoring (which pod lands where), so the
exact optimum would need a search over all multisets of shapes, each verified by a run;
this is a greedy approximation (bin packing is NP-hard) that looks one node ahead. A pod
that needs two new nodes at once to schedule (for example required anti-affinity with a
pod that is itself pending) may stop the search; it is reported as not placed. The cost is
about (greedy steps) x (shapes + 1) + (shapes + nodes pruned) runs of the whole pending set.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.decode import Manifest
from kubesched.api.errors import DecodeError
from kubesched.api.objects import Node, Pod
from kubesched.sim.capacity.catalogue import Shape
from kubesched.sim.capacity.common import RunOptions, bound_pods, placements, simulate, unscheduled
from kubesched.sim.driver import Simulation

Progress = Callable[[str, int], None]  # (what the search is doing, runs so far)
OBJECTIVES = ("count", "price")


@dataclass
class Unplaceable:
    pod: str
    message: str
    shapes: dict[str, Any]  # shape name -> the probe node's Filter verdict

    def to_json(self) -> dict[str, Any]:
        return {"pod": self.pod, "message": self.message, "shapes": self.shapes}


@dataclass
class PlanResult:
    objective: str
    added: list[tuple[Shape, Node]] = field(default_factory=list)
    placements: dict[str, str] = field(default_factory=dict)  # pending pod -> node, final run
    pending: int = 0  # pending pods in the manifest
    scheduled_before: int = 0  # of those, scheduled without new nodes
    unplaceable: list[Unplaceable] = field(default_factory=list)  # no shape can ever fit them
    not_placed: list[tuple[str, str]] = field(default_factory=list)  # placeable, but the search stopped
    runs: int = 0

    @property
    def cost(self) -> float | None:
        prices = [s.price for s, _ in self.added]
        return None if any(p is None for p in prices) else float(sum(p or 0.0 for p in prices))

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s, _ in self.added:
            out[s.name] = out.get(s.name, 0) + 1
        return out

    def to_json(self) -> dict[str, Any]:
        new = {n.name for _, n in self.added}
        return {"objective": self.objective, "nodesAdded": len(self.added), "cost": self.cost,
                "shapes": self.counts(),
                "added": [{"node": n.name, "shape": s.name, "price": s.price} for s, n in self.added],
                "pending": self.pending, "scheduledWithoutNewNodes": self.scheduled_before,
                "placements": [{"pod": p, "node": n, "newNode": n in new} for p, n in self.placements.items()],
                "unplaceable": [u.to_json() for u in self.unplaceable],
                "notPlaced": [{"pod": p, "message": m} for p, m in self.not_placed],
                "verified": not self.not_placed, "runs": self.runs}


class _Search:
    def __init__(self, manifest: Manifest, shapes: Sequence[Shape], opts: RunOptions, objective: str,
                 progress: Progress | None) -> None:
        if objective not in OBJECTIVES:
            raise ValueError(objective)
        self.manifest, self.shapes, self.opts, self.objective = manifest, shapes, opts, objective
        self.progress = progress
        self.result = PlanResult(objective)
        self.taken = {n.name for n in manifest.nodes}

    def run(self, nodes: Sequence[Node], pods: Sequence[Pod] | None = None, explain: bool = False,
            single_pass: bool = False, what: str = "") -> Simulation:
        self.result.runs += 1
        if self.progress is not None:
            self.progress(what, self.result.runs)
        state = dataclasses.replace(self.manifest, nodes=[*self.manifest.nodes, *nodes],
                                    pods=list(self.manifest.pods if pods is None else pods))
        return simulate(state, self.opts, explain=explain, single_pass=single_pass)

    def new_node(self, shape: Shape, taken: set[str]) -> Node:
        k = 1
        while f"{shape.name}-new-{k}" in taken:
            k += 1
        taken.add(f"{shape.name}-new-{k}")
        return shape.node(f"{shape.name}-new-{k}")


def plan(manifest: Manifest, shapes: Sequence[Shape], opts: RunOptions, objective: str = "count",
         progress: Progress | None = None) -> PlanResult:
    if objective == "price":
        for s in shapes:
            if s.price is None:
                raise DecodeError("is required by --objective price", field="price", obj=f"shape {s.name}")
    search = _Search(manifest, shapes, opts, objective, progress)
    res = search.result
    base = search.run([], what="base run")
    res.pending = len(base.outcomes)
    res.scheduled_before = sum(1 for o in base.outcomes.values() if o.status == "Scheduled")
    left = unscheduled(base)
    if not left:
        res.placements = placements(base)
        return res
    res.unplaceable = _probe(search, base, [p for p, _ in left])
    never = {u.pod for u in res.unplaceable}
    goal = {p.uid for p, _ in left if p.key not in never}
    added, done = _greedy(search, goal, base)
    added = _prune(search, goal, added, done)
    final = search.run([n for _, n in added], what="verification") if added else base
    res.added = added
    res.placements = placements(final)
    res.not_placed = [(p.key, m) for p, m in unscheduled(final) if p.uid in goal]
    return res


def _done(sim: Simulation, goal: set[str]) -> int:
    return sum(1 for uid in goal if sim.outcomes[uid].status == "Scheduled")


def _probe(search: _Search, base: Simulation, left: list[Pod]) -> list[Unplaceable]:
    """The pods that do not schedule with one node of every shape added, even alone. Pods
    alike (namespace, labels and spec) are probed alone once: they fit the same nodes."""
    taken = set(search.taken)
    probes = {s.name: search.new_node(s, taken) for s in search.shapes}
    placed = bound_pods(base)
    together = search.run(list(probes.values()), [*placed, *left], explain=True, single_pass=True,
                          what="probe")
    out = []
    verdicts: dict[str, tuple[str, dict[str, Any]] | None] = {}  # pod likeness -> (message, per shape)
    for pod in left:
        o = together.outcomes[pod.uid]
        if o.status == "Scheduled" or any(a.filter.get(n.name) == "ok" for a in o.attempts for n in probes.values()):
            continue
        like = json.dumps([pod.namespace, pod.labels, pod.raw.get("spec")], sort_keys=True, default=str)
        if like not in verdicts:
            alone = search.run(list(probes.values()), [*placed, pod], explain=True, single_pass=True,
                               what="probe")
            a = alone.outcomes[pod.uid]
            att = a.attempts[-1] if a.attempts else None
            verdicts[like] = None if a.status == "Scheduled" or att is None else (
                att.message or a.status, {s: att.filter.get(n.name, "not evaluated") for s, n in probes.items()})
        verdict = verdicts[like]
        if verdict is not None:
            out.append(Unplaceable(pod.key, *verdict))
    return out


def _value(search: _Search, shape: Shape, gain: int) -> tuple[float, float, str]:
    """Sort key of a candidate step (smallest is best)."""
    price = shape.price or 0.0
    if search.objective == "price":
        per = float("inf") if price == 0 else gain / price
        return (-per, price, shape.name)
    return (-float(gain), price, shape.name)


def _greedy(search: _Search, goal: set[str], base: Simulation) -> tuple[list[tuple[Shape, Node]], int]:
    """Add the best node while that schedules more of ``goal`` (see the module docstring:
    one node of each shape tried, then a jump of several nodes of the best one); returns
    the nodes and how many of ``goal`` the last run scheduled."""
    added: list[tuple[Shape, Node]] = []
    done = _done(base, goal)
    taken = set(search.taken)
    while done < len(goal):
        best: tuple[tuple[float, float, str], Shape, Node, int] | None = None
        used = {s.name: 0 for s in search.shapes}
        for s, _ in added:
            used[s.name] += 1
        for shape in search.shapes:
            if shape.max is not None and used[shape.name] >= shape.max:
                continue
            node = search.new_node(shape, set(taken))
            sim = search.run([*(n for _, n in added), node], what=f"trying {shape.name}")
            now = _done(sim, goal)
            if now <= done:
                continue
            key = _value(search, shape, now - done)
            if best is None or key < best[0]:
                best = (key, shape, node, now)
        if best is None:
            break
        _, shape, node, now = best
        step = [(shape, node)]
        taken.add(node.name)
        # If one node placed g pods and r remain, about r / g such nodes are needed: add
        # half of that at once (never past the shape's max), verified by a run like any step.
        need = -(-(len(goal) - done) // (now - done))
        extra = min(need // 2 - 1, (shape.max - used[shape.name] - 1) if shape.max is not None else need)
        if extra > 0:
            more = [(shape, search.new_node(shape, taken)) for _ in range(extra)]
            sim = search.run([*(n for _, n in added), node, *(n for _, n in more)], what=f"adding {shape.name}")
            if _done(sim, goal) > now:
                step, now = step + more, _done(sim, goal)
        added.extend(step)
        done = now
    return added, done


def _prune(search: _Search, goal: set[str], added: list[tuple[Shape, Node]],
           target: int) -> list[tuple[Shape, Node]]:
    """Drop every added node without which ``target`` pods of ``goal`` still schedule,
    most expensive first. Nodes of one shape are alike: once one of a shape cannot go,
    no other of that shape is tried."""
    order = sorted(range(len(added)), key=lambda i: (-(added[i][0].price or 0.0), -i))
    keep = list(added)
    needed: set[str] = set()
    for i in order:
        shape = added[i][0]
        if shape.name in needed:
            continue
        trial = [a for a in keep if a is not added[i]]
        sim = search.run([n for _, n in trial], what="pruning")
        if _done(sim, goal) >= target:
            keep = trial
        else:
            needed.add(shape.name)
    return keep
