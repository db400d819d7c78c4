// The applications list: one tile per app (a Sync without apps is one tile), health and
// sync status first, small enough that 200 fit on a screen; or a table, one line per
// app, its message on one line and the rest on hover or expand. Counts per health and
// sync status at the top filter the list; the filters and the view live in the URL.

import { api } from "./api.js";
import { el, clear, ago, short } from "./dom.js";
import { healthOrder } from "./resgraph.js";

const filters = ["cluster", "namespace", "sync", "health", "package", "search"];
const syncValues = ["Synced", "OutOfSync", "Unknown"];
const healthValues = ["Healthy", "Progressing", "Degraded", "Suspended", "Missing", "WaitingForApproval", "Unknown"];

// setParam puts a filter (or the view) into the URL; the hashchange draws the list again.
function setParam(query, name, value) {
  if (value) query.set(name, value); else query.delete(name);
  const q = query.toString();
  location.hash = "#/" + (q ? "?" + q : "");
}

function select(query, name, label, values) {
  const s = el("select", { id: "filter-" + name, "aria-label": label },
    el("option", { value: "" }, label + ": all"),
    values.map((v) => el("option", { value: v, selected: query.get(name) === v }, v)));
  s.addEventListener("change", () => setParam(query, name, s.value));
  return s;
}

// rowsOf flattens the Syncs into one row per app.
function rowsOf(items) {
  const rows = [];
  for (const s of items) {
    const href = `#/syncs/${encodeURIComponent(s.namespace)}/${encodeURIComponent(s.name)}`;
    if (s.apps.length === 0) {
      rows.push({ s, href, app: null, name: s.name, health: s.health, sync: s.sync, message: s.readyMessage || "" });
    }
    for (const a of s.apps) {
      // An app's tile opens the Sync's graph of that app.
      rows.push({ s, href: href + "?app=" + encodeURIComponent(a.name), app: a, name: a.name, health: a.health, sync: a.sync, message: a.message || "" });
    }
  }
  return rows;
}

// drawn is what the list on the page was drawn from. A change the stream tells that leaves
// the list's answer as it was (a Pod of an operator restarting, say) draws nothing again:
// the page keeps its elements, scroll and focus.
let drawn = null;

export async function renderList(main, query) {
  const q = new URLSearchParams();
  for (const f of filters) if (query.get(f)) q.set(f, query.get(f));
  const list = await api("/api/v1/syncs?" + q.toString());
  const key = query.toString() + "\n" + JSON.stringify(list);
  if (drawn && drawn.key === key && main.contains(drawn.page)) return;
  const rows = rowsOf(list.items);
  const view = query.get("view") === "table" ? "table" : "tiles";
  const search = el("input", { type: "search", id: "filter-search", placeholder: "Search names, URLs, revisions, commits", value: query.get("search") || "" });
  search.addEventListener("change", () => setParam(query, "search", search.value.trim()));
  const viewButton = (v, label) => el("button", { class: "seg" + (view === v ? " on" : ""), id: "list-view-" + v, "aria-pressed": String(view === v),
    onclick: () => setParam(query, "view", v === "tiles" ? "" : v) }, label);
  const page = el("div", { id: "list-view", "data-view": view },
    counts(rows, query),
    el("div", { class: "filters" },
      select(query, "cluster", "Cluster", list.clusters),
      select(query, "namespace", "Namespace", list.namespaces),
      select(query, "sync", "Sync status", syncValues),
      select(query, "health", "Health", healthValues),
      select(query, "package", "Operator", list.packages),
      search,
      el("span", { class: "meta", id: "count" }, `${rows.length} app(s) in ${list.items.length} Sync(s)`),
      el("div", { class: "segmented", role: "group", "aria-label": "View" }, viewButton("tiles", "Tiles"), viewButton("table", "Table"))),
    rows.length === 0 ? el("p", { class: "muted" }, "No Sync matches.") : view === "table" ? table(rows) : tiles(rows));
  document.body.classList.remove("panel-open");
  clear(main).append(page);
  drawn = { key, page };
}

