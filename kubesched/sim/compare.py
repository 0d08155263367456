"""``kubesched compare``: the same pending pods scheduled under several scheduler
configurations, each on a fresh copy of the cluster, and what each configuration leaves.

Why: "if I switch to MostAllocated, how many nodes do I free?" needs the same cluster, the
same pods, the same seed, and numbers side by side. Each configuration gets its own
:class:`~kubesched.sim.driver.Simulation` (the manifests are loaded again for each: nothing
one run changes can leak into the next) run until its queue settles, as ``simulate`` runs.

What is measured, on the cluster each run leaves (definitions, as the README states them):

* **summary**: simulate's counts (scheduled, unschedulable, gated, preempted, ...), and the
  unschedulable pods' messages ("0/N nodes are available: ...") with how many pods got each.
* **nodes used**: nodes running at least one pod not owned by a DaemonSet.
* **utilisation** per resource (cpu, memory, and every extended resource some node offers):
  per node, requested / allocatable (nodes that offer none of it are left out); with min,
  mean, p50, p90 (nearest rank) and max over the nodes.
* **fragmentation**: the *reference pod* is the median pending pod, resource by resource
  (the lower median, over the pods pending at the start, of each one's cpu and memory
  requests as NodeResourcesFit counts them). A schedulable node (not cordoned) *cannot fit*
  it when its free cpu or free memory is below the reference pod's, or it has no pod slot
  left. For cpu and memory: ``stranded`` = the free amount on nodes that cannot fit it,
  ``free`` = the free amount on all schedulable nodes, ``ratio`` = stranded / free (0 when
  nothing is free). Resources only: taints and affinity are not considered. Undefined
  (null) when no pod was pending.
* **preemptions**: pods that preempted (nominated a node after evicting victims) and victims.
* **spread** per workload (pods with the same controller owner, else the same
  ``app.kubernetes.io/name`` or ``app`` label, in one namespace; two pods or more): pods per
  node and per zone (``topology.kubernetes.io/zone``), distinct nodes and zones, most on one node.
* **diff**: for every pod pending at the start, where it ended under each configuration (a
  node name, or its status: Unschedulable, Gated, Preempted); the pods that differ.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubesched.api.errors import KubeschedError
from kubesched.api.objects import Pod
from kubesched.config import load_config
from kubesched.framework.errors import ProfileError
from kubesched.framework.features import Features
from kubesched.plugins.registry import in_tree_registry
from kubesched.explanation.attempt import Attempt
from kubesched.sim.loading import LoadOptions
from kubesched.sim.loading import load as load_manifests
from kubesched.sim.driver import Simulation

ZONE = "topology.kubernetes.io/zone"
APP_LABELS = ("app.kubernetes.io/name", "app")
DEFAULT = "default"  # --config default: the built-in defaults


@dataclass(frozen=True, slots=True)
class Candidate:
    name: str
    config: str | None  # a KubeSchedulerConfiguration file, None for the defaults


def candidates(configs: list[str]) -> list[Candidate]:
    """Name each configuration after its file (``default`` for the defaults), uniquely."""
    out: list[Candidate] = []
    seen: Counter[str] = Counter()
    for c in configs:
        is_default = c == DEFAULT and not Path(c).exists()
        base = DEFAULT if is_default else Path(c).stem
        seen[base] += 1
        out.append(Candidate(base if seen[base] == 1 else f"{base}-{seen[base]}", None if is_default else c))
    return out


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of an ascending list (p in 0..100)."""
    if not sorted_values:
        return 0.0
    rank = max(1, -(-len(sorted_values) * p // 100))  # ceil(n*p/100), at least 1
    return sorted_values[int(rank) - 1]


def _stats(per_node: dict[str, float]) -> dict[str, Any]:
    vals = sorted(per_node.values())
    if not vals:
        return {"min": None, "mean": None, "p50": None, "p90": None, "max": None, "perNode": {}}
    return {"min": vals[0], "mean": sum(vals) / len(vals), "p50": percentile(vals, 50),
            "p90": percentile(vals, 90), "max": vals[-1], "perNode": dict(sorted(per_node.items()))}


def workload_of(pod: Pod) -> str | None:
    """``namespace/Kind/name`` of the pod's controller, else ``namespace/label=value``."""
    for ref in (pod.raw.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller"):
            return f"{pod.namespace}/{ref.get('kind')}/{ref.get('name')}"
    for label in APP_LABELS:
        if label in pod.labels:
            return f"{pod.namespace}/{label}={pod.labels[label]}"
    return None


def _outcome_place(sim: Simulation, uid: str) -> str:
    out = sim.outcomes[uid]
    return (out.node or "") if out.status == "Scheduled" else out.status


def measure(sim: Simulation, pending: list[Pod]) -> dict[str, Any]:
    """The numbers of one finished run (see the module docstring)."""
    infos = sim.cache.nodes
    nodes = {name: ni.node for name, ni in infos.items() if ni.node is not None}
    used = sorted(name for name, ni in infos.items() if any(p.owner_kind != "DaemonSet" for p in ni.pods))
    resources = ["cpu", "memory"] + sorted({r for n in nodes.values() for r, v in n.allocatable.items()
                                            if v > 0 and r not in ("cpu", "memory", "pods", "ephemeral-storage")})
    utilisation: dict[str, Any] = {}
    for r in resources:
        per_node = {name: infos[name].requested.get(r, 0) / node.allocatable[r]
                    for name, node in nodes.items() if node.allocatable.get(r, 0) > 0}
        utilisation[r] = _stats(per_node)
    reasons = Counter(o.message or "" for o in sim.outcomes.values() if o.status == "Unschedulable")
    preemptors = sum(1 for o in sim.outcomes.values() if any(a.nominated_node for a in o.attempts))
    victims = sum(1 for o in sim.outcomes.values() if o.status == "Preempted")
    return {"summary": sim.summary(), "unschedulableReasons": dict(reasons.most_common()),
            "nodes": len(nodes), "nodesUsed": len(used), "usedNodes": used,
            "utilisation": utilisation, "fragmentation": fragmentation(sim, pending),
            "preemptions": {"preemptors": preemptors, "victims": victims}, "spread": spread(sim)}


def fragmentation(sim: Simulation, pending: list[Pod]) -> dict[str, Any] | None:
    if not pending:
        return None
    ref = {r: statistics.median_low([p.requests.get(r, 0) for p in pending]) for r in ("cpu", "memory")}
    out: dict[str, Any] = {"referencePod": ref}
    free = {r: 0 for r in ref}
    stranded = {r: 0 for r in ref}
    for ni in sim.cache.nodes.values():
        node = ni.node
        if node is None or node.unschedulable:
            continue
        avail = {r: node.allocatable.get(r, 0) - ni.requested.get(r, 0) for r in ref}
        fits = all(avail[r] >= ref[r] for r in ref) and len(ni.pods) < node.allocatable.get("pods", 0)
        for r in ref:
            free[r] += max(avail[r], 0)
            if not fits:
                stranded[r] += max(avail[r], 0)
    for r in ref:
        out[r] = {"free": free[r], "stranded": stranded[r], "ratio": stranded[r] / free[r] if free[r] else 0.0}
    return out


def spread(sim: Simulation) -> dict[str, Any]:
    zone_of = {name: ni.node.labels.get(ZONE, "") for name, ni in sim.cache.nodes.items() if ni.node is not None}
    per_node: dict[str, Counter[str]] = defaultdict(Counter)
    for pod in sim.cluster.pods.values():
        w = workload_of(pod)
        if w is not None and pod.node_name:
            per_node[w][pod.node_name] += 1
    out: dict[str, Any] = {}
    for w in sorted(per_node):
        nodes = per_node[w]
        if sum(nodes.values()) < 2:
            continue
        zones: Counter[str] = Counter()
        for n, c in nodes.items():
            zones[zone_of.get(n, "")] += c
        out[w] = {"pods": sum(nodes.values()), "nodes": len(nodes), "zones": len([z for z in zones if z]),
                  "maxPerNode": max(nodes.values()), "perNode": dict(sorted(nodes.items())),
                  "perZone": dict(sorted(zones.items()))}
    return out


def compare(files: list[str], configs: list[Candidate], *, seed: int = 0, tie_break: str = "random",
            on_attempt: Callable[[int, Attempt], None] | None = None,
            load: LoadOptions = LoadOptions(), kubernetes_version: str | None = None,
            feature_gates: str = "") -> dict[str, Any]:
    """Run every configuration on a fresh copy of ``files``; the JSON document of the comparison.
    ``on_attempt(i, attempt)``: called after each attempt of configuration ``i``.
    ``kubernetes_version``/``feature_gates``: the release to decide as (default: the one the
    manifests recorded, else the default release) and gate overrides."""
    registry = in_tree_registry()
    runs: list[dict[str, Any]] = []
    places: list[dict[str, str]] = []
    order: list[str] = []  # every pod pending under some configuration, first seen first
    places_seen: set[str] = set()
    fts: Features | None = None
    for i, cand in enumerate(configs):
        config = load_config(cand.config, registry)
        manifest = load_manifests(files, load)
        fts = Features.for_version(kubernetes_version or manifest.kubernetes_version, feature_gates or None)
        try:
            sim = Simulation(manifest, config, seed=seed, tie_break=tie_break, features=fts)
        except ProfileError as exc:
            raise KubeschedError(f"{cand.config}: {exc}") from exc
        pending = [o.pod for o in sim.results()]
        if on_attempt is not None:
            sim.on_attempt = lambda att, i=i: on_attempt(i, att)
        sim.run()
        runs.append({"name": cand.name, "config": cand.config, **measure(sim, pending)})
        places.append({p.key: _outcome_place(sim, p.uid) for p in pending})
        order += [p.key for p in pending if p.key not in places_seen]
        places_seen.update(p.key for p in pending)
    different = []
    for key in order:
        # a pod no profile of a configuration schedules (its schedulerName) is Ignored there
        row = {c.name: pl.get(key, "Ignored") for c, pl in zip(configs, places)}
        if len(set(row.values())) > 1:
            different.append({"pod": key, "placements": row})
    return {"seed": seed, "tieBreak": tie_break, "kubernetesVersion": fts.version if fts else None,
            "cluster": files, "pendingPods": len(order),
            "configurations": runs, "diff": {"same": len(order) - len(different), "different": different}}
