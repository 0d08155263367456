"""resource.k8s.io/v1 objects (DeviceClass, ResourceSlice, ResourceClaim,
ResourceClaimTemplate) and batch/v1 Jobs: upstream's defaulting and the validation that
matters to the scheduler and the controllers.

Defaulting is upstream's ``pkg/apis/resource/v1/defaults.go``: a DeviceRequest's
``exactly`` (and every ``firstAvailable`` subrequest) gets ``allocationMode: ExactCount``
and, in that mode, ``count: 1``. Validation is what :mod:`kubesched.api.dra` parses (the
scheduler's informers and ``simulate`` read the same objects, so what is stored is what
they can read), plus the update rules of ``pkg/registry/resource/*/strategy.go``: a
claim's and a template's spec are immutable; a slice's driver, node name and pool name
too. A claim has a ``status`` subresource (the scheduler writes ``allocation`` and
``reservedFor`` there), so its main resource keeps the stored status and vice versa.

Jobs follow ``pkg/apis/batch/v1/defaults.go`` and ``pkg/registry/batch/job/strategy.go``:
``completions``/``parallelism`` 1 when neither is set, ``parallelism`` 1, ``backoffLimit``
6, ``completionMode: NonIndexed``, ``suspend: false``, ``podReplacementPolicy:
TerminatingOrFailed``; without ``manualSelector`` the selector is generated from the
Job's uid and the template gets the ``batch.kubernetes.io/controller-uid`` and
``batch.kubernetes.io/job-name`` labels (and their legacy unprefixed forms). The
template's ``restartPolicy`` must be ``Never`` or ``OnFailure``; the selector and the
template are immutable (upstream allows template changes only while suspended).
"""

from __future__ import annotations

from typing import Any

from kubesched.api.dra import (
    DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice, default_claim_spec,
)
from kubesched.server.apiserver.strategies.storage import typed, unsupported
from kubesched.server.apiserver.strategies.base import Context, StatusStrategy, Strategy, spec_of
from kubesched.server.apiserver.strategies.validation import Cause, invalid, required

JOB_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_JOB_LABELS = ("controller-uid", "job-name")
RESTART_POLICIES = ("Never", "OnFailure")


def _immutable(field: str, new: Any, old: Any) -> list[Cause]:
    return [] if new == old else [invalid(field, new, "field is immutable")]


class DeviceClassStrategy(Strategy):
    tracks_generation = True

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        return typed(DeviceClass, obj, [])


class ResourceSliceStrategy(Strategy):
    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        return typed(ResourceSlice, obj, [])

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: Context) -> list[Cause]:
        a, b = spec_of(new), spec_of(old)
        return (_immutable("spec.driver", a.get("driver"), b.get("driver"))
                + _immutable("spec.nodeName", a.get("nodeName"), b.get("nodeName"))
                + _immutable("spec.pool.name", (a.get("pool") or {}).get("name"), (b.get("pool") or {}).get("name")))


class ResourceClaimStrategy(StatusStrategy):
    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        super().prepare_create(obj, ctx)
        default_claim_spec(obj.get("spec"))

    def prepare_update(self, new: dict[str, Any], old: dict[str, Any], subresource: str) -> dict[str, Any]:
        out = super().prepare_update(new, old, subresource)
        if subresource == "":
            default_claim_spec(out.get("spec"))
        return out

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        return typed(ResourceClaim, obj, [])

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: Context) -> list[Cause]:
        return _immutable("spec", new.get("spec"), old.get("spec"))


class ResourceClaimTemplateStrategy(Strategy):
    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        default_claim_spec(spec_of(obj).get("spec"))

    def prepare_update(self, new: dict[str, Any], old: dict[str, Any], subresource: str) -> dict[str, Any]:
        out = super().prepare_update(new, old, subresource)
        default_claim_spec(spec_of(out).get("spec"))
        return out

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        if not isinstance(spec_of(obj).get("spec"), dict):
            return [required("spec.spec")]
        return typed(ResourceClaimTemplate, obj, [])

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: Context) -> list[Cause]:
        return _immutable("spec", new.get("spec"), old.get("spec"))


# -- batch/v1 Job -----------------------------------------------------------------------------
def default_job_spec(spec: dict[str, Any]) -> None:
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")


class JobStrategy(StatusStrategy):
    tracks_generation = True

    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        super().prepare_create(obj, ctx)
        spec = obj.setdefault("spec", {})
        if not isinstance(spec, dict):
            return
        default_job_spec(spec)
        meta = obj["metadata"]
        if spec.get("manualSelector") is not True:
            uid, name = str(meta.get("uid") or ""), str(meta.get("name") or "")
            template = spec.setdefault("template", {})
            if isinstance(template, dict):
                tmeta = template.setdefault("metadata", {})
                if isinstance(tmeta, dict):
                    labels = tmeta.setdefault("labels", {})
                    if isinstance(labels, dict):
                        labels.update({JOB_UID_LABEL: uid, JOB_NAME_LABEL: name,
                                       LEGACY_JOB_LABELS[0]: uid, LEGACY_JOB_LABELS[1]: name})
            spec["selector"] = {"matchLabels": {JOB_UID_LABEL: uid}}
        obj["status"] = {}

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        spec = spec_of(obj)
        causes: list[Cause] = []
        for key in ("completions", "parallelism", "backoffLimit", "activeDeadlineSeconds"):
            v = spec.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                causes.append(invalid(f"spec.{key}", v, "must be greater than or equal to 0"))
        if spec.get("completionMode") not in ("NonIndexed", "Indexed"):
            causes.append(unsupported("spec.completionMode", spec.get("completionMode"), ("Indexed", "NonIndexed")))
        template = spec.get("template")
        if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
            return causes + [required("spec.template")]
        policy = template["spec"].get("restartPolicy")
        if policy not in RESTART_POLICIES:
            causes.append(("FieldValueRequired", "spec.template.spec.restartPolicy",
                           "Required value: valid values: \"OnFailure\", \"Never\"") if policy is None else
                          unsupported("spec.template.spec.restartPolicy", policy, RESTART_POLICIES))
        if not isinstance(template["spec"].get("containers"), list) or not template["spec"]["containers"]:
            causes.append(required("spec.template.spec.containers"))
        return causes

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: Context) -> list[Cause]:
        a, b = spec_of(new), spec_of(old)
        causes = _immutable("spec.selector", a.get("selector"), b.get("selector"))
        if not b.get("suspend"):
            causes += _immutable("spec.template", a.get("template"), b.get("template"))
        for key in ("completions", "completionMode"):
            causes += _immutable(f"spec.{key}", a.get(key), b.get(key))
        return causes


DRA_STRATEGIES: dict[tuple[str, str], Strategy] = {
    ("resource.k8s.io", "deviceclasses"): DeviceClassStrategy(),
    ("resource.k8s.io", "resourceslices"): ResourceSliceStrategy(),
    ("resource.k8s.io", "resourceclaims"): ResourceClaimStrategy(),
    ("resource.k8s.io", "resourceclaimtemplates"): ResourceClaimTemplateStrategy(),
    ("batch", "jobs"): JobStrategy(),
}
