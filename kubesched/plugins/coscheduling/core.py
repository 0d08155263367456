"""The PodGroup manager of Coscheduling (scheduler-plugins ``pkg/coscheduling/core``, v0.34.7).

It keeps the state a gang needs across scheduling cycles:

- ``assigned``: per group, the names of its pods that passed Permit (assumed or bound) or
  were already bound when the scheduler started (upstream's pod informer AddFunc). A pod
  leaves it on Unreserve, or when it no longer exists (upstream's DeleteFunc).
- ``permitted``: groups whose ``minResources`` fit the cluster, remembered for
  ``permitWaitingTimeSeconds`` so the check is not repeated for every member.
- ``backed off``: groups rejected in PostFilter, refused in PreFilter for
  ``podGroupBackoffSeconds``.
- ``last failed``: when a group last failed; the queue sorts the group by this instead of
  its creation time, so a failing gang does not block the head of the queue.

Times: the scheduler's clock (``handle.now()``, seconds; 0 when the simulation starts) is
the time axis. A PodGroup's ``creationTimestamp`` is placed on it relative to
:data:`CLOCK_EPOCH` (the wall time the in-process cluster gives the clock's 0), so objects
of a manifest were created before the simulation started; a group without a creation time
has Go's zero time, before everything. The TTL caches expire as go-cache does: an entry
is found while ``now <= expiry``; a ``permitted`` TTL of 0 means go-cache's default, 3 s
(a back-off of 0 is not recorded at all).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from kubesched.framework.clock import CLOCK_EPOCH
from kubesched.api.objects import Pod
from kubesched.api.podgroup import POD_GROUP_LABEL, PodGroup
from kubesched.api.resources import PODS
from kubesched.framework.interface import PODS_TO_ACTIVATE
from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.types import NodeInfo
from kubesched.plugins.coscheduling.clusterresource import (
    GoQuantity, check_cluster_resource, parse_go_quantity,
)

log = logging.getLogger(__name__)

GO_ZERO_TIME = dt.datetime(1, 1, 1, tzinfo=dt.timezone.utc)
PERMITTED_DEFAULT_TTL = 3.0  # gocache.New(3s, ...): what a TTL of 0 means for permittedPG


class PermitResult(str, Enum):
    """``core.Status``: what the manager's Permit decided."""

    NOT_SPECIFIED = "PodGroup not specified"
    NOT_FOUND = "PodGroup not found"
    SUCCESS = "Success"
    WAIT = "Wait"


@dataclass(slots=True)
class PermitState:
    """Written at Permit by the first waiting pod of a group: activate its siblings."""

    activate: bool = False

    def clone(self) -> "PermitState":
        return PermitState(self.activate)


PERMIT_STATE_KEY: StateKey[PermitState] = StateKey("PermitCoscheduling")
# Upstream framework.PodsToActivateKey: pods the scheduler moves to activeQ at the end of a
# successful scheduling cycle ("namespace/name" -> pod). The scheduler must write an empty
# dict under this key for the activation to be recorded (see the plugin package docs).
PODS_TO_ACTIVATE_KEY = PODS_TO_ACTIVATE  # the framework's key, read by the scheduler


def group_label(pod: Pod) -> str:
    return pod.labels.get(POD_GROUP_LABEL, "")


def group_full_name(pod: Pod) -> str:
    """``util.GetPodGroupFullName``: ``namespace/group`` or "" for a pod in no group."""
    label = group_label(pod)
    return f"{pod.namespace}/{label}" if label else ""


def to_clock(timestamp: str) -> float:
    """An RFC 3339 time on the scheduler's clock (seconds since :data:`CLOCK_EPOCH`)."""
    try:
        t = dt.datetime.fromisoformat(timestamp) if timestamp else GO_ZERO_TIME
    except ValueError:
        t = GO_ZERO_TIME
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.timezone.utc)
    return (t - CLOCK_EPOCH).total_seconds()


