// A node's panel: what the dashboard knows of one object of a Sync's graph, in tabs —
// Summary (its state, OLM's conditions, a Subscription's upgrade graph, an InstallPlan's
// approval), Live (the manifest the cluster has), Desired (Git's, at the applied
// revision, with its file and line), Diff (live against what an apply would make it,
// side by side, field by field) and Events. Each tab reads the API when first shown.

import { api } from "./api.js";
import { act } from "./app.js";
import { el, clear, badge, ago, short } from "./dom.js";
import { drawGraph as drawUpgradeGraph } from "./graph.js";
import { iconHTML } from "./icons.js";

const enc = encodeURIComponent;
export const tabs = ["summary", "live", "desired", "diff", "events"];
const tabNames = { summary: "Summary", live: "Live manifest", desired: "Desired (Git)", diff: "Diff", events: "Events" };

// Panel is the node panel of a Sync's page. It keeps what it read for the node it shows,
// so that the page, drawn again on each change, does not read it again.
export class Panel {
  constructor(aside, { base, ns, name, onClose, onTab }) {
    this.aside = aside;
    this.base = base;
    this.sync = { ns, name };
    this.onClose = onClose;
    this.onTab = onTab;
    this.node = null;
    this.cache = {};
  }

  // available says which tabs a node has: an app only its summary; what OLM made no
  // desired manifest and no diff.
  available(n) {
    if (n.kind === "App") return ["summary"];
    if (!n.managed) return ["summary", "live", "events"];
    return tabs;
  }

  // show shows a node (read anew only when it is another node than the one shown), on a
  // tab; node is its entry of the graph as last read, for the summary.
  show(n, tab, focusTab) {
    if (!this.node || this.node.id !== n.id) this.cache = {};
    this.node = n;
    const avail = this.available(n);
    this.tab = avail.includes(tab) ? tab : "summary";
    const head = el("div", { class: "panel-head" },
      iconHTML(n.kind),
      el("div", { class: "title" },
        el("h2", { id: "panel-title" }, n.kind === "App" ? `App ${n.name || "(no app)"}` : n.name),
        el("div", { class: "meta" }, n.kind + (n.namespace ? " · " + n.namespace : "") + (n.apiVersion ? " · " + n.apiVersion : ""))),
      el("button", { class: "close", "aria-label": "Close the panel", onclick: () => this.onClose() }, "×"));
    const list = el("div", { role: "tablist", class: "tabs", "aria-label": "What to show of " + n.name });
    for (const t of tabs) {
      if (!avail.includes(t)) continue;
      list.append(el("button", { role: "tab", id: "tab-" + t, "data-tab": t, "aria-selected": String(t === this.tab), "aria-controls": "tabpanel",
        tabindex: t === this.tab ? 0 : -1, onclick: () => this.onTab(t) }, tabNames[t]));
    }
    list.addEventListener("keydown", (e) => {
      if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
      const shown = avail;
      const i = shown.indexOf(this.tab) + (e.key === "ArrowRight" ? 1 : -1);
      const t = shown[(i + shown.length) % shown.length];
      e.preventDefault();
      this.onTab(t, true);
    });
    const body = el("div", { role: "tabpanel", id: "tabpanel", class: "tabpanel", "aria-labelledby": "tab-" + this.tab, tabindex: 0 });
    clear(this.aside).append(head, list, body);
    this.aside.hidden = false;
    this.aside.dataset.node = n.id;
    this.aside.dataset.tab = this.tab;
    if (focusTab) document.getElementById("tab-" + this.tab).focus();
    this.fill(body, n);
  }

  // refresh shows the node's new state from the graph: only the summary is drawn again
  // (a manifest, a diff are read when asked for; Refresh reads them again).
  refresh(n) {
    if (!this.node || n.id !== this.node.id) return;
    this.node = n;
    if (this.tab === "summary") { delete this.cache.resource; this.show(n, this.tab); }
  }

  async read(key, path) {
    if (!this.cache[key]) this.cache[key] = api(path).then((v) => ({ v }), (err) => ({ err }));
    return this.cache[key];
  }

  resourcePath(n) { return `${this.base}/resource?id=${enc(n.id)}`; }

