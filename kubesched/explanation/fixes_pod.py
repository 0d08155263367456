"""Fixes that change the pending pod itself: tolerate a taint, relax its nodeSelector, a
required (anti-)affinity term or a spread constraint, request less, or a priority at which
preemption succeeds. Each candidate is read off the pod's blockers and checked by a dry
cycle of the patched pod (:func:`kubesched.explanation.whatif.patched_pod`).

For a pod owned by a workload, the same change belongs in the workload's pod template
(``spec.template.spec``); a Pod's priority is set when it is created, so ``raise-priority``
means recreating the pod (or its template) with that class.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kubesched.api.objects import Pod
from kubesched.api.resources import PODS, to_resource
from kubesched.explanation.blockers import Blockers
from kubesched.explanation.evidence import fmt_amount
from kubesched.explanation.fixbase import Candidate, Fix, land, landed, pod_command, spec_path
from kubesched.explanation.whatif import Patch, WhatIf, patched_pod
from kubesched.plugins import names

PER_KIND = 3  # candidates of one kind, best first
SPEC_KEYS = ("spec",)


def _pod_fix(pod: Pod, kind: str, ops: Patch, why: str, fields: int = 1, preempt: bool = False) -> Candidate:
    fix = Fix(kind, "pod", ops, why, fields=fields, command=pod_command(pod, ops))

    def check(world: WhatIf) -> Fix | None:
        new = patched_pod(pod, ops)
        if new is None:
            return None
        if not preempt:
            return landed(fix, land(world, new), why)
        first = world.try_pod(new, preempt=True)
        if first.node is not None:
            return landed(fix, first, why + " (no preemption needed)")
        if first.nominated is None:
            return None
        with world.changed(remove_pods=first.victims):
            again = land(world, new)
        if again.node is None:
            return None
        fix.disturbs = tuple(sorted(v.key for v in first.victims))
        return landed(fix, again, why + f"; preemption evicts {', '.join(fix.disturbs)} from {first.nominated}")

    return Candidate(fix, check)


def _evidence(blockers: Blockers, plugin: str) -> list[tuple[str, dict[str, Any]]]:
    return [(n, b.evidence) for n, bs in blockers.nodes.items() for b in bs if b.plugin == plugin]


def _spec(pod: Pod) -> dict[str, Any]:
    spec = pod.raw.get("spec")
    return spec if isinstance(spec, dict) else {}


def tolerate_taint(pod: Pod, blockers: Blockers) -> list[Candidate]:
    only = set(blockers.only(names.TAINT_TOLERATION))
    sets: dict[tuple[tuple[str, str, str], ...], list[str]] = {}
    for n, ev in _evidence(blockers, names.TAINT_TOLERATION):
        key = tuple(sorted((t["key"], t["value"], t["effect"]) for t in ev.get("untoleratedTaints", [])))
        if key:
            sets.setdefault(key, []).append(n)
    order = sorted(sets, key=lambda k: (-sum(n in only for n in sets[k]), len(k), k))
    out = []
    for key in order[:PER_KIND]:
        tols = [{"key": k, "operator": "Equal", "value": v, "effect": e} if v else
                {"key": k, "operator": "Exists", "effect": e} for k, v, e in key]
        # "add" of the whole list applies whether or not the stored pod has tolerations yet
        ops: Patch = [{"op": "add", "path": "/spec/tolerations", "value": [*(_spec(pod).get("tolerations") or []), *tols]}]
        text = ", ".join(f"{k}={v}:{e}" if v else f"{k}:{e}" for k, v, e in key)
        nodes = sets[key]
        why = (f"tolerating {text} lifts the taint blocker on {len(nodes)} node(s) (e.g. {nodes[0]}); "
               "the scheduler then places the pod on {node}")
        out.append(_pod_fix(pod, "tolerate-taint", ops, why, fields=len(key)))
    return out


def relax_node_selector(pod: Pod, blockers: Blockers) -> list[Candidate]:
    ev = _evidence(blockers, names.NODE_AFFINITY)
    if not pod.node_selector or not ev:
        return []
    only = set(blockers.only(names.NODE_AFFINITY))
    out = []
    for key, wanted in sorted(pod.node_selector.items()):
        values: Counter[str] = Counter()
        for n, e in ev:
            missed = e.get("nodeSelector") or []
            if n in only and len(missed) == 1 and missed[0]["key"] == key and missed[0]["node"] is not None:
                values[missed[0]["node"]] += 1
        path = spec_path("spec", "nodeSelector", key)
        for value, count in values.most_common(1):
            why = (f"nodeSelector {key}={value} instead of {key}={wanted} matches {count} node(s) that only "
                   "the selector kept out; the scheduler then places the pod on {node}")
            out.append(_pod_fix(pod, "relax-node-selector", [{"op": "replace", "path": path, "value": value}], why))
        why = f"without nodeSelector {key}={wanted} the pod may go to nodes lacking that label; " \
              "the scheduler then places it on {node}"
        out.append(_pod_fix(pod, "relax-node-selector", [{"op": "remove", "path": path}], why))
    return out[:2 * PER_KIND]


def _to_preferred(pod: Pod, section: str, term: Any) -> Patch | None:
    aff = _spec(pod).get("affinity") or {}
    required = (aff.get(section) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
    if term not in required:
        return None
    i = required.index(term)
    base = ("spec", "affinity", section)
    preferred = (aff.get(section) or {}).get("preferredDuringSchedulingIgnoredDuringExecution")
    weighted = {"weight": 100, "podAffinityTerm": term}
    add = {"op": "add", "path": spec_path(*base, "preferredDuringSchedulingIgnoredDuringExecution"),
           "value": [*(preferred or []), weighted]}
    return [{"op": "remove", "path": spec_path(*base, "requiredDuringSchedulingIgnoredDuringExecution", i)}, add]


def _drop_node_expressions(pod: Pod) -> list[Candidate]:
    """One matchExpression dropped from a required node selector term that has others (a
    term without expressions would match no node)."""
    required = (((_spec(pod).get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    out = []
    for t, term in enumerate(required.get("nodeSelectorTerms") or []):
        exprs = (term or {}).get("matchExpressions") or []
        if len(exprs) < 2:
            continue
        for j, e in enumerate(exprs):
            path = spec_path("spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                             "nodeSelectorTerms", t, "matchExpressions", j)
            what = f"{e.get('key')} {e.get('operator')} {e.get('values') or ''}".strip()
            why = (f"without the expression {what} in node selector term {t}, the required node affinity admits "
                   "more nodes; the scheduler then places the pod on {node}")
            out.append(_pod_fix(pod, "relax-affinity", [{"op": "remove", "path": path}], why))
    return out[:PER_KIND]


def relax_affinity(pod: Pod, blockers: Blockers) -> list[Candidate]:
    out = []
    if any("requiredTerms" in e for _, e in _evidence(blockers, names.NODE_AFFINITY)):
        out.extend(_drop_node_expressions(pod))
        ops: Patch = [{"op": "remove", "path": "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution"}]
        why = "without the required node affinity the pod may go to nodes its terms exclude; " \
              "the scheduler then places it on {node}"
        out.append(_pod_fix(pod, "relax-affinity", ops, why, fields=2))  # every term goes: ranked after one expression
    terms: dict[str, tuple[str, Any, int]] = {}
    for _, e in _evidence(blockers, names.INTER_POD_AFFINITY):
        for key, section in (("affinityTerms", "podAffinity"), ("antiAffinityTerms", "podAntiAffinity")):
            for t in e.get(key) or []:
                tag = repr((section, t.get("term")))
                prev = terms.get(tag)
                terms[tag] = (section, t.get("term"), (prev[2] if prev else 0) + 1)
    for section, term, count in sorted(terms.values(), key=lambda x: -x[2])[:PER_KIND]:
        ops2 = _to_preferred(pod, section, term)
        if ops2 is None:
            continue
        word = "affinity" if section == "podAffinity" else "anti-affinity"
        why = (f"the required pod {word} term on {term.get('topologyKey')} rejects {count} node(s); made preferred "
               "(weight 100) it still steers the pod but no longer forbids; the scheduler then places it on {node}")
        out.append(_pod_fix(pod, "relax-affinity", ops2, why))
    return out


def relax_spread(pod: Pod, blockers: Blockers) -> list[Candidate]:
    hard = [k for k, c in enumerate(pod.spread_constraints) if c.when_unsatisfiable == "DoNotSchedule"]
    only = set(blockers.only(names.POD_TOPOLOGY_SPREAD))
    skews: dict[int, list[tuple[bool, int]]] = {}
    for n, e in _evidence(blockers, names.POD_TOPOLOGY_SPREAD):
        for c in e.get("constraints") or []:
            if "skew" in c and c["constraint"] < len(hard):
                skews.setdefault(hard[c["constraint"]], []).append((n in only, c["skew"]))
    out = []
    for k, found in sorted(skews.items()):
        c = pod.spread_constraints[k]
        pool = [s for alone, s in found if alone] or [s for _, s in found]
        need = min(pool)
        base = ("spec", "topologySpreadConstraints", k)
        why = (f"the constraint on {c.topology_key} allows skew {c.max_skew}; placing the pod anywhere it is rejected "
               f"makes skew {need} at least; with maxSkew {need} the scheduler places it on {{node}}")
        out.append(_pod_fix(pod, "relax-spread", [{"op": "replace", "path": spec_path(*base, "maxSkew"), "value": need}],
                            why))
        why = (f"with whenUnsatisfiable: ScheduleAnyway the constraint on {c.topology_key} only scores nodes; "
               "the scheduler then places the pod on {node}")
        out.append(_pod_fix(pod, "relax-spread", [{"op": "replace", "path": spec_path(*base, "whenUnsatisfiable"),
                                                   "value": "ScheduleAnyway"}], why))
    return out


def lower_request(world: WhatIf, pod: Pod, blockers: Blockers) -> list[Candidate]:
    """Request at most what is free on a node that only resources keep out (the
    nodes with the smallest cut first), taken from the container asking the most."""
    infos = {ni.name: ni for ni in world.node_infos()}
    cuts: list[tuple[float, str, dict[str, int]]] = []
    for n in blockers.only(names.NODE_RESOURCES_FIT):
        ni = infos[n]
        if len(ni.pods) + 1 > ni.allocatable.get(PODS, 0):
            continue
        short = {r: q - (ni.allocatable.get(r, 0) - ni.requested.get(r, 0)) for r, q in pod.requests.items()
                 if r != PODS and q > ni.allocatable.get(r, 0) - ni.requested.get(r, 0)}
        if short:
            cuts.append((max(d / pod.requests[r] for r, d in short.items()), n, short))
    out, seen = [], set()
    for _, n, short in sorted(cuts):
        ops = _cut_ops(pod, short)
        key = repr(ops)
        if ops is None or key in seen:
            continue
        seen.add(key)
        text = ", ".join(f"{r} by {fmt_amount(r, d)} (to {fmt_amount(r, pod.requests[r] - d)})" for r, d in short.items())
        why = f"requesting less {text} fits what is free on {n}; the scheduler then places the pod on {{node}}"
        cand = _pod_fix(pod, "lower-request", ops, why, fields=len(short))
        cand.group = "lower-request"  # the smallest cut that works is enough
        out.append(cand)
        if len(out) >= PER_KIND:
            break
    return out


def _cut_ops(pod: Pod, short: dict[str, int]) -> Patch | None:
    ops: Patch = []
    for r, d in sorted(short.items()):
        amounts = [to_resource(c.requests).get(r, 0) for c in pod.containers]
        i = max(range(len(amounts)), key=lambda j: amounts[j], default=None)
        if i is None or amounts[i] - d <= 0:
            return None
        ops.append({"op": "add", "path": spec_path("spec", "containers", i, "resources", "requests", r),
                    "value": fmt_amount(r, amounts[i] - d)})
    return ops


def raise_priority(world: WhatIf, pod: Pod) -> list[Candidate]:
    classes = sorted((pc for pc in world.priority_classes if pc.value > pod.priority
                      and pc.preemption_policy != "Never" and not pc.name.startswith("system-")),
                     key=lambda pc: (pc.value, pc.name))
    out = []
    for pc in classes[:PER_KIND]:
        ops: Patch = [{"op": "add", "path": "/spec/priorityClassName", "value": pc.name},
                      {"op": "add", "path": "/spec/priority", "value": pc.value}]
        if pod.preemption_policy == "Never":
            ops.append({"op": "add", "path": "/spec/preemptionPolicy", "value": "PreemptLowerPriority"})
        why = f"at priority {pc.value} (PriorityClass {pc.name}) the pod outranks what holds its place; it lands on {{node}}"
        out.append(_pod_fix(pod, "raise-priority", ops, why, fields=1, preempt=True))
    return out


def candidates(world: WhatIf, pod: Pod, blockers: Blockers) -> list[Candidate]:
    return [*tolerate_taint(pod, blockers), *relax_node_selector(pod, blockers), *relax_affinity(pod, blockers),
            *relax_spread(pod, blockers), *lower_request(world, pod, blockers), *raise_priority(world, pod)]
