//! `cargo xtask <verb>`: Aula's project automation.
//!
//! - `bootstrap`: install the pinned tools that are missing (idempotent).
//! - `dev`: bootstrap, then serve the app with live reload on http://127.0.0.1:8080.
//! - `build`: bootstrap, then the release bundle in `dist/`.
//! - `test`: bootstrap, then fmt, the dependency rule, clippy, host tests, browser tests, SDK
//!   fidelity, brief fuzzing, eval and real-model plumbing, release build, size budget, e2e.
//! - `e2e`: release build, then only the Playwright end-to-end tests.
//! - `size`: gzip sizes of the release bundle against the budget.
//! - `bench`: every benchmark, with its same-run baseline ratio, into `target/bench-report.md`.
//! - `eval-director`: the director scenarios against a real model (needs the user's key).
//! - `fuzz`: every fuzz target for `--seconds N` each (default 60), a table of executions and
//!   crashes into `target/fuzz-report.md`; `test` runs each for a few seconds.
//! - `real-model`: Aula writes and teaches courses with a real LLM (a local one by default) and
//!   writes `target/real-model-report.md`; not part of `test`, which checks its plumbing.

mod bench;
mod curl;
mod deps;
mod eval;
mod fuzz;
mod mock;
mod real_model;
mod size;
mod split;
mod tools;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

const USAGE: &str =
    "usage: cargo xtask <bootstrap|dev|build|test|e2e|size|bench|eval-director|real-model|fuzz>";

fn main() {
    if let Err(error) = run_cli() {
        eprintln!("xtask: error: {error:#}");
        std::process::exit(1);
    }
}

fn run_cli() -> Result<()> {
    let verb = std::env::args().nth(1).unwrap_or_default();
    match verb.as_str() {
        "bootstrap" => tools::bootstrap(),
        "dev" => dev(),
        "build" => {
            tools::bootstrap()?;
            release_build()
        }
        "test" => test(),
        "bench" => {
            tools::bootstrap()?;
            release_build()?;
            bench::run()
        }
        "eval-director" => {
            let args: Vec<String> = std::env::args().skip(2).collect();
            if args.iter().any(|a| a == "--help" || a == "-h") {
                println!("{}", eval::USAGE);
                return Ok(());
            }
            if args.iter().any(|a| a == "--self-test") {
                return eval::self_test();
            }
            eval::run(&args)
        }
        "e2e" => {
            tools::bootstrap()?;
            release_build()?;
            e2e()
        }
        "real-model" => {
            let args: Vec<String> = std::env::args().skip(2).collect();
            if args.iter().any(|a| a == "--help" || a == "-h") {
                println!("{}", real_model::USAGE);
                return Ok(());
            }
            real_model::run(&args)
        }
        "fuzz" => {
            let args: Vec<String> = std::env::args().skip(2).collect();
            if args.iter().any(|a| a == "--help" || a == "-h") {
                println!("{}", fuzz::USAGE);
                return Ok(());
            }
            fuzz::run(&fuzz::parse_args(&args)?)
        }
        "size" => {
            if !project_root().join("dist").join("index.html").exists() {
                tools::bootstrap()?;
                release_build()?;
            }
            size::report(&project_root().join("dist")).map(|_| ())
        }
        // Run by web/precache.mjs (Trunk's post-build hook) in a release build.
        "split-page" => {
            let staging = std::env::args()
                .nth(2)
                .context("usage: cargo xtask split-page <trunk staging dir>")?;
            split::split_page(Path::new(&staging))
        }
        "" | "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        other => bail!("unknown verb {other:?}\n{USAGE}"),
    }
}

