"""The pieces the fix proposers (:mod:`.fixes_pod`, :mod:`.fixes_cluster`) and the fix search
(:mod:`.fixes`) share: the :class:`Fix` and :class:`Candidate` records and the helpers a
candidate's check verifies a fix with (where the pod lands once the queue ahead of it had its turn).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.objects import Pod
from kubesched.explanation.whatif import Landing, WhatIf, bound

KINDS = ("tolerate-taint", "relax-node-selector", "relax-affinity", "relax-spread", "lower-request",
         "raise-priority", "remove-taint", "move-pods", "scale-down", "add-node")
SCOPES = ("pod", "node", "workload", "cluster")
MAX_AHEAD = 100  # pending pods ahead in the queue that a check lets go first


@dataclass
class Fix:
    """One change that makes the pod schedule. ``patch`` is what ``kubectl patch`` takes
    (``patch_type`` ``json`` or ``merge``), or for ``move-pods`` the pods to delete."""

    kind: str
    target: str  # pod | node/NAME | workload/KIND/NS/NAME | cluster
    patch: Any
    why: str
    patch_type: str = "json"
    node: str | None = None  # where the pod lands once the fix is applied
    disturbs: tuple[str, ...] = ()  # other pods evicted, moved or deleted
    moves: dict[str, str] = field(default_factory=dict)  # moved pod -> the node it lands on
    adds: int = 0  # objects added
    fields: int = 1  # fields changed
    least_disturbed: int = 0  # a lower bound of the pods disturbed, known before the check
    command: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    verified: bool = False

    def rank(self) -> tuple[int, int, int, int, int, str]:
        scope = SCOPES.index(self.target.split("/", 1)[0])
        disturbed = len(self.disturbs) if self.verified else max(len(self.disturbs), self.least_disturbed)
        return (disturbed, self.adds, self.fields, scope, KINDS.index(self.kind), self.target)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"kind": self.kind, "target": self.target, "patchType": self.patch_type,
                               "patch": self.patch, "node": self.node, "verified": self.verified,
                               "why": self.why}
        if self.disturbs:
            doc["disturbs"] = list(self.disturbs)
        if self.moves:
            doc["moves"] = dict(self.moves)
        if self.command:
            doc["command"] = self.command
        doc.update(self.extra)
        return doc


Check = Callable[[WhatIf], "Fix | None"]


@dataclass
class Candidate:
    """A proposed fix and how to verify it: ``check`` returns the verified fix, or None."""

    fix: Fix
    check: Check
    group: str = ""  # alternatives: once one of a group is verified, the others are not checked


def ahead_of(world: WhatIf, pod: Pod) -> list[Pod]:
    """The pending pods the queue pops before ``pod`` (PrioritySort: higher priority first,
    then arrival), nearest first, at most :data:`MAX_AHEAD`."""
    ahead = [p for p in world.pending() if p.uid != pod.uid and (-p.priority, p.seq) < (-pod.priority, pod.seq)]
    ahead.sort(key=lambda p: (-p.priority, p.seq))
    return ahead[:MAX_AHEAD]


def land(world: WhatIf, pod: Pod) -> Landing:
    """Where ``pod`` lands on the world as it is now, once the pending pods ahead of it in
    the queue have had their turn (a change may let one of them take the room first)."""
    first = world.try_pod(pod)
    if first.node is None:
        return first
    with ExitStack() as stack:
        took = []
        for other in ahead_of(world, pod):
            where = world.try_pod(other)
            if where.node is not None:
                stack.enter_context(world.changed(add_pods=[bound(other, where.node)]))
                took.append(other.key)
        if not took:
            return first
        again = world.try_pod(pod)
    return Landing(again.node, message=f"after {', '.join(took)}, ahead in the queue, were placed")


def landed(fix: Fix, landing: Landing, why: str) -> Fix | None:
    """``fix`` verified on ``landing`` (None when the pod did not land)."""
    if landing.node is None:
        return None
    fix.node, fix.verified = landing.node, True
    fix.why = why.format(node=landing.node)
    return fix


def spec_path(*parts: str | int) -> str:
    """A JSON pointer, each part escaped (``/`` and ``~`` in label keys)."""
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def pod_command(pod: Pod, patch: Sequence[dict[str, Any]]) -> str:
    return f"kubectl patch pod {pod.name} -n {pod.namespace} --type=json -p '{json.dumps(list(patch))}'"
