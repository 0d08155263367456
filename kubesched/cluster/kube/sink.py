"""``KubeSink``: the scheduler's decisions written to a Kubernetes API server
(``ClusterSink``), as upstream writes them.

* bind: a ``Binding`` posted to the pod's ``binding`` subresource (DefaultBinder). The
  server refuses a second binding (409), so a pod is never bound twice; a 404 or 409 is
  returned as a failure Status, and the scheduler forgets the assumed pod. Transient
  failures are retried with a bounded backoff; if an earlier try may have gone through
  (no answer), a 409 is checked against the pod: bound to our node means done.
* the PodScheduled condition and ``status.nominatedNodeName``: one strategic-merge status
  patch, sent only if something changes (upstream ``updatePod``). A nomination set just
  before the failure is reported goes in the same patch, as upstream sends them together;
  a nomination on its own is sent by :meth:`KubeSink.flush` at the end of the cycle.
* preemption: the victim gets the ``DisruptionTarget`` condition (reason
  ``PreemptionByScheduler``), is deleted, and a ``Preempted`` event names its preemptor.
* events: through :class:`~kubesched.cluster.kube.events.EventRecorder`, never blocking.

After :meth:`close` (the scheduler is stopping) nothing more is written: a bind fails at
once (the assumed pod is then forgotten) and retries in progress give up.

Fencing (``kubesched run`` with leader election): every write request, each retry
included, calls :meth:`KubeSink.guard` as the last step before it is sent (the client's
``guard``): it refuses the request if the sink is closed or the ``fence`` (the leader
elector's) raises :class:`FencedError`. A refused bind is a failed bind (an ``Error``
status: the binding cycle unreserves, forgets the assumed pod and requeues it); a refused
status patch, deletion or event is dropped, as a write of a replica that no longer leads.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from kubesched.api.objects import Pod
from kubesched.cluster.kube.client import STRATEGIC_MERGE_PATCH, KubeClient, call_with_retries
from kubesched.cluster.kube.errors import ApiStatusError, FencedError, KubeClientError, TransportError
from kubesched.cluster.kube.events import EventRecorder
from kubesched.cluster.kube.resources import PODS
from kubesched.framework.status import SUCCESS, Status, error

log = logging.getLogger(__name__)

DEFAULT_SCHEDULER_NAME = "default-scheduler"
# upstream's event actions, by reason
ACTIONS = {"Scheduled": "Binding", "FailedScheduling": "Scheduling", "Preempted": "Preempting"}
REMEMBERED_BINDS = 100_000  # the API server refuses a second binding anyway; this is a cheap guard
_PREEMPTED_BY = re.compile(r"^Preempted by pod (\S+) on node (\S+)$")


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _condition(pod: Pod, type_: str) -> dict[str, Any] | None:
    status = pod.raw.get("status") or {}
    for c in status.get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == type_:
            return c
    return None


def new_condition(pod: Pod, type_: str, status: str, reason: str, message: str) -> dict[str, Any] | None:
    """The condition to write, or None if the pod already has it (upstream
    ``UpdatePodCondition``: the transition time changes only with the status)."""
    old = _condition(pod, type_)
    if old is not None and (old.get("status"), old.get("reason") or "", old.get("message") or "") == \
            (status, reason, message):
        return None
    ltt = old.get("lastTransitionTime") if old is not None and old.get("status") == status else _now()
    return {"type": type_, "status": status, "reason": reason, "message": message,
            "lastProbeTime": None, "lastTransitionTime": ltt}


class KubeSink:
    def __init__(self, client: KubeClient, recorder: EventRecorder,
                 pod_by_uid: Callable[[str], Pod | None] = lambda uid: None,
                 bind_attempts: int = 6, fence: Callable[[], None] | None = None) -> None:
        """``fence``: raises :class:`FencedError` when decisions may no longer be written
        (see the module's docstring); None: always allowed (no leader election)."""
        self.client = client
        self.fence = fence
        self.recorder = recorder
        self.pod_by_uid = pod_by_uid
        self.bind_attempts = bind_attempts
        self.closed = threading.Event()
        self._local = threading.local()
        self._bound: OrderedDict[str, None] = OrderedDict()  # uids this sink bound (the latest)
        self._bound_lock = threading.Lock()
        self.binds = 0

    def close(self) -> None:
        self.closed.set()

    def guard(self) -> None:
        """Called right before each write is sent: raises :class:`FencedError` to refuse it."""
        if self.closed.is_set():
            raise FencedError("the scheduler has stopped: the write was not sent")
        if self.fence is not None:
            self.fence()

    # -- bind --------------------------------------------------------------------------------------
    def bind(self, pod: Pod, node_name: str) -> Status:
        if self.closed.is_set():
            return error("the scheduler is shutting down")
        with self._bound_lock:
            if pod.uid in self._bound:
                return error(f"pod {pod.key} was already bound by this scheduler")
        body = {"apiVersion": "v1", "kind": "Binding",
                "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}
        path = PODS.object_path(pod.namespace, pod.name, "binding")
        unanswered = False

        def post() -> None:
            nonlocal unanswered
            try:
                self.client.request("POST", path, body=body, guard=self.guard)
            except TransportError:
                unanswered = True
                raise

        try:
            call_with_retries(post, attempts=self.bind_attempts, stop=self.closed)
        except ApiStatusError as exc:
            if not (exc.conflict and unanswered and self._bound_to(pod, node_name)):
                log.info("binding %s to %s failed: %s", pod.key, node_name, exc.message)
                return error(exc.message or str(exc))
        except FencedError as exc:
            log.warning("not binding %s to %s: %s", pod.key, node_name, exc)
            return error(str(exc))
        except KubeClientError as exc:
            log.warning("binding %s to %s failed: %s", pod.key, node_name, exc)
            return error(str(exc))
        with self._bound_lock:
            self._bound[pod.uid] = None
            if len(self._bound) > REMEMBERED_BINDS:
                self._bound.popitem(last=False)
            self.binds += 1
        log.info("bound %s to %s", pod.key, node_name)
        return SUCCESS

    def _bound_to(self, pod: Pod, node_name: str) -> bool:
        """After a try that got no answer: did it bind the pod to ``node_name``?"""
        try:
            cur = self.client.request("GET", PODS.object_path(pod.namespace, pod.name))
        except KubeClientError:
            return False
        meta, spec = cur.get("metadata") or {}, cur.get("spec") or {}
        return bool(meta.get("uid") == pod.uid and spec.get("nodeName") == node_name)

    # -- status ------------------------------------------------------------------------------------
    def _pending(self) -> dict[str, tuple[Pod, str]]:
        pending: dict[str, tuple[Pod, str]] | None = getattr(self._local, "pending", None)
        if pending is None:
            pending = self._local.pending = {}
        return pending

    def set_nominated_node(self, pod: Pod, node_name: str) -> None:
        self._pending()[pod.uid] = (pod, node_name)

    def flush(self) -> None:
        """Send the nominations this thread set that no condition update carried."""
        pending = self._pending()
        while pending:
            _, (pod, node) = pending.popitem()
            self._patch_status(pod, None, node)

    def set_pod_scheduled_condition(self, pod: Pod, status: str, reason: str, message: str) -> None:
        nominated = self._pending().pop(pod.uid, None)
        cond = new_condition(pod, "PodScheduled", status, reason, message)
        self._patch_status(pod, cond, None if nominated is None else nominated[1])

    def _patch_status(self, pod: Pod, condition: dict[str, Any] | None, nominated: str | None) -> bool:
        if self.closed.is_set():
            return False
        patch: dict[str, Any] = {}
        current = str((pod.raw.get("status") or {}).get("nominatedNodeName") or "")
        if nominated is not None and nominated != current:
            patch["nominatedNodeName"] = nominated or None
        if condition is not None:
            patch["conditions"] = [condition]
        if not patch:
            return True
        path = PODS.object_path(pod.namespace, pod.name, "status")
        try:
            call_with_retries(lambda: self.client.request("PATCH", path, body={"status": patch},
                                                          content_type=STRATEGIC_MERGE_PATCH, guard=self.guard),
                              attempts=4, initial=0.01, factor=5.0, stop=self.closed)
            return True
        except FencedError as exc:
            log.info("not updating the status of %s: %s", pod.key, exc)
        except ApiStatusError as exc:
            level = logging.DEBUG if exc.not_found else logging.WARNING
            log.log(level, "updating the status of %s: %s", pod.key, exc.message)
        except KubeClientError as exc:
            log.warning("updating the status of %s: %s", pod.key, exc)
        return False

    # -- preemption --------------------------------------------------------------------------------
    def delete_pod(self, pod: Pod, reason: str, message: str) -> Status:
        """Delete a preemption victim: ``DisruptionTarget`` first, then the pod, then the
        event (upstream's preemption executor). ``message`` names the preemptor's uid."""
        if self.closed.is_set():
            return error("the scheduler is shutting down")
        m = _PREEMPTED_BY.match(message)
        preemptor = self.pod_by_uid(m.group(1)) if m else None
        controller = preemptor.scheduler_name if preemptor is not None else DEFAULT_SCHEDULER_NAME
        cond = new_condition(pod, "DisruptionTarget", "True", "PreemptionByScheduler",
                             f"{controller}: preempting to accommodate a higher priority pod")
        if cond is not None and not self._patch_status(pod, cond, None):
            return error(f"could not add the DisruptionTarget condition to {pod.key}")
        options = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": pod.uid}}
        try:
            call_with_retries(lambda: self.client.request("DELETE", PODS.object_path(pod.namespace, pod.name),
                                                          body=options, guard=self.guard), stop=self.closed)
        except KubeClientError as exc:
            level = logging.INFO if isinstance(exc, ApiStatusError) and exc.not_found else logging.WARNING
            log.log(level, "deleting preemption victim %s: %s", pod.key, exc)
            return error(str(exc))
        log.info("preempted %s: %s", pod.key, message)
        self.recorder.eventf(pod, preemptor, "Normal", reason, ACTIONS.get(reason, "Preempting"), message,
                             controller)
        return SUCCESS

    # -- events ------------------------------------------------------------------------------------
    def record_event(self, obj: Pod, type_: str, reason: str, message: str) -> None:
        if self.closed.is_set():
            return
        self.recorder.eventf(obj, None, type_, reason, ACTIONS.get(reason, "Scheduling"), message,
                             obj.scheduler_name or DEFAULT_SCHEDULER_NAME)
