// The application view of one Sync: its state and actions, its resources as a graph
// (or a list), filters by kind, health and sync status, a node's panel, its violations,
// history and events; and the file view a violation or a desired manifest links to.
//
// What the user chose — the view, the filters, the node and tab open — is kept in the
// URL (#/syncs/ns/name?view=list&health=Degraded&node=…&tab=diff), written with
// history.replaceState so that it does not draw the page again; a change the stream
// announces draws it again, keeping the panel, the scroll and the focus.

import { api } from "./api.js";
import { act } from "./app.js";
import { el, clear, badge, ago, short } from "./dom.js";
import { layout, drawGraph, neighbour, walk, filtering, describe, fit } from "./resgraph.js";
import { Panel, eventsTable, tabs } from "./panel.js";
import { iconHTML } from "./icons.js";

const enc = encodeURIComponent;
const healthValues = ["Healthy", "Progressing", "Degraded", "Suspended", "Missing", "WaitingForApproval", "Unknown"];
const syncValues = ["Synced", "OutOfSync", "Unknown"];

// state is the page of the Sync shown: the last view read, what the user chose, and
// the graph's layout as drawn.
let state = null;

function fromQuery(key, query) {
  return {
    key, view: query.get("view") === "list" ? "list" : "graph",
    filters: { app: query.get("app") || "", kind: query.get("kind") || "", health: query.get("health") || "", sync: query.get("sync") || "" },
    selected: query.get("node") || "", tab: tabs.includes(query.get("tab")) ? query.get("tab") : "summary",
    expanded: new Set(), zoom: 1, focus: "", v: null, lay: null,
  };
}

// remember writes what the user chose into the URL, without drawing the page again.
function remember() {
  const q = new URLSearchParams();
  if (state.view !== "graph") q.set("view", state.view);
  for (const [k, v] of Object.entries(state.filters)) if (v) q.set(k, v);
  if (state.selected) { q.set("node", state.selected); if (state.tab !== "summary") q.set("tab", state.tab); }
  const [ns, name] = state.key.split("/");
  const hash = `#/syncs/${enc(ns)}/${enc(name)}` + (q.toString() ? "?" + q.toString() : "");
  if (location.hash !== hash) history.replaceState(null, "", hash);
  state.hash = location.hash;
}

export async function renderSync(main, ns, name, query) {
  const base = `/api/v1/syncs/${enc(ns)}/${enc(name)}`;
  const key = `${ns}/${name}`;
  const [v, events] = await Promise.all([api(base), api(base + "/events").catch((e) => ({ error: e.message }))]);
  let page = document.getElementById("sync-view");
  // Drawn again (a change streamed, an action done) at the URL the page wrote, the page
  // keeps what the user chose; at another (a link, a URL typed in), it starts from it.
  if (!state || state.key !== key || !page || page.dataset.sync !== key || state.hash !== location.hash) {
    state = fromQuery(key, query);
    page = skeleton(main, base, ns, name);
  }
  state.v = v;
  const s = v.summary;
  const ready = (v.conditions || []).find((c) => c.type === "Ready");
  clear(document.getElementById("sync-head")).append(
    el("div", { class: "title-row" },
      el("h2", {}, `${ns}/${name}`), badge(s.sync), badge(s.health), s.suspended ? badge("Suspended") : null,
      el("span", { class: "meta" }, `${s.url}${s.ref ? " @ " + s.ref : ""}${s.path ? " · " + s.path : ""}`)),
    el("div", { class: "facts" },
      el("span", {}, "Revision ", el("code", { id: "revision" }, short(s.revision) || "none"),
        s.commit ? el("span", { class: "meta commit" }, ` “${s.commit.subject}” by ${s.commit.author}`) : null),
      ready ? el("span", { id: "ready" }, "Ready ", badge(ready.status), " ", badge(ready.reason, "reason"), " ",
        el("span", { class: "meta one-line", title: ready.message }, ready.message)) : null,
      el("span", { class: "meta" }, s.lastSync ? `Last sync ${ago(s.lastSync)}, took ${s.lastSyncDuration}, ${s.lastSyncResult}` : "Never synced")),
    el("div", { class: "actions" },
      el("button", { id: "action-sync", onclick: () => act("Sync now", base + "/reconcile") }, "Sync now"),
      s.suspended
        ? el("button", { id: "action-resume", onclick: () => act("Resume", base + "/resume") }, "Resume")
        : el("button", { id: "action-suspend", onclick: () => act("Suspend", base + "/suspend") }, "Suspend"),
      v.approvalsPending.map((p) => el("button", { class: "approve", "data-approve": `${p.namespace}/${p.name}`,
        onclick: () => act(`Approve InstallPlan ${p.namespace}/${p.name}`, `/api/v1/installplans/${enc(p.namespace)}/${enc(p.name)}/approve`) },
      `Approve InstallPlan ${p.name}`))));
  drawToolbar();
  drawResources();
  const node = state.selected && v.graph.nodes.find((n) => n.id === state.selected);
  if (node) {
    if (state.panel.node && state.panel.node.id === node.id) state.panel.refresh(node);
    else state.panel.show(node, state.tab);
    document.body.classList.add("panel-open");
  } else if (state.selected) {
    state.selected = "";
    closePanel();
  }
  document.getElementById("violations").replaceWith(violationsPanel(v, ns, name));
  document.getElementById("history").replaceWith(historyPanel(v.history));
  document.getElementById("events").replaceWith(el("section", { class: "panel", id: "events" }, el("h2", {}, "Events"),
    events.error ? el("p", { class: "muted" }, events.error) : eventsTable(events, true)));
  remember();
}

