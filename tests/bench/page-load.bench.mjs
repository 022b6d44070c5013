// Page-load bench: cold loads of the home page and of a sample's classroom, each in a fresh
// browser context (nothing cached) from a gzip static host, several runs interleaved between
// this build (AULA_DIST) and a baseline build, reporting medians. The baseline is
// AULA_BASELINE_DIST when it is set, otherwise the same build unsplit: the page in one module
// (the player a split build makes for exports, `xtask/src/split.rs`) served in place of the
// split page, with everything else the same.
//   - time to usable: the prompt box shown (home); the first slide shown (classroom). Taken in
//     the page, from the navigation's start to the moment the frame that shows it was presented
//     on screen (Element Timing, as first contentful paint is timed): Playwright's own wait polls
//     from outside with a growing backoff (0, 20, 50, 100, 100, then 500 ms), so the moment it
//     notices says more about its polling than about the page. That moment is printed beside it
//     ("seen by the harness").
//   - first contentful paint
//   - bytes on the wire by kind (wasm, js, css, other), as the browser received them
// Prints `page-load: … baseline …; ratio R` lines for `cargo xtask bench`. A build without a
// player (a debug build) has no unsplit twin: then the baseline is this build's own home page,
// so the classroom line still says how much more than the home page it costs.
import { createServer } from "node:http";
import { readdir, readFile, stat } from "node:fs/promises";
import { extname, join, normalize } from "node:path";
import { gzipSync } from "node:zlib";
import { launchBrowser } from "../e2e/support.mjs";

const RUNS = Number(process.env.AULA_BENCH_RUNS ?? 7);
const SAMPLE = "sample-transformer-en";
const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".wasm": "application/wasm",
  ".css": "text/css",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".webmanifest": "application/manifest+json",
};

/** A static host for `root` that gzips every answer once (as a CDN would) and answers unknown
 *  paths with index.html (`index`, when given, instead of the file's). */
async function gzipHost(root, index) {
  const cache = new Map();
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, "http://localhost");
    let file = join(root, normalize(decodeURIComponent(url.pathname)).replace(/^(\.\.[/\\])+/, ""));
    try {
      if (!(await stat(file)).isFile()) file = join(root, "index.html");
    } catch {
      file = join(root, "index.html");
    }
    const page = index !== undefined && file === join(root, "index.html");
    if (!cache.has(file)) cache.set(file, gzipSync(page ? index : await readFile(file), { level: 9 }));
    res.writeHead(200, {
      "content-type": MIME[extname(file)] ?? "application/octet-stream",
      "content-encoding": "gzip",
      "cache-control": "no-store",
    });
    res.end(cache.get(file));
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((ok) => server.close(ok)) };
}

const kindOf = (url) => {
  const path = new URL(url).pathname;
  if (path.endsWith(".wasm")) return "wasm";
  if (path.endsWith(".js") || path.endsWith(".mjs")) return "js";
  if (path.endsWith(".css")) return "css";
  return "other";
};

/** One cold load of `path`, waiting for `ready` (a selector); its timings and bytes. */
async function coldLoad(browser, base, path, ready) {
  const context = await browser.newContext({ serviceWorkers: "block" });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  const urls = new Map();
  const bytes = { wasm: 0, js: 0, css: 0, other: 0 };
  cdp.on("Network.responseReceived", (e) => urls.set(e.requestId, e.response.url));
  cdp.on("Network.loadingFinished", (e) => {
    const url = urls.get(e.requestId);
    if (url) bytes[kindOf(url)] += e.encodedDataLength;
  });
  await page.addInitScript(usableMark, ready);
  const start = Date.now();
  await page.goto(base + path);
  await page.waitForSelector(ready, { state: "visible", timeout: 60_000 });
  const seen = Date.now() - start;
  await page
    .waitForFunction(() => window.__aulaUsable !== undefined, null, { timeout: 15_000 })
    .catch(() => {
      throw new Error(`${path}: ${ready} is shown, but the browser reported no paint of it (Element Timing)`);
    });
  const { usable, fcp } = await page.evaluate(() => ({
    usable: window.__aulaUsable,
    fcp: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? NaN,
  }));
  await context.close();
  return { usable: Math.round(usable), seen, fcp, bytes };
}

/** Runs in the page before its own scripts: as soon as `ready` is in the document (before it
 *  can be painted), marks it, its parent and everything in that for Element Timing, and stores
 *  in `window.__aulaUsable` the moment the first of them was presented on screen (ms from the
 *  navigation's start, as first contentful paint is). The parent: a box like the prompt's has
 *  no text of its own, its form has. */
