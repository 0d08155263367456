"""PodGroup status (``scheduling.x-k8s.io/v1alpha1``), as scheduler-plugins keeps it for
Coscheduling: its PodGroup controller (``pkg/controllers/podgroup_controller.go``) and the
Coscheduling plugin's ``PostBind``, which counts the group's bound pods.

From the pods labelled ``scheduling.x-k8s.io/pod-group: <name>`` in the group's namespace:

* ``scheduled``: pods bound to a node (``PostBind`` increments it per binding; here it
  is counted from the pods, so a resync never double-counts); ``running``,
  ``succeeded``, ``failed``: pods in those phases;
* ``phase``: "" → ``Pending``; ``Pending`` → ``PreScheduling`` once ``minMember`` pods
  exist (``occupiedBy`` = their owners, sorted); a binding of a PreScheduling/Scheduling
  group moves it to ``Scheduling`` (``scheduleStartTime`` set) or, once ``minMember``
  are bound, ``Scheduled`` (PostBind); ``Scheduled`` → ``Running`` once ``running +
  succeeded ≥ minMember``; ``Failed`` when a pod failed and ``failed + running +
  succeeded ≥ minMember``; ``Finished`` when ``succeeded ≥ minMember`` (both final); back
  to ``Pending`` when fewer than ``minMember`` pods are left. The controller reconciles
  again after each change, so one sync runs these steps to their fixed point.

Deviation: upstream splits this between the plugin (in the scheduler) and a separate
controller; here one controller computes both from the same informer state.
"""

from __future__ import annotations

import logging
from typing import Any

from kubesched.api.podgroup import POD_GROUP_LABEL
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import Controller, meta, timestamp
from kubesched.server.controllers.informer import Informer, Key, Obj

log = logging.getLogger(__name__)

FINAL = ("Finished", "Failed")


def next_status(old: dict[str, Any], min_member: int, pods: list[Obj], now: str) -> dict[str, Any]:
    """The group's status after one reconcile of ``pods`` (pure): the plugin's PostBind
    rule, then the controller's switch on the phase it found."""
    st = dict(old)
    phase = str(st.get("phase") or "")
    if phase in FINAL:
        return st
    phases = [(p.get("status") or {}).get("phase") for p in pods]
    running, succeeded, failed = phases.count("Running"), phases.count("Succeeded"), phases.count("Failed")
    scheduled = sum(1 for p in pods if (p.get("spec") or {}).get("nodeName"))
    st["scheduled"] = scheduled
    if scheduled and phase in ("PreScheduling", "Scheduling"):  # Coscheduling PostBind
        phase = "Scheduled" if scheduled >= min_member else "Scheduling"
        st.setdefault("scheduleStartTime", now)
    elif phase == "":
        phase = "Pending"
    elif phase == "Pending":
        if pods and len(pods) >= min_member:
            phase = "PreScheduling"
            owners = sorted(f"{meta(pods[0]).get('namespace')}/{r.get('name')}"
                            for r in meta(pods[0]).get("ownerReferences") or [])
            if owners:
                st["occupiedBy"] = ",".join(owners)
    else:
        st.update(running=running, succeeded=succeeded, failed=failed)
        if len(pods) < min_member or not pods:
            phase = "Pending"
        else:
            if phase == "Scheduling" and scheduled >= min_member:
                phase = "Scheduled"
            if phase == "Scheduled" and running + succeeded >= min_member:
                phase = "Running"
            if failed and failed + running + succeeded >= min_member:
                phase = "Failed"
            if succeeded >= min_member:
                phase = "Finished"
    st["phase"] = phase
    return {k: v for k, v in st.items() if v not in (0, None) or k == "phase"}


class PodGroupController(Controller[Key]):
    name = "podgroup-controller"

    def __init__(self, registry: Registry, groups: Informer, pods: Informer, *, workers: int = 1) -> None:
        super().__init__(workers)
        self.registry = registry
        self.groups = groups
        self.pods = pods
        groups.add_handler(self._on_group)
        pods.add_handler(self._on_pod)

    def _on_group(self, old: Obj | None, new: Obj | None) -> None:
        obj = new or old
        assert obj is not None
        self.queue.add((str(meta(obj).get("namespace") or ""), str(meta(obj).get("name"))))

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        for pod in (old, new):
            group = (meta(pod).get("labels") or {}).get(POD_GROUP_LABEL) if pod is not None else None
            if pod is not None and group:
                self.queue.add((str(meta(pod).get("namespace") or ""), str(group)))

    def sync(self, key: Key) -> None:
        pg = self.groups.get(*key)
        if pg is None:
            return
        pods = [p for p in self.pods.by_index("namespace", key[0])
                if (meta(p).get("labels") or {}).get(POD_GROUP_LABEL) == key[1]]
        min_member = int((pg.get("spec") or {}).get("minMember") or 0)
        old = pg.get("status") or {}
        status = dict(old)
        now = timestamp(self.registry.clock())
        for _ in range(4):  # upstream reconciles again on every change: run to the fixed point
            new = next_status(status, min_member, pods, now)
            if new == status:
                break
            status = new
        if status == old:
            return
        out = self.registry.update("podgroups.scheduling.x-k8s.io", key[0], key[1], dict(pg, status=status),
                                   subresource="status")
        self.expect(key, self.groups, out)
