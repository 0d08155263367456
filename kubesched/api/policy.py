"""The objects beside pods and nodes that scheduling decisions read: PriorityClass
(scheduling.k8s.io), PodDisruptionBudget (policy) and Namespace (core), decoded and
validated as the API server does."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.fields import ANNOTATIONS, int_field, map_field
from kubesched.api.selectors import LabelSelector
from kubesched.api.validation import validate_namespace, validate_pdb, validate_priority_class


@dataclass(frozen=True, slots=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool
    preemption_policy: str

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, validate: bool = True) -> "PriorityClass":
        """Decode and validate (``ValidatePriorityClass``); an absent value is 0, as upstream's
        non-optional int32 decodes."""
        meta = raw.get("metadata") or {}
        if not isinstance(meta, Mapping):
            raise DecodeError("must be an object", field="metadata")
        value = int_field(raw.get("value"), "value")
        if not -(2**31) <= value < 2**31:
            raise DecodeError(f"json: cannot unmarshal number {value} into Go struct field "
                              "PriorityClass.value of type int32", field="value")
        pp = raw.get("preemptionPolicy")
        if validate:
            validate_priority_class(meta, str(meta.get("name") or ""), value, bool(raw.get("globalDefault")),
                                    None if pp is None else str(pp))
        elif not meta.get("name"):
            raise DecodeError("Required value: name or generateName is required", field="metadata.name")
        return cls(str(meta["name"]), value, bool(raw.get("globalDefault")), str(pp or "PreemptLowerPriority"))


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    namespace: str
    name: str
    selector: LabelSelector
    min_available: int | str | None
    max_unavailable: int | str | None
    disruptions_allowed: int | None  # status.disruptionsAllowed, when the status is given

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, validate: bool = True) -> "PodDisruptionBudget":
        """Decode and validate (policy ``ValidatePodDisruptionBudget``, then metadata)."""
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        if not isinstance(meta, Mapping) or not isinstance(spec, Mapping):
            raise DecodeError("metadata and spec must be objects")
        status = raw.get("status")
        allowed = None
        if isinstance(status, Mapping) and "disruptionsAllowed" in status:
            allowed = int_field(status.get("disruptionsAllowed"), "status.disruptionsAllowed")
        for key in ("minAvailable", "maxUnavailable"):
            v = spec.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, str))):
                raise DecodeError("must be an integer or a percentage", field=f"spec.{key}")
        if validate:
            validate_pdb(meta, map_field(meta.get("labels"), "metadata.labels"),
                         map_field(meta.get("annotations"), "metadata.annotations", ANNOTATIONS), spec)
        elif not meta.get("name"):
            raise DecodeError("Required value: name or generateName is required", field="metadata.name")
        # A PDB with a nil selector matches nothing; an empty one matches every pod (policy/v1).
        sel = LabelSelector.parse(spec.get("selector"), "spec.selector")
        return cls(str(meta.get("namespace") or "default"), str(meta["name"]), sel,
                   spec.get("minAvailable"), spec.get("maxUnavailable"), allowed)


@dataclass(frozen=True, slots=True)
class Namespace:
    name: str
    labels: dict[str, str]

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, validate: bool = True) -> "Namespace":
        """Decode and validate (``ValidateNamespace``)."""
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        if not isinstance(meta, Mapping) or not isinstance(spec, Mapping):
            raise DecodeError("metadata and spec must be objects")
        labels = map_field(meta.get("labels"), "metadata.labels")
        if validate:
            validate_namespace(meta, labels, map_field(meta.get("annotations"), "metadata.annotations", ANNOTATIONS),
                               spec)
        elif not meta.get("name"):
            raise DecodeError("Required value: name or generateName is required", field="metadata.name")
        labels.setdefault("kubernetes.io/metadata.name", str(meta["name"]))
        return cls(str(meta["name"]), labels)
