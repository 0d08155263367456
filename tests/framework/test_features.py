"""Feature gates per release and ``--feature-gates`` parsing.

Expected defaults are upstream's versioned feature specs: ``pkg/features/kube_features.go``
at v1.35 (``defaultVersionedKubernetesFeatureGates``) and the scheduler's versioned specs
after v1.37, each gate's value at a release being its last step at or before it
(component-base ``featuregate.VersionedSpecs``). Error texts follow component-base's
``featureGate.Set`` ("unrecognized feature gate", "cannot set feature gate ... locked").
"""

import pytest

from kubesched.api.kubeversion import (
    NEWEST, SUPPORTED, VersionError, default_minor, from_version_info, parse_minor,
)
from kubesched.framework.features import FeatureGateError, Features, parse_feature_gates


@pytest.mark.parametrize("gate,version,want", [
    # kube_features.go v1.35: OpportunisticBatching {1.35 Beta true}
    ("OpportunisticBatching", "1.34", False),
    ("OpportunisticBatching", "1.35", True),
    # NominatedNodeNameForExpectation {1.34 Alpha false, 1.35 Beta true}
    ("NominatedNodeNameForExpectation", "1.34", False),
    ("NominatedNodeNameForExpectation", "1.35", True),
    # NodeDeclaredFeatures {1.35 Alpha false, 1.36 Beta true, 1.37 GA locked}
    ("NodeDeclaredFeatures", "1.35", False),
    ("NodeDeclaredFeatures", "1.36", True),
    ("NodeDeclaredFeatures", "1.37", True),
    # DRAPartitionableDevices {1.33 Alpha false, 1.36 Beta true}
    ("DRAPartitionableDevices", "1.35", False),
    ("DRAPartitionableDevices", "1.36", True),
    ("DRAPartitionableDevices", "1.37", True),  # still Beta in the scheduler's specs after v1.37
    # DRAConsumableCapacity {1.34 Alpha false, 1.36 Beta true}
    ("DRAConsumableCapacity", "1.35", False),
    ("DRAConsumableCapacity", "1.36", True),
    ("DRAConsumableCapacity", "1.37", True),
    # StorageCapacityScoring {1.33 Alpha false, 1.37 Beta true}
    ("StorageCapacityScoring", "1.36", False),
    ("StorageCapacityScoring", "1.37", True),
    # VolumeLimitScaling {1.35 Alpha false, 1.37 Beta true}
    ("VolumeLimitScaling", "1.36", False),
    ("VolumeLimitScaling", "1.37", True),
    # GangScheduling {1.35 Alpha false}; TaintTolerationComparisonOperators {1.35 Alpha false}
    ("GangScheduling", "1.35", False),
    ("TaintTolerationComparisonOperators", "1.37", False),
    # DynamicResourceAllocation {1.34 GA true, 1.35 GA locked}
    ("DynamicResourceAllocation", "1.34", True),
])
def test_release_defaults(gate: str, version: str, want: bool) -> None:
    assert Features.for_version(version).enabled(gate) is want


def test_overrides_apply() -> None:
    fts = Features.for_version("1.35", "OpportunisticBatching=false, DynamicResourceAllocation=true")
    assert not fts.enabled("OpportunisticBatching")
    assert fts.to_json() == {"kubernetesVersion": "1.35",
                             "featureGates": {"DynamicResourceAllocation": True, "OpportunisticBatching": False}}