// skeleton lays the page out once per Sync shown; drawing it again fills it.
function skeleton(main, base, ns, name) {
  const aside = el("aside", { id: "node-panel", class: "node-panel", role: "dialog", "aria-labelledby": "panel-title", hidden: true });
  state.panel = new Panel(aside, { base, ns, name, onClose: closePanel, onTab: (t, focusTab) => {
    state.tab = t;
    const n = state.v.graph.nodes.find((x) => x.id === state.selected);
    if (n) state.panel.show(n, t, focusTab);
    remember();
  } });
  const page = el("div", { id: "sync-view", "data-sync": `${ns}/${name}` },
    el("section", { class: "panel", id: "sync-head" }),
    el("section", { class: "panel resources", id: "resources" },
      el("div", { class: "toolbar", id: "resource-toolbar" }),
      el("div", { class: "graph-area", id: "graph-area" })),
    el("section", { class: "panel", id: "violations" }),
    el("section", { class: "panel", id: "history" }),
    el("section", { class: "panel", id: "events" }),
    aside);
  clear(main).append(page);
  return page;
}

function closePanel() {
  const was = state.selected;
  state.selected = "";
  const aside = document.getElementById("node-panel");
  if (aside) { aside.hidden = true; delete aside.dataset.node; }
  document.body.classList.remove("panel-open");
  state.panel.node = null;
  drawResources();
  remember();
  const back = was && document.querySelector(`#graph-area [data-id="${CSS.escape(was)}"]`);
  if (back) back.focus();
}

function open(id) {
  const n = state.v.graph.nodes.find((x) => x.id === id);
  if (!n) return;
  state.selected = id;
  state.focus = id;
  // Another node opens on its summary; the one shown keeps its tab.
  state.panel.show(n, state.panel.node && state.panel.node.id === id ? state.tab : "summary", false);
  state.tab = state.panel.tab;
  for (const g of document.querySelectorAll("#graph-area .selected")) g.classList.remove("selected");
  document.body.classList.add("panel-open");
  const shown = document.querySelector(`#graph-area [data-id="${CSS.escape(id)}"]`);
  if (shown) { shown.classList.add("selected"); shown.scrollIntoView({ block: "nearest", inline: "nearest" }); }
  remember();
}

// Escape closes the panel wherever the focus is on the page (but in a form).
document.addEventListener("keydown", (e) => {
  if (e.key !== "Escape" || !state || !state.selected || e.target.closest("input, select, textarea")) return;
  if (!document.getElementById("sync-view")) return;
  e.preventDefault();
  closePanel();
});

