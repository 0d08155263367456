"""SelectVictimsOnNode: the smallest set of lower-priority pods to evict from one node so
that the preemptor fits there (upstream ``DefaultPreemption.SelectVictimsOnNode``).

The dry run works on a copy of the node and of the cycle state (the caller makes them):

1. remove every pod of lower priority than the preemptor, telling the PreFilter
   extensions (RemovePod) each time;
2. if the preemptor still does not fit (Filter, with nominated pods), give up here;
3. otherwise put pods back one by one, most important first, those whose eviction
   would violate a PodDisruptionBudget before the others, keeping each pod whose return
   still lets the preemptor fit (AddPod, then Filter); the pods not kept are the victims.

Upstream sorts with Go's unstable ``sort.Slice``, reproduced by :mod:`.gosort`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from kubesched.api.objects import Pod
from kubesched.api.policy import PodDisruptionBudget
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo
from kubesched.plugins.preemption.gosort import go_sort_slice
from kubesched.plugins.preemption.ordering import StartTimes
from kubesched.plugins.preemption.pdb import filter_pods_with_pdb_violation

log = logging.getLogger(__name__)

NO_VICTIMS = "No preemption victims found for incoming pod"


def preemption_allowed(victim: Pod, preemptor: Pod) -> bool:
    """``isPreemptionAllowed`` with upstream's default eligibility: lower priority."""
    return victim.priority < preemptor.priority


def _extension_error(what: str, st: Status) -> Status:
    """The runtime's wrapping of a failed AddPod/RemovePod (upstream
    ``RunPreFilterExtension{Add,Remove}Pod``), unless the framework already wrapped it."""
    prefix = f"running {what} on PreFilter plugin"
    msg = st.message
    if not msg.startswith(prefix):
        msg = f'{prefix} "{st.plugin}": {msg}'
    return Status(Code.Error, (msg,), st.plugin)


class _DryRun:
    """One node's dry run: the copies it mutates and the framework it asks."""

    __slots__ = ("fw", "state", "pod", "ni")

    def __init__(self, framework: Any, state: CycleState, pod: Pod, node_info: NodeInfo) -> None:
        self.fw = framework
        self.state = state
        self.pod = pod
        self.ni = node_info

    def remove(self, p: Pod) -> Status:
        self.ni.remove_pod(p)
        st: Status = self.fw.run_pre_filter_remove_pod(self.state, self.pod, p, self.ni)
        return SUCCESS if st.success else _extension_error("RemovePod", st)

    def add(self, p: Pod) -> Status:
        self.ni.add_pod(p)
        st: Status = self.fw.run_pre_filter_add_pod(self.state, self.pod, p, self.ni)
        return SUCCESS if st.success else _extension_error("AddPod", st)

    def fits(self) -> Status:
        st: Status = self.fw.run_filter_with_nominated_pods(self.state, self.pod, self.ni)
        return st


def select_victims_on_node(framework: Any, state: CycleState, pod: Pod, node_info: NodeInfo,
                           pdbs: Sequence[PodDisruptionBudget], disruptions_allowed: Sequence[int],
                           times: StartTimes) -> tuple[list[Pod], int, Status]:
    """Victims on ``node_info`` (most important first), how many of them violate a PDB,
    and the status (Success, or why preemption on this node cannot help).

    ``state`` and ``node_info`` are modified: pass copies. ``disruptions_allowed[i]`` is
    ``pdbs[i]``'s budget (see :func:`.pdb.disruptions_allowed`)."""
    run = _DryRun(framework, state, pod, node_info)
    potential: list[Pod] = []
    for p in list(node_info.pods):
        if preemption_allowed(p, pod):
            potential.append(p)
            st = run.remove(p)
            if not st.success:
                return [], 0, st
    if not potential:
        return [], 0, Status(Code.UnschedulableAndUnresolvable, (NO_VICTIMS,))
    st = run.fits()
    if not st.success:
        return [], 0, st
    go_sort_slice(potential, times.more_important)
    violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs, disruptions_allowed)
    victims: list[Pod] = []
    num_violating = 0
    for group, counts in ((violating, True), (non_violating, False)):
        for p in group:
            st = run.add(p)
            if not st.success:
                return [], 0, st
            if run.fits().success:
                continue
            st = run.remove(p)
            if not st.success:
                return [], 0, st
            victims.append(p)
            log.debug("pod %s is a potential preemption victim on node %s", p.key, node_info.name)
            if counts:
                num_violating += 1
    if violating and non_violating:
        go_sort_slice(victims, times.more_important)
    return victims, num_violating, SUCCESS
