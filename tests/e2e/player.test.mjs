// Playing the bundled English course in a real browser at 2×, captions only: subtitles change,
// the spotlight shows, the whiteboard draws, seeking rebuilds the board, the quiz is answered,
// the discussion plays from its recording, and the course reaches its end.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { serveDist, launchBrowser, openPage, DIST, answerQuiz } from "./support.mjs";

const SHOTS = new URL("./artifacts/", import.meta.url).pathname;
const COURSE_FILE = "transformer-en.json";
let server;
let browser;
let course;

before(async () => {
  await mkdir(SHOTS, { recursive: true });
  course = JSON.parse(await readFile(join(DIST, "courses", COURSE_FILE), "utf8"));
  server = await serveDist();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const sceneWith = (predicate) => course.scenes.findIndex(predicate);
const hasAction = (type) => (scene) => (scene.actions ?? []).some((a) => a.type === type);

/** Opens the English sample from the home page, captions only, at 2×. */
async function openCourse(viewport = { width: 1280, height: 720 }) {
  const opened = await openPage(browser, { viewport });
  await opened.page.addInitScript(() => {
    localStorage.setItem("aula.captions_only", "true");
    localStorage.setItem("aula.speed", "2");
  });
  await opened.page.goto(server.url);
  await opened.page.getByTestId("sample-list").getByRole("link", { name: new RegExp(course.title) }).click();
  await opened.page.getByTestId("classroom").waitFor();
  return opened;
}

async function goToScene(page, index) {
  await page.getByTestId("scene-button").nth(index).click();
  await page.waitForFunction((i) => document.querySelectorAll("[data-testid=scene-button]")[i]?.classList.contains("current"), index);
}

const captionText = (page) => page.getByTestId("caption-text").textContent().catch(() => null);

test("the English sample plays: captions change, spotlight and whiteboard appear, the quiz scores, the course ends", async () => {
  const { context, page, problems } = await openCourse();
  assert.equal(await page.getByTestId("speed").inputValue(), "2");

  // Subtitles: at least two different sentences of the first scene within a few seconds.
  await page.getByTestId("play").click();
  await page.getByTestId("caption-text").waitFor();
  const seen = new Set();
  const started = Date.now();
  while (seen.size < 2 && Date.now() - started < 20000) {
    const text = await captionText(page);
    if (text) seen.add(text);
    await page.waitForTimeout(150);
  }
  assert.ok(seen.size >= 2, `captions should change, saw ${[...seen].join(" | ")}`);

  // Spotlight: the first scene that uses one.
  const spotScene = sceneWith(hasAction("spotlight"));
  assert.ok(spotScene >= 0, "the sample has a spotlight");
  await goToScene(page, spotScene);
  await page.getByTestId("play").click();
  await page.getByTestId("spotlight").waitFor({ timeout: 30000 });
  await page.screenshot({ path: `${SHOTS}player-spotlight-1280.png` });

  // Whiteboard: the first scene that draws on it; watch it draw, then seek back and forth.
  const boardScene = sceneWith((s) => (s.actions ?? []).some((a) => a.type.startsWith("wb_draw_")));
  assert.ok(boardScene >= 0, "the sample draws on the whiteboard");
  await goToScene(page, boardScene);
  const itemsBefore = await page.getByTestId("board-item").count();
  if ((await page.getByTestId("play").getAttribute("aria-label")) === "Play") await page.getByTestId("play").click();
  await page.waitForFunction(() => document.querySelector("[data-testid=whiteboard]")?.classList.contains("open"), null, { timeout: 30000 });
  await page.waitForFunction((n) => document.querySelectorAll("[data-testid=board-item]").length > n, itemsBefore, { timeout: 30000 });
  await page.waitForFunction((n) => document.querySelectorAll("[data-testid=board-item]").length > n + 1, itemsBefore, { timeout: 30000 });
  await page.waitForTimeout(300);
  await page.screenshot({ path: `${SHOTS}player-whiteboard-1280.png` });
  await page.getByTestId("play").click(); // pause

  const seek = page.getByTestId("seek");
  const setSeek = (value) => seek.evaluate((el, v) => { el.value = String(v); el.dispatchEvent(new Event("input", { bubbles: true })); }, value);
  const total = Number(await seek.getAttribute("max"));
  await setSeek(total);
  await page.waitForTimeout(200);
  const itemsAtEnd = await page.getByTestId("board-item").count();
  await setSeek(0);
  await page.waitForTimeout(200);
  assert.equal(await page.getByTestId("board-item").count(), itemsBefore, "seeking to the start rebuilds the board as it was");
  await setSeek(total);
  await page.waitForTimeout(200);
  assert.equal(await page.getByTestId("board-item").count(), itemsAtEnd, "seeking forward again rebuilds the same board");

  // Discussion: its recording plays as captions by the classmates.
  const talkScene = sceneWith(hasAction("discussion"));
  assert.ok(talkScene >= 0, "the sample has a discussion");
  await goToScene(page, talkScene);
  if ((await page.getByTestId("play").getAttribute("aria-label")) === "Play") await page.getByTestId("play").click();
  await page.getByTestId("discussion-card").waitFor({ timeout: 60000 });
  await page.getByTestId("discussion-accept").click();
  const recording = course.scenes[talkScene].actions.find((a) => a.type === "discussion").recording;
  await page.waitForFunction(
    (texts) => texts.some((t) => t.includes(document.querySelector("[data-testid=caption-text]")?.textContent ?? "\u0000")),
    recording.map((turn) => turn.text),
    { timeout: 30000 },
  );

  // Quiz: answer every question correctly from the course file, check, continue.
  const quizScene = sceneWith((s) => s.content.type === "quiz");
  assert.ok(quizScene >= 0, "the sample has a quiz");
  await goToScene(page, quizScene);
  await page.getByTestId("quiz").waitFor();
  const questions = course.scenes[quizScene].content.questions;
  const possible = questions.reduce((sum, q) => sum + (q.points ?? 1), 0);
  await answerQuiz(page, questions, (q) => q.reference_answer);
  await page.getByTestId("quiz-check").click();
  for (const q of questions.filter((q) => q.type === "short")) {
    await page.locator(`[data-question="${q.id}"] .self-mark input`).check();
  }
  await page.screenshot({ path: `${SHOTS}player-quiz-1280.png`, fullPage: true });
  assert.equal(await page.getByTestId("quiz-score").textContent(), `You scored ${possible} / ${possible}`);
  await page.getByTestId("quiz-continue").click();

  // The end: continuing after the last scene's quiz ends the course; otherwise play out the
  // last scene from near its end.
  const last = course.scenes.length - 1;
  if (quizScene !== last) {
    await goToScene(page, last);
    const lastTotal = Number(await seek.getAttribute("max"));
    await setSeek(Math.max(0, lastTotal - 1500));
    if ((await page.getByTestId("play").getAttribute("aria-label")) === "Play") await page.getByTestId("play").click();
  }
  await page.getByTestId("course-end").waitFor({ timeout: 30000 });
  await page.screenshot({ path: `${SHOTS}player-end-1280.png` });

  assert.deepEqual(problems, []);
  await context.close();
});

test("the resume point survives a reload", async () => {
  const { context, page, problems } = await openCourse();
  await goToScene(page, 2);
  await page.waitForTimeout(300);
  await page.reload();
  await page.getByTestId("classroom").waitFor();
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=scene-button]")[2]?.classList.contains("current"), null, { timeout: 10000 });
  assert.deepEqual(problems, []);
  await context.close();
});

test("phone width: the stage keeps 16:9 and the spotlight stays on the element", async () => {
  const { context, page, problems } = await openCourse({ width: 390, height: 844 });
  const spotScene = sceneWith(hasAction("spotlight"));
  await goToScene(page, spotScene);
  await page.getByTestId("play").click();
  await page.getByTestId("spotlight").waitFor({ timeout: 30000 });
  const box = await page.getByTestId("stage").boundingBox();
  assert.ok(Math.abs(box.width / box.height - 16 / 9) < 0.02, `stage ratio ${box.width}x${box.height}`);
  assert.ok(box.width <= 390, "the stage fits the phone's width");
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), "nothing makes the page scroll sideways");
  await page.screenshot({ path: `${SHOTS}player-spotlight-phone.png`, fullPage: true });
  const boardScene = sceneWith((s) => (s.actions ?? []).some((a) => a.type.startsWith("wb_draw_")));
  await goToScene(page, boardScene);
  if ((await page.getByTestId("play").getAttribute("aria-label")) === "Play") await page.getByTestId("play").click();
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=board-item]").length > 1, null, { timeout: 30000 });
  await page.screenshot({ path: `${SHOTS}player-whiteboard-phone.png`, fullPage: true });
  const quizScene = sceneWith((s) => s.content.type === "quiz");
  await goToScene(page, quizScene);
  await page.getByTestId("quiz").waitFor();
  await page.screenshot({ path: `${SHOTS}player-quiz-phone.png`, fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});