  async fill(body, n) {
    const tab = this.tab;
    const loading = el("p", { class: "muted" }, tab === "diff" ? "Fetching, rendering and dry-running…" : "Loading…");
    body.append(loading);
    const done = (...children) => { if (this.node === n && this.tab === tab) clear(body).append(...children); };
    const refresh = (key) => el("button", { class: "small refresh", onclick: () => { delete this.cache[key]; this.show(n, tab); } }, "Refresh");
    switch (tab) {
      case "summary": return done(...(await this.summary(n)));
      case "live": {
        const r = await this.read("resource", this.resourcePath(n));
        if (r.err) return done(el("p", { class: "muted" }, r.err.message));
        return done(el("div", { class: "tab-tools" }, el("span", { class: "meta" }, "As the API server has it now; managedFields hidden, a Secret's values masked."), refresh("resource")),
          r.v.live ? code(r.v.live, "live") : el("p", { class: "muted", id: "live-missing" }, r.v.liveError || "No manifest."));
      }
      case "desired": {
        const r = await this.read("desired", `${this.base}/desired?id=${enc(n.id)}`);
        if (r.err) return done(el("p", { class: "muted" }, r.err.message));
        const d = r.v;
        const where = d.file ? `${d.file}${d.line ? ":" + d.line : ""}` : "(no file)";
        const href = d.link || `#/syncs/${enc(this.sync.ns)}/${enc(this.sync.name)}/file?path=${enc(d.file)}&line=${d.line || 0}&revision=${enc(d.revision)}`;
        return done(el("div", { class: "tab-tools", id: "desired-source" },
          el("span", {}, "From ", d.file && !d.repo ? el("a", { class: "location", href, ...(d.link ? { target: "_blank", rel: "noopener noreferrer" } : {}) }, where) : where,
            d.generatedBy ? ` (made by a ${d.generatedBy})` : "", d.repo ? ` of ${d.repo}${d.ref ? "@" + d.ref : ""}` : "",
            " at ", el("code", {}, short(d.revision)), ` · app ${d.app}`)),
        code(d.manifest, "desired"));
      }
      case "diff": {
        const r = await this.read("diff", `${this.base}/diff?kind=${enc(n.kind)}&namespace=${enc(n.namespace || "")}&name=${enc(n.name)}`);
        if (r.err) return done(el("p", { class: "muted" }, r.err.message), refresh("diff"));
        return done(...diffView(r.v), refresh("diff"));
      }
      case "events": {
        const r = await this.read("resource", this.resourcePath(n));
        if (r.err) return done(el("p", { class: "muted" }, r.err.message));
        return done(eventsTable(r.v.events, false));
      }
    }
  }

  async summary(n) {
    const rows = [["Kind", n.kind], ["Name", n.name || "(no app)"], ["Namespace", n.namespace], ["API version", n.apiVersion],
      ["Health", n.health && badge(n.health)], ["Sync status", n.sync && badge(n.sync)], ["OLM phase", n.phase && badge(n.phase, "phase")],
      ["Reason", n.reason && badge(n.reason, "reason")], ["Note", n.note], ["Message", n.message],
      ["From Git", n.kind === "App" || n.kind === "Sync" ? null : n.managed ? "yes: applied by this Sync" : n.external ? "no: a CatalogSource outside this Sync" : "no: made by OLM or the cluster"]];
    const out = [el("dl", { class: "fields", id: "summary-fields" }, rows.filter((r) => r[1]).flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]))];
    if (n.kind === "InstallPlan" && n.phase === "RequiresApproval") {
      out.push(el("div", { class: "actions" }, el("button", { class: "approve", "data-approve": `${n.namespace}/${n.name}`,
        onclick: () => act(`Approve InstallPlan ${n.namespace}/${n.name}`, `/api/v1/installplans/${enc(n.namespace)}/${enc(n.name)}/approve`) },
      `Approve InstallPlan ${n.name}`)));
    }
    if (n.kind === "App") return out;
    const r = await this.read("resource", this.resourcePath(n));
    if (r.err) { out.push(el("p", { class: "muted" }, r.err.message)); return out; }
    const conds = r.v.conditions || [];
    out.push(el("h3", {}, "Conditions"), conds.length ? el("table", { id: "conditions" },
      el("tr", {}, ["Type", "Status", "Reason", "Message", "Last transition"].map((h) => el("th", {}, h))),
      conds.map((c) => el("tr", { "data-type": c.type }, el("td", {}, c.type), el("td", {}, c.status ? badge(c.status) : ""), el("td", {}, c.reason || ""),
        el("td", {}, c.message || ""), el("td", {}, c.lastTransitionTime ? ago(c.lastTransitionTime) : ""))))
      : el("p", { class: "muted" }, r.v.liveError || "None."));
    if (n.kind === "Subscription" && !n.note) {
      const g = await this.read("upgrade", `/api/v1/subscriptions/${enc(n.namespace)}/${enc(n.name)}/graph`);
      out.push(el("h3", {}, "Upgrade graph"));
      if (g.err) out.push(el("p", { class: "muted" }, g.err.message));
      else {
        out.push(el("div", { class: "meta" }, `package ${g.v.package}, channel ${g.v.channel}, catalog ${g.v.catalog}`),
          el("div", { id: "graph-path" }, `installed ${g.v.installed || "none"} → next ${g.v.next || "none"} → head ${g.v.head || "?"}`),
          el("div", { id: "upgrade-graph" }, drawUpgradeGraph(g.v)));
      }
    }
    return out;
  }
}

