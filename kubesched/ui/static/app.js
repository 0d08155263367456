// The web UI of kubesched: a hash router over a few pages, each reading the JSON of
// /ui/api/*, /debug/explain and /metrics, refreshed on the server's change events.
import {h, vtable} from "./vtable.js";
import {renderExplain} from "./explain.js";
import {startCharts} from "./charts.js";

const main = document.getElementById("main");
let mode = {readOnly: true, scheduler: false, profiles: []};
let refreshers = [];  // called on each change event from the server

async function api(path, opts = {}) {
  const resp = await fetch(path, opts);
  const text = await resp.text();
  let body;
  try { body = text ? JSON.parse(text) : {}; } catch { body = {error: text}; }
  if (!resp.ok && !opts.allowError) throw new Error(body.error || body.message || `${resp.status} ${resp.statusText}`);
  return Object.assign(body, {_status: resp.status});
}

const qs = (o) => new URLSearchParams(Object.entries(o).filter(([, v]) => v !== "" && v !== undefined)).toString();
const go = (hash) => { location.hash = hash; };
const podLink = (p) => `#/pod/${encodeURIComponent(p.namespace)}/${encodeURIComponent(p.name)}`;

function fmt(resource, v) {
  if (resource === "cpu") return v % 1000 === 0 ? `${v / 1000}` : `${v}m`;
  if (resource === "memory" || resource.includes("storage")) {
    const units = [["Ti", 2 ** 40], ["Gi", 2 ** 30], ["Mi", 2 ** 20], ["Ki", 2 ** 10]];
    for (const [u, n] of units) if (v >= n) return `${+(v / n).toFixed(1)}${u}`;
  }
  return String(v);
}

function bar(res) {
  if (!res) return "";
  const pct = res.allocatable > 0 ? Math.min(100, (100 * res.requested) / res.allocatable) : (res.requested > 0 ? 100 : 0);
  const span = h("span", {class: pct >= 100 ? "full" : pct >= 80 ? "hi" : ""});
  span.style.width = `${pct}%`;
  return h("div", {class: "bar", title: `${res.name}: ${fmt(res.name, res.requested)} of ${fmt(res.name, res.allocatable)} requested`},
           span, h("em", {}, `${fmt(res.name, res.requested)} / ${fmt(res.name, res.allocatable)}`));
}

function search(placeholder, onchange) {
  let t = 0;
  return h("input", {type: "search", placeholder, "data-testid": "search",
                     oninput: (e) => { clearTimeout(t); t = setTimeout(() => onchange(e.target.value), 200); }});
}

function conditionText(n) {
  const bad = n.conditions.filter((c) => (c.type === "Ready") !== (c.status === "True"));
  return bad.length ? bad.map((c) => `${c.type}=${c.status}`).join(", ") : (n.conditions.length ? "Ready" : "");
}

// -- pages ----------------------------------------------------------------------------------
function nodesPage() {
  let q = "";
  const resources = ["cpu", "memory", "pods"];
  const table = vtable({
    testid: "nodes-table",
    source: (offset, limit) => api(`/ui/api/nodes?${qs({offset, limit, q})}`),
    onclick: (n) => go(`#/node/${encodeURIComponent(n.name)}`),
    columns: [
      {title: "node", width: "200px", cell: (n) => n.name + (n.unschedulable ? " (cordoned)" : "")},
      ...resources.map((r) => ({title: r, width: "160px", cell: (n) => bar(n.resources.find((x) => x.name === r))})),
      {title: "other resources", width: "minmax(120px, 1fr)", cell: (n) => n.resources
        .filter((x) => !resources.includes(x.name) && x.allocatable > 0 && x.name !== "ephemeral-storage")
        .map((x) => `${x.name} ${fmt(x.name, x.requested)}/${fmt(x.name, x.allocatable)}`).join(", ")},
      {title: "taints", width: "minmax(120px, 1fr)", cell: (n) => n.taints.join(", ")},
      {title: "conditions", width: "140px", cell: (n) => conditionText(n)},
    ],
  });
  const count = h("span", {class: "muted", "data-testid": "count"});
  refreshers.push(() => table.refresh());
  main.replaceChildren(h("h1", {}, "Cluster"),
    h("div", {class: "toolbar"}, search("filter nodes by name or label", (v) => { q = v; table.reset(); }), count), table);
  new MutationObserver(() => { count.textContent = `${table.dataset.total || 0} node(s)`; })
    .observe(table, {attributes: true, attributeFilter: ["data-total"]});
}

