// A virtualised table: only the rows in view (plus a margin) exist in the DOM.
// Rows come from `source(offset, limit)` -> {total, items} (a server page, or a slice of
// a local array), so 20,000 pods cost the browser what 40 do.
export const ROW = 28;
const MARGIN = 10;

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// columns: [{title, width ("1fr", "120px"), cell(row) -> Node|string, cls}]
export function vtable({columns, source, onclick, rowClass, testid, height}) {
  const grid = columns.map((c) => c.width || "1fr").join(" ");
  const root = h("div", {class: "vt", "data-testid": testid});
  if (height) root.style.height = height;
  const head = h("div", {class: "hd"}, columns.map((c) => h("div", {class: "c " + (c.cls || "")}, c.title)));
  head.style.gridTemplateColumns = grid;
  const body = h("div", {class: "body"});
  root.append(head, body);
  const state = {total: 0, first: -1, count: 0, pending: false, again: false, items: [], offset: 0};

  async function load(force) {
    const first = Math.max(0, Math.floor(root.scrollTop / ROW) - MARGIN);
    const count = Math.ceil((root.clientHeight || 600) / ROW) + 2 * MARGIN;
    if (!force && first === state.first && count === state.count) return;
    if (state.pending) { state.again = true; return; }
    state.pending = true;
    try {
      const page = await source(first, count);
      state.total = page.total; state.items = page.items; state.offset = first;
      state.first = first; state.count = count;
      draw();
    } catch (e) {
      body.replaceChildren(h("div", {class: "c bad"}, String(e.message || e)));
    } finally {
      state.pending = false;
      if (state.again) { state.again = false; load(true); }
    }
  }

  function draw() {
    body.style.height = `${state.total * ROW}px`;
    const rows = state.items.map((item, i) => {
      const r = h("div", {class: "r" + (onclick ? " click" : "") + (rowClass ? " " + (rowClass(item) || "") : ""),
                          "data-row": String(state.offset + i)},
                  columns.map((c) => h("div", {class: "c " + (c.cls || ""), "data-col": c.title}, c.cell(item))));
      r.style.gridTemplateColumns = grid;
      r.style.top = `${(state.offset + i) * ROW}px`;
      if (onclick) r.addEventListener("click", () => onclick(item));
      return r;
    });
    body.replaceChildren(...rows);
    root.dataset.total = String(state.total);
  }

  let frame = 0;
  root.addEventListener("scroll", () => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => load(false));
  });
  root.refresh = () => load(true);
  root.reset = () => { root.scrollTop = 0; load(true); };
  queueMicrotask(() => load(true));
  return root;
}

export function localSource(items) {
  return async (offset, limit) => ({total: items.length, items: items.slice(offset, offset + limit)});
}
