"""``InterPodAffinityArgs``: the plugin's pluginConfig args, with upstream's defaults and
validation (``apis/config/v1/defaults.go``, ``validation_pluginargs.go``).

Kept apart from the plugin so that a profile can be checked without building plugins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.framework.errors import ProfileError

DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100

_FIELDS = ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods")
_TYPE_META = ("apiVersion", "kind")


@dataclass(frozen=True, slots=True, kw_only=True)
class InterPodAffinityArgs:
    """``hard_pod_affinity_weight``: the score an existing pod's *required* affinity term
    adds to the nodes of its topology domain when the incoming pod matches it.
    ``ignore_preferred_terms_of_existing_pods``: skip scoring entirely when the incoming
    pod has no preferred (anti-)affinity terms of its own."""

    hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    ignore_preferred_terms_of_existing_pods: bool = False


def validate(args: InterPodAffinityArgs, path: str) -> None:
    """Upstream ``ValidateInterPodAffinityArgs``."""
    w = args.hard_pod_affinity_weight
    if not MIN_HARD_POD_AFFINITY_WEIGHT <= w <= MAX_HARD_POD_AFFINITY_WEIGHT:
        raise ProfileError(f"Invalid value: {w}: not in valid range "
                           f"[{MIN_HARD_POD_AFFINITY_WEIGHT}, {MAX_HARD_POD_AFFINITY_WEIGHT}]",
                           field=_join(path, "hardPodAffinityWeight"))


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def parse_args(raw: Mapping[str, Any] | None, path: str = "") -> InterPodAffinityArgs:
    """Parse, default and validate the args (``None``: all defaults).

    Unknown fields are rejected, as upstream's strict decoding of the scheduler
    configuration rejects them."""
    if raw is None:
        return InterPodAffinityArgs()
    if not isinstance(raw, Mapping):
        raise ProfileError("must be an object", field=path)
    for key in raw:
        if key not in _FIELDS and key not in _TYPE_META:
            raise ProfileError(f'unknown field "{key}"', field=path)
    weight = raw.get("hardPodAffinityWeight")
    if weight is None:
        weight = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    elif isinstance(weight, bool) or not isinstance(weight, int):
        raise ProfileError(f"must be an integer, got {weight!r}", field=_join(path, "hardPodAffinityWeight"))
    ignore = raw.get("ignorePreferredTermsOfExistingPods")
    if ignore is None:
        ignore = False
    elif not isinstance(ignore, bool):
        raise ProfileError(f"must be a boolean, got {ignore!r}",
                           field=_join(path, "ignorePreferredTermsOfExistingPods"))
    args = InterPodAffinityArgs(hard_pod_affinity_weight=weight,
                                ignore_preferred_terms_of_existing_pods=ignore)
    validate(args, path)
    return args
