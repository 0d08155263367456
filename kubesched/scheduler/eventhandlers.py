"""What the scheduler does when the cluster changes (upstream ``eventhandlers.go``).

Informers (a live scheduler's, or the simulator's in-process cluster) report pod, node and
other object changes here. Pods go two ways, as upstream's two filtered pod handlers do:

* assigned pods (``spec.nodeName`` set, whoever scheduled them) update the :class:`Cache`,
  then move unschedulable pods with the ``AssignedPod`` Add/Update/Delete events (with the
  old and new objects, so QueueingHints can judge them);
* unassigned pods whose ``spec.schedulerName`` is one of our profiles go into, change in, or
  leave the :class:`SchedulingQueue`. A pod that is deleted while it waits at Permit is
  rejected there (its node frees up: ``AssignedPod`` Delete); one that held a nominated
  node frees that reservation for pods of lower or equal priority.

A bind shows up as an update from unassigned to assigned: the pod leaves the queue and
enters the cache, which turns an assumed pod into a confirmed one. Nodes update the cache
and raise the node events upstream derives from what changed.

Every public method takes ``sched.lock`` (re-entrant), so a live scheduler's informer
threads, its scheduling loop and its binding threads see the cache and queue change
atomically. ``notify`` (if set) is called after each change; a live scheduler uses it to
wake its scheduling loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.framework.events import ActionType, ClusterEvent, Resource
from kubesched.framework.resized import as_counted
from kubesched.queue import clusterevents as ce
from kubesched.scheduler.scheduler import Scheduler

log = logging.getLogger(__name__)


def assigned(pod: Pod) -> bool:
    """Upstream ``assignedPod``: the pod has a node."""
    return bool(pod.node_name)


def resource_version(obj: Any) -> str:
    raw = getattr(obj, "raw", None) or {}
    return str((raw.get("metadata") or {}).get("resourceVersion") or "")


def le_priority(priority: int) -> Callable[[Pod], bool]:
    """Upstream ``getLEPriorityPreCheck``: only pods of lower or equal priority."""
    return lambda p: p.priority <= priority


def has_nominated_node_name_changed(old: Pod, new: Pod) -> bool:
    """Upstream ``hasNominatedNodeNameChanged``: there was a nominated node, and it changed."""
    return bool(old.nominated_node_name) and old.nominated_node_name != new.nominated_node_name


class EventHandlers:
    """Upstream's informer handlers over one :class:`Scheduler` (its cache and queue)."""

    def __init__(self, sched: Scheduler, notify: Callable[[], None] | None = None) -> None:
        self.sched = sched
        self.notify = notify

    def _moved(self) -> None:
        if self.notify is not None:
            self.notify()

    def _move(self, event: ClusterEvent, old: Any, new: Any,
              pre_check: Callable[[Pod], bool] | None = None) -> None:
        q = self.sched.queue
        if q is not None:
            q.move_all_to_active_or_backoff_queue(event, old, new, pre_check)

    def responsible_for_pod(self, pod: Pod) -> bool:
        """Upstream ``responsibleForPod``: the pod names one of our profiles."""
        return pod.scheduler_name in self.sched.profiles

    # -- pod informer: the two filtered handlers ----------------------------------------------
    def on_pod_add(self, pod: Pod) -> None:
        with self.sched.lock:
            if assigned(pod):
                self.add_pod_to_cache(pod)
            elif self.responsible_for_pod(pod):
                self.add_pod_to_scheduling_queue(pod)
            else:
                return
        self._moved()

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        """An update, split the way client-go's FilteringResourceEventHandler splits it: an
        object that starts passing a handler's filter is an add for it, one that stops is a
        delete (a bind is a delete for the queue and an add for the cache)."""
        with self.sched.lock:
            if assigned(new) and not assigned(old) and self.sched.queue is not None:
                # bound: upstream calls Done before PreBind/Bind, so a pod is no longer in
                # flight once its binding is observable, even when it is observed first
                self.sched.queue.done(new.uid)
            was_queued = not assigned(old) and self.responsible_for_pod(old)
            is_queued = not assigned(new) and self.responsible_for_pod(new)
            if was_queued and is_queued:
                self.update_pod_in_scheduling_queue(old, new)
            elif is_queued:
                self.add_pod_to_scheduling_queue(new)
            elif was_queued:
                self.delete_pod_from_scheduling_queue(old)
            if assigned(old) and assigned(new):
                self.update_pod_in_cache(old, new)
            elif assigned(new):
                self.add_pod_to_cache(new)
            elif assigned(old):
                self.delete_pod_from_cache(old)
        self._moved()

    def on_pod_delete(self, pod: Pod, final_state_unknown: bool = False) -> None:
        """``final_state_unknown``: the informer missed the deletion (it re-listed) and
        ``pod`` is its last known state, possibly stale: both handlers clean up, as
        upstream's filters let a ``DeletedFinalStateUnknown`` through to both."""
        with self.sched.lock:
            if assigned(pod) or final_state_unknown:
                self.delete_pod_from_cache(pod)
            if (not assigned(pod) or final_state_unknown) and self.responsible_for_pod(pod):
                self.delete_pod_from_scheduling_queue(pod)
        self._moved()

    # -- assigned pods: the cache --------------------------------------------------------------
    def add_pod_to_cache(self, pod: Pod) -> None:
        """A bound pod appeared (or an assumed pod's binding was confirmed)."""
        log.debug("add event for scheduled pod %s", pod.key)
        pod = as_counted(pod, self.sched.features)
        self.sched.cache.add_pod(pod)
        self._move(ce.EVENT_ASSIGNED_POD_ADD, None, pod)

    def update_pod_in_cache(self, old: Pod, new: Pod) -> None:
        log.debug("update event for scheduled pod %s", new.key)
        old, new = as_counted(old, self.sched.features), as_counted(new, self.sched.features)
        if old.uid != new.uid:  # another pod under the same name: the cache keys pods by uid
            self.sched.cache.remove_pod(old)
            self.sched.cache.add_pod(new)
        else:
            self.sched.cache.update_pod(old, new)
        for ev in ce.pod_scheduling_properties_change(new, old):
            self._move(ev, old, new)

    def delete_pod_from_cache(self, pod: Pod) -> None:
        log.debug("delete event for scheduled pod %s", pod.key)
        self.sched.cache.remove_pod(pod)
        self._move(ce.EVENT_ASSIGNED_POD_DELETE, pod, None)

    # -- unassigned pods of our profiles: the queue ---------------------------------------------
    def add_pod_to_scheduling_queue(self, pod: Pod) -> None:
        log.debug("add event for unscheduled pod %s", pod.key)
        if self.sched.queue is not None:
            self.sched.queue.add(pod)

    def update_pod_in_scheduling_queue(self, old: Pod, new: Pod) -> None:
        rv = resource_version(new)
        if rv and rv == resource_version(old):
            return  # an identical object (a re-list): nothing changed (upstream #96071)
        if self.sched.cache.is_assumed(new):
            return  # being bound: the queue no longer holds it
        log.debug("update event for unscheduled pod %s", new.key)
        if self.sched.queue is not None:
            self.sched.queue.update(old, new)
        if has_nominated_node_name_changed(old, new):
            # as if the pod left its nominated node, where lower or equal priority pods were
            # filtered as if it ran
            self._move(ce.EVENT_ASSIGNED_POD_DELETE, old, None, le_priority(old.priority))

    def delete_pod_from_scheduling_queue(self, pod: Pod) -> None:
        log.debug("delete event for unscheduled pod %s", pod.key)
        if self.sched.queue is not None:
            self.sched.queue.delete(pod)
        waiting = self.sched.waiting.get(pod.uid)
        if waiting is not None:
            # an assumed pod waiting at Permit: rejecting it frees its node
            waiting.reject("", "removed")
            self._move(ce.EVENT_ASSIGNED_POD_DELETE, pod, None)
        elif pod.nominated_node_name:
            self._move(ce.EVENT_ASSIGNED_POD_DELETE, pod, None, le_priority(pod.priority))

    # -- nodes -------------------------------------------------------------------------------
    def on_node_add(self, node: Node) -> None:
        with self.sched.lock:
            log.debug("add event for node %s", node.name)
            self.sched.cache.add_node(node)
            self._move(ce.EVENT_NODE_ADD, None, node)
        self._moved()

    def on_node_update(self, old: Node, new: Node) -> None:
        with self.sched.lock:
            log.debug("update event for node %s", new.name)
            self.sched.cache.update_node(new)
            for ev in ce.node_scheduling_properties_change(new, old):
                self._move(ev, old, new)
        self._moved()

    def on_node_delete(self, node: Node, final_state_unknown: bool = False) -> None:
        with self.sched.lock:
            log.debug("delete event for node %s", node.name)
            self._move(ce.EVENT_NODE_DELETE, node, None)
            self.sched.cache.remove_node(node)
        self._moved()

    # -- other objects plugins may register events for (namespaces, pod groups) ---------------
    def on_object_event(self, resource: Resource, action: ActionType, old: Any, new: Any) -> None:
        """Upstream ``buildEvtResHandler``: an Add/Update/Delete of another kind of object
        moves the pods whose rejecting plugins registered it."""
        with self.sched.lock:
            self._move(ClusterEvent(resource, action), old, new)
        self._moved()

    # -- popping -------------------------------------------------------------------------------
    def skip_pod_schedule(self, pod: Pod) -> bool:
        """Upstream ``skipPodSchedule``: a pod being deleted is not scheduled (a
        FailedScheduling event says so); an assumed pod (it came back through an update
        while it was in flight) is not scheduled twice. The caller then calls ``Done``."""
        if pod.deletion_timestamp is not None:
            self.sched.sink.record_event(pod, "Warning", "FailedScheduling",
                                         f"skip schedule deleting pod: {pod.namespace}/{pod.name}")
            log.debug("skip schedule deleting pod %s", pod.key)
            return True
        return self.sched.cache.is_assumed(pod)
