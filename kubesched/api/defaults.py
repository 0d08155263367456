"""The API server's defaulting and admission that the scheduler's inputs depend on.

A pod or node read from a manifest has not been through an API server, but upstream's
scheduler only ever sees objects that have. This module applies, to the raw dictionaries
and before they are parsed, what kube-apiserver v1.34.1 would have done on create, so that
``raw`` reads back as the server would return it:

* defaulting, upstream ``pkg/apis/core/v1/defaults.go`` and ``zz_generated.defaults.go``:
  ``SetDefaults_Pod`` (container requests default to limits; pod-level requests and
  hugepage limits, PodLevelResources being beta and on in 1.34; host ports of a
  hostNetwork pod), ``SetDefaults_PodSpec`` (``schedulerName``), container port protocol,
  ``SetDefaults_ResourceList`` (quantities rounded up to milli scale, written canonically)
  and ``SetDefaults_NodeStatus`` (allocatable defaults to capacity);
* admission: ``Priority`` (``plugin/pkg/admission/priority``: ``spec.priority``,
  ``spec.preemptionPolicy`` and, from the global default class, ``priorityClassName``)
  and ``DefaultTolerationSeconds`` (not-ready / unreachable NoExecute tolerations, 300s);
* what the registry fills in: namespace ``default``, a ``uid`` (deterministic here: a
  uuid5 of kind, namespace and name, so runs are reproducible), ``status.phase``.

Every function is a pure function of dictionaries: inputs are never mutated, only the
parts that change are copied. Bad input raises :class:`DecodeError` with the field path.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from kubesched.api.errors import DecodeError, QuantityError
from kubesched.api.objects import Container
from kubesched.api.policy import PriorityClass
from kubesched.api.quantity import Quantity, parse_quantity
from kubesched.api.resources import CPU, MEMORY, aggregate_requests
from kubesched.api.storage import STORAGE_KINDS, apply_storage_defaults
from kubesched.api.validation import HIGHEST_USER_DEFINABLE_PRIORITY as HIGHEST_USER_DEFINABLE_PRIORITY
from kubesched.api.validation import SYSTEM_CRITICAL_PRIORITY as SYSTEM_CRITICAL_PRIORITY
from kubesched.api.validation import SYSTEM_PRIORITY_CLASS_VALUES
from kubesched.api.validation import validate_priority_class as _validate_priority_class_fields

log = logging.getLogger(__name__)

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_NAMESPACE = "default"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
DEFAULT_TOLERATION_SECONDS = 300
TAINT_NODE_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE = "node.kubernetes.io/unreachable"

# The PriorityClasses every cluster has (upstream pkg/apis/scheduling/helpers.go).
SYSTEM_PRIORITY_CLASSES: dict[str, PriorityClass] = {
    name: PriorityClass(name, value, False, PREEMPT_LOWER_PRIORITY)
    for name, value in SYSTEM_PRIORITY_CLASS_VALUES.items()
}

# Kinds kubesched knows that are not namespaced; every other kind is.
CLUSTER_SCOPED_KINDS = frozenset({
    "Node", "Namespace", "PriorityClass", "PersistentVolume", "StorageClass", "CSIDriver",
    "CSINode", "RuntimeClass", "ClusterRole", "ClusterRoleBinding", "DeviceClass", "ResourceSlice",
    "DeviceTaintRule",
})

_UID_NAMESPACE = uuid.UUID("6f1c3a52-7d0e-5b8e-9a51-0c5e2d1b7a44")
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # upstream utilrand's alphabet
_MAX_GENERATED_PREFIX = 58  # 63 - 5 random characters


def is_namespaced(kind: str) -> bool:
    return kind not in CLUSTER_SCOPED_KINDS


def describe(raw: Mapping[str, Any]) -> str:
    """How errors name an object: ``Pod default/web``, ``Node n1``."""
    kind = str(raw.get("kind") or "object")
    meta = raw.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name = str(meta.get("name") or "")
    if is_namespaced(kind):
        return f"{kind} {meta.get('namespace') or DEFAULT_NAMESPACE}/{name}"
    return f"{kind} {name}"


def generate_name(base: str, seed: str) -> str:
    """``metadata.generateName``: upstream appends 5 random characters (names.SimpleNameGenerator);
    here they are derived from ``seed`` so a run is reproducible."""
    digest = hashlib.sha256(seed.encode()).digest()
    suffix = "".join(_NAME_ALPHABET[b % len(_NAME_ALPHABET)] for b in digest[:5])
    return base[:_MAX_GENERATED_PREFIX] + suffix


def apply_metadata_defaults(raw: Mapping[str, Any], kind: str | None = None) -> dict[str, Any]:
    """Namespace ``default`` for a namespaced kind and a deterministic ``uid``."""
    kind = kind or str(raw.get("kind") or "")
    out = dict(raw)
    meta = _mapping(raw.get("metadata"), "metadata")
    meta = dict(meta)
    ns = ""
    if is_namespaced(kind):
        ns = str(meta.get("namespace") or DEFAULT_NAMESPACE)
        meta["namespace"] = ns
    if not meta.get("uid") and meta.get("name"):
        meta["uid"] = str(uuid.uuid5(_UID_NAMESPACE, f"{kind}/{ns}/{meta['name']}"))
    out["metadata"] = meta
    return out


# -- quantities ---------------------------------------------------------------------------
def _round_up_milli(value: Any, path: str) -> str:
    """``SetDefaults_ResourceList``: ``RoundUp(-3)``, then the canonical string."""
    if isinstance(value, (str, int, float)):
        try:
            return _rounded(value)
        except QuantityError as exc:
            raise exc.at(field_prefix=path) from None
    return _rounded_uncached(value, path)


@functools.lru_cache(maxsize=4096, typed=True)
def _rounded(value: str | int | float) -> str:
    return _rounded_uncached(value, "")


def _rounded_uncached(value: Any, path: str) -> str:
    q = parse_quantity(value, field=path)
    scaled = q.amount * 1000
    if scaled.denominator != 1:
        up = -(-abs(scaled.numerator) // scaled.denominator)  # away from zero
        q = Quantity(amount=Fraction(up if scaled > 0 else -up, 1000), format=q.format)
    return str(q)


def _resource_list(obj: Any, path: str) -> dict[str, Any] | None:
    if obj is None:
        return None
    if not isinstance(obj, Mapping):
        raise DecodeError("must be a map of resource names to quantities", field=path)
    return {str(k): _round_up_milli(v, f"{path}.{k}") for k, v in obj.items()}


def _mapping(obj: Any, path: str) -> Mapping[str, Any]:
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise DecodeError("must be an object", field=path)
    return obj


def _list(obj: Any, path: str) -> list[Any]:
    if obj is None:
        return []
    if not isinstance(obj, list):
        raise DecodeError("must be a list", field=path)
    return obj


# -- pods ---------------------------------------------------------------------------------
def _container(c: Any, path: str, *, copy_limits: bool, host_network: bool
               ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Return (the container as defaulted before rounding, the final container)."""
    c = dict(_mapping(c, path))
    if "resources" in c and c["resources"] is not None:
        res = dict(_mapping(c["resources"], f"{path}.resources"))
        limits = res.get("limits")
        if copy_limits and limits is not None:
            limits = _mapping(limits, f"{path}.resources.limits")
            reqs = dict(_mapping(res.get("requests"), f"{path}.resources.requests"))
            for k, v in limits.items():
                reqs.setdefault(k, v)
            if reqs:
                res["requests"] = reqs
        c["resources"] = res
    if "ports" in c and c["ports"] is not None:
        ports = []
        for j, p in enumerate(_list(c["ports"], f"{path}.ports")):
            p = dict(_mapping(p, f"{path}.ports[{j}]"))
            if not p.get("protocol"):
                p["protocol"] = "TCP"
            if host_network and not p.get("hostPort"):
                p["hostPort"] = p.get("containerPort")
            ports.append(p)
        c["ports"] = ports
    final = c
    if isinstance(c.get("resources"), Mapping):
        res = dict(c["resources"])
        for key in ("limits", "requests"):
            if res.get(key) is not None:
                res[key] = _resource_list(res[key], f"{path}.resources.{key}")
        final = {**c, "resources": res}
    return c, final


