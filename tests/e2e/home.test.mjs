// The app shell in a real browser: title, empty library, language switch and persistence,
// theme switch and persistence, routes, and a course saved in IndexedDB showing in the library.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { serveDist, launchBrowser, openPage } from "./support.mjs";

const SHOTS = new URL("./artifacts/", import.meta.url).pathname;
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

const heading = (page) => page.locator("h1").first().textContent();

test("home page loads with its title and an empty library, without console errors", async () => {
  const { context, page, problems } = await openPage(browser);
  await page.goto(server.url);
  await page.getByTestId("library-empty").waitFor();
  assert.equal(await page.title(), "Aula");
  assert.equal(await heading(page), "What do you want to learn today?");
  assert.match(await page.getByTestId("library-empty").textContent(), /No courses yet/);
  await page.screenshot({ path: `${SHOTS}home-en-light.png`, fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});

test("language switches to Chinese and back, and the choice survives a reload", async () => {
  const { context, page, problems } = await openPage(browser);
  await page.goto(server.url);
  await page.getByTestId("library-empty").waitFor();

  await page.getByTestId("language-select").selectOption("zh");
  await page.waitForFunction(() => document.querySelector("h1")?.textContent === "今天想学点什么？");
  assert.equal(await page.locator("html").getAttribute("lang"), "zh");
  assert.match(await page.getByTestId("library-empty").textContent(), /还没有课程/);

  await page.reload();
  await page.getByTestId("library-empty").waitFor();
  assert.equal(await heading(page), "今天想学点什么？", "the language choice is kept across reloads");
  await page.screenshot({ path: `${SHOTS}home-zh-light.png`, fullPage: true });

  await page.getByTestId("language-select").selectOption("en");
  await page.waitForFunction(() => document.querySelector("h1")?.textContent === "What do you want to learn today?");
  assert.equal(await page.locator("html").getAttribute("lang"), "en");
  assert.deepEqual(problems, []);
  await context.close();
});

test("theme toggles to dark, survives a reload, and follows the settings page", async () => {
  const { context, page, problems } = await openPage(browser, { colorScheme: "light" });
  const theme = () => page.locator("html").getAttribute("data-theme");
  await page.goto(server.url);
  await page.getByTestId("library-empty").waitFor();
  assert.equal(await theme(), "light");

  await page.getByTestId("theme-toggle").click();
  assert.equal(await theme(), "dark");
  await page.reload();
  await page.getByTestId("library-empty").waitFor();
  assert.equal(await theme(), "dark", "the theme is applied again after a reload");
  await page.screenshot({ path: `${SHOTS}home-en-dark.png`, fullPage: true });
  await page.getByTestId("language-select").selectOption("zh");
  await page.waitForFunction(() => document.querySelector("h1")?.textContent === "今天想学点什么？");
  await page.screenshot({ path: `${SHOTS}home-zh-dark.png`, fullPage: true });
  await page.getByTestId("language-select").selectOption("en");

  await page.getByRole("link", { name: "Settings" }).click();
  await page.waitForURL(/\/settings$/);
  assert.equal(await heading(page), "Settings");
  await page.getByTestId("theme-choice").getByText("Light").click();
  assert.equal(await theme(), "light");
  await page.screenshot({ path: `${SHOTS}settings-en-light.png`, fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});

test("unknown routes and unknown courses explain themselves and lead back home", async () => {
  const { context, page, problems } = await openPage(browser);
  await page.goto(`${server.url}/no/such/page`);
  await page.getByTestId("not-found").waitFor();
  await page.goto(`${server.url}/classroom/not-a-course`);
  await page.getByTestId("classroom-missing").waitFor();
  await page.getByRole("link", { name: "Back to the library" }).click();
  await page.getByTestId("library-empty").waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test("a course saved in IndexedDB appears in the library and opens its classroom", async () => {
  const { context, page, problems } = await openPage(browser);
  await page.goto(server.url);
  await page.getByTestId("library-empty").waitFor();
  // Write the record the way the storage crate's IndexedDB adapter does: JSON text under the
  // course id in the "courses" store of the "aula" database.
  await page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const open = indexedDB.open("aula", 1);
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const db = open.result;
          const tx = db.transaction("courses", "readwrite");
          const course = {
            id: "photosynthesis",
            title: "Photosynthesis",
            description: "How plants turn light into sugar.",
            scenes: [{ id: "s1" }, { id: "s2" }, { id: "s3" }],
          };
          tx.objectStore("courses").put(JSON.stringify(course), course.id);
          tx.oncomplete = () => resolve();
          tx.onerror = () => reject(tx.error);
        };
      }),
  );
  await page.reload();
  await page.getByTestId("library-list").waitFor();
  const card = page.getByTestId("library-list").getByRole("link");
  assert.match(await card.textContent(), /Photosynthesis/);
  assert.match(await card.textContent(), /3 scenes/);
  await card.click();
  await page.waitForURL(/\/classroom\/photosynthesis$/);
  await page.waitForFunction(() => document.querySelector("h1")?.textContent === "Photosynthesis");
  assert.deepEqual(problems, []);
  await context.close();
});
