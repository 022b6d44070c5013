// The SCORM packages under a real SCORM runtime: scorm-again (npm) provides the LMS's API in a
// parent page, an iframe loads the unzipped package from the same origin, the learner plays
// every scene and passes the quiz, and leaving the page finishes the attempt. Checked for SCORM
// 1.2 and SCORM 2004 (4th edition): initialize, bookmark, completion, score, pass, session time,
// commit and finish; then a second attempt resumes at the bookmark.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdir, mkdtemp, readFile, stat } from "node:fs/promises";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { serveDist, launchBrowser, openPage, answerQuiz, DIST } from "./support.mjs";

const SHOTS = new URL("./artifacts/", import.meta.url).pathname;
const SCORM_AGAIN = new URL("../../node_modules/scorm-again/dist/scorm-again.min.js", import.meta.url).pathname;
const MIME = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm", ".css": "text/css", ".json": "application/json", ".xml": "text/xml" };
let app;
let browser;
let dir;
let course;

before(async () => {
  await mkdir(SHOTS, { recursive: true });
  dir = await mkdtemp(join(tmpdir(), "aula-scorm-"));
  course = JSON.parse(await readFile(join(DIST, "courses", "transformer-en.json"), "utf8"));
  app = await serveDist();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await app?.close();
});

