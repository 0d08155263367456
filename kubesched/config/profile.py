"""From a profile's configuration to a running ``Framework`` (upstream ``NewFramework``).

Three steps, each usable alone:

- :func:`resolve_plugins` merges the profile's ``plugins`` into the default multiPoint
  set (upstream mergePlugins, at defaulting time).
- :func:`instantiate_plugins` builds every enabled plugin once, with its parsed args
  (``pluginConfig``, or the plugin's defaults when there is none).
- :func:`expand_plugins` sorts the instances into extension points: the points' own
  lists first, then multiPoint expanded into every point whose Protocol the plugin
  implements, unless disabled there; a plugin also listed at the point keeps that
  point's place and weight (upstream expandMultiPointPlugins). Score weights: the first
  of the score list and multiPoint entries that names the plugin decides, unset or 0
  meaning 1 (upstream getScoreWeights).

Custom plugins: anywhere a plugin name is expected (``enabled``, ``disabled``,
``pluginConfig``), a name of the form ``package.module:Class`` loads that class (or
:class:`~kubesched.framework.registry.PluginSpec`) by import path; it is built as
``Class(args, handle)``, its args parsed by ``Class.parse_args`` when present, and it
runs under the name its ``name`` attribute gives. For example::

    profiles:
    - plugins:
        multiPoint:
          enabled:
          - name: mycompany.sched.gpu:GpuPacking
            weight: 2
      pluginConfig:
      - name: mycompany.sched.gpu:GpuPacking
        args: {maxPerNode: 4}
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.config.defaults import DefaultMultiPoint, default_plugins, merge_plugins
from kubesched.config.types import MULTI_POINT, PluginConfigEntry, PluginSet, ProfileConfig, SchedulerConfig
from kubesched.config.validation import spec_for
from kubesched.framework.errors import ProfileError
from kubesched.framework.interface import MAX_NODE_SCORE, MAX_TOTAL_SCORE, Handle, ScorePlugin
from kubesched.framework.registry import Registry
from kubesched.framework.runtime.framework import EXTENSION_POINTS, Framework

log = logging.getLogger(__name__)

# Upstream getExtensionPoints order: the order profile errors are found in.
POINT_ORDER: tuple[str, ...] = ("preFilter", "filter", "postFilter", "reserve", "preScore", "score",
                                "preBind", "bind", "postBind", "permit", "preEnqueue", "queueSort")
assert set(POINT_ORDER) == set(EXTENSION_POINTS), "EXTENSION_POINTS changed: update POINT_ORDER"


def resolve_plugins(profile: ProfileConfig, default_multipoint: DefaultMultiPoint) -> dict[str, PluginSet]:
    """The profile's plugin sets merged with the defaults: every key of PLUGIN_SET_KEYS,
    each with ``enabled`` (name, weight) in order and ``disabled`` names (the framework
    needs the disabled names to know where not to expand multiPoint)."""
    return merge_plugins(default_plugins(default_multipoint), profile.plugins)


def _first_fields(merged: Mapping[str, PluginSet], path: str) -> dict[str, str]:
    """Each enabled plugin name -> the field where it is first enabled (multiPoint first)."""
    out: dict[str, str] = {}
    for key in (MULTI_POINT, *POINT_ORDER):
        for k, ref in enumerate(merged[key].enabled):
            out.setdefault(ref.name, f"{path}.plugins.{key}.enabled[{k}]")
    return out


def instantiate_plugins(profile: ProfileConfig, merged: Mapping[str, PluginSet], registry: Registry,
                        handle: Handle) -> dict[str, Any]:
    """Build each enabled plugin once: configured name -> instance."""
    path = f"profiles[{profile.index}]"
    configs: dict[str, tuple[int, PluginConfigEntry]] = {}
    for j, entry in enumerate(profile.plugin_config):
        if entry.name in configs:
            raise ProfileError(f"repeated config for plugin {entry.name}", field=f"{path}.pluginConfig[{j}]")
        configs[entry.name] = (j, entry)
    instances: dict[str, Any] = {}
    by_runtime_name: dict[str, str] = {}
    for name, field in _first_fields(merged, path).items():
        spec = spec_for(name, registry, f"{field}.name")
        found = configs.get(name)
        raw = found[1].args if found is not None else None
        args_path = f"{path}.pluginConfig[{found[0]}].args" if found is not None else f"{path}.pluginConfig"
        args = spec.args(raw, args_path) if spec.args is not None else raw
        try:
            plugin = spec.factory(args, handle)
        except ProfileError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported as a bad profile, with the cause chained
            raise ProfileError(f"initializing plugin {name!r}: {exc}", field=field) from exc
        runtime_name = getattr(plugin, "name", None)
        if not isinstance(runtime_name, str) or not runtime_name:
            raise ProfileError(f"plugin {name!r} has no name", field=field)
        if runtime_name in by_runtime_name:
            raise ProfileError(f"plugins {by_runtime_name[runtime_name]!r} and {name!r} are both "
                               f"named {runtime_name!r}", field=field)
        by_runtime_name[runtime_name] = name
        instances[name] = plugin
    return instances


def _explicit(point: str, pset: PluginSet, instances: Mapping[str, Any], path: str) -> list[str]:
    """Upstream updatePluginList: the point's own enabled list."""
    proto = EXTENSION_POINTS[point].__name__
    names: list[str] = []
    for k, ref in enumerate(pset.enabled):
        field = f"{path}.plugins.{point}.enabled[{k}]"
        plugin = instances.get(ref.name)
        if plugin is None:
            raise ProfileError(f'{proto} "{ref.name}" does not exist', field=field)
        if not isinstance(plugin, EXTENSION_POINTS[point]):
            raise ProfileError(f'plugin "{ref.name}" does not extend {proto} plugin', field=field)
        if ref.name in names:
            raise ProfileError(f'plugin "{ref.name}" already registered as "{proto}"', field=field)
        names.append(ref.name)
    return names


