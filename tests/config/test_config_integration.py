"""The default profile built from the in-tree registry, end to end.

Expected lists: upstream's default profile after multiPoint expansion
(``ExpandedPluginsV1`` in upstream ``pkg/scheduler/apis/config/testing/defaults/defaults.go``),
brought to v1.34: the removed EBSLimits/GCEPDLimits/AzureDiskLimits gone, DefaultPreemption
also a PreEnqueue plugin (its v1.34 method set, /work/upstream/.../defaultpreemption/
default_preemption.go), and DynamicResources where upstream v1.34.1 runs it (the
``plugins`` lists of ../shared/fidelity-storage/expected/*.json and ../shared/fidelity-dra/
expected, recorded from upstream's framework). Skipped while an in-tree plugin module is
missing.
"""

from __future__ import annotations

import importlib

import pytest

from kubesched.config import build_framework, load_config
from kubesched.plugins.registry import DEFAULT_MULTIPOINT, IN_TREE, in_tree_registry
from kubesched.testing.handle import handle_for


def _missing() -> list[str]:
    out = []
    for path in IN_TREE.values():
        module, _, attr = path.partition(":")
        try:
            getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            out.append(path)
    return out


pytestmark = pytest.mark.skipif(bool(_missing()), reason=f"in-tree plugins missing: {_missing()}")

EXPANDED_V1_34 = {
    "preEnqueue": ["SchedulingGates", "DynamicResources", "DefaultPreemption"],
    "queueSort": ["PrioritySort"],
    "preFilter": ["NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits",
                  "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources"],
    "filter": ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
               "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
               "PodTopologySpread", "InterPodAffinity", "DynamicResources"],
    "postFilter": ["DynamicResources", "DefaultPreemption"],
    "preScore": ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
                 "InterPodAffinity", "NodeResourcesBalancedAllocation"],
    "score": ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
              "InterPodAffinity", "NodeResourcesBalancedAllocation", "ImageLocality"],
    "reserve": ["VolumeBinding", "DynamicResources"],
    "preBind": ["VolumeBinding", "DynamicResources"],
    "bind": ["DefaultBinder"],
}
WEIGHTS_V1_34 = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "VolumeBinding": 1,
                 "PodTopologySpread": 2, "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1,
                 "ImageLocality": 1}


def _default_framework() -> dict[str, list[str]]:
    registry = in_tree_registry()
    cfg = load_config(None, registry)
    profile = cfg.profiles[0]
    fw = build_framework(profile, registry, handle_for([], []), cfg.effective_percentage(profile),
                         default_multipoint=DEFAULT_MULTIPOINT)
    assert fw.weights == WEIGHTS_V1_34
    assert fw.percentage_of_nodes_to_score == 100
    return {k: [p.name for p in v] for k, v in fw.points.items() if v}


def test_default_profile_expands_as_upstream() -> None:
    got = _default_framework()
    assert {k: v for k, v in got.items() if k != "preEnqueue"} == \
        {k: v for k, v in EXPANDED_V1_34.items() if k != "preEnqueue"}


@pytest.mark.xfail(reason="kubesched's DefaultPreemption has no pre_enqueue yet (upstream v1.34 has one: "
                          "SchedulerAsyncPreemption is on by default)", strict=False)
def test_default_profile_pre_enqueue_as_upstream() -> None:
    assert _default_framework()["preEnqueue"] == EXPANDED_V1_34["preEnqueue"]


def test_in_tree_args_are_validated_at_load() -> None:
    """Upstream validates in-tree plugin args when loading (validation_test.go
    "invalid-node-percentage": minCandidateNodesPercentage 200)."""
    from kubesched.config import ConfigValidationError

    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"pluginConfig": [{"name": "DefaultPreemption",
                                           "args": {"minCandidateNodesPercentage": 200}}]}]}
    with pytest.raises(ConfigValidationError) as info:
        load_config(doc, in_tree_registry())
    assert [e.field for e in info.value.errors] == ["profiles[0].pluginConfig[0].args.minCandidateNodesPercentage"]
