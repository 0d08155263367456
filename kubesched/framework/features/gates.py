"""The feature gates kube-scheduler reads, with their defaults per release, as data.

Transcribed from upstream's versioned feature specs: ``pkg/features/kube_features.go``
(``defaultVersionedKubernetesFeatureGates``) at v1.35, and the scheduler's own versioned
specs after v1.37 (which carry every entry since 1.25). A gate upstream deleted ends with a
``REMOVED`` step, naming the pull request that deleted it. Each gate lists ``(since, default,
stage, locked)`` steps; a release takes the last step at or before it, as component-base's
``VersionedSpecs`` does. Gates only other components read are not here: kube-scheduler
accepts them, but they change nothing it decides.

``honoured``: the values kubesched implements. Asking ``--feature-gates`` for another value
is an error rather than a silent difference; a release whose *default* is outside it is
listed in ``docs/versions.md`` (what differs, and for which pods).
"""

from __future__ import annotations

from dataclasses import dataclass

ALPHA, BETA, GA, DEPRECATED = "Alpha", "Beta", "GA", "Deprecated"
# A step with REMOVED: the gate is gone from that release (kube-scheduler refuses it); its
# default is the behaviour that stays.
REMOVED = "Removed"
BOTH = frozenset({True, False})
ON, OFF = frozenset({True}), frozenset({False})


@dataclass(frozen=True, slots=True)
class Step:
    since: str  # minor release, "1.35"
    default: bool
    stage: str
    locked: bool = False


@dataclass(frozen=True, slots=True)
class Gate:
    name: str
    steps: tuple[Step, ...]
    honoured: frozenset[bool]


def _g(name: str, honoured: frozenset[bool], *steps: tuple[str, bool, str] | tuple[str, bool, str, bool]) -> Gate:
    return Gate(name, tuple(Step(*s) for s in steps), honoured)


GATES: dict[str, Gate] = {g.name: g for g in (
    _g("ClearingNominatedNodeNameAfterBinding", BOTH, ("1.34", False, ALPHA), ("1.35", True, BETA)),
    _g("CompositePodGroup", OFF, ("1.37", False, ALPHA)),
    _g("DRAAdminAccess", ON, ("1.32", False, ALPHA), ("1.34", True, BETA), ("1.36", True, GA, True)),
    _g("DRAConsumableCapacity", BOTH, ("1.34", False, ALPHA), ("1.36", True, BETA)),
    _g("DRADeviceBindingConditions", BOTH, ("1.34", False, ALPHA), ("1.36", True, BETA)),
    _g("DRADeviceTaintRules", BOTH, ("1.35", False, ALPHA), ("1.36", False, BETA), ("1.37", True, GA)),
    _g("DRADeviceTaints", BOTH, ("1.33", False, ALPHA), ("1.36", True, BETA), ("1.37", True, GA)),
    _g("DRAExtendedResource", BOTH, ("1.34", False, ALPHA), ("1.36", True, BETA), ("1.37", True, GA, True)),
    _g("DRAListTypeAttributes", OFF, ("1.36", False, ALPHA)),
    _g("DRANodeAllocatableResources", OFF, ("1.36", False, ALPHA)),
    _g("DRAPartitionableDevices", BOTH, ("1.33", False, ALPHA), ("1.36", True, BETA)),
    _g("DRAPrioritizedList", ON, ("1.33", False, ALPHA), ("1.34", True, BETA), ("1.36", True, GA),
       ("1.37", True, GA, True)),
    _g("DRAResourceClaimDeviceStatus", ON, ("1.32", False, ALPHA), ("1.33", True, BETA),
       ("1.37", True, GA, True)),
    _g("DRASchedulerFilterTimeout", BOTH, ("1.34", True, BETA)),
    _g("DRAWorkloadResourceClaims", OFF, ("1.36", False, ALPHA), ("1.37", False, BETA)),
    _g("DynamicResourceAllocation", BOTH, ("1.26", False, ALPHA), ("1.32", False, BETA), ("1.34", True, GA),
       ("1.35", True, GA, True)),
    # folded into GenericWorkload in 1.37 (kubernetes/kubernetes#139520)
    _g("GangScheduling", OFF, ("1.35", False, ALPHA), ("1.37", False, REMOVED)),
    _g("GenericWorkload", OFF, ("1.35", False, ALPHA), ("1.37", False, BETA)),
    _g("InPlacePodLevelResourcesVerticalScaling", OFF, ("1.35", False, ALPHA), ("1.36", True, BETA)),
    _g("InPlacePodVerticalScaling", ON, ("1.27", False, ALPHA), ("1.33", True, BETA), ("1.35", True, GA, True)),
    _g("InPlacePodVerticalScalingSchedulerPreemption", OFF, ("1.37", False, ALPHA)),
    _g("InterPodAffinityHostnameFastPath", OFF, ("1.37", False, ALPHA)),
    _g("MatchLabelKeysInPodTopologySpread", ON, ("1.25", False, ALPHA), ("1.27", True, BETA)),
    _g("MatchLabelKeysInPodTopologySpreadSelectorMerge", ON, ("1.34", True, BETA)),
    _g("NodeDeclaredFeatures", BOTH, ("1.35", False, ALPHA), ("1.36", True, BETA), ("1.37", True, GA, True)),
    _g("NodeInclusionPolicyInPodTopologySpread", ON, ("1.25", False, ALPHA), ("1.26", True, BETA),
       ("1.33", True, GA, True)),
    _g("NominatedNodeNameForExpectation", BOTH, ("1.34", False, ALPHA), ("1.35", True, BETA)),
    _g("OpportunisticBatching", OFF, ("1.35", True, BETA)),
    _g("PodGroupPreemptionPolicy", OFF, ("1.37", False, ALPHA)),
    _g("PodLevelResources", ON, ("1.32", False, ALPHA), ("1.34", True, BETA)),
    _g("SchedulerAsyncAPICalls", OFF, ("1.34", False, BETA)),
    _g("SchedulerAsyncPreemption", ON, ("1.32", False, ALPHA), ("1.33", True, BETA)),
    _g("SchedulerPopFromBackoffQ", ON, ("1.33", True, BETA)),
    _g("SchedulerPreQueueingHints", OFF, ("1.37", False, ALPHA)),
    # removed in 1.37 (kubernetes/kubernetes#138420)
    _g("SchedulerQueueingHints", ON, ("1.28", False, BETA), ("1.32", True, BETA), ("1.34", True, GA, True),
       ("1.37", True, REMOVED)),
    # removed in 1.37 (kubernetes/kubernetes#137755)
    _g("SidecarContainers", ON, ("1.28", False, ALPHA), ("1.29", True, BETA), ("1.33", True, GA, True),
       ("1.37", True, REMOVED)),
    _g("StorageCapacityScoring", BOTH, ("1.33", False, ALPHA), ("1.37", True, BETA)),
    _g("TaintTolerationComparisonOperators", BOTH, ("1.35", False, ALPHA)),
    _g("TopologyAwareWorkloadScheduling", OFF, ("1.36", False, ALPHA)),
    _g("VolumeAttributesClass", ON, ("1.29", False, ALPHA), ("1.31", False, BETA), ("1.34", True, GA),
       ("1.36", True, GA, True)),
    _g("VolumeLimitScaling", BOTH, ("1.35", False, ALPHA), ("1.37", True, BETA)),
    # folded into GenericWorkload in 1.37 (kubernetes/kubernetes#139520)
    _g("WorkloadAwarePreemption", OFF, ("1.36", False, ALPHA), ("1.37", False, REMOVED)),
)}
