// The pod page's decision tables, from the explain JSON (GET /debug/explain/<ns>/<pod>).
// Rendered defensively: keys it does not know are ignored (the document only grows), and
// both a plain number and a {raw, normalized, weighted} object are understood as a score.
import {h, localSource, vtable} from "./vtable.js";

const NOT_EVALUATED = /not.?evaluated/i;

export function verdict(v) {
  if (v === "ok") return {cls: "ok", text: "ok", plugin: "", reasons: ""};
  if (typeof v === "string") return {cls: NOT_EVALUATED.test(v) ? "ne" : "bad", text: v, plugin: "", reasons: ""};
  if (v && typeof v === "object") {
    const word = v.verdict || v.status || v.result;
    if (typeof word === "string" && (NOT_EVALUATED.test(word) || word === "ok")) {
      const why = v.why || v.reason || v.message || "";
      return {cls: word === "ok" ? "ok" : "ne", text: word, plugin: "", reasons: String(why)};
    }
    const reasons = Array.isArray(v.reasons) ? v.reasons.join("; ") : String(v.reasons || v.message || "");
    return {cls: "bad", text: v.plugin ? `${v.plugin} (${v.code || "?"})` : String(v.code || "rejected"),
            plugin: v.plugin || "", reasons};
  }
  return {cls: "muted", text: String(v), plugin: "", reasons: ""};
}

export function scoreParts(v) {
  if (typeof v === "number") return {weighted: v};
  if (v && typeof v === "object") {
    const pick = (...ks) => ks.map((k) => v[k]).find((x) => typeof x === "number");
    return {raw: pick("raw", "score"), normalized: pick("normalized", "normalised", "normalizedScore"),
            weighted: pick("weighted", "weightedScore", "final"), weight: pick("weight")};
  }
  return {};
}

function scoreCell(v) {
  const p = scoreParts(v);
  if (p.weighted === undefined && p.raw === undefined) return "";
  const main = h("span", {}, String(p.weighted ?? p.raw));
  if (p.raw === undefined && p.normalized === undefined) return main;
  const sub = [p.raw !== undefined ? `raw ${p.raw}` : "", p.normalized !== undefined ? `norm ${p.normalized}` : ""]
    .filter(Boolean).join(" · ");
  return h("span", {}, main, " ", h("span", {class: "sub"}, sub));
}

