// Course generation against mock-llm: a prompt becomes an outline the learner edits, then a
// course whose first scene plays while the rest are written; a reload mid-generation resumes
// without writing a finished scene twice; a scene whose script keeps failing shows a retry while
// the rest of the course plays; a missing provider and a rejected key are explained.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
import { serveDist, launchBrowser, openPage, startMock, connectToMock } from "./support.mjs";

const SHOTS = new URL("./artifacts/", import.meta.url).pathname;
const KEY = "sk-live-gen-778899";
const fixture = JSON.parse(
  await readFile(new URL("../../crates/generation/fixtures/photosynthesis.json", import.meta.url), "utf8"),
);
const scenes = fixture.outline.scenes;
let server;
let browser;
let mock;
let mockUrl;
let script;

before(async () => {
  await mkdir(SHOTS, { recursive: true });
  ({ child: mock, url: mockUrl, script } = await startMock());
  server = await serveDist();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
  mock?.kill();
});

const contentAsk = (s) => `Write the ${s.kind} for "${s.title}"`;
const scriptAsk = (s) => `Write the script for "${s.title}"`;

/** mock-llm rules answering every stage from the fixture; `slow` and `broken` adjust scripts by
 *  scene index: `slow[i]` delays scene i's script by that many ms, `broken[i]` replaces it. */
function courseScript({ slow = {}, broken = {} } = {}) {
  const rules = [{ match: { last_message_contains: "What I want to learn" }, reply: { json: fixture.outline } }];
  scenes.forEach((s, i) => {
    rules.push({ match: { last_message_contains: contentAsk(s) }, reply: { json: fixture.content[s.title] } });
    const rule = { match: { last_message_contains: scriptAsk(s) }, reply: { json: fixture.scripts[s.title] } };
    if (broken[i]) rule.reply = { text: broken[i] };
    if (slow[i]) rule.faults = [{ ttft_ms: slow[i] }];
    rules.push(rule);
  });
  // A second try quotes the failed reply; it is answered like the first.
  return { rules, default: { text: "No rule matched this request." }, chunk_words: 8 };
}

async function requests() {
  const response = await fetch(`${mockUrl}/__requests`);
  return (await response.json()).filter((r) => r.chat_number);
}

const asked = (all, needle) => all.filter((r) => JSON.stringify(r.body).includes(needle.replaceAll('"', '\\"'))).length;

async function newCourse(page, { review }) {
  await page.goto(server.url);
  await page.getByTestId("prompt-input").fill(fixture.topic);
  const box = page.getByTestId("prompt-review");
  if ((await box.isChecked()) !== review) await box.click();
  await page.getByTestId("prompt-input").press("Control+Enter");
  await page.waitForFunction(() => location.pathname.startsWith("/generate/gen-"), null, { timeout: 10_000 });
  await page.getByTestId("generate").waitFor();
}

const rows = (page) => page.getByTestId("scene-row");
const states = (page) => rows(page).evaluateAll((els) => els.map((e) => e.dataset.state));

async function waitForStates(page, predicate, timeout = 60_000) {
  const start = Date.now();
  for (;;) {
    const now = await states(page);
    if (now.length && predicate(now)) return now;
    if (Date.now() - start > timeout) throw new Error(`scene states stuck at ${now}`);
    await page.waitForTimeout(150);
  }
}

