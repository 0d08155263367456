"""The disruption controller: PodDisruptionBudget status, so eviction and ``kubectl drain``
behave as upstream (``pkg/controller/disruption/disruption.go``).

Per budget, over the pods its selector matches in its namespace (a null selector matches
none, ``{}`` every pod, as policy/v1):

* ``expectedPods`` and ``desiredHealthy`` (:func:`expected_and_desired`):
  ``maxUnavailable`` (integer or percentage) → expected = the summed scale of the pods'
  controllers, desired = expected − maxUnavailable scaled with rounding *up*, at least 0;
  integer ``minAvailable`` → expected = the number of pods, desired = minAvailable;
  percentage ``minAvailable`` → expected = the controllers' scale, desired = the
  percentage of it rounded up. A controller's scale is the ``spec.replicas`` of the pod's
  ReplicaSet (its Deployment's when it has one), StatefulSet or ReplicationController;
  a pod without a controller reference is "unmanaged" and left out of the scale (event
  ``UnmanagedPods``); a pod whose controller has no scale (a DaemonSet, a Job) fails the
  sync (``NoControllers``).
* ``currentHealthy``: pods Ready and not being deleted, not counting pods the eviction
  subresource recorded in ``disruptedPods`` less than two minutes ago (``DeletionTimeout``);
  entries for pods gone or older than that are dropped.
* ``disruptionsAllowed`` = currentHealthy − desiredHealthy, 0 when negative or when
  expected is 0; condition ``DisruptionAllowed`` True/``SufficientPods`` or
  False/``InsufficientPods``; on a failed sync 0 and False/``SyncFailed`` with the error
  (upstream's ``failSafe``); ``observedGeneration`` = the budget's generation.
"""

from __future__ import annotations

import copy
import logging
import math
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.policy import PodDisruptionBudget
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import (
    Controller, controller_ref, deleting, key_of, meta, parse_time, pod_ready, timestamp,
)
from kubesched.server.controllers.events import WARNING, EventRecorder
from kubesched.server.controllers.informer import Informer, Key, Obj

log = logging.getLogger(__name__)

DELETION_TIMEOUT = 120.0  # upstream DeletionTimeout: 2 minutes
# controller kind (apps/v1 or v1) -> the resource whose spec.replicas is its scale
SCALED = {"ReplicaSet": "replicasets.apps", "Deployment": "deployments.apps", "StatefulSet": "statefulsets.apps",
          "ReplicationController": "replicationcontrollers"}


class SyncError(Exception):
    """The budget's status cannot be computed (upstream's failSafe path)."""


def scaled_value(value: int | str, total: int, what: str) -> int:
    """``intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)``."""
    if isinstance(value, int):
        return value
    text = str(value)
    if not text.endswith("%") or not text[:-1].isdigit():
        raise SyncError(f"invalid value for IntOrString: invalid type: string is not a percentage ({what})")
    return math.ceil(int(text[:-1]) * total / 100)


def expected_and_desired(min_available: int | str | None, max_unavailable: int | str | None,
                         pod_count: int, scale: int) -> tuple[int, int]:
    """(expectedPods, desiredHealthy) as upstream's ``getExpectedPodCount``; ``scale`` is
    the summed scale of the pods' controllers (only read where upstream reads it)."""
    if max_unavailable is not None:
        desired = scale - scaled_value(max_unavailable, scale, "maxUnavailable")
        return scale, max(desired, 0)
    if isinstance(min_available, int):
        return pod_count, min_available
    if min_available is not None:
        return scale, scaled_value(min_available, scale, "minAvailable")
    return pod_count, 0


def disruptions_allowed(current: int, desired: int, expected: int) -> int:
    allowed = current - desired
    return 0 if expected <= 0 or allowed <= 0 else allowed


