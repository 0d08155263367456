"""Validation of the noderesources plugin args, with apimachinery's field errors.

Upstream's ``validation_pluginargs.go`` for NodeResourcesFitArgs and
NodeResourcesBalancedAllocationArgs, and the pieces of apimachinery it relies on
(``IsQualifiedName``, ``field.Error`` formatting, aggregate errors), so that a bad profile
is refused with upstream's field path and message.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kubesched.api.validation.strings import is_qualified_name
from kubesched.framework.errors import ProfileError

if TYPE_CHECKING:
    from kubesched.plugins.noderesources.args import (
        NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs, ResourceSpec, UtilizationShapePoint,
    )

SUPPORTED_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")  # sorted
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100

# -- field errors (apimachinery field.Error) ------------------------------------------------
FieldError = tuple[str, str]  # (field path, body)


def join_path(path: str, rel: str) -> str:
    if not path:
        return rel
    return path + rel if rel.startswith("[") else f"{path}.{rel}"


def _fmt_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return json.dumps(v, ensure_ascii=False)


def invalid(field: str, value: object, detail: str) -> FieldError:
    return field, f"Invalid value: {_fmt_value(value)}: {detail}"


def raise_errors(errors: Sequence[FieldError]) -> None:
    """Raise ProfileError for the (de-duplicated) errors, as upstream's aggregate prints them."""
    seen: list[FieldError] = []
    for e in errors:
        if e not in seen:
            seen.append(e)
    if not seen:
        return
    if len(seen) == 1:
        raise ProfileError(seen[0][1], field=seen[0][0])
    raise ProfileError("[" + ", ".join(f"{f}: {b}" if f else b for f, b in seen) + "]")


# -- qualified names (apimachinery IsQualifiedName) -----------------------------------------
def is_extended_resource_name(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``: domain-prefixed, outside kubernetes.io, quota-able."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


# -- validation -----------------------------------------------------------------------------
def _validate_resources(resources: Sequence[ResourceSpec], path: str) -> list[FieldError]:
    errs = []
    for i, r in enumerate(resources):
        if r.weight <= 0 or r.weight > 100:
            errs.append(invalid(f"{path}[{i}].weight", r.weight,
                                f"resource weight of {r.name} not in valid range (0, 100]"))
    return errs


def validate_function_shape(shape: Sequence[UtilizationShapePoint], path: str) -> list[FieldError]:
    if not shape:
        return [(path, "Required value: at least one point must be specified")]
    errs: list[FieldError] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(invalid(f"{path}[{i}].utilization", shape[i].utilization,
                                "values must be sorted in increasing order"))
            break
    for i, p in enumerate(shape):
        if not 0 <= p.utilization <= MAX_UTILIZATION:
            errs.append(invalid(f"{path}[{i}].utilization", p.utilization, "not in valid range [0, 100]"))
        if not 0 <= p.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(invalid(f"{path}[{i}].score", p.score, "not in valid range [0, 10]"))
    return errs


def validate_fit_args(args: NodeResourcesFitArgs, path: str = "") -> list[FieldError]:
    """``ValidateNodeResourcesFitArgs``: the errors, in upstream's order."""
    errs: list[FieldError] = []
    for i, res in enumerate(args.ignored_resources):
        f = join_path(path, f"ignoredResources[{i}]")
        errs.extend(invalid(f, res, m) for m in is_qualified_name(res))
    for i, group in enumerate(args.ignored_resource_groups):
        f = join_path(path, f"ignoredResourceGroups[{i}]")
        if "/" in group:
            errs.append(invalid(f, group, "resource group name can't contain '/'"))
        errs.extend(invalid(f, group, m) for m in is_qualified_name(group))
    s = args.scoring_strategy
    sp = join_path(path, "scoringStrategy")
    if s.type not in SUPPORTED_STRATEGIES:
        supported = ", ".join(json.dumps(t) for t in SUPPORTED_STRATEGIES)
        errs.append((f"{sp}.type", f"Unsupported value: {_fmt_value(s.type)}: supported values: {supported}"))
    errs.extend(_validate_resources(s.resources, f"{sp}.resources"))
    if s.shape is not None:
        errs.extend(validate_function_shape(s.shape, f"{sp}.shape"))
    return errs


def validate_balanced_allocation_args(args: NodeResourcesBalancedAllocationArgs,
                                      path: str = "") -> list[FieldError]:
    """``ValidateNodeResourcesBalancedAllocationArgs``."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, r in enumerate(args.resources):
        f = join_path(path, f"resources[{i}]")
        if r.name in seen:
            errs.append((f"{f}.name", f"Duplicate value: {_fmt_value(r.name)}"))
        else:
            seen.add(r.name)
        if r.weight != 1:
            errs.append(invalid(f"{f}.weight", r.weight, "must be 1"))
    return errs


