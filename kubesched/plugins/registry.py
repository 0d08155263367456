"""The in-tree plugins (upstream ``plugins/registry.go``) and the default profile
(upstream ``apis/config/v1/default_plugins.go``), as literal data.

Plugins are imported lazily, when a profile uses them.
"""

from __future__ import annotations

import importlib
from typing import Any

from kubesched.framework.features import Features
from kubesched.framework.registry import PluginSpec, Registry
from kubesched.plugins import names

# name -> "module:Class". The class is built as Class(args, handle); an optional
# ``parse_args(raw, path)`` static method parses and defaults its pluginConfig args.
IN_TREE: dict[str, str] = {
    names.PRIORITY_SORT: "kubesched.plugins.queuesort:PrioritySort",
    names.SCHEDULING_GATES: "kubesched.plugins.schedulinggates:SchedulingGates",
    names.NODE_UNSCHEDULABLE: "kubesched.plugins.nodeunschedulable:NodeUnschedulable",
    names.NODE_NAME: "kubesched.plugins.nodename:NodeName",
    names.TAINT_TOLERATION: "kubesched.plugins.tainttoleration:TaintToleration",
    names.NODE_AFFINITY: "kubesched.plugins.nodeaffinity:NodeAffinity",
    names.NODE_PORTS: "kubesched.plugins.nodeports:NodePorts",
    names.NODE_RESOURCES_FIT: "kubesched.plugins.noderesources.fit:Fit",
    names.NODE_RESOURCES_BALANCED_ALLOCATION: "kubesched.plugins.noderesources.balanced_allocation:BalancedAllocation",
    names.IMAGE_LOCALITY: "kubesched.plugins.imagelocality:ImageLocality",
    names.POD_TOPOLOGY_SPREAD: "kubesched.plugins.podtopologyspread.plugin:PodTopologySpread",
    names.INTER_POD_AFFINITY: "kubesched.plugins.interpodaffinity.plugin:InterPodAffinity",
    names.DEFAULT_PREEMPTION: "kubesched.plugins.defaultpreemption:DefaultPreemption",
    names.DEFAULT_BINDER: "kubesched.plugins.defaultbinder:DefaultBinder",
    names.VOLUME_RESTRICTIONS: "kubesched.plugins.volumerestrictions:VolumeRestrictions",
    names.NODE_VOLUME_LIMITS: "kubesched.plugins.nodevolumelimits.csi:CSILimits",
    names.VOLUME_BINDING: "kubesched.plugins.volumebinding.plugin:VolumeBinding",
    names.VOLUME_ZONE: "kubesched.plugins.volumezone:VolumeZone",
    names.COSCHEDULING: "kubesched.plugins.coscheduling:Coscheduling",
    names.DYNAMIC_RESOURCES: "kubesched.plugins.dynamicresources.scoring:new",
    names.NODE_DECLARED_FEATURES: "kubesched.plugins.nodedeclaredfeatures.plugin:NodeDeclaredFeatures",
}

# The default profile's multiPoint plugins, in upstream's order, with weights
# (getDefaultPlugins); applyFeatureGates below adds what a release's gates add.
_BASE_MULTIPOINT: list[tuple[str, int | None]] = [
    (names.SCHEDULING_GATES, None),
    (names.PRIORITY_SORT, None),
    (names.NODE_UNSCHEDULABLE, None),
    (names.NODE_NAME, None),
    (names.TAINT_TOLERATION, 3),
    (names.NODE_AFFINITY, 2),
    (names.NODE_PORTS, None),
    (names.NODE_RESOURCES_FIT, 1),
    (names.VOLUME_RESTRICTIONS, None),
    (names.NODE_VOLUME_LIMITS, None),
    (names.VOLUME_BINDING, None),
    (names.VOLUME_ZONE, None),
    (names.POD_TOPOLOGY_SPREAD, 2),
    (names.INTER_POD_AFFINITY, 2),
    (names.DEFAULT_PREEMPTION, None),
    (names.NODE_RESOURCES_BALANCED_ALLOCATION, 1),
    (names.IMAGE_LOCALITY, 1),
    (names.DEFAULT_BINDER, None),
]


def default_multipoint(fts: Features) -> list[tuple[str, int | None]]:
    """The default profile of ``fts``'s release (upstream ``getDefaultPlugins`` +
    ``applyFeatureGates``): with NodeDeclaredFeatures, that plugin comes last; with
    DynamicResourceAllocation, DynamicResources goes before DefaultPreemption (deallocating an
    idle claim beats evicting a pod), weighted 2 once the plugin scores (DynamicResourcesScore)."""
    out = list(_BASE_MULTIPOINT)
    if fts.enabled("NodeDeclaredFeatures"):
        out.append((names.NODE_DECLARED_FEATURES, None))
    if fts.enabled("DynamicResourceAllocation"):
        at = out.index((names.DEFAULT_PREEMPTION, None))
        out.insert(at, (names.DYNAMIC_RESOURCES, 2 if fts.has("DynamicResourcesScore") else None))
    return out


# v1.34's default profile (what callers that choose no release have always been given).
DEFAULT_MULTIPOINT: list[tuple[str, int | None]] = default_multipoint(Features.for_version("1.34"))


class _Lazy:
    """Imports the plugin class on first use."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._cls: Any = None

    def cls(self) -> Any:
        if self._cls is None:
            mod, _, attr = self.path.partition(":")
            self._cls = getattr(importlib.import_module(mod), attr)
        return self._cls

    def __call__(self, args: Any, handle: Any) -> Any:
        return self.cls()(args, handle)

    def parse_args(self, raw: Any, path: str) -> Any:
        parser = getattr(self.cls(), "parse_args", None)
        return raw if parser is None else parser(raw, path)


def in_tree_registry() -> Registry:
    specs = []
    for name, path in IN_TREE.items():
        lazy = _Lazy(path)
        specs.append(PluginSpec(name, lazy, lazy.parse_args))
    return Registry(specs)
