"""Merging a profile's plugins into the defaults.

Cases ported from upstream ``pkg/scheduler/apis/config/v1/default_plugins_test.go``
(TestMergePlugins, all 14 rows) and the "two profiles" row of
``pkg/scheduler/apis/config/v1/defaults_test.go`` (TestSchedulerDefaults).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from kubesched.config import PluginRef, PluginSet, ProfileConfig, merge_plugins, resolve_plugins
from kubesched.config.types import EMPTY_SET, PLUGIN_SET_KEYS

Ref = str | tuple[str, int]


def ps(enabled: Sequence[Ref] = (), disabled: Sequence[str] = ()) -> PluginSet:
    refs = tuple(PluginRef(r) if isinstance(r, str) else PluginRef(r[0], r[1]) for r in enabled)
    return PluginSet(enabled=refs, disabled=tuple(disabled))


def full(sets: Mapping[str, PluginSet]) -> dict[str, PluginSet]:
    return {k: sets.get(k, EMPTY_SET) for k in PLUGIN_SET_KEYS}


# (name, custom (None = nil), default, expected)
MERGE_CASES = [
    ("AppendCustomPlugin",
     {"filter": ps(["CustomPlugin"])},
     {"filter": ps(["DefaultPlugin1", "DefaultPlugin2"])},
     {"filter": ps(["DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"])}),
    ("InsertAfterDefaultPlugins2",
     {"filter": ps(["CustomPlugin", "DefaultPlugin2"], ["DefaultPlugin2"])},
     {"filter": ps(["DefaultPlugin1", "DefaultPlugin2"])},
     {"filter": ps(["DefaultPlugin1", "CustomPlugin", "DefaultPlugin2"], ["DefaultPlugin2"])}),
    ("InsertBeforeAllPlugins",
     {"filter": ps(["CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"], ["*"])},
     {"filter": ps(["DefaultPlugin1", "DefaultPlugin2"])},
     {"filter": ps(["CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"], ["*"])}),
    ("ReorderDefaultPlugins",
     {"filter": ps(["DefaultPlugin2", "DefaultPlugin1"], ["*"])},
     {"filter": ps(["DefaultPlugin1", "DefaultPlugin2"])},
     {"filter": ps(["DefaultPlugin2", "DefaultPlugin1"], ["*"])}),
    ("ApplyNilCustomPlugin",
     None,
     {"filter": ps(["DefaultPlugin1", "DefaultPlugin2"])},
     {"filter": ps(["DefaultPlugin1", "DefaultPlugin2"])}),
    ("CustomPluginOverrideDefaultPlugin",
     {"filter": ps([("Plugin1", 2), ("Plugin3", 3)])},
     {"filter": ps(["Plugin1", "Plugin2", "Plugin3"])},
     {"filter": ps([("Plugin1", 2), "Plugin2", ("Plugin3", 3)])}),
    ("OrderPreserveAfterOverride",
     {"filter": ps([("Plugin2", 2), ("Plugin1", 1)])},
     {"filter": ps(["Plugin1", "Plugin2", "Plugin3"])},
     {"filter": ps([("Plugin1", 1), ("Plugin2", 2), "Plugin3"])}),
    ("RepeatedCustomPlugin",
     {"filter": ps(["Plugin1", ("Plugin2", 2), "Plugin3", ("Plugin2", 4)])},
     {"filter": ps(["Plugin1", "Plugin2", "Plugin3"])},
     {"filter": ps(["Plugin1", ("Plugin2", 4), "Plugin3", ("Plugin2", 2)])}),
    ("Append custom MultiPoint plugin",
     {"multiPoint": ps(["CustomPlugin"])},
     {"multiPoint": ps(["DefaultPlugin1", "DefaultPlugin2"])},
     {"multiPoint": ps(["DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"])}),
    ("Append disabled Multipoint plugins",
     {"multiPoint": ps(["CustomPlugin", "CustomPlugin2"], ["DefaultPlugin2"]),
      "score": ps(disabled=["CustomPlugin2"])},
     {"multiPoint": ps(["DefaultPlugin1", "DefaultPlugin2"])},
     {"multiPoint": ps(["DefaultPlugin1", "CustomPlugin", "CustomPlugin2"], ["DefaultPlugin2"]),
      "score": ps(disabled=["CustomPlugin2"])}),
    ("override default MultiPoint plugins with custom value",
     {"multiPoint": ps([("DefaultPlugin", 5)])},
     {"multiPoint": ps(["DefaultPlugin"])},
     {"multiPoint": ps([("DefaultPlugin", 5)])}),
    ("disabled MultiPoint plugin in default set",
     {"multiPoint": ps(["CustomPlugin"])},
     {"multiPoint": ps(["DefaultPlugin"], ["DefaultPlugin2"])},
     {"multiPoint": ps(["DefaultPlugin", "CustomPlugin"], ["DefaultPlugin2"])}),
    ("disabled MultiPoint plugin in default set for specific extension point",
     {"multiPoint": ps(["CustomPlugin"])},
     {"multiPoint": ps(["DefaultPlugin"]), "score": ps(disabled=["DefaultPlugin2"])},
     {"multiPoint": ps(["DefaultPlugin", "CustomPlugin"]), "score": ps(disabled=["DefaultPlugin2"])}),
    ("multipoint with only disabled gets merged",
     {"multiPoint": ps(disabled=["DefaultPlugin"])},
     {"multiPoint": ps(["DefaultPlugin"])},
     {"multiPoint": ps(disabled=["DefaultPlugin"])}),
]


@pytest.mark.parametrize(("custom", "default", "expected"), [c[1:] for c in MERGE_CASES],
                         ids=[c[0] for c in MERGE_CASES])
def test_merge_plugins(custom: Mapping[str, PluginSet] | None, default: Mapping[str, PluginSet],
                       expected: Mapping[str, PluginSet]) -> None:
    assert merge_plugins(full(default), None if custom is None else full(custom)) == full(expected)


UPSTREAM_DEFAULT_MULTIPOINT: list[tuple[str, int | None]] = [
    ("SchedulingGates", None), ("PrioritySort", None), ("NodeUnschedulable", None),
    ("NodeName", None), ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", None),
    ("NodeResourcesFit", 1), ("VolumeRestrictions", None), ("NodeVolumeLimits", None),
    ("VolumeBinding", None), ("VolumeZone", None), ("PodTopologySpread", 2),
    ("InterPodAffinity", 2), ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", None),
]


def test_resolve_plugins_without_custom_plugins_is_the_default_set() -> None:
    merged = resolve_plugins(ProfileConfig(), UPSTREAM_DEFAULT_MULTIPOINT)
    assert merged["multiPoint"] == ps([n if w is None else (n, w) for n, w in UPSTREAM_DEFAULT_MULTIPOINT])
    assert all(merged[k] == EMPTY_SET for k in PLUGIN_SET_KEYS if k != "multiPoint")


def test_resolve_plugins_two_profiles_custom_binder() -> None:
    """defaults_test.go "two profiles": Bind {enabled BarPlugin, disabled DefaultBinder}
    leaves multiPoint as the defaults and keeps both lists at bind."""
    profile = ProfileConfig(scheduler_name="custom-scheduler",
                            plugins={"bind": ps(["BarPlugin"], ["DefaultBinder"])})
    merged = resolve_plugins(profile, UPSTREAM_DEFAULT_MULTIPOINT)
    assert merged["multiPoint"].enabled_names() == [n for n, _ in UPSTREAM_DEFAULT_MULTIPOINT]
    assert merged["bind"] == ps(["BarPlugin"], ["DefaultBinder"])


def test_resolve_plugins_reweights_default_plugin_in_place() -> None:
    profile = ProfileConfig(plugins={"multiPoint": ps([("TaintToleration", 7), "MyPlugin"], ["ImageLocality"])})
    merged = resolve_plugins(profile, UPSTREAM_DEFAULT_MULTIPOINT)
    names = merged["multiPoint"].enabled_names()
    assert "ImageLocality" not in names
    assert names[-1] == "MyPlugin"
    assert merged["multiPoint"].enabled[names.index("TaintToleration")] == PluginRef("TaintToleration", 7)
    assert names.index("TaintToleration") == 4
