// Writing a course against a slow local server, as a small model on a CPU behaves: mock-llm set
// like llama.cpp with one slot and a 4k context, every reply slow to start and one of them
// silent for longer than a minute while it "reads its prompt". The page learns the slot and the
// context from /props, sends one request at a time (so none waits in the server's queue), fits
// every prompt and reply into the context, shows the silent wait as "Reading the prompt" rather
// than "Writing", keeps its clock across a reload, and finishes with no timeout and no failed
// scene.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
import { serveDist, launchBrowser, openPage, startMock } from "./support.mjs";

const SHOTS = new URL("./artifacts/", import.meta.url).pathname;
const fixture = JSON.parse(
  await readFile(new URL("../../crates/generation/fixtures/photosynthesis.json", import.meta.url), "utf8"),
);
const scenes = fixture.outline.scenes;
const CONTEXT = 4096;
/** Longer than the minute a silent reply used to be waited for before it counted as stalled. */
const LONG_FIRST_TOKEN_MS = 65_000;
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

function slowLocalServer() {
  const rules = [{ match: { last_message_contains: "What I want to learn" }, reply: { json: fixture.outline }, faults: [{ ttft_ms: 1500 }] }];
  scenes.forEach((s, i) => {
    const content = { match: { last_message_contains: `Write the ${s.kind} for "${s.title}"` }, reply: { json: fixture.content[s.title] } };
    // The second scene's slide is the one whose first token takes over a minute.
    content.faults = [{ ttft_ms: i === 1 ? LONG_FIRST_TOKEN_MS : 1500 }];
    rules.push(content);
    rules.push({ match: { last_message_contains: `Write the script for "${s.title}"` }, reply: { json: fixture.scripts[s.title] }, faults: [{ ttft_ms: 1500 }] });
  });
  return { rules, default: { text: "No rule matched this request." }, chunk_words: 6, slots: 1, n_ctx: CONTEXT };
}

test("a slow local server with one slot writes the whole course with no timeout and no failed scene", { timeout: 10 * 60_000 }, async () => {
  await script(slowLocalServer());
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  const { context, page, problems } = await openPage(browser);

  // The llama.cpp preset, pointed at the local server; no key.
  await page.goto(`${server.url}/settings`);
  await page.getByTestId("provider-settings").waitFor();
  await page.getByTestId("provider-preset").selectOption("llamacpp");
  await page.getByTestId("provider-url").fill(`${mockUrl}/v1`);
  await page.getByTestId("provider-model").fill("mock-model");
  await page.getByTestId("provider-save").click();
  await page.getByTestId("provider-saved").waitFor();

  await page.goto(server.url);
  await page.getByTestId("prompt-input").fill(fixture.topic);
  // The plan shown first for review (a choice; the default goes straight to writing), and
  // written as it is.
  await page.getByTestId("prompt-review").check();
  await page.getByTestId("prompt-submit").click();
  await page.waitForFunction(() => location.pathname.startsWith("/generate/gen-"), null, { timeout: 10_000 });
  await page.getByTestId("outline-write").click({ timeout: 30_000 });
  const rows = () => page.getByTestId("scene-row").evaluateAll((els) => els.map((e) => e.dataset.state));

  // The silent minute shows as the model reading its prompt, with the time going on.
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=scene-row]")[1]?.dataset.state === "thinking", null, { timeout: 60_000 });
  const reading = await page.getByTestId("scene-row").nth(1).locator(".state-badge").textContent();
  assert.equal(reading, "Reading the prompt");
  await page.screenshot({ path: `${SHOTS}/local-server-reading.png` });

  // A reload in the middle keeps the clock where it was.
  await page.waitForTimeout(4000);
  const clock = async () => {
    const [m, s] = (await page.getByTestId("gen-meta").textContent()).split(" ")[0].split(":").map(Number);
    return m * 60 + s;
  };
  const before = await clock();
  assert.ok(before >= 4, `the clock runs: ${before}`);
  await page.reload();
  await page.getByTestId("generate").waitFor();
  await page.waitForTimeout(1500);
  const after = await clock();
  assert.ok(after >= before, `the clock carries on after a reload: ${before} s, then ${after} s`);

  const start = Date.now();
  for (;;) {
    const now = await rows();
    if (now.length === scenes.length && now.every((s) => s === "ready")) break;
    assert.ok(!now.includes("failed"), `no scene fails: ${now}`);
    assert.ok(Date.now() - start < 6 * 60_000, `stuck at ${now}`);
    await page.waitForTimeout(500);
  }
  await page.waitForSelector("[data-testid=generate][data-status=settled]");
  assert.equal(await page.getByTestId("scene-error").count(), 0);
  // Every row tells what its scene cost.
  assert.equal(await page.getByTestId("scene-cost").count(), scenes.length);
  await page.screenshot({ path: `${SHOTS}/local-server-done.png` });

  const log = await (await fetch(`${mockUrl}/__requests`)).json();
  assert.ok(log.some((r) => r.path === "/props"), "the page asked the server for its slots and context");
  const chats = log.filter((r) => r.chat_number).sort((a, b) => a.started_ms - b.started_ms);
  // One outline, and a content and a script per scene; the reload cut one call, which went again.
  assert.ok(chats.length >= 1 + 2 * scenes.length && chats.length <= 2 + 2 * scenes.length, `${chats.length} calls`);
  for (const [i, chat] of chats.entries()) {
    assert.ok(chat.body.max_tokens > 0, `call ${i + 1} has a length limit`);
    assert.ok(chat.input_tokens + chat.body.max_tokens <= CONTEXT, `call ${i + 1} fits the context: ${chat.input_tokens} + ${chat.body.max_tokens}`);
    assert.ok(chat.started_ms - chat.received_ms < 1000, `call ${i + 1} did not wait in the server's queue (${chat.started_ms - chat.received_ms} ms)`);
    if (i > 0) assert.ok(chat.started_ms >= chats[i - 1].answered_ms, "one request at a time");
  }
  assert.deepEqual(problems, []);
  await context.close();
});
