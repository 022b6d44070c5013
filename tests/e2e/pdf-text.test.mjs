// PDF text for course generation (web/pdf-text.mjs through index.html's window.aulaPdfText):
// pdf.js is not downloaded with the page, reads a real two-page PDF in page order, truncates at
// the asked length, and refuses what it cannot read with a message a learner can act on.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { serveDist, launchBrowser, openPage } from "./support.mjs";

const fixture = (name) => readFile(new URL(`./fixtures/${name}`, import.meta.url));
let server;
let browser;
let pdfs;

before(async () => {
  server = await serveDist();
  browser = await launchBrowser();
  pdfs = {
    photosynthesis: await fixture("photosynthesis.pdf"),
    chinese: await fixture("photosynthesis-zh.pdf"),
    noText: await fixture("no-text.pdf"),
    locked: await fixture("locked.pdf"),
  };
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** The home page, with every request's URL collected in `fetched`. */
async function home() {
  const opened = await openPage(browser);
  const fetched = [];
  opened.page.on("request", (request) => fetched.push(request.url()));
  await opened.page.goto(server.url);
  await opened.page.getByTestId("library-empty").waitFor();
  return { ...opened, fetched };
}

/** Calls window.aulaPdfText in the page: `{ result }` or `{ error: { name, message, code } }`.
 *  Also reports whether the caller's bytes are still readable afterwards. */
function extract(page, bytes, maxChars) {
  return page.evaluate(
    async ([numbers, max]) => {
      const input = new Uint8Array(numbers);
      try {
        const result = await window.aulaPdfText(input, max);
        return { result, inputKept: input.byteLength === numbers.length };
      } catch (e) {
        return { error: { name: e.name, message: e.message, code: e.code } };
      }
    },
    [Array.from(bytes), maxChars],
  );
}

test("the home page does not download pdf.js", async () => {
  const { context, page, problems, fetched } = await home();
  await page.waitForLoadState("networkidle");
  assert.ok(!fetched.some((url) => new URL(url).pathname.startsWith("/pdf/")), `nothing under /pdf/ up front: ${fetched}`);
  assert.equal(await page.evaluate(() => typeof window.aulaPdfText), "function");
  assert.deepEqual(problems, []);
  await context.close();
});

test("a two-page PDF's text comes back in page order, from the same origin only", async () => {
  const { context, page, problems, fetched } = await home();
  const before = fetched.length;
  const { result, error, inputKept } = await extract(page, pdfs.photosynthesis, 100_000);
  assert.equal(error, undefined);
  assert.equal(result.pages, 2);
  assert.equal(result.truncated, false);
  assert.ok(inputKept, "the caller's bytes are not detached");
  const { text } = result;
  const order = [
    "Photosynthesis",
    "Photosynthesis is the process by which green plants turn light into chemical energy.",
    "Chlorophyll absorbs red and blue light and reflects green light.",
    "The two stages",
    "In the light-dependent reactions, water is split and oxygen is released.",
    "The Calvin cycle then fixes carbon dioxide into glucose.",
  ];
  let at = -1;
  for (const sentence of order) {
    const found = text.indexOf(sentence, at + 1);
    assert.ok(found > at, `"${sentence}" comes next in:\n${text}`);
    at = found;
  }
  assert.match(text, /reflects green light\.\n\nThe two stages\n/, "pages are separated by a blank line");
  assert.doesNotMatch(text, / {2}|^\s|\s$/, "whitespace is collapsed and trimmed");
  const used = fetched.slice(before).map((url) => new URL(url));
  assert.ok(used.every((url) => url.origin === server.url), `same origin only: ${used}`);
  const paths = used.map((url) => url.pathname);
  for (const file of ["/pdf/pdf-text.mjs", "/pdf/pdf.min.mjs", "/pdf/pdf.worker.min.mjs"]) {
    assert.ok(paths.includes(file), `${file} is loaded on first use: ${paths}`);
  }
  assert.deepEqual(problems, []);
  await context.close();
});

test("the home page says when a long PDF was cut to what a course uses", async () => {
  const { context, page, problems } = await home();
  // A PDF longer than the page's limit, made by lowering the limit the page asks for.
  await page.evaluate(() => {
    const read = window.aulaPdfText;
    window.aulaPdfText = (bytes) => read(bytes, 40);
  });
  await page.locator("details.prompt-options summary").click();
  await page.getByTestId("prompt-pdf").setInputFiles(new URL("./fixtures/photosynthesis.pdf", import.meta.url).pathname);
  const note = page.getByTestId("prompt-pdf-note").filter({ hasText: "It is long" });
  await note.waitFor();
  assert.match(await note.textContent(), /Read 2 pages from photosynthesis\.pdf\. It is long, so the course uses its first 40 characters\./);
  assert.deepEqual(problems, []);
  await context.close();
});

test("maxChars truncates the text and says so", async () => {
  const { context, page, problems } = await home();
  const full = (await extract(page, pdfs.photosynthesis, 100_000)).result.text;
  const { result } = await extract(page, pdfs.photosynthesis, 40);
  assert.equal(result.truncated, true);
  assert.equal(result.pages, 2);
  assert.equal(result.text, full.slice(0, 40));
  const exact = (await extract(page, pdfs.photosynthesis, full.length)).result;
  assert.deepEqual(exact, { text: full, pages: 2, truncated: false });
  assert.deepEqual(problems, []);
  await context.close();
});

test("a Chinese PDF with a predefined CJK character map is read (cmaps from /pdf/cmaps/)", async () => {
  const { context, page, problems, fetched } = await home();
  const { result, error } = await extract(page, pdfs.chinese, 1000);
  assert.equal(error, undefined);
  assert.equal(result.text, "光合作用把光能转化为化学能。\n叶绿体中的叶绿素吸收红光和蓝光。");
  assert.ok(fetched.some((url) => new URL(url).pathname === "/pdf/cmaps/UniGB-UCS2-H.bcmap"), "its CMap came from /pdf/cmaps/");
  assert.deepEqual(problems, []);
  await context.close();
});

test("what cannot be read is refused with a message the learner can act on", async () => {
  const { context, page, problems } = await home();
  const cases = [
    [Buffer.from("Photosynthesis notes, saved as plain text.\n"), "not-pdf", /^This file is not a PDF\./],
    [Buffer.alloc(0), "not-pdf", /^This file is not a PDF\./],
    [pdfs.noText, "no-text", /^This PDF has no text layer \(it may be a scan\)\. Paste the text instead\.$/],
    [pdfs.locked, "password", /^This PDF is protected by a password\./],
    [Buffer.from("%PDF-1.7\n" + "garbage ".repeat(200)), "damaged", /^This PDF is damaged/],
  ];
  for (const [bytes, code, message] of cases) {
    const { result, error } = await extract(page, bytes, 1000);
    assert.equal(result, undefined, `refused (${code})`);
    assert.equal(error.code, code);
    assert.match(error.message, message);
  }
  // The page still works afterwards.
  assert.equal((await extract(page, pdfs.photosynthesis, 1000)).result.pages, 2);
  assert.deepEqual(problems, []);
  await context.close();
});
