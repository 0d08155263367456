"""The Go types of the kinds kubesched decodes, as :mod:`kubesched.api.schema` schemas.

Field names, JSON types and Go type names follow k8s.io/api v0.34 (``core/v1/types.go``,
``scheduling/v1``, ``policy/v1``, ``apps/v1``, ``coordination/v1``) and apimachinery's ``metav1`` (``ObjectMeta``,
``LabelSelector``, ``Time``; its package is also named ``v1``), and scheduler-plugins'
``scheduling.x-k8s.io/v1alpha1`` PodGroup. Every field kubesched or its validation reads is
declared with its exact type; structs kubesched never looks into (probes, security
contexts, volume sources other than claims) are declared without fields, so they are
only checked to be objects. Building blocks other kinds reuse (:data:`OBJECT_META`,
:data:`LABEL_SELECTOR`, :data:`POD_TEMPLATE_SPEC`, :data:`RESOURCE_LIST`, ...) are exported.
"""

from __future__ import annotations

from kubesched.api.schema import (
    BOOL, INT32, INT64, INT_OR_STRING, QUANTITY, STRING, TIME, ListOf, MapOf, Str, Struct, register,
)

__all__ = [
    "AFFINITY", "CONFIG_MAP", "CONTAINER", "DEPLOYMENT", "LABEL_SELECTOR", "LEASE", "NAMESPACE", "NODE",
    "OBJECT_META", "POD", "POD_DISRUPTION_BUDGET", "POD_GROUP", "POD_SPEC", "POD_TEMPLATE_SPEC",
    "PRIORITY_CLASS", "REPLICA_SET", "RESOURCE_LIST", "STRING_LIST", "STRING_MAP", "TOLERATION",
    "TOPOLOGY_SPREAD_CONSTRAINT",
]

STRING_MAP = MapOf(STRING, key_in_path=False)
STRING_LIST = ListOf(STRING)
RESOURCE_LIST = MapOf(QUANTITY, "v1.ResourceList")
_CONDITION_STATUS = Str("v1.ConditionStatus")


def _shallow(go_type: str) -> Struct:
    """A struct kubesched does not read: only checked to be an object."""
    return Struct(go_type)


# -- metav1 ---------------------------------------------------------------------------------
OWNER_REFERENCE = Struct(
    "v1.OwnerReference", apiVersion=STRING, kind=STRING, name=STRING, uid=Str("types.UID"),
    controller=BOOL, blockOwnerDeletion=BOOL)
OBJECT_META = Struct(
    "v1.ObjectMeta", name=STRING, generateName=STRING, namespace=STRING, selfLink=STRING,
    uid=Str("types.UID"), resourceVersion=STRING, generation=INT64, creationTimestamp=TIME,
    deletionTimestamp=TIME, deletionGracePeriodSeconds=INT64, labels=STRING_MAP, annotations=STRING_MAP,
    ownerReferences=ListOf(OWNER_REFERENCE), finalizers=STRING_LIST,
    managedFields=ListOf(_shallow("v1.ManagedFieldsEntry")))
LABEL_SELECTOR_REQUIREMENT = Struct(
    "v1.LabelSelectorRequirement", key=STRING, operator=Str("v1.LabelSelectorOperator"), values=STRING_LIST)
LABEL_SELECTOR = Struct(
    "v1.LabelSelector", matchLabels=STRING_MAP, matchExpressions=ListOf(LABEL_SELECTOR_REQUIREMENT))
METAV1_CONDITION = Struct(
    "v1.Condition", type=STRING, status=_CONDITION_STATUS, observedGeneration=INT64,
    lastTransitionTime=TIME, reason=STRING, message=STRING)

# -- scheduling constraints -----------------------------------------------------------------
NODE_SELECTOR_REQUIREMENT = Struct(
    "v1.NodeSelectorRequirement", key=STRING, operator=Str("v1.NodeSelectorOperator"), values=STRING_LIST)
NODE_SELECTOR_TERM = Struct(
    "v1.NodeSelectorTerm", matchExpressions=ListOf(NODE_SELECTOR_REQUIREMENT),
    matchFields=ListOf(NODE_SELECTOR_REQUIREMENT))
