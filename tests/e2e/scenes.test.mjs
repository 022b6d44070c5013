// Every kind of scene as a learner sees it, from a course file with one of each
// (fixtures/scene-kinds.json): an interactive page written the way a small model writes one
// answers its own form inside the sandbox, whatever else the model wrote into it; its radio
// buttons sit beside their labels; and at a laptop's and a phone's size nothing of a quiz (the
// samples' too), a page or a project is left under the caption bar, and the discussion and
// end cards keep their buttons in sight.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { serveDist, launchBrowser, openPage, DIST } from "./support.mjs";

const SHOTS = new URL("./artifacts/scenes/", import.meta.url).pathname;
const course = JSON.parse(await readFile(new URL("./fixtures/scene-kinds.json", import.meta.url), "utf8"));
const sceneOf = (type) => course.scenes.findIndex((s) => s.content.type === type);
const SIZES = { "1280": { width: 1280, height: 720 }, phone: { width: 390, height: 844 } };
let server;
let browser;

before(async () => {
  await mkdir(SHOTS, { recursive: true });
  server = await serveDist();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** Saves `saved` in the library the way the storage crate does (JSON text under its id in the
 *  "courses" store) and opens its classroom, captions on and no voice. */
async function openCourse(saved, viewport = SIZES["1280"]) {
  const opened = await openPage(browser, { viewport });
  const { page } = opened;
  await page.addInitScript(() => {
    // Init scripts run in the interactive page's frame too, which has no storage.
    if (window !== window.top) return;
    localStorage.setItem("aula.captions_only", "true");
    localStorage.setItem("aula.speed", "2");
  });
  await page.goto(server.url);
  await page.getByTestId("library-empty").waitFor();
  await page.evaluate(
    (saved) =>
      new Promise((resolve, reject) => {
        const open = indexedDB.open("aula", 1);
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction("courses", "readwrite");
          tx.objectStore("courses").put(JSON.stringify(saved), saved.id);
          tx.oncomplete = () => resolve();
          tx.onerror = () => reject(tx.error);
        };
      }),
    saved,
  );
  await page.goto(`${server.url}/classroom/${saved.id}`);
  await page.locator("[data-testid=classroom], [data-testid=classroom-error]").first().waitFor();
  if (await page.getByTestId("classroom-error").isVisible()) throw new Error(await page.getByTestId("classroom-error").textContent());
  return opened;
}

async function goToScene(page, index) {
  await page.getByTestId("scene-button").nth(index).click();
  await page.waitForFunction((i) => document.querySelectorAll("[data-testid=scene-button]")[i]?.classList.contains("current"), index);
}

const playing = async (page) => (await page.getByTestId("play").getAttribute("aria-label")) !== "Play";

/** Plays the scene until a caption shows, then pauses, so every screenshot has the caption bar
 *  with a real line in it. */
async function showCaption(page) {
  if (!(await playing(page))) await page.getByTestId("play").click();
  await page.getByTestId("caption-text").waitFor({ timeout: 15000 });
  if (await playing(page)) await page.getByTestId("play").click();
}

/** The interactive scene's frame, once its page has loaded, marked so that a navigation of the
 *  frame (which would replace the page) shows. */
async function interactiveFrame(page) {
  const handle = await page.waitForSelector("iframe.interactive-frame");
  const frame = await handle.contentFrame();
  await frame.waitForLoadState("load");
  await frame.evaluate(() => {
    window.__samePage = true;
  });
  return { handle, frame, stayed: () => frame.evaluate(() => window.__samePage === true).catch(() => false) };
}

const sandboxTokens = async (page) => (await page.locator("iframe.interactive-frame").getAttribute("sandbox")).split(/\s+/);

test("an interactive page's form works in its sandbox: pick an option, Submit, and the page shows its result", async () => {
  const { context, page, problems } = await openCourse(course);
  await goToScene(page, sceneOf("interactive"));
  const { frame, stayed } = await interactiveFrame(page);
  const tokens = await sandboxTokens(page);
  assert.ok(tokens.includes("allow-scripts") && tokens.includes("allow-forms"), `sandbox: ${tokens}`);
  for (const never of ["allow-same-origin", "allow-top-navigation", "allow-top-navigation-by-user-activation", "allow-popups", "allow-modals"]) {
    assert.ok(!tokens.includes(never), `the frame must not get ${never}: ${tokens}`);
  }
  // Still an opaque origin: the page cannot reach Aula's storage.
  assert.equal(await frame.evaluate(() => origin), "null");
  assert.equal(await frame.evaluate(() => { try { return typeof localStorage.length; } catch { return "refused"; } }), "refused");

  const inFrame = page.frameLocator("iframe.interactive-frame");
  await inFrame.getByLabel("Sunlight, water and carbon dioxide").check();
  await inFrame.locator("#reason").fill("Leaves need light to work.");
  await inFrame.getByRole("button", { name: "Submit" }).click();
  const answer = inFrame.getByText("Correct! Plants use sunlight, water and carbon dioxide to make glucose.");
  await answer.waitFor({ timeout: 5000 });
  assert.equal(await stayed(), true, "submitting must not reload or replace the page");
  // The answer, written under the button near the frame's bottom, is brought into its view.
  await page.waitForTimeout(200);
  const inView = await frame.evaluate(() => {
    const box = document.querySelector("#result").getBoundingClientRect();
    return box.top >= 0 && box.bottom <= innerHeight;
  });
  assert.ok(inView, "the page's answer is in the frame's view after Submit");
  // Enter in the text field submits too, and the page answers again.
  await inFrame.getByLabel("Soil and fertiliser").check();
  await inFrame.locator("#reason").press("Enter");
  await inFrame.getByText("Not quite.", { exact: false }).waitFor({ timeout: 5000 });
  assert.equal(await stayed(), true);

  // Every radio button sits on the line of its label's text, to its left; the page's own rule
  // for its text field (full width) still holds.
  const layout = await frame.evaluate(() => {
    const radios = [...document.querySelectorAll("input[type=radio]")].map((radio) => {
      const r = radio.getBoundingClientRect();
      const l = document.querySelector(`label[for="${radio.id}"]`).getBoundingClientRect();
      return { id: radio.id, radio: [r.left, r.top, r.right, r.bottom], label: [l.left, l.top, l.right, l.bottom] };
    });
    const field = document.querySelector("#reason").getBoundingClientRect().width;
    const form = document.querySelector("form").getBoundingClientRect().width;
    return { radios, field, form };
  });
  for (const { id, radio, label } of layout.radios) {
    const middle = (radio[1] + radio[3]) / 2;
    assert.ok(middle > label[1] && middle < label[3], `${id} is on its label's line: radio ${radio}, label ${label}`);
    assert.ok(radio[2] <= label[0] + 1, `${id} is left of its label: radio ${radio}, label ${label}`);
  }
  assert.ok(Math.abs(layout.field - layout.form) < 2, `the text field keeps the page's full width: ${layout.field} of ${layout.form}`);
  await page.screenshot({ path: `${SHOTS}interactive-answered-1280.png` });
  assert.deepEqual(problems, []);
  await context.close();
});

// What small models write around a form, each answering into #out when the learner presses
// Submit; none of it may leave the page, blank the frame or log an error.
const ANSWER = "document.getElementById('out').textContent = 'Answered ' + document.querySelector('input:checked').value";
const OPTIONS = `<label><input type="radio" name="a" value="b" checked> Sunlight</label><p id="out"></p>`;
const PAGES = {
  "no head or body": `<form id="f">${OPTIONS}<button>Submit</button></form><script>f.addEventListener('submit', function (e) { e.preventDefault(); ${ANSWER}; });</script>`,
  "a base target of _top": `<!DOCTYPE html><html><head><base target="_top"></head><body><form id="f">${OPTIONS}<button type="submit">Submit</button></form><script>f.addEventListener('submit', function () { ${ANSWER}; });</script></body></html>`,
  "a base target of _blank and a form posting to a server": `<html><head><base target="_blank"></head><body><form id="f" method="post" action="https://example.com/grade">${OPTIONS}<input type="submit" value="Submit"></form><script>f.addEventListener('submit', function () { ${ANSWER}; });</script></body></html>`,
  "a relative action": `<form id="f" method="get" action="/submit-answer">${OPTIONS}<button>Submit</button></form><script>f.onsubmit = function () { ${ANSWER}; };</script>`,
  "a button without a type that answers on click": `<form>${OPTIONS}<button onclick="check()">Submit</button></form><script>function check() { ${ANSWER}; }</script>`,
  'onsubmit="return false"': `<form onsubmit="check(); return false">${OPTIONS}<button>Submit</button></form><script>function check() { ${ANSWER}; }</script>`,
  "a javascript: action": `<form action="javascript:check()">${OPTIONS}<button>Submit</button></form><script>function check() { ${ANSWER}; }</script>`,
  "a javascript: link": `${OPTIONS}<a href="javascript:check()" role="button">Submit</a><script>function check() { ${ANSWER}; }</script>`,
  "form.submit() from a plain button": `<form id="f">${OPTIONS}<button type="button" onclick="f.submit()">Submit</button></form><script>f.addEventListener('submit', function () { ${ANSWER}; });</script>`,
  "an alert for the answer": `<form id="f">${OPTIONS}<button>Submit</button></form><script>f.addEventListener('submit', function (e) { e.preventDefault(); alert('Answered ' + document.querySelector('input:checked').value); });</script>`,
  "a link away from the page": `${OPTIONS}<a href="https://example.com/more">Read more</a> <button onclick="check()">Submit</button><script>function check() { ${ANSWER}; }</script>`,
};

test("whatever a model writes around its form, Submit answers in the page and the frame stays", async () => {
  const kinds = Object.keys(PAGES);
  const variants = {
    ...course,
    id: "scene-kinds-pages",
    scenes: kinds.map((kind, i) => ({ id: `page-${i}`, title: kind, content: { type: "interactive", html: PAGES[kind] } })),
  };
  const { context, page, problems } = await openCourse(variants);
  for (const [i, kind] of kinds.entries()) {
    await goToScene(page, i);
    // Each page gets a frame of its own, not the last page's frame navigated to new content.
    const fresh = await page.evaluate(() => {
      const frame = document.querySelector("iframe.interactive-frame");
      const seen = frame.aulaSeen === true;
      frame.aulaSeen = true;
      return !seen;
    });
    assert.equal(fresh, true, `${kind}: the frame of the page before was reused`);
    const { stayed } = await interactiveFrame(page);
    const inFrame = page.frameLocator("iframe.interactive-frame");
    if (kind === "a link away from the page") await inFrame.getByRole("link", { name: "Read more" }).click();
    await inFrame.getByRole("button", { name: "Submit" }).click();
    await inFrame.getByText("Answered b").waitFor({ timeout: 5000 }).catch(() => {
      throw new Error(`${kind}: the page never answered (${problems.join(" | ")})`);
    });
    assert.equal(await stayed(), true, `${kind}: the frame was navigated away from the page`);
    assert.deepEqual(problems, [], kind);
  }
  await context.close();
});

/** Scrolls the scene like a learner, with the mouse wheel over it, until first the top and then
 *  the bottom edge of `target` have been in view (both at once when it fits); says whether each
 *  edge was, uncovered, and whether its bottom stayed clear of the caption bar. */
async function reachable(page, target) {
  const stage = await page.getByTestId("stage").boundingBox();
  await page.mouse.move(stage.x + stage.width / 2, stage.y + Math.min(stage.height / 2, 120));
  const seen = { top: false, bottom: false, uncovered: true, aboveBar: true };
  for (let step = 0; step < 60 && !(seen.top && seen.bottom); step++) {
    const view = await page.evaluate((selector) => {
      const el = document.querySelector(selector);
      const box = el.getBoundingClientRect();
      const bar = document.querySelector("[data-testid=caption-bar]").getBoundingClientRect();
      const scroller = el.closest(".scene-page").getBoundingClientRect();
      const header = document.querySelector(".app-header").getBoundingClientRect();
      const from = Math.max(scroller.top, header.bottom) - 0.5;
      const to = Math.min(scroller.bottom, innerHeight) + 0.5;
      const x = box.left + Math.min(box.width / 2, 40);
      const hit = (y) => el.contains(document.elementFromPoint(x, y));
      const top = box.top >= from && box.top <= to;
      const bottom = box.bottom >= from && box.bottom <= to;
      return {
        above: box.top < from,
        top,
        bottom,
        uncovered: (!top || hit(box.top + 2)) && (!bottom || hit(box.bottom - 2)),
        aboveBar: !bottom || box.bottom <= bar.top + 0.5,
      };
    }, target);
    seen.top ||= view.top;
    seen.bottom ||= seen.top && view.bottom;
    seen.uncovered &&= view.uncovered;
    seen.aboveBar &&= view.aboveBar;
    if (seen.top && seen.bottom) break;
    // Above the view (under the page's header): scroll up to its top first; then down.
    await page.mouse.wheel(0, !seen.top && view.above ? -120 : 120);
    await page.waitForTimeout(60);
  }
  return seen;
}

const assertReachable = async (page, target, what) => {
  const seen = await reachable(page, target);
  assert.ok(seen.top && seen.bottom, `${what} can be scrolled into view, top and bottom: ${JSON.stringify(seen)}`);
  assert.ok(seen.aboveBar, `${what} is not under the caption bar: ${JSON.stringify(seen)}`);
  assert.ok(seen.uncovered, `nothing covers ${what}: ${JSON.stringify(seen)}`);
};

for (const [size, viewport] of Object.entries(SIZES)) {
  test(`every scene kind at ${size} (${viewport.width}×${viewport.height}): nothing under the caption bar, radios beside their labels`, async () => {
    const { context, page, problems } = await openCourse(course, viewport);
    const shot = (kind) => page.screenshot({ path: `${SHOTS}${kind}-${size}.png` });
    const noSideScroll = async (kind) =>
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), `${kind}: nothing makes the page scroll sideways`);
    // The stage's top just under the page's sticky header, as a learner would scroll it.
    const stageInView = () =>
      page.evaluate(() => {
        const header = document.querySelector(".app-header").getBoundingClientRect().bottom;
        const stage = document.querySelector("[data-testid=stage]").getBoundingClientRect().top;
        scrollBy(0, stage - header - 8);
      });

    await goToScene(page, sceneOf("slide"));
    await showCaption(page);
    await stageInView();
    await shot("slide");
    await noSideScroll("slide");

    await goToScene(page, sceneOf("quiz"));
    await showCaption(page);
    await stageInView();
    await shot("quiz");
    const quiz = course.scenes[sceneOf("quiz")].content.questions;
    for (const q of quiz) await assertReachable(page, `[data-question="${q.id}"]`, `quiz question ${q.id}`);
    await assertReachable(page, "[data-testid=quiz-check]", "the quiz's Check button");
    await shot("quiz-end");
    await noSideScroll("quiz");

    await goToScene(page, sceneOf("interactive"));
    await showCaption(page);
    const { frame } = await interactiveFrame(page);
    await stageInView();
    await shot("interactive");
    await assertReachable(page, ".interactive-frame", "the interactive page");
    await assertReachable(page, ".interactive .continue", "the interactive page's Continue button");
    const radiosBesideLabels = await frame.evaluate(() =>
      [...document.querySelectorAll("input[type=radio]")].every((radio) => {
        const r = radio.getBoundingClientRect();
        const l = document.querySelector(`label[for="${radio.id}"]`).getBoundingClientRect();
        const middle = (r.top + r.bottom) / 2;
        return middle > l.top && middle < l.bottom && r.right <= l.left + 1;
      }),
    );
    assert.ok(radiosBesideLabels, "inside the page, each radio button is on its label's line");
    await noSideScroll("interactive");

    await goToScene(page, sceneOf("pbl"));
    await showCaption(page);
    await stageInView();
    await shot("project");
    const issues = course.scenes[sceneOf("pbl")].content.project.issues.length;
    assert.equal(await page.locator(".project-issues li").count(), issues);
    await assertReachable(page, ".project-issues li:last-child", "the project's last issue");
    await assertReachable(page, ".project .continue", "the project's Continue button");
    await page.waitForTimeout(100);
    await shot("project-end");
    await noSideScroll("project");

    // The discussion: the classmate's card comes up after the teacher's line.
    await goToScene(page, course.scenes.findIndex((s) => (s.actions ?? []).some((a) => a.type === "discussion")));
    if (!(await playing(page))) await page.getByTestId("play").click();
    await page.getByTestId("discussion-card").waitFor({ timeout: 30000 });
    await stageInView();
    await shot("discussion");
    const card = await page.getByTestId("discussion-card").boundingBox();
    const frameBox = await page.getByTestId("stage").boundingBox();
    assert.ok(card.y >= frameBox.y && card.y + card.height <= frameBox.y + frameBox.height + 0.5, `the card fits its stage: ${JSON.stringify({ card, frameBox })}`);
    for (const button of ["discussion-accept", "discussion-skip"]) {
      const box = await page.getByTestId(button).boundingBox();
      assert.ok(box.y >= frameBox.y && box.y + box.height <= frameBox.y + frameBox.height, `${button} is inside the card on the stage`);
    }
    await noSideScroll("discussion");

    // Skipping it ends the course (the discussion is the last scene's last step): the end card
    // keeps its buttons on the stage too.
    await page.getByTestId("discussion-skip").click();
    await page.getByTestId("course-end").waitFor({ timeout: 30000 });
    await shot("end");
    const stage = await page.getByTestId("stage").boundingBox();
    for (const button of await page.getByTestId("course-end").locator("button, a").all()) {
      const box = await button.boundingBox();
      assert.ok(box.y >= stage.y && box.y + box.height <= stage.y + stage.height, `${await button.textContent()} is on the stage`);
    }

    assert.deepEqual(problems, []);
    await context.close();
  });

  test(`the samples' quizzes at ${size}: every question and the Check button can be reached`, async () => {
    for (const file of ["transformer-en.json", "photosynthesis-zh.json"]) {
      const sample = JSON.parse(await readFile(join(DIST, "courses", file), "utf8"));
      const { context, page, problems } = await openCourse({ ...sample, id: `copy-${sample.id}` }, viewport);
      const index = sample.scenes.findIndex((s) => s.content.type === "quiz");
      await goToScene(page, index);
      await page.getByTestId("quiz").waitFor();
      for (const q of sample.scenes[index].content.questions) await assertReachable(page, `[data-question="${q.id}"]`, `${file}: question ${q.id}`);
      await assertReachable(page, "[data-testid=quiz-check]", `${file}: the Check button`);
      assert.deepEqual(problems, []);
      await context.close();
    }
  });
}
