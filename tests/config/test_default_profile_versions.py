"""The default profile per release (upstream ``apis/config/v1/default_plugins.go``:
``getDefaultPlugins`` + ``applyFeatureGates``, which puts DynamicResources before
DefaultPreemption when DynamicResourceAllocation is on). Its weight is none (no Score) at
v1.34 and 2 from v1.35, as ``../shared/fidelity-v1.35``'s upstream v1.35.4 decisions record
in ``scoreWeights`` (README: "DynamicResources now has a Score (weight 2 ...)").

With NodeDeclaredFeatures on (its default from 1.36), ``applyFeatureGates`` appends
NodeDeclaredFeatures, without a weight, after every other multiPoint plugin
(kubernetes/kubernetes#133389, ``default_plugins.go``:
``config.MultiPoint.Enabled = append(config.MultiPoint.Enabled, v1.Plugin{Name: names.NodeDeclaredFeatures})``).
"""

import pytest

from kubesched.framework.features import Features
from kubesched.plugins.registry import DEFAULT_MULTIPOINT, default_multipoint

BASE = ["SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
        "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
        "PodTopologySpread", "InterPodAffinity", "DynamicResources", "DefaultPreemption",
        "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder"]


@pytest.mark.parametrize("version,dra_weight,ndf", [
    ("1.34", None, []), ("1.35", 2, []), ("1.36", 2, ["NodeDeclaredFeatures"]), ("1.37", 2, ["NodeDeclaredFeatures"]),
])
def test_default_profile(version: str, dra_weight: int | None, ndf: list[str]) -> None:
    got = default_multipoint(Features.for_version(version))
    assert [n for n, _ in got] == BASE + ndf
    assert dict(got)["DynamicResources"] == dra_weight
    assert dict(got)["TaintToleration"] == 3 and dict(got)["PodTopologySpread"] == 2


def test_without_dynamic_resource_allocation() -> None:
    got = default_multipoint(Features.for_version("1.34", "DynamicResourceAllocation=false"))
    assert [n for n, _ in got] == [n for n in BASE if n != "DynamicResources"]


@pytest.mark.parametrize("version,gate,want", [
    ("1.35", "NodeDeclaredFeatures=true", BASE + ["NodeDeclaredFeatures"]),
    ("1.36", "NodeDeclaredFeatures=false", BASE),
])
def test_node_declared_features_follows_its_gate(version: str, gate: str, want: list[str]) -> None:
    got = default_multipoint(Features.for_version(version, gate))
    assert [n for n, _ in got] == want
    assert dict(got)["NodeDeclaredFeatures" if "NodeDeclaredFeatures" in want else "NodeName"] is None


def test_default_multipoint_constant_is_v1_34() -> None:
    assert DEFAULT_MULTIPOINT == default_multipoint(Features.for_version("1.34"))
