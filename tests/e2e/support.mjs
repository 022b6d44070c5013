// Shared pieces of the end-to-end tests: a static server for dist/, a Chromium that fails the
// test on any page error or console error, and the local mock provider (mock-llm).
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize, resolve } from "node:path";
import { chromium } from "playwright-core";

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json",
  ".webmanifest": "application/manifest+json",
  ".png": "image/png",
};

export const DIST = resolve(process.env.AULA_DIST ?? "dist");

/** Serves dist/ like a static host with an SPA fallback: unknown paths get index.html, on
 *  `port` (a free one by default).
 *  `onRequest(req, res)` sees every request first and answers it itself by returning true (the
 *  offline test counts requests and cuts them). */
export async function serveDist({ onRequest, port = 0 } = {}) {
  const server = createServer(async (req, res) => {
    if (onRequest?.(req, res)) return;
    const url = new URL(req.url, "http://localhost");
    const safe = normalize(decodeURIComponent(url.pathname)).replace(/^(\.\.[/\\])+/, "");
    let file = join(DIST, safe);
    try {
      if (!(await stat(file)).isFile()) file = join(DIST, "index.html");
    } catch {
      file = join(DIST, "index.html");
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { "content-type": MIME[extname(file)] ?? "application/octet-stream" });
      res.end(body);
    } catch (error) {
      res.writeHead(500).end(String(error));
    }
  });
  await new Promise((ok) => server.listen(port, "127.0.0.1", ok));
  const address = server.address();
  return { url: `http://127.0.0.1:${address.port}`, close: () => new Promise((ok) => server.close(ok)) };
}

export async function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-quic",
      "--no-first-run",
    ],
  });
}

/** A page whose console errors and uncaught exceptions are collected in `problems`. */
export async function openPage(browser, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console.error: ${message.text()}`);
  });
  return { context, page, problems };
}

/** Starts mock-llm on a free port: `{ child, url, script(body) }`. */
export async function startMock() {
  const bin = process.env.MOCK_LLM_BIN ?? "target/debug/mock-llm";
  const child = spawn(bin, ["--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise((resolve, reject) => {
    child.on("error", reject);
    createInterface({ input: child.stdout }).once("line", resolve);
  });
  const match = /listening on (\S+)/.exec(line);
  if (!match) throw new Error(`mock-llm said ${line}`);
  const url = `http://${match[1]}`;
  const script = async (body) => {
    const response = await fetch(`${url}/__script`, { method: "POST", body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`mock-llm refused the script (${response.status})`);
  };
  return { child, url, script };
}

/** Saves a custom OpenAI-compatible connection to mock-llm through the settings page. */
export async function connectToMock(page, { appUrl, mockUrl, key }) {
  await page.goto(`${appUrl}/settings`);
  await page.getByTestId("provider-settings").waitFor();
  await page.getByTestId("provider-preset").selectOption("custom");
  await page.getByTestId("provider-url").fill(`${mockUrl}/v1`);
  await page.getByTestId("provider-key").fill(key);
  await page.getByTestId("provider-model").fill("mock-model");
  await page.getByTestId("provider-save").click();
  await page.getByTestId("provider-saved").waitFor();
}

/** Answers every question of a quiz on the page: choice questions right, short ones with
 *  `shortAnswer(question)`. */
export async function answerQuiz(page, questions, shortAnswer) {
  for (const q of questions) {
    const card = page.locator(`[data-question="${q.id}"]`);
    if (q.type === "single") {
      await card.locator(`input[value="${q.answer}"]`).check();
    } else if (q.type === "multiple") {
      for (const id of q.answers) await card.locator(`input[value="${id}"]`).check();
    } else {
      await card.locator("textarea").fill(shortAnswer(q));
    }
  }
}