NODE_SELECTOR = Struct("v1.NodeSelector", nodeSelectorTerms=ListOf(NODE_SELECTOR_TERM))
_REQ = "requiredDuringSchedulingIgnoredDuringExecution"
_PREF = "preferredDuringSchedulingIgnoredDuringExecution"
NODE_AFFINITY = Struct("v1.NodeAffinity", **{
    _REQ: NODE_SELECTOR,
    _PREF: ListOf(Struct("v1.PreferredSchedulingTerm", weight=INT32, preference=NODE_SELECTOR_TERM))})
POD_AFFINITY_TERM = Struct(
    "v1.PodAffinityTerm", labelSelector=LABEL_SELECTOR, namespaces=STRING_LIST, topologyKey=STRING,
    namespaceSelector=LABEL_SELECTOR, matchLabelKeys=STRING_LIST, mismatchLabelKeys=STRING_LIST)
_WEIGHTED = Struct("v1.WeightedPodAffinityTerm", weight=INT32, podAffinityTerm=POD_AFFINITY_TERM)
AFFINITY = Struct(
    "v1.Affinity", nodeAffinity=NODE_AFFINITY,
    podAffinity=Struct("v1.PodAffinity", **{_REQ: ListOf(POD_AFFINITY_TERM), _PREF: ListOf(_WEIGHTED)}),
    podAntiAffinity=Struct("v1.PodAntiAffinity", **{_REQ: ListOf(POD_AFFINITY_TERM), _PREF: ListOf(_WEIGHTED)}))
TOLERATION = Struct(
    "v1.Toleration", key=STRING, operator=Str("v1.TolerationOperator"), value=STRING,
    effect=Str("v1.TaintEffect"), tolerationSeconds=INT64)
TOPOLOGY_SPREAD_CONSTRAINT = Struct(
    "v1.TopologySpreadConstraint", maxSkew=INT32, topologyKey=STRING,
    whenUnsatisfiable=Str("v1.UnsatisfiableConstraintAction"), labelSelector=LABEL_SELECTOR, minDomains=INT32,
    nodeAffinityPolicy=Str("v1.NodeInclusionPolicy"), nodeTaintsPolicy=Str("v1.NodeInclusionPolicy"),
    matchLabelKeys=STRING_LIST)
TAINT = Struct("v1.Taint", key=STRING, value=STRING, effect=Str("v1.TaintEffect"), timeAdded=TIME)

# -- containers -----------------------------------------------------------------------------
CONTAINER_PORT = Struct(
    "v1.ContainerPort", name=STRING, hostPort=INT32, containerPort=INT32, protocol=Str("v1.Protocol"),
    hostIP=STRING)
RESOURCE_REQUIREMENTS = Struct(
    "v1.ResourceRequirements", limits=RESOURCE_LIST, requests=RESOURCE_LIST,
    claims=ListOf(Struct("v1.ResourceClaim", name=STRING, request=STRING)))
_ENV_VAR = Struct("v1.EnvVar", name=STRING, value=STRING, valueFrom=_shallow("v1.EnvVarSource"))
_VOLUME_MOUNT = Struct(
    "v1.VolumeMount", name=STRING, readOnly=BOOL, recursiveReadOnly=Str("v1.RecursiveReadOnlyMode"),
    mountPath=STRING, subPath=STRING, mountPropagation=Str("v1.MountPropagationMode"), subPathExpr=STRING)
_RESIZE_POLICY = Struct(
    "v1.ContainerResizePolicy", resourceName=Str("v1.ResourceName"),
    restartPolicy=Str("v1.ResourceResizeRestartPolicy"))
CONTAINER = Struct(
    "v1.Container", name=STRING, image=STRING, command=STRING_LIST, args=STRING_LIST, workingDir=STRING,
    ports=ListOf(CONTAINER_PORT), envFrom=ListOf(_shallow("v1.EnvFromSource")), env=ListOf(_ENV_VAR),
    resources=RESOURCE_REQUIREMENTS, resizePolicy=ListOf(_RESIZE_POLICY),
    restartPolicy=Str("v1.ContainerRestartPolicy"), restartPolicyRules=ListOf(_shallow("v1.ContainerRestartRule")),
    volumeMounts=ListOf(_VOLUME_MOUNT), volumeDevices=ListOf(_shallow("v1.VolumeDevice")),
    livenessProbe=_shallow("v1.Probe"), readinessProbe=_shallow("v1.Probe"), startupProbe=_shallow("v1.Probe"),
    lifecycle=_shallow("v1.Lifecycle"), terminationMessagePath=STRING,
    terminationMessagePolicy=Str("v1.TerminationMessagePolicy"), imagePullPolicy=Str("v1.PullPolicy"),
    securityContext=_shallow("v1.SecurityContext"), stdin=BOOL, stdinOnce=BOOL, tty=BOOL)
