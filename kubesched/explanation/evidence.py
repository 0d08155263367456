"""The amounts behind a Filter rejection, for ``explain``'s list of every blocker.

A Filter status says *that* a node fails ("Insufficient cpu"); the user needs *by how
much* and *because of whom*: the pod asks 1500m where 500m is free, and these pods use
the rest; the spread constraint counts 3/3/1 pods per zone so the pod may only go where
there is 1; the anti-affinity term matches pod ``web-2`` on that host. Each function here
computes that evidence for one (plugin, node) from the pod, the node's ``NodeInfo``, the
snapshot and, for PodTopologySpread, the plugin's own PreFilter state, so the counts are
exactly those the Filter compared. Evidence is read-only: nothing here changes a decision.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.dra import DraLister
from kubesched.framework.dra_extended import is_dra_extended_resource_name, resolver_of
from kubesched.framework.interface import ClusterObjects
from kubesched.framework.storage import StorageLister
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names
from kubesched.plugins.interpodaffinity.common import IncomingTerm, existing_term_matches, namespace_labels
from kubesched.plugins.nodeports import get_host_ports
from kubesched.plugins.nodevolumelimits.csi import volume_limits
from kubesched.plugins.podtopologyspread.plugin import PRE_FILTER_KEY as SPREAD_KEY
from kubesched.plugins.volumezone import pv_topologies

log = logging.getLogger(__name__)

USERS_SHOWN = 5  # pods named as using a resource, largest first
DOMAINS_SHOWN = 20  # spread domains listed with their counts (the rest are summarised)


def fmt_amount(resource: str, v: int) -> str:
    """A scheduler amount as a quantity a user writes: cpu in millis, bytes binary."""
    if resource == CPU:
        return f"{v // 1000}" if v % 1000 == 0 else f"{v}m"
    if resource in (MEMORY, EPHEMERAL_STORAGE) or resource.startswith("hugepages-"):
        for suffix, unit in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
            if v and v % unit == 0:
                return f"{v // unit}{suffix}"
    return str(v)


@dataclass
class EvidenceContext:
    """What evidence reads besides the node: every node (for topology domains), the
    cluster objects (namespaces for affinity terms), the cycle state of the run."""

    pod: Pod
    state: CycleState
    infos: Sequence[NodeInfo]
    objects: ClusterObjects
    storage: StorageLister | None = None
    dra: DraLister | None = None
    _domains: dict[str, dict[str, list[NodeInfo]]] = field(default_factory=dict)

    def domain(self, key: str, node: Node) -> list[NodeInfo]:
        """The NodeInfos in ``node``'s domain of topology ``key`` (indexed once per key)."""
        by_value = self._domains.get(key)
        if by_value is None:
            by_value = self._domains[key] = {}
            for ni in self.infos:
                v = ni.node.labels.get(key) if ni.node is not None else None
                if v is not None:
                    by_value.setdefault(v, []).append(ni)
        value = node.labels.get(key)
        return by_value.get(value, []) if value is not None else []


def resources(ctx: EvidenceContext, ni: NodeInfo) -> dict[str, Any]:
    """NodeResourcesFit: per short resource, asked / allocatable / used / free, and the pods
    using most of it; the pod count when the node is full."""
    alloc, used, pod = ni.allocatable, ni.requested, ctx.pod
    out: dict[str, Any] = {}
    if len(ni.pods) + 1 > alloc.get(PODS, 0):
        out[PODS] = {"requested": 1, "allocatable": alloc.get(PODS, 0), "used": len(ni.pods),
                     "free": alloc.get(PODS, 0) - len(ni.pods)}
    for name, q in sorted(pod.requests.items()):
        if name == PODS or q <= 0:
            continue
        a, u = alloc.get(name, 0), used.get(name, 0)
        if q <= a - u:
            continue
        users = sorted((p for p in ni.pods if p.requests.get(name, 0) > 0),
                       key=lambda p: (-p.requests.get(name, 0), p.key))
        out[name] = {"requested": fmt_amount(name, q), "allocatable": fmt_amount(name, a),
                     "used": fmt_amount(name, u), "free": fmt_amount(name, max(a - u, 0)),
                     "short": fmt_amount(name, q - max(a - u, 0)),
                     "usedBy": [{"pod": p.key, "requested": fmt_amount(name, p.requests.get(name, 0)),
                                 "priority": p.priority} for p in users[:USERS_SHOWN]],
                     "usedByCount": len(users)}
    return {"resources": out}