test("a prompt becomes an outline to edit, then a course whose first scene plays while the rest are written", async () => {
  await script(courseScript({ slow: { 1: 2500, 2: 2500, 3: 2500 } }));
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  const { context, page, problems } = await openPage(browser);
  await connectToMock(page, { appUrl: server.url, mockUrl, key: KEY });
  await newCourse(page, { review: true });

  // The plan waits for the learner; leaving its page does not lose it: the library lists it.
  await page.getByTestId("outline-editor").waitFor();
  await page.locator("a.brand").click();
  const card = page.getByTestId("library-list").locator(".course-card", { hasText: fixture.outline.title });
  await card.locator(".badge", { hasText: "Being written" }).waitFor();
  await card.locator("a").click();

  // The outline, editable: rename the course, move the last scene up.
  await page.getByTestId("outline-editor").waitFor();
  assert.equal(await page.getByTestId("outline-row").count(), 4);
  await page.getByTestId("outline-title").fill("Photosynthesis, the short version");
  await page.getByTestId("outline-row").nth(3).getByRole("button", { name: "Move up" }).click();
  const titles = await page.getByTestId("outline-row-title").evaluateAll((els) => els.map((e) => e.value));
  assert.deepEqual(titles, [scenes[0].title, scenes[1].title, scenes[3].title, scenes[2].title]);
  await page.screenshot({ path: `${SHOTS}/generation-outline.png` });
  const sofar = await requests();
  assert.equal(sofar.length, 1, `only the outline: nothing is written before the learner says so; got ${sofar.map((r) => JSON.stringify(r.body.messages.at(-1).content).slice(0, 80))}`);
  await page.getByTestId("outline-write").click();

  // The first scene is ready before the others: start learning.
  await waitForStates(page, (s) => s[0] === "ready");
  const early = await states(page);
  assert.ok(early.some((s) => s !== "ready"), `the rest are still being written: ${early}`);
  await page.getByTestId("start-learning").click({ timeout: 10_000 });
  await page.getByTestId("classroom").waitFor();
  await page.getByTestId("generation-banner").waitFor();
  assert.equal(await page.getByTestId("scene-button").count(), 1);
  await page.locator(".classroom-title").filter({ hasText: "Photosynthesis, the short version" }).waitFor();
  await page.getByTestId("stage").getByText(scenes[0].title).first().waitFor();

  // The rest arrive while the first plays; the learner adds them and keeps their place.
  await page.getByTestId("add-new-scenes").waitFor({ timeout: 30_000 });
  await page.screenshot({ path: `${SHOTS}/generation-classroom-banner.png` });
  await page.getByTestId("add-new-scenes").click();
  await page.getByTestId("classroom").waitFor();
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=scene-button]").length >= 2);

  // To the progress page by the banner's link, as a learner goes: the writing goes on (a reload
  // would cut a reply short and ask for it again).
  const progress = page.getByTestId("generation-banner").locator("a");
  if (await progress.isVisible()) await progress.click();
  else await page.goto(`${page.url().replace(/\/classroom\//, "/generate/")}`);
  await waitForStates(page, (s) => s.every((x) => x === "ready"));
  const all = await requests();
  const lasts = all.map((r) => String(r.body.messages.at(-1).content).slice(0, 100));
  assert.equal(all.length, 1 + 2 * 4, `one outline call and two calls per scene; got ${JSON.stringify(lasts, null, 1)}`);
  const tokens = await page.getByTestId("gen-tokens").textContent();
  const sum = all.reduce((n, r) => n + (r.input_tokens ?? 0) + (r.output_tokens ?? 0), 0);
  console.log(`generation: ${all.length} calls, page says "${tokens}", mock counted ${sum} tokens`);
  assert.equal(tokens, `${sum} tokens`, "the page counts what the provider reported, outline included");
  await page.screenshot({ path: `${SHOTS}/generation-progress.png` });

  // Coming back to the finished course's progress page another day: it starts.
  await page.reload();
  await waitForStates(page, (s) => s.length === 4 && s.every((x) => x === "ready"));
  assert.doesNotMatch(await page.getByTestId("start-learning").getAttribute("class"), /disabled/);
  await page.getByTestId("start-learning").click();
  await page.getByTestId("classroom").waitFor();
  assert.equal(await page.getByTestId("scene-button").count(), 4);
  assert.deepEqual(problems, []);
  await context.close();
});

