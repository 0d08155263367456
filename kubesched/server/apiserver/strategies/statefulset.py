"""apps/v1 StatefulSets: upstream's defaulting (``SetDefaults_StatefulSet``) and the spec
fields an update may change (``ValidateStatefulSetUpdate``).

A StatefulSet is a workload like a ReplicaSet (selector, template, replicas, ``scale``
subresource), plus ``volumeClaimTemplates``: each gets a claim's defaulting (volume mode
``Filesystem``, phase ``Pending``) and validation, since the StatefulSet controller
creates a PVC from it per replica. Defaults: ``podManagementPolicy: OrderedReady``,
``updateStrategy: RollingUpdate`` with partition 0, ``revisionHistoryLimit: 10`` and the
``persistentVolumeClaimRetentionPolicy`` that keeps claims (``Retain`` when deleted and
when scaled down).
"""

from __future__ import annotations

import copy
from typing import Any

from kubesched.server.apiserver.strategies.apps import WorkloadStrategy
from kubesched.server.apiserver.strategies.storage import unsupported, validate_claim_spec
from kubesched.server.apiserver.strategies.base import Context, spec_of
from kubesched.server.apiserver.strategies.validation import Cause, forbidden

POD_MANAGEMENT = ("OrderedReady", "Parallel")
RETENTION = ("Delete", "Retain")
_UPDATABLE = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
              "minReadySeconds")


def default_statefulset_spec(spec: dict[str, Any]) -> None:
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            ru = strategy.setdefault("rollingUpdate", {})
            if isinstance(ru, dict):
                ru.setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    policy = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    if isinstance(policy, dict):
        policy.setdefault("whenDeleted", "Retain")
        policy.setdefault("whenScaled", "Retain")
    for t in spec.get("volumeClaimTemplates") or []:
        if isinstance(t, dict):
            t.setdefault("apiVersion", "v1")
            t.setdefault("kind", "PersistentVolumeClaim")
            if isinstance(t.get("spec"), dict):
                t["spec"].setdefault("volumeMode", "Filesystem")
            t.setdefault("status", {"phase": "Pending"})


class StatefulSetStrategy(WorkloadStrategy):
    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        super().prepare_create(obj, ctx)
        spec = obj.get("spec")
        if isinstance(spec, dict):
            default_statefulset_spec(spec)

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        causes = super().validate(obj, ctx)
        spec = spec_of(obj)
        policy = spec.get("podManagementPolicy")
        if policy not in POD_MANAGEMENT:
            causes.append(unsupported("spec.podManagementPolicy", policy, POD_MANAGEMENT))
        retention = spec.get("persistentVolumeClaimRetentionPolicy") or {}
        for key in ("whenDeleted", "whenScaled"):
            if isinstance(retention, dict) and retention.get(key) not in RETENTION:
                causes.append(unsupported(f"spec.persistentVolumeClaimRetentionPolicy.{key}",
                                          retention.get(key), RETENTION))
        templates = spec.get("volumeClaimTemplates") or []
        names: set[str] = set()
        for i, t in enumerate(templates if isinstance(templates, list) else []):
            path = f"spec.volumeClaimTemplates[{i}]"
            name = ((t or {}).get("metadata") or {}).get("name") if isinstance(t, dict) else None
            if not name:
                causes.append(("FieldValueRequired", f"{path}.metadata.name", "Required value: name or "
                               "generateName is required"))
            elif name in names:
                causes.append(("FieldValueDuplicate", f"{path}.metadata.name", f'Duplicate value: "{name}"'))
            names.add(str(name))
            causes += validate_claim_spec((t or {}).get("spec") if isinstance(t, dict) else None, f"{path}.spec")
        return causes

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: Context) -> list[Cause]:
        causes = super().validate_update(new, old, ctx)
        a, b = copy.deepcopy(spec_of(new)), copy.deepcopy(spec_of(old))
        for key in _UPDATABLE:
            a.pop(key, None)
            b.pop(key, None)
        if a != b:
            causes.append(forbidden("spec", "updates to statefulset spec for fields other than 'replicas', "
                                    "'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' "
                                    "and 'minReadySeconds' are forbidden"))
        return causes
