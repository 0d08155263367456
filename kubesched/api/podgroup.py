"""``PodGroup`` (scheduling.x-k8s.io/v1alpha1), the gang of kubernetes-sigs/scheduler-plugins'
Coscheduling: pods that carry the ``scheduling.x-k8s.io/pod-group`` label with the group's
name are placed all together (``minMember`` of them) or not at all."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.resources import ResourceList, parse_resource_list, to_resource

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
API_VERSION = "scheduling.x-k8s.io/v1alpha1"


@dataclass(frozen=True, slots=True)
class PodGroup:
    namespace: str
    name: str
    min_member: int
    schedule_timeout_seconds: int | None
    min_resources: ResourceList
    creation_timestamp: str
    raw: Mapping[str, Any]

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> "PodGroup":
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        if not meta.get("name"):
            raise DecodeError("name is required", field="metadata.name")
        mm = spec.get("minMember", 0)
        if isinstance(mm, bool) or not isinstance(mm, int) or mm < 0:
            raise DecodeError("must be a non-negative integer", field="spec.minMember")
        timeout = spec.get("scheduleTimeoutSeconds")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 0):
            raise DecodeError("must be a non-negative integer", field="spec.scheduleTimeoutSeconds")
        return cls(str(meta.get("namespace") or "default"), str(meta["name"]), mm, timeout,
                   to_resource(parse_resource_list(spec.get("minResources"), "spec.minResources")),
                   str(meta.get("creationTimestamp") or ""), raw)


def pod_group_name(labels: Mapping[str, str]) -> str:
    return labels.get(POD_GROUP_LABEL, "")