export function renderExplain(doc) {
  const out = h("div", {"data-testid": "explain"});
  const chosen = doc.chosen || null;
  const head = [
    h("span", {class: doc.result === "Scheduled" ? "ok" : "bad", "data-testid": "explain-result"}, doc.result || "?"),
    chosen ? h("span", {}, " on ", h("b", {}, chosen)) : "",
    typeof doc.time === "number" ? h("span", {class: "muted"}, "  at " + new Date(doc.time * 1000).toISOString()) : "",
  ];
  out.append(h("div", {class: "box"}, h("b", {}, "last attempt: "), head,
               doc.message ? h("div", {class: "why", "data-testid": "explain-message"}, doc.message) : ""));

  const filter = doc.filter && typeof doc.filter === "object" ? Object.entries(doc.filter) : [];
  const counts = {ok: 0, bad: 0, ne: 0};
  const rows = filter.map(([node, v]) => { const r = {node, ...verdict(v)}; counts[r.cls] = (counts[r.cls] || 0) + 1; return r; });
  out.append(h("h2", {}, `Filter: ${rows.length} node(s) — ${counts.ok} ok, ${counts.bad} rejected`
                        + (counts.ne ? `, ${counts.ne} not evaluated` : "")));
  out.append(vtable({
    testid: "filter-table", height: `${Math.min(rows.length + 1, 14) * 28 + 4}px`, source: localSource(rows),
    rowClass: (r) => (r.node === chosen ? "chosen" : ""),
    columns: [
      {title: "node", width: "220px", cell: (r) => r.node + (r.node === chosen ? " ★" : "")},
      {title: "verdict", width: "300px", cell: (r) => h("span", {class: r.cls}, r.text)},
      {title: "reasons", width: "1fr", cell: (r) => r.reasons},
    ],
  }));

  if (doc.blockers && typeof doc.blockers === "object") out.append(renderBlockers(doc.blockers));
  if (doc.result && doc.result !== "Scheduled" && typeof doc.pod === "string" && doc.blockers) {
    out.append(fixesSection(doc.pod));
  }

  const scores = doc.scores && typeof doc.scores === "object" ? doc.scores : {};
  const totals = doc.totals && typeof doc.totals === "object" ? doc.totals : {};
  const nodes = Object.keys(scores);
  if (nodes.length) {
    const plugins = [...new Set(nodes.flatMap((n) => Object.keys(scores[n] || {})))].sort();
    nodes.sort((a, b) => (totals[b] ?? 0) - (totals[a] ?? 0) || a.localeCompare(b));
    const srows = nodes.map((n) => ({node: n, scores: scores[n] || {}, total: totals[n]}));
    out.append(h("h2", {}, "Score (weighted, after normalisation; raw and normalised where recorded)"));
    out.append(vtable({
      testid: "score-table", height: `${Math.min(srows.length + 1, 14) * 28 + 4}px`, source: localSource(srows),
      rowClass: (r) => (r.node === chosen ? "chosen" : ""),
      columns: [
        {title: "node", width: "220px", cell: (r) => r.node + (r.node === chosen ? " ★" : "")},
        ...plugins.map((p) => ({title: p, width: "minmax(90px, 1fr)", cls: "num", cell: (r) => scoreCell(r.scores[p])})),
        {title: "total", width: "90px", cls: "num", cell: (r) => h("b", {}, r.total ?? "")},
      ],
    }));
  }

  if (doc.nominatedNode || (Array.isArray(doc.victims) && doc.victims.length)) {
    out.append(h("h2", {}, "Preemption"));
    out.append(h("div", {class: "box", "data-testid": "preemption"},
      h("div", {}, "nominated node: ", h("b", {}, doc.nominatedNode || "none")),
      h("div", {}, "victims: ", (doc.victims || []).length ? (doc.victims || []).map((v) => h("span", {class: "tag"}, String(v))) : "none")));
  }
  if (doc.preemption && typeof doc.preemption === "object") {
    out.append(h("details", {}, h("summary", {}, "preemption candidates"), h("pre", {}, JSON.stringify(doc.preemption, null, 2))));
  }
  for (const key of ["history", "attempts"]) {
    if (Array.isArray(doc[key]) && doc[key].length) {
      out.append(h("h2", {}, "Attempt history"));
      out.append(h("table", {class: "plain"}, doc[key].map((a) => h("tr", {},
        h("td", {}, typeof a.time === "number" ? new Date(a.time * 1000).toISOString() : String(a.time ?? "")),
        h("td", {}, String(a.result ?? a.event ?? "")), h("td", {}, String(a.node ?? a.chosen ?? a.to ?? "")),
        h("td", {}, String(a.message ?? a.trigger ?? ""))))));
      break;
    }
  }
  out.append(h("details", {}, h("summary", {class: "muted"}, "explain JSON"), h("pre", {}, JSON.stringify(doc, null, 2))));
  return out;
}

// -- every blocker, and what would fix it ----------------------------------------------------

function taintText(t) { return t.value ? `${t.key}=${t.value}:${t.effect}` : `${t.key}:${t.effect}`; }

export function evidenceText(plugin, ev) {
  if (!ev || typeof ev !== "object" || !Object.keys(ev).length) return "";
  if (ev.resources) {
    return Object.entries(ev.resources).map(([r, d]) => r === "pods" ? `pods: ${d.used} of ${d.allocatable} used`
      : `${r}: asks ${d.requested}, ${d.free} free of ${d.allocatable}`
        + ((d.usedBy || []).length ? ` (used by ${d.usedBy.map((u) => u.pod).join(", ")}`
           + (d.usedByCount > d.usedBy.length ? ` +${d.usedByCount - d.usedBy.length})` : ")") : "")).join("; ");
  }
  if (ev.untoleratedTaints) return "untolerated " + ev.untoleratedTaints.map(taintText).join(", ");
  if (ev.constraints) {
    return ev.constraints.map((c) => c.nodeMissingLabel ? `node has no ${c.topologyKey} label`
      : `${c.topologyKey}=${c.domain} has ${c.matchingInDomain} matching, min ${c.globalMin}: skew ${c.skew} > `
        + `maxSkew ${c.maxSkew}; may go to ${(c.neededDomains || []).join(", ") || "none"}`).join("; ");
  }
  if (ev.portsInUse) return ev.portsInUse.map((p) => `port ${p.port}/${p.protocol} used by ${p.usedBy}`).join("; ");
  if (plugin === "InterPodAffinity") {
    return [...(ev.affinityTerms || []).map((t) => `affinity on ${t.topologyKey}: no matching pod in ${t.domain}`),
            ...(ev.antiAffinityTerms || []).map((t) => `anti-affinity on ${t.topologyKey}: conflicts with ${t.matchingPods.join(", ")}`),
            ...(ev.existingPodsAntiAffinity || []).map((e) => `${e.pod} (on ${e.node}) has anti-affinity against it`)].join("; ");
  }
  if (ev.claims) {
    return ev.claims.map((c) => c.found === false ? `claim ${c.claim} not found`
      : !c.boundTo ? `claim ${c.claim} unbound (class ${c.storageClass || "none"})`
      : `claim ${c.claim} -> ${c.boundTo}` + Object.entries(c.volumeZones || {}).map(([k, z]) =>
          ` (${k} ${z.join(", ")}; node: ${(c.nodeZones || {})[k] || "none"})`).join("")).join("; ") || "no claims";
  }
  if (ev.nodeSelector) return ev.nodeSelector.map((m) => `nodeSelector ${m.key}=${m.wanted} (node: ${m.node ?? "no label"})`).join("; ");
  return JSON.stringify(ev);
}

