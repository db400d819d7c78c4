// Browser test of olmsync's dashboard, run by dashboard/browser_test.go against a manager
// on envtest with a git server on loopback. It drives Debian's chromium through
// playwright-core (no browser download) and exits non-zero on the first failed check.
//
// Environment: DASHBOARD_URL, SYNC (namespace/name), TEAM_NS, VIEWER_TOKEN (may read,
// may not approve), APPROVER_TOKEN (may approve), ARTIFACTS (screenshots), CHROMIUM.

import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const url = env("DASHBOARD_URL");
const [syncNS, syncName] = env("SYNC").split("/");
const teamNS = env("TEAM_NS");
const artifacts = env("ARTIFACTS");
const timeout = 90_000;

let step = "start";
const check = (ok, what) => {
  if (!ok) throw new Error(`${step}: ${what}`);
};

const userDataDir = mkdtempSync(join(tmpdir(), "olmsync-chromium-"));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 1400, height: 1000 },
});
const page = context.pages()[0] || (await context.newPage());
page.setDefaultTimeout(timeout);
const consoleErrors = [];
// The refusals this test provokes (401, 403) are logged by chromium as failed loads;
// anything else logged as an error, and every uncaught exception, fails the test.
page.on("console", (m) => { if (m.type() === "error" && !/status of 40[13]/.test(m.text())) consoleErrors.push(m.text()); });
page.on("pageerror", (e) => consoleErrors.push(String(e)));
// stillPending asks the API, as the page does, whether the team's InstallPlan still
// waits for approval.
const stillPending = () => page.evaluate(async ([ns, name, team]) => {
  const token = sessionStorage.getItem("olmsync.token");
  const r = await fetch(`/api/v1/syncs/${ns}/${name}`, { headers: token ? { Authorization: "Bearer " + token } : {} });
  const v = await r.json();
  return v.approvalsPending.some((p) => p.namespace === team);
}, [syncNS, syncName, teamNS]);
const shot = (name) => page.screenshot({ path: join(artifacts, name + ".png"), fullPage: true });
// figure prints a time the closing notes quote: from an action to the page showing it.
const figure = (name, since) => console.log(`figure ${name} ${(performance.now() - since).toFixed(0)} ms`);

