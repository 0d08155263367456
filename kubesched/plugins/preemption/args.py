"""``DefaultPreemptionArgs``: the plugin's pluginConfig args, with upstream's defaults
(``apis/config/v1/defaults.go``) and validation (``validation_pluginargs.go``).

Kept apart from the plugin so that a profile can be checked without building plugins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.framework.errors import ProfileError

DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100

_PERCENTAGE = "minCandidateNodesPercentage"
_ABSOLUTE = "minCandidateNodesAbsolute"
_TYPE_META = ("apiVersion", "kind")
_INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True, kw_only=True)
class DefaultPreemptionArgs:
    """How many candidate nodes the dry run must find before it stops: at least
    ``min_candidate_nodes_percentage`` percent of the nodes where preemption might help,
    and at least ``min_candidate_nodes_absolute`` of them (never more than there are)."""

    min_candidate_nodes_percentage: int = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
    min_candidate_nodes_absolute: int = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def validate(args: DefaultPreemptionArgs, path: str = "") -> None:
    """Upstream ``ValidateDefaultPreemptionArgs`` (the first error is raised)."""
    pct, absolute = args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute
    if not 0 <= pct <= 100:
        raise ProfileError(f"Invalid value: {pct}: not in valid range [0, 100]",
                           field=_join(path, _PERCENTAGE))
    if absolute < 0:
        raise ProfileError(f"Invalid value: {absolute}: not in valid range [0, inf)",
                           field=_join(path, _ABSOLUTE))
    if pct == 0 and absolute == 0:
        raise ProfileError(f"Invalid value: 0: cannot be zero at the same time as {_ABSOLUTE}",
                           field=_join(path, _PERCENTAGE))


def _int32(raw: Mapping[str, Any], key: str, default: int, path: str) -> int:
    v = raw.get(key)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or not -_INT32_MAX - 1 <= v <= _INT32_MAX:
        raise ProfileError(f"must be a 32-bit integer, got {v!r}", field=_join(path, key))
    return v


def parse_args(raw: Mapping[str, Any] | None, path: str = "") -> DefaultPreemptionArgs:
    """Parse, default and validate the args (``None``: all defaults). Unknown fields are
    rejected, as upstream's strict decoding of the configuration rejects them."""
    if raw is None:
        return DefaultPreemptionArgs()
    if not isinstance(raw, Mapping):
        raise ProfileError("must be an object", field=path)
    for key in raw:
        if key not in (_PERCENTAGE, _ABSOLUTE) and key not in _TYPE_META:
            raise ProfileError(f'unknown field "{key}"', field=path)
    args = DefaultPreemptionArgs(
        min_candidate_nodes_percentage=_int32(raw, _PERCENTAGE, DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE, path),
        min_candidate_nodes_absolute=_int32(raw, _ABSOLUTE, DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE, path))
    validate(args, path)
    return args
