"""Fixes that change the cluster around the pending pod: remove a taint from a node, add one
node shaped like an existing node group, move named pods off a node, scale a workload
down. Each is checked by the scheduler on the cache with the change applied (and undone):
for ``move-pods`` the moved pods are scheduled again after the pod lands, and every one
must land too; ``scale-down`` deletes the pods upstream's ReplicaSet controller deletes
first (``getPodsToDelete``: pods on the nodes holding most of the workload's pods, then the
newest), a StatefulSet's highest ordinals, never the pending pod's own workload (its pending
pod would go first).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.api.objects import Node, Pod
from kubesched.api.resources import CPU, MEMORY, PODS
from kubesched.api.workloads import controller_of
from kubesched.explanation.blockers import Blockers
from kubesched.explanation.fixbase import Candidate, Fix, land, landed
from kubesched.explanation.whatif import WhatIf, bound, unbound
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names

PER_KIND = 3
PRESELECT = 20  # nodes looked at for move-pods: those lacking least for the pod
HOSTNAME = "kubernetes.io/hostname"
MIRROR = "kubernetes.io/config.mirror"
MOVABLE_BLOCKERS = {names.NODE_RESOURCES_FIT, names.NODE_PORTS}
SCALE_BLOCKERS = {names.NODE_RESOURCES_FIT, names.NODE_PORTS, names.INTER_POD_AFFINITY, names.POD_TOPOLOGY_SPREAD}


def _node_with(node: Node, raw: dict[str, Any]) -> Node | None:
    try:
        return Node.from_dict(raw)
    except DecodeError:
        return None


def remove_taint(world: WhatIf, pod: Pod, blockers: Blockers) -> list[Candidate]:
    infos = {ni.name: ni for ni in world.node_infos()}
    out = []
    for n in sorted(blockers.only(names.TAINT_TOLERATION))[:PER_KIND]:
        node = infos[n].node
        ev = next(b.evidence for b in blockers.nodes[n] if b.plugin == names.TAINT_TOLERATION)
        drop = {(t["key"], t["value"], t["effect"]) for t in ev.get("untoleratedTaints", [])}
        if node is None or not drop:
            continue
        taints = [t for t in (node.raw.get("spec") or {}).get("taints") or []
                  if (t.get("key"), t.get("value", "") or "", t.get("effect")) not in drop]
        patch = ([{"op": "replace", "path": "/spec/taints", "value": taints}] if taints
                 else [{"op": "remove", "path": "/spec/taints"}])
        raw = copy.deepcopy(node.raw)
        raw["spec"]["taints"] = taints
        text = ", ".join(f"{k}={v}:{e}" if v else f"{k}:{e}" for k, v, e in sorted(drop))
        fix = Fix("remove-taint", f"node/{n}", patch,
                  f"{n} is rejected only for its taint {text}; without it the scheduler places the pod on {{node}}",
                  fields=len(drop), command=f"kubectl patch node {n} --type=json -p '{json.dumps(patch)}'")
        out.append(Candidate(fix, _node_check(fix, pod, node, raw), group="remove-taint"))
    return out


def _node_check(fix: Fix, pod: Pod, node: Node, raw: dict[str, Any], add: bool = False) -> Any:
    def check(world: WhatIf) -> Fix | None:
        new = _node_with(node, raw)
        if new is None:
            return None
        with world.changed(add_nodes=[new] if add else (), set_nodes=() if add else [new]):
            return landed(fix, land(world, pod), fix.why)
    return check


def _groups(infos: Sequence[NodeInfo]) -> list[tuple[Node, int]]:
    """Node groups: nodes alike but for their name (labels other than per-node ones, taints,
    allocatable), smallest allocatable first, with the number of nodes in each group."""
    groups: dict[str, tuple[Node, int]] = {}
    for ni in infos:
        node = ni.node
        if node is None or node.unschedulable:
            continue
        labels = {k: v for k, v in node.labels.items() if k != HOSTNAME and v != node.name}
        key = json.dumps([labels, [(t.key, t.value, t.effect) for t in node.taints],
                          sorted(node.allocatable.items())], sort_keys=True)
        prev = groups.get(key)
        groups[key] = (prev[0] if prev else node, (prev[1] if prev else 0) + 1)
    return sorted(groups.values(), key=lambda g: (g[0].allocatable.get(CPU, 0), g[0].allocatable.get(MEMORY, 0),
                                                  sorted(g[0].allocatable.items()), g[0].name))


def add_node(world: WhatIf, pod: Pod, blockers: Blockers) -> list[Candidate]:
    """One node like the smallest node group that can hold the pod: its template node's
    static blockers (taints, selector, unschedulable, missing declared features) must not apply."""
    infos = world.node_infos()
    taken = {ni.name for ni in infos}
    static = {names.TAINT_TOLERATION, names.NODE_AFFINITY, names.NODE_UNSCHEDULABLE, names.NODE_NAME,
              names.NODE_DECLARED_FEATURES}
    out = []
    for template, size in _groups(infos):
        if any(b.plugin in static for b in blockers.nodes.get(template.name, ())):
            continue
        if any(q > template.allocatable.get(r, 0) for r, q in pod.requests.items() if r != PODS):
            continue
        name, k = f"{template.name}-new-1", 1
        while name in taken:
            k += 1
            name = f"{template.name}-new-{k}"
        raw = _node_like(template, name)
        shape = {r: v for r, v in (template.raw.get("status") or {}).get("allocatable", {}).items()}
        fix = Fix("add-node", "cluster", raw, f"one more node like {template.name} (a group of {size}) gives the "
                  "pod room; the scheduler places it on {node}", patch_type="create", adds=1,
                  command=_describe(template, shape), extra={"nodeGroup": template.name, "shape": shape})
        out.append(Candidate(fix, _node_check(fix, pod, template, raw, add=True), group="add-node"))
        if len(out) >= PER_KIND:
            break
    return out


def _describe(template: Node, shape: dict[str, Any]) -> str:
    labels = ", ".join(f"{k}={v}" for k, v in sorted(template.labels.items())
                       if k != HOSTNAME and v != template.name)
    taints = ", ".join(t.to_string() for t in template.taints)
    return (f"add a node like {template.name}: " + ", ".join(f"{r} {v}" for r, v in sorted(shape.items()))
            + (f"; labels {labels}" if labels else "") + (f"; taints {taints}" if taints else ""))


def _node_like(template: Node, name: str) -> dict[str, Any]:
    raw = copy.deepcopy(template.raw)
    meta = raw.setdefault("metadata", {})
    for k in ("uid", "resourceVersion", "creationTimestamp", "managedFields"):
        meta.pop(k, None)
    meta["name"] = name
    meta["labels"] = {k: (name if v == template.name else v) for k, v in (meta.get("labels") or {}).items()}
    meta["labels"][HOSTNAME] = name
    (raw.get("spec") or {}).pop("unschedulable", None)
    (raw.get("spec") or {}).pop("providerID", None)
    status = raw.get("status") or {}
    status.pop("images", None)
    return raw


def _movable(world: WhatIf, pod: Pod, p: Pod) -> bool:
    """A pod that may be moved for ``pod``: not above its priority (its replacement would be
    scheduled first and take the room back), not a DaemonSet's or static pod, no PDB at 0."""
    if p.priority > pod.priority or p.owner_kind == "DaemonSet" or MIRROR in p.annotations:
        return False
    for pdb in world.objects.pdbs():
        if pdb.namespace == p.namespace and pdb.selector.matches(p.labels) and pdb.disruptions_allowed == 0:
            return False
    return True