pub fn project_root() -> PathBuf {
    // xtask lives one folder below the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

pub fn status_line(text: &str) {
    println!("\x1b[1m{text}\x1b[0m");
}

pub fn command_exists(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok()
}

/// Runs `cmd` with the pinned tools on PATH, from the project root unless it says otherwise.
pub fn run(cmd: &mut Command) -> Result<()> {
    if cmd.get_current_dir().is_none() {
        cmd.current_dir(project_root());
    }
    cmd.env("PATH", tools::tool_path()?);
    let shown = format!("{cmd:?}");
    let status = cmd
        .status()
        .with_context(|| format!("could not start {shown}"))?;
    if !status.success() {
        bail!("{shown} failed ({status})");
    }
    Ok(())
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn dev() -> Result<()> {
    tools::bootstrap()?;
    status_line("dev: serving Aula on http://127.0.0.1:8080 (Ctrl-C to stop)");
    run(Command::new("trunk").args(["serve", "--offline"]))
}

/// The release build: Trunk, with the page split into modules loaded on first use
/// (`split.rs`; the hook `web/precache.mjs` runs the split).
pub(crate) fn release_build() -> Result<()> {
    run(Command::new("trunk")
        .args(["build", "--release", "--offline"])
        // For wasm32 only (the config key this overrides), so the hook's own `cargo xtask` and
        // every host build keep their flags and their cache.
        .env(
            "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS",
            split::release_rustflags(),
        ))
}

fn e2e() -> Result<()> {
    let mock_llm = mock::binary()?;
    run(Command::new("node")
        .args(["--test", "--test-reporter=spec", "tests/e2e/"])
        .env("AULA_DIST", project_root().join("dist"))
        .env("MOCK_LLM_BIN", mock_llm)
        .env("CHROMIUM", tools::CHROMIUM))
}

/// The official OpenAI and Anthropic Python SDKs read mock-llm's streams (tests/sdk).
fn sdk_fidelity() -> Result<()> {
    let python = tools::sdk_python()?;
    run(Command::new(python)
        .args(["-m", "pytest", "-q", "tests/sdk"])
        .env("MOCK_LLM_BIN", mock::binary()?))
}

type Phase = Box<dyn Fn() -> Result<()>>;

/// The phases of `cargo xtask test`, in the order they run; the first failure stops the run.
fn test() -> Result<()> {
    let wasm = tools::WASM_TARGET;
    let mut phases: Vec<(&str, Phase)> = vec![
        ("bootstrap", Box::new(tools::bootstrap)),
        (
            "rustfmt",
            Box::new(|| run(cargo().args(["fmt", "--all", "--check"]))),
        ),
        ("dependency rule", Box::new(deps::check)),
        ("crate map", Box::new(deps::check_map)),
        (
            "clippy (host)",
            Box::new(|| {
                run(cargo().args([
                    "clippy",
                    "--workspace",
                    "--exclude",
                    "aula-app",
                    "--all-targets",
                    "--",
                    "-D",
                    "warnings",
                ]))
            }),
        ),
        (
            "clippy (wasm)",
            Box::new(move || {
                run(cargo().args([
                    "clippy",
                    "--target",
                    wasm,
                    "-p",
                    "aula-app",
                    "-p",
                    "aula-worker",
                    "-p",
                    "aula-files",
                    "-p",
                    "aula-storage",
                    "--all-targets",
                    "--",
                    "-D",
                    "warnings",
                ]))
            }),
        ),
        (
            "host tests",
            Box::new(|| {
                run(cargo().args([
                    "test",
                    "--workspace",
                    "--exclude",
                    "aula-app",
                    "--exclude",
                    "aula-worker",
                    "--exclude",
                    "aula-files",
                ]))
            }),
        ),
        (
            "browser tests (headless Chromium)",
            Box::new(move || {
                // The app's fetch transport is tested against a real local server; its
                // address is compiled into the test (wasm tests cannot read the environment).
                let mock = mock::MockLlm::start()?;
                run(cargo()
                    .args([
                        "test",
                        "--target",
                        wasm,
                        "-p",
                        "aula-storage",
                        "-p",
                        "aula-app",
                        "-p",
                        "aula-worker",
                    ])
                    .env("AULA_MOCK_LLM_URL", &mock.url)
                    .env("CHROMEDRIVER", tools::CHROMEDRIVER)
                    .env("WASM_BINDGEN_TEST_TIMEOUT", "60"))
            }),
        ),
        ("SDK fidelity (pytest)", Box::new(sdk_fidelity)),
        (
            "fuzz (briefly)",
            Box::new(|| {
                fuzz::run(&fuzz::Options {
                    seconds: fuzz::TEST_SECONDS,
                    only: Vec::new(),
                })
            }),
        ),
        (
            "director eval plumbing (mock-llm)",
            Box::new(eval::self_test),
        ),
        ("real-model plumbing", Box::new(real_model::self_test)),
        ("release build", Box::new(release_build)),
        (
            "bundle size budget",
            Box::new(|| size::report(&project_root().join("dist")).map(|_| ())),
        ),
        ("end-to-end (Playwright)", Box::new(e2e)),
    ];
    let started = Instant::now();
    let mut finished = Vec::new();
    for (name, phase) in phases.drain(..) {
        status_line(&format!("== {name}"));
        let phase_started = Instant::now();
        let outcome = phase();
        let seconds = phase_started.elapsed().as_secs_f64();
        let ok = outcome.is_ok();
        finished.push((name, ok, seconds));
        if let Err(error) = outcome {
            print_summary(&finished, started.elapsed().as_secs_f64());
            return Err(error.context(format!("phase \"{name}\" failed")));
        }
    }
    print_summary(&finished, started.elapsed().as_secs_f64());
    Ok(())
}

fn print_summary(phases: &[(&str, bool, f64)], total: f64) {
    println!("\nxtask test summary");
    for (name, ok, seconds) in phases {
        println!(
            "  {:<36} {:<6} {:>7.1} s",
            name,
            if *ok { "ok" } else { "FAILED" },
            seconds
        );
    }
    println!("  {:<36} {:<6} {:>7.1} s", "total", "", total);
}
