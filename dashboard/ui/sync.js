// The application view of one Sync: actions, the resource tree with OLM's chain, a
// Subscription's upgrade graph, an object's diff against Git, violations, history and
// events; and the file view a violation links to.

import { api } from "./api.js";
import { act } from "./app.js";
import { el, clear, badge, ago, short } from "./dom.js";
import { drawGraph } from "./graph.js";

const enc = encodeURIComponent;

// The panels the user opened (a graph, a diff) stay open when the view is drawn again.
const open = { graph: null, diff: null };

export async function renderSync(main, ns, name) {
  const base = `/api/v1/syncs/${enc(ns)}/${enc(name)}`;
  const [v, events] = await Promise.all([api(base), api(base + "/events").catch((e) => ({ error: e.message }))]);
  const s = v.summary;
  if (open.sync !== `${ns}/${name}`) {
    open.graph = open.diff = null;
    open.sync = `${ns}/${name}`;
  }
  const ready = (v.conditions || []).find((c) => c.type === "Ready");
  const view = el("div", { id: "sync-view", "data-sync": `${ns}/${name}` },
    el("section", { class: "panel" },
      el("h2", {}, `${ns}/${name} `, badge(s.sync), " ", badge(s.health), s.suspended ? [" ", badge("Suspended")] : null),
      el("div", { class: "meta" }, `${s.url}${s.ref ? " @ " + s.ref : ""}${s.path ? " · " + s.path : ""}`),
      el("div", {}, "Revision ", el("code", { id: "revision" }, short(s.revision) || "none"),
        s.commit ? el("span", { class: "meta" }, ` “${s.commit.subject}” by ${s.commit.author}`) : null),
      ready ? el("div", { id: "ready" }, "Ready ", badge(ready.status), " ", badge(ready.reason, "reason"), " ", el("span", { class: "meta" }, ready.message)) : null,
      el("div", { class: "meta" }, s.lastSync ? `Last sync ${ago(s.lastSync)}, took ${s.lastSyncDuration}, ${s.lastSyncResult}` : "Never synced"),
      el("div", { class: "actions" },
        el("button", { id: "action-sync", onclick: () => act("Sync now", base + "/reconcile") }, "Sync now"),
        s.suspended
          ? el("button", { id: "action-resume", onclick: () => act("Resume", base + "/resume") }, "Resume")
          : el("button", { id: "action-suspend", onclick: () => act("Suspend", base + "/suspend") }, "Suspend"),
        v.approvalsPending.map((p) => el("button", { class: "approve", "data-approve": `${p.namespace}/${p.name}`,
          onclick: () => act(`Approve InstallPlan ${p.namespace}/${p.name}`, `/api/v1/installplans/${enc(p.namespace)}/${enc(p.name)}/approve`) },
        `Approve InstallPlan ${p.name}`)))),
    el("section", { class: "panel", id: "tree" }, el("h2", {}, "Resources"), el("ul", { class: "tree" }, treeItem(v.tree, ns, name))),
    el("section", { class: "panel", id: "graph", hidden: !open.graph }),
    el("section", { class: "panel", id: "diff", hidden: !open.diff }),
    violationsPanel(v, ns, name),
    historyPanel(v.history),
    eventsPanel(events));
  clear(main).append(view);
  if (open.graph) showGraph(open.graph.ns, open.graph.name, false);
  if (open.diff) showDiff(base, open.diff, false);
}

function treeItem(n, ns, name) {
  const node = el("div", { class: "node", "data-kind": n.kind, "data-name": n.name, "data-health": n.health || "", "data-phase": n.phase || "" },
    el("span", { class: "kind" }, n.kind),
    el("span", { class: "name" }, (n.namespace && n.kind !== "App" ? n.namespace + "/" : "") + (n.name || "(app unknown)")),
    badge(n.sync), badge(n.health), n.phase ? badge(n.phase, "phase") : null, n.reason ? badge(n.reason, "reason") : null,
    n.note ? el("span", { class: "note" }, `(${n.note})`) : null,
    n.message ? el("span", { class: "nmsg" }, n.message) : null,
    n.kind === "Subscription" && !n.note ? el("button", { class: "small", "data-graph": `${n.namespace}/${n.name}`, onclick: () => showGraph(n.namespace, n.name, true) }, "graph") : null,
    n.apiVersion && !["App", "Sync"].includes(n.kind) && n.sync ? el("button", { class: "small", "data-diff": `${n.kind}/${n.namespace || ""}/${n.name}`,
      onclick: () => showDiff(`/api/v1/syncs/${enc(ns)}/${enc(name)}`, { kind: n.kind, namespace: n.namespace || "", name: n.name }, true) }, "diff") : null);
  return el("li", {}, node, n.children && n.children.length ? el("ul", {}, n.children.map((c) => treeItem(c, ns, name))) : null);
}

