// Courses as files in a real browser: a sample exports as an .aula.zip bundle and imports back
// whole (a second import comes in as a copy); malformed files are refused with a clear message
// and leave the library as it was; and no export of any format holds the API key or a setting.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serveDist, launchBrowser, openPage, startMock, connectToMock, answerQuiz, DIST } from "./support.mjs";

const SHOTS = new URL("./artifacts/", import.meta.url).pathname;
const SAMPLE_ID = "sample-transformer-en";
const FORMATS = ["bundle", "html", "scorm12", "scorm2004", "pptx", "maic"];
let server;
let browser;
let mock;
let dir;
let sample;

before(async () => {
  await mkdir(SHOTS, { recursive: true });
  dir = await mkdtemp(join(tmpdir(), "aula-files-"));
  sample = JSON.parse(await readFile(join(DIST, "courses", "transformer-en.json"), "utf8"));
  server = await serveDist();
  browser = await launchBrowser();
  mock = await startMock();
});

after(async () => {
  await browser?.close();
  await server?.close();
  mock?.child.kill();
});

/** Every file of a zip as text (latin-1, so any byte string survives), by name. */
export function unzip(path) {
  const script = "import zipfile,sys,json\nz=zipfile.ZipFile(sys.argv[1])\nassert z.testzip() is None\nprint(json.dumps({n: z.read(n).decode('latin-1') for n in z.namelist()}))";
  const run = spawnSync("python3", ["-c", script, path], { encoding: "utf8", maxBuffer: 512 * 1024 * 1024 });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout);
}

/** Writes a zip of `{name: text}` with Python (any name, even a hostile one); a text
 *  `zeros:N` becomes N zero bytes. */
