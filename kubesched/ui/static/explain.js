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
