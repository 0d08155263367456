"""The declared types (kubesched.api.types) against k8s.io/api v0.34.1 for every group:
protobuf field numbers from ``<group>/v1/generated.proto`` (``meta/v1`` from
k8s.io/apimachinery ``pkg/apis/meta/v1/generated.proto``), Go named types and pointers from
``<group>/v1/types.go`` and list semantics from its ``+listType``/``+listMapKey`` markers.
The expected values are copied from those files, field by field."""

from __future__ import annotations

import pytest

from kubesched.api.errors import DecodeError
from kubesched.api.schemas import check_object
from kubesched.api.types import TYPES, ref

# (group, message, json name) -> protobuf number; the file is <group>/v1/generated.proto
NUMBERS = {
    ("coordination", "LeaseSpec", "strategy"): 6,
    ("coordination", "LeaseSpec", "preferredHolder"): 7,
    ("batch", "JobSpec", "podFailurePolicy"): 11,
    ("batch", "JobSpec", "successPolicy"): 16,
    ("batch", "JobSpec", "backoffLimitPerIndex"): 12,
    ("batch", "JobSpec", "maxFailedIndexes"): 13,
    ("batch", "JobSpec", "podReplacementPolicy"): 14,
    ("batch", "JobSpec", "managedBy"): 15,
    ("batch", "JobStatus", "ready"): 9,
    ("batch", "JobStatus", "terminating"): 11,
    ("core", "ServiceStatus", "loadBalancer"): 1,
    ("core", "ServiceStatus", "conditions"): 2,
    ("core", "PersistentVolumeSpec", "claimRef"): 4,
    ("core", "PersistentVolumeSpec", "persistentVolumeReclaimPolicy"): 5,
    ("core", "PersistentVolumeSpec", "nodeAffinity"): 9,
    ("core", "PersistentVolumeClaimStatus", "phase"): 1,
    ("core", "PersistentVolumeClaimStatus", "capacity"): 3,
    ("core", "PersistentVolumeClaimStatus", "allocatedResources"): 5,
    ("apps", "StatefulSetSpec", "serviceName"): 5,
    ("apps", "StatefulSetSpec", "ordinals"): 11,
    ("apps", "DeploymentStatus", "readyReplicas"): 7,
    ("apps", "DeploymentStatus", "terminatingReplicas"): 9,
    ("apps", "ReplicaSetStatus", "observedGeneration"): 3,
    ("storage", "StorageClass", "provisioner"): 2,
    ("storage", "StorageClass", "volumeBindingMode"): 7,
    ("storage", "StorageClass", "allowedTopologies"): 8,
    ("storage", "CSINodeDriver", "topologyKeys"): 3,
    ("resource", "ResourceSliceSpec", "driver"): 1,
    ("resource", "ResourceSliceSpec", "pool"): 2,
    ("resource", "ResourceSliceSpec", "devices"): 6,
    ("resource", "ResourceSliceSpec", "sharedCounters"): 8,
    ("resource", "Device", "attributes"): 2,
    ("resource", "Device", "capacity"): 3,
    ("resource", "Device", "taints"): 8,
    ("resource", "DeviceAttribute", "int"): 2,
    ("resource", "DeviceAttribute", "version"): 5,
    ("rbac", "ClusterRole", "aggregationRule"): 3,
    ("policy", "PodDisruptionBudgetStatus", "disruptedPods"): 2,
    ("policy", "PodDisruptionBudgetStatus", "conditions"): 7,
    ("authorization", "SubjectRulesReviewStatus", "incomplete"): 3,
    ("authentication", "TokenRequestStatus", "expirationTimestamp"): 2,
    ("autoscaling", "ScaleStatus", "selector"): 2,
    ("events", "Event", "deprecatedCount"): 15,
    ("scheduling", "PriorityClass", "preemptionPolicy"): 5,
    ("meta", "Condition", "observedGeneration"): 3,
    ("meta", "Condition", "lastTransitionTime"): 4,
}

# (group, message, json name) -> the Go type as types.go declares it
GO_TYPES = {
    ("core", "PersistentVolumeSpec", "persistentVolumeReclaimPolicy"): "PersistentVolumeReclaimPolicy",
    ("core", "PersistentVolumeSpec", "accessModes"): "[]PersistentVolumeAccessMode",
    ("core", "PersistentVolumeClaimSpec", "volumeMode"): "*PersistentVolumeMode",
    ("core", "PersistentVolumeClaimStatus", "phase"): "PersistentVolumeClaimPhase",
    ("core", "PersistentVolumeClaimStatus", "capacity"): "ResourceList",
    ("core", "PodSecurityContext", "fsGroupChangePolicy"): "*PodFSGroupChangePolicy",
    ("core", "HTTPGetAction", "scheme"): "URIScheme",
    ("core", "Capabilities", "add"): "[]Capability",
    ("core", "ObjectReference", "uid"): "types.UID",
    ("core", "Secret", "type"): "SecretType",
    ("core", "ServiceSpec", "ipFamilies"): "[]IPFamily",
    ("apps", "StatefulSetSpec", "podManagementPolicy"): "PodManagementPolicyType",
    ("apps", "StatefulSetSpec", "selector"): "*LabelSelector",  # *metav1.LabelSelector
    ("apps", "DeploymentCondition", "type"): "DeploymentConditionType",
    ("apps", "DaemonSetUpdateStrategy", "rollingUpdate"): "*RollingUpdateDaemonSet",
    ("batch", "JobSpec", "podFailurePolicy"): "*PodFailurePolicy",
    ("batch", "UncountedTerminatedPods", "succeeded"): "[]types.UID",
    ("storage", "StorageClass", "volumeBindingMode"): "*VolumeBindingMode",
    ("resource", "DeviceTaint", "effect"): "DeviceTaintEffect",
}