export function renderBlockers(b) {
  const rows = [];
  for (const [node, list] of Object.entries(b.nodes || {})) {
    for (const x of list || []) {
      rows.push({node, plugin: x.plugin || "", upstream: x.beyondUpstream ? "" : "decides",
                 evidence: evidenceText(x.plugin, x.evidence) || (x.reasons || []).join("; ")});
    }
  }
  const by = Object.entries(b.byPlugin || {}).map(([p, n]) => `${p} ${n}`).join(", ");
  const box = h("div", {"data-testid": "blockers"},
    h("h2", {}, `Every blocker: ${b.blockedNodes ?? rows.length} node(s) blocked (${by}); `
                + `${b.rejectionsBeyondUpstream ?? 0} beyond upstream's first rejection`));
  box.append(vtable({
    testid: "blockers-table", height: `${Math.min(rows.length + 1, 14) * 28 + 4}px`, source: localSource(rows),
    columns: [
      {title: "node", width: "200px", cell: (r) => r.node},
      {title: "plugin", width: "190px", cell: (r) => r.plugin},
      {title: "upstream", width: "90px", cell: (r) => h("span", {class: r.upstream ? "bad" : "muted"}, r.upstream || "beyond")},
      {title: "evidence", width: "1fr", cell: (r) => r.evidence},
    ],
  }));
  return box;
}

export function renderFixes(doc) {
  const fixes = Array.isArray(doc.fixes) ? doc.fixes : [];
  const box = h("div", {"data-testid": "fixes"},
    h("p", {class: "muted"}, `${fixes.length} verified fix(es) of ${doc.candidatesChecked ?? 0} checked, smallest change first`));
  if (!fixes.length) box.append(h("p", {}, "no change tried lets the scheduler place the pod"));
  fixes.forEach((f, i) => box.append(h("div", {class: "box", "data-testid": "fix"},
    h("div", {}, h("b", {}, `${i + 1}. ${f.kind}`), ` ${f.target}`, f.node ? [" → lands on ", h("b", {}, f.node)] : ""),
    h("div", {class: "why"}, f.why || ""),
    f.moves && Object.keys(f.moves).length ? h("div", {}, "moved pods land on: "
      + Object.entries(f.moves).map(([p, n]) => `${p} → ${n}`).join(", ")) : "",
    h("pre", {}, f.command || JSON.stringify(f.patch, null, 1)))));
  return box;
}

function fixesSection(pod) {
  // opened by the user: the search runs once (it holds the scheduler while it runs), and an
  // open <details> keeps the page from redrawing underneath it
  const body = h("div", {class: "muted"}, "checking changes with the scheduler…");
  const d = h("details", {"data-testid": "fixes-section"}, h("summary", {}, "What would fix it?"), body);
  let asked = false;
  d.addEventListener("toggle", async () => {
    if (!d.open || asked) return;
    asked = true;
    const [ns, name] = pod.split("/");
    try {
      const r = await fetch(`/debug/explain/${encodeURIComponent(ns)}/${encodeURIComponent(name)}?fixes=10`);
      const doc = await r.json();
      body.replaceWith(r.ok ? renderFixes(doc) : h("div", {class: "bad"}, doc.error || `HTTP ${r.status}`));
    } catch (e) {
      body.replaceWith(h("div", {class: "bad"}, String(e)));
    }
  });
  return d;
}
