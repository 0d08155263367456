// Small live charts of the scheduler's key metrics, read from /metrics (Prometheus text).
import {h} from "./vtable.js";

const POINTS = 60;
const PERIOD = 2000;

export function parseMetrics(text) {
  const out = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = line.match(/^([a-zA-Z_:][\w:]*)(\{([^}]*)\})?\s+(\S+)/);
    if (!m) continue;
    const labels = {};
    for (const kv of (m[3] || "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[kv[1]] = kv[2];
    out.push({name: m[1], labels, value: Number(m[4])});
  }
  return out;
}

function sum(samples, name, where = () => true) {
  return samples.filter((s) => s.name === name && where(s.labels)).reduce((a, s) => a + s.value, 0);
}

const CHARTS = [
  {id: "pending", title: "pending pods", value: (s) => sum(s, "scheduler_pending_pods")},
  {id: "scheduled", title: "scheduled / s", rate: (s) => sum(s, "scheduler_schedule_attempts_total", (l) => l.result === "scheduled")},
  {id: "unschedulable", title: "unschedulable attempts / s", rate: (s) => sum(s, "scheduler_schedule_attempts_total", (l) => l.result === "unschedulable")},
  {id: "latency", title: "attempt latency (ms, mean)",
   ratio: (s) => [sum(s, "scheduler_scheduling_attempt_duration_seconds_sum") * 1000,
                  sum(s, "scheduler_scheduling_attempt_duration_seconds_count")]},
];

export function startCharts(root) {
  const series = Object.fromEntries(CHARTS.map((c) => [c.id, []]));
  const els = {};
  for (const c of CHARTS) {
    const poly = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("viewBox", `0 0 ${POINTS} 34`);
    svg.setAttribute("preserveAspectRatio", "none");
    svg.append(poly);
    const v = h("div", {class: "v"}, "–");
    root.append(h("div", {class: "chart", "data-testid": `chart-${c.id}`}, h("div", {class: "t"}, c.title), v, svg));
    els[c.id] = {v, poly};
  }
  let prev = null;
  async function tick() {
    try {
      const resp = await fetch("/metrics");
      if (!resp.ok) throw new Error(resp.statusText);
      const samples = parseMetrics(await resp.text());
      const now = performance.now();
      for (const c of CHARTS) {
        let value = null;
        if (c.value) value = c.value(samples);
        else if (c.rate) {
          const cur = c.rate(samples);
          if (prev && prev.vals[c.id] !== undefined && now > prev.t) value = Math.max(0, (cur - prev.vals[c.id]) / ((now - prev.t) / 1000));
          (prev ||= {t: now, vals: {}}).vals[c.id] = cur;
        } else if (c.ratio) {
          const [a, b] = c.ratio(samples);
          if (prev && prev.vals[c.id + ":b"] !== undefined) {
            const db = b - prev.vals[c.id + ":b"];
            value = db > 0 ? (a - prev.vals[c.id + ":a"]) / db : (series[c.id].at(-1) ?? 0);
          }
          (prev ||= {t: now, vals: {}}).vals[c.id + ":a"] = a;
          prev.vals[c.id + ":b"] = b;
        }
        if (value === null) continue;
        const s = series[c.id];
        s.push(value);
        if (s.length > POINTS) s.shift();
        const max = Math.max(1e-9, ...s);
        els[c.id].poly.setAttribute("points", s.map((y, i) => `${i + POINTS - s.length},${33 - (y / max) * 31}`).join(" "));
        els[c.id].v.textContent = value >= 100 ? value.toFixed(0) : value.toFixed(value >= 10 ? 1 : 2).replace(/\.?0+$/, "") || "0";
      }
      prev.t = now;
    } catch (e) { /* the server may be restarting the scheduler: try again */ }
    setTimeout(tick, PERIOD);
  }
  tick();
}
