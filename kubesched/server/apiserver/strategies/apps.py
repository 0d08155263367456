"""apps/v1 Deployments and ReplicaSets: defaulting, validation, and the ``scale``
subresource's ``autoscaling/v1`` Scale view.

The API server only stores them; the controllers that create ReplicaSets and pods
(``kubesched/server/controllers``, added separately) watch them through the registry
and write ``status`` through the status subresource, as kube-controller-manager does.
``metadata.generation`` increments on every spec change so ``kubectl rollout status``
can compare it with ``status.observedGeneration``.
"""

from __future__ import annotations

import copy
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.objects import Pod
from kubesched.api.selectors import LabelSelector
from kubesched.server.apiserver.strategies.pod import default_pod_spec, validate_pod_spec
from kubesched.server.apiserver.strategies.base import Context, StatusStrategy, spec_of
from kubesched.server.apiserver.strategies.validation import Cause, decode_cause, invalid, required


def selector_string(selector: Any) -> str:
    """A metav1.LabelSelector as the string form (``a=b,c in (d)``) Scale.status uses."""
    if not isinstance(selector, dict):
        return ""
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for e in selector.get("matchExpressions") or []:
        key, op, values = e.get("key"), e.get("operator"), sorted(e.get("values") or [])
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


class WorkloadStrategy(StatusStrategy):
    """Shared by Deployments, ReplicaSets, StatefulSets and DaemonSets (``scaled = False``:
    no ``spec.replicas``)."""
    tracks_generation = True
    scaled = True

    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        super().prepare_create(obj, ctx)
        spec = obj.setdefault("spec", {})
        if not isinstance(spec, dict):
            return
        if self.scaled:
            spec.setdefault("replicas", 1)
        template = spec.get("template")
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            default_pod_spec(template["spec"])

    def prepare_update(self, new: dict[str, Any], old: dict[str, Any], subresource: str) -> dict[str, Any]:
        out = super().prepare_update(new, old, subresource)
        template = spec_of(out).get("template")
        if subresource == "" and isinstance(template, dict) and isinstance(template.get("spec"), dict):
            default_pod_spec(template["spec"])
        return out

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [required("spec")]
        causes: list[Cause] = []
        replicas = spec.get("replicas")
        if self.scaled and (isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0):
            causes.append(invalid("spec.replicas", replicas, "must be greater than or equal to 0"))
        sel_raw = spec.get("selector")
        try:
            selector = LabelSelector.parse(sel_raw, "spec.selector")
        except DecodeError as exc:
            return causes + [decode_cause(exc, obj)]
        if sel_raw is None:
            causes.append(required("spec.selector"))
        elif selector.empty:
            causes.append(invalid("spec.selector", sel_raw, "empty selector is invalid for deployment"))
        template = spec.get("template")
        if not isinstance(template, dict):
            return causes + [required("spec.template")]
        labels = (template.get("metadata") or {}).get("labels") or {}
        if sel_raw is not None and not selector.matches(labels):
            causes.append(invalid("spec.template.metadata.labels", labels,
                                  "`selector` does not match template `labels`"))
        causes += validate_pod_spec(template.get("spec"), "spec.template.spec")
        if causes:
            return causes
        fake = {"metadata": {"name": "template", **copy.deepcopy(template.get("metadata") or {})},
                "spec": template.get("spec")}
        try:
            Pod.from_dict(fake)
        except DecodeError as exc:
            causes.append(decode_cause(exc, fake, "spec.template"))
        return causes

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: Context) -> list[Cause]:
        if spec_of(new).get("selector") != spec_of(old).get("selector"):
            return [invalid("spec.selector", spec_of(new).get("selector"), "field is immutable")]
        return []

    def to_scale(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        status = obj.get("status") or {}
        return {
            "kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                              "creationTimestamp") if k in meta},
            "spec": {"replicas": spec_of(obj).get("replicas", 0)},
            "status": {"replicas": status.get("replicas", 0),
                       "selector": selector_string(spec_of(obj).get("selector"))},
        }


class DeploymentStrategy(WorkloadStrategy):
    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        super().prepare_create(obj, ctx)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        strategy = spec.setdefault("strategy", {})
        if isinstance(strategy, dict):
            strategy.setdefault("type", "RollingUpdate")
            if strategy["type"] == "RollingUpdate":
                ru = strategy.setdefault("rollingUpdate", {})
                ru.setdefault("maxUnavailable", "25%")
                ru.setdefault("maxSurge", "25%")
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)


class ReplicaSetStrategy(WorkloadStrategy):
    pass
