"""``ValidatePodCreate`` for what the scheduler reads: the pod's metadata, containers
(names, ports, resources), pod-level resources and overhead, and its scheduling fields,
checked in upstream's order so that the first error is the one kube-apiserver would list
first.

Fields kube-apiserver defaults (restart and DNS policies, termination message policy,
grace period, port protocols) are checked only when given. Not checked, because
kubesched neither stores nor reads them: volumes, env, probes, lifecycle handlers,
security contexts, DNS config, host aliases, OS, and ``image`` being required (test
fixtures, like upstream's scheduler tests, leave images empty).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched.api.quantity import Quantity
from kubesched.api.validation.field import GoJSON, duplicate, forbidden, invalid, not_supported, required
from kubesched.api.validation.meta import name_is_dns_subdomain, validate_labels, validate_object_meta
from kubesched.api.validation.resources import (
    validate_container_resources, validate_overhead, validate_pod_resources,
)
from kubesched.api.validation.scheduling import (
    validate_affinity, validate_spread_constraints, validate_tolerations,
)
from kubesched.api.validation.strings import (
    dns1123_label_ok, inclusive_range_error, is_dns1123_label, is_dns1123_subdomain, is_qualified_name,
    is_valid_port_name, qualified_name_ok,
)

if TYPE_CHECKING:
    from kubesched.api.objects import Container

__all__ = ["PodParts", "validate_pod"]

_PROTOCOLS = ("SCTP", "TCP", "UDP")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PORT_RANGE = inclusive_range_error(1, 65535)
_INIT_ONLY_SIDECAR = ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe")
_MAX_INT32 = 2**31 - 1


@dataclass(slots=True, kw_only=True)
class PodParts:
    """What :meth:`Pod.from_dict` has already decoded, handed over so nothing is parsed twice.

    ``require_limits`` False accepts an extended resource or hugepages request without a
    limit, which upstream rejects ("Limit must be set for non overcommitable resources").
    Only ``kubesched simulate`` turns it off, because the upstream-decision corpus
    (tests/fidelity/cases, shared/fidelity) has such pods: upstream's scheduler code was run
    on them directly, without an API server.
    """

    containers: Sequence["Container"]
    inits: Sequence["Container"]
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    node_selector: Mapping[str, str]
    overhead: Mapping[str, Quantity]
    pod_requests: Mapping[str, Quantity]
    pod_limits: Mapping[str, Quantity]
    require_limits: bool = True


def validate_pod(meta: Mapping[str, Any], spec: Mapping[str, Any], parts: PodParts) -> None:
    """Raise the first error upstream's ``ValidatePodCreate`` reports (of those checked)."""
    validate_object_meta(meta, parts.labels, parts.annotations, name_is_dns_subdomain, namespaced=True)
    _validate_spec(spec, parts)
    for key, ctrs in (("containers", spec.get("containers")), ("initContainers", spec.get("initContainers"))):
        for i, c in enumerate(ctrs or ()):
            image = c.get("image")
            if isinstance(image, str) and image != image.strip():
                raise invalid(f"spec.{key}[{i}].image", image, "must not have leading or trailing whitespace")
    if spec.get("ephemeralContainers"):
        raise forbidden("spec.ephemeralContainers", "cannot be set on create")
    if spec.get("nodeName") and spec.get("schedulingGates"):
        raise forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared")


