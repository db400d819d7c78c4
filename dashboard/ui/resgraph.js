// The resource graph of a Sync, drawn left to right in SVG: the Sync, its apps, their
// objects, and OLM's chain (Subscription → InstallPlan → CSV → Deployment → ReplicaSet →
// Pod), each OperatorGroup's target namespaces and each CatalogSource's Subscriptions as
// edges. layout() places the nodes (no DOM); drawGraph() makes the SVG from a layout.
//
// Placement: a node's column is the longest path to it from the Sync (over its parent
// link and every edge), so an edge always runs to the right; its row comes from a walk
// of the parent links, each leaf on a row of its own and each parent beside the middle
// of its children, so that subtrees never overlap. More than groupLimit children of one
// kind below a node are drawn as one group node until it is expanded.

import { el } from "./dom.js";
import { iconSVG } from "./icons.js";

export const groupLimit = 8;
export const nodeW = 256, nodeH = 66, colW = 324, rowH = 82, margin = 16;

// The order of kinds below a node: what others hang on first.
const kindOrder = ["App", "Namespace", "OperatorGroup", "CatalogSource", "Subscription", "InstallPlan", "ClusterServiceVersion",
  "Deployment", "ReplicaSet", "Pod"];
const kindRank = (k) => { const i = kindOrder.indexOf(k); return i < 0 ? kindOrder.length : i; };

export const healthOrder = ["Degraded", "Missing", "Unknown", "WaitingForApproval", "Progressing", "Suspended", "Healthy"];
const worse = (a, b) => (healthOrder.indexOf(a || "Healthy") <= healthOrder.indexOf(b || "Healthy") ? a : b);

// matches says whether a node passes the filters (kind, health, sync; each "" for any).
export function matches(n, f) {
  return (!f.kind || n.kind === f.kind) && (!f.health || n.health === f.health) && (!f.sync || n.sync === f.sync);
}
const structural = (n) => n.kind === "Sync" || n.kind === "App";
export const filtering = (f) => !!(f.kind || f.health || f.sync || f.app);

