"""core/v1 Pod and the types inside a pod template (Container, Volume, Toleration, ...)."""

from __future__ import annotations

from kubesched.server.apiserver.typedefs.dsl import (
    Opts,
    BOOL, INT32, INT64, QUANTITY, STRING, STRING_LIST, STRING_MAP, TIME, T, atomic, define, listmap, mapof, ref,
)
from kubesched.server.apiserver.typedefs.meta import LABEL_SELECTOR, OBJECT_META

CORE = "io.k8s.api.core.v1."
RESOURCE_LIST = mapof(QUANTITY)


def _open(name: str, desc: str, /, **fields: T) -> T:
    return define(CORE + name, desc, Opts(open=True), **fields)


CONTAINER_PORT = define(
    CORE + "ContainerPort", "A network port of a container.", ("containerPort",),
    name=STRING("Name the port can be referred to by."), hostPort=INT32("Port to expose on the node."),
    containerPort=INT32("Port number on the pod's IP."), protocol=STRING("TCP, UDP or SCTP; TCP by default."),
    hostIP=STRING("Node IP to bind the host port to."))
ENV_VAR = define(
    CORE + "EnvVar", "An environment variable of a container.", ("name",),
    name=STRING("Variable name."), value=STRING("Literal value."),
    valueFrom=_open("EnvVarSource", "Where the value comes from: a field, a resource, a ConfigMap or Secret key."))
RESOURCE_CLAIM = define(CORE + "ResourceClaim", "A claim of the pod the container uses.", ("name",),
                        name=STRING("Name of the pod's resource claim."), request=STRING("Request within it."))
RESOURCES = define(
    CORE + "ResourceRequirements", "Compute resources a container requests and may not exceed.",
    limits=RESOURCE_LIST("Maximum amounts."), requests=RESOURCE_LIST("Amounts the scheduler reserves."),
    claims=listmap(RESOURCE_CLAIM, "name")("Dynamic resource claims the container uses."))
VOLUME_MOUNT = define(
    CORE + "VolumeMount", "Where a volume appears in a container.", ("name", "mountPath"),
    name=STRING("Volume name."), readOnly=BOOL("Mount read-only."),
    recursiveReadOnly=STRING("Whether read-only applies recursively."),
    mountPath=STRING("Path in the container."), subPath=STRING("Path within the volume."),
    mountPropagation=STRING("How mounts propagate."), subPathExpr=STRING("subPath with $(VAR) expansion."))
VOLUME_DEVICE = define(CORE + "VolumeDevice", "A raw block volume in a container.", ("name", "devicePath"),
                       name=STRING("Volume name."), devicePath=STRING("Device path in the container."))
PROBE = _open("Probe", "A health check the kubelet runs against a container.")
CONTAINER = define(
    CORE + "Container", "One container of a pod.", ("name",),
    name=STRING("Name, unique within the pod."), image=STRING("Container image."),
    command=STRING_LIST("Entrypoint; the image's when empty."), args=STRING_LIST("Arguments to the entrypoint."),
    workingDir=STRING("Working directory."),
    ports=listmap(CONTAINER_PORT, "containerPort", "protocol", merge_key="containerPort")("Ports exposed."),
    envFrom=atomic(_open("EnvFromSource", "A ConfigMap or Secret whose keys become variables."))(
        "Sources of environment variables."),
    env=listmap(ENV_VAR, "name")("Environment variables."),
    resources=RESOURCES("Compute resources; what the scheduler counts."),
    resizePolicy=atomic(_open("ContainerResizePolicy", "How a resource is resized."))("Resize policies."),
    restartPolicy=STRING("Always for a sidecar init container."),
    restartPolicyRules=atomic(_open("ContainerRestartRule", "A rule on exit codes."))("Restart rules."),
    volumeMounts=listmap(VOLUME_MOUNT, "mountPath")("Volumes mounted in the container."),
    volumeDevices=listmap(VOLUME_DEVICE, "devicePath")("Block devices of the container."),
    livenessProbe=PROBE("Restart the container when this fails."),
    readinessProbe=PROBE("Remove the pod from endpoints when this fails."),
    startupProbe=PROBE("Other probes wait until this succeeds."),
    lifecycle=_open("Lifecycle", "Hooks run after start and before stop.")("Lifecycle hooks."),
    terminationMessagePath=STRING("File the termination message is read from."),
    terminationMessagePolicy=STRING("File or FallbackToLogsOnError."),
    imagePullPolicy=STRING("Always, Never or IfNotPresent."),
    securityContext=_open("SecurityContext", "Security options of a container.")("Security options."),
    stdin=BOOL("Allocate a stdin buffer."), stdinOnce=BOOL("Close stdin after the first attach."),
    tty=BOOL("Allocate a TTY."))
TOLERATION = define(
    CORE + "Toleration", "Lets the pod run on nodes with a matching taint.",
    key=STRING("Taint key; empty with Exists matches every key."), operator=STRING("Exists or Equal."),
    value=STRING("Taint value for Equal."), effect=STRING("NoSchedule, PreferNoSchedule or NoExecute."),
    tolerationSeconds=INT64("How long a NoExecute taint is tolerated."))
