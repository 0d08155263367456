"""The ``kubesched bench`` workloads, declared as data in upstream scheduler_perf style.

A workload is a list of ops (``createNodes`` / ``createPods`` with a count parameter and
object templates), as in upstream ``test/integration/scheduler_perf/*/performance-config.yaml``.
The templates are the upstream ones (``test/integration/scheduler_perf/templates/``),
written here as dictionaries so that decoding YAML is not part of what is measured:

* ``node-default.yaml``: capacity 4 cpu, 32Gi memory, 110 pods, Ready;
* ``node-with-taint.yaml``: the same with taint ``foo:NoSchedule``;
* ``pod-default.yaml``: one ``pause`` container, port 80 (no hostPort), 100m cpu / 500Mi
  as requests and limits;
* ``pod-with-pod-anti-affinity.yaml`` (label ``color: green``, required anti-affinity on
  ``kubernetes.io/hostname`` to ``color: green`` pods of namespaces sched-0 and sched-1),
  ``pod-with-preferred-pod-anti-affinity.yaml`` (``color: yellow``, weight 1),
  ``pod-with-topology-spreading.yaml`` (``color: blue``, maxSkew 5 on the zone,
  DoNotSchedule), ``pod-with-node-inclusion-policy.yaml`` (``foo: bar``, maxSkew 1 on the
  hostname, nodeAffinityPolicy and nodeTaintsPolicy Honor);
* ``service.yaml`` (selector ``app: scheduler-perf``) and ``pod-with-label.yaml`` (label
  ``app: scheduler-perf``, no requests), for ``DefaultTopologySpreading``.

Where kubesched departs from upstream, on purpose: every node carries the
``kubernetes.io/hostname`` label a kubelet would set (upstream's fake nodes have none);
zone values are given round-robin (upstream's ``labelNodePrepareStrategy`` picks them at
random); ``taints`` is kubesched's own workload (every 5th node tainted, every 2nd pod
tolerating); in ``inclusion-policy`` the tainted fifth of the nodes is every 5th node
rather than the last ones created; in ``default-spread`` the measured pods are also
owned (``controller: true``) by a ReplicaSet selecting them, as a Deployment's pods are
(upstream's pods have only the Service); ``dra`` gives every node a ResourceSlice of 8 devices of
driver ``gpu.example.com`` (class ``gpu``) and each pod one claim from the template
``one-gpu`` (one device), as upstream's structured-parameters cases do with their own
counts. A node uses ``templates[i % len(templates)]`` and so
does a pod, which is how "every k-th" is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"

_CAPACITY = {"pods": "110", "cpu": "4", "memory": "32Gi"}
_NODE_STATUS = {"capacity": _CAPACITY, "conditions": [{"status": "True", "type": "Ready"}],
                "phase": "Running"}
_CONTAINER = {
    "image": "registry.k8s.io/pause:3.10.1", "name": "pause", "ports": [{"containerPort": 80}],
    "resources": {"limits": {"cpu": "100m", "memory": "500Mi"},
                  "requests": {"cpu": "100m", "memory": "500Mi"}},
}


def _pod(generate_name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"generateName": generate_name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {**spec, "containers": [_CONTAINER]}}


def _selector(key: str, value: str) -> dict[str, Any]:
    return {"matchLabels": {key: value}}


NODE_TEMPLATES: dict[str, dict[str, Any]] = {
    "node-default": {"apiVersion": "v1", "kind": "Node",
                     "metadata": {"generateName": "scheduler-perf-"}, "spec": {},
                     "status": _NODE_STATUS},
    "node-with-taint": {"apiVersion": "v1", "kind": "Node",
                        "metadata": {"generateName": "taint-node-"},
                        "spec": {"taints": [{"effect": "NoSchedule", "key": "foo"}]},
                        "status": _NODE_STATUS},
}

POD_TEMPLATES: dict[str, dict[str, Any]] = {
    "pod-default": _pod("pod-"),
    "pod-with-toleration": _pod(
        "pod-tolerating-", tolerations=[{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}]),
    "pod-with-pod-anti-affinity": _pod(
        "anti-affinity-pod-", {"color": "green"},
        affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": _selector("color", "green"), "topologyKey": HOSTNAME_LABEL,
             "namespaces": ["sched-1", "sched-0"]}]}}),
    "pod-with-preferred-pod-anti-affinity": _pod(
        "preferred-anti-affinity-pod-", {"color": "yellow"},
        affinity={"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"podAffinityTerm": {"labelSelector": _selector("color", "yellow"),
                                 "topologyKey": HOSTNAME_LABEL, "namespaces": ["sched-1", "sched-0"]},
             "weight": 1}]}}),
    "pod-with-topology-spreading": _pod(
        "spreading-pod-", {"color": "blue"},
        topologySpreadConstraints=[{"maxSkew": 5, "topologyKey": ZONE_LABEL,
                                    "whenUnsatisfiable": "DoNotSchedule",
                                    "labelSelector": _selector("color", "blue")}]),
    "pod-with-label-owned-by-replicaset": {  # pod-with-label.yaml: no ports, no requests
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"generateName": "pod-", "labels": {"app": "scheduler-perf"}, "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "scheduler-perf", "uid": "rs-scheduler-perf",
             "controller": True}]},
        "spec": {"containers": [{"image": "registry.k8s.io/pause:3.10.1", "name": "pause"}]}},
    "pod-with-claim-template": {**_pod("pod-with-claim-"), "spec": {
        **_pod("pod-with-claim-")["spec"],
        "containers": [{**_CONTAINER, "resources": {
            "limits": {"cpu": "100m", "memory": "500Mi"}, "requests": {"cpu": "100m", "memory": "500Mi"},
            "claims": [{"name": "gpu"}]}}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}},
    "pod-with-node-inclusion-policy": _pod(
        "spreading-pod-with-node-inclusion-policy-", {"foo": "bar"},
        topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": HOSTNAME_LABEL,
                                    "whenUnsatisfiable": "DoNotSchedule",
                                    "nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Honor",
                                    "labelSelector": _selector("foo", "bar")}]),
}


# upstream templates/pv-csi.yaml and pv-aws.yaml: ReadOnlyMany, 1Gi, Retain; the claim
# (templates/pvc.yaml) asks for ReadOnlyMany 1Gi and is created bound (bind-completed).
PV_TEMPLATES: dict[str, dict[str, Any]] = {
    "pv-csi": {"csi": {"driver": "ebs.csi.aws.com"}},
    "pv-aws": {"awsElasticBlockStore": {}},
}


# Objects of ``createAny`` (Services, controllers), as the API server would store them.
OBJECT_TEMPLATES: dict[str, dict[str, Any]] = {
    "service": {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "service-scheduler-perf"},
                "spec": {"selector": {"app": "scheduler-perf"},
                         "ports": [{"protocol": "TCP", "port": 80, "targetPort": 8000}]}},
    "replicaset": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "scheduler-perf"},
                   "spec": {"selector": {"matchLabels": {"app": "scheduler-perf"}},
                            "template": {"metadata": {"labels": {"app": "scheduler-perf"}}}}},
}


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeLabel:
    """A label every created node gets: ``values`` round-robin, or (none given) the node's
    own name, as upstream's ``uniqueNodeLabelStrategy``."""

    key: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateNodes:
    count: str  # a parameter: "$nodes"
    templates: tuple[str, ...] = ("node-default",)
    labels: tuple[NodeLabel, ...] = (NodeLabel(key=HOSTNAME_LABEL),)
    # nodeAllocatableStrategy.csiNodeAllocatable: a CSINode per node, driver -> count
    csi_allocatable: tuple[tuple[str, int], ...] = ()
    opcode: str = "createNodes"


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatePods:
    count: str  # a parameter: "$initPods" or "$measurePods"
    templates: tuple[str, ...] = ("pod-default",)
    namespace: str = ""  # "" = namespace-<op index>, as scheduler_perf names it
    collect_metrics: bool = False
    # persistentVolumeTemplatePath (a key of PV_TEMPLATES): each pod gets its own PV and a
    # claim already bound to it (templates/pvc.yaml), mounted as volume "vol"
    volume: str = ""
    opcode: str = "createPods"


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateAny:
    """Objects other than nodes and pods (``OBJECT_TEMPLATES``), in ``namespace``."""

    templates: tuple[str, ...]
    namespace: str
    opcode: str = "createAny"


