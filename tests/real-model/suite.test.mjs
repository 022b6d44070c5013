// The real-model suite, run by `cargo xtask real-model` (never by `cargo xtask test`): the
// release build in headless Chromium, its real AI worker and IndexedDB, and a real LLM behind
// the llama.cpp preset (or another OpenAI-compatible server). It connects the provider in
// Settings, writes a course from a topic in English and one in Chinese, plays every scene to its
// end, asks the class a question and has a short answer graded, and writes what happened, with
// the numbers and a screenshot of every scene, to $REAL_MODEL_OUT/results.json for the report.
// Nothing here judges wording: a small model slips on facts; the flow and the shape are checked.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { serveDist, launchBrowser, openPage } from "../e2e/support.mjs";

const OUT = process.env.REAL_MODEL_OUT ?? "target/real-model";
const SHOTS = join(OUT, "shots");
const BASE_URL = process.env.REAL_MODEL_URL;
const MODEL = process.env.REAL_MODEL_NAME;
const PRESET = process.env.REAL_MODEL_PRESET ?? "llamacpp";
const KEY = process.env[process.env.REAL_MODEL_KEY_ENV ?? "AULA_REAL_MODEL_KEY"] ?? "";
const ONLY = process.env.REAL_MODEL_ONLY;
const MINUTE = 60_000;

const COURSES = [
  {
    tag: "en",
    language: "en",
    topic: "Photosynthesis for a high-school biology class, in 4 scenes",
    question: "Why are leaves green and not black?",
    shortAnswer: "Chlorophyll absorbs red and blue light and reflects green light, and the energy is stored in sugar.",
  },
  {
    tag: "zh",
    language: "zh-CN",
    topic: "光合作用：给高中生物课讲解，4个场景",
    question: "为什么叶子是绿色的？",
    shortAnswer: "叶绿素吸收红光和蓝光，反射绿光，光能被储存在糖里。",
  },
].filter((c) => !ONLY || c.tag === ONLY);

const results = { model: MODEL, preset: PRESET, connection: null, courses: [], problems: [] };
let server;
let browser;
let opened;

async function save() {
  await writeFile(join(OUT, "results.json"), JSON.stringify(results, null, 2));
}

const log = (...parts) => console.log(`[${new Date().toISOString().slice(11, 19)}]`, ...parts);

before(async () => {
  assert.ok(BASE_URL && MODEL, "REAL_MODEL_URL and REAL_MODEL_NAME are set by cargo xtask real-model");
  await mkdir(SHOTS, { recursive: true });
  server = await serveDist({ port: Number(process.env.AULA_PAGE_PORT ?? 0) });
  browser = await launchBrowser();
  opened = await openPage(browser, { viewport: { width: 1280, height: 720 } });
  // Headless Chromium has no voices: narration is captions timed by the reading estimate.
  await opened.page.addInitScript(() => {
    // Init scripts run in every frame too; a sandboxed interactive page may not touch storage.
    if (window !== window.top) return;
    localStorage.setItem("aula.captions_only", "true");
    localStorage.setItem("aula.speed", "2");
  });
  opened.page.on("console", (message) => {
    const text = message.text();
    if (message.type() === "log" && text.startsWith("generation: ")) {
      const course = results.courses.at(-1);
      if (course) course.notes.push(text.slice("generation: ".length));
    }
  });
});

after(async () => {
  results.problems = opened?.problems ?? [];
  await save();
  await browser?.close();
  await server?.close();
});

/** Reads one record of the page's IndexedDB (values are JSON text). */
async function record(page, store, key) {
  return page.evaluate(([store, key]) => new Promise((resolve, reject) => {
    const open = indexedDB.open("aula");
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const get = db.transaction(store).objectStore(store).get(key);
      get.onsuccess = () => { db.close(); resolve(typeof get.result === "string" ? JSON.parse(get.result) : get.result ?? null); };
      get.onerror = () => reject(get.error);
    };
  }), [store, key]);
}