class PodGroupManager:
    def __init__(self, handle: Any, schedule_timeout: float) -> None:
        self.handle = handle
        self.schedule_timeout = schedule_timeout
        self.permitted: dict[str, float] = {}  # group -> expiry
        self.backed_off: dict[str, float] = {}  # group -> expiry
        self.last_failed: dict[str, float] = {}  # group -> clock time
        self.assigned: dict[str, set[str]] = {}
        self._seeded = False

    # -- lookups ----------------------------------------------------------------------
    def get_pod_group(self, pod: Pod) -> tuple[str, PodGroup | None]:
        """``GetPodGroup``: the full name ("" without the label) and the group, if it exists."""
        label = group_label(pod)
        if not label:
            return "", None
        return f"{pod.namespace}/{label}", self.handle.objects.pod_group(pod.namespace, label)

    def group_pods(self, namespace: str, label: str) -> list[Pod]:
        """Every pod (bound or not) of the namespace carrying the group label."""
        return [p for p in self.handle.objects.all_pods()
                if p.namespace == namespace and p.labels.get(POD_GROUP_LABEL) == label]

    # -- TTL caches and the queue-order timestamp -------------------------------------
    def _live(self, cache: dict[str, float], key: str) -> bool:
        expiry = cache.get(key)
        if expiry is None:
            return False
        if self.handle.now() > expiry:
            del cache[key]
            return False
        return True

    def backoff_pod_group(self, key: str, seconds: float) -> None:
        if seconds == 0:
            return
        if not self._live(self.backed_off, key):
            self.backed_off[key] = self.handle.now() + seconds

    def delete_permitted_pod_group(self, key: str) -> None:
        self.permitted.pop(key, None)

    def mark_schedule_failure(self, key: str) -> None:
        self.last_failed[key] = self.handle.now()

    def clear_schedule_failure(self, key: str) -> None:
        self.last_failed.pop(key, None)

    def creation_timestamp(self, pod: Pod, ts: float) -> float:
        """``GetCreationTimestamp``: when the group last failed, else when it was created;
        ``ts`` (the pod's own queue time) for a pod in no group or a missing group."""
        label = group_label(pod)
        if not label:
            return ts
        failed = self.last_failed.get(f"{pod.namespace}/{label}")
        if failed is not None:
            return failed
        pg = self.handle.objects.pod_group(pod.namespace, label)
        return ts if pg is None else to_clock(pg.creation_timestamp)

    # -- assigned pods ----------------------------------------------------------------
    def _seed(self) -> None:
        """Once, on first use: the group pods already bound (the informer's initial adds)."""
        if self._seeded:
            return
        self._seeded = True
        for p in self.handle.objects.all_pods():
            full = group_full_name(p)
            if p.node_name and full:
                self.assigned.setdefault(full, set()).add(p.name)

    def _assigned(self, key: str) -> set[str]:
        """The group's assigned names, less those of pods that no longer exist."""
        self._seed()
        names = self.assigned.get(key)
        if names:
            ns, _, label = key.partition("/")
            names &= {p.name for p in self.group_pods(ns, label)}
        return names if names is not None else set()

    def assigned_count(self, key: str) -> int:
        return len(self._assigned(key))

    # -- extension points -------------------------------------------------------------
    def pre_filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> str | None:
        """None when the pod may go on; else why not (upstream's error text)."""
        key, pg = self.get_pod_group(pod)
        if pg is None:
            return None
        if self._live(self.backed_off, key):
            return f"podGroup {key} failed recently"
        pods = self.group_pods(pod.namespace, pg.name)
        gap = pg.min_member - len(pods)
        if gap > 0:
            return (f"pre-filter pod {pod.name} cannot find enough sibling pods, "
                    f"current pods number: {len(pods)}, minMember of group: {pg.min_member}")
        if gap + sum(1 for p in pods if p.scheduling_gates) > 0:
            return f"pre-filter pod {pod.name} cannot proceed due to gated pods in the same PodGroup"
        raw_min = (pg.raw.get("spec") or {}).get("minResources")
        if raw_min is None or self._live(self.permitted, key):
            return None
        request = {str(k): parse_go_quantity(v) for k, v in raw_min.items()}
        request[PODS] = GoQuantity(pg.min_member, 0, "DecimalSI")
        err = check_cluster_resource(nodes, request, key)
        if err is not None:
            log.debug("PreFilter rejects %s: %s", key, err)
            return err
        ttl = self.schedule_timeout or PERMITTED_DEFAULT_TTL
        self.permitted[key] = self.handle.now() + ttl
        return None

    def permit(self, state: CycleState, pod: Pod) -> PermitResult:
        key, pg = self.get_pod_group(pod)
        if not key:
            return PermitResult.NOT_SPECIFIED
        if pg is None:
            return PermitResult.NOT_FOUND
        assigned = self._assigned(key)
        self.assigned[key] = assigned
        assigned.add(pod.name)
        if len(assigned) >= pg.min_member:
            return PermitResult.SUCCESS
        if len(assigned) == 1:
            # the first member to wait brings its siblings back to activeQ (upstream #682)
            state.write(PERMIT_STATE_KEY, PermitState(True))
        return PermitResult.WAIT

    def unreserve(self, pod: Pod) -> None:
        key = group_full_name(pod)
        if not key:
            return
        self._seed()
        names = self.assigned.get(key)
        if names is not None:
            names.discard(pod.name)
            if not names:
                del self.assigned[key]

    def activate_siblings(self, pod: Pod, state: CycleState) -> None:
        """Put the pod's siblings into the cycle's pods-to-activate, when Permit asked."""
        label = group_label(pod)
        ps = state.get(PERMIT_STATE_KEY)
        if not label or ps is None or not ps.activate:
            return
        siblings = [p for p in self.group_pods(pod.namespace, label) if p.uid != pod.uid]
        to_activate = state.get(PODS_TO_ACTIVATE_KEY)
        if siblings and to_activate is not None:
            for p in siblings:
                to_activate[p.key] = p
