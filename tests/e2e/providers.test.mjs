// Settings → AI provider against a real local server (mock-llm) speaking the OpenAI wire format:
// a saved connection, a streamed test reply, a rejected key explained, a rate limit retried.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { serveDist, launchBrowser, openPage, startMock } from "./support.mjs";

const SHOTS = new URL("./artifacts/", import.meta.url).pathname;
const REPLY = "Hello, class! I can hear you loud and clear.";
const KEY = "sk-test-0123456789abcdef";
let server;
let browser;
let mock;
let mockUrl;
let mockScript;


const script = (body) => mockScript(body);

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

// The browser itself logs a failed HTTP status as a console error; those are the point of the
// 401 and 429 cases, so only they are tolerated.
const appProblems = (problems) => problems.filter((p) => !/status of (401|429)/.test(p));

async function fillConnection(page, key) {
  await page.goto(`${server.url}/settings`);
  await page.getByTestId("provider-settings").waitFor();
  await page.getByTestId("provider-preset").selectOption("custom");
  await page.getByTestId("provider-url").fill(`${mockUrl}/v1`);
  await page.getByTestId("provider-key").fill(key);
  await page.getByTestId("provider-model").fill("mock-model");
}

test("a saved connection streams a test reply, and the key is kept masked", async () => {
  await script({ default: { text: REPLY }, chunk_words: 2, chunk_delay_ms: 40 });
  const { context, page, problems } = await openPage(browser);
  const fetched = [];
  page.on("request", (request) => fetched.push(new URL(request.url()).pathname));
  await fillConnection(page, KEY);
  await page.getByTestId("provider-save").click();
  await page.getByTestId("provider-saved").waitFor();
  assert.ok(!fetched.some((p) => p.includes("aula-worker")), "no AI worker before the first AI job");
  await page.getByTestId("provider-test").click();
  await page.waitForFunction(() => document.querySelector("[data-testid=provider-test-result]")?.dataset.state === "passed", null, { timeout: 15000 });
  assert.equal(await page.getByTestId("provider-reply").textContent(), REPLY);
  assert.ok(fetched.includes("/aula-worker_bg.wasm"), "the test ran in the AI worker, started on demand");
  await page.screenshot({ path: `${SHOTS}settings-provider.png`, fullPage: true });

  await page.reload();
  await page.getByTestId("provider-settings").waitFor();
  await page.waitForFunction(() => document.querySelector("[data-testid=provider-url]")?.value.includes("/v1"));
  const placeholder = await page.getByTestId("provider-key").getAttribute("placeholder");
  assert.match(placeholder, /^sk-…cdef$/, "the saved key shows masked");
  assert.ok(!(await page.content()).includes(KEY), "the full key is never put in the page");
  const stored = await page.evaluate(() => JSON.stringify(localStorage));
  assert.ok(!stored.includes(KEY), "the key is not in localStorage");
  assert.deepEqual(problems, []);
  await context.close();
});

test("a rejected key is explained with the fix", async () => {
  await script({ default: { text: REPLY } });
  const { context, page, problems } = await openPage(browser);
  await fillConnection(page, "bad-key");
  await page.getByTestId("provider-test").click();
  await page.getByTestId("provider-error").waitFor({ timeout: 15000 });
  const message = await page.getByTestId("provider-error").textContent();
  assert.match(message, /key/i);
  assert.match(message, /rejected|invalid|check/i);
  assert.ok(!message.includes("bad-key"), "the message never repeats the key");
  assert.deepEqual(appProblems(problems), []);
  await context.close();
});

test("a rate limit is retried after its retry-after and then succeeds", async () => {
  await script({
    default: { text: REPLY },
    faults: [{ times: 1, http_error: { status: 429, retry_after_s: 1 } }],
  });
  const { context, page, problems } = await openPage(browser);
  await fillConnection(page, KEY);
  await page.getByTestId("provider-test").click();
  await page.getByTestId("provider-retrying").waitFor({ timeout: 15000 });
  await page.waitForFunction(() => document.querySelector("[data-testid=provider-test-result]")?.dataset.state === "passed", null, { timeout: 20000 });
  assert.equal(await page.getByTestId("provider-reply").textContent(), REPLY);
  assert.deepEqual(appProblems(problems), []);
  await context.close();
});

