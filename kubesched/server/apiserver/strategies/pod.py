"""Pods and nodes: the objects the scheduler reads, defaulted and validated exactly as
``kubesched simulate`` reads them (:mod:`kubesched.api.defaults`, :mod:`kubesched.api.objects`).

On create a pod goes through upstream's defaulting (``SetDefaults_Pod``/``PodSpec``/
``Container``: restart policy, grace period, DNS policy, image pull policy, ...), then the
shared :func:`~kubesched.api.defaults.apply_pod_defaults` (request defaulting, quantity
rounding, scheduler name, Priority admission against the stored PriorityClasses,
DefaultTolerationSeconds), and its status is reset to ``Pending`` with its QoS class, as
``podStrategy.PrepareForCreate`` does. Updates follow ``ValidatePodUpdate``: only images,
``activeDeadlineSeconds``, tolerations (additions), the grace period and scheduling gates
(removals; with gates, node selector and affinity too) may change; ``spec.nodeName`` is
set only through the ``binding`` subresource.
"""

from __future__ import annotations

import copy
import threading
from typing import Any

from kubesched.api.defaults import (
    DEFAULT_TOLERATION_SECONDS, TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE, apply_node_defaults,
    apply_pod_defaults,
)
from kubesched.api.podclaims import check_container_claims
from kubesched.api.errors import DecodeError
from kubesched.api.objects import Node, Pod
from kubesched.server.apiserver.strategies.base import Admission, Context, Strategy, spec_of, with_new_status
from kubesched.server.apiserver.strategies.validation import (
    Cause, decode_cause, forbidden, invalid, name_problems, required,
)

_ADMISSION_FIELDS = ("spec.priorityClassName", "spec.priority", "spec.preemptionPolicy")
_CONTAINER_KINDS = ("initContainers", "containers", "ephemeralContainers")
_UPDATE_FORBIDDEN = ("pod updates may not change fields other than `spec.containers[*].image`,"
                     "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
                     "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
                     "(allow it to be set to 1 if it was previously negative)")