// drawToolbar draws the view switch, the filters (with the kinds the Sync has) and the
// counts of what is shown.
function drawToolbar() {
  const nodes = state.v.graph.nodes;
  const kinds = [...new Set(nodes.filter((n) => n.kind !== "Sync" && n.kind !== "App").map((n) => n.kind))].sort();
  const apps = nodes.filter((n) => n.kind === "App").map((n) => n.name);
  const set = (k, value) => { state.filters[k] = value; remember(); drawToolbar(); drawResources(); };
  const select = (k, label, values) => {
    const s = el("select", { id: "graph-filter-" + k, "aria-label": label },
      el("option", { value: "" }, label + ": all"), values.map((v) => el("option", { value: v, selected: state.filters[k] === v }, v)));
    s.addEventListener("change", () => set(k, s.value));
    return s;
  };
  const objects = nodes.filter((n) => n.kind !== "Sync" && n.kind !== "App");
  const count = (f) => objects.filter(f).length;
  const degraded = count((n) => n.health === "Degraded"), outOfSync = count((n) => n.sync === "OutOfSync"),
    progressing = count((n) => n.health === "Progressing" || n.health === "WaitingForApproval");
  const viewButton = (view, label) => el("button", { class: "seg" + (state.view === view ? " on" : ""), id: "view-" + view, "aria-pressed": String(state.view === view),
    onclick: () => { state.view = view; remember(); drawToolbar(); drawResources(); } }, label);
  const zoom = (id, f) => el("button", { class: "seg", id: "zoom-" + id, onclick: () => { state.zoom = f(state.zoom); drawResources(); } });
  clear(document.getElementById("resource-toolbar")).append(...[
    el("h2", {}, "Resources"),
    el("div", { class: "segmented", role: "group", "aria-label": "View" }, viewButton("graph", "Graph"), viewButton("list", "List")),
    select("app", "App", apps), select("kind", "Kind", kinds), select("health", "Health", healthValues), select("sync", "Sync status", syncValues),
    filtering(state.filters) ? el("button", { id: "graph-filter-clear", onclick: () => { state.filters = { app: "", kind: "", health: "", sync: "" }; remember(); drawToolbar(); drawResources(); } }, "Clear filters") : null,
    state.view === "graph" ? el("button", { id: "graph-expand", "aria-pressed": String(state.expanded.size > 0),
      onclick: () => { if (state.expanded.size) state.expanded.clear(); else expandAll(); drawToolbar(); drawResources(); } },
    state.expanded.size ? "Collapse groups" : "Expand groups") : null,
    el("span", { class: "meta", id: "resource-counts" }, `${objects.length} objects · ${degraded} Degraded · ${progressing} progressing or waiting · ${outOfSync} OutOfSync`),
    state.view === "graph" ? el("div", { class: "segmented zoom", role: "group", "aria-label": "Zoom" },
      Object.assign(zoom("out", (z) => Math.max(0.25, z / 1.25)), { textContent: "−", title: "Zoom out" }),
      Object.assign(zoom("reset", () => 1), { textContent: "100%", title: "Actual size" }),
      Object.assign(zoom("fit", () => fitZoom()), { textContent: "Fit", title: "Fit the width" }),
      Object.assign(zoom("in", (z) => Math.min(2, z * 1.25)), { textContent: "+", title: "Zoom in" })) : null].filter(Boolean));
}

// expandAll expands every group, and the groups that shows, until none is left.
function expandAll() {
  for (let i = 0; i < 8; i++) {
    const groups = layout(state.v.graph, { filters: state.filters, expanded: state.expanded }).order.filter((it) => it.group);
    if (!groups.length) return;
    for (const g of groups) state.expanded.add(g.id);
  }
}

function fitZoom() {
  const area = document.getElementById("graph-area");
  return state.lay ? Math.min(1, Math.max(0.25, (area.clientWidth - 4) / state.lay.width)) : 1;
}