function makeZip(path, files) {
  const script = [
    "import zipfile,sys,json",
    "z=zipfile.ZipFile(sys.argv[1],'w',zipfile.ZIP_DEFLATED)",
    "for n,t in json.loads(sys.stdin.read()).items():",
    "  z.writestr(n, b'\\0'*int(t[6:]) if t.startswith('zeros:') else t.encode('latin-1'))",
    "z.close()",
  ].join("\n");
  const run = spawnSync("python3", ["-c", script, path], { input: JSON.stringify(files), encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
}

/** Exports the open classroom's course in `format`; returns the saved file's path. */
export async function exportCourse(page, format, { completion, passing } = {}) {
  const panel = page.getByTestId("export-panel");
  if (!(await panel.evaluate((el) => el.open))) await panel.locator("summary").click();
  await page.getByTestId("export-format").selectOption(format);
  if (completion) await page.getByTestId("export-completion").selectOption(completion);
  if (passing !== undefined) await page.getByTestId("export-passing").fill(String(passing));
  const [download] = await Promise.all([
    page.waitForEvent("download", { timeout: 60000 }),
    page.getByTestId("export-button").click(),
  ]);
  const path = join(dir, `${format}-${download.suggestedFilename()}`);
  await download.saveAs(path);
  await page.waitForFunction(() => /Saved/.test(document.querySelector("[data-testid=export-status]")?.textContent ?? ""));
  return path;
}

async function importFile(page, path) {
  await page.getByTestId("import-file").setInputFiles(path);
  await page.waitForFunction(() => {
    const t = document.querySelector("[data-testid=import-status]")?.textContent ?? "";
    return t && !/Checking/.test(t);
  }, null, { timeout: 60000 });
  return page.getByTestId("import-status").textContent();
}

const libraryCount = (page) => page.locator("[data-testid=library-list] .course-card").count();

test("a sample exports as a bundle, imports back identical, and a second import is a copy", async () => {
  const { context, page, problems } = await openPage(browser, { acceptDownloads: true });
  await page.goto(`${server.url}/classroom/${SAMPLE_ID}`);
  await page.getByTestId("classroom").waitFor();
  const bundle = await exportCourse(page, "bundle");
  assert.match(bundle, /how-a-transformer-reads-a-sentence\.aula\.zip$/);
  const files = unzip(bundle);
  assert.deepEqual(Object.keys(files).sort(), ["course.json", "manifest.json"]);
  assert.deepEqual(JSON.parse(Buffer.from(files["course.json"], "latin1").toString("utf8")), sample);
  const manifest = JSON.parse(files["manifest.json"]);
  assert.equal(manifest.format_version, 1);
  assert.equal(manifest.entries[0].path, "course.json");
  await page.screenshot({ path: `${SHOTS}export-panel.png` });

  await page.goto(server.url);
  await page.getByTestId("library-empty").waitFor();
  assert.match(await importFile(page, bundle), /Imported “How a transformer reads a sentence”\./);
  await page.getByTestId("library-list").waitFor();
  assert.equal(await libraryCount(page), 1);
  // The imported course is the library's own now: it opens from IndexedDB.
  const stored = await page.evaluate((id) => new Promise((resolve, reject) => {
    const open = indexedDB.open("aula");
    open.onsuccess = () => {
      const get = open.result.transaction("courses").objectStore("courses").get(id);
      get.onsuccess = () => resolve(get.result);
      get.onerror = () => reject(get.error);
    };
  }), SAMPLE_ID);
  assert.deepEqual(JSON.parse(typeof stored === "string" ? stored : JSON.stringify(stored)), sample);

  assert.match(await importFile(page, bundle), /as a copy/);
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=library-list] .course-card").length === 2);
  // Served by the service worker, the library's courses are marked as playable offline.
  await page.waitForFunction(() => navigator.serviceWorker.ready.then(() => true));
  await page.reload();
  await page.locator("[data-testid=library-list] .badge", { hasText: "Available offline" }).first().waitFor();
  await page.screenshot({ path: `${SHOTS}import-library.png`, fullPage: true });
  await page.locator("[data-testid=library-list] .course-card a").last().click();
  await page.getByTestId("classroom").waitFor();
  assert.equal(await page.locator(".classroom-title").textContent(), sample.title);
  // Settings says how much the browser keeps for Aula.
  await page.goto(`${server.url}/settings`);
  await page.waitForFunction(() => /MB/.test(document.querySelector("[data-testid=storage-use]")?.textContent ?? ""));
  assert.deepEqual(problems, []);
  await context.close();
});

test("malformed files are refused with a clear message and leave the library unchanged", async () => {
  const { context, page, problems } = await openPage(browser, { acceptDownloads: true });
  await page.goto(`${server.url}/classroom/${SAMPLE_ID}`);
  await page.getByTestId("classroom").waitFor();
  const good = await readFile(await exportCourse(page, "bundle"));
  await page.goto(server.url);
  await page.getByTestId("library-empty").waitFor();
  const files = unzip(join(dir, readdirSync(dir).find((f) => f.startsWith("bundle-"))));

  const cases = [];
  const truncated = join(dir, "truncated.aula.zip");
  await writeFile(truncated, good.subarray(0, Math.floor(good.length / 2)));
  cases.push([truncated, /not a zip file|cut short/]);
  const badJson = join(dir, "bad.json");
  await writeFile(badJson, '{"format_version": 1, "id": ');
  cases.push([badJson, /cannot be read/]);
  const newer = join(dir, "newer.aula.zip");
  makeZip(newer, { ...files, "manifest.json": files["manifest.json"].replace('"format_version": 1', '"format_version": 9') });
  cases.push([newer, /newer Aula/]);
  const traversal = join(dir, "traversal.aula.zip");
  makeZip(traversal, { ...files, "../../evil.sh": "rm -rf ~" });
  cases.push([traversal, /climbs out of its folder/]);
  const bomb = join(dir, "bomb.aula.zip");
  makeZip(bomb, { ...files, "media/zeros.bin": `zeros:${70 * 1024 * 1024}` });
  cases.push([bomb, /more than \d+ bytes/]);
  const altered = join(dir, "altered.aula.zip");
  makeZip(altered, { ...files, "course.json": files["course.json"].replace("transformer", "transformor") });
  cases.push([altered, /checksum|should be/]);

  for (const [path, expected] of cases) {
    const message = await importFile(page, path);
    assert.match(message, expected, `${path}: ${message}`);
    assert.equal(await page.getByTestId("import-status").getAttribute("class"), "error", path);
    assert.equal(await page.getByTestId("library-empty").count(), 1, `${path} left the library empty`);
  }
  await page.screenshot({ path: `${SHOTS}import-refused.png` });
  await page.reload();
  await page.getByTestId("library-empty").waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test("no export of any format holds the API key or a setting", async () => {
  const { context, page, problems } = await openPage(browser, { acceptDownloads: true });
  const key = "sk-aula-test-SECRET-7f3c9a";
  await connectToMock(page, { appUrl: server.url, mockUrl: mock.url, key });
  await page.goto(`${server.url}/classroom/${SAMPLE_ID}`);
  await page.getByTestId("classroom").waitFor();
  const mockHost = new URL(mock.url).host;
  for (const format of FORMATS) {
    const path = await exportCourse(page, format);
    const raw = await readFile(path);
    const contents = raw[0] === 0x50 && raw[1] === 0x4b ? unzip(path) : { [path]: raw.toString("latin1") };
    assert.ok(Object.keys(contents).length > 0, format);
    for (const [name, text] of Object.entries(contents)) {
      // The key, and the provider settings saved beside it: its address and the model.
      for (const secret of [key, mockHost, "mock-model"]) {
        assert.ok(!text.includes(secret), `${format}: ${name} contains ${secret}`);
      }
    }
  }
  assert.deepEqual(problems, []);
  await context.close();
});

test("the offline .html file opens from disk (file://) with no network and plays to the end", async () => {
  const exported = await openPage(browser, { acceptDownloads: true });
  await exported.page.goto(`${server.url}/classroom/${SAMPLE_ID}`);
  await exported.page.getByTestId("classroom").waitFor();
  const html = await exportCourse(exported.page, "html");
  await exported.context.close();
  assert.match(html, /\.html$/);

  const { context, page, problems } = await openPage(browser);
  await context.addInitScript(() => {
    try { localStorage.setItem("aula.captions_only", "true"); } catch (e) {}
  });
  const requests = [];
  page.on("request", (r) => { if (!r.url().startsWith("file:") && !r.url().startsWith("data:")) requests.push(r.url()); });
  await page.goto(`file://${html}`);
  await page.getByTestId("classroom").waitFor({ timeout: 30000 });
  assert.equal(await page.locator(".classroom-title").textContent(), sample.title);
  const quiz = sample.scenes.length - 1;
  assert.equal(sample.scenes[quiz].content.type, "quiz");
  for (let i = 0; i < sample.scenes.length; i++) {
    await page.getByTestId("scene-button").nth(i).click();
  }
  await page.getByTestId("quiz").waitFor();
  await answerQuiz(page, sample.scenes[quiz].content.questions, (q) => q.reference_answer);
  await page.getByTestId("quiz-check").click();
  await page.getByTestId("quiz-continue").click();
  await page.getByTestId("course-end").waitFor({ timeout: 30000 });
  await page.screenshot({ path: `${SHOTS}offline-html-end.png` });
  assert.deepEqual(requests, [], "the file needs nothing from the network");
  assert.deepEqual(problems, []);
  await context.close();
});
