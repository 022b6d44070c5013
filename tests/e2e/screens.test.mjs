// Code split off the page (xtask/src/split.rs): Settings, the generation page, the live class
// and the workers' client are wasm chunks the page fetches the first time each is used. Opened
// cold (a fresh browser, each chunk held back 700 ms by the server so the wait is visible),
// each screen shows its loading line, then itself; the home page fetches only its library's, and a
// sample's classroom draws its first slide while the live class is still loading. After one
// visit the service worker holds every chunk, so with the network cut both screens open, the
// classroom's question box and export panel are there, and an export downloads.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { serveDist, launchBrowser, openPage, DIST } from "./support.mjs";

const SAMPLE = "sample-transformer-en";
/** Each part split off the page, with the chunks it loads (written by `xtask split-page`). */
const PARTS = JSON.parse(await readFile(join(DIST, "split-parts.json"), "utf8"));
const HOLD_MS = 700;
let server;
let browser;
/** Every request the static server received, in order. */
const received = [];
/** While set, the server drops every connection unanswered, like a cut network. */
let cut = false;
/** While set, the next chunk asked for is answered 404 (as after a deployment replaced it). */
let failNextChunk = false;

const isChunk = (url) => /^\/aula-split-[0-9a-f]{16}\.wasm$/.test(new URL(url, "http://x").pathname);

