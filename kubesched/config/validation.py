"""Validation of a defaulted configuration (upstream ``apis/config/validation/validation.go``).

Returns every problem as a :class:`FieldError` with upstream's field path and wording
(``Invalid value: 101: not in valid range [0-100]``). With a plugin registry it also
checks what upstream checks later, when it builds the profiles: that every enabled plugin
exists, and that every ``pluginConfig`` args is accepted by its plugin's parser (upstream
decodes and validates in-tree args at load time).

Stricter than upstream, on purpose: a negative Score/multiPoint weight is refused
(upstream would silently subtract that plugin's score), and a plugin entry needs a name.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Mapping
from typing import Any

from kubesched.config.decode import format_go_duration
from kubesched.config.errors import FieldError, duplicate, invalid, required
from kubesched.config.types import (
    API_VERSION, MULTI_POINT, PLUGIN_SET_KEYS, PluginSet, ProfileConfig, SchedulerConfig,
)
from kubesched.framework.errors import ProfileError
from kubesched.framework.registry import PluginSpec, Registry, load_plugin_spec

log = logging.getLogger(__name__)

# Plugins removed from the v1 API (upstream invalidPluginsByVersion).
REMOVED_PLUGINS = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})
_WEIGHTED = frozenset({"score", MULTI_POINT})


def is_import_path(name: str) -> bool:
    """A plugin named ``package.module:Class`` is loaded by import path."""
    return ":" in name


def spec_for(name: str, registry: Registry, field: str) -> PluginSpec:
    """The registry's spec for ``name``, or the spec loaded from an import path, keyed by
    the configured name. Raises ProfileError naming ``field`` otherwise."""
    spec = registry.get(name)
    if spec is not None:
        return spec
    if is_import_path(name):
        loaded = load_plugin_spec(name, field)
        return PluginSpec(name, loaded.factory, loaded.args)
    close = difflib.get_close_matches(name, registry.names(), n=1)
    hint = f' (did you mean "{close[0]}"?)' if close else ""
    raise ProfileError(f'plugin "{name}" does not exist{hint}', field=field)


def validate_config(cfg: SchedulerConfig, registry: Registry | None = None) -> list[FieldError]:
    errs: list[FieldError] = []
    if cfg.client_connection.burst < 0:
        errs.append(invalid("clientConnection.burst", cfg.client_connection.burst, "must be non-negative"))
    errs += _leader_election(cfg)
    if cfg.parallelism <= 0:
        errs.append(invalid("parallelism", cfg.parallelism, "should be an integer value greater than zero"))
    first_use: dict[str, int] = {}
    for p in cfg.profiles:
        errs += _profile(p, registry)
        if p.scheduler_name in first_use:
            errs.append(duplicate(f"profiles[{p.index}].schedulerName", p.scheduler_name))
        first_use.setdefault(p.scheduler_name, p.index)
    errs += _common_queue_sort(cfg.profiles)
    errs += _percentage("percentageOfNodesToScore", cfg.percentage_of_nodes_to_score)
    if cfg.pod_initial_backoff_seconds <= 0:
        errs.append(invalid("podInitialBackoffSeconds", cfg.pod_initial_backoff_seconds, "must be greater than 0"))
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        errs.append(invalid("podMaxBackoffSeconds", cfg.pod_max_backoff_seconds,
                            "must be greater than or equal to PodInitialBackoffSeconds"))
    return errs


def _leader_election(cfg: SchedulerConfig) -> list[FieldError]:
    le, path, errs = cfg.leader_election, "leaderElection", []
    if not le.leader_elect:
        return []
    for key, value in (("leaseDuration", le.lease_duration), ("renewDeadline", le.renew_deadline),
                       ("retryPeriod", le.retry_period)):
        if value <= 0:
            errs.append(invalid(f"{path}.{key}", format_go_duration(value), "must be greater than zero"))
    if le.lease_duration <= le.renew_deadline:
        errs.append(invalid(f"{path}.leaseDuration", format_go_duration(le.renew_deadline),
                            "must be greater than `RenewDeadline`"))
    for key, name in (("resourceLock", le.resource_lock), ("resourceNamespace", le.resource_namespace),
                      ("resourceName", le.resource_name)):
        if not name:
            errs.append(required(f"{path}.{key}"))
    if le.resource_lock != "leases":
        errs.append(invalid(f"{path}.resourceLock", le.resource_lock, 'resourceLock value must be "leases"'))
    return errs


def _percentage(path: str, value: int | None) -> list[FieldError]:
    if value is not None and not 0 <= value <= 100:
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


def _profile(p: ProfileConfig, registry: Registry | None) -> list[FieldError]:
    path = f"profiles[{p.index}]"
    errs: list[FieldError] = []
    if not p.scheduler_name:
        errs.append(required(f"{path}.schedulerName"))
    errs += _percentage(f"{path}.percentageOfNodesToScore", p.percentage_of_nodes_to_score)
    specs: dict[str, PluginSpec | None] = {}
    for key in PLUGIN_SET_KEYS:
        for k, ref in enumerate(p.plugin_set(key).enabled):
            field = f"{path}.plugins.{key}.enabled[{k}]"
            if ref.name in REMOVED_PLUGINS:
                if key != MULTI_POINT:
                    errs.append(_removed(field, ref.name))
            elif registry is not None and ref.name not in specs:
                specs[ref.name] = _lookup(ref.name, registry, f"{field}.name", errs)
            if key in _WEIGHTED and ref.weight is not None and ref.weight < 0:
                errs.append(invalid(f"{field}.weight", ref.weight,
                                    "must not be negative (unset or 0 means 1)"))
    seen: set[str] = set()
    for j, entry in enumerate(p.plugin_config):
        field = f"{path}.pluginConfig[{j}]"
        if entry.name in seen:
            errs.append(duplicate(field, entry.name))
        seen.add(entry.name)
        if entry.name in REMOVED_PLUGINS:
            errs.append(_removed(field, entry.name))
        elif registry is not None:
            errs += _check_args(entry.name, entry.args, registry, specs, f"{field}.args")
    return errs


def _removed(field: str, name: str) -> FieldError:
    return invalid(field, name, f'was invalid in version "{API_VERSION}" '
                                f'(KubeSchedulerConfiguration is version "{API_VERSION}")')


def _lookup(name: str, registry: Registry, field: str, errs: list[FieldError]) -> PluginSpec | None:
    try:
        return spec_for(name, registry, field)
    except ProfileError as exc:
        errs.append(FieldError(exc.field or field, exc.message))
        return None


def _check_args(name: str, args: Mapping[str, Any] | None, registry: Registry,
                specs: dict[str, PluginSpec | None], path: str) -> list[FieldError]:
    if name not in specs:
        if registry.get(name) is None and not is_import_path(name):
            log.warning("%s: pluginConfig for plugin %r, which is not registered; ignored", path, name)
            return []
        errs: list[FieldError] = []
        specs[name] = _lookup(name, registry, path, errs)
        if errs:
            return errs
    spec = specs[name]
    if spec is None or spec.args is None:
        return []
    try:
        spec.args(args, path)
    except ProfileError as exc:
        return [FieldError(exc.field or path, exc.message)]
    except ImportError as exc:
        return [FieldError(path, f"cannot load plugin {name!r} to parse its args: {exc}")]
    return []


def _set_repr(s: PluginSet) -> dict[str, Any]:
    return {"enabled": [{"name": p.name, "weight": p.weight} for p in s.enabled],
            "disabled": [{"name": n} for n in s.disabled]}


def _common_queue_sort(profiles: tuple[ProfileConfig, ...]) -> list[FieldError]:
    """Every profile must have the same queueSort set and queue sort args (upstream
    validateCommonQueueSort; the merged queueSort set equals the one written, as the
    default plugins configure queueSort only through multiPoint)."""
    errs: list[FieldError] = []
    canon = profiles[0].plugin_set("queueSort")
    name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        errs.append(invalid("profiles[0].plugins.queueSort.enabled", len(canon.enabled),
                            "only one queue sort plugin can be enabled"))
    found = profiles[0].config_for(name) if name else None
    canon_args = (found[1].args or None) if found else None
    for p in profiles[1:]:
        current = p.plugin_set("queueSort")
        if current != canon:
            errs.append(invalid(f"profiles[{p.index}].plugins.queueSort", _set_repr(current),
                                "must be the same for all profiles"))
        for j, entry in enumerate(p.plugin_config):
            if name and entry.name == name and (entry.args or None) != canon_args:
                errs.append(invalid(f"profiles[{p.index}].pluginConfig[{j}].args", entry.args,
                                    "queueSort must be the same for all profiles"))
    return errs
