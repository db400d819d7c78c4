// The applications list: one card per Sync with a tile per app, and the filters, kept
// in the URL.

import { api } from "./api.js";
import { el, clear, badge, ago, short } from "./dom.js";

const filters = ["cluster", "namespace", "sync", "health", "package", "search"];
const syncValues = ["Synced", "OutOfSync", "Unknown"];
const healthValues = ["Healthy", "Progressing", "Degraded", "Suspended", "Missing", "WaitingForApproval", "Unknown"];

// setFilter puts a filter into the URL; the hashchange draws the list again.
function setFilter(query, name, value) {
  if (value) query.set(name, value); else query.delete(name);
  const q = query.toString();
  location.hash = "#/" + (q ? "?" + q : "");
}

function select(query, name, label, values) {
  const s = el("select", { id: "filter-" + name, "aria-label": label },
    el("option", { value: "" }, label + ": all"),
    values.map((v) => el("option", { value: v, selected: query.get(name) === v }, v)));
  s.addEventListener("change", () => setFilter(query, name, s.value));
  return s;
}

export async function renderList(main, query) {
  const q = new URLSearchParams();
  for (const f of filters) if (query.get(f)) q.set(f, query.get(f));
  const list = await api("/api/v1/syncs?" + q.toString());
  const search = el("input", { type: "search", id: "filter-search", placeholder: "Search names, URLs, revisions, commits", value: query.get("search") || "" });
  search.addEventListener("change", () => setFilter(query, "search", search.value.trim()));
  const view = el("div", {},
    el("div", { class: "filters" },
      select(query, "cluster", "Cluster", list.clusters),
      select(query, "namespace", "Namespace", list.namespaces),
      select(query, "sync", "Sync status", syncValues),
      select(query, "health", "Health", healthValues),
      select(query, "package", "Operator", list.packages),
      search,
      el("span", { class: "meta", id: "count" }, `${list.items.length} Sync(s)`)),
    list.items.length === 0 ? el("p", { class: "muted" }, "No Sync matches.") : null,
    list.items.map(card));
  clear(main).append(view);
}

function card(s) {
  const href = `#/syncs/${encodeURIComponent(s.namespace)}/${encodeURIComponent(s.name)}`;
  const commit = s.commit ? `“${s.commit.subject}” by ${s.commit.author}` : "";
  return el("div", { class: "sync-card", "data-sync": `${s.namespace}/${s.name}` },
    el("div", { class: "head" },
      el("a", { href }, `${s.namespace}/${s.name}`),
      badge(s.sync), badge(s.health),
      s.suspended ? badge("Suspended") : null,
      el("span", { class: "meta" }, short(s.revision) || "no revision applied"),
      commit ? el("span", { class: "meta commit" }, commit) : null,
      el("span", { class: "meta" }, s.lastSync ? `last sync ${ago(s.lastSync)} (${s.lastSyncDuration}, ${s.lastSyncResult})` : "never synced"),
      el("span", { class: "meta" }, `${s.violations} violation(s)`),
      s.cluster ? el("span", { class: "meta" }, "cluster " + s.cluster) : null,
      el("span", { class: "meta url" }, s.url)),
    el("div", { class: "apps" }, s.apps.map((a) =>
      el("a", { class: "app h-" + a.health, href, "data-app": a.name, "data-sync-status": a.sync, "data-health": a.health },
        el("div", { class: "name" }, a.name, " ", badge(a.sync), " ", badge(a.health)),
        el("div", { class: "meta" }, `${a.objects} object(s)` + (a.namespace ? ` · ${a.namespace}` : "") + (a.violations ? ` · ${a.violations} violation(s)` : "")),
        a.message ? el("div", { class: "msg" }, a.message) : null))));
}
