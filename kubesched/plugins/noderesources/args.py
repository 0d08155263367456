"""Plugin args of NodeResourcesFit and NodeResourcesBalancedAllocation.

Mirrors upstream's ``NodeResourcesFitArgs`` / ``NodeResourcesBalancedAllocationArgs``
(``apis/config/types_pluginargs.go``) and their v1 decoding and defaults
(``v1/defaults.go``); validation is in :mod:`.validation`. ``parse_*`` turn a profile's
raw pluginConfig args into frozen dataclasses, or raise ProfileError naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.framework.errors import ProfileError
from kubesched.plugins.noderesources.validation import (
    join_path, raise_errors, validate_balanced_allocation_args, validate_fit_args,
)

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    name: str
    weight: int


@dataclass(frozen=True, slots=True)
class UtilizationShapePoint:
    utilization: int
    score: int


@dataclass(frozen=True, slots=True)
class ScoringStrategy:
    type: str
    resources: tuple[ResourceSpec, ...]
    # RequestedToCapacityRatio's shape; None when ``requestedToCapacityRatio`` is unset.
    shape: tuple[UtilizationShapePoint, ...] | None = None


DEFAULT_RESOURCES = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


@dataclass(frozen=True, slots=True)
class NodeResourcesFitArgs:
    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = ScoringStrategy(LEAST_ALLOCATED, DEFAULT_RESOURCES)


@dataclass(frozen=True, slots=True)
class NodeResourcesBalancedAllocationArgs:
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES


# -- decoding and defaulting (v1 -> internal, SetDefaults_*) ---------------------------------
_FIT_FIELDS = {"apiVersion", "kind", "ignoredResources", "ignoredResourceGroups", "scoringStrategy"}
_BA_FIELDS = {"apiVersion", "kind", "resources"}


def _obj(raw: Any, field: str, allowed: set[str]) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise ProfileError("must be an object", field=field)
    for k in raw:
        if k not in allowed:
            raise ProfileError(f'strict decoding error: unknown field "{join_path(field, str(k))}"',
                               field=field)
    return raw


def _list(raw: Any, field: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ProfileError("must be a list", field=field)
    return raw


def _int(raw: Any, field: str) -> int:
    if raw is None:
        return 0
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ProfileError("must be an integer", field=field)
    return raw


def _str(raw: Any, field: str) -> str:
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise ProfileError("must be a string", field=field)
    return raw


def _resources(raw: Any, field: str) -> tuple[ResourceSpec, ...]:
    """Resource specs with a weight of 0 (or unset) defaulted to 1."""
    out = []
    for i, r in enumerate(_list(raw, field)):
        f = f"{field}[{i}]"
        r = _obj(r, f, {"name", "weight"})
        out.append(ResourceSpec(_str(r.get("name"), f"{f}.name"), _int(r.get("weight"), f"{f}.weight") or 1))
    return tuple(out)


def _strategy(raw: Any, field: str) -> ScoringStrategy:
    if raw is None:
        return ScoringStrategy(LEAST_ALLOCATED, DEFAULT_RESOURCES)
    raw = _obj(raw, field, {"type", "resources", "requestedToCapacityRatio"})
    resources = _resources(raw.get("resources"), f"{field}.resources") or DEFAULT_RESOURCES
    shape = None
    rtcr = raw.get("requestedToCapacityRatio")
    if rtcr is not None:
        rf = f"{field}.requestedToCapacityRatio"
        rtcr = _obj(rtcr, rf, {"shape"})
        points = []
        for i, p in enumerate(_list(rtcr.get("shape"), f"{rf}.shape")):
            pf = f"{rf}.shape[{i}]"
            p = _obj(p, pf, {"utilization", "score"})
            points.append(UtilizationShapePoint(_int(p.get("utilization"), f"{pf}.utilization"),
                                                _int(p.get("score"), f"{pf}.score")))
        shape = tuple(points)
    return ScoringStrategy(_str(raw.get("type"), f"{field}.type"), resources, shape)


def parse_fit_args(raw: Mapping[str, Any] | NodeResourcesFitArgs | None, path: str = "") -> NodeResourcesFitArgs:
    """Decode, default and validate NodeResourcesFit's pluginConfig args."""
    if isinstance(raw, NodeResourcesFitArgs):
        args = raw
    elif raw is None:
        args = NodeResourcesFitArgs()
    else:
        raw = _obj(raw, path, _FIT_FIELDS)
        args = NodeResourcesFitArgs(
            tuple(_str(x, join_path(path, f"ignoredResources[{i}]"))
                  for i, x in enumerate(_list(raw.get("ignoredResources"), join_path(path, "ignoredResources")))),
            tuple(_str(x, join_path(path, f"ignoredResourceGroups[{i}]"))
                  for i, x in enumerate(_list(raw.get("ignoredResourceGroups"),
                                              join_path(path, "ignoredResourceGroups")))),
            _strategy(raw.get("scoringStrategy"), join_path(path, "scoringStrategy")))
    raise_errors(validate_fit_args(args, path))
    s = args.scoring_strategy
    if s.type == REQUESTED_TO_CAPACITY_RATIO and s.shape is None:
        # Upstream dereferences the missing parameter (a crash); refuse the profile instead.
        raise ProfileError("Required value: requestedToCapacityRatio must be set for the "
                           "RequestedToCapacityRatio strategy",
                           field=join_path(path, "scoringStrategy.requestedToCapacityRatio"))
    return args


def parse_balanced_allocation_args(raw: Mapping[str, Any] | NodeResourcesBalancedAllocationArgs | None,
                                   path: str = "") -> NodeResourcesBalancedAllocationArgs:
    """Decode, default and validate NodeResourcesBalancedAllocation's pluginConfig args."""
    if isinstance(raw, NodeResourcesBalancedAllocationArgs):
        args = raw
    elif raw is None:
        args = NodeResourcesBalancedAllocationArgs()
    else:
        raw = _obj(raw, path, _BA_FIELDS)
        args = NodeResourcesBalancedAllocationArgs(
            _resources(raw.get("resources"), join_path(path, "resources")) or DEFAULT_RESOURCES)
    raise_errors(validate_balanced_allocation_args(args, path))
    return args
