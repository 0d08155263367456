"""``kubesched capacity fit``: how many more copies of a pod template fit in a cluster.

The method is cluster-capacity's: copies of the template are created one at a time and
each goes through the real scheduler (queue, Filter, Score, bind) until the first copy
that does not schedule. On top of cluster-capacity's aggregated reasons, the refusal is
explained node by node and plugin by plugin (the attempt ``kubesched explain`` shows).

Choices, each what cluster-capacity does or the only honest reading of "more copies":

- the manifest's pending pods are scheduled first (they are owed room before any new
  copy), then the copies; the count is of copies only;
- copies never preempt (``preemptionPolicy: Never``): evicting running pods is not room;
- ``--max N`` stops after N copies fit (the answer is then "at least N").
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.decode import Manifest
from kubesched.api.objects import Pod
from kubesched.explanation.attempt import Attempt
from kubesched.sim.capacity.common import RunOptions, bound_pods, copy_pod, simulate
from kubesched.sim.driver import PodOutcome

Progress = Callable[[int, int | None], None]  # (copies placed, max or None)
UID_PREFIX = "capacity-fit-"


@dataclass
class FitResult:
    template: Pod
    count: int = 0
    per_node: dict[str, int] = field(default_factory=dict)  # every node, 0 included
    stopped_by: str = "refusal"  # "refusal" | "max"
    refusal: Attempt | None = None  # the explained attempt of the first copy that did not fit
    pending_first: int = 0  # pending pods of the manifest scheduled before the copies

    @property
    def message(self) -> str | None:
        return self.refusal.message if self.refusal is not None else None

    def reasons(self) -> list[dict[str, Any]]:
        """The refusal per (plugin, reason), with the number of nodes that gave it (most
        nodes first): cluster-capacity's aggregated view of :attr:`refusal`."""
        if self.refusal is None:
            return []
        count: Counter[tuple[str, str]] = Counter()
        for verdict in self.refusal.filter.values():
            if verdict == "ok":
                continue
            for reason in verdict.get("reasons") or [""]:
                count[(str(verdict.get("plugin") or "PreFilter"), reason)] += 1
        return [{"plugin": p, "reason": r, "nodes": n}
                for (p, r), n in sorted(count.items(), key=lambda kv: (-kv[1], kv[0]))]

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"template": self.template.key, "fits": self.count,
                               "stoppedBy": self.stopped_by, "perNode": self.per_node,
                               "pendingScheduledFirst": self.pending_first}
        if self.refusal is not None:
            doc["refusal"] = {"message": self.refusal.message, "reasons": self.reasons(),
                              "filter": self.refusal.filter}
        return doc


def fit(manifest: Manifest, template: Pod, opts: RunOptions, max_copies: int | None = None,
        progress: Progress | None = None) -> FitResult:
    """Schedule copies of ``template`` one by one until one does not fit (or ``max_copies``)."""
    sim = simulate(manifest, opts)
    result = FitResult(template, per_node={n.name: 0 for n in manifest.nodes})
    result.pending_first = sum(1 for o in sim.outcomes.values() if o.status == "Scheduled")
    # Every pod takes one of a node's allocatable "pods": past their sum no copy can fit,
    # so the loop ends even if something else admitted pods without limit.
    slots = sum(n.allocatable.get("pods", 0) for n in manifest.nodes) + 1
    limit = slots if max_copies is None else min(max_copies, slots)
    seq = max((p.seq for p in manifest.pods), default=0) + 1
    taken = {p.key for p in manifest.pods}
    i = 0
    while i < limit:
        i += 1
        name = f"{template.name}-{i}"
        while f"{template.namespace}/{name}" in taken:  # never two pods under one name
            name += "-copy"
        pod = copy_pod(template, name, f"{UID_PREFIX}{i}", seq + i, preemptionPolicy="Never")
        pod = dataclasses.replace(pod, preemption_policy="Never")
        sim.cluster.load((), [pod])
        sim.outcomes[pod.uid] = PodOutcome(pod)
        sim.queue.add(pod)
        while (qpi := sim.queue.pop()) is not None:  # the copy, and whatever its bind woke
            sim._attempt(qpi)
        node = sim.cluster.pods[pod.uid].node_name
        if not node:
            result.refusal = _explain_refusal(manifest, sim.cluster.pods[pod.uid], bound_pods(sim), opts)
            return result
        result.count += 1
        result.per_node[node] = result.per_node.get(node, 0) + 1
        if progress is not None:
            progress(result.count, max_copies)
    result.stopped_by = "max" if max_copies is not None and result.count >= max_copies else "refusal"
    return result


def _explain_refusal(manifest: Manifest, pod: Pod, bound: list[Pod], opts: RunOptions) -> Attempt:
    """The refused copy's attempt again, explained, on the cluster as the copies left it
    (a fresh run: the fitting loop itself runs without explain, which costs per node)."""
    state = dataclasses.replace(manifest, pods=bound + [pod])  # pending pods take no room
    sim = simulate(state, opts, explain=True, single_pass=True)
    return sim.outcomes[pod.uid].attempts[-1]