Op = CreateNodes | CreatePods | CreateAny


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    name: str
    upstream: str  # the scheduler_perf test case it is shaped like
    ops: tuple[Op, ...]
    devices_per_node: int = 0  # > 0: a DRA cluster (DeviceClass, one ResourceSlice per node)


def _simple(name: str, upstream: str, init: tuple[str, ...], measure: tuple[str, ...],
            nodes: CreateNodes, namespaces: tuple[str, str] = ("", "")) -> Workload:
    return Workload(name=name, upstream=upstream, ops=(
        nodes,
        CreatePods(count="$initPods", templates=init, namespace=namespaces[0]),
        CreatePods(count="$measurePods", templates=measure, namespace=namespaces[1],
                   collect_metrics=True),
    ))


_NODES = CreateNodes(count="$nodes")
_ZONED_NODES = CreateNodes(count="$nodes", labels=(
    NodeLabel(key=HOSTNAME_LABEL), NodeLabel(key=ZONE_LABEL, values=("moon-1", "moon-2", "moon-3"))))
_EVERY_5TH_TAINTED = CreateNodes(count="$nodes", templates=("node-default",) * 4 + ("node-with-taint",))
_SCHED_NS = ("sched-0", "sched-1")

WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    _simple("basic", "SchedulingBasic", ("pod-default",), ("pod-default",), _NODES),
    _simple("spread", "TopologySpreading", ("pod-default",), ("pod-with-topology-spreading",),
            _ZONED_NODES),
    _simple("affinity", "SchedulingPodAntiAffinity", ("pod-with-pod-anti-affinity",),
            ("pod-with-pod-anti-affinity",), _NODES, _SCHED_NS),
    _simple("preferred-affinity", "SchedulingPreferredPodAntiAffinity",
            ("pod-with-preferred-pod-anti-affinity",), ("pod-with-preferred-pod-anti-affinity",),
            _NODES, _SCHED_NS),
    _simple("taints", "(kubesched) taints and tolerations", ("pod-default", "pod-with-toleration"),
            ("pod-default", "pod-with-toleration"), _EVERY_5TH_TAINTED),
    Workload(name="default-spread", upstream="DefaultTopologySpreading", ops=(
        _ZONED_NODES,
        CreateAny(templates=("service", "replicaset"), namespace="service-ns"),
        CreatePods(count="$initPods", templates=("pod-default",)),
        CreatePods(count="$measurePods", templates=("pod-with-label-owned-by-replicaset",), namespace="service-ns",
                   collect_metrics=True))),
    _simple("inclusion-policy", "SchedulingWithNodeInclusionPolicy",
            ("pod-with-node-inclusion-policy",), ("pod-with-node-inclusion-policy",),
            _EVERY_5TH_TAINTED),
    Workload(name="csi-pvs", upstream="SchedulingCSIPVs", ops=(
        CreateNodes(count="$nodes", csi_allocatable=(("ebs.csi.aws.com", 39),)),
        CreatePods(count="$initPods", volume="pv-csi"),
        CreatePods(count="$measurePods", volume="pv-csi", collect_metrics=True))),
    Workload(name="in-tree-pvs", upstream="SchedulingInTreePVs", ops=(
        _NODES,
        CreatePods(count="$initPods", volume="pv-aws"),
        CreatePods(count="$measurePods", volume="pv-aws", collect_metrics=True))),
    Workload(name="dra", upstream="SchedulingWithResourceClaimTemplateStructured", devices_per_node=8, ops=(
        _NODES,
        CreatePods(count="$initPods", templates=("pod-with-claim-template",)),
        CreatePods(count="$measurePods", templates=("pod-with-claim-template",), collect_metrics=True))),
)}