async function nodePage(name) {
  const draw = async () => {
    const n = await api(`/ui/api/nodes/${encodeURIComponent(name)}`);
    main.replaceChildren(h("h1", {}, `Node ${n.name}`),
      h("div", {class: "box"},
        h("table", {class: "plain"}, n.resources.map((r) => h("tr", {}, h("td", {}, r.name), h("td", {style: "width:260px"}, bar(r))))),
        h("p", {}, "taints: ", n.taints.length ? n.taints.map((t) => h("span", {class: "tag"}, t)) : "none"),
        h("p", {}, "conditions: ", n.conditions.map((c) => h("span", {class: "tag"}, `${c.type}=${c.status}`))),
        h("p", {}, "labels: ", Object.entries(n.labels).map(([k, v]) => h("span", {class: "tag"}, `${k}=${v}`)))),
      h("h2", {}, `Pods on ${n.name} (${n.pods.length})`),
      podTable(async (offset, limit) => ({total: n.pods.length, items: n.pods.slice(offset, offset + limit)}), "node-pods"));
  };
  refreshers.push(draw);
  await draw();
}

function podTable(source, testid) {
  return vtable({
    testid, source, onclick: (p) => go(podLink(p)),
    columns: [
      {title: "pod", width: "minmax(200px, 1.2fr)", cell: (p) => `${p.namespace}/${p.name}`},
      {title: "status", width: "130px", cell: (p) => h("span", {class: p.node ? "ok" : "bad"}, p.status)},
      {title: "node", width: "160px", cell: (p) => p.node || (p.nominatedNode ? `(nominated ${p.nominatedNode})` : "")},
      {title: "priority", width: "80px", cls: "num", cell: (p) => p.priority},
      {title: "why", width: "minmax(200px, 3fr)", cell: (p) => h("span", {class: "why", title: p.why}, p.why)},
    ],
  });
}

function podsPage(pending) {
  let q = "";
  const table = podTable((offset, limit) => api(`/ui/api/${pending ? "pending" : "pods"}?${qs({offset, limit, q})}`),
                         pending ? "pending-table" : "pods-table");
  refreshers.push(() => table.refresh());
  main.replaceChildren(h("h1", {}, pending ? "Pending pods" : "Pods"),
    h("div", {class: "toolbar"}, search("filter by namespace/name or node", (v) => { q = v; table.reset(); })), table);
}

async function podPage(ns, name) {
  const draw = async () => {
    const [pod, ex] = await Promise.all([
      api(`/ui/api/pods/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`, {allowError: true}),
      api(`/debug/explain/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`, {allowError: true}),
    ]);
    const parts = [h("h1", {}, `Pod ${ns}/${name}`)];
    if (pod._status !== 200) parts.push(h("div", {class: "box bad", "data-testid": "pod-missing"}, pod.error || "not found"));
    else {
      parts.push(h("div", {class: "box", "data-testid": "pod-summary"},
        h("div", {}, "status: ", h("b", {"data-testid": "pod-status"}, pod.status), pod.node ? [" on ", h("b", {}, pod.node)] : "",
          pod.queue ? h("span", {class: "muted"}, `  (queue: ${pod.queue})`) : ""),
        h("div", {}, `priority ${pod.priority}, scheduler ${pod.schedulerName}, requests `,
          Object.entries(pod.requests).map(([r, v]) => h("span", {class: "tag"}, `${r}=${fmt(r, v)}`))),
        pod.why ? h("div", {class: "why", "data-testid": "pod-why"}, pod.why) : "",
        mode.readOnly ? "" : h("p", {}, h("button", {class: "danger", "data-testid": "delete-pod", onclick: async () => {
          if (!confirm(`Delete pod ${ns}/${name}?`)) return;
          const r = await api("/ui/api/delete", {method: "POST", allowError: true,
            headers: {"Content-Type": "application/json"},
            body: JSON.stringify({apiVersion: "v1", kind: "Pod", namespace: ns, name})});
          if (r.ok) go("#/pods"); else alert(r.message || r.error);
        }}, "Delete pod"))));
    }
    parts.push(ex._status === 200 ? renderExplain(ex) : h("div", {class: "box muted", "data-testid": "no-attempt"}, ex.error || "no scheduling attempt yet"));
    main.replaceChildren(...parts);
  };
  refreshers.push(() => { if (!main.querySelector("details[open]")) draw(); });
  await draw();
}

