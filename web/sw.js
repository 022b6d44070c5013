// Aula's service worker: the app shell and the bundled sample courses, so the page opens and a
// course plays with the network cut. Trunk copies this file to dist/sw.js; the post_build hook
// (web/precache.mjs) replaces SHELL below with the build's file list and content hash. Courses the
// learner saved live in IndexedDB, not here.
//
// - Navigations (any path: /, /classroom/<id>, /settings, ...): network first, so a deploy shows
//   at once; the cached index.html when the network fails or gives no answer in 4 s.
// - Files of the shell: cache first. The cache is named `aula-shell-<hash>`, the hash of every
//   listed file's content (and of this file and the hook), so a new build installs a new cache
//   beside the old one and the old one goes on activate.
// - The AI worker's files: not downloaded up front (the AI needs the network anyway; the files
//   worker and the player exports carry are in the shell, so exports work offline). Their
//   names carry no hash, so they go to the network first, and a copy is kept only when its
//   SHA-256 is the one this build lists; offline, that copy starts the worker, so the learner is
//   told the provider cannot be reached rather than that the worker did not start.
// - Everything else passes untouched: other origins (the providers' API calls), non-GET
//   requests, pdf.js under /pdf/ (only used to write a course, which needs the network).
//
// `skipWaiting` and `clients.claim` let the first visit be served at once. index.html's inline
// `<script id="aula-sw">` registers /sw.js after `load`, over http(s) only, and logs a refusal
// with console.info. An unprocessed copy (a debug build, see precache.mjs) deletes the caches and
// unregisters itself, so an earlier release build's worker never outlives a switch to
// `cargo xtask dev`. Exports write their own index.html without the registration: served
// anywhere but a site root there is no /sw.js, and Chromium logs an error of its own for that.
// Tested by tests/e2e/offline.test.mjs.

/* The hook replaces this object; `null` (an unprocessed copy) means: do nothing. */
const SHELL = /* AULA_SHELL */ null;

const PREFIX = "aula-shell-";
const NAVIGATION_TIMEOUT_MS = 4000;

const base = new URL("./", self.location.href);
const urlOf = (path) => new URL(path, base).href;
const cacheName = SHELL ? PREFIX + SHELL.version : null;
const precached = new Set((SHELL?.files ?? []).map((f) => urlOf(f.path)));
/** URL → the AI worker file's entry (with its `sha256`). */
const onDemand = new Map((SHELL?.on_demand ?? []).map((f) => [urlOf(f.path), f]));
const pageUrl = urlOf("index.html");

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      if (SHELL) {
        const cache = await caches.open(cacheName);
        // An unhashed file (index.html, a course) is revalidated with the server, so an older
        // build's copy in the HTTP cache never lands in this build's cache; a hashed name can
        // only be this content, so the copy the page just downloaded is used.
        await Promise.all(
          SHELL.files.map(async (file) => {
            const url = urlOf(file.path);
            const response = await fetch(new Request(url, { cache: file.hashed ? "default" : "no-cache" }));
            if (!response.ok) throw new Error(`precaching ${url}: ${response.status}`);
            await cache.put(url, await withoutRedirect(response));
          }),
        );
      }
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith(PREFIX) && name !== cacheName) await caches.delete(name);
      }
      if (SHELL) await self.clients.claim();
      else await self.registration.unregister(); // a dev build: leave nothing behind
    })(),
  );
});

// Registered on the first evaluation only when there is a shell: a worker without a fetch
// handler costs the page nothing.
if (SHELL) self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === "navigate") {
    event.respondWith(navigation(request));
    return;
  }
  const key = url.origin + url.pathname;
  if (precached.has(key)) event.respondWith(cacheFirst(request, key));
  else if (onDemand.has(key)) event.respondWith(networkFirst(event, key, onDemand.get(key)));
});

async function navigation(request) {
  try {
    return await withTimeout(fetch(request), NAVIGATION_TIMEOUT_MS);
  } catch (networkError) {
    const cache = await caches.open(cacheName);
    const url = new URL(request.url);
    const cached = (await cache.match(url.origin + url.pathname)) ?? (await cache.match(pageUrl));
    if (cached) return cached;
    throw networkError;
  }
}

async function cacheFirst(request, key) {
  const cached = await (await caches.open(cacheName)).match(key);
  return cached ?? fetch(request);
}

async function networkFirst(event, key, file) {
  let response;
  try {
    response = await fetch(new Request(event.request, { cache: "no-cache" }));
  } catch (networkError) {
    const cached = await (await caches.open(cacheName)).match(key);
    if (cached) return cached;
    throw networkError;
  }
  if (response.status === 200 && response.type === "basic") {
    const copy = response.clone();
    event.waitUntil(
      (async () => {
        const bytes = await copy.arrayBuffer();
        if ((await sha256(bytes)) !== file.sha256) return; // another build's file
        const cache = await caches.open(cacheName);
        await cache.put(key, new Response(bytes, { status: 200, headers: copy.headers }));
      })().catch(() => {}),
    );
  }
  return response;
}

async function sha256(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A response that followed a redirect cannot answer a navigation; keep only its content. */
async function withoutRedirect(response) {
  if (!response.redirected) return response;
  const body = await response.blob();
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

function withTimeout(promise, ms) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
