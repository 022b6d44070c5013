// The live classroom against mock-llm: a question pauses the lecture, a round runs in the AI worker
// (the director picks who speaks, replies stream into bubbles, drawings show on the whiteboard),
// and the lecture goes on. The conversation is an event log in IndexedDB: a reload mid-round keeps
// every finished turn, marks the one cut off, and the learner carries on. Failures (a rejected key,
// a stream cut mid-turn) say what happened and lose nothing shown. A scene's discussion runs live,
// and a question can be spoken where the browser recognizes speech.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { serveDist, launchBrowser, openPage, startMock, connectToMock, DIST } from "./support.mjs";

const SHOTS = new URL("./artifacts/", import.meta.url).pathname;
const ASK = "Who speaks next?"; // the director's question (director::prompt::DIRECTOR_ASK)
const ANSWER = "We divide by the square root of d_k so the scores stay small enough for softmax to keep learning.";
let server;
let browser;
let mock;
let mockUrl;
let mockScript;
const KEY = "sk-live-test-123456";

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

const connect = (page) => connectToMock(page, { appUrl: server.url, mockUrl, key: KEY });

test("a question pauses the lecture, the teacher answers in a streamed bubble, the lecture resumes", async () => {
  const teacherReply = JSON.stringify([
    { type: "action", name: "wb_draw_latex", params: { latex: "\\frac{QK^T}{\\sqrt{d_k}}", x: 60, y: 60 } },
    { type: "text", content: ANSWER },
  ]);
  await script({
    rules: [
      // Were the director asked first, it would end the round with no one speaking.
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
  const bubbles = await bubbleTexts(page);
  assert.equal(bubbles.length, 2, `the learner's question and one answer: ${bubbles}`);
  assert.match(bubbles[0], /square root of d_k\?/);
  const course = JSON.parse(await readFile(join(DIST, "courses/transformer-en.json"), "utf8"));
  const teacher = course.agents.find((a) => a.id === "teacher");
  assert.ok(bubbles[1].startsWith(teacher.name), `the answer is the course's teacher's: ${bubbles[1]}`);
  await page.waitForFunction(() => document.querySelector("[data-testid=ask-send]")?.disabled === false);
  await page.waitForFunction(() => document.querySelector("[data-testid=stage]")?.dataset.state === "playing", null, { timeout: 10000 });

  // What reached the provider: the teacher's call first (code gives her the open question, no
  // routing call), then one routing call.
  const requests = await (await fetch(`${mockUrl}/__requests`)).json();
  const chats = requests.filter((r) => r.method === "POST" && r.path?.endsWith("/chat/completions"));
  assert.equal(chats.length, 2, `teacher, director: ${chats.length}`);
  assert.match(JSON.stringify(chats[0].body), /square root of d_k/);
  assert.doesNotMatch(JSON.stringify(chats[0].body), /Who speaks next\?/, "the first call is the teacher's, not the director's");
  assert.match(JSON.stringify(chats[1].body), /Who speaks next\?/);
  assert.ok(!JSON.stringify(requests).includes(KEY), "mock-llm's log never shows the key");
  await page.screenshot({ path: `${SHOTS}classroom-ask.png`, fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});

test("a round the director ends before anyone speaks says so, and the next question clears it", async () => {
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  // "ok thanks" answers nothing, so code leaves the turn to the director, which ends the round.
  await script({
    rules: [{ match: { last_message_contains: ASK }, reply: { text: '{"next_agent":"END"}' } }],
    default: reply(say("Softmax turns the scores into weights.")),
  });
  const { context, page, problems } = await openConnectedClassroom();
  await page.getByTestId("ask-input").fill("ok thanks");
  await page.getByTestId("ask-send").click();
  await page.waitForFunction(() => /No one in the class took a turn/.test(document.querySelector("[data-testid=ask-status]:not([hidden])")?.textContent), null, { timeout: 15000 });
  assert.equal(await page.getByTestId("ask-problem").isVisible(), false, "it is not shown as an error");
  assert.equal(await page.getByTestId("bubble").count(), 1, "only the learner's words");
  // A real question goes to the teacher by code and clears the note.
  await page.getByTestId("ask-input").fill("What does softmax do?");
  await page.getByTestId("ask-send").click();
  await page.waitForFunction(() => [...document.querySelectorAll("[data-testid=bubble]")].some((b) => b.dataset.done === "true" && b.textContent.includes("weights")), null, { timeout: 15000 });
  // The round goes on to the director after the teacher's turn ("choosing" shows meanwhile).
  await page.waitForFunction(() => document.querySelector("[data-testid=ask-send]")?.disabled === false, null, { timeout: 15000 });
  assert.equal(await page.getByTestId("ask-status").isVisible(), false, "the note is gone once someone answered");
  assert.deepEqual(problems, []);
  await context.close();
});

test("a round whose agents answer without words says no one took a turn", async () => {
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  // The teacher takes the question by code and replies with no items; so does everyone after.
  await script({ rules: [], default: { text: "[]" } });
  const { context, page, problems } = await openConnectedClassroom();
  await page.getByTestId("ask-input").fill("What does softmax do?");
  await page.getByTestId("ask-send").click();
  await page.waitForFunction(() => /No one in the class took a turn/.test(document.querySelector("[data-testid=ask-status]:not([hidden])")?.textContent), null, { timeout: 15000 });
  assert.equal(await page.getByTestId("bubble").count(), 1, "only the learner's words");
  assert.equal(await page.getByTestId("ask-problem").isVisible(), false, "it is not shown as an error");
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

// The three-agent round: the teacher answers and draws, Sam asks a follow-up, Priya adds a note
// on the board, the director ends it. Each agent call is told apart by its persona line, each
// director call by the turns already taken.
const TEACHER_SAYS = "Dividing by the square root of d_k keeps the dot products from growing with the dimension.";
const SAM_SAYS = "So without it, would softmax put almost all the weight on one word?";
const PRIYA_SAYS = "I wrote the two cases on the board so we can compare them.";
const TEACHER_THINKS = "The learner asks about the scaling factor. Start from the variance of a dot product of d_k random terms, then say what softmax does with large inputs, then draw the formula.";
const reply = (...items) => ({ text: JSON.stringify(items) });
const say = (content) => ({ type: "text", content });
const draw = (name, params) => ({ type: "action", name, params });

function threeAgentRound({ priya = {}, teacher = {} } = {}) {
  return [
    { match: { last_message_contains: ASK, system_contains: "Priya (priya," }, reply: { text: '{"next_agent":"END"}' } },
    { match: { last_message_contains: ASK, system_contains: "Sam (sam," }, reply: { text: '{"next_agent":"priya"}' } },
    { match: { last_message_contains: ASK, system_contains: "Dr. Elena Ward (teacher," }, reply: { text: '{"next_agent":"sam"}' } },
    { match: { last_message_contains: ASK }, reply: { text: '{"next_agent":"teacher"}' } },
    {
      match: { system_contains: "You are Dr. Elena Ward," },
      reply: {
        ...reply(draw("wb_draw_latex", { latex: "\\frac{QK^T}{\\sqrt{d_k}}", x: 60, y: 60 }), say(TEACHER_SAYS)),
        thinking: TEACHER_THINKS,
      },
      ...teacher,
    },
    { match: { system_contains: "You are Sam," }, reply: reply(say(SAM_SAYS)) },
    {
      match: { system_contains: "You are Priya," },
      reply: reply(say(PRIYA_SAYS), draw("wb_draw_text", { content: "with √d_k: spread out · without: one spike", x: 60, y: 260 })),
      ...priya,
    },
  ];
}

/** Each bubble's words as the learner reads them: the speaker's name, then what was said. */
const bubbleTexts = (page) => page.getByTestId("bubble").evaluateAll((bubbles) =>
  bubbles.map((b) => [...b.querySelectorAll(".bubble-name, .bubble-text, .bubble-cut")].map((e) => e.textContent).join(" ")));
const chatCalls = async () => {
  const requests = await (await fetch(`${mockUrl}/__requests`)).json();
  return { requests, chats: requests.filter((r) => r.method === "POST" && r.path?.endsWith("/chat/completions")) };
};

/** A new browser context, captions only, connected to mock-llm, in the English sample's classroom. */
async function openConnectedClassroom() {
  const opened = await openPage(browser);
  await opened.page.addInitScript(() => localStorage.setItem("aula.captions_only", "true"));
  await connect(opened.page);
  await openClassroom(opened.page);
  return opened;
}

async function openClassroom(page) {
  await page.goto(`${server.url}/classroom/sample-transformer-en`);
  await page.getByTestId("classroom").waitFor();
  // Asking waits until the saved conversation is read back.
  await page.waitForFunction(() => document.querySelector("[data-testid=ask-send]")?.disabled === false);
}

test("a question starts a three-agent round that streams, draws, ends, and the lecture resumes; the round is noted in tokens", async () => {
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  await script({ rules: threeAgentRound(), chunk_words: 2, chunk_delay_ms: 20 });
  const { context, page, problems } = await openConnectedClassroom();
  await page.getByTestId("play").click();
  await page.waitForFunction(() => document.querySelector("[data-testid=stage]")?.dataset.state === "playing");
  await page.getByTestId("ask-input").fill("Why do we divide by the square root of d_k?");
  // A double press asks once.
  await page.getByTestId("ask-input").press("Enter");
  await page.getByTestId("ask-input").press("Enter");
  await page.waitForFunction(() => document.querySelector("[data-testid=stage]")?.dataset.state === "interrupted", null, { timeout: 10000 });
  // The teacher's thinking shows in a bar on her bubble until she speaks.
  await page.waitForFunction(() => document.querySelector("[data-testid=bubble] [data-testid=thinking]")?.textContent.includes("variance"), null, { timeout: 15000 });
  // Sam's bubble is seen streaming, unfinished.
  await page.waitForFunction(() => [...document.querySelectorAll("[data-testid=bubble][data-done=false]")].some((b) => b.querySelector(".bubble-name").textContent === "Sam"), null, { timeout: 15000 });
  // The teacher's formula and Priya's note are on the open whiteboard while the round runs.
  await page.waitForFunction(
    () => document.querySelector("[data-testid=whiteboard]")?.classList.contains("open")
      && document.querySelector("[data-testid=board-item].board-latex")
      && [...document.querySelectorAll("[data-testid=board-item]")].some((i) => i.textContent.includes("spread out")),
    null,
    { timeout: 20000 },
  );
  await page.screenshot({ path: `${SHOTS}classroom-round.png`, fullPage: true });
  await page.waitForFunction(() => document.querySelector("[data-testid=stage]")?.dataset.state === "playing", null, { timeout: 20000 });
  const texts = await bubbleTexts(page);
  assert.equal(texts.length, 4, `the question and three turns: ${texts}`);
  assert.ok(texts[1].startsWith("Dr. Elena Ward") && texts[1].includes(TEACHER_SAYS), texts[1]);
  assert.ok(texts[2].startsWith("Sam") && texts[2].includes(SAM_SAYS), texts[2]);
  assert.ok(texts[3].startsWith("Priya") && texts[3].includes(PRIYA_SAYS), texts[3]);
  assert.equal(await page.getByTestId("thinking").count(), 0, "the thinking bar settles once the turn speaks");
  assert.ok(!texts[1].includes("variance"), "thinking is not part of the answer");
  // Both drawings were on the board while the round ran; the lecture took the stage back after.
  const { requests, chats } = await chatCalls();
  // The open question goes to the teacher by code: the round's first call is hers.
  assert.equal(chats.length, 6, `three director calls and three agent calls: ${chats.length}`);
  assert.doesNotMatch(JSON.stringify(chats[0].body), /Who speaks next\?/, "no director call before the teacher");
  assert.match(JSON.stringify(chats[0].body), /You are Dr\. Elena Ward,/);
  const input = chats.reduce((n, c) => n + c.input_tokens, 0);
  const output = chats.reduce((n, c) => n + c.output_tokens, 0);
  console.log(`three-agent round: ${chats.length} LLM calls, ${input} input + ${output} output tokens (mock-llm's estimate)`);
  assert.ok(!JSON.stringify(requests).includes(KEY), "mock-llm's log never shows the key");
  assert.deepEqual(problems, []);
  await context.close();
});

/** Reads every record of the sessions store, as the page left it. */
async function sessionRecords(page) {
  return page.evaluate(() => new Promise((resolve, reject) => {
    const open = indexedDB.open("aula");
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const all = db.transaction("sessions").objectStore("sessions").getAll();
      all.onsuccess = () => { db.close(); resolve(all.result.map((r) => (typeof r === "string" ? JSON.parse(r) : r))); };
      all.onerror = () => reject(all.error);
    };
  }));
}

test("closing the page mid-round and opening it again restores every finished turn, marks the cut one, and the learner carries on", async () => {
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  // Priya's reply sends its first words, then goes quiet: the page is closed while she speaks.
  await script({ rules: threeAgentRound({ priya: { faults: { stall_ms: 60000 } } }), chunk_words: 2, chunk_delay_ms: 20 });
  const { context, page, problems } = await openConnectedClassroom();
  await page.getByTestId("ask-input").fill("Why do we divide by the square root of d_k?");
  await page.getByTestId("ask-send").click();
  await page.waitForFunction(
    () => [...document.querySelectorAll("[data-testid=bubble][data-done=false]")].some((b) => b.querySelector(".bubble-name").textContent === "Priya" && b.querySelector(".bubble-text").textContent.length > 0),
    null,
    { timeout: 20000 },
  );
  const partial = await page.locator("[data-testid=bubble][data-done=false] .bubble-text").textContent();
  assert.ok(PRIYA_SAYS.startsWith(partial.trim()) && partial.trim().length < PRIYA_SAYS.length, `Priya was cut mid-sentence: "${partial}"`);
  assert.deepEqual(problems, []);
  await page.waitForTimeout(300); // what is shown is written within milliseconds
  await page.close();

  const again = await context.newPage();
  const problemsAgain = [];
  again.on("pageerror", (error) => problemsAgain.push(`pageerror: ${error.message}`));
  again.on("console", (message) => { if (message.type() === "error") problemsAgain.push(message.text()); });
  await openClassroom(again);
  await again.waitForFunction(() => document.querySelectorAll("[data-testid=bubble]").length === 4, null, { timeout: 10000 });
  const texts = await bubbleTexts(again);
  assert.match(texts[0], /square root of d_k\?/);
  assert.ok(texts[1].includes(TEACHER_SAYS) && texts[2].includes(SAM_SAYS), `finished turns are back: ${texts}`);
  const cut = again.locator("[data-testid=bubble]").nth(3);
  assert.equal(await cut.getAttribute("data-cut"), "true", "Priya's turn is marked as cut off");
  assert.equal(await cut.getAttribute("data-done"), "true");
  assert.equal((await cut.locator(".bubble-text").textContent()).trim(), partial.trim(), "what was shown of it is kept");
  await again.screenshot({ path: `${SHOTS}classroom-restored.png`, fullPage: true });
  // The log itself says so, and finished turns were compacted to their checkpoints.
  const records = await sessionRecords(again);
  const ends = records.filter((r) => r.kind === "agent_end");
  assert.deepEqual(ends.map((e) => [e.agent_id, e.interrupted ?? false]), [["teacher", false], ["sam", false], ["priya", true]]);
  const deltas = records.filter((r) => r.kind === "text_delta");
  assert.equal(deltas.length, 0, "every turn has its checkpoint, so no text delta is kept");

  // The learner carries on: the next question's calls carry the conversation so far.
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  await script({
    rules: [
      { match: { last_message_contains: ASK, system_contains: "Dr. Elena Ward (teacher," }, reply: { text: '{"next_agent":"END"}' } },
      { match: { last_message_contains: ASK }, reply: { text: '{"next_agent":"teacher"}' } },
    ],
    default: reply(say("Yes: without it the largest score wins almost everything.")),
  });
  await again.getByTestId("ask-input").fill("So is Sam right about the spike?");
  await again.getByTestId("ask-send").click();
  await again.waitForFunction(() => [...document.querySelectorAll("[data-testid=bubble]")].some((b) => b.dataset.done === "true" && b.textContent.includes("largest score wins")), null, { timeout: 15000 });
  const { chats } = await chatCalls();
  const teacherCall = chats.find((c) => JSON.stringify(c.body).includes("You are Dr. Elena Ward,"));
  assert.ok(teacherCall, "the teacher was called");
  const sent = JSON.stringify(teacherCall.body.messages);
  assert.ok(sent.includes(SAM_SAYS.slice(0, 30)) && sent.includes("So is Sam right"), "the earlier turns and the new question reach the teacher");
  assert.equal(await again.getByTestId("bubble").count(), 6);

  // A new conversation starts empty and stays so after a reload; the old one is kept.
  await again.getByTestId("ask-new").click();
  assert.equal(await again.getByTestId("bubble").count(), 0);
  // The pointer to the old conversation is removed in the background, within milliseconds.
  for (let i = 0; i < 50 && (await sessionRecords(again)).some((r) => typeof r === "string"); i++) {
    await again.waitForTimeout(20);
  }
  await again.reload();
  await openClassroom(again);
  assert.equal(await again.getByTestId("bubble").count(), 0, "the old conversation does not come back");
  const headers = (await sessionRecords(again)).filter((r) => r.format === 1 && r.course_id === "sample-transformer-en");
  assert.equal(headers.length, 1, "the old conversation is still stored");
  assert.deepEqual(problemsAgain, []);
  await context.close();
});

test("leaving the classroom mid-round stops the round quietly; coming back shows the conversation", async () => {
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  await script({ rules: threeAgentRound({ priya: { faults: { stall_ms: 60000 } } }), chunk_words: 2, chunk_delay_ms: 20 });
  const { context, page, problems } = await openConnectedClassroom();
  await page.getByTestId("ask-input").fill("Why do we divide by the square root of d_k?");
  await page.getByTestId("ask-send").click();
  await page.waitForFunction(() => [...document.querySelectorAll("[data-testid=bubble][data-done=false]")].some((b) => b.querySelector(".bubble-name").textContent === "Priya" && b.querySelector(".bubble-text").textContent.length > 0), null, { timeout: 20000 });
  await page.getByRole("link", { name: "Library" }).click();
  await page.getByTestId("sample-list").waitFor();
  await page.waitForTimeout(500); // the round's last updates arrive after the classroom is gone
  await page.goBack();
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=bubble]").length === 4, null, { timeout: 10000 });
  assert.equal(await page.locator("[data-testid=bubble]").nth(3).getAttribute("data-cut"), "true");
  assert.deepEqual(problems, []);
  await context.close();
});

test("a rejected key mid-round says so with the fix, and the turns already shown stay", async () => {
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  const rules = threeAgentRound();
  const sam = rules.find((r) => r.match.system_contains === "You are Sam,");
  sam.faults = { http_error: { status: 401, message: "Incorrect API key provided" } };
  await script({ rules, chunk_words: 2, chunk_delay_ms: 10 });
  const { context, page, problems } = await openConnectedClassroom();
  await page.getByTestId("play").click();
  await page.getByTestId("ask-input").fill("Why do we divide by the square root of d_k?");
  await page.getByTestId("ask-send").click();
  await page.getByTestId("ask-problem").waitFor({ timeout: 15000 });
  const message = await page.getByTestId("ask-problem").textContent();
  assert.match(message, /rejected/i);
  assert.match(message, /Settings/);
  assert.ok(!message.includes(KEY), "the message never shows the key");
  await page.waitForFunction(() => document.querySelector("[data-testid=ask-send]")?.disabled === false);
  const texts = await bubbleTexts(page);
  assert.ok(texts.some((t) => t.includes(TEACHER_SAYS)), `the teacher's answer stays: ${texts}`);
  assert.equal(await page.getByTestId("stage").getAttribute("data-state"), "interrupted", "the lecture waits for the learner");
  // It offers to go on; going on plays the lecture again and clears the message.
  await page.getByTestId("ask-go-on").click();
  await page.waitForFunction(() => document.querySelector("[data-testid=stage]")?.dataset.state === "playing");
  assert.equal(await page.getByTestId("ask-problem").isVisible(), false);
  assert.deepEqual(problems, []);
  await context.close();
});

test("a stream cut mid-turn keeps what arrived, marks it cut off, and says why", async () => {
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  // The connection closes after six chunks of the teacher's answer (no thinking before it).
  const teacherAnswer = reply(draw("wb_draw_latex", { latex: "x", x: 60, y: 60 }), say(TEACHER_SAYS));
  const rules = threeAgentRound({ teacher: { reply: teacherAnswer, faults: { cut_after_chunks: 6 } } });
  await script({ rules, chunk_words: 2, chunk_delay_ms: 10 });
  const { context, page, problems } = await openConnectedClassroom();
  await page.getByTestId("ask-input").fill("Why do we divide by the square root of d_k?");
  await page.getByTestId("ask-send").click();
  await page.getByTestId("ask-problem").waitFor({ timeout: 20000 });
  await page.waitForFunction(() => document.querySelector("[data-testid=ask-send]")?.disabled === false, null, { timeout: 20000 });
  const teacher = page.locator("[data-testid=bubble]").nth(1);
  assert.equal(await teacher.getAttribute("data-cut"), "true");
  const shown = (await teacher.locator(".bubble-text").textContent()).trim();
  assert.ok(shown.length > 0 && TEACHER_SAYS.startsWith(shown), `the words that arrived stay: "${shown}"`);
  assert.ok((await page.getByTestId("ask-problem").textContent()).length > 20, "a message says what happened");
  // A reload shows the same.
  await page.reload();
  await openClassroom(page);
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=bubble]").length === 2);
  assert.equal(await page.locator("[data-testid=bubble]").nth(1).getAttribute("data-cut"), "true");
  assert.deepEqual(problems, []);
  await context.close();
});

test("with a provider, a scene's discussion runs live: its classmate opens, the class discusses, the lecture goes on", async () => {
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  const course = JSON.parse(await readFile(join(DIST, "courses/transformer-en.json"), "utf8"));
  const scene = course.scenes.findIndex((s) => (s.actions ?? []).some((a) => a.type === "discussion"));
  const discussion = course.scenes[scene].actions.find((a) => a.type === "discussion");
  const opener = course.agents.find((a) => a.id === discussion.agent_id);
  await script({
    rules: [
      { match: { last_message_contains: ASK, system_contains: "Dr. Elena Ward (teacher," }, reply: { text: '{"next_agent":"END"}' } },
      { match: { last_message_contains: ASK }, reply: { text: '{"next_agent":"teacher"}' } },
      { match: { system_contains: `You are ${opener.name},` }, reply: reply(say("Is it the total arithmetic or the steps in a row that matter on a GPU?")) },
      { match: { system_contains: "You are Dr. Elena Ward," }, reply: reply(say("The steps in a row: a GPU does the arithmetic side by side.")) },
    ],
    chunk_words: 3,
    chunk_delay_ms: 10,
  });
  const { context, page, problems } = await openPage(browser);
  await page.addInitScript(() => { localStorage.setItem("aula.captions_only", "true"); localStorage.setItem("aula.speed", "2"); });
  await connect(page);
  await openClassroom(page);
  await page.getByTestId("scene-button").nth(scene).click();
  // Just before the discussion at the scene's end.
  const seek = page.getByTestId("seek");
  const total = Number(await seek.getAttribute("max"));
  await seek.evaluate((el, v) => { el.value = String(v); el.dispatchEvent(new Event("input", { bubbles: true })); }, total - 4000);
  await page.getByTestId("play").click();
  await page.getByTestId("discussion-card").waitFor({ timeout: 20000 });
  assert.match(await page.getByTestId("discussion-card").textContent(), new RegExp(opener.name));
  await page.screenshot({ path: `${SHOTS}discussion-offer.png` });
  await page.getByTestId("discussion-join").click();
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=bubble][data-done=true]").length >= 2, null, { timeout: 20000 });
  await page.screenshot({ path: `${SHOTS}discussion-live.png`, fullPage: true });
  const texts = await bubbleTexts(page);
  assert.equal(await page.getByTestId("topic-line").textContent(), `Discussion: ${discussion.topic}`, "the conversation says what is discussed");
  assert.ok(texts[0].startsWith(opener.name), `the classmate who raised it opens: ${texts}`);
  assert.ok(texts[1].startsWith("Dr. Elena Ward"), `then the teacher: ${texts}`);
  // The classmate's call was the discussion's opening (no director call before it), with the topic.
  const { chats } = await chatCalls();
  assert.ok(JSON.stringify(chats[0].body).includes(`You are ${opener.name},`), "the opener speaks first, chosen by code");
  assert.ok(JSON.stringify(chats[0].body).includes(discussion.topic.slice(0, 30)));
  // The lecture goes on after the discussion.
  await page.waitForFunction(() => document.querySelector("[data-testid=stage]")?.dataset.state === "playing", null, { timeout: 20000 });
  assert.deepEqual(problems, []);
  await context.close();
});

test("a spoken question fills the box where the browser recognizes speech", async () => {
  const { context, page, problems } = await openPage(browser);
  // A stand-in for the browser's recognizer: it hears one phrase in two results, then ends.
  await page.addInitScript(() => {
    window.SpeechRecognition = class {
      start() {
        window.__heardLang = this.lang;
        const result = (text, isFinal) => Object.assign([{ transcript: text }], { isFinal });
        setTimeout(() => this.onresult?.({ results: [result("why divide", false)] }), 30);
        setTimeout(() => this.onresult?.({ results: [result("why divide", true), result("by root d k", true)] }), 60);
        setTimeout(() => this.onend?.({}), 90);
      }
      stop() { this.onend?.({}); }
      abort() {}
    };
  });
  await openClassroom(page);
  const mic = page.getByTestId("ask-voice");
  await mic.focus();
  await page.keyboard.press("Enter");
  // Listening ends by itself when the recognizer does.
  await page.waitForFunction(() => document.querySelector("[data-testid=ask-input]").value === "why divide by root d k");
  assert.equal(await page.evaluate(() => window.__heardLang), "en");
  await page.waitForFunction(() => document.querySelector("[data-testid=ask-voice]").getAttribute("aria-pressed") === "false", null, { timeout: 5000 });
  assert.equal(await page.getByTestId("bubble").count(), 0, "nothing is sent by voice alone");
  assert.deepEqual(problems, []);
  await context.close();
});