// code shows a manifest with line numbers.
function code(text, id) {
  const lines = text.replace(/\n$/, "").split("\n");
  return el("div", { class: "code", id: "manifest-" + id }, lines.map((l, i) =>
    el("div", { class: "line" }, el("span", { class: "ln" }, String(i + 1)), el("span", { class: "text" }, l))));
}

// diffView draws an object's diff: what an apply would do, the fields it changes, and
// the two sides next to each other.
function diffView(r) {
  const o = r.objects[0];
  const head = el("div", { class: "tab-tools", id: "diff-head" },
    badge(o.action, "phase action-" + o.action),
    el("span", { class: "meta" }, ` live, and after an apply of ${short(r.revision)}`),
    o.message ? el("div", {}, o.message) : null);
  if (!o.diff) return [head, el("p", { class: "muted", id: "diff-none" }, o.action === "unchanged" ? "No difference: the cluster has it as Git does." : "No diff to show.")];
  const changes = o.changes || [];
  const fmt = (v) => (v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v));
  return [head,
    el("h3", {}, `Fields (${changes.length})`),
    el("table", { class: "changes", id: "diff-fields" },
      el("tr", {}, ["Field", "Change", "Live", "Git (after apply)"].map((h) => el("th", {}, h))),
      changes.map((c) => el("tr", { class: "chg-" + c.change, "data-path": c.path, "data-change": c.change },
        el("td", {}, el("code", {}, c.path)), el("td", {}, badge(c.change, "change-" + c.change)),
        el("td", { class: "val" }, fmt(c.live)), el("td", { class: "val" }, fmt(c.after))))),
    el("h3", {}, "Side by side"),
    sideBySide(o.diff)];
}

// sideBySide lays a unified diff out in two columns: the live object on the left, the
// object after an apply on the right; removed lines red, added green, a line replaced by
// another on one row, amber.
export function sideBySide(unified) {
  const rows = [];
  let ln = 0, rn = 0, dels = [], adds = [];
  const flush = () => {
    for (let i = 0; i < Math.max(dels.length, adds.length); i++) {
      const d = dels[i], a = adds[i];
      rows.push({ cls: d !== undefined && a !== undefined ? "chg" : d !== undefined ? "del" : "add", l: d, r: a,
        ln: d !== undefined ? ++ln : "", rn: a !== undefined ? ++rn : "" });
    }
    dels = []; adds = [];
  };
  for (const line of unified.split("\n")) {
    if (line.startsWith("---") || line.startsWith("+++")) continue;
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) { flush(); ln = Number(hunk[1]) - 1; rn = Number(hunk[2]) - 1; rows.push({ cls: "hunk" }); continue; }
    if (line.startsWith("-")) dels.push(line.slice(1));
    else if (line.startsWith("+")) adds.push(line.slice(1));
    else if (line.startsWith(" ")) { flush(); rows.push({ cls: "ctx", l: line.slice(1), r: line.slice(1), ln: ++ln, rn: ++rn }); }
  }
  flush();
  return el("table", { class: "sbs", id: "diff-sbs" },
    el("colgroup", {}, el("col", { class: "c-ln" }), el("col", {}), el("col", { class: "c-ln" }), el("col", {})),
    el("tr", {}, el("th", { colspan: 2 }, "Live"), el("th", { colspan: 2 }, "After an apply of Git")),
    rows.map((r) => r.cls === "hunk" ? el("tr", { class: "hunk" }, el("td", { colspan: 4 }, "⋯"))
      : el("tr", { class: r.cls },
        el("td", { class: "ln" }, String(r.ln)), el("td", { class: "l" + (r.l === undefined ? " empty" : "") }, r.l ?? ""),
        el("td", { class: "ln" }, String(r.rn)), el("td", { class: "r" + (r.r === undefined ? " empty" : "") }, r.r ?? ""))));
}

// eventsTable lists Events, newest first; withObject adds the object's column.
export function eventsTable(events, withObject) {
  if (!events.length) return el("p", { class: "muted" }, "No events.");
  return el("table", { class: "events" },
    el("tr", {}, ["Last seen", "Type", "Reason", withObject ? "Object" : null, "Message"].filter(Boolean).map((h) => el("th", {}, h))),
    events.map((e) => el("tr", { class: e.type === "Warning" ? "warning" : "" }, el("td", {}, ago(e.lastSeen)), el("td", {}, e.type), el("td", {}, e.reason),
      withObject ? el("td", {}, `${e.object.kind}/${e.object.namespace ? e.object.namespace + "/" : ""}${e.object.name}`) : null,
      el("td", {}, e.message + (e.count > 1 ? ` (×${e.count})` : "")))));
}