test("closing the page mid-generation and opening it again resumes without writing a finished scene twice", async () => {
  await script(courseScript({ slow: { 2: 4000, 3: 4000 } }));
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  const { context, page, problems } = await openPage(browser);
  await connectToMock(page, { appUrl: server.url, mockUrl, key: KEY });
  await newCourse(page, { review: false });
  const url = page.url();
  await waitForStates(page, (s) => s[0] === "ready" && s[1] === "ready");
  const before = await states(page);
  await page.close();

  const again = await context.newPage();
  again.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  await again.goto(url);
  await waitForStates(again, (s) => s.every((x) => x === "ready"));
  const all = await requests();
  for (const [i, s] of scenes.entries()) {
    if (before[i] === "ready") {
      assert.equal(asked(all, contentAsk(s)), 1, `scene ${i + 1}'s content was written once`);
      assert.equal(asked(all, scriptAsk(s)), 1, `scene ${i + 1}'s script was written once`);
    }
  }
  assert.equal(asked(all, "What I want to learn"), 1, "the outline was not asked for again");
  assert.deepEqual(problems, []);
  await context.close();
});

test("a scene whose script keeps failing shows a retry, and the rest of the course plays", async () => {
  await script(courseScript({ broken: { 1: "Sorry, I cannot write scripts today." } }));
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  const { context, page, problems } = await openPage(browser);
  await connectToMock(page, { appUrl: server.url, mockUrl, key: KEY });
  await newCourse(page, { review: false });
  await waitForStates(page, (s) => s[1] === "failed" && s.filter((x) => x === "ready").length === 3);
  const failed = rows(page).nth(1);
  await failed.getByTestId("scene-error").waitFor();
  assert.match(await failed.getByTestId("scene-error").textContent(), /could not be used/);
  await page.screenshot({ path: `${SHOTS}/generation-failed-scene.png` });

  await page.getByTestId("start-learning").click();
  await page.getByTestId("classroom").waitFor();
  assert.equal(await page.getByTestId("scene-button").count(), 3, "the three good scenes play");
  // Another day: from the library to the classroom, and from there to the course's tools.
  await page.goto(server.url);
  await page.getByTestId("library-list").locator(".course-card", { hasText: fixture.outline.title }).locator("a").first().click();
  await page.getByTestId("classroom").waitFor();
  await page.getByTestId("edit-course").click();
  await page.getByTestId("generate").waitFor();
  await waitForStates(page, (s) => s[1] === "failed");

  // The model recovers; the retry writes the script and the course is whole.
  await script(courseScript());
  await rows(page).nth(1).getByTestId("scene-retry").click();
  await waitForStates(page, (s) => s.every((x) => x === "ready"));
  const all = await requests();
  assert.equal(asked(all, contentAsk(scenes[1])), 1, "the retry did not rewrite the slide");

  // The learner edits the first scene's words by hand; a bad edit is refused and changes nothing.
  await page.screenshot({ path: `${SHOTS}/generation-before-edit.png` });
  await rows(page).nth(0).getByTestId("edit-words").click();
  const editor = page.getByTestId("words-editor");
  await editor.getByTestId("edit-speech").first().fill("   ");
  await editor.getByTestId("words-save").click();
  await page.getByTestId("words-note").filter({ hasText: "cannot be empty" }).waitFor();
  await editor.getByTestId("edit-speech").first().fill("Hello! Today a leaf shows us how it makes its own food.");
  await editor.getByTestId("edit-text").first().fill("What photosynthesis really does");
  await page.screenshot({ path: `${SHOTS}/generation-edit.png` });
  await editor.getByTestId("words-save").click();
  await page.getByTestId("words-note").filter({ hasText: "Saved" }).waitFor();
  await page.getByTestId("start-learning").click();
  await page.getByTestId("classroom").waitFor();
  await page.getByTestId("stage").getByText("What photosynthesis really does").first().waitFor();
  await page.reload();
  await page.getByTestId("stage").getByText("What photosynthesis really does").first().waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test("the plan streams in scene by scene; Stop halts the writing and Continue finishes it without redoing a finished task", async () => {
  const slowOutline = courseScript({ slow: { 1: 3000, 2: 3000, 3: 3000 } });
  slowOutline.rules[0].faults = [{ drip_tokens_per_s: 300 }];
  await script(slowOutline);
  const { context, page, problems } = await openPage(browser);
  await connectToMock(page, { appUrl: server.url, mockUrl, key: KEY });
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  await newCourse(page, { review: false });
  await page.locator("[data-testid=outline-preview] li:not(.skeleton)").first().waitFor();
  assert.equal(await page.getByTestId("generate").getAttribute("data-status"), "outlining", "scenes show while the plan streams");

  await waitForStates(page, (s) => s[0] === "ready");
  await page.getByTestId("gen-cancel").click();
  await page.waitForSelector("[data-testid=generate][data-status=stopped]");
  const stopped = await states(page);
  assert.ok(stopped.some((s) => s !== "ready"), `stopped before the end: ${stopped}`);
  await page.getByTestId("gen-continue").click();
  await waitForStates(page, (s) => s.every((x) => x === "ready"));
  const all = await requests();
  assert.equal(asked(all, "What I want to learn"), 1);
  scenes.forEach((s, i) => {
    if (stopped[i] === "ready") {
      assert.equal(asked(all, contentAsk(s)) + asked(all, scriptAsk(s)), 2, `scene ${i + 1} was not written again`);
    }
  });
  assert.deepEqual(problems, []);
  await context.close();
});

test("a PDF's text, read in the browser, goes into the outline's request", async () => {
  await script(courseScript());
  const { context, page, problems } = await openPage(browser);
  await connectToMock(page, { appUrl: server.url, mockUrl, key: KEY });
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  await page.goto(server.url);
  await page.locator("details.prompt-options summary").click();
  await page.getByTestId("prompt-pdf").setInputFiles(new URL("./fixtures/photosynthesis.pdf", import.meta.url).pathname);
  await page.getByTestId("prompt-pdf-note").filter({ hasText: "Read 2 pages" }).waitFor();
  await page.getByTestId("prompt-input").fill("Teach me this chapter");
  const box = page.getByTestId("prompt-review");
  if (!(await box.isChecked())) await box.click();
  await page.getByTestId("prompt-submit").click();
  await page.getByTestId("outline-editor").waitFor();
  const [outline] = await requests();
  const asked = outline.body.messages.at(-1).content;
  assert.match(asked, /<document>[\s\S]*reflects green light\.[\s\S]*<\/document>/, asked.slice(0, 300));
  assert.deepEqual(problems, []);
  await context.close();
});

test("without a provider, or with a rejected key, the learner is told what to fix", async () => {
  const { context, page, problems } = await openPage(browser);
  await page.goto(server.url);
  await page.getByTestId("prompt-input").fill("Tides");
  await page.getByTestId("prompt-submit").click();
  await page.getByTestId("prompt-error").waitFor();
  assert.match(await page.getByTestId("prompt-error").textContent(), /Connect an AI provider in Settings/);

  await script(courseScript());
  await connectToMock(page, { appUrl: server.url, mockUrl, key: "bad-key" });
  await newCourse(page, { review: false });
  const url = page.url();
  await page.getByTestId("gen-error").waitFor();
  const message = await page.getByTestId("gen-error").textContent();
  assert.match(message, /key/i);
  assert.ok(!message.includes("bad-key"), "the key is never shown");

  // The learner fixes the key in Settings, comes back and carries on.
  await connectToMock(page, { appUrl: server.url, mockUrl, key: KEY });
  await page.goto(url);
  await page.getByTestId("gen-continue").click();
  await waitForStates(page, (s) => s.length === 4 && s.every((x) => x === "ready"));
  assert.ok(await page.getByTestId("gen-error").isHidden(), "the old error is gone");
  assert.deepEqual(problems, []);
  await context.close();
});