# Not a list of ops: the heterogeneous workload generated by kubesched.sim.mixed and run as
# a scenario (kubesched.sim.scenario), every pod different.
MIXED = "mixed"


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One row of the suite: a workload and its sizes."""

    workload: str
    nodes: int
    init_pods: int
    pods: int


# The ``--suite`` matrix (sizes of upstream's performance-labelled cases, where they exist).
SUITE: tuple[Case, ...] = (
    Case(workload="basic", nodes=5000, init_pods=1000, pods=5000),
    Case(workload="spread", nodes=5000, init_pods=5000, pods=5000),
    Case(workload="affinity", nodes=5000, init_pods=1000, pods=2000),
    Case(workload="preferred-affinity", nodes=5000, init_pods=5000, pods=5000),
    Case(workload="taints", nodes=5000, init_pods=1000, pods=5000),
    Case(workload="inclusion-policy", nodes=5000, init_pods=0, pods=4000),
    Case(workload="csi-pvs", nodes=5000, init_pods=5000, pods=1000),
    Case(workload="in-tree-pvs", nodes=5000, init_pods=5000, pods=1000),
    Case(workload="default-spread", nodes=5000, init_pods=5000, pods=10000),
    Case(workload="basic", nodes=15000, init_pods=150000, pods=10000),
    Case(workload="dra", nodes=1000, init_pods=0, pods=1000),
    Case(workload=MIXED, nodes=5000, init_pods=1000, pods=5000),
)


def default_case(workload: str) -> Case:
    """The first suite row of ``workload``: the sizes ``kubesched bench`` uses when none are given."""
    return next(c for c in SUITE if c.workload == workload)
