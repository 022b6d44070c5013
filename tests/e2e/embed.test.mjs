// The embeddable player in a real browser: a page of another origin puts Aula in an iframe
// (`?embed=1#course=<url>`), with IndexedDB unavailable to it, and drives it through the
// postMessage API (play, pause, seek, goto) while it reports ready, scene, state, quiz,
// progress and completed.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { serveDist, launchBrowser, openPage, answerQuiz, DIST } from "./support.mjs";

const SHOTS = new URL("./artifacts/", import.meta.url).pathname;
let server;
let host;
let browser;
let course;

/** A page on another origin that embeds the player and records what it says. */
function hostPage(playerUrl) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Host</title></head><body>
<h1>An LMS page</h1>
<iframe id="player" src="${playerUrl}" style="width:1100px;height:680px;border:0"></iframe>
<script>
  window.events = [];
  window.addEventListener("message", (e) => {
    if (e.data && e.data.source === "aula") window.events.push(e.data);
  });
  window.command = (c) => document.getElementById("player").contentWindow.postMessage(Object.assign({ target: "aula" }, c), "*");
</script></body></html>`;
}

before(async () => {
  await mkdir(SHOTS, { recursive: true });
  course = JSON.parse(await readFile(join(DIST, "courses", "transformer-en.json"), "utf8"));
  server = await serveDist();
  const playerUrl = `${server.url}/?embed=1#course=${encodeURIComponent("/courses/transformer-en.json")}`;
  const page = hostPage(playerUrl);
  host = createServer((req, res) => res.writeHead(200, { "content-type": "text/html" }).end(page));
  await new Promise((ok) => host.listen(0, "127.0.0.1", ok));
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
  await new Promise((ok) => host?.close(ok));
});

const events = (page, type) => page.evaluate((t) => window.events.filter((e) => e.type === t), type);
async function waitForEvent(page, predicate, what) {
  await page.waitForFunction(predicate, null, { timeout: 30000 }).catch(async () => {
    throw new Error(`no ${what}; events: ${JSON.stringify(await page.evaluate(() => window.events))}`);
  });
}

test("an embedded player in a cross-origin iframe without IndexedDB obeys commands and reports progress", async () => {
  const { context, page, problems } = await openPage(browser);
  // The embedding site's browser refuses storage to the frame.
  await context.addInitScript(() => {
    Object.defineProperty(window, "indexedDB", {
      get() {
        throw new DOMException("The embedding page does not allow storage.", "SecurityError");
      },
    });
    try { localStorage.setItem("aula.captions_only", "true"); } catch (e) {}
  });
  const hostUrl = `http://localhost:${host.address().port}/`;
  assert.notEqual(new URL(hostUrl).origin, new URL(server.url).origin);
  await page.goto(hostUrl);
  const frame = page.frameLocator("#player");
  await frame.getByTestId("classroom").waitFor();
  await waitForEvent(page, () => window.events.some((e) => e.type === "ready"), "ready");
  const [ready] = await events(page, "ready");
  assert.equal(ready.title, course.title);
  assert.equal(ready.scenes, course.scenes.length);
  // Only the player: no header, no library, no export, no live class.
  assert.equal(await frame.locator(".app-header").count(), 0);
  assert.equal(await frame.getByTestId("export-panel").count(), 0);

  await page.evaluate(() => window.command({ type: "play" }));
  await waitForEvent(page, () => window.events.some((e) => e.type === "state" && e.state === "playing"), "playing");
  await page.evaluate(() => window.command({ type: "pause" }));
  await waitForEvent(page, () => window.events.some((e) => e.type === "state" && e.state === "paused"), "paused");

  await page.evaluate(() => window.command({ type: "goto", scene: 2 }));
  await waitForEvent(page, () => window.events.some((e) => e.type === "scene" && e.scene === 2), "scene 2");
  assert.equal((await events(page, "scene")).find((e) => e.scene === 2).title, course.scenes[2].title);
  assert.ok(await frame.getByTestId("scene-button").nth(2).evaluate((el) => el.classList.contains("current")));
  await page.evaluate(() => window.command({ type: "seek", ms: 4000 }));
  await page.waitForTimeout(300);
  const at = Number(await frame.getByTestId("seek").inputValue());
  assert.ok(at >= 3500 && at < 6000, `the seek bar is at ${at} ms`);

  // Every scene seen, the quiz answered: completed, with the score.
  const quiz = course.scenes.findIndex((s) => s.content.type === "quiz");
  for (let i = 0; i < course.scenes.length; i++) {
    if (i === quiz) continue;
    await page.evaluate((scene) => window.command({ type: "goto", scene }), i);
    await waitForEvent(page, new Function(`return window.events.some((e) => e.type === "scene" && e.scene === ${i})`), `scene ${i}`);
  }
  assert.equal((await events(page, "completed")).length, 0, "not complete before every scene is seen");
  await page.evaluate((scene) => window.command({ type: "goto", scene }), quiz);
  const questions = course.scenes[quiz].content.questions;
  const possible = questions.reduce((sum, q) => sum + (q.points ?? 1), 0);
  await frame.getByTestId("quiz").waitFor();
  await answerQuiz(frame, questions, (q) => q.reference_answer);
  await frame.getByTestId("quiz-check").click();
  for (const q of questions.filter((q) => q.type === "short")) {
    await frame.locator(`[data-question="${q.id}"] .self-mark input`).check();
  }
  await waitForEvent(page, new Function(`return window.events.some((e) => e.type === "quiz" && e.score.raw === ${possible})`), "full quiz score");
  await waitForEvent(page, () => window.events.some((e) => e.type === "completed"), "completed");
  const last = (await events(page, "progress")).at(-1);
  assert.equal(last.completed, true);
  assert.equal(last.seen, course.scenes.length);
  assert.deepEqual(last.score, { raw: possible, max: possible });
  assert.match(last.bookmark, /^a1;\d+;0-7;/);
  await page.screenshot({ path: `${SHOTS}embed-host.png` });
  assert.deepEqual(problems, []);
  await context.close();
});

test("without a course address the embedded player says what to add", async () => {
  const { context, page, problems } = await openPage(browser);
  await page.goto(`${server.url}/?embed=1`);
  assert.match(await page.getByTestId("player-error").textContent(), /#course=/);
  assert.deepEqual(problems, []);
  await context.close();
});
