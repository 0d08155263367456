"""The Kubernetes objects the scheduler reads, parsed once from their JSON form.

Each object keeps the dictionary it was decoded from in ``raw`` (unknown fields included)
so it can be written back unchanged; the typed fields are what the scheduling core reads.
Parsing validates what the API server would have rejected (quantities, selectors,
operators), raising :class:`~kubesched.api.errors.DecodeError` with the field's path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.resources import QuantityList, ResourceList, parse_resource_list, pod_resources, to_resource
from kubesched.api.selectors import LabelSelector, NodeSelector, NodeSelectorTerm, PreferredTerm

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _map(obj: Any, path: str) -> dict[str, str]:
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise DecodeError("must be a map of strings", field=path)
    return {str(k): "" if v is None else str(v) for k, v in obj.items()}


def _list(obj: Any, path: str) -> list[Any]:
    if obj is None:
        return []
    if not isinstance(obj, list):
        raise DecodeError("must be a list", field=path)
    return obj


def _int(obj: Any, path: str, default: int = 0) -> int:
    if obj is None:
        return default
    if isinstance(obj, bool) or not isinstance(obj, int):
        raise DecodeError(f"must be an integer, got {obj!r}", field=path)
    return obj


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    @classmethod
    def parse(cls, obj: Any, path: str) -> "Taint":
        if not isinstance(obj, Mapping) or not obj.get("key"):
            raise DecodeError("key is required", field=f"{path}.key")
        effect = obj.get("effect", "")
        if effect not in TAINT_EFFECTS:
            raise DecodeError(f'Unsupported value: "{effect}": supported values: '
                              '"NoSchedule", "PreferNoSchedule", "NoExecute"', field=f"{path}.effect")
        return cls(str(obj["key"]), str(obj.get("value") or ""), effect)

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
        if not isinstance(obj, Mapping):
            raise DecodeError("must be an object", field=path)
        op = obj.get("operator") or "Equal"
        if op not in ("Equal", "Exists"):
            raise DecodeError(f'Unsupported value: "{op}": supported values: "Equal", "Exists"',
                              field=f"{path}.operator")
        key = str(obj.get("key") or "")
        value = str(obj.get("value") or "")
        if op == "Exists" and value:
            raise DecodeError("value must be empty when `operator` is 'Exists'", field=f"{path}.operator")
        if not key and op != "Exists":
            raise DecodeError("operator must be Exists when `key` is empty, which means "
                              "\"match all values and all keys\"", field=f"{path}.operator")
        effect = str(obj.get("effect") or "")
        if effect and effect not in TAINT_EFFECTS:
            raise DecodeError(f'Unsupported value: "{effect}": supported values: '
                              '"NoSchedule", "PreferNoSchedule", "NoExecute"', field=f"{path}.effect")
        secs = obj.get("tolerationSeconds")
        return cls(key, op, value, effect, None if secs is None else _int(secs, f"{path}.tolerationSeconds"))

    def tolerates(self, taint: Taint) -> bool:
        """Upstream ``Toleration.ToleratesTaint``."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


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
        for i, p in enumerate(_list(obj.get("ports"), f"{path}.ports")):
            pp = f"{path}.ports[{i}]"
            if not isinstance(p, Mapping):
                raise DecodeError("must be an object", field=pp)
            proto = p.get("protocol") or "TCP"
            if proto not in ("TCP", "UDP", "SCTP"):
                raise DecodeError(f'Unsupported value: "{proto}": supported values: "SCTP", "TCP", "UDP"',
                                  field=f"{pp}.protocol")
            ports.append(ContainerPort(_int(p.get("containerPort"), f"{pp}.containerPort"),
                                       _int(p.get("hostPort"), f"{pp}.hostPort"),
                                       proto, str(p.get("hostIP") or "")))
        return cls(str(obj.get("name") or ""), str(obj.get("image") or ""), requests, limits,
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
        if not tk:
            raise DecodeError("can not be empty", field=f"{path}.topologyKey")
        sel_raw = obj.get("labelSelector")
        mlk = tuple(str(k) for k in _list(obj.get("matchLabelKeys"), f"{path}.matchLabelKeys"))
        mmlk = tuple(str(k) for k in _list(obj.get("mismatchLabelKeys"), f"{path}.mismatchLabelKeys"))
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
        namespaces = [str(n) for n in _list(obj.get("namespaces"), f"{path}.namespaces")]
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
        for i, t in enumerate(_list(na.get("preferredDuringSchedulingIgnoredDuringExecution"), pp)):
            w = _int(t.get("weight"), f"{pp}[{i}].weight")
            if not 1 <= w <= 100:
                raise DecodeError("must be in the range 1-100", field=f"{pp}[{i}].weight")
            term = NodeSelectorTerm.parse(t.get("preference") or {}, f"{pp}[{i}].preference")
            if not term.empty:
                preferred.append(PreferredTerm(w, term))

        def terms(section: str, key: str) -> tuple[PodAffinityTerm, ...]:
            sp = f"{path}.{section}.{key}"
            raw = (obj.get(section) or {}).get(key)
            return tuple(PodAffinityTerm.parse(t, f"{sp}[{i}]", ns, labels)
                         for i, t in enumerate(_list(raw, sp)))

        def weighted(section: str) -> tuple[WeightedPodAffinityTerm, ...]:
            key = "preferredDuringSchedulingIgnoredDuringExecution"
            sp = f"{path}.{section}.{key}"
            out = []
            for i, t in enumerate(_list((obj.get(section) or {}).get(key), sp)):
                w = _int(t.get("weight"), f"{sp}[{i}].weight")
                if not 1 <= w <= 100:
                    raise DecodeError("must be in the range 1-100", field=f"{sp}[{i}].weight")
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
        skew = _int(obj.get("maxSkew"), f"{path}.maxSkew")
        if skew <= 0:
            raise DecodeError(f"must be greater than zero", field=f"{path}.maxSkew")
        tk = obj.get("topologyKey") or ""
        if not tk:
            raise DecodeError("can not be empty", field=f"{path}.topologyKey")
        wu = obj.get("whenUnsatisfiable")
        if wu not in ("DoNotSchedule", "ScheduleAnyway"):
            raise DecodeError(f'Unsupported value: "{wu}": supported values: "DoNotSchedule", '
                              '"ScheduleAnyway"', field=f"{path}.whenUnsatisfiable")
        md = obj.get("minDomains")
        if md is not None:
            md = _int(md, f"{path}.minDomains")
            if md <= 0:
                raise DecodeError("must be greater than 0", field=f"{path}.minDomains")
            if wu != "DoNotSchedule":
                raise DecodeError("can only use minDomains if whenUnsatisfiable=DoNotSchedule",
                                  field=f"{path}.minDomains")
        policies = []
        for key, default in (("nodeAffinityPolicy", "Honor"), ("nodeTaintsPolicy", "Ignore")):
            v = obj.get(key) or default
            if v not in ("Honor", "Ignore"):
                raise DecodeError(f'Unsupported value: "{v}": supported values: "Honor", "Ignore"',
                                  field=f"{path}.{key}")
            policies.append(v)
        mlk = tuple(str(k) for k in _list(obj.get("matchLabelKeys"), f"{path}.matchLabelKeys"))
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
    seq: int = 0  # arrival order, set by the loader / queue
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def images(self) -> tuple[str, ...]:
        return tuple(c.image for c in self.containers)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "Pod":
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        status = raw.get("status") or {}
        if not isinstance(meta, Mapping) or not isinstance(spec, Mapping) or not isinstance(status, Mapping):
            raise DecodeError("metadata, spec and status must be objects")
        name = meta.get("name")
        if not name or not isinstance(name, str):
            raise DecodeError("name or generateName is required", field="metadata.name")
        ns = str(meta.get("namespace") or "default")
        labels = _map(meta.get("labels"), "metadata.labels")
        containers = tuple(Container.parse(c, f"spec.containers[{i}]")
                           for i, c in enumerate(_list(spec.get("containers"), "spec.containers")))
        inits = tuple(Container.parse(c, f"spec.initContainers[{i}]")
                      for i, c in enumerate(_list(spec.get("initContainers"), "spec.initContainers")))
        overhead = parse_resource_list(spec.get("overhead"), "spec.overhead")
        pod_level = spec.get("resources") or {}
        pod_level_req = parse_resource_list(pod_level.get("requests") if isinstance(pod_level, Mapping) else None,
                                            "spec.resources.requests")
        requests, non0_cpu, non0_mem = pod_resources(containers, inits, overhead, pod_level_req)
        tolerations = tuple(Toleration.parse(t, f"spec.tolerations[{i}]")
                            for i, t in enumerate(_list(spec.get("tolerations"), "spec.tolerations")))
        tsc = tuple(TopologySpreadConstraint.parse(t, f"spec.topologySpreadConstraints[{i}]", labels)
                    for i, t in enumerate(_list(spec.get("topologySpreadConstraints"),
                                                "spec.topologySpreadConstraints")))
        gates = []
        for i, g in enumerate(_list(spec.get("schedulingGates"), "spec.schedulingGates")):
            if not isinstance(g, Mapping) or not g.get("name"):
                raise DecodeError("name is required", field=f"spec.schedulingGates[{i}].name")
            gates.append(str(g["name"]))
        pvcs = []
        for v in _list(spec.get("volumes"), "spec.volumes"):
            if isinstance(v, Mapping):
                if isinstance(v.get("persistentVolumeClaim"), Mapping):
                    pvcs.append(str(v["persistentVolumeClaim"].get("claimName") or ""))
                elif v.get("ephemeral") is not None:
                    pvcs.append(f"{name}-{v.get('name', '')}")
        # schedutil.GetHostPorts: sidecar (restartable init) containers first, then containers
        host_ports = tuple(p for c in inits if c.restart_policy == "Always" for p in c.ports if p.host_port > 0)
        host_ports += tuple(p for c in containers for p in c.ports if p.host_port > 0)
        owners = meta.get("ownerReferences") or []
        owner_kind = ""
        for o in owners if isinstance(owners, list) else []:
            if isinstance(o, Mapping) and o.get("controller"):
                owner_kind = str(o.get("kind") or "")
        pp = spec.get("preemptionPolicy") or "PreemptLowerPriority"
        if pp not in ("PreemptLowerPriority", "Never"):
            raise DecodeError(f'Unsupported value: "{pp}": supported values: "Never", '
                              '"PreemptLowerPriority"', field="spec.preemptionPolicy")
        return cls(
            raw=raw, name=name, namespace=ns, uid=str(meta.get("uid") or f"{ns}/{name}"),
            labels=labels, annotations=_map(meta.get("annotations"), "metadata.annotations"),
            node_name=str(spec.get("nodeName") or ""),
            scheduler_name=str(spec.get("schedulerName") or "default-scheduler"),
            priority=_int(spec.get("priority"), "spec.priority"),
            priority_class_name=str(spec.get("priorityClassName") or ""),
            preemption_policy=pp, containers=containers, init_containers=inits,
            node_selector=_map(spec.get("nodeSelector"), "spec.nodeSelector"),
            affinity=Affinity.parse(spec.get("affinity"), "spec.affinity", ns, labels),
            tolerations=tolerations, spread_constraints=tsc, scheduling_gates=tuple(gates),
            pvc_names=tuple(pvcs), nominated_node_name=str(status.get("nominatedNodeName") or ""),
            start_time=str(status.get("startTime") or ""),
            deletion_timestamp=meta.get("deletionTimestamp"),
            phase=str(status.get("phase") or "Pending"),
            requests=requests, non0_cpu=non0_cpu, non0_mem=non0_mem, host_ports=host_ports,
            owner_kind=owner_kind,
        )


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
    def from_dict(cls, raw: dict[str, Any]) -> "Node":
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        status = raw.get("status") or {}
        name = meta.get("name")
        if not name or not isinstance(name, str):
            raise DecodeError("name is required", field="metadata.name")
        taints = tuple(Taint.parse(t, f"spec.taints[{i}]")
                       for i, t in enumerate(_list(spec.get("taints"), "spec.taints")))
        alloc_raw = status.get("allocatable")
        path = "status.allocatable"
        if alloc_raw is None:
            alloc_raw, path = status.get("capacity"), "status.capacity"
        allocatable = to_resource(parse_resource_list(alloc_raw, path))
        images = []
        for i, im in enumerate(_list(status.get("images"), "status.images")):
            if not isinstance(im, Mapping):
                raise DecodeError("must be an object", field=f"status.images[{i}]")
            images.append(ImageState(tuple(str(n) for n in im.get("names") or ()),
                                     _int(im.get("sizeBytes"), f"status.images[{i}].sizeBytes")))
        return cls(raw=raw, name=name, uid=str(meta.get("uid") or name),
                   labels=_map(meta.get("labels"), "metadata.labels"),
                   annotations=_map(meta.get("annotations"), "metadata.annotations"),
                   taints=taints, unschedulable=bool(spec.get("unschedulable")),
                   allocatable=allocatable, images=tuple(images))


@dataclass(frozen=True, slots=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool
    preemption_policy: str

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "PriorityClass":
        name = (raw.get("metadata") or {}).get("name")
        if not name:
            raise DecodeError("name is required", field="metadata.name")
        if "value" not in raw:
            raise DecodeError("value is required", field="value")
        pp = raw.get("preemptionPolicy") or "PreemptLowerPriority"
        if pp not in ("PreemptLowerPriority", "Never"):
            raise DecodeError(f'Unsupported value: "{pp}"', field="preemptionPolicy")
        return cls(str(name), _int(raw.get("value"), "value"), bool(raw.get("globalDefault")), pp)


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    namespace: str
    name: str
    selector: LabelSelector
    min_available: int | str | None
    max_unavailable: int | str | None
    disruptions_allowed: int | None  # status.disruptionsAllowed, when the status is given

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "PodDisruptionBudget":
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        if not meta.get("name"):
            raise DecodeError("name is required", field="metadata.name")
        status = raw.get("status")
        allowed = None
        if isinstance(status, Mapping) and "disruptionsAllowed" in status:
            allowed = _int(status.get("disruptionsAllowed"), "status.disruptionsAllowed")
        # A PDB with a nil selector matches nothing; an empty one matches every pod (policy/v1).
        sel = LabelSelector.parse(spec.get("selector"), "spec.selector")
        for key in ("minAvailable", "maxUnavailable"):
            v = spec.get(key)
            if v is not None and not isinstance(v, (int, str)):
                raise DecodeError("must be an integer or a percentage", field=f"spec.{key}")
            if isinstance(v, str) and not (v.endswith("%") and v[:-1].isdigit()):
                raise DecodeError(f"a valid percent string must be a numeric string followed by "
                                  f"an ending '%' ({v!r})", field=f"spec.{key}")
        return cls(str(meta.get("namespace") or "default"), str(meta["name"]), sel,
                   spec.get("minAvailable"), spec.get("maxUnavailable"), allowed)


@dataclass(frozen=True, slots=True)
class Namespace:
    name: str
    labels: dict[str, str]

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "Namespace":
        meta = raw.get("metadata") or {}
        if not meta.get("name"):
            raise DecodeError("name is required", field="metadata.name")
        labels = _map(meta.get("labels"), "metadata.labels")
        labels.setdefault("kubernetes.io/metadata.name", str(meta["name"]))
        return cls(str(meta["name"]), labels)
