"""The served kinds other than Pod: Node, Namespace, ConfigMap, Service, workloads, and a
generic definition (metadata plus open spec and status) for kinds not described field by field."""

from __future__ import annotations

from kubesched.server.apiserver.typedefs.dsl import (
    Opts,
    ANY, BOOL, DEFS, INT32, INT64, INT_OR_STRING, STRING, STRING_MAP, STRING_SET, TIME, T, atomic, define, listmap,
)
from kubesched.server.apiserver.typedefs.meta import LABEL_SELECTOR, OBJECT_META
from kubesched.server.apiserver.typedefs.pod import CORE, POD_TEMPLATE_SPEC, RESOURCE_LIST

APPS = "io.k8s.api.apps.v1."


def _top(desc: str) -> dict[str, T]:
    return {"apiVersion": STRING("Versioned schema of this object."), "kind": STRING("Kind of this object."),
            "metadata": OBJECT_META(desc)}


def _open(name: str, desc: str, /, **fields: T) -> T:
    return define(name, desc, Opts(open=True), **fields)


TAINT = define(CORE + "Taint", "Repels pods that do not tolerate it.", ("key", "effect"),
               key=STRING("Taint key."), value=STRING("Taint value."),
               effect=STRING("NoSchedule, PreferNoSchedule or NoExecute."),
               timeAdded=TIME("When a NoExecute taint was added."))
NODE_SPEC = define(
    CORE + "NodeSpec", "How a node is configured.", podCIDR=STRING("Pod IP range of the node."),
    podCIDRs=STRING_SET("Pod IP ranges of the node."), providerID=STRING("Cloud provider id."),
    unschedulable=BOOL("Whether new pods may not be scheduled (cordon)."), taints=atomic(TAINT)("Node taints."),
    configSource=ANY("Deprecated."), externalID=STRING("Deprecated."))
NODE_CONDITION = _open(CORE + "NodeCondition", "A condition of a node.", type=STRING("Condition type."),
                       status=STRING("True, False or Unknown."))
NODE_STATUS = _open(
    CORE + "NodeStatus", "What the node reports.", capacity=RESOURCE_LIST("Total resources."),
    allocatable=RESOURCE_LIST("Resources available to pods."),
    conditions=listmap(NODE_CONDITION, "type")("Current conditions."))
define(CORE + "Node", "A machine pods run on.", Opts(gvk=("", "v1", "Node")), **_top("Standard object metadata."),
       spec=NODE_SPEC("Configuration of the node."), status=NODE_STATUS("Observed state of the node."))
define(CORE + "Namespace", "A scope for names.", Opts(gvk=("", "v1", "Namespace")), **_top("Standard object metadata."),
       spec=_open(CORE + "NamespaceSpec", "Finalizers of the namespace.", finalizers=atomic(STRING)("Finalizers.")),
       status=_open(CORE + "NamespaceStatus", "Phase of the namespace.", phase=STRING("Active or Terminating.")))
define(CORE + "ConfigMap", "Configuration data as key/value pairs.", Opts(gvk=("", "v1", "ConfigMap")),
       **_top("Standard object metadata."), data=STRING_MAP("UTF-8 values."),
       binaryData=STRING_MAP("Base64-encoded binary values."), immutable=BOOL("Whether the data may not change."))

DEPLOYMENT_STRATEGY = define(
    APPS + "DeploymentStrategy", "How old pods are replaced by new ones.",
    type=STRING("Recreate or RollingUpdate."),
    rollingUpdate=define(APPS + "RollingUpdateDeployment", "Limits of a rolling update.",
                         maxUnavailable=INT_OR_STRING("Pods that may be unavailable during the update."),
                         maxSurge=INT_OR_STRING("Pods that may be created above the desired count."))(
        "Rolling update parameters."))