class DisruptionController(Controller[Key]):
    name = "disruption-controller"

    def __init__(self, registry: Registry, pdbs: Informer, pods: Informer, recorder: EventRecorder,
                 *, workers: int = 1) -> None:
        super().__init__(workers)
        self.registry = registry
        self.pdbs = pdbs
        self.pods = pods
        self.recorder = recorder
        self._decoded: dict[Key, tuple[Any, PodDisruptionBudget | None]] = {}
        pdbs.add_handler(self._on_pdb)
        pods.add_handler(self._on_pod)

    def _on_pdb(self, old: Obj | None, new: Obj | None) -> None:
        obj = new or old
        assert obj is not None
        self.queue.add(key_of(obj))

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        pods = [p for p in (old, new) if p is not None]
        if len(pods) == 2 and meta(pods[0]).get("labels") == meta(pods[1]).get("labels"):
            pods = pods[1:]  # a status update (most pod events): the same PDBs select both
        for pod in pods:
            ns = str(meta(pod).get("namespace") or "")
            labels = meta(pod).get("labels") or {}
            for raw in self.pdbs.objects(ns):
                sel = self._selector(raw)
                if sel is not None and sel.selector.matches(labels):
                    self.queue.add((ns, str(meta(raw).get("name"))))

    def _selector(self, raw: Obj) -> PodDisruptionBudget | None:
        """The PDB decoded once per resourceVersion (pod events would decode every PDB of their namespace)."""
        m = meta(raw)
        version = (m.get("uid"), m.get("resourceVersion"))
        hit = self._decoded.get(key_of(raw))
        if hit is None or hit[0] != version or version[1] is None:
            if len(self._decoded) > 4 * len(self.pdbs.objects()) + 64:
                self._decoded.clear()  # PDBs deleted since: start again
            hit = self._decoded[key_of(raw)] = (version, _selector(raw))
        return hit[1]

    # -- sync ---------------------------------------------------------------------------------
    def sync(self, key: Key) -> None:
        raw = self.pdbs.get(*key)
        if raw is None:
            return
        pdb = _selector(raw)
        if pdb is None:
            return
        pods = [p for p in self.pods.objects(key[0]) if pdb.selector.matches(meta(p).get("labels") or {})]
        now = self.registry.clock()
        disrupted, recheck = self._disrupted(raw, pods, now)
        try:
            scale = self._scale(raw, pdb, pods) if (pdb.max_unavailable is not None
                                                    or isinstance(pdb.min_available, str)) else 0
            expected, desired = expected_and_desired(pdb.min_available, pdb.max_unavailable, len(pods), scale)
        except SyncError as exc:
            self._write(key, raw, {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                                   "expectedPods": 0, "disruptedPods": disrupted}, ("SyncFailed", str(exc)))
            return
        current = sum(1 for p in pods if not deleting(p) and p.get("metadata", {}).get("name") not in disrupted
                      and pod_ready(p))
        allowed = disruptions_allowed(current, desired, expected)
        self._write(key, raw, {"disruptionsAllowed": allowed, "currentHealthy": current, "desiredHealthy": desired,
                               "expectedPods": expected, "disruptedPods": disrupted},
                    ("SufficientPods", "") if allowed > 0 else ("InsufficientPods", ""))
        if recheck is not None:
            self.queue.add_after(key, max(recheck - now, 0.1))

    def _disrupted(self, raw: Obj, pods: list[Obj], now: float) -> tuple[dict[str, str], float | None]:
        """Upstream ``buildDisruptedPodMap``: entries still pending, and when to look again."""
        names = {str(meta(p).get("name")): p for p in pods}
        out: dict[str, str] = {}
        recheck: float | None = None
        for name, stamp in ((raw.get("status") or {}).get("disruptedPods") or {}).items():
            pod = names.get(name)
            t = parse_time(stamp)
            if pod is None or deleting(pod) or t is None:
                continue
            expires = t + DELETION_TIMEOUT
            if expires < now:
                self.recorder.event(pod, WARNING, "NotDeleted", "Pod was expected by PDB "
                                    f"{meta(raw).get('namespace')}/{meta(raw).get('name')} to be deleted but it "
                                    "wasn't")
                continue
            out[name] = stamp
            recheck = expires if recheck is None else min(recheck, expires)
        return out, recheck

    def _scale(self, raw: Obj, pdb: PodDisruptionBudget, pods: list[Obj]) -> int:
        """Upstream ``getExpectedScale``: the summed scale of the pods' distinct controllers."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            ref = controller_ref(pod)
            if ref is None:
                unmanaged.append(str(meta(pod).get("name")))
                continue
            if str(ref.get("uid")) in scales:
                continue
            found = self._controller_scale(pdb.namespace, ref)
            if found is None:
                message = f'found no controllers for pod "{meta(pod).get("name")}"'
                self.recorder.event(raw, WARNING, "NoControllers", message)
                raise SyncError(message)
            uid, replicas = found
            scales[uid] = replicas
        if unmanaged:
            self.recorder.event(raw, WARNING, "UnmanagedPods",
                                f"Pods selected by this PodDisruptionBudget (selector: {pdb.selector}) were found to "
                                "be unmanaged. As a result, the status of the PDB cannot be calculated correctly, "
                                "which may result in undefined behavior. To account for these pods please set "
                                '".spec.minAvailable" field of the PDB to an integer value.')
        return sum(scales.values())

    def _controller_scale(self, namespace: str, ref: dict[str, Any]) -> tuple[str, int] | None:
        resource = SCALED.get(str(ref.get("kind")))
        if resource is None:
            return None
        try:
            owner = self.registry.get(resource, namespace, str(ref.get("name")))
        except ApiError:
            return None
        if str(meta(owner).get("uid")) != str(ref.get("uid")):
            return None
        if ref.get("kind") == "ReplicaSet":  # a Deployment's ReplicaSet: the Deployment's scale
            parent = controller_ref(owner)
            if parent is not None and parent.get("kind") == "Deployment":
                found = self._controller_scale(namespace, parent)
                if found is not None:
                    return found
        return str(ref.get("uid")), int((owner.get("spec") or {}).get("replicas") or 0)

    def _write(self, key: Key, raw: Obj, fields: dict[str, Any], cond: tuple[str, str]) -> None:
        status = copy.deepcopy(raw.get("status") or {})
        generation = meta(raw).get("generation") or 1
        old_cond = next((c for c in status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None)
        state = "True" if cond[0] == "SufficientPods" else "False"
        transition = (old_cond or {}).get("lastTransitionTime") if (old_cond or {}).get("status") == state else None
        condition = {"type": "DisruptionAllowed", "status": state, "reason": cond[0], "message": cond[1],
                     "observedGeneration": generation,
                     "lastTransitionTime": transition or timestamp(self.registry.clock())}
        status.update(fields)
        if not status.get("disruptedPods"):
            status.pop("disruptedPods", None)
        status["observedGeneration"] = generation
        status["conditions"] = [condition] + [c for c in status.get("conditions") or []
                                              if c.get("type") != "DisruptionAllowed"]
        if status == raw.get("status"):
            return
        new = dict(raw)
        new["status"] = status
        out = self.registry.update("poddisruptionbudgets.policy", key[0], key[1], new, subresource="status")
        self.expect(key, self.pdbs, out)


def _selector(raw: Obj) -> PodDisruptionBudget | None:
    try:
        return PodDisruptionBudget.from_dict(raw, validate=False)
    except DecodeError:
        return None
