"""The node declared features each Kubernetes release knows, and which of them a pod needs.

Kubelets publish the features they support in ``status.declaredFeatures``; the scheduler's
NodeDeclaredFeatures plugin infers from a pod's spec the features the pod needs and keeps it
off nodes that do not declare them. Both read one registry, upstream's
``k8s.io/component-helpers/nodedeclaredfeatures`` (``features/registry.go`` ``AllFeatures``),
whose content differs per release:

- 1.35 (component-helpers v0.35.4): RestartAllContainersOnContainerExits,
  GuaranteedQoSPodCPUResize, InPlacePodLevelResourcesVerticalScaling.
- 1.36 (v0.36.0): GuaranteedQoSPodCPUResize removed; ExtendWebSocketsToKubelet,
  InPlacePodVerticalScalingInitContainers and UserNamespacesHostNetworkSupport added.
- 1.37 (the v1.37 development branch at its feature freeze): InPlacePodVerticalScalingMemoryBackedVolumes,
  DRANodeAllocatableResources, VolumeBindMountOptions and DRAOptionalNodeOperations added.

Only three features are needed *to schedule* a pod (``InferForScheduling``); the rest matter
only for updates of a running pod (resizes), which the API server's admission checks, not
the scheduler. Every feature's ``MaxVersion`` is nil in these releases (no upper bound).

This module sits in ``api`` because the embedded API server's simulated kubelets and the
scheduler's plugin both need it, as upstream's kubelet and scheduler share component-helpers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.kubeversion import minor_number

PodSpec = Mapping[str, Any]


def _containers(spec: PodSpec, *kinds: str) -> Iterator[Mapping[str, Any]]:
    for kind in kinds:
        for c in spec.get(kind) or ():
            if isinstance(c, Mapping):
                yield c


def needs_restart_all_containers(spec: PodSpec) -> bool:
    """``restartallcontainers``: a container or init container has a restart rule whose
    action is RestartAllContainers."""
    for c in _containers(spec, "containers", "initContainers"):
        for rule in c.get("restartPolicyRules") or ():
            if isinstance(rule, Mapping) and rule.get("action") == "RestartAllContainers":
                return True
    return False


def needs_user_namespaces_host_network(spec: PodSpec) -> bool:
    """``usernamespaceshostnetwork``: host networking together with ``hostUsers: false``."""
    return spec.get("hostNetwork") is True and spec.get("hostUsers") is False


def needs_volume_bind_mount_options(spec: PodSpec) -> bool:
    """``volumebindmountoptions``: a volume mount of any container (ephemeral ones included)
    asks for bind mount options."""
    for c in _containers(spec, "containers", "initContainers", "ephemeralContainers"):
        for m in c.get("volumeMounts") or ():
            if isinstance(m, Mapping) and m.get("bindMountOptions"):
                return True
    return False


@dataclass(frozen=True, slots=True)
class Feature:
    """One registered feature. ``infer_for_scheduling`` is None for features only updates
    need; ``max_version`` (major, minor, patch), when set, is the last release the feature
    is required in (upstream ``MaxVersion``, inclusive)."""

    name: str
    since: str  # the first release whose registry has it
    until: str | None = None  # the last release whose registry has it
    infer_for_scheduling: Callable[[PodSpec], bool] | None = None
    max_version: tuple[int, int, int] | None = None

    def in_release(self, minor: str) -> bool:
        n = minor_number(minor)
        return minor_number(self.since) <= n and (self.until is None or n <= minor_number(self.until))


# Every feature any supported release registers, as upstream names them.
FEATURES: tuple[Feature, ...] = (
    Feature("DRANodeAllocatableResources", "1.37"),
    Feature("DRAOptionalNodeOperations", "1.37"),  # DynamicResources filters claims needing it
    Feature("ExtendWebSocketsToKubelet", "1.36"),
    Feature("GuaranteedQoSPodCPUResize", "1.35", until="1.35"),
    Feature("InPlacePodLevelResourcesVerticalScaling", "1.35"),
    Feature("InPlacePodVerticalScalingInitContainers", "1.36"),
    Feature("InPlacePodVerticalScalingMemoryBackedVolumes", "1.37"),
    Feature("RestartAllContainersOnContainerExits", "1.35", infer_for_scheduling=needs_restart_all_containers),
    Feature("UserNamespacesHostNetworkSupport", "1.36", infer_for_scheduling=needs_user_namespaces_host_network),
    Feature("VolumeBindMountOptions", "1.37", infer_for_scheduling=needs_volume_bind_mount_options),
)


def registry(minor: str) -> tuple[Feature, ...]:
    """The features release ``minor`` registers, sorted by name (upstream sorts its registry)."""
    return tuple(sorted((f for f in FEATURES if f.in_release(minor)), key=lambda f: f.name))


def infer_for_scheduling(features: tuple[Feature, ...], spec: PodSpec,
                         version: tuple[int, int, int]) -> frozenset[str]:
    """Upstream ``Framework.InferForPodScheduling``: the features of ``features`` a pod with
    ``spec`` needs on its node, for a scheduler of ``version`` (a feature past its
    ``max_version`` is no longer required)."""
    need = set()
    for f in features:
        if f.max_version is not None and version > f.max_version:
            continue
        if f.infer_for_scheduling is not None and f.infer_for_scheduling(spec):
            need.add(f.name)
    return frozenset(need)


# The features a kubelet of each release declares with its default feature gates (the
# NodeDeclaredFeatures gate itself is off in 1.35, so a 1.35 kubelet declares nothing), from
# the kubelet gates' documented defaults: RestartAllContainersOnContainerExits,
# ExtendWebSocketsToKubelet and InPlacePodLevelResourcesVerticalScaling beta and on from 1.36,
# InPlacePodVerticalScalingInitContainers GA in 1.37. Features whose gates are alpha
# (UserNamespacesHostNetworkSupport, VolumeBindMountOptions, DRANodeAllocatableResources,
# DRAOptionalNodeOperations, InPlacePodVerticalScalingMemoryBackedVolumes) are not declared.
_KUBELET_DEFAULTS: Mapping[str, frozenset[str]] = {
    "1.36": frozenset({"ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling",
                       "RestartAllContainersOnContainerExits"}),
    "1.37": frozenset({"ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling",
                       "InPlacePodVerticalScalingInitContainers", "RestartAllContainersOnContainerExits"}),
}


def kubelet_declared(minor: str) -> list[str]:
    """What a default kubelet of release ``minor`` publishes in ``status.declaredFeatures``:
    the registered features its default gates turn on, sorted as the API documents the list."""
    on = _KUBELET_DEFAULTS.get(minor, frozenset())
    return [f.name for f in registry(minor) if f.name in on]