// counts are the number of apps per health and per sync status, each a filter.
function counts(rows, query) {
  const by = (field, values) => values.map((v) => [v, rows.filter((r) => r[field] === v).length]).filter(([, n]) => n > 0);
  const chip = (name, value, n) => {
    const on = query.get(name) === value;
    return el("button", { class: `count ${name}-${value}` + (on ? " on" : ""), "data-count": `${name}=${value}`, "aria-pressed": String(on),
      title: on ? "Show every " + name : `Show only ${value}`, onclick: () => setParam(query, name, on ? "" : value) },
    el("span", { class: "dot" }), el("span", { class: "n" }, String(n)), " ", value);
  };
  const health = by("health", [...healthOrder].reverse().filter((h) => healthValues.includes(h)));
  return el("div", { class: "counts", id: "counts" },
    el("span", { class: "label" }, "Health"), health.map(([v, n]) => chip("health", v, n)),
    el("span", { class: "label" }, "Sync"), by("sync", syncValues).map(([v, n]) => chip("sync", v, n)));
}

function tip(r) {
  const s = r.s;
  return [`${r.app ? "App " + r.name + " of " : ""}Sync ${s.namespace}/${s.name}${s.suspended ? " (suspended)" : ""}`, `${r.health} · ${r.sync}`,
    `revision ${short(s.revision) || "none"}${s.commit ? ` “${s.commit.subject}” by ${s.commit.author}` : ""}`,
    s.lastSync ? `last sync ${ago(s.lastSync)} (${s.lastSyncDuration}, ${s.lastSyncResult})` : "never synced",
    r.app ? `${r.app.objects} object(s)${r.app.violations ? `, ${r.app.violations} violation(s)` : ""}` : "", r.message].filter(Boolean).join("\n");
}

// brief shortens an app's message for a tile's one line: `Kind "ns/name" is Health: why`
// (as the reconciler writes it) becomes `name: why`; the tooltip has it whole.
export function brief(message) {
  const m = /^[A-Za-z]+ "(?:[^"/]*\/)?([^"]+)" is [A-Za-z]+: (.*)$/s.exec(message);
  return m ? `${m[1]}: ${m[2]}` : message;
}

function tiles(rows) {
  return el("div", { class: "tiles", id: "tiles" }, rows.map((r) =>
    el("a", { class: `tile h-${r.health}` + (r.s.suspended ? " suspended" : ""), href: r.href, title: tip(r), "data-sync": `${r.s.namespace}/${r.s.name}`,
      "data-app": r.app ? r.name : "", "data-health": r.health, "data-sync-status": r.sync, "data-suspended": r.s.suspended ? "true" : null },
    el("div", { class: "t1" },
      el("span", { class: "hdot h-" + r.health, "aria-label": "health " + r.health, role: "img" }),
      el("span", { class: "sglyph s-" + r.sync, "aria-label": "sync " + r.sync, role: "img" }),
      el("span", { class: "tname" }, r.app ? r.name : r.s.name),
      r.s.suspended ? el("span", { class: "susp", role: "img", "aria-label": "the Sync is suspended" }) : null),
    el("div", { class: "t2" }, r.message ? brief(r.message) : `${r.s.namespace}/${r.s.name}`))));
}

function table(rows) {
  return el("table", { class: "apps-table", id: "apps-table" },
    el("tr", {}, ["Health", "Sync", "App", "Sync object", "Revision", "Last sync", "Objects", "Message"].map((h) => el("th", {}, h))),
    rows.map((r) => {
      const msg = el("span", { class: "msg-text" }, r.message);
      const row = el("tr", { class: "h-" + r.health, "data-sync": `${r.s.namespace}/${r.s.name}`, "data-app": r.app ? r.name : "", "data-health": r.health, "data-sync-status": r.sync },
        el("td", {}, el("span", { class: "hdot h-" + r.health }), " ", r.health),
        el("td", {}, el("span", { class: "sglyph s-" + r.sync }), " ", r.sync),
        el("td", {}, el("a", { href: r.href }, r.app ? r.name : "—"), r.s.suspended ? el("span", { class: "susp" }, " suspended") : null),
        el("td", {}, `${r.s.namespace}/${r.s.name}`),
        el("td", {}, el("code", {}, short(r.s.revision) || "none")),
        el("td", {}, r.s.lastSync ? ago(r.s.lastSync) : "never"),
        el("td", {}, r.app ? String(r.app.objects) : ""),
        el("td", { class: "msg", title: r.message }, r.message ? el("button", { class: "expand", "aria-expanded": "false", "aria-label": "Show the whole message",
          onclick: (e) => { const open = row.classList.toggle("expanded"); e.currentTarget.setAttribute("aria-expanded", String(open)); e.currentTarget.textContent = open ? "▾" : "▸"; } }, "▸") : null, msg));
      return row;
    }));
}