# EphemeralContainer inlines EphemeralContainerCommon (the Container fields) and adds one.
EPHEMERAL_CONTAINER = Struct("v1.EphemeralContainer", **CONTAINER.fields, targetContainerName=STRING)

# -- pods -----------------------------------------------------------------------------------
VOLUME = Struct(
    "v1.Volume", name=STRING,
    persistentVolumeClaim=Struct("v1.PersistentVolumeClaimVolumeSource", claimName=STRING, readOnly=BOOL),
    ephemeral=Struct("v1.EphemeralVolumeSource", volumeClaimTemplate=_shallow("v1.PersistentVolumeClaimTemplate")),
    **{k: _shallow(f"v1.{t}VolumeSource") for k, t in (
        ("hostPath", "HostPath"), ("emptyDir", "EmptyDir"), ("secret", "Secret"), ("configMap", "ConfigMap"),
        ("projected", "Projected"), ("downwardAPI", "DownwardAPI"), ("csi", "CSI"), ("nfs", "NFS"),
        ("image", "Image"))})
POD_SPEC = Struct(
    "v1.PodSpec", volumes=ListOf(VOLUME), initContainers=ListOf(CONTAINER), containers=ListOf(CONTAINER),
    ephemeralContainers=ListOf(EPHEMERAL_CONTAINER), restartPolicy=Str("v1.RestartPolicy"),
    terminationGracePeriodSeconds=INT64, activeDeadlineSeconds=INT64, dnsPolicy=Str("v1.DNSPolicy"),
    nodeSelector=STRING_MAP, serviceAccountName=STRING, serviceAccount=STRING, automountServiceAccountToken=BOOL,
    nodeName=STRING, hostNetwork=BOOL, hostPID=BOOL, hostIPC=BOOL, shareProcessNamespace=BOOL,
    securityContext=_shallow("v1.PodSecurityContext"),
    imagePullSecrets=ListOf(Struct("v1.LocalObjectReference", name=STRING)), hostname=STRING, subdomain=STRING,
    affinity=AFFINITY, schedulerName=STRING, tolerations=ListOf(TOLERATION),
    hostAliases=ListOf(Struct("v1.HostAlias", ip=STRING, hostnames=STRING_LIST)), priorityClassName=STRING,
    priority=INT32, dnsConfig=_shallow("v1.PodDNSConfig"),
    readinessGates=ListOf(Struct("v1.PodReadinessGate", conditionType=Str("v1.PodConditionType"))),
    runtimeClassName=STRING, enableServiceLinks=BOOL, preemptionPolicy=Str("v1.PreemptionPolicy"),
    overhead=RESOURCE_LIST, topologySpreadConstraints=ListOf(TOPOLOGY_SPREAD_CONSTRAINT), setHostnameAsFQDN=BOOL,
    os=Struct("v1.PodOS", name=Str("v1.OSName")), hostUsers=BOOL,
    schedulingGates=ListOf(Struct("v1.PodSchedulingGate", name=STRING)),
    resourceClaims=ListOf(Struct("v1.PodResourceClaim", name=STRING, resourceClaimName=STRING,
                                 resourceClaimTemplateName=STRING)),
    resources=RESOURCE_REQUIREMENTS, hostnameOverride=STRING)
_POD_CONDITION = Struct(
    "v1.PodCondition", type=Str("v1.PodConditionType"), observedGeneration=INT64, status=_CONDITION_STATUS,
    lastProbeTime=TIME, lastTransitionTime=TIME, reason=STRING, message=STRING)
_CONTAINER_STATUS = Struct(
    "v1.ContainerStatus", name=STRING, state=_shallow("v1.ContainerState"),
    lastState=_shallow("v1.ContainerState"), ready=BOOL, restartCount=INT32, image=STRING, imageID=STRING,
    containerID=STRING, started=BOOL, allocatedResources=RESOURCE_LIST, resources=RESOURCE_REQUIREMENTS)
