"""``CoschedulingArgs``: the plugin's pluginConfig args with scheduler-plugins' defaults and
validation (``apis/config/v1/defaults.go`` ``SetDefaults_CoschedulingArgs`` and
``validation_pluginargs.go`` ``ValidateCoschedulingArgs``, v0.34.7).

Kept apart from the plugin so that a profile can be checked without building plugins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.framework.errors import ProfileError

DEFAULT_PERMIT_WAITING_TIME_SECONDS = 60
DEFAULT_POD_GROUP_BACKOFF_SECONDS = 0
DEFAULT_POD_GROUP_REJECT_PERCENTAGE = 10

_PERMIT = "permitWaitingTimeSeconds"
_BACKOFF = "podGroupBackoffSeconds"
_REJECT = "podGroupRejectPercentage"
_FIELDS = (_PERMIT, _BACKOFF, _REJECT)
_TYPE_META = ("apiVersion", "kind")
_INT64 = (-(2**63), 2**63 - 1)
_INT32 = (-(2**31), 2**31 - 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class CoschedulingArgs:
    """``permit_waiting_time_seconds``: how long a pod of a group waits at Permit for its
    siblings when the PodGroup sets no ``scheduleTimeoutSeconds`` (also how long a group
    that passed the minResources check is remembered as passing).
    ``pod_group_backoff_seconds``: after a group is rejected in PostFilter, its pods are
    refused in PreFilter for this long (0: no back-off).
    ``pod_group_reject_percentage``: PostFilter rejects the whole group only when more than
    this percentage of ``minMember`` is still unassigned."""

    permit_waiting_time_seconds: int = DEFAULT_PERMIT_WAITING_TIME_SECONDS
    pod_group_backoff_seconds: int = DEFAULT_POD_GROUP_BACKOFF_SECONDS
    pod_group_reject_percentage: int = DEFAULT_POD_GROUP_REJECT_PERCENTAGE


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _int(raw: Mapping[str, Any], key: str, default: int, bounds: tuple[int, int], path: str) -> int:
    v = raw.get(key)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or not bounds[0] <= v <= bounds[1]:
        bits = 64 if bounds is _INT64 else 32
        raise ProfileError(f"must be a {bits}-bit integer, got {v!r}", field=_join(path, key))
    return v


def validate(args: CoschedulingArgs, path: str = "") -> None:
    """``ValidateCoschedulingArgs``: every problem, aggregated as upstream prints them."""
    errors: list[tuple[str, str]] = []
    if args.permit_waiting_time_seconds < 0:
        errors.append((_PERMIT, f"Invalid value: {args.permit_waiting_time_seconds}: must be greater than 0"))
    if args.pod_group_backoff_seconds < 0:
        errors.append((_BACKOFF, f"Invalid value: {args.pod_group_backoff_seconds}: must be greater than 0"))
    if not 0 <= args.pod_group_reject_percentage <= 100:
        errors.append((_REJECT, f"Invalid value: {args.pod_group_reject_percentage}: must be between 0 and 100"))
    if len(errors) == 1:
        raise ProfileError(errors[0][1], field=_join(path, errors[0][0]))
    if errors:
        raise ProfileError("[" + ", ".join(f"{f}: {m}" for f, m in errors) + "]", field=path)


def parse_args(raw: Mapping[str, Any] | None, path: str = "") -> CoschedulingArgs:
    """Parse, default and validate the args (``None``: all defaults). Unknown fields are
    rejected, as the strict decoding of the scheduler configuration rejects them."""
    if raw is None:
        return CoschedulingArgs()
    if not isinstance(raw, Mapping):
        raise ProfileError("must be an object", field=path)
    for key in raw:
        if key not in _FIELDS and key not in _TYPE_META:
            raise ProfileError(f'unknown field "{key}"', field=path)
    args = CoschedulingArgs(
        permit_waiting_time_seconds=_int(raw, _PERMIT, DEFAULT_PERMIT_WAITING_TIME_SECONDS, _INT64, path),
        pod_group_backoff_seconds=_int(raw, _BACKOFF, DEFAULT_POD_GROUP_BACKOFF_SECONDS, _INT64, path),
        pod_group_reject_percentage=_int(raw, _REJECT, DEFAULT_POD_GROUP_REJECT_PERCENTAGE, _INT32, path),
    )
    validate(args, path)
    return args