before(async () => {
  server = await serveDist({
    onRequest: (req, res) => {
      received.push(req.url);
      if (cut) {
        req.socket.destroy();
        return true;
      }
      if (!isChunk(req.url)) return false;
      if (failNextChunk) {
        failNextChunk = false;
        res.writeHead(404);
        res.end();
        return true;
      }
      // A slow network for the chunks only: the loading line must be seen.
      setTimeout(async () => {
        const body = await readFile(join(DIST, new URL(req.url, "http://x").pathname));
        res.writeHead(200, { "content-type": "application/wasm" });
        res.end(body);
      }, HOLD_MS);
      return true;
    },
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** The chunks requested since `from`. */
const chunksSince = (from) => received.slice(from).filter(isChunk);

const SCREENS = [
  { name: "Settings", path: "/settings", shown: "theme-choice" },
  { name: "the generation page", path: "/generate/gen-never-written", shown: "generate" },
];

test("the home page loads only its library's chunks, a classroom's first slide waits for none, its export loads with progress, and Settings and the generation page each load theirs on first use, with a loading line", async () => {
  {
    const { context, page, problems } = await openPage(browser, { serviceWorkers: "block" });
    const start = received.length;
    await page.goto(server.url);
    await page.getByTestId("prompt-input").waitFor();
    await page.waitForLoadState("networkidle");
    // Only the library's list, fetched once the page is drawn.
    const library = new Set(PARTS.library_body.map((name) => `/${name}`));
    assert.ok(library.size > 0, "the library's list is a part of its own");
    const fetched = chunksSince(start);
    assert.deepEqual(fetched.filter((path) => !library.has(path)), [], "the home page fetched another part's chunk");
    await page.getByTestId("library-empty").waitFor();
    assert.deepEqual(problems, [], "the home page");
    await context.close();
  }
  {
    // The live class's chunk is held back 700 ms: the slide is there before it, with the
    // question box's loading line, and the box comes once the chunk has.
    const { context, page, problems } = await openPage(browser, { serviceWorkers: "block" });
    const start = received.length;
    await page.goto(`${server.url}/classroom/${SAMPLE}`);
    await page.getByTestId("slide-canvas").waitFor();
    // The first slide's code shows at once as plain lines, highlighted once the typesetter's
    // chunk is there.
    const code = page.getByTestId("slide-canvas").locator(".el-code .code-line").first();
    await code.waitFor();
    assert.equal(await page.locator(".el-code [class^=tok-]").count(), 0, "the code was highlighted before its chunk");
    await page.getByTestId("screen-loading").waitFor({ timeout: 15000 });
    assert.equal(await page.getByTestId("ask-input").count(), 0, "the question box came before its chunk");
    await page.getByTestId("ask-input").waitFor({ timeout: 15000 });
    assert.equal(await page.getByTestId("screen-loading").count(), 0, "the live class's loading line stays");
    await page.locator(".el-code [class^=tok-]").first().waitFor({ timeout: 15000 });
    assert.ok(chunksSince(start).length >= 1, "the live class came with no chunk");
    // Every later formula and chart is typeset as it is drawn.
    await page.getByTestId("scene-button").nth(1).click();
    await page.getByTestId("slide-canvas").locator(".el-latex math").first().waitFor();
    await page.getByTestId("slide-canvas").locator(".el-chart svg").first().waitFor();
    assert.equal(await page.locator(".el-latex > code").count(), 0, "a formula was left as its source");
    // The export's code is a chunk too (with the files worker's client): the panel says it is
    // working while they load, then the file is saved.
    await page.getByTestId("export-panel").locator("summary").click();
    const download = page.waitForEvent("download", { timeout: 30000 });
    const beforeExport = received.length;
    await page.getByTestId("export-button").click();
    assert.equal(await page.getByTestId("export-status").textContent(), "Writing the file…");
    assert.match((await download).suggestedFilename(), /\.aula\.zip$/);
    await page.getByTestId("export-status").filter({ hasText: /^Saved/ }).waitFor();
    assert.ok(chunksSince(beforeExport).length >= 1, "the export came with no chunk");
    assert.deepEqual(problems, [], "a classroom");
    await context.close();
  }

  for (const screen of SCREENS) {
    const { context, page, problems } = await openPage(browser, { serviceWorkers: "block" });
    const from = received.length;
    await page.goto(server.url + screen.path);
    await page.getByTestId("screen-loading").waitFor({ timeout: 15000 });
    assert.equal(await page.getByTestId("screen-loading").getAttribute("role"), "status");
    await page.getByTestId(screen.shown).waitFor({ timeout: 15000 });
    assert.equal(await page.getByTestId("screen-loading").count(), 0, `${screen.name}: the loading line stays`);
    assert.ok(chunksSince(from).length >= 1, `${screen.name} came with no chunk of its own`);
    assert.deepEqual(problems, [], screen.name);
    await context.close();
  }
});

test("after one visit, Settings, the generation page, a classroom's question box and its export open with the network cut", { timeout: 120000 }, async () => {
  const { context, page, problems } = await openPage(browser);
  await page.goto(server.url);
  await page.getByTestId("prompt-input").waitFor();
  // Every chunk is held 700 ms here, and the browser fetches six at a time: precaching the
  // ~90 chunks takes ~11 s of it.
  await page.waitForFunction(() => navigator.serviceWorker?.controller != null, null, { timeout: 60000 });
  const cached = await page.evaluate(async () => {
    const names = await caches.keys();
    const cache = await caches.open(names.find((n) => n.startsWith("aula-shell-")));
    return (await cache.keys()).map((r) => new URL(r.url).pathname);
  });
  assert.ok(cached.filter((p) => isChunk(p)).length >= 2, `every split screen is precached: ${cached}`);

  await context.setOffline(true);
  cut = true;
  try {
    for (const screen of [...SCREENS, { path: `/classroom/${SAMPLE}`, shown: "ask-input" }]) {
      await page.goto(server.url + screen.path);
      await page.getByTestId(screen.shown).waitFor({ timeout: 15000 });
    }
    // The export's code and the files worker come from the cache too.
    await page.getByTestId("export-panel").locator("summary").click();
    const download = page.waitForEvent("download", { timeout: 20000 });
    await page.getByTestId("export-button").click();
    assert.match((await download).suggestedFilename(), /\.aula\.zip$/);
  } finally {
    cut = false;
  }
  assert.deepEqual(problems, []);
  await context.close();
});

test("a part whose chunk cannot be fetched reloads the page once, and then opens", async () => {
  const { context, page } = await openPage(browser, { serviceWorkers: "block" });
  let loads = 0;
  page.on("load", () => loads++);
  failNextChunk = true;
  await page.goto(`${server.url}/settings`);
  await page.getByTestId("theme-choice").waitFor({ timeout: 20000 });
  assert.equal(failNextChunk, false, "no chunk was asked for");
  assert.ok(loads >= 2, `the page was not reloaded (${loads} load)`);
  await context.close();
});
