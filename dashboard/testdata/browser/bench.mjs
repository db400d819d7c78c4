// bench.mjs times the dashboard's page in Debian's chromium, for BenchmarkDashboard:
// from navigation to the list of every Sync drawn, from navigation to a Sync's view drawn,
// and from a status change (the Go side patches a Sync's status after this script prints
// "ready-for-update") to the page showing it, through the stream; and how many of the
// list's tiles do not fit on a full-HD screen. Environment: DASHBOARD_URL, NAMESPACE, SYNC
// (ns/name), COUNT (Syncs expected), CHROMIUM, ARTIFACTS (optional: a screenshot of the list).
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const env = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
const url = env("DASHBOARD_URL");
const [syncNS, syncName] = env("SYNC").split("/");
const count = Number(env("COUNT"));
const userDataDir = mkdtempSync(join(tmpdir(), "olmsync-bench-"));
// A full-HD screen: the list of 200 apps is to fit on one.
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: env("CHROMIUM"), headless: true, viewport: { width: 1920, height: 1080 },
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const page = await context.newPage();
const figure = (name, since) => console.log(`figure ${name} ${(performance.now() - since).toFixed(1)}`);
const lines = createInterface({ input: process.stdin });
const nextLine = () => new Promise((resolve) => lines.once("line", resolve));
try {
  // A first load warms chromium itself (its start is not the dashboard's).
  await page.goto(url + "/#/");
  await page.waitForSelector(".tile");
  let since = performance.now();
  await page.goto(`${url}/#/?namespace=${env("NAMESPACE")}`);
  await page.reload();
  await page.waitForFunction((n) => document.querySelectorAll(".tile").length >= n, count);
  figure("list-render-ms", since);
  // How many tiles are below the first screen (0: all fit on it).
  console.log(`figure tiles-below-screen ${await page.evaluate(() => [...document.querySelectorAll(".tile")].filter((t) => t.getBoundingClientRect().bottom > innerHeight).length)}`);
  if (process.env.ARTIFACTS) await page.screenshot({ path: join(process.env.ARTIFACTS, "bench-list-200.png") });

  since = performance.now();
  await page.goto(`${url}/#/syncs/${syncNS}/${syncName}`);
  await page.waitForSelector('.gnode[data-kind="ClusterServiceVersion"][data-phase="Succeeded"]');
  figure("view-render-ms", since);

  await page.goto(`${url}/#/?namespace=${env("NAMESPACE")}`);
  await page.waitForFunction((n) => document.querySelectorAll(".tile").length >= n, count);
  console.log("ready-for-update");
  await nextLine();
  since = performance.now();
  await page.waitForSelector(`.tile[data-sync="${syncNS}/${syncName}"][data-app="team"][data-health="Degraded"]`);
  figure("update-on-page-ms", since);
} catch (err) {
  console.error(String(err.stack || err));
  process.exitCode = 1;
} finally {
  lines.close();
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