def _validate_spec(spec: Mapping[str, Any], parts: PodParts) -> None:
    """``ValidatePodSpec``, in its order."""
    raw_ctrs = spec.get("containers") or []
    if not raw_ctrs:
        raise required("spec.containers")
    names = _validate_containers(raw_ctrs, parts.containers, parts.require_limits)
    _validate_init_containers(spec.get("initContainers") or [], parts.inits, names, parts.require_limits)
    res = spec.get("resources")
    if res is not None:
        if isinstance(res, Mapping) and res.get("claims") is not None:
            raise forbidden("spec.resources.claims", "claims may not be set for Resources at pod-level")
        validate_pod_resources(parts.pod_requests, parts.pod_limits, parts.containers, parts.inits, "spec.resources")
    if spec.get("hostNetwork"):
        for i, c in enumerate(parts.containers):
            for j, p in enumerate(c.ports):
                if p.host_port != p.container_port:
                    raise invalid(f"spec.containers[{i}].ports[{j}].hostPort", p.host_port,
                                  "must match `containerPort` when `hostNetwork` is true")
    _enum(spec, "restartPolicy", "spec", _RESTART_POLICIES)
    _enum(spec, "dnsPolicy", "spec", _DNS_POLICIES)
    validate_labels(parts.node_selector, "spec.nodeSelector")
    validate_affinity(spec.get("affinity"), parts.labels)
    _validate_gates(spec)
    validate_spread_constraints(spec.get("topologySpreadConstraints"), parts.labels)
    _validate_names(spec)
    if spec.get("tolerations"):
        validate_tolerations(spec["tolerations"])
    pcn = spec.get("priorityClassName")
    if isinstance(pcn, str) and pcn:
        msgs = is_dns1123_subdomain(pcn)
        if msgs:
            raise invalid("spec.priorityClassName", pcn, msgs[0])
    _enum(spec, "preemptionPolicy", "spec", ("PreemptLowerPriority", "Never"))
    if spec.get("overhead") is not None:
        validate_overhead(parts.overhead, "spec.overhead")


_good_port_names: set[str] = set()


def _enum(obj: Mapping[str, Any], key: str, prefix: str, supported: Sequence[str]) -> None:
    """A field with a fixed set of values, checked when given (upstream defaults it)."""
    value = obj.get(key)
    if value and value not in supported:
        raise not_supported(f"{prefix}.{key}", GoJSON(value), supported)


def _container_common(raw: Mapping[str, Any], c: "Container", path: str, require_limits: bool) -> None:
    """``validateContainerCommon`` (name, ports, pull policy, resources)."""
    if not c.name:
        raise required(f"{path}.name")
    if not dns1123_label_ok(c.name):
        raise invalid(f"{path}.name", c.name, is_dns1123_label(c.name)[0])
    _enum(raw, "terminationMessagePolicy", path, _MESSAGE_POLICIES)
    if c.ports:
        _ports(raw["ports"], c, path)
    _enum(raw, "imagePullPolicy", path, _PULL_POLICIES)
    if c.requests or c.limits:
        validate_container_resources(c, path, require_limits=require_limits)


def _ports(raw: Sequence[Any], c: "Container", path: str) -> None:
    """``validateContainerPorts``."""
    port_names: set[str] = set()
    for j, p in enumerate(raw):
        name = p.get("name")
        if name:
            if name not in _good_port_names:
                msgs = is_valid_port_name(name)
                if msgs:
                    raise invalid(f"{path}.ports[{j}].name", name, msgs[0])
                if len(_good_port_names) < 4096:
                    _good_port_names.add(name)
            if name in port_names:
                raise duplicate(f"{path}.ports[{j}].name", name)
            port_names.add(name)
        port = c.ports[j]
        if not 0 < port.container_port <= 65535:
            if port.container_port == 0:
                raise required(f"{path}.ports[{j}].containerPort")
            raise invalid(f"{path}.ports[{j}].containerPort", port.container_port, _PORT_RANGE)
        if port.host_port != 0 and not 0 < port.host_port <= 65535:
            raise invalid(f"{path}.ports[{j}].hostPort", port.host_port, _PORT_RANGE)
        if port.protocol not in _PROTOCOLS:
            raise not_supported(f"{path}.ports[{j}].protocol", GoJSON(port.protocol), _PROTOCOLS)