# (group, message, json name) -> list semantics from the +listType/+listMapKey/+patchStrategy markers
LISTS = {
    ("meta", "DeleteOptions", "dryRun"): "[atomic]s",
    ("core", "EphemeralContainerCommon", "env"): "[map=name]@core:EnvVar",
    ("core", "EphemeralContainerCommon", "ports"): "[map=containerPort,protocol]@core:ContainerPort",
    ("authentication", "TokenRequestSpec", "audiences"): "[atomic]s",
    ("batch", "PodFailurePolicyOnExitCodesRequirement", "values"): "[set]i32",
    ("authorization", "SubjectRulesReviewStatus", "resourceRules"): "[atomic]@authorization:ResourceRule",
}


@pytest.mark.parametrize("key", sorted(NUMBERS))
def test_protobuf_number_matches_generated_proto(key: tuple[str, str, str]) -> None:
    group, message, json = key
    field = TYPES[(group, message)].field(json)
    assert field is not None and field.number == NUMBERS[key]


@pytest.mark.parametrize("key", sorted(GO_TYPES))
def test_go_type_matches_types_go(key: tuple[str, str, str]) -> None:
    group, message, json = key
    field = TYPES[(group, message)].field(json)
    assert field is not None and field.go_type == GO_TYPES[key]


@pytest.mark.parametrize("key", sorted(LISTS))
def test_list_type_matches_markers(key: tuple[str, str, str]) -> None:
    group, message, json = key
    field = TYPES[(group, message)].field(json)
    assert field is not None and field.type == LISTS[key]


def test_every_declared_field_has_a_protobuf_number() -> None:
    """Every field of every message is in generated.proto, except TypeMeta's apiVersion/kind
    (the envelope carries them) and the members of an embedded struct (the embedding field
    has the number, as ``Volume``'s ``VolumeSource = 2``)."""
    missing = []
    for message in TYPES.values():
        embedded = {m.json for f in message.fields if f.embedded for m in TYPES[ref(f.type) or ("", "")].fields}
        missing += [f"{message.name}.{f.json}" for f in message.fields
                    if f.number is None and f.json not in ("apiVersion", "kind") and f.json not in embedded]
    assert missing == []


def test_subresource_statuses_are_declared() -> None:
    """authentication/v1 TokenRequestStatus {token = 1; expirationTimestamp = 2},
    authorization/v1 SubjectAccessReviewStatus {allowed = 1; reason = 2; evaluationError = 3;
    denied = 4}, SubjectRulesReviewStatus, autoscaling/v1 ScaleStatus {replicas = 1; selector = 2}."""
    def numbers(group: str, name: str) -> dict[str, int | None]:
        return {f.json: f.number for f in TYPES[(group, name)].fields}
    assert numbers("authentication", "TokenRequestStatus") == {"token": 1, "expirationTimestamp": 2}
    assert numbers("authorization", "SubjectAccessReviewStatus") == {
        "allowed": 1, "reason": 2, "evaluationError": 3, "denied": 4}
    assert numbers("authorization", "SubjectRulesReviewStatus") == {
        "resourceRules": 1, "nonResourceRules": 2, "incomplete": 3, "evaluationError": 4}
    assert numbers("autoscaling", "ScaleStatus") == {"replicas": 1, "selector": 2}


@pytest.mark.parametrize("spec,field,message", [
    ({"securityContext": {"fsGroupChangePolicy": 5}}, "spec.securityContext.fsGroupChangePolicy",
     "json: cannot unmarshal number into Go struct field PodSecurityContext.spec.securityContext."
     "fsGroupChangePolicy of type v1.PodFSGroupChangePolicy"),
    ({"containers": [{"name": "c", "livenessProbe": {"httpGet": {"port": 80, "scheme": True}}}]},
     "spec.containers[0].livenessProbe.httpGet.scheme",
     "json: cannot unmarshal bool into Go struct field HTTPGetAction.spec.containers.livenessProbe.httpGet.scheme "
     "of type v1.URIScheme"),
])
def test_decode_errors_print_the_named_type(spec: dict[str, object], field: str, message: str) -> None:
    """Go's ``encoding/json`` prints a named string type by name (core/v1 types.go:
    ``FSGroupChangePolicy *PodFSGroupChangePolicy``, ``Scheme URIScheme``)."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c"}], **spec}}
    with pytest.raises(DecodeError) as err:
        check_object(pod)
    assert err.value.field == field and str(err.value).endswith(message)
