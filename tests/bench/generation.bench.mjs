// Generation bench: the built page writes a 12-scene course at concurrency 3 against mock-llm
// pacing every reply at 300 ms to the first token and 50 tokens/s. Timings come from mock-llm's
// request log (when each call arrived and when its answer was fully written), so the bench
// compares the run with baselines computed from the same calls' own durations:
//   - outline-then-scenes with 3 slots: outline + max(longest scene chain, scene work / 3), the
//     best a schedule can do that waits for the whole outline (the first contents now start
//     while it streams, so the run can beat it)
//   - the critical path of outline-then-scenes (unlimited slots): outline + longest chain
//   - the serial schedule (one call at a time, as OpenMAIC's snapshot does)
//   - the first playable scene: outline + scene 1's content + its script
// Prints `generation: … baseline …; ratio R` lines for `cargo xtask bench`.
import { readFile } from "node:fs/promises";
import { serveDist, launchBrowser, openPage, startMock, connectToMock } from "../e2e/support.mjs";

const SCENES = 12;
const LIMIT = 3;
const fixture = JSON.parse(
  await readFile(new URL("../../crates/generation/fixtures/photosynthesis.json", import.meta.url), "utf8"),
);
const slides = fixture.outline.scenes.filter((s) => s.kind === "slide");
const quiz = fixture.outline.scenes.find((s) => s.kind === "quiz");

// Twelve scenes: three slides then a quiz, three times; each slide reuses a fixture slide.
const scenes = Array.from({ length: SCENES }, (_, i) => {
  const base = (i + 1) % 4 === 0 ? quiz : slides[i % slides.length];
  return { ...base, title: `Part ${i + 1}: ${base.title}`, base: base.title };
});
const outline = { ...fixture.outline, scenes: scenes.map(({ base, ...s }) => s) };
const rules = [{ match: { last_message_contains: "What I want to learn" }, reply: { json: outline } }];
for (const s of scenes) {
  rules.push({ match: { last_message_contains: `Write the ${s.kind} for "${s.title}"` }, reply: { json: fixture.content[s.base] } });
  const script = fixture.scripts[s.base].filter((item) => item.name !== "discussion");
  rules.push({ match: { last_message_contains: `Write the script for "${s.title}"` }, reply: { json: script } });
}

const { child: mock, url: mockUrl, script } = await startMock();
const server = await serveDist();
const browser = await launchBrowser();
try {
  await script({ rules, chunk_words: 4, faults: [{ ttft_ms: 300, drip_tokens_per_s: 50 }] });
  const { page, problems } = await openPage(browser);
  await connectToMock(page, { appUrl: server.url, mockUrl, key: "sk-bench-1" });
  await fetch(`${mockUrl}/__reset`, { method: "POST" });
  await page.goto(server.url);
  await page.getByTestId("prompt-input").fill("Photosynthesis, 12 scenes");
  if (await page.getByTestId("prompt-review").isChecked()) await page.getByTestId("prompt-review").click();
  await page.getByTestId("prompt-submit").click();
  await page.getByTestId("scene-progress").waitFor({ timeout: 120_000 });
  await page.waitForFunction(
    (n) => {
      const rows = [...document.querySelectorAll("[data-testid=scene-row]")];
      return rows.length === n && rows.every((r) => r.dataset.state === "ready");
    },
    SCENES,
    { timeout: 600_000, polling: 250 },
  );
  const log = (await (await fetch(`${mockUrl}/__requests`)).json()).filter((r) => r.chat_number);
  if (problems.length) throw new Error(`the page reported problems: ${problems.join("\n")}`);

  const asks = (r) => JSON.stringify(r.body);
  const duration = (r) => r.answered_ms - r.received_ms;
  const find = (needle) => log.filter((r) => asks(r).includes(needle.replaceAll('"', '\\"')));
  const one = (needle) => {
    const found = find(needle);
    if (found.length !== 1) throw new Error(`expected one call for ${needle}, found ${found.length}`);
    return found[0];
  };
  const outlineCall = one("What I want to learn");
  const chains = scenes.map((s) => [one(`Write the ${s.kind} for "${s.title}"`), one(`Write the script for "${s.title}"`)]);
  const start = Math.min(...log.map((r) => r.received_ms));
  const end = Math.max(...log.map((r) => r.answered_ms));
  const wall = end - start;
  const o = duration(outlineCall);
  const chain = chains.map(([c, s]) => duration(c) + duration(s));
  const work = chain.reduce((a, b) => a + b, 0);
  const critical = o + Math.max(...chain);
  const bound = o + Math.max(Math.max(...chain), work / LIMIT);
  const serial = o + work;
  const firstPlayable = chains[0][1].answered_ms - start;
  const firstIdeal = o + chain[0];
  const tokens = log.reduce((n, r) => n + r.input_tokens + r.output_tokens, 0);
  const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
  const ratio = (a, b) => (a / b).toFixed(2);
  console.log(`generation: ${SCENES} scenes at concurrency ${LIMIT}, wall ${s(wall)}; baseline (outline, then scenes in ${LIMIT} slots: best possible) ${s(bound)}; ratio ${ratio(wall, bound)}`);
  console.log(`generation: ${SCENES} scenes, wall ${s(wall)}; baseline (outline, then scenes in unlimited slots) ${s(critical)}; ratio ${ratio(wall, critical)}`);
  console.log(`generation: ${SCENES} scenes, wall ${s(wall)}; baseline (serial, one call at a time) ${s(serial)}; ratio ${ratio(wall, serial)}`);
  console.log(`generation: first playable scene at ${s(firstPlayable)}; baseline (outline + its two calls) ${s(firstIdeal)}; ratio ${ratio(firstPlayable, firstIdeal)}`);
  console.log(`generation: tokens per ${SCENES}-scene course ${tokens} in ${log.length} calls (mock-llm's count); baseline (outline call alone) ${outlineCall.input_tokens + outlineCall.output_tokens}; ratio ${ratio(tokens, outlineCall.input_tokens + outlineCall.output_tokens)}`);
} finally {
  await browser.close();
  await server.close();
  mock.kill();
}
