"""``PodGroup`` (scheduling.x-k8s.io/v1alpha1), the gang of kubernetes-sigs/scheduler-plugins'
Coscheduling: pods that carry the ``scheduling.x-k8s.io/pod-group`` label with the group's
name are placed all together (``minMember`` of them) or not at all."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.resources import ResourceList, parse_resource_list, to_resource
from kubesched.api.validation import string_map, validate_pod_group

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
    def from_dict(cls, raw: Mapping[str, Any], *, validate: bool = True) -> "PodGroup":
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        if not isinstance(meta, Mapping) or not isinstance(spec, Mapping):
            raise DecodeError("metadata and spec must be objects")
        if validate:
            validate_pod_group(meta, string_map(meta.get("labels"), "metadata.labels", "ObjectMeta.metadata.labels"),
                               string_map(meta.get("annotations"), "metadata.annotations",
                                          "ObjectMeta.metadata.annotations"))
        elif not meta.get("name"):
            raise DecodeError("Required value: name or generateName is required", field="metadata.name")
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