try {
  step = "the list shows a Synced/Healthy and a Degraded app";
  let since = performance.now();
  await page.goto(url + "/#/");
  const card = `.sync-card[data-sync="${syncNS}/${syncName}"]`;
  await page.waitForSelector(`${card} .app[data-app="cluster-scope"][data-sync-status="Synced"][data-health="Healthy"]`);
  await page.waitForSelector(`${card} .app[data-app="broken"][data-health="Degraded"]`);
  await page.waitForSelector(`${card} .app[data-app="team"][data-health="WaitingForApproval"]`);
  figure("list-first-render", since);
  check((await page.textContent(`${card} .commit`)).includes("initial"), "the card names the commit");
  await shot("01-list");

  step = "a filter goes into the URL and keeps the matching app";
  await page.selectOption("#filter-health", "Degraded");
  await page.waitForFunction(() => location.hash.includes("health=Degraded"));
  await page.waitForFunction((c) => document.querySelectorAll(`${c} .app`).length === 1, card);
  check(await page.isVisible(`${card} .app[data-app="broken"]`), "only the broken app is listed");
  await page.reload();
  await page.waitForSelector(`${card} .app[data-app="broken"]`);
  check((await page.inputValue("#filter-health")) === "Degraded", "the filter survives a reload");
  await shot("02-list-degraded");

  step = "the tree shows Subscription → InstallPlan → CSV with OLM's phase";
  since = performance.now();
  await page.goto(`${url}/#/syncs/${syncNS}/${syncName}`);
  const sub = `li:has(> .node[data-kind="Subscription"][data-name="widget"])`;
  const plan = `${sub} li:has(> .node[data-kind="InstallPlan"][data-phase="RequiresApproval"])`;
  await page.waitForSelector(plan);
  figure("sync-view-first-render", since);
  await page.waitForSelector(`${plan} .node[data-kind="ClusterServiceVersion"][data-name="widget.v1.0.0"]`);
  await page.waitForSelector(`li:has(> .node[data-kind="Subscription"][data-name="ghost"]) > .node[data-health="Degraded"] .badge.reason`);
  await shot("03-tree-waiting-for-approval");

  step = "a violation links to its file and line";
  const link = page.locator(`#violations tr[data-rule="OP011"] a.location`);
  check((await link.textContent()) === "broken/extra-namespace.yaml:1", "the violation names broken/extra-namespace.yaml:1");
  await link.click();
  await page.waitForSelector("#file-view #L1.hl");
  check((await page.textContent("#L1 .code")) === "apiVersion: v1", "line 1 of the file is shown and marked");
  await shot("04-violation-file");

  step = "the upgrade graph of the Subscription";
  await page.goto(`${url}/#/syncs/${syncNS}/${syncName}`);
  await page.click(`button[data-graph="${teamNS}/widget"]`);
  await page.waitForSelector(`#graph svg g[data-node="widget.v1.1.0"].head`);
  await page.waitForSelector(`#graph svg g[data-node="widget.v1.0.0"]`);
  check((await page.locator("#graph svg path.edge.replaces").count()) === 1, "one replaces edge");
  await shot("05-graph");

  // Marks this page: a reload would lose it.
  await page.evaluate(() => { window.__olmsyncNoReload = true; });
  const approve = `button[data-approve^="${teamNS}/"]`;

  step = "approving without a token is refused and changes nothing";
  await page.click(approve);
  await page.waitForSelector("#token-form:not([hidden])");
  check((await page.textContent("#message")).includes("needs a token"), "the page asks for a token");
  await page.click("#token-cancel");
  const direct = await page.evaluate(async (sel) => {
    const [ns, name] = document.querySelector(sel).dataset.approve.split("/");
    const r = await fetch(`/api/v1/installplans/${ns}/${name}/approve`, { method: "POST", headers: { "X-Olmsync-Request": "1" } });
    return r.status;
  }, approve);
  check(direct === 401, `the API answers a tokenless approval with 401, not ${direct}`);
  check(await stillPending(), "the API still lists the InstallPlan as waiting for approval");
  check(await page.isVisible(plan), "the InstallPlan still waits for approval");

  step = "approving with a token lacking the right is refused and changes nothing";
  await page.click("#token-button");
  await page.fill("#token-input", env("VIEWER_TOKEN"));
  await page.click("#token-save");
  await page.waitForFunction(() => document.getElementById("who").textContent.includes(":viewer"));
  await page.click(approve);
  await page.waitForSelector("#message.error");
  const refused = await page.textContent("#message");
  check(refused.includes("refused") && refused.includes("may not update"), `the page says the approval was refused: ${refused}`);
  check(await stillPending(), "the API still lists the InstallPlan as waiting for approval");
  check(await page.isVisible(plan), "the InstallPlan still waits for approval");
  await shot("06-approval-refused");

  step = "approving with an allowed token installs the CSV and the page follows without reload";
  await page.click("#token-button");
  await page.fill("#token-input", env("APPROVER_TOKEN"));
  await page.click("#token-save");
  await page.waitForFunction(() => document.getElementById("who").textContent.includes(":approver"));
  since = performance.now();
  await page.click(approve);
  await page.waitForSelector("#message.ok");
  figure("approve-answered", since);
  check((await page.textContent("#message")).includes(":approver"), "the page names who approved");
  const installed = `${sub} .node[data-kind="ClusterServiceVersion"][data-name="widget.v1.0.0"][data-phase="Succeeded"]`;
  await page.waitForSelector(installed);
  // From the click to the page showing the installed CSV, through the embedded OLM's
  // install and the stream (no reload).
  figure("approve-to-csv-succeeded-on-page", since);
  check((await page.textContent(installed)).includes("InstallSucceeded"), "the CSV shows OLM's reason InstallSucceeded");
  check(await page.evaluate(() => window.__olmsyncNoReload === true), "the page was not reloaded");
  await shot("07-approved-installed");

  check(consoleErrors.length === 0, "console errors: " + consoleErrors.join("; "));
  console.log("browser checks passed");
} catch (err) {
  await shot("failure").catch(() => {});
  console.error(String(err.stack || err));
  process.exitCode = 1;
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