// layout places the graph's nodes for the filters and the expanded groups (a Set of
// group ids). It returns the items drawn (nodes and groups, with x, y, col, parent and
// children), the edges between them, and the drawing's size.
export function layout(graph, { filters = {}, expanded = new Set() } = {}) {
  const byId = new Map();
  for (const n of graph.nodes) byId.set(n.id, n);
  const kids = new Map();
  const roots = [];
  for (const n of graph.nodes) {
    if (n.parent && byId.has(n.parent)) {
      if (!kids.has(n.parent)) kids.set(n.parent, []);
      kids.get(n.parent).push(n);
    } else roots.push(n);
  }
  // One app (filters.app): what it holds, and the CatalogSources its Subscriptions
  // resolve from (dimmed, with the way to them).
  let scope = null;
  const linked = new Set();
  if (filters.app) {
    scope = new Set();
    const add = (id) => { scope.add(id); for (const k of kids.get(id) || []) add(k.id); };
    if (byId.has("App//" + filters.app)) add("App//" + filters.app);
    for (const e of graph.edges) if (e.kind === "catalog" && scope.has(e.to) && !scope.has(e.from)) linked.add(e.from);
  }
  // What is shown: every node; or with filters the Sync, the nodes they match and the way
  // to them from the Sync (the objects on it dimmed).
  let keep = null;
  const dim = new Set(linked);
  if (filtering(filters)) {
    keep = new Set();
    for (const n of graph.nodes) {
      if (n.kind === "Sync") { keep.add(n.id); continue; }
      if (scope && !scope.has(n.id) && !linked.has(n.id)) continue;
      if (n.kind === "App" ? !(scope && scope.has(n.id)) : !matches(n, filters)) continue;
      keep.add(n.id);
      for (let p = byId.get(n.parent); p && !keep.has(p.id); p = byId.get(p.parent)) { keep.add(p.id); if (!structural(p)) dim.add(p.id); }
    }
  }
  const items = new Map(); // id → item
  const order = [];
  const owner = new Map(); // node id → the id of the item that shows it (itself or its group)
  const visit = (n, parent, depth) => {
    const item = { id: n.id, node: n, parent: parent ? parent.id : null, children: [], depth, dim: dim.has(n.id) };
    items.set(n.id, item);
    order.push(item);
    owner.set(n.id, n.id);
    if (parent) parent.children.push(item);
    const shown = (kids.get(n.id) || []).filter((c) => !keep || keep.has(c.id));
    shown.sort((a, b) => kindRank(a.kind) - kindRank(b.kind) || a.kind.localeCompare(b.kind) ||
      (a.namespace || "").localeCompare(b.namespace || "") || a.name.localeCompare(b.name));
    const byKind = new Map();
    for (const c of shown) { if (!byKind.has(c.kind)) byKind.set(c.kind, []); byKind.get(c.kind).push(c); }
    for (const [kind, list] of byKind) {
      const gid = `group:${n.id}:${kind}`;
      if (list.length > groupLimit && !expanded.has(gid)) {
        const g = { id: gid, group: true, kind, members: list, parent: n.id, children: [], depth: depth + 1 };
        items.set(gid, g);
        order.push(g);
        item.children.push(g);
        const hide = (m) => { owner.set(m.id, gid); for (const k of kids.get(m.id) || []) hide(k); };
        list.forEach(hide);
      } else {
        for (const c of list) visit(c, item, depth + 1);
      }
    }
  };
  for (const r of roots) visit(r, null, 0);

  // Edges between what is shown; one into a group stands for its members'.
  const edges = [];
  const seen = new Set();
  for (const e of graph.edges) {
    const from = owner.get(e.from), to = owner.get(e.to);
    if (!from || !to || from === to || !items.has(from) || !items.has(to)) continue;
    const key = from + "\n" + to;
    if (seen.has(key)) continue;
    seen.add(key);
    edges.push({ from, to, kind: e.kind, grouped: from !== e.from || to !== e.to });
  }
  for (const it of order) {
    if (it.group && !seen.has(it.parent + "\n" + it.id)) {
      seen.add(it.parent + "\n" + it.id);
      edges.push({ from: it.parent, to: it.id, kind: it.parent.startsWith("App/") || it.parent.startsWith("Sync.") ? "app" : "owns", grouped: true });
    }
  }

  // Columns: the longest path to each item over parent links and edges.
  const preds = new Map();
  for (const it of order) preds.set(it.id, it.parent ? [it.parent] : []);
  for (const e of edges) preds.get(e.to).push(e.from);
  const col = new Map();
  const onPath = new Set();
  const colOf = (id) => {
    if (col.has(id)) return col.get(id);
    onPath.add(id);
    let c = 0;
    for (const p of preds.get(id)) if (!onPath.has(p)) c = Math.max(c, colOf(p) + 1);
    onPath.delete(id);
    col.set(id, c);
    return c;
  };
  // Rows: leaves one after the other in the walk, parents beside their children.
  let row = 0;
  const place = (it) => {
    it.col = colOf(it.id);
    if (it.children.length === 0) { it.row = row++; return; }
    for (const c of it.children) place(c);
    it.row = (it.children[0].row + it.children[it.children.length - 1].row) / 2;
  };
  for (const r of roots) if (items.has(r.id)) place(items.get(r.id));
  let cols = 0;
  for (const it of order) {
    it.x = margin + it.col * colW;
    it.y = margin + it.row * rowH;
    cols = Math.max(cols, it.col + 1);
  }
  return { items, order, edges, width: margin * 2 + (cols - 1) * colW + nodeW, height: margin * 2 + Math.max(row - 1, 0) * rowH + nodeH };
}

// fit cuts a text to n characters, with an ellipsis.
export function fit(s, n) { s = s || ""; return s.length > n ? s.slice(0, n - 1) + "…" : s; }