@pytest.mark.parametrize("version,gates,message", [
    ("1.35", "NoSuchGate=true", "unrecognized feature gate: NoSuchGate"),
    # DynamicResourceAllocation is LockToDefault from 1.35
    ("1.35", "DynamicResourceAllocation=false",
     "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true"),
    ("1.34", "OpportunisticBatching=false", "feature gate OpportunisticBatching does not exist in Kubernetes 1.34"),
    ("1.35", "GangScheduling=true", "GangScheduling=true is not supported by kubesched"),
    ("1.35", "GangScheduling", "invalid value 'GangScheduling'"),
    ("1.35", "GangScheduling=maybe", "invalid value 'GangScheduling=maybe'"),
])
def test_bad_feature_gates(version: str, gates: str, message: str) -> None:
    with pytest.raises(FeatureGateError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Features.for_version(version, gates)


def test_parse_feature_gates_forms() -> None:
    # component-base accepts strconv.ParseBool's spellings
    assert parse_feature_gates("A=true,B=False,C=1,D=0,") == {"A": True, "B": False, "C": True, "D": False}


@pytest.mark.parametrize("text,want", [
    ("1.35", "1.35"), ("v1.35", "1.35"), ("v1.35.4", "1.35"), ("1.36.2", "1.36"),
    ("v1.37.0+k3s1", "1.37"), ("v1.34.3-gke.1200", "1.34"),
])
def test_parse_minor(text: str, want: str) -> None:
    assert parse_minor(text) == want


@pytest.mark.parametrize("text", ["1.33", "v1.38.0", "2.0", "latest", ""])
def test_unsupported_version_names_the_supported_ones(text: str) -> None:
    with pytest.raises(VersionError, match="supported: 1.34, 1.35, 1.36, 1.37"):
        parse_minor(text)


def test_version_info_forms() -> None:
    assert from_version_info({"major": "1", "minor": "35+", "gitVersion": ""}) == "1.35"
    assert from_version_info({"major": "1", "minor": "36", "gitVersion": "v1.36.1-eks-abc"}) == "1.36"


def test_default_release(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBESCHED_KUBERNETES_VERSION", raising=False)
    assert default_minor() == NEWEST == SUPPORTED[-1]
    assert Features.for_version().version == NEWEST
    monkeypatch.setenv("KUBESCHED_KUBERNETES_VERSION", "v1.35.4")
    assert Features.for_version().version == "1.35"


def test_release_changes() -> None:
    assert not Features.for_version("1.34").has("TaintTolerationGenericReason")
    assert Features.for_version("1.35").has("TaintTolerationGenericReason")
    assert not Features.for_version("1.36").has("DynamicResourcesScoreAllocatedClaims")
    assert Features.for_version("1.37").has("DynamicResourcesScoreAllocatedClaims")


# The scheduler's versioned specs after v1.37 (the newest stored upstream list of the gates
# kube-scheduler reads: ``defaultVersionedKubernetesFeatureGates`` of the scheduler's features
# package), each 1.36 / 1.37 value checked step by step.
@pytest.mark.parametrize("gate,version,want", [
    ("ClearingNominatedNodeNameAfterBinding", "1.36", True),  # kube_features.go: {1.35 Beta true}
    ("ClearingNominatedNodeNameAfterBinding", "1.37", True),
    ("NominatedNodeNameForExpectation", "1.36", True),  # {1.34 Alpha false, 1.35 Beta true}
    ("NominatedNodeNameForExpectation", "1.37", True),
    ("SchedulerAsyncAPICalls", "1.36", False),  # {1.34 Beta false}
    ("SchedulerAsyncAPICalls", "1.37", False),
    ("StorageCapacityScoring", "1.36", False),  # {1.33 Alpha false, 1.37 Beta true}
    ("StorageCapacityScoring", "1.37", True),
    ("VolumeLimitScaling", "1.35", False),  # {1.35 Alpha false, 1.37 Beta true}
    ("InPlacePodLevelResourcesVerticalScaling", "1.35", False),  # {1.35 Alpha false, 1.36 Beta true}
    ("InPlacePodLevelResourcesVerticalScaling", "1.36", True),
    ("InPlacePodLevelResourcesVerticalScaling", "1.37", True),
    ("TaintTolerationComparisonOperators", "1.36", False),  # {1.35 Alpha false}
    ("GangScheduling", "1.36", False),  # {1.35 Alpha false}; gone in 1.37
    ("GenericWorkload", "1.37", False),  # {1.35 Alpha false, 1.37 Beta false}
    ("OpportunisticBatching", "1.37", True),  # {1.35 Beta true}
    ("DRAAdminAccess", "1.36", True),  # {1.36 GA true locked}
    ("VolumeAttributesClass", "1.37", True),  # {1.36 GA true locked}
    ("CompositePodGroup", "1.37", False),  # new in 1.37, Alpha false
    ("SchedulerPreQueueingHints", "1.37", False),
    ("InterPodAffinityHostnameFastPath", "1.37", False),
    ("PodGroupPreemptionPolicy", "1.37", False),
    ("InPlacePodVerticalScalingSchedulerPreemption", "1.37", False),
    # removed gates keep the behaviour that stayed: sidecars and queueing hints are always on
    ("SidecarContainers", "1.37", True),
    ("SchedulerQueueingHints", "1.37", True),
])
def test_release_defaults_1_36_1_37(gate: str, version: str, want: bool) -> None:
    assert Features.for_version(version).enabled(gate) is want


@pytest.mark.parametrize("version,gates,message", [
    # kubernetes/kubernetes#139520 folded GangScheduling and WorkloadAwarePreemption into
    # GenericWorkload for 1.37; #138420 and #137755 deleted the GA-locked QueueingHints and
    # SidecarContainers gates: component-base then says "unrecognized feature gate".
    ("1.37", "GangScheduling=false", "unrecognized feature gate: GangScheduling (removed in Kubernetes 1.37)"),
    ("1.37", "WorkloadAwarePreemption=false", "unrecognized feature gate: WorkloadAwarePreemption"),
    ("1.37", "SchedulerQueueingHints=true", "unrecognized feature gate: SchedulerQueueingHints"),
    ("1.37", "SidecarContainers=true", "unrecognized feature gate: SidecarContainers"),
    ("1.35", "WorkloadAwarePreemption=false", "does not exist in Kubernetes 1.35"),
    ("1.36", "CompositePodGroup=false", "does not exist in Kubernetes 1.36"),
])
def test_removed_and_new_gates(version: str, gates: str, message: str) -> None:
    with pytest.raises(FeatureGateError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Features.for_version(version, gates)


def test_gates_still_taken_before_removal() -> None:
    assert not Features.for_version("1.36", "GangScheduling=false,WorkloadAwarePreemption=false").enabled(
        "WorkloadAwarePreemption")
    assert Features.for_version("1.36", "SidecarContainers=true").enabled("SidecarContainers")


@pytest.mark.parametrize("version,gates", [
    ("1.36", "DRAPartitionableDevices=false,DRAConsumableCapacity=false"),
    ("1.35", "DRAPartitionableDevices=true,DRAConsumableCapacity=true"),
])
def test_partitionable_and_consumable_gates_are_implemented_both_ways(version: str, gates: str) -> None:
    fts = Features.for_version(version, gates)
    assert "DRAPartitionableDevices" not in " ".join(fts.not_honoured())
    assert "DRAConsumableCapacity" not in " ".join(fts.not_honoured())
