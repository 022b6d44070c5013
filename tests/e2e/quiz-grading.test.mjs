// Quiz grading in class, against mock-llm: the English sample's quiz has two short answers; with
// a provider the course's teacher grades each one (one call each, a strict JSON grade), shows the
// score and feedback under the question, and the quiz total counts it. A reply that is not a
// valid grade, or no provider at all, leaves the learner's own marking with a one-line reason.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { serveDist, launchBrowser, openPage, startMock, connectToMock, answerQuiz as answerQuestions, DIST } from "./support.mjs";

const SHOTS = new URL("./artifacts/", import.meta.url).pathname;
const KEY = "sk-live-test-654321";
let server;
let browser;
let mock;
let mockUrl;
let script;

const course = JSON.parse(await readFile(join(DIST, "courses/transformer-en.json"), "utf8"));
const teacher = course.agents.find((a) => a.role === "teacher");
const quizScene = course.scenes.findIndex((s) => s.content.type === "quiz");
const questions = course.scenes[quizScene]?.content.questions ?? [];
const shorts = questions.filter((q) => q.type === "short");
const points = (q) => q.points ?? 1;
const choicePoints = questions.filter((q) => q.type !== "short").reduce((sum, q) => sum + points(q), 0);
const possible = questions.reduce((sum, q) => sum + points(q), 0);
// What the learner writes to each short question; the mock picks its reply by it.
const answerTo = (q) => `My answer to ${q.id}: the first word gets most of the weight.`;

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

const connect = (page) => connectToMock(page, { appUrl: server.url, mockUrl, key: KEY });

/** Opens the sample's quiz and answers every choice question right and every short one. */
async function answerQuiz(page) {
  await page.goto(`${server.url}/classroom/sample-transformer-en`);
  await page.getByTestId("classroom").waitFor();
  await page.getByTestId("scene-button").nth(quizScene).click();
  await page.getByTestId("quiz").waitFor();
  await answerQuestions(page, questions, answerTo);
  // Checking works from the keyboard.
  await page.getByTestId("quiz-check").focus();
  await page.keyboard.press("Enter");
}

const gradeLine = (page, q) => page.locator(`[data-question="${q.id}"] [data-testid=grade]`);

async function waitForState(page, q, state) {
  await page.waitForFunction(
    ([id, want]) => document.querySelector(`[data-question="${id}"] [data-testid=grade]`)?.dataset.state === want,
    [q.id, state],
    { timeout: 15000 },
  );
}

async function chatRequests() {
  const requests = await (await fetch(`${mockUrl}/__requests`)).json();
  return { requests, chats: requests.filter((r) => r.method === "POST" && r.path?.endsWith("/chat/completions")) };
}

test("the sample's quiz has short answers to grade", () => {
  assert.ok(quizScene >= 0, "the English sample has a quiz");
  assert.ok(shorts.length >= 2, `two short answers or more: ${shorts.length}`);
});

test("with a provider the teacher grades each short answer: Grading…, then the score and feedback, and the total counts them", async () => {
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  // The first short answer gets part of its points (a text reply with prose around the JSON),
  // the others full marks (a JSON reply).
  const [first, ...rest] = shorts;
  const feedback = (q) => `You named the right word for ${q.id}; now add the three weights.`;
  await script({
    rules: [
      {
        match: { last_message_contains: answerTo(first) },
        reply: { text: `Here is my grade:\n\`\`\`json\n${JSON.stringify({ score: 1, feedback: feedback(first) })}\n\`\`\`` },
      },
      ...rest.map((q) => ({
        match: { last_message_contains: answerTo(q) },
        reply: { json: { score: points(q), feedback: feedback(q) } },
      })),
    ],
    default: { text: "Not a grading request." },
    chunk_words: 2,
    chunk_delay_ms: 120,
  });
  const { context, page, problems } = await openPage(browser);
  await page.addInitScript(() => localStorage.setItem("aula.captions_only", "true"));
  await connect(page);
  await answerQuiz(page);

  await waitForState(page, first, "grading");
  assert.match(await gradeLine(page, first).textContent(), /Grading…/);
  for (const q of shorts) await waitForState(page, q, "graded");

  const firstLine = await gradeLine(page, first).textContent();
  assert.ok(firstLine.includes(`${teacher.name}: 1 / ${points(first)}`), firstLine);
  assert.ok(firstLine.includes(feedback(first)), firstLine);
  for (const q of rest) {
    const line = await gradeLine(page, q).textContent();
    assert.ok(line.includes(`${teacher.name}: ${points(q)} / ${points(q)}`), line);
  }
  // The teacher's grade replaces the learner's own mark.
  for (const q of shorts) {
    assert.equal(await page.locator(`[data-question="${q.id}"] .self-mark`).isVisible(), false);
  }
  const earned = choicePoints + 1 + rest.reduce((sum, q) => sum + points(q), 0);
  assert.equal(await page.getByTestId("quiz-score").textContent(), `You scored ${earned} / ${possible}`);
  await page.screenshot({ path: `${SHOTS}quiz-graded.png`, fullPage: true });

  // One call per short answer, each with the learner's answer, the teacher and a JSON schema.
  const { requests, chats } = await chatRequests();
  assert.equal(chats.length, shorts.length, `one call per short answer: ${chats.length}`);
  for (const q of shorts) {
    const call = chats.find((c) => JSON.stringify(c.body.messages.at(-1)).includes(answerTo(q)));
    assert.ok(call, `a call grades ${q.id}`);
    assert.match(JSON.stringify(call.body.messages[0]), new RegExp(teacher.name));
    assert.equal(call.body.response_format?.json_schema?.name, "short_answer_grade");
  }
  assert.ok(!JSON.stringify(requests).includes(KEY), "mock-llm's log never shows the key");
  assert.deepEqual(problems, []);
  await context.close();
});

