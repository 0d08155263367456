"""What would make a Pending pod schedule: the smallest changes, each verified by the scheduler.

From the pod's blockers (:mod:`.blockers`), :mod:`.fixes_pod` and :mod:`.fixes_cluster`
propose candidate changes, each with a ``check`` that asks the real scheduler (a
:class:`~.whatif.WhatIf`) whether the pod then lands, and where. Only candidates whose check
passes are offered (``verified: true``); nothing is estimated.

What "smallest" means, the order fixes are offered in (:meth:`Fix.rank`):

1. fewest other pods disturbed (preemption victims, pods moved, pods a scale-down deletes):
   a fix that touches nobody else comes first;
2. fewest objects added (a new node costs money);
3. fewest fields changed;
4. then pod changes before node changes before workload changes before cluster changes.

A fix must hold with the queue as it is: in every check, the pending pods the queue pops
before this one (higher priority, then earlier) are tried first on the changed cluster, and
the pod must still land after those that fit there took their room.

Nothing previously scheduled becomes unschedulable unless the fix says so: pod changes
and node changes (a taint removed, a node added) leave every bound pod where it is; the
pods a fix disturbs are named in it, and moved pods are rescheduled by the scheduler in the
same check (each must land).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.objects import Pod
from kubesched.explanation.blockers import Blockers
from kubesched.explanation.whatif import Landing, WhatIf, bound

log = logging.getLogger(__name__)

KINDS = ("tolerate-taint", "relax-node-selector", "relax-affinity", "relax-spread", "lower-request",
         "raise-priority", "remove-taint", "move-pods", "scale-down", "add-node")
SCOPES = ("pod", "node", "workload", "cluster")
DEFAULT_LIMIT = 10
MAX_AHEAD = 100  # pending pods ahead in the queue that a check lets go first
Progress = Callable[[int, int, str], None]  # (candidates checked, candidates, kind)


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


@dataclass
class FixReport:
    pod: str
    blockers: Blockers
    fixes: list[Fix] = field(default_factory=list)
    candidates: int = 0
    checked: int = 0
    rejected: list[dict[str, Any]] = field(default_factory=list)  # candidates the scheduler refused

    def to_json(self) -> dict[str, Any]:
        return {"pod": self.pod, "fixes": [f.to_json() for f in self.fixes],
                "candidatesProposed": self.candidates, "candidatesChecked": self.checked,
                "notEnough": self.rejected}


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


def find_fixes(world: WhatIf, pod: Pod, limit: int = DEFAULT_LIMIT,
               progress: Progress | None = None) -> FixReport:
    """The verified fixes of ``pod`` (at most ``limit``, smallest first; see the module
    docstring). Candidates are checked in the order of their rank as proposed (a check can
    only make a fix rank lower, by the pods it turns out to disturb), and the search stops once
    ``limit`` verified fixes rank before every candidate left, which bounds its cost."""
    from kubesched.explanation import fixes_cluster, fixes_pod

    blockers = world.blockers(pod)
    report = FixReport(pod.key, blockers)
    if not blockers.nodes and blockers.fits:
        return report  # it schedules as it is
    cands: list[Candidate] = [*fixes_pod.candidates(world, pod, blockers),
                              *fixes_cluster.candidates(world, pod, blockers)]
    cands.sort(key=lambda c: c.fix.rank())
    report.candidates = len(cands)
    seen: set[str] = set()
    done: set[str] = set()  # groups with a verified fix
    for i, cand in enumerate(cands):
        if len(report.fixes) >= limit and cand.fix.rank() >= sorted(f.rank() for f in report.fixes)[limit - 1]:
            break  # a check can only rank a fix lower than proposed: nothing left can enter the best

        if progress is not None:
            progress(i, len(cands), cand.fix.kind)
        key = repr((cand.fix.kind, cand.fix.target, cand.fix.patch))
        if key in seen or (cand.group and cand.group in done):
            continue
        seen.add(key)
        report.checked += 1
        try:
            fix = cand.check(world)
        except Exception as exc:  # noqa: BLE001 - one broken check must not lose the others
            log.warning("checking %s %s failed: %s: %s", cand.fix.kind, cand.fix.target, type(exc).__name__, exc)
            fix = None
        if fix is None:
            report.rejected.append({"kind": cand.fix.kind, "target": cand.fix.target, "patch": cand.fix.patch})
        else:
            report.fixes.append(fix)
            if cand.group:
                done.add(cand.group)
    report.fixes.sort(key=Fix.rank)
    del report.fixes[limit:]
    return report


def summary_line(fix: Fix) -> str:
    """One line for a table: what changes, where the pod lands."""
    lands = f" -> lands on {fix.node}" if fix.node else ""
    return f"{fix.kind} {fix.target}{lands}"


def spec_path(*parts: str | int) -> str:
    """A JSON pointer, each part escaped (``/`` and ``~`` in label keys)."""
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def pod_command(pod: Pod, patch: Sequence[dict[str, Any]]) -> str:
    import json

    return f"kubectl patch pod {pod.name} -n {pod.namespace} --type=json -p '{json.dumps(list(patch))}'"
