// Trunk post_build hook (Trunk.toml): writes the app shell's file list into the staged sw.js and
// into app-shell.json, both named by one hash of every listed file's content.
//
//   app-shell.json = {"version": "<hash>", "files": [{"path", "bytes", "role", "hashed"}],
//                     "on_demand": [{"path", "bytes", "role": "ai-worker", "hashed", "sha256"}]}
//
// `files` is what the service worker precaches and what an export needs to play a course: the
// page, the app's js and wasm (and, split off it, the loader and chunks of what loads on first
// use, and the player in one module that exports carry), the files worker, the css, the icons,
// the manifest and the bundled courses. Paths are relative to the site root, without a leading
// slash; `hashed` says Trunk put a content hash in the name. `on_demand` is the AI worker, kept
// by the service worker once the page has used it, if its `sha256` matches. pdf.js (dist/pdf/) is in neither: it only
// serves course writing, which needs the network. The files worker reads this list to find the
// player's js, wasm and css for SCORM packages and the offline page (crates/export/src/package.rs).
//
// The version hashes every listed file's content, sw.js and this script, so any change gives a
// new cache name. In a release build the staged stylesheet is first minified (comments and
// layout whitespace only; no rule is rewritten), the app's and the workers' js (wasm-bindgen's
// glue) are minified by terser (pinned in package.json; exports and globals keep their names),
// and index.html's integrity for the page's files follows.
//
// A debug build (`cargo xtask dev`, plain `trunk serve`) gets no service worker: the
// registration is taken out of index.html and sw.js stays the unprocessed copy, which, if a
// release build's worker is still registered for the origin, replaces it on the next navigation,
// deletes its caches and unregisters itself. (Trunk gives a hook no sign of `serve` itself: its
// autoreload script is added while serving, after the hook. `trunk serve --release` therefore
// gets the real worker, which is safe for code: navigations go to the network first and every
// build has new hashed names and a new cache.)
import { createHash } from "node:crypto";
import { readFile, readdir, writeFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { execFileSync } from "node:child_process";
import { minify } from "terser";

const STAGING = process.env.TRUNK_STAGING_DIR;
if (!STAGING) fail("TRUNK_STAGING_DIR is not set: run this as a Trunk hook (see Trunk.toml)");

const MARKER = "/* AULA_SHELL */ null";
const REGISTRATION = /<script id="aula-sw">[\s\S]*?<\/script>/;
// Trunk's content hash in a file name: `style-0123456789abcdef.css`, `aula-app-…_bg.wasm`.
const HASHED = /-[0-9a-f]{16}(_bg)?\.(js|wasm|css)$/;

/** The role of a staged file in the shell, `"on_demand"`, or `null` when it is left out. */
function roleOf(path) {
  if (path === "index.html") return "page";
  if (path === "sw.js" || path === "app-shell.json" || path === "split-parts.json") return null;
  if (path.startsWith("pdf/")) return null;
  if (path.startsWith("aula-worker")) return "on_demand";
  // The files worker is precached: exports and imports work offline.
  if (path.startsWith("aula-files")) return "files-worker";
  // The page's split (xtask/src/split.rs): the loader the app's js imports, and the chunks it
  // fetches when a screen is first opened. Both are precached, so every screen opens offline.
  if (/^aula-split-[0-9a-f]{16}\.js$/.test(path)) return "app-split-loader";
  if (/^aula-split-[0-9a-f]{16}\.wasm$/.test(path)) return "app-chunk";
  // The page in one module (split.rs), for the player that exports carry; precached, so a
  // course can be exported offline.
  if (/^aula-player-[0-9a-f]{16}\.js$/.test(path)) return "player-js";
  if (/^aula-player-[0-9a-f]{16}_bg\.wasm$/.test(path)) return "player-wasm";
  if (/^aula-app-[0-9a-f]+\.js$/.test(path)) return "app-js";
  if (/^aula-app-[0-9a-f]+_bg\.wasm$/.test(path)) return "app-wasm";
  if (path.endsWith(".css")) return "css";
  if (path === "icon.svg" || path.startsWith("icons/")) return "icon";
  if (path === "manifest.webmanifest") return "manifest";
  if (path.startsWith("courses/")) return "course";
  return "other";
}

const ORDER = ["page", "app-js", "app-wasm", "app-split-loader", "app-chunk", "player-js", "player-wasm", "files-worker", "css", "icon", "manifest", "course", "other"];

async function* walk(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else if (entry.isFile()) yield full;
  }
}

function fail(message) {
  console.error(`precache.mjs: ${message}`);
  process.exit(1);
}

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

const development = process.env.TRUNK_PROFILE !== "release";

// A release build splits the page's wasm first (screens loaded on first use); it rewrites the
// staged app js and wasm and index.html's integrity for them.
if (!development) {
  execFileSync(process.env.CARGO ?? "cargo", ["xtask", "split-page", STAGING], { stdio: "inherit" });
}

const indexPath = join(STAGING, "index.html");
const swPath = join(STAGING, "sw.js");
let html = await readFile(indexPath, "utf8");
const template = await readFile(swPath, "utf8");

const CSS_COMMENT = /\/\*[\s\S]*?\*\//g;

/** A stylesheet without comments (`bare`) and its layout whitespace (web/style.css is written to be
 * read; the page need not download that). Only safe steps: no rule, selector or value is
 * rewritten, and no string in the sheet has a run of spaces or a comment marker in it. */
function minifyCss(bare) {
  return bare
    .replace(/\s+/g, " ")
    .replace(/\s*([{};])\s*/g, "$1")
    .replace(/;}/g, "}")
    .trim();
}

/** Writes the smaller `small` over the staged `path` and points index.html's integrity for it
 * (Trunk computed it from the file as built) at the new content. */