// label is how a node is named to a screen reader and in its tooltip.
export function describe(n) {
  return [n.kind, (n.namespace ? n.namespace + "/" : "") + (n.name || "(no app)"), n.health, n.sync, n.phase, n.reason, n.note, n.message]
    .filter(Boolean).join(" · ");
}

// groupSummary counts a group's members by health and sync status, worst first.
export function groupSummary(g) {
  const health = new Map(), sync = new Map();
  let worst = "Healthy";
  for (const m of g.members) {
    health.set(m.health || "Unknown", (health.get(m.health || "Unknown") || 0) + 1);
    if (m.sync) sync.set(m.sync, (sync.get(m.sync) || 0) + 1);
    worst = worse(m.health || "Unknown", worst);
  }
  const byHealth = [...health].sort((a, b) => healthOrder.indexOf(a[0]) - healthOrder.indexOf(b[0]));
  return { worst, text: [...byHealth, ...sync].map(([k, v]) => `${v} ${k}`).join(" · ") };
}

// drawGraph makes the SVG of a layout. Nodes are focusable one at a time (a roving
// tabindex on `focus`), and carry their object's kind, name, health, sync status and
// phase as data attributes for tests and styles.
export function drawGraph(lay, { focus, selected, label }) {
  const svg = el("svg", { class: "resgraph", width: lay.width, height: lay.height, viewBox: `0 0 ${lay.width} ${lay.height}`,
    role: "group", "aria-label": label });
  const edgeLayer = el("g", { class: "edges" });
  const nodeLayer = el("g", { class: "nodes" });
  for (const e of lay.edges) {
    const a = lay.items.get(e.from), b = lay.items.get(e.to);
    edgeLayer.append(el("path", { class: `edge ${e.kind}${a.dim || b.dim ? " dim" : ""}`, "data-from": e.from, "data-to": e.to, "data-kind": e.kind,
      d: edgePath(a, b) }));
  }
  const current = lay.items.has(focus) ? focus : (lay.order[0] && lay.order[0].id);
  for (const it of lay.order) nodeLayer.append(it.group ? groupNode(it, current) : objectNode(it, current, selected));
  svg.append(edgeLayer, nodeLayer);
  return svg;
}

// edgePath runs from the right of a to the left of b. An edge that skips columns bends
// into b's row at the column after a's and runs straight from there: no node of another
// subtree is on that row, so it crosses none. One within a column (none in a tree) is an
// arc on the right.
function edgePath(a, b) {
  const x1 = a.x + nodeW, y1 = a.y + nodeH / 2, x2 = b.x, y2 = b.y + nodeH / 2;
  if (b.col <= a.col) {
    const bend = Math.max(x1, b.x + nodeW) + 40;
    return `M${x1} ${y1}C${bend} ${y1} ${bend} ${y2} ${b.x + nodeW} ${y2}`;
  }
  const xm = b.col > a.col + 1 ? margin + (a.col + 1) * colW : x2;
  const dx = Math.max(20, (xm - x1) / 2);
  return `M${x1} ${y1}C${x1 + dx} ${y1} ${xm - dx} ${y2} ${xm} ${y2}` + (xm < x2 ? `L${x2} ${y2}` : "");
}

// olmLine is a node's OLM phase, reason and note, as much as fits.
function olmLine(n) {
  const parts = [[n.phase, "badge-phase"], [n.reason, "badge-reason"], [n.note, "badge-note"]].filter((p) => p[0]);
  if (!parts.length) return null;
  let budget = 28;
  const spans = [];
  for (const [text, cls] of parts) {
    if (budget < 4) break;
    const shown = fit(text, budget);
    spans.push(el("tspan", { class: cls, dx: spans.length ? 6 : 0 }, shown));
    budget -= shown.length + 1;
  }
  return el("text", { x: 46, y: 60, class: "olm" }, spans);
}

