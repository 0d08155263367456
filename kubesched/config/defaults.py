"""Upstream's defaulting of the v1 configuration, as data and one merge rule.

Mirrors ``pkg/scheduler/apis/config/v1/defaults.go`` (SetDefaults_KubeSchedulerConfiguration,
plus component-base's RecommendedDefaultLeaderElectionConfiguration) and
``v1/default_plugins.go`` (mergePlugins / mergePluginSet). The default *plugin set* itself
is not here: it belongs to the plugins layer and is passed in as a multiPoint list.

Scalar defaults are applied where a field is unset (nil pointer) or, for the fields
upstream tests with ``len(...) == 0`` / ``== 0``, also where it is empty or zero.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

from kubesched.config.types import EMPTY_SET, MULTI_POINT, PLUGIN_SET_KEYS, PluginRef, PluginSet

log = logging.getLogger(__name__)

# SetDefaults_KubeSchedulerConfiguration: applied when the pointer is nil.
PARALLELISM = 16
POD_INITIAL_BACKOFF_SECONDS = 1
POD_MAX_BACKOFF_SECONDS = 10
ENABLE_PROFILING = True
# Leader election: resourceLock/Namespace/Name when empty; durations when zero;
# leaderElect when nil.
LEADER_ELECT = True
LEASE_DURATION = 15.0
RENEW_DEADLINE = 10.0
RETRY_PERIOD = 2.0
RESOURCE_LOCK = "leases"
RESOURCE_NAMESPACE = "kube-system"
RESOURCE_NAME = "kube-scheduler"
# Client connection: contentType when empty, qps/burst when zero.
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
QPS = 50.0
BURST = 100

DefaultMultiPoint = Sequence[tuple[str, int | None]]


def default_plugins(default_multipoint: DefaultMultiPoint) -> dict[str, PluginSet]:
    """The default ``Plugins`` (every set empty except multiPoint)."""
    mp = PluginSet(enabled=tuple(PluginRef(n, w) for n, w in default_multipoint))
    return {k: (mp if k == MULTI_POINT else EMPTY_SET) for k in PLUGIN_SET_KEYS}


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """Upstream mergePluginSet.

    Disabled: the custom names, then the default's. Enabled: the default plugins not
    disabled (none if ``"*"`` is disabled), each replaced in place by a custom entry of
    the same name (the last such entry), then every custom entry that replaced nothing,
    in order (a repeated custom plugin is kept; building the profile rejects it).
    """
    disabled = tuple(custom.disabled) + tuple(default.disabled)
    disabled_set = set(disabled)
    custom_by_name = {p.name: (i, p) for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled_set:
        for plugin in default.enabled:
            if plugin.name in disabled_set:
                continue
            found = custom_by_name.get(plugin.name)
            if found is not None:
                log.debug("default plugin %s is explicitly re-configured; overriding", plugin.name)
                replaced.add(found[0])
                plugin = found[1]
            enabled.append(plugin)
    enabled.extend(p for i, p in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(enabled=tuple(enabled), disabled=disabled)


def merge_plugins(default: Mapping[str, PluginSet],
                  custom: Mapping[str, PluginSet] | None) -> dict[str, PluginSet]:
    """Upstream mergePlugins over every plugin set (``custom=None``: the defaults)."""
    if custom is None:
        return {k: default.get(k, EMPTY_SET) for k in PLUGIN_SET_KEYS}
    return {k: merge_plugin_set(default.get(k, EMPTY_SET), custom.get(k, EMPTY_SET))
            for k in PLUGIN_SET_KEYS}


def plugins_named(plugins: Mapping[str, PluginSet], keys: Iterable[str] = PLUGIN_SET_KEYS) -> list[str]:
    """Names enabled anywhere in ``plugins``, first appearance first (no duplicates)."""
    seen: dict[str, None] = {}
    for k in keys:
        for p in plugins.get(k, EMPTY_SET).enabled:
            seen.setdefault(p.name, None)
    return list(seen)