def move_pods(world: WhatIf, pod: Pod, blockers: Blockers) -> list[Candidate]:
    """Free room on a node that only resources or ports keep out by moving the fewest pods
    (largest first), which the scheduler must place elsewhere."""
    infos = {ni.name: ni for ni in world.node_infos()}
    plans: list[tuple[int, str, list[Pod]]] = []
    movable = [n for n, bs in blockers.nodes.items() if {b.plugin for b in bs} <= MOVABLE_BLOCKERS]
    for n in sorted(movable, key=lambda n: (_shortfall(pod, infos[n]), n))[:PRESELECT]:
        chosen = _pods_to_move(world, pod, infos[n], {b.plugin for b in blockers.nodes[n]})
        if chosen:
            plans.append((len(chosen), n, chosen))
    out = []
    for _, n, chosen in sorted(plans, key=lambda t: (t[0], t[1]))[:PER_KIND]:
        keys = [p.key for p in chosen]
        fix = Fix("move-pods", f"node/{n}", [f"pod/{k}" for k in keys],
                  f"moving {', '.join(keys)} off {n} frees what the pod needs there; the scheduler places the pod "
                  "on {node} and the moved pods elsewhere", patch_type="delete", disturbs=tuple(keys),
                  fields=len(keys), command="; ".join(f"kubectl delete pod -n {p.namespace} {p.name}" for p in chosen))
        out.append(Candidate(fix, _move_check(fix, pod, chosen), group="move-pods"))
    return out