def _pod_level_defaults(res: dict[str, Any], containers: Sequence[Container],
                        inits: Sequence[Container]) -> None:
    """``defaultHugePagePodLimits`` then ``defaultPodRequests`` (PodLevelResources)."""
    limits = dict(_mapping(res.get("limits"), "spec.resources.limits"))
    requests = _mapping(res.get("requests"), "spec.resources.requests")
    if not limits and not requests:
        return
    lim_containers = [dataclasses.replace(c, requests=c.limits) for c in containers]
    lim_inits = [dataclasses.replace(c, requests=c.limits) for c in inits]
    for k, q in aggregate_requests(lim_containers, lim_inits).items():
        if k.startswith("hugepages-") and k not in requests and k not in limits:
            limits[k] = str(q)
    if limits:
        res["limits"] = limits
    else:
        return
    reqs = dict(requests)
    for k, q in aggregate_requests(containers, inits).items():
        if k in (CPU, MEMORY) and k not in reqs:  # supported at pod level and overcommittable
            reqs[k] = str(q)
    for k, v in limits.items():
        if k not in reqs and (k in (CPU, MEMORY) or k.startswith("hugepages-")):
            reqs[k] = v
    if reqs:
        res["requests"] = reqs


def _tolerations(spec: dict[str, Any]) -> None:
    """``DefaultTolerationSeconds`` admission."""
    tols = _list(spec.get("tolerations"), "spec.tolerations")
    not_ready = unreachable = False
    for t in tols:
        if not isinstance(t, Mapping):
            continue
        key, effect = t.get("key") or "", t.get("effect") or ""
        if effect in ("", "NoExecute"):
            not_ready = not_ready or key in ("", TAINT_NODE_NOT_READY)
            unreachable = unreachable or key in ("", TAINT_NODE_UNREACHABLE)
    added = [{"key": k, "operator": "Exists", "effect": "NoExecute",
              "tolerationSeconds": DEFAULT_TOLERATION_SECONDS}
             for k, done in ((TAINT_NODE_NOT_READY, not_ready), (TAINT_NODE_UNREACHABLE, unreachable))
             if not done]
    if added:
        spec["tolerations"] = list(tols) + added


