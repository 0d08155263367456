"""SchedulingGates: a pod with ``spec.schedulingGates`` stays out of the activeQ until every
gate is removed (upstream ``schedulinggates``)."""

from __future__ import annotations

from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, Resource
from kubesched.framework.status import SUCCESS, Status, unresolvable
from kubesched.plugins import names


class SchedulingGates:
    name = names.SCHEDULING_GATES

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def pre_enqueue(self, pod: Pod) -> Status:
        if not pod.scheduling_gates:
            return SUCCESS
        return unresolvable(f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(Resource.Pod, ActionType.UpdatePodSchedulingGatesEliminated))]