def taints(ctx: EvidenceContext, ni: NodeInfo) -> dict[str, Any]:
    """TaintToleration: every NoSchedule/NoExecute taint the pod does not tolerate."""
    node = ni.node
    bad = [t for t in (node.taints if node is not None else ())
           if t.effect in ("NoSchedule", "NoExecute") and not any(tol.tolerates(t) for tol in ctx.pod.tolerations)]
    return {"untoleratedTaints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in bad]}


def node_affinity(ctx: EvidenceContext, ni: NodeInfo) -> dict[str, Any]:
    """NodeAffinity: the nodeSelector entries the node's labels miss, the required terms
    and the node's values of the labels they name."""
    labels = ni.node.labels if ni.node is not None else {}
    pod = ctx.pod
    out: dict[str, Any] = {}
    missed = [{"key": k, "wanted": v, "node": labels.get(k)} for k, v in sorted(pod.node_selector.items())
              if labels.get(k) != v]
    if missed:
        out["nodeSelector"] = missed
    required = (((pod.raw.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if required:
        terms = required.get("nodeSelectorTerms") or []
        out["requiredTerms"] = terms
        keys = {e.get("key") for t in terms for e in (t.get("matchExpressions") or []) if isinstance(e, dict)}
        out["nodeLabels"] = {k: labels.get(k) for k in sorted(k for k in keys if isinstance(k, str))}
    return out


def unschedulable(ctx: EvidenceContext, ni: NodeInfo) -> dict[str, Any]:
    return {"unschedulable": True}


def node_name(ctx: EvidenceContext, ni: NodeInfo) -> dict[str, Any]:
    return {"podWantsNode": ctx.pod.node_name or (ctx.pod.raw.get("spec") or {}).get("nodeName")}


def ports(ctx: EvidenceContext, ni: NodeInfo) -> dict[str, Any]:
    """NodePorts: each host port the pod wants that a pod on the node holds."""
    out = []
    for want in get_host_ports(ctx.pod):
        for other in ni.pods:
            for have in get_host_ports(other):
                if (have.host_port == want.host_port and have.protocol == want.protocol
                        and (have.host_ip in ("", "0.0.0.0") or want.host_ip in ("", "0.0.0.0")
                             or have.host_ip == want.host_ip)):
                    out.append({"port": want.host_port, "protocol": want.protocol,
                                "hostIP": want.host_ip or "0.0.0.0", "usedBy": other.key})
    return {"portsInUse": out}


def spread(ctx: EvidenceContext, ni: NodeInfo) -> dict[str, Any]:
    """PodTopologySpread, from the plugin's PreFilter counts: per failing constraint, the
    node's domain, the matching pods per domain, the minimum, the skew placing the pod
    here would make, and the domains where the pod may go."""
    st = ctx.state.get(SPREAD_KEY)
    node = ni.node
    if st is None or node is None:
        return {}
    out = []
    for i, c in enumerate(st.constraints):
        value = node.labels.get(c.topology_key)
        if value is None:
            out.append({"constraint": i, "topologyKey": c.topology_key, "maxSkew": c.max_skew,
                        "nodeMissingLabel": True})
            continue
        counts = st.tp_value_to_match_num[i]
        low = st.min_match_num(i, c.min_domains)
        self_match = 1 if c.selector.matches(ctx.pod.labels) else 0
        skew = counts.get(value, 0) + self_match - low
        if skew <= c.max_skew:
            continue
        allowed = sorted(d for d, n in counts.items() if n + self_match - low <= c.max_skew)
        doc: dict[str, Any] = {"constraint": i, "topologyKey": c.topology_key, "maxSkew": c.max_skew,
                               "domain": value,
                               "matchingInDomain": counts.get(value, 0), "globalMin": low,
                               "selfMatch": self_match, "skew": skew, "domains": len(counts),
                               "neededDomains": allowed[:DOMAINS_SHOWN]}
        if c.min_domains > 1:
            doc["minDomains"] = c.min_domains
        if len(counts) <= DOMAINS_SHOWN:
            doc["counts"] = dict(sorted(counts.items()))
        out.append(doc)
    return {"constraints": out}


def _term_doc(raw_terms: Any, i: int) -> Any:
    return raw_terms[i] if isinstance(raw_terms, list) and i < len(raw_terms) else None


def affinity(ctx: EvidenceContext, ni: NodeInfo) -> dict[str, Any]:
    """InterPodAffinity: per required term of the pod, the pods of the node's domain that
    match it (none: the affinity term is unmet; some: the anti-affinity term conflicts),
    and the existing pods whose own anti-affinity rejects the pod here."""
    pod, node = ctx.pod, ni.node
    if node is None:
        return {}
    spec_aff = ((pod.raw.get("spec") or {}).get("affinity") or {})
    out: dict[str, Any] = {}
    aff = pod.affinity
    if aff is not None:
        for key, terms, raw_key, want_match in (
                ("affinityTerms", aff.pod_affinity_required, "podAffinity", True),
                ("antiAffinityTerms", aff.anti_affinity_required, "podAntiAffinity", False)):
            raw_terms = (spec_aff.get(raw_key) or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
            docs = []
            for i, term in enumerate(terms):
                inc = IncomingTerm(term, ctx.objects)
                matching = sorted(p.key for d in ctx.domain(term.topology_key, node) for p in d.pods
                                  if inc.admits(p.namespace) and term.selector.matches(p.labels))
                if bool(matching) != want_match or node.labels.get(term.topology_key) is None:
                    docs.append({"term": _term_doc(raw_terms, i), "topologyKey": term.topology_key,
                                 "domain": node.labels.get(term.topology_key), "matchingPods": matching[:10]})
            if docs:
                out[key] = docs
    ns_labels = namespace_labels(ctx.objects, pod.namespace)
    existing = []
    for d in ctx.infos:
        for other in d.pods_with_required_anti_affinity:
            if other.affinity is None or d.node is None:
                continue
            for term in other.affinity.anti_affinity_required:
                value = d.node.labels.get(term.topology_key)
                if (value is not None and node.labels.get(term.topology_key) == value
                        and existing_term_matches(term, pod, ns_labels)):
                    existing.append({"pod": other.key, "node": d.name, "topologyKey": term.topology_key})
    if existing:
        out["existingPodsAntiAffinity"] = existing[:10]
    return out


def _claim(ctx: EvidenceContext, claim: str, labels: Mapping[str, str]) -> dict[str, Any]:
    """One claim of the pod: its class, and the volume it is bound to with that volume's
    node affinity and zones (beside the node's values), or that it is unbound."""
    doc: dict[str, Any] = {"claim": claim}
    pvc = ctx.storage.pvc(ctx.pod.namespace, claim) if ctx.storage is not None else None
    if pvc is None:
        doc["found"] = False
        return doc
    doc["storageClass"] = pvc.storage_class_name
    if not pvc.volume_name:
        doc["boundTo"] = None
        return doc
    doc["boundTo"] = pvc.volume_name
    pv = ctx.storage.pv(pvc.volume_name) if ctx.storage is not None else None
    if pv is None:
        return doc
    required = ((pv.raw.get("spec") or {}).get("nodeAffinity") or {}).get("required")
    if required:
        doc["volumeNodeAffinity"] = required
    zones = {t.key: sorted(t.values) for t in pv_topologies(pv)}
    if zones:
        doc["volumeZones"] = zones
        doc["nodeZones"] = {k: labels.get(k) for k in zones}
    return doc


def volumes(ctx: EvidenceContext, ni: NodeInfo) -> dict[str, Any]:
    """The volume plugins: each claim of the pod (bound volume, its node affinity and zones
    against the node's labels), the CSI attach limits of the node, the pod's volumes."""
    labels = ni.node.labels if ni.node is not None else {}
    claims = [_claim(ctx, v.claim_name, labels) for v in ctx.pod.volumes if (v.is_pvc or v.is_ephemeral)]
    out: dict[str, Any] = {"claims": claims, "volumes": [v.name for v in ctx.pod.volumes]}
    if ctx.storage is not None and ni.node is not None:
        limits = volume_limits(ctx.storage.csi_node(ni.node.name))
        if limits:
            out["attachLimits"] = limits
    return out


def devices(ctx: EvidenceContext, ni: NodeInfo) -> dict[str, Any]:
    """DynamicResources: each resource claim of the pod with its device requests and what is
    allocated to it, and the devices the node's ResourceSlices publish per driver."""
    spec_claims = [c for c in (ctx.pod.raw.get("spec") or {}).get("resourceClaims") or [] if isinstance(c, dict)]
    generated = {s.get("name"): s.get("resourceClaimName")
                 for s in (ctx.pod.raw.get("status") or {}).get("resourceClaimStatuses") or [] if isinstance(s, dict)}
    claims = []
    for c in spec_claims:
        name = c.get("resourceClaimName") or generated.get(c.get("name"))
        doc: dict[str, Any] = {"name": c.get("name"), "claim": name}
        claim = ctx.dra.resource_claim(ctx.pod.namespace, name) if ctx.dra is not None and name else None
        if claim is not None:
            doc["requests"] = ((claim.raw.get("spec") or {}).get("devices") or {}).get("requests") or []
            doc["allocated"] = [f"{d}/{p}/{dev}" for d, p, dev in claim.allocated_devices]
        claims.append(doc)
    out: dict[str, Any] = {"resourceClaims": claims}
    if ctx.dra is not None:
        ext = _extended_resources(ctx, ni)
        if ext:
            out["extendedResources"] = ext
        per_driver: dict[str, int] = {}
        for sl in ctx.dra.resource_slices():
            if sl.node_name == ni.name:
                per_driver[sl.driver] = per_driver.get(sl.driver, 0) + len(sl.devices)
        out["nodeDevices"] = per_driver
    return out


def _extended_resources(ctx: EvidenceContext, ni: NodeInfo) -> dict[str, Any]:
    """The pod's extended resources a DeviceClass maps (DRAExtendedResource): the class, the
    amount asked, and the node's allocatable of it (0: DRA must provide it there)."""
    resolver = resolver_of(ctx.dra)
    return {n: {"class": c.name, "asks": q, "allocatable": ni.allocatable.get(n, 0)}
            for n, q in sorted(ctx.pod.requests.items())
            if q and is_dra_extended_resource_name(n) and (c := resolver.device_class(n)) is not None}


EVIDENCE: Mapping[str, Callable[[EvidenceContext, NodeInfo], dict[str, Any]]] = {
    names.NODE_RESOURCES_FIT: resources, names.TAINT_TOLERATION: taints,
    names.NODE_AFFINITY: node_affinity, names.NODE_UNSCHEDULABLE: unschedulable,
    names.NODE_NAME: node_name, names.NODE_PORTS: ports, names.POD_TOPOLOGY_SPREAD: spread,
    names.INTER_POD_AFFINITY: affinity, names.VOLUME_BINDING: volumes, names.VOLUME_ZONE: volumes,
    names.VOLUME_RESTRICTIONS: volumes, names.NODE_VOLUME_LIMITS: volumes,
    names.DYNAMIC_RESOURCES: devices,
}


def evidence(plugin: str, ctx: EvidenceContext, ni: NodeInfo) -> dict[str, Any]:
    """The evidence of ``plugin`` rejecting ``ni`` (empty for plugins without a reader; a
    reader that fails gives its error, never a traceback to the user)."""
    fn = EVIDENCE.get(plugin)
    if fn is None:
        return {}
    try:
        return fn(ctx, ni)
    except Exception as exc:  # noqa: BLE001 - a bug here must not hide the blockers themselves
        log.warning("evidence of %s on %s failed: %s: %s", plugin, ni.name, type(exc).__name__, exc)
        return {"error": f"{type(exc).__name__}: {exc}"}
