"""Tables of ``explain``'s every-blocker view and of ``explain --fix``, from their JSON
documents (the same documents ``-o json`` prints and ``/debug/explain`` serves)."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

NODES_SHOWN = 30  # blocked nodes listed in the table (all of them in -o json)


def _resources(ev: dict[str, Any]) -> str:
    parts = []
    for r, d in (ev.get("resources") or {}).items():
        if r == "pods":
            parts.append(f"pods: {d['used']} of {d['allocatable']} used")
            continue
        users = ", ".join(u["pod"] for u in d.get("usedBy") or [])
        more = d.get("usedByCount", 0) - len(d.get("usedBy") or [])
        users += f" +{more}" if more > 0 else ""
        parts.append(f"{r}: asks {d['requested']}, {d['free']} free of {d['allocatable']}"
                     + (f" (used by {users})" if users else ""))
    return "; ".join(parts)


def _spread(ev: dict[str, Any]) -> str:
    parts = []
    for c in ev.get("constraints") or []:
        if c.get("nodeMissingLabel"):
            parts.append(f"node has no {c['topologyKey']} label")
            continue
        need = ", ".join(c.get("neededDomains") or []) or "none"
        parts.append(f"{c['topologyKey']}={c['domain']} has {c['matchingInDomain']} matching, min {c['globalMin']}: "
                     f"skew {c['skew']} > maxSkew {c['maxSkew']}; may go to {need}")
    return "; ".join(parts)


def _affinity(ev: dict[str, Any]) -> str:
    parts = []
    for t in ev.get("affinityTerms") or []:
        parts.append(f"affinity on {t['topologyKey']}: no matching pod in {t['domain']}")
    for t in ev.get("antiAffinityTerms") or []:
        parts.append(f"anti-affinity on {t['topologyKey']}: conflicts with {', '.join(t['matchingPods'])}")
    for e in ev.get("existingPodsAntiAffinity") or []:
        parts.append(f"{e['pod']} (on {e['node']}) has anti-affinity on {e['topologyKey']} against it")
    return "; ".join(parts)


def _node_affinity(ev: dict[str, Any]) -> str:
    parts = [f"nodeSelector {m['key']}={m['wanted']} (node: {m['node'] if m['node'] is not None else 'no label'})"
             for m in ev.get("nodeSelector") or []]
    if ev.get("requiredTerms") is not None:
        labels = ", ".join(f"{k}={v}" for k, v in (ev.get("nodeLabels") or {}).items())
        parts.append(f"required node affinity not met (node: {labels or 'no such labels'})")
    return "; ".join(parts)


def _claim_text(c: dict[str, Any]) -> str:
    if c.get("found") is False:
        return f"claim {c['claim']} not found"
    if not c.get("boundTo"):
        return f"claim {c['claim']} unbound (class {c.get('storageClass') or 'none'})"
    text = f"claim {c['claim']} -> {c['boundTo']}"
    for key, zones in (c.get("volumeZones") or {}).items():
        text += f" ({key} {', '.join(zones)}; node: {(c.get('nodeZones') or {}).get(key) or 'none'})"
    if c.get("volumeNodeAffinity"):
        text += " (volume has node affinity)"
    return text


def evidence_text(plugin: str, ev: dict[str, Any]) -> str:
    """One line of evidence for a table cell."""
    if not ev:
        return ""
    if "resources" in ev:
        return _resources(ev)
    if "untoleratedTaints" in ev:
        return "untolerated " + ", ".join(f"{t['key']}={t['value']}:{t['effect']}" if t["value"] else
                                          f"{t['key']}:{t['effect']}" for t in ev["untoleratedTaints"])
    if "constraints" in ev:
        return _spread(ev)
    if plugin == "InterPodAffinity":
        return _affinity(ev)
    if plugin == "NodeAffinity":
        return _node_affinity(ev)
    if "resourceClaims" in ev:
        claims = ", ".join(str(c.get("claim") or c.get("name")) for c in ev["resourceClaims"])
        devices = ", ".join(f"{d} {n}" for d, n in (ev.get("nodeDevices") or {}).items()) or "none"
        ext = "".join(f"; {n}: asks {e['asks']} (class {e['class']}, allocatable {e['allocatable']})"
                      for n, e in (ev.get("extendedResources") or {}).items())
        return f"claims {claims or 'none'}{ext}; node devices: {devices}"
    if "claims" in ev:
        return "; ".join(_claim_text(c) for c in ev["claims"]) or "no claims"
    if ev.get("unschedulable"):
        return "node is cordoned (spec.unschedulable)"
    if "portsInUse" in ev:
        return "; ".join(f"port {p['port']}/{p['protocol']} used by {p['usedBy']}" for p in ev["portsInUse"])
    return json.dumps(ev, sort_keys=True)


def print_blockers(con: Console, doc: dict[str, Any]) -> None:
    nodes = doc.get("nodes") or {}
    by = ", ".join(f"{p} {n}" for p, n in (doc.get("byPlugin") or {}).items())
    con.print(f"Every blocker ({len(nodes)} node(s) blocked; nodes rejected per plugin: {by}; "
              f"{doc.get('rejectionsBeyondUpstream', 0)} rejection(s) beyond upstream's first)")
    t = Table(title_justify="left")
    for col in ("NODE", "PLUGIN", "UPSTREAM", "EVIDENCE"):
        t.add_column(col, overflow="fold")
    closest = sorted(nodes.items(), key=lambda kv: len(kv[1]))  # fewest blockers first (stable: node order)
    for name, bs in closest[:NODES_SHOWN]:
        for i, b in enumerate(bs):
            t.add_row(escape(name) if i == 0 else "", b["plugin"], "beyond" if b.get("beyondUpstream") else "decides",
                      escape(evidence_text(b["plugin"], b.get("evidence") or {}) or "; ".join(b["reasons"])))
    con.print(t)
    more = max(0, len(nodes) - NODES_SHOWN) + int(doc.get("nodesOmitted") or 0)
    if more:
        con.print(f"... {more} more blocked node(s) (-o json lists them)")


def print_fixes(con: Console, doc: dict[str, Any]) -> None:
    fixes = doc.get("fixes") or []
    con.print(f"What would fix it ({len(fixes)} verified fix(es) of {doc.get('candidatesChecked', 0)} checked; "
              "smallest change first)")
    if not fixes:
        con.print("no change tried lets the scheduler place the pod")
        return
    for i, f in enumerate(fixes, 1):
        lands = f" -> the pod lands on {f['node']}" if f.get("node") else ""
        con.print(f"{i}. [bold]{f['kind']}[/] {escape(f['target'])}{escape(lands)}")
        con.print(f"   why: {escape(f['why'])}")
        if f.get("moves"):
            con.print("   moved pods land on: " + escape(", ".join(f"{p} -> {n}" for p, n in f["moves"].items())))
        con.print(f"   {escape(f.get('command') or json.dumps(f['patch']))}", soft_wrap=True)
