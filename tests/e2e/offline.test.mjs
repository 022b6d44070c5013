// Offline: after one visit the service worker (web/sw.js) holds the app shell and the bundled
// courses, so with the network cut the classroom reloads and plays a sample to its end, and the
// home page with its library opens, without a single request reaching the server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { serveDist, launchBrowser, openPage, DIST, answerQuiz } from "./support.mjs";

const COURSE_FILE = "transformer-en.json";
let server;
let browser;
let course;
/** Every request the static server received, in order. */
const received = [];
/** While set, the server drops every connection unanswered, like a cut network. */
let cut = false;

before(async () => {
  course = JSON.parse(await readFile(join(DIST, "courses", COURSE_FILE), "utf8"));
  server = await serveDist({
    onRequest: (req) => {
      received.push(`${req.method} ${req.url}`);
      if (cut) req.socket.destroy();
      return cut;
    },
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const currentScene = (page) =>
  page.evaluate(() => [...document.querySelectorAll("[data-testid=scene-button]")].findIndex((b) => b.classList.contains("current")));

async function ensurePlaying(page) {
  if ((await page.getByTestId("play").getAttribute("aria-label")) === "Play") await page.getByTestId("play").click();
}

/** Plays the open course from its first scene to `course-end`: each scene from 1.5 s before
 *  its end (so every scene is shown and every transition happens), the discussion skipped, the
 *  quiz answered. */
async function playToTheEnd(page) {
  const seek = page.getByTestId("seek");
  await page.getByTestId("scene-button").first().click();
  await page.waitForFunction(() => document.querySelector("[data-testid=scene-button]")?.classList.contains("current"));
  await ensurePlaying(page);
  await page.getByTestId("caption-text").waitFor({ timeout: 30000 });
  for (let index = 0; index < course.scenes.length; index++) {
    await page.waitForFunction((i) => document.querySelectorAll("[data-testid=scene-button]")[i]?.classList.contains("current"), index, { timeout: 30000 });
    const scene = course.scenes[index];
    if (scene.content.type === "quiz") {
      await page.getByTestId("quiz").waitFor();
      await answerQuiz(page, scene.content.questions, (q) => q.reference_answer);
      await page.getByTestId("quiz-check").click();
      await page.getByTestId("quiz-continue").click();
    } else {
      const total = Number(await seek.getAttribute("max"));
      await seek.evaluate((el, v) => {
        el.value = String(v);
        el.dispatchEvent(new Event("input", { bubbles: true }));
      }, Math.max(0, total - 1500));
      await ensurePlaying(page);
      if ((scene.actions ?? []).some((a) => a.type === "discussion")) {
        await page.getByTestId("discussion-card").waitFor({ timeout: 30000 });
        await page.getByTestId("discussion-skip").click();
      }
    }
    if (index + 1 < course.scenes.length) {
      await page.waitForFunction((i) => (document.querySelector("[data-testid=course-end]") !== null) || document.querySelectorAll("[data-testid=scene-button]")[i]?.classList.contains("current"), index + 1, { timeout: 30000 });
    }
  }
  await page.getByTestId("course-end").waitFor({ timeout: 30000 });
}

test("after one visit, a sample course reloads and plays to its end offline, and the home page and library open, with no request of the page reaching the network", { timeout: 120000 }, async () => {
  const { context, page, problems } = await openPage(browser);
  await page.addInitScript(() => {
    localStorage.setItem("aula.captions_only", "true");
    localStorage.setItem("aula.speed", "2");
  });

  // Online: the first visit installs the worker, which precaches the shell before it activates.
  await page.goto(server.url);
  await page.getByTestId("sample-list").waitFor();
  await page.waitForFunction(() => navigator.serviceWorker?.controller != null, null, { timeout: 20000 });
  const shell = await page.evaluate(async () => {
    const registration = await navigator.serviceWorker.ready;
    const names = await caches.keys();
    const cache = await caches.open(names.find((n) => n.startsWith("aula-shell-")));
    return { scope: registration.scope, cached: (await cache.keys()).map((r) => new URL(r.url).pathname) };
  });
  assert.equal(shell.scope, `${server.url}/`);
  for (const path of ["/index.html", `/courses/${COURSE_FILE}`, "/courses/index.json", "/manifest.webmanifest"]) {
    assert.ok(shell.cached.includes(path), `${path} is precached: ${shell.cached}`);
  }
  assert.ok(!shell.cached.some((p) => p.startsWith("/pdf/")), "pdf.js is not precached");

  await page.getByTestId("sample-list").getByRole("link", { name: new RegExp(course.title) }).click();
  await page.getByTestId("classroom").waitFor();
  const classroomUrl = page.url();
  assert.match(new URL(classroomUrl).pathname, /^\/classroom\//);

  // Offline from here on: the page and its worker are cut off by the browser, and the server
  // drops whatever still reaches it.
  await context.setOffline(true);
  cut = true;
  const online = received.length;
  const started = Date.now();

  await page.reload();
  await page.getByTestId("classroom").waitFor();
  await playToTheEnd(page);

  await page.goto(server.url);
  await page.getByTestId("sample-list").getByRole("link", { name: new RegExp(course.title) }).waitFor();
  await page.locator("[data-testid=library-list], [data-testid=library-empty]").first().waitFor();

  // A path URL typed into the address bar: answered by the cached page, the router opens it.
  await page.goto(classroomUrl);
  await page.getByTestId("classroom").waitFor();
  await page.getByTestId("scene-button").first().waitFor();

  // The browser's own check for a new /sw.js on navigation is outside Playwright's offline
  // emulation; it reached the cut server, failed, and the installed worker went on serving.
  const offlineRequests = received.slice(online).filter((r) => r !== "GET /sw.js");
  assert.deepEqual(offlineRequests, [], "no request of the page or its worker reached the network while offline");
  assert.deepEqual(problems, []);
  console.log(`offline: ${shell.cached.length} files precached; reload, playback to the end and two navigations took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await context.close();
});
