// Screens split off the page (xtask/src/split.rs): Settings and the generation page are wasm
// chunks the page fetches the first time each opens. Opened cold (a fresh browser, each chunk
// held back 700 ms by the server so the wait is visible), each shows its loading line, then
// itself, and neither the home page nor a sample's classroom fetched any chunk. After one visit
// the service worker holds every chunk, so both open with the network cut, and so does the
// classroom's export panel.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { serveDist, launchBrowser, openPage, DIST } from "./support.mjs";

const SAMPLE = "sample-transformer-en";
const HOLD_MS = 700;
let server;
let browser;
/** Every request the static server received, in order. */
const received = [];
/** While set, the server drops every connection unanswered, like a cut network. */
let cut = false;

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

test("the home page and a classroom load no screen's chunk; Settings and the generation page each load theirs on first use, with a loading line", async () => {
  for (const [name, path, shown] of [["the home page", "/", "prompt-input"], ["a classroom", `/classroom/${SAMPLE}`, "slide-canvas"]]) {
    const { context, page, problems } = await openPage(browser, { serviceWorkers: "block" });
    const start = received.length;
    await page.goto(server.url + path);
    await page.getByTestId(shown).waitFor();
    await page.waitForLoadState("networkidle");
    assert.deepEqual(chunksSince(start), [], `${name} fetched a split screen`);
    assert.deepEqual(problems, [], name);
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

test("after one visit, Settings, the generation page and a classroom's export panel open with the network cut", { timeout: 120000 }, async () => {
  const { context, page, problems } = await openPage(browser);
  await page.goto(server.url);
  await page.getByTestId("prompt-input").waitFor();
  await page.waitForFunction(() => navigator.serviceWorker?.controller != null, null, { timeout: 20000 });
  const cached = await page.evaluate(async () => {
    const names = await caches.keys();
    const cache = await caches.open(names.find((n) => n.startsWith("aula-shell-")));
    return (await cache.keys()).map((r) => new URL(r.url).pathname);
  });
  assert.ok(cached.filter((p) => isChunk(p)).length >= 2, `every split screen is precached: ${cached}`);

  await context.setOffline(true);
  cut = true;
  try {
    for (const screen of [...SCREENS, { path: `/classroom/${SAMPLE}`, shown: "export-panel" }]) {
      await page.goto(server.url + screen.path);
      await page.getByTestId(screen.shown).waitFor({ timeout: 15000 });
    }
  } finally {
    cut = false;
  }
  assert.deepEqual(problems, []);
  await context.close();
});
