"""The Kubernetes objects the scheduler reads, parsed once from their JSON form.

Each object keeps the dictionary it was decoded from in ``raw`` (unknown fields included)
so it can be written back unchanged; the typed fields are what the scheduling core reads.
Decoding rejects values of the wrong type and unparsable quantities, as the API server's
decoding does (:mod:`kubesched.api.schema`, run first when validating); then each
constructor runs the API server's validation (:mod:`kubesched.api.validation`), in
upstream's order, before it reads the scheduling fields. Both raise
:class:`~kubesched.api.errors.DecodeError` with the field's path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.fields import ANNOTATIONS, int_field, list_field, map_field
from kubesched.api.resize import POD_LEVEL_RESIZE, ResizeStatus, resized_pod_resources
from kubesched.api.resources import QuantityList, ResourceList, parse_resource_list, pod_resources, to_resource
from kubesched.api.schema import check
from kubesched.api.schemas import NODE, POD
from kubesched.api.selectors import LabelSelector, NodeSelector, NodeSelectorTerm, PreferredTerm
from kubesched.api.volumes import Volume, parse_volumes, validate_volumes
from kubesched.api.validation import PodParts, validate_node, validate_pod
from kubesched.api.validation.scheduling import TAINT_EFFECTS as TAINT_EFFECTS
from kubesched.api.validation.strings import decimal_int64


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    @classmethod
    def parse(cls, obj: Any, path: str) -> "Taint":
        """Decode a taint (:func:`~kubesched.api.validation.validate_node` has checked it)."""
        if not isinstance(obj, Mapping):
            raise DecodeError("must be an object", field=path)
        return cls(str(obj.get("key") or ""), str(obj.get("value") or ""), str(obj.get("effect") or ""))

    def to_string(self) -> str:
        """Upstream's ``Taint.ToString``: ``key=value:effect``."""
        if not self.value:
            return f"{self.key}:{self.effect}"
        return f"{self.key}={self.value}:{self.effect}"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str
    value: str
    effect: str
    toleration_seconds: int | None = None

    @classmethod
    def parse(cls, obj: Any, path: str) -> "Toleration":
        """Decode a toleration (the pod's validation has checked it; no operator is Equal)."""
        if not isinstance(obj, Mapping):
            raise DecodeError("must be an object", field=path)
        op = str(obj.get("operator") or "Equal")
        key = str(obj.get("key") or "")
        value = str(obj.get("value") or "")
        effect = str(obj.get("effect") or "")
        secs = obj.get("tolerationSeconds")
        return cls(key, op, value, effect, None if secs is None else int_field(secs, f"{path}.tolerationSeconds"))

    def tolerates(self, taint: Taint, comparison_operators: bool = False) -> bool:
        """Upstream ``Toleration.ToleratesTaint``. ``comparison_operators``: the
        TaintTolerationComparisonOperators gate; without it a ``Lt``/``Gt`` toleration
        tolerates nothing, with it the taint's value compares to the toleration's as integers."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("Lt", "Gt"):
            return comparison_operators and _compare_numeric(self.value, taint.value, self.operator)
        return self.value == taint.value


@dataclass(frozen=True, slots=True)
class ComparingToleration(Toleration):
    """A toleration whose ``Lt``/``Gt`` compare (TaintTolerationComparisonOperators on), for
    code that asks ``tolerates(taint)`` without knowing the gate (PodTopologySpread's
    node inclusion)."""

    def tolerates(self, taint: Taint, comparison_operators: bool = True) -> bool:
        return Toleration.tolerates(self, taint, True)


def with_comparing_tolerations(pod: "Pod") -> "Pod":
    """``pod`` whose Lt/Gt tolerations compare; the same pod when it has none."""
    if not any(t.operator in ("Lt", "Gt") for t in pod.tolerations):
        return pod
    return pod.evolve(tolerations=tuple(ComparingToleration(t.key, t.operator, t.value, t.effect,
                                                            t.toleration_seconds) for t in pod.tolerations))


def _compare_numeric(toleration_value: str, taint_value: str, op: str) -> bool:
    """``compareNumericValues``: a value that is not a canonical int64 matches nothing."""
    tol, tnt = decimal_int64(toleration_value), decimal_int64(taint_value)
    if tol is None or tnt is None:
        return False
    return tnt < tol if op == "Lt" else tnt > tol


@dataclass(frozen=True, slots=True)
class ContainerPort:
    container_port: int
    host_port: int
    protocol: str
    host_ip: str


@dataclass(frozen=True, slots=True)
class Container:
    name: str
    image: str
    requests: QuantityList
    limits: QuantityList
    ports: tuple[ContainerPort, ...]
    restart_policy: str | None  # "Always" marks a sidecar (restartable init container)

    @classmethod
    def parse(cls, obj: Any, path: str) -> "Container":
        if not isinstance(obj, Mapping):
            raise DecodeError("must be an object", field=path)
        res = obj.get("resources") or {}
        if not isinstance(res, Mapping):
            raise DecodeError("must be an object", field=f"{path}.resources")
        requests = parse_resource_list(res.get("requests"), f"{path}.resources.requests")
        limits = parse_resource_list(res.get("limits"), f"{path}.resources.limits")
        ports = []
        for i, p in enumerate(list_field(obj.get("ports"), f"{path}.ports")):
            pp = f"{path}.ports[{i}]"
            if not isinstance(p, Mapping):
                raise DecodeError("must be an object", field=pp)
            ports.append(ContainerPort(int_field(p.get("containerPort"), f"{pp}.containerPort"),
                                       int_field(p.get("hostPort"), f"{pp}.hostPort"),
                                       str(p.get("protocol") or "TCP"), str(p.get("hostIP") or "")))
        name = obj.get("name")
        if name is not None and not isinstance(name, str):
            raise DecodeError(f"must be a string, got {name!r}", field=f"{path}.name")
        return cls(name or "", str(obj.get("image") or ""), requests, limits,
                   tuple(ports), obj.get("restartPolicy"))


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    selector: LabelSelector
    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None  # None: not set (use ``namespaces`` / own ns)
    topology_key: str
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()

    @classmethod
    def parse(cls, obj: Any, path: str, pod_namespace: str, pod_labels: Mapping[str, str]) -> "PodAffinityTerm":
        if not isinstance(obj, Mapping):
            raise DecodeError("must be an object", field=path)
        tk = obj.get("topologyKey") or ""
        sel_raw = obj.get("labelSelector")
        mlk = tuple(str(k) for k in list_field(obj.get("matchLabelKeys"), f"{path}.matchLabelKeys"))
        mmlk = tuple(str(k) for k in list_field(obj.get("mismatchLabelKeys"), f"{path}.mismatchLabelKeys"))
        # The API server (MatchLabelKeysInPodAffinity, GA) folds the keys into the selector.
        if sel_raw is not None and (mlk or mmlk):
            sel_raw = dict(sel_raw)
            exprs = list(sel_raw.get("matchExpressions") or [])
            for k in mlk:
                if k in pod_labels:
                    exprs.append({"key": k, "operator": "In", "values": [pod_labels[k]]})
            for k in mmlk:
                if k in pod_labels:
                    exprs.append({"key": k, "operator": "NotIn", "values": [pod_labels[k]]})
            sel_raw["matchExpressions"] = exprs
        selector = LabelSelector.parse(sel_raw, f"{path}.labelSelector")
        namespaces = [str(n) for n in list_field(obj.get("namespaces"), f"{path}.namespaces")]
        ns_sel_raw = obj.get("namespaceSelector")
        ns_sel = None if ns_sel_raw is None else LabelSelector.parse(ns_sel_raw, f"{path}.namespaceSelector")
        if not namespaces and ns_sel is None:
            namespaces = [pod_namespace]
        return cls(selector, frozenset(namespaces), ns_sel, str(tk), mlk, mmlk)


@dataclass(frozen=True, slots=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True)
class Affinity:
    node_required: NodeSelector | None = None
    node_preferred: tuple[PreferredTerm, ...] = ()
    pod_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    anti_affinity_required: tuple[PodAffinityTerm, ...] = ()
    anti_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    has_pod_affinity: bool = False  # podAffinity or podAntiAffinity set at all

    @classmethod
    def parse(cls, obj: Any, path: str, ns: str, labels: Mapping[str, str]) -> "Affinity | None":
        if obj is None:
            return None
        if not isinstance(obj, Mapping):
            raise DecodeError("must be an object", field=path)
        na = obj.get("nodeAffinity") or {}
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        node_required = None if req is None else NodeSelector.parse(
            req, f"{path}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution")
        preferred = []
        pp = f"{path}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
        for i, t in enumerate(list_field(na.get("preferredDuringSchedulingIgnoredDuringExecution"), pp)):
            w = int_field(t.get("weight"), f"{pp}[{i}].weight")
            term = NodeSelectorTerm.parse(t.get("preference") or {}, f"{pp}[{i}].preference")
            if not term.empty:
                preferred.append(PreferredTerm(w, term))

        def terms(section: str, key: str) -> tuple[PodAffinityTerm, ...]:
            sp = f"{path}.{section}.{key}"
            raw = (obj.get(section) or {}).get(key)
            return tuple(PodAffinityTerm.parse(t, f"{sp}[{i}]", ns, labels)
                         for i, t in enumerate(list_field(raw, sp)))

        def weighted(section: str) -> tuple[WeightedPodAffinityTerm, ...]:
            key = "preferredDuringSchedulingIgnoredDuringExecution"
            sp = f"{path}.{section}.{key}"
            out = []
            for i, t in enumerate(list_field((obj.get(section) or {}).get(key), sp)):
                w = int_field(t.get("weight"), f"{sp}[{i}].weight")
                out.append(WeightedPodAffinityTerm(w, PodAffinityTerm.parse(
                    t.get("podAffinityTerm"), f"{sp}[{i}].podAffinityTerm", ns, labels)))
            return tuple(out)

        req_key = "requiredDuringSchedulingIgnoredDuringExecution"
        return cls(node_required, tuple(preferred),
                   terms("podAffinity", req_key), weighted("podAffinity"),
                   terms("podAntiAffinity", req_key), weighted("podAntiAffinity"),
                   obj.get("podAffinity") is not None or obj.get("podAntiAffinity") is not None)


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    selector: LabelSelector
    min_domains: int | None
    node_affinity_policy: str  # Honor | Ignore
    node_taints_policy: str  # Honor | Ignore
    match_label_keys: tuple[str, ...]

    @classmethod
    def parse(cls, obj: Any, path: str, labels: Mapping[str, str]) -> "TopologySpreadConstraint":
        if not isinstance(obj, Mapping):
            raise DecodeError("must be an object", field=path)
        skew = int_field(obj.get("maxSkew"), f"{path}.maxSkew")
        tk = obj.get("topologyKey") or ""
        wu = str(obj.get("whenUnsatisfiable") or "")
        md = obj.get("minDomains")
        if md is not None:
            md = int_field(md, f"{path}.minDomains")
        policies = [str(obj.get(key) or default)
                    for key, default in (("nodeAffinityPolicy", "Honor"), ("nodeTaintsPolicy", "Ignore"))]
        mlk = tuple(str(k) for k in list_field(obj.get("matchLabelKeys"), f"{path}.matchLabelKeys"))
        sel_raw = obj.get("labelSelector")
        if mlk and sel_raw is not None:
            # The API server (MatchLabelKeysInPodTopologySpreadSelectorMerge) merges the keys.
            sel_raw = dict(sel_raw)
            exprs = list(sel_raw.get("matchExpressions") or [])
            for k in mlk:
                if k in labels:
                    exprs.append({"key": k, "operator": "In", "values": [labels[k]]})
            sel_raw["matchExpressions"] = exprs
        selector = LabelSelector.parse(sel_raw, f"{path}.labelSelector")
        return cls(skew, str(tk), wu, selector, md, policies[0], policies[1], mlk)


@dataclass(slots=True, eq=False)
class Pod:
    """A pod as the scheduler sees it. ``raw`` is the full object, kept for round trips."""

    raw: dict[str, Any]
    name: str
    namespace: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]
    node_name: str
    scheduler_name: str
    priority: int
    priority_class_name: str
    preemption_policy: str
    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...]
    node_selector: dict[str, str]
    affinity: Affinity | None
    tolerations: tuple[Toleration, ...]
    spread_constraints: tuple[TopologySpreadConstraint, ...]
    scheduling_gates: tuple[str, ...]
    pvc_names: tuple[str, ...]
    nominated_node_name: str
    start_time: str
    deletion_timestamp: str | None
    phase: str
    requests: ResourceList  # scheduler Resource form: cpu in millis, others in units
    non0_cpu: int
    non0_mem: int
    host_ports: tuple[ContainerPort, ...]
    owner_kind: str = ""
    volumes: tuple[Volume, ...] = ()  # spec.volumes (kubesched.api.volumes)
    seq: int = 0  # arrival order, set by the loader / queue
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def images(self) -> tuple[str, ...]:
        return tuple(c.image for c in self.containers)

    def evolve(self, **changes: Any) -> "Pod":
        """``dataclasses.replace(self, **changes)`` at a fifth of its cost (the fields read at
        once, passed by position): the scheduler copies a pod to assume it and the cluster
        to bind it, once per pod."""
        values = list(_POD_VALUES(self))
        for name, value in changes.items():
            pos = _POD_POSITION.get(name)
            if pos is None:
                raise TypeError(f"Pod has no field {name!r}")
            values[pos] = value
        return Pod(*values)

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, validate: bool = True, require_limits: bool = True) -> "Pod":
        """Decode and validate a pod as kube-apiserver does on create. ``validate=False``
        only decodes: for test fixtures that, like upstream's scheduler test pods, never
        went through an API server. ``require_limits=False``: see
        :class:`~kubesched.api.validation.PodParts`."""
        if validate:  # the types first, as the API server's decoding checks them
            raw = check(raw, POD)
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        status = raw.get("status") or {}
        if not isinstance(meta, Mapping) or not isinstance(spec, Mapping) or not isinstance(status, Mapping):
            raise DecodeError("metadata, spec and status must be objects")
        name = meta.get("name")
        if not name:
            raise DecodeError("Required value: name or generateName is required", field="metadata.name")
        if not isinstance(name, str):
            raise DecodeError(f"must be a string, got {name!r}", field="metadata.name")
        ns = str(meta.get("namespace") or "default")
        labels = map_field(meta.get("labels"), "metadata.labels")
        annotations = map_field(meta.get("annotations"), "metadata.annotations", ANNOTATIONS)
        node_selector = map_field(spec.get("nodeSelector"), "spec.nodeSelector", "PodSpec.spec.nodeSelector")
        containers = tuple(Container.parse(c, f"spec.containers[{i}]")
                           for i, c in enumerate(list_field(spec.get("containers"), "spec.containers")))
        inits = tuple(Container.parse(c, f"spec.initContainers[{i}]")
                      for i, c in enumerate(list_field(spec.get("initContainers"), "spec.initContainers")))
        overhead = parse_resource_list(spec.get("overhead"), "spec.overhead")
        pod_level = spec.get("resources")
        if pod_level is not None and not isinstance(pod_level, Mapping):
            raise DecodeError("must be an object", field="spec.resources")
        pod_level = pod_level or {}
        pod_level_req = parse_resource_list(pod_level.get("requests"), "spec.resources.requests")
        pod_level_lim = parse_resource_list(pod_level.get("limits"), "spec.resources.limits")
        if validate:
            validate_pod(meta, spec, PodParts(
                containers=containers, inits=inits, labels=labels, annotations=annotations,
                node_selector=node_selector, overhead=overhead, pod_requests=pod_level_req,
                pod_limits=pod_level_lim, require_limits=require_limits))
        resize = ResizeStatus.parse(status)
        with_pod_level: tuple[ResourceList, int, int] | None = None
        if resize is None:
            requests, non0_cpu, non0_mem = pod_resources(containers, inits, overhead, pod_level_req)
        else:
            requests, non0_cpu, non0_mem = resized_pod_resources(containers, inits, overhead, pod_level_req,
                                                                 resize, False)
            with_pod_level = resized_pod_resources(containers, inits, overhead, pod_level_req, resize, True)
        tolerations = tuple(Toleration.parse(t, f"spec.tolerations[{i}]")
                            for i, t in enumerate(list_field(spec.get("tolerations"), "spec.tolerations")))
        tsc = tuple(TopologySpreadConstraint.parse(t, f"spec.topologySpreadConstraints[{i}]", labels)
                    for i, t in enumerate(list_field(spec.get("topologySpreadConstraints"),
                                                "spec.topologySpreadConstraints")))
        gates = [str(g.get("name")) for g in list_field(spec.get("schedulingGates"), "spec.schedulingGates")]
        if validate:
            validate_volumes(spec.get("volumes"))
        volumes = parse_volumes(spec.get("volumes"), name)
        pvcs = [v.claim_name for v in volumes if v.is_pvc or v.is_ephemeral]
        # schedutil.GetHostPorts: sidecar (restartable init) containers first, then containers
        host_ports = tuple(p for c in inits if c.restart_policy == "Always" for p in c.ports if p.host_port > 0)
        host_ports += tuple(p for c in containers for p in c.ports if p.host_port > 0)
        owners = meta.get("ownerReferences") or []
        owner_kind = ""
        for o in owners if isinstance(owners, list) else []:
            if isinstance(o, Mapping) and o.get("controller"):
                owner_kind = str(o.get("kind") or "")
        pp = str(spec.get("preemptionPolicy") or "PreemptLowerPriority")
        pod = cls(
            raw=raw, name=name, namespace=ns, uid=str(meta.get("uid") or f"{ns}/{name}"),
            labels=labels, annotations=annotations,
            node_name=str(spec.get("nodeName") or ""),
            scheduler_name=str(spec.get("schedulerName") or "default-scheduler"),
            priority=int_field(spec.get("priority"), "spec.priority"),
            priority_class_name=str(spec.get("priorityClassName") or ""),
            preemption_policy=pp, containers=containers, init_containers=inits,
            node_selector=node_selector,
            affinity=Affinity.parse(spec.get("affinity"), "spec.affinity", ns, labels),
            tolerations=tolerations, spread_constraints=tsc, scheduling_gates=tuple(gates),
            pvc_names=tuple(pvcs), nominated_node_name=str(status.get("nominatedNodeName") or ""),
            start_time=str(status.get("startTime") or ""),
            deletion_timestamp=meta.get("deletionTimestamp"),
            phase=str(status.get("phase") or "Pending"),
            requests=requests, non0_cpu=non0_cpu, non0_mem=non0_mem, host_ports=host_ports,
            owner_kind=owner_kind, volumes=volumes,
        )
        if with_pod_level is not None and with_pod_level != (requests, non0_cpu, non0_mem):
            pod.extra[POD_LEVEL_RESIZE] = with_pod_level
        return pod


_POD_FIELDS = tuple(f.name for f in fields(Pod))
_POD_VALUES = attrgetter(*_POD_FIELDS)
_POD_POSITION = {name: i for i, name in enumerate(_POD_FIELDS)}


@dataclass(frozen=True, slots=True)
class ImageState:
    names: tuple[str, ...]
    size_bytes: int


@dataclass(slots=True, eq=False)
class Node:
    raw: dict[str, Any]
    name: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]
    taints: tuple[Taint, ...]
    unschedulable: bool
    allocatable: ResourceList
    images: tuple[ImageState, ...]

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, validate: bool = True) -> "Node":
        """Decode and validate a node as kube-apiserver does on create (``validate=False``:
        decode only, for test fixtures)."""
        if validate:
            raw = check(raw, NODE)
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        status = raw.get("status") or {}
        if not isinstance(meta, Mapping) or not isinstance(spec, Mapping) or not isinstance(status, Mapping):
            raise DecodeError("metadata, spec and status must be objects")
        name = meta.get("name")
        if not name:
            raise DecodeError("Required value: name or generateName is required", field="metadata.name")
        if not isinstance(name, str):
            raise DecodeError(f"must be a string, got {name!r}", field="metadata.name")
        labels = map_field(meta.get("labels"), "metadata.labels")
        annotations = map_field(meta.get("annotations"), "metadata.annotations", ANNOTATIONS)
        raw_taints = list_field(spec.get("taints"), "spec.taints")
        for i, t in enumerate(raw_taints):
            if not isinstance(t, Mapping):
                raise DecodeError("must be an object", field=f"spec.taints[{i}]")
        capacity = parse_resource_list(status.get("capacity"), "status.capacity")
        alloc_raw = status.get("allocatable")
        alloc = capacity if alloc_raw is None else parse_resource_list(alloc_raw, "status.allocatable")
        if validate:
            validate_node(meta, labels, annotations, raw_taints, capacity, {} if alloc_raw is None else alloc)
        taints = tuple(Taint.parse(t, f"spec.taints[{i}]") for i, t in enumerate(raw_taints))
        allocatable = to_resource(alloc)
        images = []
        for i, im in enumerate(list_field(status.get("images"), "status.images")):
            if not isinstance(im, Mapping):
                raise DecodeError("must be an object", field=f"status.images[{i}]")
            images.append(ImageState(tuple(str(n) for n in im.get("names") or ()),
                                     int_field(im.get("sizeBytes"), f"status.images[{i}].sizeBytes")))
        return cls(raw=raw, name=name, uid=str(meta.get("uid") or name),
                   labels=labels, annotations=annotations, taints=taints, unschedulable=bool(spec.get("unschedulable")),
                   allocatable=allocatable, images=tuple(images))