const shot = async (page, name, options = {}) => {
  await page.screenshot({ path: join(SHOTS, name), ...options });
  return `real-model/${name}`;
};

test("the llama.cpp preset is connected in Settings and its test passes", { timeout: 30 * MINUTE }, async () => {
  const { page } = opened;
  await page.goto(`${server.url}/settings`);
  await page.getByTestId("provider-settings").waitFor();
  await page.getByTestId("provider-preset").selectOption(PRESET);
  await page.getByTestId("provider-url").fill(BASE_URL);
  if (KEY && (await page.getByTestId("provider-key").count())) await page.getByTestId("provider-key").fill(KEY);
  await page.getByTestId("provider-model").fill(MODEL);
  await page.getByTestId("provider-save").click();
  await page.getByTestId("provider-saved").waitFor();
  const started = Date.now();
  await page.getByTestId("provider-test").click();
  await page.waitForFunction(
    () => ["passed", "failed"].includes(document.querySelector("[data-testid=provider-test-result]")?.dataset.state),
    null,
    { timeout: 25 * MINUTE, polling: 1000 },
  );
  // The server's own figures arrive just after the greeting.
  await page.waitForTimeout(3000);
  const state = await page.getByTestId("provider-test-result").getAttribute("data-state");
  const text = (await page.getByTestId("provider-test-result").textContent()).trim();
  results.connection = { ok: state === "passed", ms: Date.now() - started, text };
  await shot(page, "settings.png", { fullPage: true });
  await save();
  log(`connection ${state} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${text}`);
  assert.equal(state, "passed", text);
});