POD_STATUS = Struct(
    "v1.PodStatus", observedGeneration=INT64, phase=Str("v1.PodPhase"), conditions=ListOf(_POD_CONDITION),
    message=STRING, reason=STRING, nominatedNodeName=STRING, hostIP=STRING,
    hostIPs=ListOf(Struct("v1.HostIP", ip=STRING)), podIP=STRING, podIPs=ListOf(Struct("v1.PodIP", ip=STRING)),
    startTime=TIME, initContainerStatuses=ListOf(_CONTAINER_STATUS), containerStatuses=ListOf(_CONTAINER_STATUS),
    qosClass=Str("v1.PodQOSClass"), ephemeralContainerStatuses=ListOf(_CONTAINER_STATUS),
    resize=Str("v1.PodResizeStatus"),
    resourceClaimStatuses=ListOf(_shallow("v1.PodResourceClaimStatus")))
POD = Struct("v1.Pod", kind=STRING, apiVersion=STRING, metadata=OBJECT_META, spec=POD_SPEC, status=POD_STATUS)
POD_TEMPLATE_SPEC = Struct("v1.PodTemplateSpec", metadata=OBJECT_META, spec=POD_SPEC)

# -- nodes and namespaces -------------------------------------------------------------------
_NODE_CONDITION = Struct(
    "v1.NodeCondition", type=Str("v1.NodeConditionType"), status=_CONDITION_STATUS, lastHeartbeatTime=TIME,
    lastTransitionTime=TIME, reason=STRING, message=STRING)
_NODE_INFO = Struct("v1.NodeSystemInfo", **{k: STRING for k in (
    "machineID", "systemUUID", "bootID", "kernelVersion", "osImage", "containerRuntimeVersion", "kubeletVersion",
    "kubeProxyVersion", "operatingSystem", "architecture")})
NODE = Struct(
    "v1.Node", kind=STRING, apiVersion=STRING, metadata=OBJECT_META,
    spec=Struct("v1.NodeSpec", podCIDR=STRING, podCIDRs=STRING_LIST, providerID=STRING, unschedulable=BOOL,
                taints=ListOf(TAINT), configSource=_shallow("v1.NodeConfigSource"), externalID=STRING),
    status=Struct(
        "v1.NodeStatus", capacity=RESOURCE_LIST, allocatable=RESOURCE_LIST, phase=Str("v1.NodePhase"),
        conditions=ListOf(_NODE_CONDITION),
        addresses=ListOf(Struct("v1.NodeAddress", type=Str("v1.NodeAddressType"), address=STRING)),
        daemonEndpoints=_shallow("v1.NodeDaemonEndpoints"), nodeInfo=_NODE_INFO,
        images=ListOf(Struct("v1.ContainerImage", names=STRING_LIST, sizeBytes=INT64)),
        volumesInUse=ListOf(Str("v1.UniqueVolumeName")),
        volumesAttached=ListOf(Struct("v1.AttachedVolume", name=Str("v1.UniqueVolumeName"), devicePath=STRING)),
        config=_shallow("v1.NodeConfigStatus"), runtimeHandlers=ListOf(_shallow("v1.NodeRuntimeHandler")),
        features=_shallow("v1.NodeFeatures")))
NAMESPACE = Struct(
    "v1.Namespace", kind=STRING, apiVersion=STRING, metadata=OBJECT_META,
    spec=Struct("v1.NamespaceSpec", finalizers=ListOf(Str("v1.FinalizerName"))),
    status=Struct("v1.NamespaceStatus", phase=Str("v1.NamespacePhase"),
                  conditions=ListOf(_shallow("v1.NamespaceCondition"))))

# -- scheduling.k8s.io, policy, scheduling.x-k8s.io -----------------------------------------
PRIORITY_CLASS = Struct(
    "v1.PriorityClass", kind=STRING, apiVersion=STRING, metadata=OBJECT_META, value=INT32, globalDefault=BOOL,
    description=STRING, preemptionPolicy=Str("v1.PreemptionPolicy"))
POD_DISRUPTION_BUDGET = Struct(
    "v1.PodDisruptionBudget", kind=STRING, apiVersion=STRING, metadata=OBJECT_META,
    spec=Struct("v1.PodDisruptionBudgetSpec", minAvailable=INT_OR_STRING, selector=LABEL_SELECTOR,
                maxUnavailable=INT_OR_STRING,
                unhealthyPodEvictionPolicy=Str("v1.UnhealthyPodEvictionPolicyType")),
    status=Struct("v1.PodDisruptionBudgetStatus", observedGeneration=INT64, disruptedPods=MapOf(TIME),
                  disruptionsAllowed=INT32, currentHealthy=INT32, desiredHealthy=INT32, expectedPods=INT32,
                  conditions=ListOf(METAV1_CONDITION)))