def default_priority_class(priority_classes: Mapping[str, PriorityClass]) -> PriorityClass | None:
    """The global default class; with several (a race upstream), the lowest value wins
    (the first of equal values, in the given order)."""
    best: PriorityClass | None = None
    for pc in priority_classes.values():
        if pc.global_default and (best is None or pc.value < best.value):
            best = pc
    return best


def _admit_priority(spec: dict[str, Any], priority_classes: Mapping[str, PriorityClass]) -> None:
    """``Priority`` admission on create."""
    name = spec.get("priorityClassName") or ""
    if not isinstance(name, str):
        raise DecodeError(f"must be a string, got {name!r}", field="spec.priorityClassName")
    if not name:
        dpc = default_priority_class(priority_classes)
        if dpc is not None:
            spec["priorityClassName"] = dpc.name
        value, policy = (dpc.value, dpc.preemption_policy) if dpc else (0, PREEMPT_LOWER_PRIORITY)
    else:
        pc = priority_classes.get(name) or SYSTEM_PRIORITY_CLASSES.get(name)
        if pc is None:
            raise DecodeError(f"no PriorityClass with name {name} was found", field="spec.priorityClassName")
        value, policy = pc.value, pc.preemption_policy
    given = spec.get("priority")
    if given is not None and (isinstance(given, bool) or not isinstance(given, int)):
        raise DecodeError(f"must be an integer, got {given!r}", field="spec.priority")
    if given is not None and given != value:
        raise DecodeError(f"the integer value of priority ({given}) must not be provided in pod spec; "
                          f"priority admission controller computed {value} from the given PriorityClass name",
                          field="spec.priority")
    spec["priority"] = value
    given = spec.get("preemptionPolicy")
    if given is not None and given != policy:
        raise DecodeError(f"the string value of PreemptionPolicy ({given}) must not be provided in pod spec; "
                          f"priority admission controller computed {policy} from the given PriorityClass name",
                          field="spec.preemptionPolicy")
    spec["preemptionPolicy"] = policy


def apply_pod_defaults(raw: Mapping[str, Any],
                       priority_classes: Mapping[str, PriorityClass] | None = None) -> dict[str, Any]:
    """Default and admit a pod as kube-apiserver does on create; return the new raw pod.

    ``priority_classes`` maps names to the cluster's classes (the system classes are
    always known). Raises :class:`DecodeError` where upstream rejects the pod.
    """
    out = apply_metadata_defaults(raw, "Pod")
    spec = dict(_mapping(raw.get("spec"), "spec"))
    host_network = bool(spec.get("hostNetwork"))
    parsed: dict[str, list[Container]] = {"containers": [], "initContainers": []}
    want_parsed = spec.get("resources") is not None  # pod-level resources need the aggregates
    for key in ("containers", "initContainers", "ephemeralContainers"):
        if spec.get(key) is None:
            continue
        final = []
        for i, c in enumerate(_list(spec[key], f"spec.{key}")):
            path = f"spec.{key}[{i}]"
            ephemeral = key == "ephemeralContainers"
            unrounded, c2 = _container(c, path, copy_limits=not ephemeral,
                                       host_network=host_network and not ephemeral)
            if want_parsed and not ephemeral:
                parsed[key].append(Container.parse(unrounded, path))
            final.append(c2)
        spec[key] = final
    if want_parsed:
        res = dict(_mapping(spec["resources"], "spec.resources"))
        _pod_level_defaults(res, parsed["containers"], parsed["initContainers"])
        for key in ("limits", "requests"):
            if res.get(key) is not None:
                res[key] = _resource_list(res[key], f"spec.resources.{key}")
        spec["resources"] = res
    if spec.get("overhead") is not None:
        spec["overhead"] = _resource_list(spec["overhead"], "spec.overhead")
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER_NAME
    _admit_priority(spec, priority_classes or {})
    _tolerations(spec)
    out["spec"] = spec
    status = dict(_mapping(raw.get("status"), "status"))
    if not status.get("phase"):
        status["phase"] = "Running" if spec.get("nodeName") else "Pending"
    out["status"] = status
    return out


