"""``Features``: the gate values and release behaviour one scheduler runs with.

Upstream builds a ``feature.Features`` from the feature gate once and hands it to every
plugin's constructor; kubesched's plugins read the same from their handle
(:func:`features_of`). Two kinds of difference between releases live here, and only here:

- feature gates (:mod:`kubesched.framework.features.gates`), defaulted per release and
  overridden with ``--feature-gates`` as kube-scheduler takes them (``A=true,B=false``);
- :data:`RELEASE_CHANGES`, the changes upstream made without a gate. Each is named for what
  it changes, and the code that behaves differently asks for that name, never for a version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.errors import KubeschedError
from kubesched.api.kubeversion import default_minor, minor_number, parse_minor
from kubesched.framework.features.gates import GATES, REMOVED, Step

# name -> (first release, what changed; the upstream file it is in)
RELEASE_CHANGES: dict[str, tuple[str, str]] = {
    "TaintTolerationGenericReason": (
        "1.35", "TaintToleration's Filter reason no longer names the taint: "
                "'node(s) had untolerated taint(s)' (plugins/tainttoleration/taint_toleration.go)"),
    "DynamicResourcesScore": (
        "1.35", "DynamicResources scores nodes by the firstAvailable subrequests allocated there, "
                "weight 2 in the default profile (plugins/dynamicresources/dynamicresources.go, "
                "apis/config/v1/default_plugins.go)"),
    "DynamicResourcesScoreAllocatedClaims": (
        "1.37", "DynamicResources' Score reads an allocated claim's own allocation instead of pairing "
                "claims with Filter's allocations by index, which failed for a pod with an allocated "
                "claim before an unallocated one (kubernetes/kubernetes#139017)"),
}


class FeatureGateError(KubeschedError):
    """A ``--feature-gates`` value kube-scheduler (or kubesched) would not take."""


def step_at(gate: str, version: str) -> Step | None:
    """The gate's spec in force at ``version`` (None: the gate does not exist yet)."""
    found = None
    for s in GATES[gate].steps:
        if minor_number(s.since) <= minor_number(version):
            found = s
    return found


def parse_feature_gates(text: str, where: str = "--feature-gates") -> dict[str, bool]:
    """``"A=true,B=false"`` (component-base's mapStringBool form) as a dict."""
    out: dict[str, bool] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep or value.strip().lower() not in ("true", "false", "1", "0", "t", "f"):
            raise FeatureGateError(f"{where}: invalid value {part!r} (want NAME=true or NAME=false)")
        out[name.strip()] = value.strip().lower() in ("true", "1", "t")
    return out


@dataclass(frozen=True)
class Features:
    version: str
    overrides: tuple[tuple[str, bool], ...] = ()
    _values: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self._values:  # built directly: defaults of the release, then the overrides
            for name in GATES:
                s = step_at(name, self.version)
                self._values[name] = s.default if s is not None else False
            self._values.update(self.overrides)

    @classmethod
    def for_version(cls, version: str | None = None, feature_gates: str | Mapping[str, bool] | None = None,
                    where: str = "--feature-gates") -> "Features":
        """The features of ``version`` (default: :func:`default_minor`) with ``feature_gates``
        applied. FeatureGateError for an unknown gate, a gate not yet in that release, a locked
        gate set away from its value, or a value kubesched does not implement."""
        minor = parse_minor(version) if version else default_minor()
        asked = parse_feature_gates(feature_gates, where) if isinstance(feature_gates, str) else dict(feature_gates or {})
        for name, value in asked.items():
            _check(name, value, minor, where)
        return cls(minor, tuple(sorted(asked.items())))

    def enabled(self, gate: str) -> bool:
        """The gate's value (KeyError for a gate not in the table: a bug, not bad input)."""
        return self._values[gate]

    def has(self, change: str) -> bool:
        """Whether this release made the ungated change ``change`` (a key of RELEASE_CHANGES)."""
        return minor_number(self.version) >= minor_number(RELEASE_CHANGES[change][0])

    def not_honoured(self) -> list[str]:
        """``Gate=value`` for each gate whose value here kubesched does not implement."""
        return [f"{n}={str(v).lower()}" for n, v in self._values.items() if v not in GATES[n].honoured]

    def to_json(self) -> dict[str, Any]:
        """``kubernetesVersion``, and ``featureGates`` when any gate was set."""
        out: dict[str, Any] = {"kubernetesVersion": self.version}
        if self.overrides:
            out["featureGates"] = dict(self.overrides)
        return out


def _check(name: str, value: bool, minor: str, where: str) -> None:
    gate = GATES.get(name)
    if gate is None:
        raise FeatureGateError(f"{where}: unrecognized feature gate: {name} (kube-scheduler gates kubesched "
                               f"knows: {', '.join(sorted(GATES))})")
    s = step_at(name, minor)
    if s is None:
        raise FeatureGateError(f"{where}: feature gate {name} does not exist in Kubernetes {minor} "
                               f"(since {gate.steps[0].since})")
    if s.stage == REMOVED:
        raise FeatureGateError(f"{where}: unrecognized feature gate: {name} (removed in Kubernetes {s.since})")
    if s.locked and value != s.default:
        raise FeatureGateError(f"{where}: cannot set feature gate {name} to {str(value).lower()}, "
                               f"feature is locked to {str(s.default).lower()} in Kubernetes {minor}")
    if value not in gate.honoured:
        raise FeatureGateError(f"{where}: {name}={str(value).lower()} is not supported by kubesched "
                               f"(it implements {name}={str(not value).lower()})")


def features_of(handle: Any) -> Features:
    """The handle's features (a plugin built without one gets the default release's)."""
    fts = getattr(handle, "features", None)
    return fts if isinstance(fts, Features) else Features.for_version()