async function queuePage() {
  const draw = async () => {
    const q = await api("/ui/api/queue");
    const sections = ["active", "backoff", "unschedulable", "gated"].map((name) => [
      h("h2", {}, `${name} (${q.counts[name]})`),
      q.pods[name].length ? h("table", {class: "plain", "data-testid": `queue-${name}`},
        h("tr", {}, h("th", {}, "pod"), h("th", {}, "attempts"), h("th", {}, "plugins"), h("th", {}, "why")),
        q.pods[name].map((p) => h("tr", {},
          h("td", {}, h("a", {href: podLink(p)}, `${p.namespace}/${p.name}`)), h("td", {}, p.attempts),
          h("td", {}, (p.unschedulablePlugins || []).join(", ") || p.gatingPlugin || ""),
          h("td", {class: "why"}, p.why || "")))) : h("div", {class: "muted"}, "empty"),
      q.counts[name] > q.pods[name].length ? h("div", {class: "muted"}, `first ${q.pods[name].length} shown`) : "",
    ]);
    main.replaceChildren(h("h1", {}, "Scheduling queue"),
      h("div", {class: "box", "data-testid": "queue-counts"},
        ["active", "backoff", "unschedulable", "gated"].map((n) => h("span", {class: "tag"}, `${n}: ${q.counts[n]}`)),
        h("span", {class: "tag"}, `in flight: ${q.inFlight}`)), ...sections.flat());
  };
  refreshers.push(draw);
  await draw();
}

function eventsPage() {
  let q = "";
  const table = vtable({
    testid: "events-table",
    source: (offset, limit) => api(`/ui/api/events?${qs({offset, limit, q})}`),
    columns: [
      {title: "time", width: "190px", cell: (e) => e.time},
      {title: "type", width: "80px", cell: (e) => h("span", {class: e.type === "Warning" ? "warn" : ""}, e.type)},
      {title: "reason", width: "150px", cell: (e) => e.reason},
      {title: "object", width: "220px", cell: (e) => e.object},
      {title: "message", width: "minmax(200px, 1fr)", cell: (e) => h("span", {title: e.message}, e.message)},
    ],
  });
  refreshers.push(() => table.refresh());
  main.replaceChildren(h("h1", {}, "Events"),
    h("div", {class: "toolbar"}, search("filter events", (v) => { q = v; table.reset(); })), table);
}

const EXAMPLE = `apiVersion: v1
kind: Pod
metadata:
  name: example
  namespace: default
spec:
  containers:
  - name: app
    image: registry.k8s.io/pause:3.10
    resources:
      requests: {cpu: 500m, memory: 256Mi}
`;

function createPage() {
  const text = h("textarea", {"data-testid": "yaml", spellcheck: "false"});
  text.value = EXAMPLE;
  const results = h("div", {"data-testid": "create-results"});
  const submit = async (path, done) => {
    const r = await api(path, {method: "POST", body: text.value, allowError: true,
                               headers: {"Content-Type": "application/yaml"}});
    if (r.error) { results.replaceChildren(h("div", {class: "result-bad"}, r.error)); return; }
    results.replaceChildren(...r.results.map((x) => h("div", {class: x.ok ? "result-ok" : "result-bad"},
      x.ok ? [done === "created" ? h("a", {href: x.object.startsWith("pod/") ? `#/pod/${x.object.slice(4)}` : "#/"}, x.object)
                                 : x.object, ` ${done}`]
           : `${x.object}: ${x.code} ${x.message}`)));
  };
  main.replaceChildren(h("h1", {}, "Create objects from YAML"),
    h("p", {class: "muted"}, "One or more documents (---). Each is created (or deleted) through the API server, as kubectl create -f (delete -f) does."),
    text, h("p", {}, h("button", {"data-testid": "create", onclick: () => submit("/ui/api/apply", "created")}, "Create"), " ",
            h("button", {class: "danger", "data-testid": "delete-yaml",
                         onclick: () => submit("/ui/api/delete-yaml", "deleted")}, "Delete these objects")), results);
}