# -- nodes and priority classes -----------------------------------------------------------
def apply_node_defaults(raw: Mapping[str, Any]) -> dict[str, Any]:
    """``SetObjectDefaults_Node``: allocatable defaults to capacity; quantities rounded."""
    out = apply_metadata_defaults(raw, "Node")
    if raw.get("status") is None:
        return out
    status = dict(_mapping(raw.get("status"), "status"))
    if status.get("allocatable") is None and status.get("capacity") is not None:
        status["allocatable"] = status["capacity"]
    for key in ("capacity", "allocatable"):
        if status.get(key) is not None:
            status[key] = _resource_list(status[key], f"status.{key}")
    out["status"] = status
    return out


def apply_priority_class_defaults(raw: Mapping[str, Any]) -> dict[str, Any]:
    """scheduling/v1 ``SetDefaults_PriorityClass``: ``preemptionPolicy`` PreemptLowerPriority."""
    out = apply_metadata_defaults(raw, "PriorityClass")
    if out.get("preemptionPolicy") is None:
        out["preemptionPolicy"] = PREEMPT_LOWER_PRIORITY
    return out


def validate_priority_class(pc: PriorityClass, existing: Iterable[PriorityClass] = ()) -> None:
    """``ValidatePriorityClass`` (:func:`kubesched.api.validation.validate_priority_class`:
    names starting ``system-`` are reserved, user values are at most 1e9) and the Priority
    admission check on create: only one global default."""
    _validate_priority_class_fields(None, pc.name, pc.value, pc.global_default, pc.preemption_policy)
    if pc.global_default:
        for other in existing:
            if other.global_default:
                raise DecodeError(f"PriorityClass {other.name} is already marked as default. "
                                  "Only one default can exist", field="globalDefault")


# -- whole manifests ----------------------------------------------------------------------
def default_object(raw: Mapping[str, Any], priority_classes: Mapping[str, PriorityClass]) -> dict[str, Any]:
    """Apply the defaults for ``raw``'s kind (metadata defaults only for other kinds)."""
    kind = raw.get("kind")
    if kind == "Pod":
        return apply_pod_defaults(raw, priority_classes)
    if kind == "Node":
        return apply_node_defaults(raw)
    if kind == "PriorityClass":
        return apply_priority_class_defaults(raw)
    if kind in STORAGE_KINDS:
        return apply_metadata_defaults(apply_storage_defaults(raw))
    return apply_metadata_defaults(raw)


def priority_classes_of(objects: Iterable[Mapping[str, Any]]) -> dict[str, PriorityClass]:
    """The PriorityClasses among ``objects``, by name, validated as on create."""
    out: dict[str, PriorityClass] = {}
    for raw in objects:
        if raw.get("kind") != "PriorityClass":
            continue
        try:
            pc = PriorityClass.from_dict(apply_priority_class_defaults(raw))
            validate_priority_class(pc, out.values())
        except DecodeError as exc:
            raise exc.at(obj=describe(raw)) from None
        out[pc.name] = pc
    return out


def default_manifest(objects: Sequence[Mapping[str, Any]],
                     priority_classes: Mapping[str, PriorityClass] | None = None,
                     *, files: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Default every object of a manifest, in order.

    ``priority_classes`` defaults to the classes among ``objects``. ``files[i]``, when
    given, names the source of ``objects[i]`` in errors.
    """
    if priority_classes is None:
        priority_classes = priority_classes_of(objects)
    out = []
    for i, raw in enumerate(objects):
        try:
            out.append(default_object(raw, priority_classes))
        except DecodeError as exc:
            raise exc.at(obj=describe(raw), file=files[i] if files else "") from None
    return out