async function replaceStaged(full, path, small) {
  await writeFile(full, small);
  const integrity = `sha384-${createHash("sha384").update(small).digest("base64")}`;
  const link = new RegExp(`(href="/${path.replace(/[.]/g, "[.]")}"[^>]*? integrity=")sha384-[^"]+"`);
  if (!link.test(html)) fail(`index.html has no integrity for ${path} to update`);
  html = html.replace(link, `$1${integrity}"`);
}

// In a release build the staged stylesheet and the app's js are minified.
if (!development) {
  for await (const full of walk(STAGING)) {
    const path = relative(STAGING, full).split(sep).join("/");
    const role = roleOf(path);
    if (role === "css") {
      const bare = (await readFile(full, "utf8")).replace(CSS_COMMENT, "");
      const strings = bare.match(/"[^"]*"|'[^']*'/g) ?? [];
      if (strings.some((s) => /\s\s|\/\*|[{};]/.test(s))) fail(`${path} has a string that minifying would change`);
      await replaceStaged(full, path, minifyCss(bare));
    } else if (role === "app-js" || role === "player-js") {
      const source = await readFile(full, "utf8");
      // The offline page (crates/export/src/package.rs) starts the glue inline by its init's name.
      const options = { module: true, ecma: 2020, compress: { passes: 2 }, mangle: { reserved: ["__wbg_init", "initSync"] } };
      const result = await minify(source, options).catch((error) =>
        fail(`terser could not minify ${path}: ${error.message}`),
      );
      if (!result.code || result.code.length >= source.length) fail(`terser made ${path} no smaller`);
      if (!result.code.includes("function __wbg_init(")) fail(`${path} lost its __wbg_init when minified`);
      if (role === "app-js") await replaceStaged(full, path, result.code);
      else await writeFile(full, result.code);
    } else if (role === "app-split-loader") {
      // The loader of the split screens, an ES module the app's js imports; its exports are the
      // names the wasm imports, which a module's minifier keeps.
      const source = await readFile(full, "utf8");
      const result = await minify(source, { module: true, ecma: 2020, compress: { passes: 2 } }).catch((error) =>
        fail(`terser could not minify ${path}: ${error.message}`),
      );
      if (!result.code || result.code.length >= source.length) fail(`terser made ${path} no smaller`);
      await writeFile(full, result.code);
    } else if ((role === "on_demand" || role === "files-worker") && /^aula-(worker|files)\.js$/.test(path)) {
      // A worker's glue is a classic script that defines the global `wasm_bindgen` its loader
      // calls; top-level names are not mangled. Its sha256 in app-shell.json is taken below.
      const source = await readFile(full, "utf8");
      const result = await minify(source, { compress: { passes: 2 } }).catch((error) =>
        fail(`terser could not minify ${path}: ${error.message}`),
      );
      if (!result.code || result.code.length >= source.length) fail(`terser made ${path} no smaller`);
      await writeFile(full, result.code);
    }
  }
}

const files = [];
const onDemand = [];
const digests = [];
for await (const full of walk(STAGING)) {
  const path = relative(STAGING, full).split(sep).join("/");
  const role = roleOf(path);
  if (!role) continue;
  const bytes = await readFile(full);
  const entry = { path, bytes: bytes.length, role, hashed: HASHED.test(path) };
  if (role === "on_demand") {
    entry.role = "ai-worker";
    entry.sha256 = sha256(bytes);
    onDemand.push(entry);
  } else {
    files.push(entry);
  }
  digests.push(`${path}\0${sha256(bytes)}`);
}
const byRoleThenPath = (a, b) => ORDER.indexOf(a.role) - ORDER.indexOf(b.role) || a.path.localeCompare(b.path);
files.sort(byRoleThenPath);
onDemand.sort((a, b) => a.path.localeCompare(b.path));

for (const role of ["page", "app-js", "app-wasm", "css"]) {
  if (!files.some((f) => f.role === role)) fail(`no ${role} file in ${STAGING}; did the build change its names?`);
}
for (const file of files.filter((f) => f.role === "app-js" || f.role === "app-wasm" || f.role === "css")) {
  if (!html.includes(file.path)) fail(`index.html does not load ${file.path}; is it a leftover of another build?`);
}

// The worker's logic and this script's are part of the version: a change to either starts a
// fresh cache too.
digests.sort();
digests.push(`sw.js\0${sha256(template)}`);
digests.push(`precache.mjs\0${sha256(await readFile(new URL(import.meta.url)))}`);
const version = sha256(digests.join("\n")).slice(0, 16);

const shell = { version, files, on_demand: onDemand };
await writeFile(join(STAGING, "app-shell.json"), JSON.stringify(shell, null, 2) + "\n");

if (development) {
  await writeFile(indexPath, html.replace(REGISTRATION, "<!-- no service worker in a development build (web/precache.mjs) -->"));
  console.log(`precache.mjs: development build, service worker off (shell ${version} listed in app-shell.json)`);
} else {
  if (!template.includes(MARKER)) fail(`sw.js has no ${MARKER} to fill in`);
  if (!REGISTRATION.test(html)) fail('index.html has no <script id="aula-sw">: the service worker would never be registered');
  // Whole-line comments are for readers of web/sw.js; the page need not download them.
  const code = template.replace(/^[ \t]*\/\/.*\n/gm, "");
  await writeFile(swPath, code.replace(MARKER, JSON.stringify(shell)));
  await writeFile(indexPath, html);
  const total = files.reduce((sum, f) => sum + f.bytes, 0);
  console.log(`precache.mjs: service worker shell ${version}: ${files.length} files, ${(total / 1024).toFixed(1)} KB`);
}