async function showGraph(ns, name, scroll) {
  open.graph = { ns, name };
  const panel = document.getElementById("graph");
  if (!panel) return;
  panel.hidden = false;
  clear(panel).append(el("h2", {}, `Upgrade graph of Subscription ${ns}/${name}`), el("p", { class: "muted" }, "Loading…"));
  try {
    const g = await api(`/api/v1/subscriptions/${enc(ns)}/${enc(name)}/graph`);
    clear(panel).append(
      el("h2", {}, `Upgrade graph of Subscription ${ns}/${name}`),
      el("div", { class: "meta" }, `package ${g.package}, channel ${g.channel}, catalog ${g.catalog}`),
      el("div", { id: "graph-path" }, `installed ${g.installed || "none"} → next ${g.next || "none"} → head ${g.head || "?"}`),
      drawGraph(g));
  } catch (err) {
    clear(panel).append(el("h2", {}, `Upgrade graph of Subscription ${ns}/${name}`), el("p", { class: "muted" }, err.message));
  }
  if (scroll) panel.scrollIntoView({ block: "nearest" });
}

async function showDiff(base, obj, scroll) {
  open.diff = obj;
  const panel = document.getElementById("diff");
  if (!panel) return;
  panel.hidden = false;
  const title = `Diff of ${obj.kind} ${obj.namespace ? obj.namespace + "/" : ""}${obj.name} against Git`;
  clear(panel).append(el("h2", {}, title), el("p", { class: "muted" }, "Fetching, rendering and dry-running…"));
  try {
    const r = await api(`${base}/diff?kind=${enc(obj.kind)}&namespace=${enc(obj.namespace)}&name=${enc(obj.name)}`);
    const o = r.objects[0];
    clear(panel).append(el("h2", {}, title),
      el("div", {}, badge(o.action, "phase"), " ", o.message || (o.fields || []).join(", ")),
      o.diff ? el("pre", { class: "diff" }, o.diff.split("\n").map((l) =>
        el("span", { class: l.startsWith("+") ? "add" : l.startsWith("-") ? "del" : "" }, l + "\n"))) : el("p", { class: "muted" }, "No difference."));
  } catch (err) {
    clear(panel).append(el("h2", {}, title), el("p", { class: "muted" }, err.message));
  }
  if (scroll) panel.scrollIntoView({ block: "nearest" });
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

function eventsPanel(events) {
  if (events.error) return el("section", { class: "panel", id: "events" }, el("h2", {}, "Events"), el("p", { class: "muted" }, events.error));
  return el("section", { class: "panel", id: "events" },
    el("h2", {}, "Events"),
    events.length ? el("table", {},
      el("tr", {}, ["Last seen", "Type", "Reason", "Object", "Message"].map((h) => el("th", {}, h))),
      events.map((e) => el("tr", {}, el("td", {}, ago(e.lastSeen)), el("td", {}, e.type), el("td", {}, e.reason),
        el("td", {}, `${e.object.kind}/${e.object.namespace ? e.object.namespace + "/" : ""}${e.object.name}`), el("td", {}, e.message))))
      : el("p", { class: "muted" }, "No events."));
}

// renderFile shows a file of the Sync's repository at its fetched revision, the line of
// ?line= marked and scrolled to.
export async function renderFile(main, ns, name, query) {
  const path = query.get("path") || "";
  const line = Number(query.get("line") || 0);
  const f = await api(`/api/v1/syncs/${enc(ns)}/${enc(name)}/file?path=${enc(path)}`);
  const view = el("div", { id: "file-view" },
    el("section", { class: "panel" },
      el("h2", {}, el("a", { href: `#/syncs/${enc(ns)}/${enc(name)}` }, `${ns}/${name}`), ` · ${f.path}`),
      el("div", { class: "meta" }, `at ${f.revision}${f.truncated ? " (truncated)" : ""}`)),
    el("div", { class: "file" }, f.lines.map((text, i) =>
      el("div", { class: "line" + (i + 1 === line ? " hl" : ""), id: "L" + (i + 1) }, el("span", { class: "ln" }, String(i + 1)), el("span", { class: "code" }, text)))));
  clear(main).append(view);
  const target = document.getElementById("L" + line);
  if (target) target.scrollIntoView({ block: "center" });
}
