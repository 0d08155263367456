"""Coscheduling: gang scheduling of a PodGroup, all of ``minMember`` pods or none
(kubernetes-sigs/scheduler-plugins ``pkg/coscheduling/coscheduling.go``, v0.34.7).

- QueueSort: priority, then the group's creation time (the time it last failed, after a
  failure; the pod's own first-queue time for a pod in no group), then the pod's
  ``namespace/name``, so the members of a group come out of the queue one after another.
- PreFilter: refuses (UnschedulableAndUnresolvable, so no preemption is tried) a pod whose
  group backed off recently, has fewer than ``minMember`` pods, too many gated pods, or
  ``minResources`` the cluster cannot hold.
- PostFilter: a member that found no node rejects the group's pods waiting at Permit
  (releasing what they hold), unless enough members are assigned already.
- Permit: a member waits (the group's ``scheduleTimeoutSeconds``, else
  ``permitWaitingTimeSeconds``) until ``minMember`` members are assumed or bound; the one
  that completes the quorum allows every waiting member.
- Unreserve: one member failing rejects every waiting member of its group.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, Resource
from kubesched.framework.interface import PostFilterResult, PreFilterResult, QueuedPodInfo
from kubesched.framework.status import SUCCESS, Code, Status, unresolvable
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names
from kubesched.plugins.coscheduling.args import CoschedulingArgs, parse_args
from kubesched.plugins.coscheduling.core import PermitResult, PodGroupManager, group_full_name, group_label

log = logging.getLogger(__name__)

DEFAULT_WAIT_TIME = 60.0  # util.DefaultWaitTime
NO_POD_GROUP = "can not find pod group"
OPTIMISTIC_REJECTION = "optimistic rejection in PostFilter"
UNRESERVE_REJECTION = "rejection in Unreserve"


def rejected_message(group: str, pod: Pod) -> str:
    return f"PodGroup {group} gets rejected due to Pod {pod.name} is unschedulable even after PostFilter"


class Coscheduling:
    name = names.COSCHEDULING

    def __init__(self, args: CoschedulingArgs | None, handle: Any) -> None:
        args = args if args is not None else CoschedulingArgs()
        self.handle = handle
        self.schedule_timeout = float(args.permit_waiting_time_seconds)
        self.pg_backoff = float(args.pod_group_backoff_seconds) if args.pod_group_backoff_seconds > 0 else None
        self.reject_threshold = args.pod_group_reject_percentage / 100.0
        self.mgr = PodGroupManager(handle, self.schedule_timeout)

    @staticmethod
    def parse_args(raw: Mapping[str, Any] | None, path: str) -> CoschedulingArgs:
        return parse_args(raw, path)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(Resource.Pod, ActionType.Add)),
                ClusterEventWithHint(ClusterEvent(Resource.PodGroup, ActionType.Add | ActionType.Update))]

    # -- QueueSort --------------------------------------------------------------------
    def _order(self, p: QueuedPodInfo) -> tuple[int, float, str]:
        ts = p.initial_attempt_timestamp if p.initial_attempt_timestamp is not None else p.timestamp
        return -p.pod.priority, self.mgr.creation_timestamp(p.pod, ts), p.pod.key

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self._order(a) < self._order(b)

    def sort_key(self, p: QueuedPodInfo) -> tuple[int, float, str, int]:
        return (*self._order(p), p.pod.seq)

    # -- PreFilter / PostFilter -------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        err = self.mgr.pre_filter(pod, nodes)
        if err is not None:
            return None, unresolvable(err)
        return None, SUCCESS

    def _reject_waiting(self, namespace: str, label: str, message: str) -> None:
        for wp in self.handle.iterate_waiting_pods():
            if wp.pod.namespace == namespace and group_label(wp.pod) == label:
                log.debug("%s rejects waiting pod %s", self.name, wp.pod.key)
                wp.reject(self.name, message)

    def post_filter(self, state: CycleState, pod: Pod,
                    filtered: Mapping[str, Status]) -> tuple[PostFilterResult | None, Status]:
        key, pg = self.mgr.get_pod_group(pod)
        if pg is None:
            return None, Status(Code.Unschedulable, (NO_POD_GROUP,))
        assigned = self.mgr.assigned_count(key)
        if assigned >= pg.min_member:
            return None, Status(Code.Unschedulable)
        # a small enough gap: let the remaining members try before giving the group up
        if (pg.min_member - assigned) / pg.min_member <= self.reject_threshold:
            return None, Status(Code.Unschedulable)
        self._reject_waiting(pod.namespace, pg.name, OPTIMISTIC_REJECTION)
        if self.pg_backoff is not None:
            if len(self.mgr.group_pods(pod.namespace, group_label(pod))) >= pg.min_member:
                self.mgr.backoff_pod_group(key, self.pg_backoff)
        self.mgr.delete_permitted_pod_group(key)
        self.mgr.mark_schedule_failure(key)
        return None, Status(Code.Unschedulable, (rejected_message(key, pod),))

    # -- Permit / Reserve -------------------------------------------------------------
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        result = self.mgr.permit(state, pod)
        if result is PermitResult.NOT_SPECIFIED:
            return SUCCESS, 0.0
        if result is PermitResult.NOT_FOUND:
            return Status(Code.Unschedulable, (PermitResult.NOT_FOUND.value,)), 0.0
        if result is PermitResult.WAIT:
            _, pg = self.mgr.get_pod_group(pod)
            wait = self._wait_time(pg.schedule_timeout_seconds if pg is not None else None)
            self.mgr.activate_siblings(pod, state)
            log.debug("pod %s waits at Permit on %s for %ss", pod.key, node_name, wait)
            return Status(Code.Wait), wait
        key = group_full_name(pod)
        self.mgr.clear_schedule_failure(key)
        for wp in self.handle.iterate_waiting_pods():
            if group_full_name(wp.pod) == key:
                wp.allow(self.name)
        return SUCCESS, 0.0

    def _wait_time(self, group_timeout: int | None) -> float:
        """``util.GetWaitTimeDuration``, where a result of 0 keeps the plugin's timeout."""
        if group_timeout is not None:
            wait = float(group_timeout)
        elif self.schedule_timeout != 0:
            wait = self.schedule_timeout
        else:
            wait = DEFAULT_WAIT_TIME
        return wait if wait != 0 else self.schedule_timeout

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        key, pg = self.mgr.get_pod_group(pod)
        if pg is None:
            return
        self.mgr.unreserve(pod)
        self._reject_waiting(pod.namespace, pg.name, UNRESERVE_REJECTION)
        self.mgr.delete_permitted_pod_group(key)
        self.mgr.mark_schedule_failure(key)