function usableMark(ready) {
  // Until one of them is painted: the page may write them again (a slide's HTML set anew) and
  // the new elements need the mark too.
  const observer = new MutationObserver(() => {
    const element = document.querySelector(ready);
    if (!element) return;
    const parent = element.parentElement ?? element;
    for (const each of [parent, ...parent.querySelectorAll(":not([elementtiming])")]) {
      each.setAttribute("elementtiming", "aula-usable");
    }
  });
  observer.observe(document, { childList: true, subtree: true });
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.identifier === "aula-usable" && window.__aulaUsable === undefined) {
        window.__aulaUsable = entry.renderTime || entry.loadTime;
        observer.disconnect();
      }
    }
  }).observe({ type: "element", buffered: true });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

/** This build's index.html loading the player (the page in one module) instead of the split
 *  page, or `undefined` when the build has no player. */
async function unsplitIndex(root) {
  const names = await readdir(root);
  const player = names.find((n) => /^aula-player-[0-9a-f]{16}\.js$/.test(n));
  const app = names.find((n) => /^aula-app-[0-9a-f]+\.js$/.test(n));
  if (!player || !app) return undefined;
  const html = await readFile(join(root, "index.html"), "utf8");
  const [appStem, playerStem] = [app, player].map((n) => n.replace(/\.js$/, ""));
  if (!html.includes(appStem)) throw new Error(`index.html does not load ${app}`);
  // The integrity hashes are the split page's; the player's files have their own. The player
  // needs no split loader.
  return html
    .replace(/<link rel="modulepreload" href="\/aula-split-[0-9a-f]+\.js"[^>]*>/, "")
    .replaceAll(appStem, playerStem)
    .replace(/ integrity="[^"]*"/g, "");
}

const builds = [{ name: "this build", root: process.env.AULA_DIST }];
if (!builds[0].root) throw new Error("AULA_DIST is not set");
if (process.env.AULA_BASELINE_DIST) builds.push({ name: "baseline build", root: process.env.AULA_BASELINE_DIST });
else {
  const index = await unsplitIndex(builds[0].root);
  if (index) builds.push({ name: "this build unsplit", root: builds[0].root, index });
}

const loads = [
  { name: "home", path: "/", ready: "[data-testid=prompt-input]" },
  { name: "classroom", path: `/classroom/${SAMPLE}`, ready: "[data-testid=slide-canvas] .slide-elements > *" },
];

const hosts = await Promise.all(builds.map((b) => gzipHost(b.root, b.index)));
const browser = await launchBrowser();
const results = builds.map(() => Object.fromEntries(loads.map((l) => [l.name, []])));
try {
  // Interleaved: each run loads every page of every build before the next run starts.
  for (let run = 0; run < RUNS; run++) {
    for (const [b, host] of hosts.entries()) {
      for (const load of loads) results[b][load.name].push(await coldLoad(browser, host.url, load.path, load.ready));
    }
  }
} finally {
  await browser.close();
  await Promise.all(hosts.map((h) => h.close()));
}

const summary = (runs) => ({
  usable: median(runs.map((r) => r.usable)),
  seen: median(runs.map((r) => r.seen)),
  fcp: median(runs.map((r) => r.fcp)),
  bytes: Object.fromEntries(["wasm", "js", "css", "other"].map((k) => [k, median(runs.map((r) => r.bytes[k]))])),
});
const ours = Object.fromEntries(loads.map((l) => [l.name, summary(results[0][l.name])]));
for (const load of loads) {
  const s = ours[load.name];
  const wire = Object.entries(s.bytes).map(([k, v]) => `${k} ${kb(v)}`).join(", ");
  console.log(`page-load ${load.name} (${RUNS} cold runs, medians): usable ${s.usable} ms (seen by the harness ${s.seen} ms), first paint ${s.fcp.toFixed(0)} ms, on the wire ${wire}`);
}
if (builds.length > 1) {
  const theirs = Object.fromEntries(loads.map((l) => [l.name, summary(results[1][l.name])]));
  for (const load of loads) {
    const [a, b] = [ours[load.name], theirs[load.name]];
    const total = (s) => Object.values(s.bytes).reduce((x, y) => x + y, 0);
    console.log(
      `page-load: ${load.name} usable = ${a.usable} ms, ${kb(total(a))}; baseline (${builds[1].name}) ${b.usable} ms, ${kb(total(b))}; ratio ${(a.usable / b.usable).toFixed(2)} (bytes ${(total(a) / total(b)).toFixed(2)})`,
    );
  }
} else {
  const [home, room] = [ours.home, ours.classroom];
  console.log(
    `page-load: first slide = ${room.usable} ms; baseline (the home page's prompt box, same run) ${home.usable} ms; ratio ${(room.usable / home.usable).toFixed(2)}`,
  );
}