test("a reply that is not a valid grade falls back to self-marking with the reason", async () => {
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  const [first, second] = shorts;
  await script({
    rules: [
      { match: { last_message_contains: answerTo(first) }, reply: { text: "I would give this two points, it is nearly right." } },
      { match: { last_message_contains: answerTo(second) }, reply: { json: { score: points(second) + 5, feedback: "Generous!" } } },
    ],
    default: { text: "{\"score\": \"lots\"}" },
  });
  const { context, page, problems } = await openPage(browser);
  await page.addInitScript(() => localStorage.setItem("aula.captions_only", "true"));
  await connect(page);
  await answerQuiz(page);
  for (const q of shorts) await waitForState(page, q, "self");

  const firstLine = await gradeLine(page, first).textContent();
  assert.match(firstLine, /could not grade this one, so mark it yourself/);
  assert.match(firstLine, /no JSON object/);
  const secondLine = await gradeLine(page, second).textContent();
  assert.match(secondLine, new RegExp(`outside 0–${points(second)}`));
  assert.ok(!firstLine.includes(KEY) && !secondLine.includes(KEY));
  // Self-marking works as without a provider, by keyboard too.
  assert.equal(await page.getByTestId("quiz-score").textContent(), `You scored ${choicePoints} / ${possible}`);
  const box = page.locator(`[data-question="${first.id}"] .self-mark input`);
  await box.focus();
  await page.keyboard.press("Space");
  assert.equal(
    await page.getByTestId("quiz-score").textContent(),
    `You scored ${choicePoints + points(first)} / ${possible}`,
  );
  await page.screenshot({ path: `${SHOTS}quiz-grading-fallback.png`, fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});

test("without a provider the learner marks short answers and is told where to connect one", async () => {
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  const { context, page, problems } = await openPage(browser);
  await page.addInitScript(() => localStorage.setItem("aula.captions_only", "true"));
  await answerQuiz(page);
  for (const q of shorts) await waitForState(page, q, "self");
  assert.match(await gradeLine(page, shorts[0]).textContent(), /AI provider is connected in Settings/);
  await page.locator(`[data-question="${shorts[0].id}"] .self-mark input`).check();
  assert.equal(
    await page.getByTestId("quiz-score").textContent(),
    `You scored ${choicePoints + points(shorts[0])} / ${possible}`,
  );
  const { chats } = await chatRequests();
  assert.equal(chats.length, 0, "nothing is sent without a provider");
  assert.deepEqual(problems, []);
  await context.close();
});

test("moving on while the teacher is still grading is quiet", async () => {
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  await script({ default: { json: { score: 1, feedback: "Fine." } }, chunk_words: 1, chunk_delay_ms: 300 });
  const { context, page, problems } = await openPage(browser);
  await page.addInitScript(() => localStorage.setItem("aula.captions_only", "true"));
  await connect(page);
  await answerQuiz(page);
  await waitForState(page, shorts[0], "grading");
  await page.getByTestId("scene-button").nth(quizScene - 1).click();
  // The grades arrive after the quiz is gone.
  const started = Date.now();
  while ((await chatRequests()).chats.length < shorts.length && Date.now() - started < 10000) {
    await page.waitForTimeout(100);
  }
  await page.waitForTimeout(2500);
  assert.deepEqual(problems, []);
  await context.close();
});