TOPOLOGY_SPREAD = define(
    CORE + "TopologySpreadConstraint", "How to spread matching pods across a topology.",
    ("maxSkew", "topologyKey", "whenUnsatisfiable"),
    maxSkew=INT32("Largest allowed difference in matching pods between domains."),
    topologyKey=STRING("Node label that defines the domains."),
    whenUnsatisfiable=STRING("DoNotSchedule or ScheduleAnyway."), labelSelector=LABEL_SELECTOR("Pods counted."),
    minDomains=INT32("Minimum number of eligible domains."),
    nodeAffinityPolicy=STRING("Honor or Ignore the pod's node affinity when counting."),
    nodeTaintsPolicy=STRING("Honor or Ignore node taints when counting."),
    matchLabelKeys=STRING_LIST("Pod label keys whose values narrow the selector."))
AFFINITY = _open("Affinity", "Node affinity, pod affinity and pod anti-affinity rules.",
                 nodeAffinity=_open("NodeAffinity", "Rules on node labels."),
                 podAffinity=_open("PodAffinity", "Rules to run near certain pods."),
                 podAntiAffinity=_open("PodAntiAffinity", "Rules to run away from certain pods."))
VOLUME = _open("Volume", "A named volume the containers can mount.", name=STRING("Volume name."),
               persistentVolumeClaim=_open("PersistentVolumeClaimVolumeSource", "A claim to mount."))
POD_SPEC = define(
    CORE + "PodSpec", "What a pod runs and where it may be scheduled.", ("containers",),
    volumes=listmap(VOLUME, "name")("Volumes the containers can mount."),
    initContainers=listmap(CONTAINER, "name")("Containers run to completion before the others."),
    containers=listmap(CONTAINER, "name")("The containers of the pod."),
    ephemeralContainers=listmap(_open("EphemeralContainer", "A debugging container."), "name")(
        "Containers added for debugging."),
    restartPolicy=STRING("Always, OnFailure or Never."),
    terminationGracePeriodSeconds=INT64("Seconds to stop gracefully."),
    activeDeadlineSeconds=INT64("Seconds the pod may be active before it is failed."),
    dnsPolicy=STRING("How DNS is configured."), nodeSelector=STRING_MAP("Labels a node must have."),
    serviceAccountName=STRING("Service account the pod runs as."), serviceAccount=STRING("Deprecated alias."),
    automountServiceAccountToken=BOOL("Mount the service account token."),
    nodeName=STRING("Node the pod is bound to; set by the scheduler."),
    hostNetwork=BOOL("Use the node's network namespace."), hostPID=BOOL("Use the node's PID namespace."),
    hostIPC=BOOL("Use the node's IPC namespace."), shareProcessNamespace=BOOL("One PID namespace for all."),
    securityContext=_open("PodSecurityContext", "Security options of the pod.")("Security options."),
    imagePullSecrets=listmap(_open("LocalObjectReference", "A name in the same namespace."), "name")(
        "Secrets for pulling images."),
    hostname=STRING("Hostname of the pod."), subdomain=STRING("Subdomain of the pod."),
    affinity=AFFINITY("Scheduling constraints."), schedulerName=STRING("Scheduler that places the pod."),
    tolerations=atomic(TOLERATION)("Taints the pod tolerates."),
    hostAliases=listmap(_open("HostAlias", "Entries for /etc/hosts."), "ip")("Extra /etc/hosts entries."),
    priorityClassName=STRING("PriorityClass of the pod."), priority=INT32("Priority; set from the class."),
    dnsConfig=_open("PodDNSConfig", "DNS settings.")("DNS settings."),
    readinessGates=atomic(_open("PodReadinessGate", "A condition the pod's readiness waits for."))(
        "Extra readiness conditions."),
    runtimeClassName=STRING("RuntimeClass to run with."), enableServiceLinks=BOOL("Inject service variables."),
    preemptionPolicy=STRING("PreemptLowerPriority or Never."), overhead=RESOURCE_LIST("Resources the sandbox uses."),
    topologySpreadConstraints=listmap(TOPOLOGY_SPREAD, "topologyKey", "whenUnsatisfiable")(
        "How the pod spreads across topology domains."),
    setHostnameAsFQDN=BOOL("Hostname is the FQDN."), os=_open("PodOS", "The pod's operating system.")("OS."),
    hostUsers=BOOL("Use the host's user namespace."),
    schedulingGates=listmap(_open("PodSchedulingGate", "A gate that blocks scheduling."), "name")(
        "Gates that must clear before the pod is scheduled."),
    resourceClaims=listmap(_open("PodResourceClaim", "A claim the pod uses."), "name")("Resource claims."),
    resources=RESOURCES("Pod-level resources."), hostnameOverride=STRING("Hostname to use instead."))
POD_CONDITION = _open("PodCondition", "A condition of a pod.", type=STRING("Condition type."),
                      status=STRING("True, False or Unknown."))
POD_STATUS = _open(
    "PodStatus", "What the pod is doing now.", phase=STRING("Pending, Running, Succeeded, Failed or Unknown."),
    conditions=listmap(POD_CONDITION, "type")("Current conditions."),
    nominatedNodeName=STRING("Node the pod preempted victims on."), podIP=STRING("IP of the pod."),
    startTime=TIME("When the kubelet acknowledged the pod."))
POD = define(CORE + "Pod", "A group of containers scheduled together onto one node.", Opts(gvk=("", "v1", "Pod")),
             apiVersion=STRING("Versioned schema of this object."), kind=STRING("Kind of this object."),
             metadata=OBJECT_META("Standard object metadata."), spec=POD_SPEC("Desired state of the pod."),
             status=POD_STATUS("Observed state of the pod."))
POD_TEMPLATE_SPEC = define(CORE + "PodTemplateSpec", "The pods a controller creates.",
                           metadata=OBJECT_META("Metadata of the created pods."),
                           spec=POD_SPEC("Spec of the created pods."))
_ = (INT64, ref)
