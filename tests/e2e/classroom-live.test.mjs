// Asking the class during the lecture, against mock-llm: the lecture pauses, the round runs in
// the AI worker (the director picks the teacher, the teacher's reply streams into a bubble, the
// director ends the round, the teacher's drawing shows on the whiteboard), and the lecture goes on.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { serveDist, launchBrowser, openPage, startMock, DIST } from "./support.mjs";

const SHOTS = new URL("./artifacts/", import.meta.url).pathname;
const ASK = "Who speaks next?"; // the director's question (director::prompt::DIRECTOR_ASK)
const ANSWER = "We divide by the square root of d_k so the scores stay small enough for softmax to keep learning.";
let server;
let browser;
let mock;
let mockUrl;
let mockScript;

before(async () => {
  await mkdir(SHOTS, { recursive: true });
  ({ child: mock, url: mockUrl, script: mockScript } = await startMock());
  server = await serveDist();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
  mock?.kill();
});

const script = (body) => mockScript(body);

async function connect(page) {
  await page.goto(`${server.url}/settings`);
  await page.getByTestId("provider-settings").waitFor();
  await page.getByTestId("provider-preset").selectOption("custom");
  await page.getByTestId("provider-url").fill(`${mockUrl}/v1`);
  await page.getByTestId("provider-key").fill("sk-live-test-123456");
  await page.getByTestId("provider-model").fill("mock-model");
  await page.getByTestId("provider-save").click();
  await page.getByTestId("provider-saved").waitFor();
}

test("a question pauses the lecture, the teacher answers in a streamed bubble, the lecture resumes", async () => {
  const teacherReply = JSON.stringify([
    { type: "action", name: "wb_draw_latex", params: { latex: "\\frac{QK^T}{\\sqrt{d_k}}", x: 60, y: 60 } },
    { type: "text", content: ANSWER },
  ]);
  await script({
    rules: [
      { match: { last_message_contains: ASK, system_contains: "Nobody has spoken yet this round." }, reply: { text: '{"next_agent":"teacher"}' } },
      { match: { last_message_contains: ASK }, reply: { text: '{"next_agent":"END"}' } },
    ],
    default: { text: teacherReply },
    chunk_words: 2,
    chunk_delay_ms: 30,
  });
  const { context, page, problems } = await openPage(browser);
  await page.addInitScript(() => localStorage.setItem("aula.captions_only", "true"));
  await connect(page);
  await page.goto(`${server.url}/classroom/sample-transformer-en`);
  await page.getByTestId("classroom").waitFor();
  await page.getByTestId("play").click();
  await page.waitForFunction(() => document.querySelector("[data-testid=stage]")?.dataset.state === "playing");

  await page.getByTestId("ask-input").fill("Why do we divide by the square root of d_k?");
  await page.getByTestId("ask-send").click();
  await page.waitForFunction(() => document.querySelector("[data-testid=stage]")?.dataset.state === "interrupted", null, { timeout: 10000 });
  // The teacher's formula lands on the whiteboard while the round runs, the board open.
  await page.waitForFunction(
    () => document.querySelector("[data-testid=whiteboard]")?.classList.contains("open")
      && document.querySelector("[data-testid=board-item].board-latex"),
    null,
    { timeout: 15000 },
  );
  // The reply streams: the teacher's bubble is seen unfinished, then finished.
  await page.waitForFunction(() => document.querySelector("[data-testid=bubble][data-done=false]"), null, { timeout: 15000 });
  await page.waitForFunction(
    (answer) => [...document.querySelectorAll("[data-testid=bubble]")].some((b) => b.dataset.done === "true" && b.textContent.includes(answer)),
    ANSWER,
    { timeout: 15000 },
  );
  const bubbles = await page.getByTestId("bubble").allTextContents();
  assert.equal(bubbles.length, 2, `the learner's question and one answer: ${bubbles}`);
  assert.match(bubbles[0], /square root of d_k\?/);
  const course = JSON.parse(await readFile(join(DIST, "courses/transformer-en.json"), "utf8"));
  const teacher = course.agents.find((a) => a.id === "teacher");
  assert.ok(bubbles[1].startsWith(teacher.name), `the answer is the course's teacher's: ${bubbles[1]}`);
  await page.waitForFunction(() => !document.querySelector("[data-testid=ask-send]").disabled);
  await page.waitForFunction(() => document.querySelector("[data-testid=stage]")?.dataset.state === "playing", null, { timeout: 10000 });

  // What reached the provider: a routing call, the teacher's call (with the question), a routing call.
  const requests = await (await fetch(`${mockUrl}/__requests`)).json();
  const chats = requests.filter((r) => r.method === "POST" && r.path?.endsWith("/chat/completions"));
  assert.equal(chats.length, 3, `director, teacher, director: ${chats.length}`);
  assert.match(JSON.stringify(chats[1].body), /square root of d_k/);
  assert.ok(!JSON.stringify(requests).includes("sk-live-test-123456"), "mock-llm's log never shows the key");
  await page.screenshot({ path: `${SHOTS}classroom-ask.png`, fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});

test("without a provider the question is kept and the page says where to connect one", async () => {
  const { context, page, problems } = await openPage(browser);
  await page.goto(`${server.url}/classroom/sample-transformer-en`);
  await page.getByTestId("classroom").waitFor();
  await page.getByTestId("ask-input").fill("What is attention?");
  await page.getByTestId("ask-send").click();
  await page.getByTestId("ask-problem").waitFor();
  assert.match(await page.getByTestId("ask-problem").textContent(), /Settings/);
  assert.equal(await page.getByTestId("ask-input").inputValue(), "What is attention?", "the question is not lost");
  assert.equal(await page.getByTestId("bubble").count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});
