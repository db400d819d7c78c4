// bench-graph.mjs times the resource graph of a large Sync in Debian's chromium, for
// BenchmarkGraph (dashboard/bench_graph_test.go). Each round:
//
//   load-to-graph-ms     from navigating to the Sync's page to its graph in the page (the
//                        view read from the API, laid out and drawn; groups collapsed)
//   expand-all-draw-ms   from a click on "Expand groups" to the frame after it painted:
//                        every node and edge of the Sync laid out, built and rendered
//   expand-all-js-ms     the script's part of it (layout and SVG built: the page's
//                        performance measure "olmsync-resources-draw")
//
// and it prints the median of each over ROUNDS rounds, with the nodes drawn collapsed and
// expanded. A first load warms chromium itself (its start is not the dashboard's).
// Environment: DASHBOARD_URL, SYNC (ns/name), OBJECTS (the objects the Sync's graph has),
// ROUNDS, CHROMIUM, ARTIFACTS (optional: a screenshot of each state).
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const env = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
const url = env("DASHBOARD_URL");
const [syncNS, syncName] = env("SYNC").split("/");
const objects = Number(env("OBJECTS"));
const rounds = Number(process.env.ROUNDS || 5);
const userDataDir = mkdtempSync(join(tmpdir(), "olmsync-bench-graph-"));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: env("CHROMIUM"), headless: true, viewport: { width: 1600, height: 1000 },
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const page = context.pages()[0] || (await context.newPage());
page.setDefaultTimeout(120_000);
const syncURL = `${url}/#/syncs/${syncNS}/${syncName}`;
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const series = { "load-to-graph-ms": [], "expand-all-draw-ms": [], "expand-all-js-ms": [] };
let collapsed = 0, expanded = 0, edges = 0;
try {
  await page.goto(syncURL);
  await page.waitForSelector("#graph-area svg .gnode");
  for (let i = 0; i < rounds; i++) {
    await page.goto("about:blank");
    const since = performance.now();
    await page.goto(syncURL);
    await page.waitForSelector("#graph-area svg .gnode");
    series["load-to-graph-ms"].push(performance.now() - since);
    collapsed = await page.locator("#graph-area .gnode").count();
    if (i === 0 && process.env.ARTIFACTS) await page.screenshot({ path: join(process.env.ARTIFACTS, "bench-graph-collapsed.png") });
    const t = await page.evaluate(async () => {
      performance.clearMeasures("olmsync-resources-draw");
      const t0 = performance.now();
      document.getElementById("graph-expand").click();
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      const total = performance.now() - t0;
      const js = performance.getEntriesByName("olmsync-resources-draw").at(-1).duration;
      return { total, js, nodes: document.querySelectorAll("#graph-area .gnode").length, edges: document.querySelectorAll("#graph-area path.edge").length };
    });
    series["expand-all-draw-ms"].push(t.total);
    series["expand-all-js-ms"].push(t.js);
    expanded = t.nodes;
    edges = t.edges;
    if (i === 0 && process.env.ARTIFACTS) await page.screenshot({ path: join(process.env.ARTIFACTS, "bench-graph-expanded.png") });
  }
  // The Sync, its apps and every object: the benchmark is of what it says it is.
  if (expanded < objects) throw new Error(`expanded, ${expanded} nodes are drawn, want at least ${objects}`);
  for (const [name, xs] of Object.entries(series)) {
    console.log(`${name} rounds: ${xs.map((x) => x.toFixed(1)).join(" ")}`);
    console.log(`figure ${name} ${median(xs).toFixed(1)}`);
  }
  console.log(`figure collapsed-nodes ${collapsed}`);
  console.log(`figure expanded-nodes ${expanded}`);
  console.log(`figure expanded-edges ${edges}`);
} catch (err) {
  console.error(String(err.stack || err));
  process.exitCode = 1;
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