def _host_port_conflicts(ctrs: Sequence["Container"], path: str) -> None:
    """``AccumulateUniqueHostPorts``: protocol, host IP and port unique."""
    seen: set[str] = set()
    for ci, c in enumerate(ctrs):
        for pi, p in enumerate(c.ports):
            if p.host_port == 0:
                continue
            key = f"{p.protocol}/{p.host_ip}/{p.host_port}"
            if key in seen:
                raise duplicate(f"{path}[{ci}].ports[{pi}].hostPort", key)
            seen.add(key)


def _validate_containers(raw: Sequence[Any], ctrs: Sequence["Container"], require_limits: bool) -> set[str]:
    """``validateContainers``; returns the names for the init containers' uniqueness."""
    names: set[str] = set()
    for i, c in enumerate(ctrs):
        path = f"spec.containers[{i}]"
        _container_common(raw[i], c, path, require_limits)
        if c.name in names:
            raise duplicate(f"{path}.name", c.name)
        names.add(c.name)
        if raw[i].get("restartPolicy") is not None:
            raise forbidden(f"{path}.restartPolicy", "may not be set for non-init containers")
    _host_port_conflicts(ctrs, "spec.containers")
    return names


def _validate_init_containers(raw: Sequence[Any], ctrs: Sequence["Container"], names: set[str],
                              require_limits: bool) -> None:
    """``validateInitContainers``: only ``restartPolicy: Always`` (a sidecar) is allowed."""
    names = set(names)
    for i, c in enumerate(ctrs):
        path = f"spec.initContainers[{i}]"
        _container_common(raw[i], c, path, require_limits)
        policy = raw[i].get("restartPolicy")
        if policy is not None and policy != "Always":
            raise not_supported(f"{path}.restartPolicy", GoJSON(policy), ("Always",))
        if c.name in names:
            raise duplicate(f"{path}.name", c.name)
        if c.name:
            names.add(c.name)
        _host_port_conflicts([c], "spec.initContainers")  # upstream checks each alone, as index 0
        if policy != "Always":
            for key in _INIT_ONLY_SIDECAR:
                if raw[i].get(key) is not None:
                    raise forbidden(f"{path}.{key}", "may not be set for init containers without restartPolicy=Always")


def _validate_gates(spec: Mapping[str, Any]) -> None:
    """``validateReadinessGates`` then ``validateSchedulingGates``."""
    for i, g in enumerate(spec.get("readinessGates") or ()):
        ct = (g.get("conditionType") or "") if isinstance(g, Mapping) else ""
        if not qualified_name_ok(ct):
            raise invalid(f"spec.readinessGates[{i}].conditionType", ct, is_qualified_name(ct)[0])
    seen: set[str] = set()
    for i, g in enumerate(spec.get("schedulingGates") or ()):
        name = (g.get("name") or "") if isinstance(g, Mapping) else ""
        if not qualified_name_ok(name):
            raise invalid(f"spec.schedulingGates[{i}]", name, is_qualified_name(name)[0])
        if name in seen:
            raise duplicate(f"spec.schedulingGates[{i}]", name)
        seen.add(name)


def _validate_names(spec: Mapping[str, Any]) -> None:
    """Service account and node names (subdomains), the active deadline, host and
    subdomain names (labels), in ``ValidatePodSpec``'s order."""
    for key in ("serviceAccountName", "nodeName"):
        value = spec.get(key)
        if isinstance(value, str) and value:
            msgs = is_dns1123_subdomain(value)
            if msgs:
                raise invalid(f"spec.{key}", value, msgs[0])
    ads = spec.get("activeDeadlineSeconds")
    if isinstance(ads, int) and not isinstance(ads, bool) and not 1 <= ads <= _MAX_INT32:
        raise invalid("spec.activeDeadlineSeconds", ads, inclusive_range_error(1, _MAX_INT32))
    for key in ("hostname", "subdomain"):
        value = spec.get(key)
        if isinstance(value, str) and value and not dns1123_label_ok(value):
            raise invalid(f"spec.{key}", value, is_dns1123_label(value)[0])