test("the provider's model list fills the picker", async () => {
  await script({ default: { text: REPLY }, models: ["mock-small", "mock-large", "mock-vision"] });
  const { context, page, problems } = await openPage(browser);
  await fillConnection(page, KEY);
  await page.getByTestId("provider-list-models").click();
  await page.waitForFunction(() => /3 models found/.test(document.querySelector("[data-testid=provider-models-note]")?.textContent ?? ""), null, { timeout: 15000 });
  const options = await page.locator("#provider-models option").evaluateAll((os) => os.map((o) => o.value));
  assert.deepEqual(options, ["mock-large", "mock-small", "mock-vision"]);
  assert.deepEqual(problems, []);
  await context.close();
});

/** The raw record the app stored under settings/"providers" in IndexedDB. */
async function storedConnection(page) {
  return page.evaluate(() => new Promise((resolve, reject) => {
    const open = indexedDB.open("aula");
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const get = open.result.transaction("settings").objectStore("settings").get("providers");
      get.onsuccess = () => resolve(String(get.result));
      get.onerror = () => reject(get.error);
    };
  }));
}

test("a passphrase seals the key: stored encrypted, locked after a reload, opened only by the passphrase", async () => {
  await script({ default: { text: REPLY }, chunk_words: 3 });
  const { context, page, problems } = await openPage(browser);
  await fillConnection(page, KEY);
  await page.getByTestId("provider-save").click();
  await page.getByTestId("provider-saved").waitFor();
  const vault = page.getByTestId("provider-vault");
  assert.equal(await vault.getAttribute("data-state"), "open");
  await page.getByTestId("provider-passphrase").fill("short");
  await page.getByTestId("provider-vault-action").click();
  await page.getByTestId("provider-vault-note").waitFor();
  assert.match(await page.getByTestId("provider-vault-note").textContent(), /at least 8/);
  await page.getByTestId("provider-passphrase").fill("correct horse battery");
  await page.getByTestId("provider-vault-action").click();
  await page.waitForFunction(() => document.querySelector("[data-testid=provider-vault]")?.dataset.state === "protected", null, { timeout: 15000 });
  await page.waitForFunction(() => /encrypted/.test(document.querySelector("[data-testid=provider-saved]")?.textContent ?? ""));
  const record = await storedConnection(page);
  assert.ok(record.includes("sealed_key"), `the record holds the sealed key: ${record.slice(0, 120)}`);
  assert.ok(!record.includes(KEY) && !record.includes("0123456789abcdef"), "the key is not stored in the clear");

  await page.reload();
  await page.waitForFunction(() => document.querySelector("[data-testid=provider-vault]")?.dataset.state === "locked");
  await page.getByTestId("provider-test").click();
  await page.getByTestId("provider-error").waitFor();
  assert.match(await page.getByTestId("provider-error").textContent(), /Unlock/);
  await page.getByTestId("provider-passphrase").fill("wrong horse battery");
  await page.getByTestId("provider-vault-action").click();
  await page.waitForFunction(() => /does not unlock/.test(document.querySelector("[data-testid=provider-vault-note]")?.textContent ?? ""), null, { timeout: 15000 });
  await page.getByTestId("provider-passphrase").fill("correct horse battery");
  await page.getByTestId("provider-passphrase").press("Enter");
  await page.waitForFunction(() => document.querySelector("[data-testid=provider-vault]")?.dataset.state === "protected", null, { timeout: 15000 });
  await page.getByTestId("provider-test").click();
  await page.waitForFunction(() => document.querySelector("[data-testid=provider-test-result]")?.dataset.state === "passed", null, { timeout: 15000 });
  assert.equal(await page.getByTestId("provider-reply").textContent(), REPLY);
  assert.ok(!(await page.content()).includes(KEY), "the opened key is never put in the page");
  // The sticky header would be painted mid-page in a full-page shot.
  await page.addStyleTag({ content: ".app-header { position: static !important; }" });
  await page.screenshot({ path: `${SHOTS}settings-provider-protected.png`, fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});

test("Stop ends a slow test at once and says so", async () => {
  await script({ default: { text: REPLY }, chunk_words: 1, chunk_delay_ms: 400 });
  const { context, page, problems } = await openPage(browser);
  await fillConnection(page, KEY);
  await page.getByTestId("provider-test").click();
  await page.getByTestId("provider-reply").waitFor({ timeout: 15000 });
  await page.getByTestId("provider-stop").click();
  await page.getByTestId("provider-error").waitFor({ timeout: 5000 });
  assert.match(await page.getByTestId("provider-error").textContent(), /stopped/);
  const shown = await page.getByTestId("provider-reply").textContent();
  assert.ok(shown.length < REPLY.length, `the reply stopped growing: ${shown}`);
  assert.equal(await page.getByTestId("provider-stop").count(), 0, "Stop goes away with the test");
  assert.deepEqual(problems, []);
  await context.close();
});