// drawResources draws the graph or the list of the view last read, keeping the scroll
// and the focused node.
export function drawResources() {
  const area = document.getElementById("graph-area");
  if (!area) return;
  const t0 = performance.now();
  const had = document.activeElement && area.contains(document.activeElement) ? document.activeElement.dataset.id : "";
  const scroll = [area.scrollLeft, area.scrollTop];
  const lay = layout(state.v.graph, { filters: state.filters, expanded: state.expanded });
  state.lay = lay;
  const label = `Resources of Sync ${state.key}: arrow keys move, Enter opens a node or expands a group`;
  let drawn;
  if (state.view === "list") {
    drawn = listView(lay);
  } else {
    drawn = drawGraph(lay, { focus: state.focus || state.selected, selected: state.selected, label });
    if (state.zoom !== 1) { drawn.setAttribute("width", Math.round(lay.width * state.zoom)); drawn.setAttribute("height", Math.round(lay.height * state.zoom)); }
    drawn.addEventListener("click", (e) => { const g = e.target.closest(".gnode"); if (g) activate(g.dataset.id); });
    drawn.addEventListener("keydown", onKey);
    drawn.addEventListener("focusin", (e) => { const g = e.target.closest(".gnode"); if (g) rove(g); });
  }
  clear(area).append(drawn);
  if (filtering(state.filters) && lay.order.every((it) => it.group || it.node.kind === "Sync" || it.node.kind === "App")) {
    area.append(el("p", { class: "muted", id: "no-match" }, "No object matches the filters."));
  }
  area.dataset.view = state.view;
  area.dataset.nodes = String(lay.order.length);
  [area.scrollLeft, area.scrollTop] = scroll;
  if (had) { const again = area.querySelector(`[data-id="${CSS.escape(had)}"]`); if (again) again.focus({ preventScroll: true }); }
  // The time it took to lay out and build the drawing, for the benchmark (bench-graph.mjs).
  performance.measure("olmsync-resources-draw", { start: t0, end: performance.now() });
}

// activate opens an object's panel, or expands a group.
function activate(id) {
  if (id.startsWith("group:")) {
    state.expanded.add(id);
    // The focus goes to the group's first member.
    const it = state.lay.items.get(id);
    state.focus = it && it.members[0] ? it.members[0].id : "";
    drawResources();
    const first = state.focus && document.querySelector(`#graph-area [data-id="${CSS.escape(state.focus)}"]`);
    if (first) first.focus();
    return;
  }
  open(id);
}

// rove makes the focused node the one Tab returns to.
function rove(g) {
  for (const o of g.ownerSVGElement.querySelectorAll('.gnode[tabindex="0"]')) if (o !== g) o.setAttribute("tabindex", "-1");
  g.setAttribute("tabindex", "0");
  state.focus = g.dataset.id;
}

function onKey(e) {
  const g = e.target.closest(".gnode");
  if (!g) return;
  if (e.key === "Enter" || e.key === " ") { e.preventDefault(); activate(g.dataset.id); return; }
  const to = neighbour(state.lay, g.dataset.id, e.key);
  if (to === null && !["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home"].includes(e.key)) return;
  e.preventDefault();
  const next = to && g.ownerSVGElement.querySelector(`.gnode[data-id="${CSS.escape(to)}"]`);
  if (next) { rove(next); next.focus(); }
}

