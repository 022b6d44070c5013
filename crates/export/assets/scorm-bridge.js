// Aula's SCORM bridge. It runs in a SCORM package's index.html beside the player: it finds the
// LMS's SCORM API (SCORM 1.2 `API` or 2004 `API_1484_11`) by walking window.parent, then
// window.opener, and turns the player's "aula" events into SCORM calls: status, score, bookmark
// (suspend data), session time, commit, and finish when the page goes away. Without an LMS the
// course still plays and nothing is reported.
(function () {
  "use strict";
  var config = {};
  try {
    config = JSON.parse(document.getElementById("aula-package").textContent);
  } catch (e) {}
  var v2004 = config.scorm === "2004";
  var apiName = v2004 ? "API_1484_11" : "API";

  function search(win) {
    for (var tries = 0; win && tries < 500; tries++) {
      try {
        if (win[apiName]) return win[apiName];
      } catch (e) {
        return null; // a parent of another origin: no API can be reached there
      }
      if (win.parent === win) break;
      win = win.parent;
    }
    return null;
  }
  var api = search(window) || (window.opener ? search(window.opener) : null);
  if (!api) {
    console.info("Aula: no SCORM " + (v2004 ? "2004" : "1.2") + " API found; the course plays without reporting.");
    return;
  }

  var fn = v2004
    ? { init: "Initialize", get: "GetValue", set: "SetValue", commit: "Commit", finish: "Terminate" }
    : { init: "LMSInitialize", get: "LMSGetValue", set: "LMSSetValue", commit: "LMSCommit", finish: "LMSFinish" };
  var key = v2004
    ? { location: "cmi.location", suspend: "cmi.suspend_data", time: "cmi.session_time", exit: "cmi.exit",
        raw: "cmi.score.raw", min: "cmi.score.min", max: "cmi.score.max" }
    : { location: "cmi.core.lesson_location", suspend: "cmi.suspend_data", time: "cmi.core.session_time",
        exit: "cmi.core.exit", raw: "cmi.core.score.raw", min: "cmi.core.score.min", max: "cmi.core.score.max" };

  function call(name, a, b) {
    try {
      var f = api[fn[name]];
      return String(b === undefined ? f.call(api, a) : f.call(api, a, b));
    } catch (e) {
      console.warn("Aula: the LMS's " + fn[name] + " failed: " + e);
      return "false";
    }
  }
  function set(k, v) {
    return call("set", k, String(v));
  }

  if (call("init", "") !== "true") {
    console.warn("Aula: the LMS did not start the session; nothing is reported.");
    return;
  }
  var open = true;
  var started = Date.now();
  var saved = call("get", key.suspend);
  if (v2004) {
    if (call("get", "cmi.completion_status") !== "completed") set("cmi.completion_status", "incomplete");
  } else {
    var status = call("get", "cmi.core.lesson_status");
    if (status === "not attempted" || status === "") set("cmi.core.lesson_status", "incomplete");
  }
  set(key.exit, "suspend");
  call("commit", "");

  function pad(n, width) {
    var s = String(n);
    while (s.length < width) s = "0" + s;
    return s;
  }
  function sessionTime(ms) {
    var cs = Math.round(ms / 10);
    var h = Math.floor(cs / 360000);
    var m = Math.floor((cs % 360000) / 6000);
    var s = (cs % 6000) / 100;
    if (v2004) return "PT" + h + "H" + m + "M" + s.toFixed(2) + "S";
    return pad(h, 4) + ":" + pad(m, 2) + ":" + pad(Math.floor(s), 2) + "." + pad(cs % 100, 2);
  }

  window.addEventListener("aula", function (event) {
    var d = event.detail || {};
    if (!open) return;
    if (d.type === "ready") {
      // Resume where the learner left off: the player restores its bookmark.
      if (saved && saved !== "false") window.postMessage({ target: "aula", type: "restore", bookmark: saved }, "*");
      return;
    }
    if (d.type !== "progress") return;
    set(key.location, d.scene);
    set(key.suspend, d.bookmark);
    if (d.score && d.score.max > 0) {
      if (v2004) {
        set(key.min, 0);
        set(key.max, d.score.max);
        set(key.raw, d.score.raw);
        set("cmi.score.scaled", Math.round((d.score.raw / d.score.max) * 10000) / 10000);
      } else {
        // SCORM 1.2 scores are percentages (the manifest's mastery score is one too).
        set(key.min, 0);
        set(key.max, 100);
        set(key.raw, Math.round((d.score.raw / d.score.max) * 100));
      }
    }
    if (v2004) {
      set("cmi.progress_measure", Math.round((d.seen / Math.max(d.scenes, 1)) * 10000) / 10000);
      set("cmi.completion_status", d.completed ? "completed" : "incomplete");
      if (d.passed === true || d.passed === false) set("cmi.success_status", d.passed ? "passed" : "failed");
      if (d.completed) set(key.exit, "normal");
    } else {
      var lesson = "incomplete";
      if (d.completed) lesson = d.passed === true ? "passed" : d.passed === false ? "failed" : "completed";
      set("cmi.core.lesson_status", lesson);
      if (d.completed) set(key.exit, "");
    }
    call("commit", "");
  });

  function finish() {
    if (!open) return;
    open = false;
    set(key.time, sessionTime(Date.now() - started));
    call("commit", "");
    call("finish", "");
  }
  window.addEventListener("pagehide", finish);
  window.addEventListener("beforeunload", finish);
})();