async function configPage() {
  const cfg = await api("/ui/api/config", {allowError: true});
  const text = h("textarea", {"data-testid": "config-yaml", spellcheck: "false"});
  text.value = cfg.yaml || "";
  const msg = h("div", {"data-testid": "config-result"});
  const profiles = h("span", {"data-testid": "profiles"}, (cfg.profiles || []).join(", "));
  const apply = async () => {
    msg.replaceChildren(h("span", {class: "muted"}, "validating…"));
    const r = await api("/ui/api/config", {method: "PUT", body: text.value, allowError: true,
                                           headers: {"Content-Type": "application/yaml"}});
    if (r._status === 200) {
      profiles.textContent = r.profiles.join(", ");
      showEffective(r.effective);
      msg.replaceChildren(h("span", {class: "result-ok"}, `scheduler restarted with profiles ${r.profiles.join(", ")}`));
    } else {
      msg.replaceChildren(h("div", {class: "result-bad"}, r.error, "\nthe running configuration was kept."));
    }
  };
  const effective = h("div", {"data-testid": "effective"});
  const showEffective = (eff) => effective.replaceChildren(...Object.entries(eff || {}).map(([name, p]) =>
    h("details", {class: "box"}, h("summary", {}, `profile ${name}: plugins as built`),
      h("table", {class: "plain"}, Object.entries(p.plugins || {}).map(([point, names]) => h("tr", {},
        h("td", {}, point), h("td", {}, names.map((n) => h("span", {class: "tag"},
          point === "score" && p.scoreWeights ? `${n} ×${p.scoreWeights[n]}` : n)))))))));
  showEffective(cfg.effective);
  const ro = cfg.readOnly || mode.readOnly || cfg._status !== 200;
  main.replaceChildren(h("h1", {}, "KubeSchedulerConfiguration"),
    h("p", {}, "profiles: ", profiles),
    cfg._status !== 200 ? h("p", {class: "bad"}, cfg.error) : "",
    effective, text, ro ? h("p", {class: "muted"}, "read-only") : h("p", {}, h("button", {"data-testid": "apply-config", onclick: apply}, "Apply and restart the scheduler")), msg);
  if (ro) text.readOnly = true;
}

// -- router and live updates ----------------------------------------------------------------
async function route() {
  refreshers = [];
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const page = parts[0] || "nodes";
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.nav === page);
  main.replaceChildren(h("p", {class: "muted"}, "loading…"));  // nothing of the previous page stays clickable
  try {
    if (page === "nodes") nodesPage();
    else if (page === "node") await nodePage(parts[1]);
    else if (page === "pending") podsPage(true);
    else if (page === "pods") podsPage(false);
    else if (page === "pod") await podPage(parts[1], parts[2]);
    else if (page === "queue") await queuePage();
    else if (page === "events") eventsPage();
    else if (page === "create") createPage();
    else if (page === "config") await configPage();
    else main.replaceChildren(h("h1", {}, "Not found"));
  } catch (e) {
    main.replaceChildren(h("div", {class: "box bad"}, String(e.message || e)));
  }
}

function live() {
  const dot = document.getElementById("live");
  const source = new EventSource("/ui/watch/changes");
  // One refresh at a time; a change that arrives during one is not dropped but answered by
  // one more refresh after it (the refresh in flight may have read the state before it).
  let busy = false, again = false;
  source.addEventListener("open", () => dot.classList.add("on"));
  source.addEventListener("error", () => dot.classList.remove("on"));
  source.addEventListener("change", async () => {
    if (busy) { again = true; return; }
    busy = true;
    try {
      do {
        again = false;
        try { for (const r of refreshers) await r(); } catch { /* shown on the next draw */ }
      } while (again);
    } finally { busy = false; }
  });
}

async function start() {
  try { mode = await api("/ui/api/mode"); } catch { /* keep read-only */ }
  document.body.classList.toggle("ro", mode.readOnly);
  window.addEventListener("hashchange", route);
  await route();
  live();
  startCharts(document.getElementById("charts"));
}
start();