def _pull_policy(image: str) -> str:
    name = image.rsplit("/", 1)[-1]
    if "@" in name:
        return "IfNotPresent"
    tag = name.split(":", 1)[1] if ":" in name else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def default_pod_spec(spec: dict[str, Any]) -> None:
    """Upstream ``SetDefaults_PodSpec`` and ``SetDefaults_Container`` (the parts shown by
    kubectl and read by controllers); also used for pod templates."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    for key in _CONTAINER_KINDS:
        for c in spec.get(key) or []:
            if not isinstance(c, dict):
                continue
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("terminationMessagePolicy", "File")
            if isinstance(c.get("image"), str):
                c.setdefault("imagePullPolicy", _pull_policy(c["image"]))
            if key != "ephemeralContainers":
                c.setdefault("resources", {})
            for p in c.get("ports") or []:
                if isinstance(p, dict):
                    p.setdefault("protocol", "TCP")


def default_tolerations(spec: dict[str, Any]) -> None:
    """The DefaultTolerationSeconds admission plugin (on create and update): tolerate
    not-ready and unreachable NoExecute taints for 300 s unless the pod already does."""
    tols = spec.get("tolerations")
    if tols is not None and not isinstance(tols, list):
        return
    tols = list(tols or [])
    for key in (TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE):
        if not any(isinstance(t, dict) and (t.get("key") or "") in ("", key) and (t.get("effect") or "") in
                   ("", "NoExecute") for t in tols):
            tols.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                         "tolerationSeconds": DEFAULT_TOLERATION_SECONDS})
    if tols:
        spec["tolerations"] = tols


def qos_class(pod: Pod) -> str:
    """``qos.GetPodQOS``: Guaranteed, Burstable or BestEffort, from cpu and memory."""
    containers = pod.containers + pod.init_containers
    any_set = False
    guaranteed = True
    for c in containers:
        for res in ("cpu", "memory"):
            req, lim = c.requests.get(res), c.limits.get(res)
            if (req is not None and req.amount != 0) or (lim is not None and lim.amount != 0):
                any_set = True
            if lim is None or (req is not None and req.amount != lim.amount):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def validate_pod_spec(spec: Any, prefix: str) -> list[Cause]:
    """What the scheduler and kubectl rely on beyond what :class:`Pod` parses."""
    causes: list[Cause] = []
    if not isinstance(spec, dict):
        return [required(prefix)]
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        causes.append(required(f"{prefix}.containers"))
    seen: set[str] = set()
    for key in _CONTAINER_KINDS:
        items = spec.get(key) or []
        if not isinstance(items, list):
            continue
        for i, c in enumerate(items):
            path = f"{prefix}.{key}[{i}]"
            if not isinstance(c, dict):
                causes.append(invalid(path, c, "must be an object"))
                continue
            name = c.get("name")
            if not name or not isinstance(name, str):
                causes.append(required(f"{path}.name"))
            else:
                causes += [invalid(f"{path}.name", name, m) for m in name_problems(name, "label")]
                if name in seen:
                    causes.append(("FieldValueDuplicate", f"{path}.name", f'Duplicate value: "{name}"'))
                seen.add(name)
            if key != "ephemeralContainers" and not c.get("image"):
                causes.append(required(f"{path}.image"))
    node = spec.get("nodeName")
    if node:
        causes += [invalid(f"{prefix}.nodeName", node, m) for m in name_problems(str(node), "subdomain")]
    return causes


def parse_causes(fn: Any, obj: dict[str, Any], prefix: str = "") -> list[Cause]:
    try:
        fn(obj)
    except DecodeError as exc:
        return [decode_cause(exc, obj, prefix)]
    return []


class PodStrategy(Strategy):
    status_subresource = True
    tracks_generation = True

    def __init__(self) -> None:
        super().__init__()
        # the pod prepare_create parsed without error, for the validate() that follows it on
        # the same thread (Registry._prepare_create): parsing a pod twice was ~6% of a create
        self._parsed = threading.local()

    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict):
            default_pod_spec(spec)
        try:
            out = apply_pod_defaults(obj, ctx.priority_classes())
        except DecodeError as exc:
            if exc.field in _ADMISSION_FIELDS:
                raise Admission(exc.message) from None
            raise
        obj.clear()
        obj.update(out)
        obj["status"] = {"phase": "Pending"}
        self._parsed.obj = None
        try:
            obj["status"]["qosClass"] = qos_class(Pod.from_dict(obj))
            self._parsed.obj = obj  # only well-formed server fields are added below
        except DecodeError:
            pass  # reported by validate()
        if isinstance(spec, dict) and spec.get("schedulingGates"):  # upstream applySchedulingGatedCondition
            obj["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                                            "message": "Scheduling is blocked due to non-empty scheduling gates",
                                            "lastProbeTime": None, "lastTransitionTime": ctx.timestamp()}]

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        if getattr(self._parsed, "status_write", None) is obj:  # the stored spec and metadata (prepare_update):
            self._parsed.status_write = None  # validated when written; the status' types by decoding the body
            return []
        causes = validate_pod_spec(obj.get("spec"), "spec")
        if causes:
            return causes
        # spec.resourceClaims and the containers' resources.claims (DRA), as upstream validates them
        parsed = getattr(self._parsed, "obj", None) is obj
        self._parsed.obj = None
        return parse_causes(check_container_claims, obj) or ([] if parsed else parse_causes(Pod.from_dict, obj))

    def prepare_update(self, new: dict[str, Any], old: dict[str, Any], subresource: str) -> dict[str, Any]:
        if subresource == "status":
            # the stored pod with the new status, as the base class makes it, without its deep
            # copy: ``old`` is the registry's own fresh parse, read and then dropped, and
            # nothing below changes the parts shared with it (only the top-level metadata
            # fields, copied here). A kubelet writes one status per pod start.
            out = with_new_status({**old, "metadata": dict(old["metadata"])}, new)
            self._parsed.status_write = out
            return out
        out = super().prepare_update(new, old, subresource)
        if subresource == "" and isinstance(out.get("spec"), dict):
            default_pod_spec(out["spec"])
            default_tolerations(out["spec"])  # DefaultTolerationSeconds admits updates too
        return out

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: Context) -> list[Cause]:
        if spec_of(new) is spec_of(old):  # a status write keeps the very spec (prepare_update)
            return []
        a, b = copy.deepcopy(spec_of(new)), spec_of(old)
        for key in ("containers", "initContainers"):
            na, ob = a.get(key) or [], b.get(key) or []
            if len(na) == len(ob):
                for c, o in zip(na, ob):
                    if isinstance(c, dict) and isinstance(o, dict):
                        c["image"] = o.get("image")
        for key in ("activeDeadlineSeconds", "terminationGracePeriodSeconds"):
            a.pop(key, None)
        b = {k: v for k, v in b.items() if k not in ("activeDeadlineSeconds", "terminationGracePeriodSeconds")}
        causes: list[Cause] = []
        old_tols = b.get("tolerations") or []
        new_tols = a.pop("tolerations", None) or []
        if any(t not in new_tols for t in old_tols):
            causes.append(forbidden("spec.tolerations", "existing toleration can not be modified except "
                                                        "its tolerationSeconds"))
        b = {k: v for k, v in b.items() if k != "tolerations"}
        old_gates = [g.get("name") for g in b.get("schedulingGates") or [] if isinstance(g, dict)]
        new_gates = [g.get("name") for g in a.pop("schedulingGates", None) or [] if isinstance(g, dict)]
        if any(g not in old_gates for g in new_gates):
            causes.append(forbidden("spec.schedulingGates", "only deletion is allowed, but found new "
                                                            "scheduling gate"))
        b = {k: v for k, v in b.items() if k != "schedulingGates"}
        if old_gates:  # mutable scheduling directives of a gated pod
            for key in ("nodeSelector", "affinity"):
                a.pop(key, None)
                b.pop(key, None)
        if a != b:
            causes.append(forbidden("spec", _UPDATE_FORBIDDEN))
        return causes


class NodeStrategy(Strategy):
    """Nodes may be created with their status (kubelets do); defaults apply on every write."""

    status_subresource = True

    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        out = apply_node_defaults(obj)
        obj.clear()
        obj.update(out)

    def prepare_update(self, new: dict[str, Any], old: dict[str, Any], subresource: str) -> dict[str, Any]:
        out = super().prepare_update(new, old, subresource)
        return apply_node_defaults(out)

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        return parse_causes(Node.from_dict, obj)