for (const spec of COURSES) {
  test(`a course in ${spec.language} is written, every scene plays, the class answers and a short answer is graded`, { timeout: 150 * MINUTE }, async () => {
    const { page } = opened;
    const course = {
      language: spec.language,
      topic: spec.topic,
      title: "",
      course_id: "",
      scenes: [],
      stats: {},
      notes: [],
      outline_ms: 0,
      first_ready_ms: 0,
      written_ms: 0,
      round: null,
      grade: null,
    };
    results.courses.push(course);

    // Write the course from the home page, as a learner would.
    await page.goto(server.url);
    await page.getByTestId("prompt-input").fill(spec.topic);
    await page.locator("details.prompt-options summary").click();
    await page.getByTestId("prompt-language").selectOption(spec.language);
    const started = Date.now();
    await page.getByTestId("prompt-submit").click();
    await page.waitForFunction(() => location.pathname.startsWith("/generate/gen-"), null, { timeout: 30_000 });
    course.course_id = new URL(page.url()).pathname.split("/").pop();
    let lastLog = 0;
    for (;;) {
      const status = await page.getByTestId("generate").getAttribute("data-status");
      const states = await page.getByTestId("scene-row").evaluateAll((rows) => rows.map((r) => r.dataset.state));
      if (!course.first_ready_ms && states[0] === "ready") {
        course.first_ready_ms = Date.now() - started;
        await shot(page, `${spec.tag}-progress-first-ready.png`, { fullPage: true });
      }
      if (Date.now() - lastLog > 30_000) {
        lastLog = Date.now();
        const meta = await page.getByTestId("gen-meta").textContent().catch(() => "");
        log(`${spec.tag}: ${status} ${meta} [${states.join(", ")}]`);
        if (status === "writing" && states.some((s) => s === "thinking")) await shot(page, `${spec.tag}-progress-reading.png`, { fullPage: true });
      }
      // The plan is shown for review first; the learner writes it as the model planned it.
      if (status === "reviewing") {
        course.outline_ms = Date.now() - started;
        await shot(page, `${spec.tag}-outline.png`, { fullPage: true });
        await page.getByTestId("outline-write").click();
      }
      if (status === "settled" || status === "stopped") break;
      if (Date.now() - started > 120 * MINUTE) throw new Error(`${spec.tag}: still ${status} after two hours`);
      await page.waitForTimeout(2000);
    }
    course.written_ms = Date.now() - started;
    await shot(page, `${spec.tag}-progress.png`, { fullPage: true });
    const job = await record(page, "jobs", course.course_id);
    const stored = await record(page, "courses", course.course_id);
    course.stats = job?.record?.stats ?? {};
    course.title = job?.outline?.title ?? spec.topic;
    course.error = job?.error ?? "";
    const states = await page.getByTestId("scene-row").evaluateAll((rows) => rows.map((r) => r.dataset.state));
    course.scenes = (job?.outline?.scenes ?? []).map((s, index) => ({
      index,
      id: s.id,
      kind: s.kind,
      title: s.title,
      state: states[index] ?? "missing",
      failure: job?.record?.failed?.[`${s.id}/content`] ?? job?.record?.failed?.[`${s.id}/actions`] ?? null,
      played: false,
    }));
    await save();
    log(`${spec.tag}: written in ${(course.written_ms / 1000).toFixed(0)} s, ${states.filter((s) => s === "ready").length}/${states.length} ready`);
    assert.ok(stored, "the course is in the library");

    // Play every ready scene to its end, at 2×, captions only.
    await page.goto(`${server.url}/classroom/${course.course_id}`);
    await page.getByTestId("classroom").waitFor();
    const playable = stored.scenes.map((s) => s.id);
    for (const scene of course.scenes) {
      const at = playable.indexOf(scene.id);
      if (at < 0) continue;
      const content = stored.scenes[at].content;
      await page.getByTestId("scene-button").nth(at).click();
      await page.waitForFunction((i) => document.querySelectorAll("[data-testid=scene-button]")[i]?.classList.contains("current"), at);
      const playStarted = Date.now();
      if ((await page.getByTestId("play").getAttribute("aria-label")) === "Play") await page.getByTestId("play").click();
      await page.waitForTimeout(2500);
      scene.shot = await shot(page, `${spec.tag}-${at + 1}-${scene.kind}.png`);
      // The scene is over when it waits for the learner, the next scene starts, or the course ends.
      await page.waitForFunction(
        (i) => {
          const state = document.querySelector("[data-testid=stage]")?.dataset.state;
          const current = [...document.querySelectorAll("[data-testid=scene-button]")].findIndex((b) => b.classList.contains("current"));
          return ["waitingforlearner", "ended", "discussionoffered"].includes(state) || current !== i || document.querySelector("[data-testid=course-end]");
        },
        at,
        { timeout: 15 * MINUTE, polling: 500 },
      );
      if ((await page.getByTestId("stage").getAttribute("data-state")) === "discussionoffered") {
        await shot(page, `${spec.tag}-${at + 1}-discussion.png`);
        await page.getByTestId("discussion-skip").click();
      }
      scene.play_ms = Date.now() - playStarted;
      scene.played = true;
      if (content.type === "quiz") {
        await page.getByTestId("quiz").waitFor();
        const short = content.questions.find((q) => q.type === "short");
        for (const q of content.questions) {
          const card = page.locator(`[data-question="${q.id}"]`);
          if (q.type === "single") await card.locator(`input[value="${q.options[0].id}"]`).check();
          else if (q.type === "multiple") await card.locator(`input[value="${q.options[0].id}"]`).check();
          else await card.locator("textarea").fill(spec.shortAnswer);
        }
        const gradeStarted = Date.now();
        await page.getByTestId("quiz-check").click();
        if (short) {
          // Self-marking shows first, Grading… once the request is on its way, then the
          // teacher's grade, or the learner's own marking with the reason.
          await page.waitForFunction((id) => document.querySelector(`[data-question="${id}"] [data-testid=grade]`)?.dataset.state === "grading", short.id, { timeout: 60_000 }).catch(() => {});
          await page.waitForFunction(
            (id) => document.querySelector(`[data-question="${id}"] [data-testid=grade]`)?.dataset.state !== "grading",
            short.id,
            { timeout: 20 * MINUTE, polling: 1000 },
          ).catch(() => {});
          const line = await page.locator(`[data-question="${short.id}"] [data-testid=grade]`).textContent().catch(() => "");
          const state = await page.locator(`[data-question="${short.id}"] [data-testid=grade]`).getAttribute("data-state").catch(() => "");
          course.grade = { question: short.question, answer: spec.shortAnswer, state, line: state === "graded" ? line.trim() : "", why: state === "graded" ? "" : line.trim(), ms: Date.now() - gradeStarted };
          log(`${spec.tag}: short answer ${state}: ${line.trim().slice(0, 160)}`);
        }
        scene.shot = await shot(page, `${spec.tag}-${at + 1}-quiz.png`, { fullPage: true });
      }
      await page.setViewportSize({ width: 390, height: 844 });
      await page.waitForTimeout(600);
      scene.phone_shot = await shot(page, `${spec.tag}-${at + 1}-${scene.kind}-phone.png`, { fullPage: true });
      await page.setViewportSize({ width: 1280, height: 720 });
      if (content.type === "quiz") await page.getByTestId("quiz-continue").click();
      else if (content.type === "interactive" || content.type === "pbl") await page.locator("button.continue").click();
      await save();
    }
    await page.getByTestId("course-end").waitFor({ timeout: 5 * MINUTE }).catch(() => {});

    // Ask the class a question on the first slide.
    const slide = stored.scenes.findIndex((s) => s.content.type === "slide");
    await page.getByTestId("scene-button").nth(Math.max(0, slide)).click();
    if ((await page.getByTestId("play").getAttribute("aria-label")) === "Play") await page.getByTestId("play").click();
    const asked = Date.now();
    await page.getByTestId("ask-input").fill(spec.question);
    await page.getByTestId("ask-send").click();
    await page.waitForFunction(() => document.querySelector("[data-testid=bubble][data-done=false]") || document.querySelector("[data-testid=ask-problem]:not([hidden])"), null, { timeout: 30 * MINUTE, polling: 1000 }).catch(() => {});
    await page.waitForFunction(() => !document.querySelector("[data-testid=ask-send]")?.disabled, null, { timeout: 45 * MINUTE, polling: 1000 });
    const bubbles = await page.getByTestId("bubble").evaluateAll((els) => els.map((b) => ({
      agent: b.querySelector(".bubble-name")?.textContent ?? "",
      text: b.querySelector(".bubble-text")?.textContent ?? "",
      done: b.dataset.done,
    })));
    // The problem line is in the page, hidden, until there is one.
    const problem = (await page.getByTestId("ask-problem").isVisible().catch(() => false))
      ? await page.getByTestId("ask-problem").textContent().catch(() => "")
      : "";
    course.round = { question: spec.question, ms: Date.now() - asked, turns: bubbles.slice(1), problem: problem.trim(), end: problem.trim() ? "failed" : bubbles.length > 1 ? "answered" : "no one spoke" };
    await shot(page, `${spec.tag}-class-question.png`, { fullPage: true });
    await save();
    log(`${spec.tag}: round of ${bubbles.length - 1} turn(s) in ${((Date.now() - asked) / 1000).toFixed(0)} s ${problem}`);

    const ready = course.scenes.filter((s) => s.state === "ready").length;
    assert.ok(ready >= Math.ceil(course.scenes.length * 0.9), `at least 90% of scenes ready: ${ready}/${course.scenes.length}`);
    assert.ok(course.scenes.filter((s) => s.state === "ready").every((s) => s.played), "every ready scene played");
    assert.ok(course.round.turns.length >= 1 && !course.round.problem, `a round was answered: ${course.round.problem}`);
    assert.equal(course.grade?.state, "graded", `a short answer was graded: ${course.grade?.why}`);
  });
}