function objectNode(it, current, selected) {
  const n = it.node;
  const name = n.kind === "App" ? (n.name || "(no app)") : n.name;
  const sub = n.kind + (n.namespace && n.kind !== "App" ? " · " + n.namespace : "") + (n.external ? " · outside this Sync" : "");
  const health = n.health;
  const status = el("text", { x: 46, y: 47, class: "status" },
    health ? el("tspan", { class: "badge-health h-" + health }, health) : null,
    n.sync ? el("tspan", { class: "badge-sync s-" + n.sync, dx: health ? 8 : 0 }, n.sync) : null);
  const cls = ["gnode", n.kind === "Sync" || n.kind === "App" ? "structural" : "", it.dim ? "dim" : "", n.id === selected ? "selected" : "", n.external ? "external" : ""];
  return el("g", { class: cls.filter(Boolean).join(" "), transform: `translate(${it.x},${it.y})`, tabindex: n.id === current ? 0 : -1,
    role: "button", "aria-label": describe(n), "data-id": n.id, "data-kind": n.kind, "data-name": n.name, "data-namespace": n.namespace || "",
    "data-health": n.health || "", "data-sync": n.sync || "", "data-phase": n.phase || "", "data-reason": n.reason || "" },
  el("title", {}, describe(n)),
  el("rect", { class: "box", width: nodeW, height: nodeH, rx: 6 }),
  el("rect", { class: "bar h-" + (n.health || "none"), width: 5, height: nodeH, rx: 2 }),
  iconSVG(n.kind, 26, 26, 15),
  el("text", { x: 46, y: 19, class: "name" }, fit(name, 28)),
  el("text", { x: 46, y: 33, class: "kind" }, fit(sub, 34)),
  status,
  olmLine(n));
}

function groupNode(g, current) {
  const sum = groupSummary(g);
  const plural = g.kind.endsWith("s") ? g.kind + "es" : g.kind + "s";
  const text = `${g.members.length} ${plural}: ${sum.text}; press Enter to expand`;
  return el("g", { class: "gnode group", transform: `translate(${g.x},${g.y})`, tabindex: g.id === current ? 0 : -1, role: "button",
    "aria-label": text, "aria-expanded": "false", "data-id": g.id, "data-kind": g.kind, "data-group": "true", "data-count": g.members.length,
    "data-health": sum.worst },
  el("title", {}, text),
  el("rect", { class: "box stack", x: 6, y: 6, width: nodeW, height: nodeH, rx: 6 }),
  el("rect", { class: "box", width: nodeW, height: nodeH, rx: 6 }),
  el("rect", { class: "bar h-" + sum.worst, width: 5, height: nodeH, rx: 2 }),
  iconSVG(g.kind, 26, 26, 15),
  el("text", { x: 46, y: 19, class: "name" }, `${g.members.length} ${plural}`),
  el("text", { x: 46, y: 33, class: "kind" }, "group · Enter or click to expand"),
  el("text", { x: 46, y: 47, class: "status" }, fit(sum.text, 36)));
}

// neighbour is the item a key moves the focus to from an item: Left its parent, Right
// its first child, Up and Down the nearest item above or below in its column.
export function neighbour(lay, id, key) {
  const it = lay.items.get(id);
  if (!it) return null;
  switch (key) {
    case "ArrowLeft": return it.parent;
    case "ArrowRight": return it.children.length ? it.children[0].id : null;
    case "Home": return lay.order[0] ? lay.order[0].id : null;
    case "ArrowUp": case "ArrowDown": {
      const down = key === "ArrowDown";
      let best = null;
      for (const o of lay.order) {
        if (o.col !== it.col || o === it) continue;
        if (down ? o.row > it.row : o.row < it.row) {
          if (!best || (down ? o.row < best.row : o.row > best.row)) best = o;
        }
      }
      return best ? best.id : null;
    }
  }
  return null;
}

// walk lists the shown items in the order of the parent links, with their depth: the
// list view's rows.
export function walk(lay) {
  const out = [];
  const visit = (it) => { out.push(it); for (const c of it.children) visit(c); };
  for (const it of lay.order) if (!it.parent || !lay.items.has(it.parent)) visit(it);
  return out;
}