def _shortfall(pod: Pod, ni: NodeInfo) -> float:
    """How much the node lacks for the pod, as a share of the pod's requests (0: only ports)."""
    return sum(max(0, q - (ni.allocatable.get(r, 0) - ni.requested.get(r, 0))) / q
               for r, q in pod.requests.items() if r != PODS and q > 0)


def _pods_to_move(world: WhatIf, pod: Pod, ni: NodeInfo, plugins: set[str]) -> list[Pod]:
    movable = [p for p in ni.pods if _movable(world, pod, p)]
    if names.NODE_PORTS in plugins:
        wanted = {(hp.host_port, hp.protocol) for hp in pod.host_ports}
        movable = [p for p in movable if any((hp.host_port, hp.protocol) in wanted for hp in p.host_ports)] or movable
    need = {r: q - (ni.allocatable.get(r, 0) - ni.requested.get(r, 0)) for r, q in pod.requests.items()
            if r != PODS and q > ni.allocatable.get(r, 0) - ni.requested.get(r, 0)}
    if len(ni.pods) + 1 > ni.allocatable.get(PODS, 0):
        need[PODS] = 1
    port_holders = [p for p in movable if names.NODE_PORTS in plugins and p.host_ports]
    chosen: list[Pod] = list(port_holders)
    for p in chosen:
        _take(need, p)
    main = max(need, key=lambda r: need[r] / max(pod.requests.get(r, 1), 1), default=None)
    for p in sorted(movable, key=lambda p: (p.priority, -(p.requests.get(main, 0) if main else 0), p.key)):
        if all(v <= 0 for v in need.values()):
            break
        if p in chosen or (main is not None and main != PODS and p.requests.get(main, 0) <= 0):
            continue
        chosen.append(p)
        _take(need, p)
    return chosen if all(v <= 0 for v in need.values()) else []


def _take(need: dict[str, int], p: Pod) -> None:
    for r in need:
        need[r] -= 1 if r == PODS else p.requests.get(r, 0)


def _move_check(fix: Fix, pod: Pod, moved: list[Pod]) -> Any:
    def check(world: WhatIf) -> Fix | None:
        with ExitStack() as stack:
            stack.enter_context(world.changed(remove_pods=moved))
            landing = land(world, pod)
            if landing.node is None:
                return None
            stack.enter_context(world.changed(add_pods=[bound(pod, landing.node)]))
            for p in moved:
                again = unbound(p)
                where = world.try_pod(again)
                if where.node is None:
                    return None
                fix.moves[p.key] = where.node
                stack.enter_context(world.changed(add_pods=[bound(again, where.node)]))
            return landed(fix, landing, fix.why)
    return check


def _workload(world: WhatIf, p: Pod) -> tuple[str, str, dict[str, Any] | None] | None:
    """(kind, name, the object) of the workload owning ``p``: a ReplicaSet's Deployment
    when the snapshot holds it, else the controller itself (None: no controller)."""
    ref = controller_of(p.raw)
    if ref is None or ref.kind not in ("ReplicaSet", "StatefulSet", "ReplicationController", "Deployment"):
        return None
    lister = world.objects.workloads()
    obj = lister.get(ref.kind, p.namespace, ref.name)
    if ref.kind == "ReplicaSet" and obj is not None:
        up = controller_of(obj.raw)
        if up is not None and up.kind == "Deployment":
            dep = lister.get("Deployment", p.namespace, up.name)
            return "Deployment", up.name, dep.raw if dep is not None else None
    return ref.kind, ref.name, obj.raw if obj is not None else None


