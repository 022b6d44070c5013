// The library as a returning learner manages it: courses saved in IndexedDB (real records, as
// the storage crate writes them), searched, filtered and sorted; renamed, duplicated; deleted
// with everything they own and brought back with Undo; and Settings' "Free up space" leading
// to the largest first.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { serveDist, launchBrowser, openPage, DIST } from "./support.mjs";

const SHOTS = new URL("./artifacts/", import.meta.url).pathname;
const SAMPLE = JSON.parse(await readFile(join(DIST, "courses/transformer-en.json"), "utf8"));
const CHINESE = JSON.parse(await readFile(join(DIST, "courses/photosynthesis-zh.json"), "utf8"));
let server;
let browser;

before(async () => {
  await mkdir(SHOTS, { recursive: true });
  server = await serveDist();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** Runs `body(db)` with the app's database open, in the page. */
const inDb = (page, body, arg) =>
  page.evaluate(
    async ({ body, arg }) => {
      const db = await new Promise((ok, fail) => {
        const open = indexedDB.open("aula");
        open.onsuccess = () => ok(open.result);
        open.onerror = () => fail(open.error);
      });
      const run = new Function("db", "arg", `return (${body})(db, arg);`);
      try {
        return await run(db, arg);
      } finally {
        db.close();
      }
    },
    { body: body.toString(), arg },
  );

/** Writes records: [store, key, value] with value JSON-encoded as the app stores it. */
const put = (page, records) =>
  inDb(
    page,
    (db, records) =>
      new Promise((ok, fail) => {
        const tx = db.transaction([...new Set(records.map((r) => r[0]))], "readwrite");
        for (const [store, key, value] of records) tx.objectStore(store).put(JSON.stringify(value), key);
        tx.oncomplete = () => ok();
        tx.onerror = () => fail(tx.error);
      }),
    records,
  );

/** Every key of every store, as "store:key". */
const allKeys = (page) =>
  inDb(page, async (db) => {
    const out = [];
    for (const name of db.objectStoreNames) {
      const keys = await new Promise((ok, fail) => {
        const request = db.transaction(name).objectStore(name).getAllKeys();
        request.onsuccess = () => ok(request.result);
        request.onerror = () => fail(request.error);
      });
      for (const key of keys) out.push(`${name}:${key}`);
    }
    return out.sort();
  });

const course = (base, id, title, scenes) => ({ ...base, id, title, scenes: base.scenes.slice(0, scenes) });

/** Three courses; "tides" with a conversation, a resume point, a job record and an opening. */
async function seed(page) {
  await page.goto(server.url);
  await page.getByTestId("library-empty").waitFor();
  const session = "tides~1700000000000";
  await put(page, [
    ["courses", "tides", course(SAMPLE, "tides", "Tides and the Moon", 8)],
    ["courses", "volcanoes", course(SAMPLE, "volcanoes", "Volcanoes", 2)],
    ["courses", "guanghe", course(CHINESE, "guanghe", "光合作用入门", 3)],
    ["jobs", "tides", { course_id: "tides", request: { topic: "Tides" } }],
    ["sessions", session, { id: session, course_id: "tides", started_ms: 1700000000000, title: "Q", format: 1, compacted_through: 0 }],
    ["sessions", `${session}/e/0000000001`, { seq: 1, at_ms: 1700000000001, kind: "learner_message", text: "Why two tides?" }],
    ["sessions", "talk:tides", session],
    ["sessions", "resume:tides", { scene_id: SAMPLE.scenes[2].id, scene_ms: 1000 }],
    ["sessions", "opened:volcanoes", 1700000000000],
    ["sessions", "opened:tides", 1750000000000],
  ]);
  await page.reload();
  await page.getByTestId("library-list").waitFor();
}

const titles = (page) => page.getByTestId("library-card").locator("h3").allTextContents();
const card = (page, id) => page.locator(`[data-testid=library-card][data-course="${id}"]`);

test("the library searches, filters by language and sorts; each card says its size, progress and origin", async () => {
  const { context, page, problems } = await openPage(browser);
  await seed(page);
  // Last opened first; never opened last.
  assert.deepEqual(await titles(page), ["Tides and the Moon", "Volcanoes", "光合作用入门"]);
  const tides = card(page, "tides");
  assert.match(await tides.getByTestId("card-progress").textContent(), /Stopped at scene 3 of 8/);
  assert.match(await tides.textContent(), /Written here/);
  assert.match(await card(page, "volcanoes").textContent(), /Imported/);
  assert.match(await card(page, "volcanoes").getByTestId("card-progress").textContent(), /Not started/);
  assert.match(await tides.getByTestId("card-size").textContent(), /^\d+ KB$/);

  await page.getByTestId("library-search").fill("VOLC");
  assert.deepEqual(await titles(page), ["Volcanoes"]);
  await page.getByTestId("library-search").fill("nothing like this");
  assert.deepEqual(await titles(page), []);
  await page.getByTestId("library-no-match").waitFor({ state: "visible" });
  await page.getByTestId("library-search").fill("");
  await page.getByTestId("library-language").selectOption("zh-CN");
  assert.deepEqual(await titles(page), ["光合作用入门"]);
  await page.getByTestId("library-language").selectOption("");
  await page.getByTestId("library-sort").selectOption("title");
  assert.deepEqual(await titles(page), ["Tides and the Moon", "Volcanoes", "光合作用入门"]);
  await page.getByTestId("library-sort").selectOption("size");
  assert.equal((await titles(page))[0], "Tides and the Moon", "the 8-scene course with a conversation is the largest");

  // Opening a course makes it the last opened.
  await card(page, "guanghe").getByRole("link").click();
  await page.getByTestId("classroom").waitFor();
  await page.goto(server.url);
  await page.getByTestId("library-list").waitFor();
  assert.equal((await titles(page))[0], "光合作用入门");
  await page.screenshot({ path: `${SHOTS}library-cards.png`, fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});

test("rename and duplicate from a card, kept after a reload", async () => {
  const { context, page, problems } = await openPage(browser);
  await seed(page);
  const volcanoes = card(page, "volcanoes");
  await volcanoes.getByTestId("card-tools").click();
  await volcanoes.getByTestId("card-rename").click();
  await volcanoes.getByTestId("card-rename-input").fill("   ");
  await volcanoes.getByTestId("card-rename-save").click();
  await page.getByTestId("library-error").getByText("A course needs a title.").waitFor();
  await volcanoes.getByTestId("card-rename-input").fill("Volcanoes of Iceland");
  await volcanoes.getByTestId("card-rename-save").click();
  await card(page, "volcanoes").locator("h3", { hasText: "Volcanoes of Iceland" }).waitFor();

  await card(page, "volcanoes").getByTestId("card-tools").click();
  await card(page, "volcanoes").getByTestId("card-duplicate").click();
  await card(page, "volcanoes-copy1").waitFor();
  await page.reload();
  await page.getByTestId("library-list").waitFor();
  assert.equal(await card(page, "volcanoes").locator("h3").textContent(), "Volcanoes of Iceland");
  const copy = card(page, "volcanoes-copy1");
  assert.equal(await copy.locator("h3").textContent(), "Volcanoes of Iceland (copy)");
  assert.match(await copy.textContent(), /Copy/);
  // The copy plays as a course of its own.
  await copy.getByRole("link").click();
  await page.getByTestId("classroom").waitFor();
  assert.equal(await page.locator(".classroom-title").textContent(), "Volcanoes of Iceland (copy)");
  assert.deepEqual(problems, []);
  await context.close();
});

test("deleting a course takes everything it owns from IndexedDB, and Undo puts it all back", async () => {
  const { context, page, problems } = await openPage(browser);
  await seed(page);
  const before = await allKeys(page);
  const owned = before.filter((k) => k.includes("tides"));
  assert.equal(owned.length, 7, `${owned}`);

  const tides = card(page, "tides");
  await tides.getByTestId("card-tools").click();
  await tides.getByTestId("card-delete").click();
  // Asked first; keeping it changes nothing.
  await tides.getByTestId("card-delete-cancel").click();
  assert.deepEqual(await allKeys(page), before);
  await tides.getByTestId("card-delete").click();
  await tides.getByText("Delete “Tides and the Moon” with its conversations and progress?").waitFor();
  await tides.getByTestId("card-delete-confirm").click();
  await page.getByTestId("undo-bar").getByText("“Tides and the Moon” was deleted.").waitFor();
  await card(page, "tides").waitFor({ state: "detached" });
  const after = await allKeys(page);
  assert.deepEqual(after.filter((k) => k.includes("tides")), [], "nothing of the course is left");
  assert.deepEqual(after, before.filter((k) => !k.includes("tides")), "the other courses are untouched");

  await page.getByTestId("undo-delete").click();
  await card(page, "tides").waitFor();
  assert.deepEqual(await allKeys(page), before, "Undo restores every record");
  assert.match(await card(page, "tides").getByTestId("card-progress").textContent(), /Stopped at scene 3 of 8/);

  // Deleted for good once the undo is gone: after a reload the course stays away.
  await card(page, "volcanoes").getByTestId("card-tools").click();
  await card(page, "volcanoes").getByTestId("card-delete").click();
  await card(page, "volcanoes").getByTestId("card-delete-confirm").click();
  await page.getByTestId("undo-bar").waitFor({ state: "visible" });
  await page.getByTestId("undo-bar").waitFor({ state: "hidden", timeout: 15_000 });
  await page.reload();
  await page.getByTestId("library-list").waitFor();
  assert.deepEqual(await titles(page), ["Tides and the Moon", "光合作用入门"]);
  assert.deepEqual((await allKeys(page)).filter((k) => k.includes("volcanoes")), []);
  assert.deepEqual(problems, []);
  await context.close();
});

test("Settings' Free up space opens the library with the largest course first", async () => {
  const { context, page, problems } = await openPage(browser);
  await seed(page);
  await page.goto(`${server.url}/settings`);
  await page.getByTestId("free-up-space").click();
  await page.getByTestId("library-list").waitFor();
  assert.equal(await page.getByTestId("library-sort").inputValue(), "size");
  assert.equal((await titles(page))[0], "Tides and the Moon");
  assert.deepEqual(problems, []);
  await context.close();
});

test("a card's tools export the course", async () => {
  const { context, page, problems } = await openPage(browser);
  await seed(page);
  const volcanoes = card(page, "volcanoes");
  await volcanoes.getByTestId("card-tools").click();
  await volcanoes.getByTestId("export-panel").locator("summary").click();
  const download = page.waitForEvent("download", { timeout: 20_000 });
  await volcanoes.getByTestId("export-button").click();
  assert.match((await download).suggestedFilename(), /\.aula\.zip$/);
  assert.deepEqual(problems, []);
  await context.close();
});
