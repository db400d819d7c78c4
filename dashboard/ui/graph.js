// drawGraph draws a channel's upgrade graph as SVG: its entries top to bottom in the
// resolver's order (head first), each edge an arc on the right labelled replaces, skips
// or skipRange, the installed entry, the next one and the head marked.

import { el } from "./dom.js";

export function drawGraph(g) {
  const nodes = g.graph.nodes || [];
  const order = new Map((g.graph.order || []).map((n, i) => [n, i]));
  const sorted = [...nodes].sort((a, b) => (order.get(a.name) ?? 1e6) - (order.get(b.name) ?? 1e6));
  const y = new Map(sorted.map((n, i) => [n.name, 24 + i * 48]));
  const w = 260, x = 20;
  const edges = g.graph.edges || [];
  const height = 24 + sorted.length * 48;
  const svg = el("svg", { class: "graph", width: 640, height, viewBox: `0 0 640 ${height}`, role: "img", "aria-label": "upgrade graph" });
  edges.forEach((e, i) => {
    const y1 = y.get(e.from), y2 = y.get(e.to);
    if (y1 === undefined || y2 === undefined) return;
    const bend = x + w + 30 + (i % 5) * 40;
    svg.append(el("path", { class: "edge " + e.kind, d: `M ${x + w} ${y1 + 14} C ${bend} ${y1 + 14}, ${bend} ${y2 + 14}, ${x + w} ${y2 + 14}` },
      el("title", {}, `${e.from} ${e.kind} ${e.to}`)));
    svg.append(el("text", { x: bend - 12, y: (y1 + y2) / 2 + 18, class: "edge-label" }, e.kind));
  });
  for (const n of sorted) {
    const cls = ["node", n.name === g.installed ? "installed" : "", n.name === g.next ? "next" : "", n.head ? "head" : ""].join(" ").trim();
    const tags = [n.name === g.installed ? "installed" : "", n.name === g.next ? "next" : "", n.head ? "head" : "", n.skipped ? "skipped" : "", n.external ? "outside the channel" : ""].filter(Boolean);
    svg.append(el("g", { class: cls, "data-node": n.name },
      el("rect", { x, y: y.get(n.name), width: w, height: 28 }),
      el("text", { x: x + 8, y: y.get(n.name) + 18 }, n.name + (tags.length ? "  (" + tags.join(", ") + ")" : "")),
      n.skipRange ? el("title", {}, "skipRange " + n.skipRange) : null));
  }
  return svg;
}