def _expand(point: str, explicit: list[str], pset: PluginSet, multipoint: PluginSet,
            instances: Mapping[str, Any], path: str) -> list[str]:
    """Upstream expandMultiPointPlugins for one point: overridden plugins in the point's
    order, then multiPoint-only plugins, then the point's other plugins."""
    disabled = set(pset.disabled)
    if "*" in disabled:
        return explicit
    proto = EXTENSION_POINTS[point]
    overrides: set[str] = set()
    from_multipoint: list[str] = []
    for k, ref in enumerate(multipoint.enabled):
        plugin = instances.get(ref.name)
        if plugin is None:
            raise ProfileError(f'{proto.__name__} "{ref.name}" does not exist',
                               field=f"{path}.plugins.multiPoint.enabled[{k}]")
        if not isinstance(plugin, proto) or ref.name in disabled:
            continue
        if ref.name in explicit:
            log.debug("multiPoint plugin %s is explicitly re-configured at %s", ref.name, point)
            overrides.add(ref.name)
            continue
        if ref.name in from_multipoint:
            raise ProfileError(f'plugin "{ref.name}" already registered as "{proto.__name__}"',
                               field=f"{path}.plugins.multiPoint.enabled[{k}]")
        from_multipoint.append(ref.name)
    return ([n for n in explicit if n in overrides] + from_multipoint
            + [n for n in explicit if n not in overrides])


def expand_plugins(merged: Mapping[str, PluginSet], instances: Mapping[str, Any], path: str = "profiles[0]",
                   ) -> tuple[dict[str, list[str]], dict[str, int]]:
    """(configured plugin names per extension point, score weight per plugin ``name``)."""
    points = {point: _explicit(point, merged[point], instances, path) for point in POINT_ORDER}
    multipoint = merged[MULTI_POINT]
    if multipoint.enabled:
        for point in POINT_ORDER:
            points[point] = _expand(point, points[point], merged[point], multipoint, instances, path)
    weights: dict[str, int] = {}
    total = 0
    for ref in (*merged["score"].enabled, *multipoint.enabled):
        plugin = instances[ref.name]
        if not isinstance(plugin, ScorePlugin) or plugin.name in weights:
            continue
        weight = ref.weight or 1
        if weight * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            raise ProfileError("total score of Score plugins could overflow", field=f"{path}.plugins.score")
        weights[plugin.name] = weight
        total += weight * MAX_NODE_SCORE
    return points, weights


def build_framework(profile: ProfileConfig, registry: Registry, handle: Handle, percentage: int | None,
                    *, default_multipoint: DefaultMultiPoint) -> Framework:
    """The Framework of one profile (also set as ``handle.framework`` when the handle has
    a writable ``framework``). Raises ProfileError naming the bad field."""
    path = f"profiles[{profile.index}]"
    merged = resolve_plugins(profile, default_multipoint)
    instances = instantiate_plugins(profile, merged, registry, handle)
    names, weights = expand_plugins(merged, instances, path)
    name = profile.scheduler_name
    if len(names["queueSort"]) != 1:
        raise ProfileError(f'only one queue sort plugin required for profile with scheduler name "{name}", '
                           f'but got {len(names["queueSort"])}', field=f"{path}.plugins.queueSort")
    if not names["bind"]:
        raise ProfileError(f'at least one bind plugin is needed for profile with scheduler name "{name}"',
                           field=f"{path}.plugins.bind")
    log.debug("profile %s: plugins %s, score weights %s", name, names, weights)
    plugins = {point: [instances[n] for n in lst] for point, lst in names.items()}
    fw = Framework(name, plugins, weights, percentage)
    if hasattr(handle, "framework"):
        try:  # upstream's handle is the framework itself; ours points at it once built
            handle.framework = fw  # type: ignore[misc]
        except AttributeError:
            pass
    return fw


def build_profiles(cfg: SchedulerConfig, registry: Registry, default_multipoint: DefaultMultiPoint,
                   new_handle: Callable[[], Handle]) -> dict[str, Framework]:
    """Every profile's Framework by scheduler name, each with a fresh handle from
    ``new_handle()`` and the effective percentageOfNodesToScore, checked as upstream's
    profile.NewMap does: all profiles must use the same queue sort plugin and args."""
    out: dict[str, Framework] = {}
    first: tuple[str, Any] | None = None
    for p in cfg.profiles:
        fw = build_framework(p, registry, new_handle(), cfg.effective_percentage(p),
                             default_multipoint=default_multipoint)
        field = f"profiles[{p.index}]"
        if p.scheduler_name in out:
            raise ProfileError(f'duplicate profile with scheduler name "{p.scheduler_name}"', field=field)
        queue_sort = fw.queue_sort.name
        found = p.config_for(queue_sort)
        args = (found[1].args or None) if found else None
        if first is None:
            first = (queue_sort, args)
        elif first[0] != queue_sort:
            raise ProfileError(f'different queue sort plugins for profile "{p.scheduler_name}": '
                               f'"{queue_sort}", first: "{first[0]}"', field=f"{field}.plugins")
        elif first[1] != args:
            raise ProfileError(f'different queue sort plugin args for profile "{p.scheduler_name}"',
                               field=f"{field}.pluginConfig")
        out[p.scheduler_name] = fw
    return out
