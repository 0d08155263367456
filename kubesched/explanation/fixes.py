"""What would make a Pending pod schedule: the smallest changes, each verified by the scheduler.

From the pod's blockers (:mod:`.blockers`), :mod:`.fixes_pod` and :mod:`.fixes_cluster`
propose candidate changes, each with a ``check`` that asks the real scheduler (a
:class:`~.whatif.WhatIf`) whether the pod then lands, and where. Only candidates whose check
passes are offered (``verified: true``); nothing is estimated.

What "smallest" means, the order fixes are offered in (:meth:`.fixbase.Fix.rank`):

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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.objects import Pod
from kubesched.explanation import fixes_cluster, fixes_pod
from kubesched.explanation.blockers import Blockers
from kubesched.explanation.fixbase import Candidate, Fix
from kubesched.explanation.whatif import WhatIf

log = logging.getLogger(__name__)

DEFAULT_LIMIT = 10
Progress = Callable[[int, int, str], None]  # (candidates checked, candidates, kind)


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


def find_fixes(world: WhatIf, pod: Pod, limit: int = DEFAULT_LIMIT,
               progress: Progress | None = None) -> FixReport:
    """The verified fixes of ``pod`` (at most ``limit``, smallest first; see the module
    docstring). Candidates are checked in the order of their rank as proposed (a check can
    only make a fix rank lower, by the pods it turns out to disturb), and the search stops once
    ``limit`` verified fixes rank before every candidate left, which bounds its cost."""
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