def scale_down(world: WhatIf, pod: Pod, blockers: Blockers) -> list[Candidate]:
    """Scale down a workload with pods on nodes where only resources, ports, pod
    (anti-)affinity or spread block, by the fewest replicas (1 to 3) that lets the pod land."""
    own = _workload(world, pod)
    infos = {ni.name: ni for ni in world.node_infos()}
    helpful: set[tuple[str, str]] = set()
    for n, bs in blockers.nodes.items():
        if {b.plugin for b in bs} <= SCALE_BLOCKERS:
            for p in infos[n].pods:
                ref = controller_of(p.raw)
                if ref is not None:
                    helpful.add((p.namespace, ref.name))
    members: dict[tuple[str, str], list[Pod]] = {}
    for ni in infos.values() if helpful else ():
        for p in ni.pods:
            ref = controller_of(p.raw)
            if ref is None or (p.namespace, ref.name) not in helpful:
                continue
            w = _workload(world, p)
            if w is None or (own is not None and w[:2] == own[:2] and p.namespace == pod.namespace):
                continue
            members.setdefault((p.namespace, f"{w[0]}/{w[1]}"), []).append(p)
    out = []
    for ns, kindname in sorted(members, key=lambda k: (len(members[k]), k))[:PER_KIND]:
        pods = members[(ns, kindname)]
        kind, name = kindname.split("/", 1)
        first = pods[0]
        w = _workload(world, first)
        replicas = _replicas(w[2] if w else None, len(pods))
        fix = Fix("scale-down", f"workload/{kind}/{ns}/{name}", {"spec": {"replicas": replicas - 1}}, "",
                  patch_type="merge", fields=1, least_disturbed=1)
        order = _ordinal_order(pods) if kind == "StatefulSet" else _deletion_order(pods)
        out.append(Candidate(fix, _scale_check(fix, pod, order, replicas, kind, name, ns)))
    return out


def _ordinal_order(pods: list[Pod]) -> list[Pod]:
    """A StatefulSet scales down from its highest ordinal (``<name>-<ordinal>``)."""
    def ordinal(p: Pod) -> int:
        tail = p.name.rsplit("-", 1)[-1]
        return int(tail) if tail.isdigit() else -1
    return sorted(pods, key=lambda p: (-ordinal(p), p.key))


def _scale_check(fix: Fix, pod: Pod, order: list[Pod], replicas: int, kind: str, name: str, ns: str) -> Any:
    """The fewest replicas removed (1 to 3) after which the pod lands."""
    def check(world: WhatIf) -> Fix | None:
        for k in range(1, min(3, replicas) + 1):
            victims = order[:k]
            with world.changed(remove_pods=victims):
                landing = land(world, pod)
            if landing.node is None:
                continue
            fix.patch = {"spec": {"replicas": replicas - k}}
            fix.disturbs = tuple(p.key for p in victims)
            fix.command = f"kubectl scale {kind.lower()} {name} -n {ns} --replicas={replicas - k}"
            return landed(fix, landing, f"with {replicas - k} replica(s) instead of {replicas}, the controller "
                          f"deletes {', '.join(fix.disturbs)}; the scheduler then places the pod on {{node}}")
        return None
    return check


def _replicas(raw: dict[str, Any] | None, count: int) -> int:
    spec = (raw or {}).get("spec") or {}
    r = spec.get("replicas")
    return r if isinstance(r, int) and r > 0 else count


def _deletion_order(pods: list[Pod]) -> list[Pod]:
    """Upstream ``getPodsToDelete`` on what a snapshot shows (all bound and running): pods
    on nodes holding more of the workload's pods first, then the newest."""
    per_node: dict[str, int] = {}
    for p in pods:
        per_node[p.node_name] = per_node.get(p.node_name, 0) + 1
    return sorted(pods, key=lambda p: (-per_node[p.node_name], -p.seq, p.key))


def candidates(world: WhatIf, pod: Pod, blockers: Blockers) -> list[Candidate]:
    return [*remove_taint(world, pod, blockers), *move_pods(world, pod, blockers),
            *scale_down(world, pod, blockers), *add_node(world, pod, blockers)]