POD_GROUP = Struct(
    "v1alpha1.PodGroup", kind=STRING, apiVersion=STRING, metadata=OBJECT_META,
    spec=Struct("v1alpha1.PodGroupSpec", minMember=INT32, minResources=RESOURCE_LIST,
                scheduleTimeoutSeconds=INT32),
    status=Struct("v1alpha1.PodGroupStatus", phase=Str("v1alpha1.PodGroupPhase"), occupiedBy=STRING,
                  running=INT32, succeeded=INT32, failed=INT32, scheduleStartTime=TIME))

# -- apps/v1, coordination.k8s.io/v1, ConfigMap: what kubesched serve stores and reads -----
_DEPLOYMENT_STRATEGY = Struct(
    "v1.DeploymentStrategy", type=Str("v1.DeploymentStrategyType"),
    rollingUpdate=Struct("v1.RollingUpdateDeployment", maxUnavailable=INT_OR_STRING, maxSurge=INT_OR_STRING))
_APPS_CONDITION = Struct(
    "v1.DeploymentCondition", type=STRING, status=_CONDITION_STATUS, lastUpdateTime=TIME, lastTransitionTime=TIME,
    reason=STRING, message=STRING)
DEPLOYMENT = Struct(
    "v1.Deployment", kind=STRING, apiVersion=STRING, metadata=OBJECT_META,
    spec=Struct("v1.DeploymentSpec", replicas=INT32, selector=LABEL_SELECTOR, template=POD_TEMPLATE_SPEC,
                strategy=_DEPLOYMENT_STRATEGY, minReadySeconds=INT32, revisionHistoryLimit=INT32, paused=BOOL,
                progressDeadlineSeconds=INT32),
    status=Struct("v1.DeploymentStatus", observedGeneration=INT64, replicas=INT32, updatedReplicas=INT32,
                  readyReplicas=INT32, availableReplicas=INT32, unavailableReplicas=INT32,
                  terminatingReplicas=INT32, conditions=ListOf(_APPS_CONDITION), collisionCount=INT32))
REPLICA_SET = Struct(
    "v1.ReplicaSet", kind=STRING, apiVersion=STRING, metadata=OBJECT_META,
    spec=Struct("v1.ReplicaSetSpec", replicas=INT32, minReadySeconds=INT32, selector=LABEL_SELECTOR,
                template=POD_TEMPLATE_SPEC),
    status=Struct("v1.ReplicaSetStatus", replicas=INT32, fullyLabeledReplicas=INT32, readyReplicas=INT32,
                  availableReplicas=INT32, terminatingReplicas=INT32, observedGeneration=INT64,
                  conditions=ListOf(Struct("v1.ReplicaSetCondition", **_APPS_CONDITION.fields))))
# metav1.MicroTime unmarshals as metav1.Time does (a string first).
LEASE = Struct(
    "v1.Lease", kind=STRING, apiVersion=STRING, metadata=OBJECT_META,
    spec=Struct("v1.LeaseSpec", holderIdentity=STRING, leaseDurationSeconds=INT32, acquireTime=TIME,
                renewTime=TIME, leaseTransitions=INT32,
                strategy=Str("v1.CoordinatedLeaseStrategy"), preferredHolder=STRING))
CONFIG_MAP = Struct(
    "v1.ConfigMap", kind=STRING, apiVersion=STRING, metadata=OBJECT_META, immutable=BOOL, data=STRING_MAP,
    binaryData=MapOf(STRING, "map[string][]uint8"))

for _kind, _schema in (("Pod", POD), ("Node", NODE), ("Namespace", NAMESPACE), ("PriorityClass", PRIORITY_CLASS),
                       ("PodDisruptionBudget", POD_DISRUPTION_BUDGET), ("PodGroup", POD_GROUP),
                       ("Deployment", DEPLOYMENT), ("ReplicaSet", REPLICA_SET), ("Lease", LEASE),
                       ("ConfigMap", CONFIG_MAP)):
    register(_kind, _schema)