// listView lists what the graph shows, in the order of its parent links, indented.
function listView(lay) {
  const rows = walk(lay);
  return el("table", { class: "resource-list", id: "resource-list" },
    el("tr", {}, ["Kind", "Name", "Namespace", "Sync", "Health", "OLM phase", "Reason", "Message"].map((h) => el("th", {}, h))),
    rows.map((it) => {
      if (it.group) {
        return el("tr", { class: "group-row", "data-id": it.id, "data-kind": it.kind },
          el("td", {}, iconHTML(it.kind), " ", it.kind), el("td", { class: "indent-" + Math.min(it.depth, 8) },
            el("button", { class: "small", onclick: () => activate(it.id) }, `${it.members.length} ${it.kind}s: expand`)),
          el("td", { colspan: 6 }, ""));
      }
      const n = it.node;
      return el("tr", { "data-id": n.id, "data-kind": n.kind, "data-health": n.health || "", "data-sync": n.sync || "",
        class: (it.dim ? "dim " : "") + (n.id === state.selected ? "selected" : "") },
      el("td", { class: "kind" }, iconHTML(n.kind), " ", n.kind),
      el("td", { class: "indent-" + Math.min(it.depth, 8) }, el("button", { class: "link", onclick: () => open(n.id), "aria-label": "Open " + describe(n) },
        n.kind === "App" ? n.name || "(no app)" : n.name)),
      el("td", {}, n.namespace || ""), el("td", {}, badge(n.sync)), el("td", {}, badge(n.health)),
      el("td", {}, n.phase ? badge(n.phase, "phase") : ""), el("td", {}, n.reason ? badge(n.reason, "reason") : ""),
      el("td", { class: "one-line", title: n.message || "" }, fit(n.message || n.note || "", 160)));
    }));
}

function violationsPanel(v, ns, name) {
  const rows = v.violations.map((x) => {
    const where = x.file ? `${x.path || x.file}${x.line ? ":" + x.line : ""}` : "";
    const local = `#/syncs/${enc(ns)}/${enc(name)}/file?path=${enc(x.file)}${x.line ? "&line=" + x.line : ""}`;
    return el("tr", { "data-rule": x.rule },
      el("td", {}, x.rule), el("td", {}, x.severity), el("td", {}, x.app || ""),
      el("td", {}, where ? el("a", { class: "location", href: x.link || local, ...(x.link ? { target: "_blank", rel: "noopener noreferrer" } : {}) }, where) : ""),
      el("td", {}, x.message + (x.gated ? " (not applied)" : "")));
  });
  return el("section", { class: "panel", id: "violations" },
    el("h2", {}, `Violations (${v.violationCount})`),
    rows.length ? el("table", {}, el("tr", {}, ["Rule", "Severity", "App", "File", "Message"].map((h) => el("th", {}, h))), rows)
      : el("p", { class: "muted" }, "None."));
}

function historyPanel(history) {
  return el("section", { class: "panel", id: "history" },
    el("h2", {}, "History"),
    history.length ? el("table", {},
      el("tr", {}, ["Revision", "Result", "Last", "Duration", "Reconciles", "Applied"].map((h) => el("th", {}, h))),
      history.map((h) => el("tr", {}, el("td", {}, short(h.revision)), el("td", {}, h.lastReconciledStatus),
        el("td", {}, ago(h.lastReconciled)), el("td", {}, h.lastReconciledDuration), el("td", {}, String(h.totalReconciles)),
        el("td", {}, h.applied ? "yes" : "")))) : el("p", { class: "muted" }, "No reconcile yet."));
}

// renderFile shows a file of the Sync's repository at its fetched revision (or the
// applied one, ?revision=), the line of ?line= marked and scrolled to.
export async function renderFile(main, ns, name, query) {
  const path = query.get("path") || "";
  const line = Number(query.get("line") || 0);
  const rev = query.get("revision") || "";
  const f = await api(`/api/v1/syncs/${enc(ns)}/${enc(name)}/file?path=${enc(path)}${rev ? "&revision=" + enc(rev) : ""}`);
  const view = el("div", { id: "file-view" },
    el("section", { class: "panel" },
      el("h2", {}, el("a", { href: `#/syncs/${enc(ns)}/${enc(name)}` }, `${ns}/${name}`), ` · ${f.path}`),
      el("div", { class: "meta" }, `at ${f.revision}${f.truncated ? " (truncated)" : ""}; a Secret's values are masked`)),
    el("div", { class: "file" }, f.lines.map((text, i) =>
      el("div", { class: "line" + (i + 1 === line ? " hl" : ""), id: "L" + (i + 1) }, el("span", { class: "ln" }, String(i + 1)), el("span", { class: "code" }, text)))));
  state = null;
  document.body.classList.remove("panel-open");
  clear(main).append(view);
  const target = document.getElementById("L" + line);
  if (target) target.scrollIntoView({ block: "center" });
}

