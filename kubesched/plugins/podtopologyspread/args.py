"""PodTopologySpreadArgs: the plugin's pluginConfig, with upstream's defaults and validation.

Mirrors ``apis/config`` ``PodTopologySpreadArgs`` (``defaultConstraints`` and
``defaultingType``), ``v1/defaults.go`` (an empty ``defaultingType`` becomes ``System``)
and ``validation_pluginargs.go`` (``ValidatePodTopologySpreadArgs``). Upstream aggregates
every field error; we raise the first one, with upstream's wording, as a ProfileError.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.framework.errors import ProfileError

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"


@dataclass(frozen=True, slots=True, kw_only=True)
class DefaultConstraint:
    """A v1.TopologySpreadConstraint without a selector (it is deduced per pod)."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PodTopologySpreadArgs:
    default_constraints: tuple[DefaultConstraint, ...] = ()
    defaulting_type: str = SYSTEM_DEFAULTING


# Upstream's systemDefaultConstraints (plugin.go), in its order.
SYSTEM_DEFAULT_CONSTRAINTS: tuple[DefaultConstraint, ...] = (
    DefaultConstraint(max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY),
    DefaultConstraint(max_skew=5, topology_key=LABEL_TOPOLOGY_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY),
)

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_RE = re.compile(f"^{_QNAME_FMT}$")
_QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
              "with an alphanumeric character (e.g. 'MyName' or 'my.name' or '123-abc', regex "
              f"used for validation is '{_QNAME_FMT}')")
_DNS_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN_FMT = f"{_DNS_LABEL}(\\.{_DNS_LABEL})*"
_DNS_SUBDOMAIN_RE = re.compile(f"^{_DNS_SUBDOMAIN_FMT}$")
_DNS_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                      "characters, '-' or '.', and must start and end with an alphanumeric character "
                      f"(e.g. 'example.com', regex used for validation is '{_DNS_SUBDOMAIN_FMT}')")


def qualified_name_errors(value: str) -> list[str]:
    """apimachinery ``IsQualifiedName``: the messages for a bad label key."""
    parts = value.split("/")
    if len(parts) > 2:
        return [f"a qualified name {_QNAME_MSG} with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"]
    errs: list[str] = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if len(prefix) > 253:
                errs.append("prefix part must be no more than 253 characters")
            if not _DNS_SUBDOMAIN_RE.match(prefix):
                errs.append(f"prefix part {_DNS_SUBDOMAIN_MSG}")
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QNAME_RE.match(name):
        errs.append(f"name part {_QNAME_MSG}")
    return errs


def _int(v: Any, field: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ProfileError(f"must be an integer, got {v!r}", field=field)
    return v


def _constraint(raw: Any, p: str) -> tuple[DefaultConstraint, bool]:
    """Parse one default constraint; the flag says whether it set a labelSelector."""
    if not isinstance(raw, Mapping):
        raise ProfileError("must be an object", field=p)
    md = raw.get("minDomains")
    return DefaultConstraint(
        max_skew=_int(raw.get("maxSkew", 0), f"{p}.maxSkew"),
        topology_key=str(raw.get("topologyKey") or ""),
        when_unsatisfiable=str(raw.get("whenUnsatisfiable") or ""),
        min_domains=None if md is None else _int(md, f"{p}.minDomains"),
        node_affinity_policy=raw.get("nodeAffinityPolicy"),
        node_taints_policy=raw.get("nodeTaintsPolicy"),
    ), raw.get("labelSelector") is not None


def _validate(constraints: list[tuple[DefaultConstraint, bool]], dtype: str, path: str) -> None:
    if dtype not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        raise ProfileError(f'Unsupported value: "{dtype}": supported values: "System", "List"',
                           field=f"{path}.defaultingType")
    if dtype == SYSTEM_DEFAULTING and constraints:
        raise ProfileError(f'Invalid value: "{dtype}": when .defaultConstraints are not empty',
                           field=f"{path}.defaultingType")
    seen: set[tuple[str, str]] = set()
    for i, (c, has_selector) in enumerate(constraints):
        p = f"{path}.defaultConstraints[{i}]"
        if c.max_skew <= 0:
            raise ProfileError(f"Invalid value: {c.max_skew}: not in valid range (0, inf)",
                               field=f"{p}.maxSkew")
        if not c.topology_key:
            raise ProfileError("Required value: can not be empty", field=f"{p}.topologyKey")
        for msg in qualified_name_errors(c.topology_key):
            raise ProfileError(f'Invalid value: "{c.topology_key}": {msg}', field=f"{p}.topologyKey")
        if not c.when_unsatisfiable:
            raise ProfileError("Required value: can not be empty", field=f"{p}.whenUnsatisfiable")
        if c.when_unsatisfiable not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            raise ProfileError(f'Unsupported value: "{c.when_unsatisfiable}": supported values: '
                               '"DoNotSchedule", "ScheduleAnyway"', field=f"{p}.whenUnsatisfiable")
        if has_selector:
            raise ProfileError("Forbidden: constraint must not define a selector, as they deduced "
                               "for each pod", field=f"{p}.labelSelector")
        key = (c.topology_key, c.when_unsatisfiable)
        if key in seen:
            raise ProfileError(f'Duplicate value: "{{{key[0]}, {key[1]}}}"', field=p)
        seen.add(key)


def parse_args(raw: Mapping[str, Any] | None, path: str) -> PodTopologySpreadArgs:
    """Decode, default (``defaultingType: System``) and validate the plugin's args."""
    if raw is None:
        return PodTopologySpreadArgs()
    if not isinstance(raw, Mapping):
        raise ProfileError("must be an object", field=path)
    items = raw.get("defaultConstraints") or []
    if not isinstance(items, list):
        raise ProfileError("must be a list", field=f"{path}.defaultConstraints")
    parsed = [_constraint(c, f"{path}.defaultConstraints[{i}]") for i, c in enumerate(items)]
    dtype = str(raw.get("defaultingType") or SYSTEM_DEFAULTING)
    _validate(parsed, dtype, path)
    return PodTopologySpreadArgs(default_constraints=tuple(c for c, _ in parsed), defaulting_type=dtype)