/** The LMS: its page with the SCORM API (`version` "1.2" or "2004") and the package's files. */
async function startLms(packageDir, version) {
  const api = version === "2004"
    ? "window.API_1484_11 = new Scorm2004API({ autocommit: false }); const api = window.API_1484_11; const prefix = '';"
    : "window.API = new Scorm12API({ autocommit: false }); const api = window.API; const prefix = 'LMS';";
  const lms = `<!doctype html><html><head><meta charset="utf-8"><title>LMS</title><link rel="icon" href="data:,">
<script src="/scorm-again.min.js"></script>
<script>
  ${api}
  window.calls = [];
  for (const f of ["Initialize", "Commit", "Finish", "Terminate"]) api.on(prefix + f, () => window.calls.push([f]));
  api.on(prefix + "SetValue.cmi.*", (element, value) => window.calls.push(["set", element, String(value)]));
  window.lastValue = (element) => (window.calls.filter((c) => c[1] === element).at(-1) ?? [])[2];
  // A later attempt: the LMS hands back what it kept (?seed=<cmi JSON>).
  const seed = new URLSearchParams(location.search).get("seed");
  if (seed) api.loadFromJSON(JSON.parse(seed));
</script></head>
<body><iframe id="sco" src="/pkg/index.html" style="width:1200px;height:720px;border:0"></iframe></body></html>`;
  const server = createServer(async (req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    if (path === "/" || path === "/lms.html") return res.writeHead(200, { "content-type": "text/html" }).end(lms);
    if (path === "/scorm-again.min.js") return res.writeHead(200, { "content-type": "text/javascript" }).end(await readFile(SCORM_AGAIN));
    if (path.startsWith("/pkg/")) {
      const file = join(packageDir, normalize(decodeURIComponent(path.slice(5))).replace(/^(\.\.[/\\])+/, ""));
      try {
        if ((await stat(file)).isFile()) {
          return res.writeHead(200, { "content-type": MIME[extname(file)] ?? "application/octet-stream" }).end(await readFile(file));
        }
      } catch {}
    }
    res.writeHead(404).end("not found");
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return { url: `http://127.0.0.1:${server.address().port}/lms.html`, close: () => new Promise((ok) => server.close(ok)) };
}

/** Exports the sample from the app as a SCORM package and unzips it. */
async function exportPackage(format) {
  const { context, page, problems } = await openPage(browser, { acceptDownloads: true });
  await page.goto(`${app.url}/classroom/sample-transformer-en`);
  await page.getByTestId("classroom").waitFor();
  await page.getByTestId("export-panel").locator("summary").click();
  await page.getByTestId("export-format").selectOption(format);
  await page.getByTestId("export-passing").fill("80");
  const [download] = await Promise.all([page.waitForEvent("download", { timeout: 60000 }), page.getByTestId("export-button").click()]);
  const zip = join(dir, download.suggestedFilename());
  await download.saveAs(zip);
  assert.deepEqual(problems, []);
  await context.close();
  const out = join(dir, format);
  const run = spawnSync("python3", ["-c", "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])", zip, out], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  return out;
}

async function playToTheEnd(page) {
  const sco = page.frameLocator("#sco");
  await sco.getByTestId("classroom").waitFor({ timeout: 30000 });
  const quiz = course.scenes.findIndex((s) => s.content.type === "quiz");
  for (let i = 0; i < course.scenes.length; i++) {
    await sco.getByTestId("scene-button").nth(i).click();
    await page.waitForTimeout(150);
  }
  assert.equal(quiz, course.scenes.length - 1, "the sample ends with its quiz");
  const questions = course.scenes[quiz].content.questions;
  await sco.getByTestId("quiz").waitFor();
  await answerQuiz(sco, questions, (q) => q.reference_answer);
  await sco.getByTestId("quiz-check").click();
  // No provider inside an LMS: short answers are marked by the learner, and nothing says Settings.
  const quizText = await sco.getByTestId("quiz").textContent();
  assert.match(quizText, /against the model answer/);
  assert.doesNotMatch(quizText, /Settings/);
  for (const q of questions.filter((q) => q.type === "short")) {
    await sco.locator(`[data-question="${q.id}"] .self-mark input`).check();
  }
  await sco.getByTestId("quiz-continue").click();
  await sco.getByTestId("course-end").waitFor({ timeout: 30000 });
}

for (const [format, version] of [["scorm12", "1.2"], ["scorm2004", "2004"]]) {
  test(`the SCORM ${version} package plays to the end under scorm-again and reports completion, score and time`, async () => {
    const packageDir = await exportPackage(format);
    const manifest = await readFile(join(packageDir, "imsmanifest.xml"), "utf8");
    assert.match(manifest, version === "1.2" ? /<schemaversion>1\.2<\/schemaversion>/ : /<schemaversion>2004 4th Edition<\/schemaversion>/);
    const lms = await startLms(packageDir, version);
    const { context, page, problems } = await openPage(browser);
    await page.addInitScript(() => {
      try { localStorage.setItem("aula.captions_only", "true"); } catch (e) {}
    });
    await page.goto(lms.url);
    await playToTheEnd(page);
    await page.waitForFunction(() => window.calls.some((c) => c[1] && /completion_status|lesson_status/.test(c[1]) && /completed|passed/.test(c[2])));
    await page.screenshot({ path: `${SHOTS}scorm-${format}-end.png` });
    // Leaving the course (the LMS closes the frame) ends the attempt.
    await page.evaluate(() => { document.getElementById("sco").src = "about:blank"; });
    await page.waitForFunction(() => window.calls.some((c) => c[0] === "Finish" || c[0] === "Terminate"));

    const calls = await page.evaluate(() => window.calls);
    const last = (element) => calls.filter((c) => c[1] === element).at(-1)?.[2];
    const names = calls.map((c) => c[0]);
    assert.equal(names[0], "Initialize");
    assert.ok(names.includes("Commit"));
    assert.ok(names.indexOf("Commit") < names.lastIndexOf(version === "1.2" ? "Finish" : "Terminate"));
    const possible = course.scenes.at(-1).content.questions.reduce((s, q) => s + (q.points ?? 1), 0);
    if (version === "1.2") {
      assert.equal(last("cmi.core.lesson_status"), "passed");
      assert.equal(last("cmi.core.score.raw"), "100");
      assert.equal(last("cmi.core.score.max"), "100");
      assert.equal(last("cmi.core.score.min"), "0");
      assert.match(last("cmi.core.session_time") ?? "", /^\d{4}:\d{2}:\d{2}\.\d{2}$/);
      assert.notEqual(last("cmi.core.session_time"), "0000:00:00.00");
      assert.equal(last("cmi.core.lesson_location"), String(course.scenes.length - 1));
    } else {
      assert.equal(last("cmi.completion_status"), "completed");
      assert.equal(last("cmi.success_status"), "passed");
      assert.equal(last("cmi.score.raw"), String(possible));
      assert.equal(last("cmi.score.max"), String(possible));
      assert.equal(last("cmi.score.scaled"), "1");
      assert.match(last("cmi.session_time") ?? "", /^PT\d+H\d+M[\d.]+S$/);
      assert.equal(last("cmi.location"), String(course.scenes.length - 1));
    }
    const bookmark = last("cmi.suspend_data");
    assert.match(bookmark, /^a1;7;0-7;7:\d+$/);

    // A second attempt starts where the first left off: the LMS hands back the suspend data.
    const seed = version === "1.2"
      ? { cmi: { suspend_data: "a1;3;0-3;", core: { lesson_status: "incomplete" } } }
      : { cmi: { suspend_data: "a1;3;0-3;", completion_status: "incomplete" } };
    await page.goto(`${lms.url}?seed=${encodeURIComponent(JSON.stringify(seed))}`);
    const sco = page.frameLocator("#sco");
    await sco.getByTestId("classroom").waitFor();
    // The bridge hands the bookmark back; the player goes to scene 4 and reports from there.
    await page.waitForFunction(() => /^a1;3;0-3;/.test(window.lastValue("cmi.suspend_data") ?? ""), null, { timeout: 15000 });
    assert.ok(await sco.getByTestId("scene-button").nth(3).evaluate((el) => el.classList.contains("current")), "resumed at scene 4");
    assert.deepEqual(problems, []);
    await context.close();
    await lms.close();
  });
}