define(APPS + "DeploymentSpec", "The desired pods of a deployment.", ("selector", "template"),
       replicas=INT32("Desired number of pods."), selector=LABEL_SELECTOR("Pods the deployment manages."),
       template=POD_TEMPLATE_SPEC("Pods to create."), strategy=DEPLOYMENT_STRATEGY("Replacement strategy."),
       minReadySeconds=INT32("Seconds a new pod must be ready to count as available."),
       revisionHistoryLimit=INT32("Old ReplicaSets kept for rollback."), paused=BOOL("Whether the rollout is paused."),
       progressDeadlineSeconds=INT32("Seconds before a stalled rollout is reported."))
define(APPS + "Deployment", "Declarative updates of replicated pods through ReplicaSets.",
       Opts(gvk=("apps", "v1", "Deployment")), **_top("Standard object metadata."),
       spec=T("ref", ref=APPS + "DeploymentSpec", desc="Desired behaviour."),
       status=_open(APPS + "DeploymentStatus", "Observed state of the deployment.",
                    replicas=INT32("Pods targeted."), readyReplicas=INT32("Ready pods."))("Observed state."))
define(APPS + "ReplicaSetSpec", "The desired pods of a ReplicaSet.", ("selector",),
       replicas=INT32("Desired number of pods."), minReadySeconds=INT32("Seconds before a ready pod is available."),
       selector=LABEL_SELECTOR("Pods the ReplicaSet manages."), template=POD_TEMPLATE_SPEC("Pods to create."))
define(APPS + "ReplicaSet", "Keeps a number of identical pods running.", Opts(gvk=("apps", "v1", "ReplicaSet")),
       **_top("Standard object metadata."), spec=T("ref", ref=APPS + "ReplicaSetSpec", desc="Desired pods."),
       status=_open(APPS + "ReplicaSetStatus", "Observed state.", replicas=INT32("Pods."))("Observed state."))
define("io.k8s.api.scheduling.v1.PriorityClass", "Maps a class name to a pod priority.",
       Opts(("value",), gvk=("scheduling.k8s.io", "v1", "PriorityClass")), **_top("Standard object metadata."),
       value=INT32("Priority of pods of this class."), globalDefault=BOOL("Class of pods that name none."),
       description=STRING("What the class is for."), preemptionPolicy=STRING("PreemptLowerPriority or Never."))
define("io.k8s.api.coordination.v1.LeaseSpec", "Holder and timing of a lease.",
       holderIdentity=STRING("Current holder."), leaseDurationSeconds=INT32("Seconds a holder waits to take over."),
       acquireTime=T("ref", ref="io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime", desc="When it was acquired."),
       renewTime=T("ref", ref="io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime", desc="When it was renewed."),
       leaseTransitions=INT32("Changes of holder."), strategy=STRING("Leader election strategy."),
       preferredHolder=STRING("Holder that should take over."))
define("io.k8s.api.coordination.v1.Lease", "A lock for leader election and node heartbeats.",
       Opts(gvk=("coordination.k8s.io", "v1", "Lease")), **_top("Standard object metadata."),
       spec=T("ref", ref="io.k8s.api.coordination.v1.LeaseSpec", desc="Holder and timing."))
_ = INT64


_BY_GVK: dict[tuple[str, str, str], str] = {}


def generic(group: str, version: str, kind: str) -> str:
    """The definition of a kind, created open (metadata, spec, status) when not described."""
    known = _BY_GVK.get((group, version, kind))
    if known is not None:
        return known
    for name, d in DEFS.items():
        if d.gvk == (group, version, kind):
            _BY_GVK[(group, version, kind)] = name
            return name
    pkg = (group.split(".")[0] if group else "core")
    name = f"io.k8s.api.{pkg}.{version}.{kind}"
    define(name, f"A {kind}.", Opts(open=True, gvk=(group, version, kind)), **_top("Standard object metadata."),
           spec=ANY("Desired state."), status=ANY("Observed state."))
    _BY_GVK[(group, version, kind)] = name
    return name
