//! `cargo xtask fuzz`: the coverage-guided fuzz targets in `fuzz/` (cargo-fuzz, libFuzzer), one
//! after another, each for a fixed time, from seeds the run gathers; a table of what ran goes to
//! the terminal and to `target/fuzz-report.md`. A crash stops nothing else: every target runs,
//! and the run fails at the end naming each crash and the input that makes it.
//!
//! The targets need a nightly compiler and cargo-fuzz; both are installed on first use (into
//! rustup and the project's tools folder), not by `bootstrap`, so `dev` and `build` stay lean.
//! `cargo xtask test` runs every target briefly (`TEST_SECONDS` each).

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::{project_root, status_line, tools};

pub const USAGE: &str = "usage: cargo xtask fuzz [--seconds N] [--only TARGET[,TARGET…]]
  --seconds N   how long each target runs (default 60)
  --only …      run only these targets (see fuzz/Cargo.toml)";

/// Every target, in the order they run; `fuzz/Cargo.toml` declares the same (a test checks).
pub const TARGETS: [&str; 9] = [
    "zip",
    "bundle",
    "maic",
    "sse",
    "ndjson",
    "agent_reply",
    "director_reply",
    "course_json",
    "json_repair",
];

/// Seconds per target inside `cargo xtask test`: nine targets in about a minute and a half.
pub const TEST_SECONDS: u64 = 10;

const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// Repository files that make good seeds beyond `fuzz/seeds/<target>/`: real courses for the
/// course readers (a bare course file is also a valid bundle input) and real OpenMAIC
/// classrooms for its importer (read as the manifest).
const REPO_SEEDS: &[(&str, &[&str])] = &[
    (
        "course_json",
        &[
            "crates/course/tests/fixtures/photosynthesis.json",
            "public/courses/photosynthesis-zh.json",
            "public/courses/transformer-en.json",
            "tests/e2e/fixtures/scene-kinds.json",
        ],
    ),
    (
        "bundle",
        &[
            "crates/course/tests/fixtures/photosynthesis.json",
            "tests/e2e/fixtures/scene-kinds.json",
        ],
    ),
    (
        "maic",
        &[
            "crates/export/fixtures/maic/photosynthesis-classroom.json",
            "crates/export/fixtures/maic/every-kind-course.json",
        ],
    ),
];

#[derive(Debug, PartialEq)]
pub struct Options {
    pub seconds: u64,
    pub only: Vec<String>,
}

pub fn parse_args(args: &[String]) -> Result<Options> {
    let mut options = Options {
        seconds: 60,
        only: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .with_context(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--seconds" => {
                options.seconds =
                    value()?.parse().ok().filter(|&n| n > 0).with_context(|| {
                        format!("--seconds takes a whole number above 0\n{USAGE}")
                    })?
            }
            "--only" => {
                for name in value()?.split(',').filter(|n| !n.is_empty()) {
                    if !TARGETS.contains(&name) {
                        bail!(
                            "no fuzz target {name:?}; the targets: {}",
                            TARGETS.join(", ")
                        );
                    }
                    options.only.push(name.to_string());
                }
            }
            other => bail!("unknown option {other:?}\n{USAGE}"),
        }
    }
    Ok(options)
}

/// What one target's run came to.
#[derive(Debug, PartialEq)]
pub struct Outcome {
    pub target: String,
    pub executions: Option<u64>,
    pub seconds: f64,
    pub corpus: usize,
    /// The input that crashed it, when it did.
    pub crash: Option<PathBuf>,
}

/// libFuzzer's closing line, `Done 123456 runs in 60 second(s)`: the executions.
pub fn executions(log: &str) -> Option<u64> {
    log.lines().rev().find_map(|line| {
        let rest = line.trim().strip_prefix("Done ")?;
        let (count, rest) = rest.split_once(' ')?;
        rest.starts_with("runs in").then(|| count.parse().ok())?
    })
}

/// The crash input libFuzzer wrote, from its `Test unit written to PATH` line.
pub fn crash_input(log: &str) -> Option<PathBuf> {
    const MARK: &str = "Test unit written to ";
    log.lines().find_map(|line| {
        let at = line.find(MARK)?;
        Some(PathBuf::from(line[at + MARK.len()..].trim()))
    })
}

fn work_dir() -> PathBuf {
    project_root().join("target").join("fuzz")
}

/// The nightly toolchain and cargo-fuzz, installed when missing.
pub fn bootstrap() -> Result<()> {
    let nightly = Command::new("rustup")
        .args(["run", "nightly", "rustc", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !nightly {
        status_line("fuzz: rustup toolchain install nightly --profile minimal (takes a minute)");
        crate::run(Command::new("rustup").args([
            "toolchain",
            "install",
            "nightly",
            "--profile",
            "minimal",
        ]))
        .context("installing the nightly toolchain the fuzz targets need")?;
    }
    tools::cargo_tool(
        "cargo-fuzz",
        "cargo-fuzz",
        CARGO_FUZZ_VERSION,
        &["--locked", &format!("cargo-fuzz@{CARGO_FUZZ_VERSION}")],
    )
}

/// `target/fuzz/corpus/<target>`, holding the committed seeds and the repository's files for
/// it, and whatever earlier runs found.
fn corpus(target: &str) -> Result<PathBuf> {
    let root = project_root();
    let dir = work_dir().join("corpus").join(target);
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let seeds = root.join("fuzz").join("seeds").join(target);
    let mut files: Vec<PathBuf> = match fs::read_dir(&seeds) {
        Ok(entries) => entries.flatten().map(|e| e.path()).collect(),
        Err(_) => Vec::new(),
    };
    for (name, paths) in REPO_SEEDS {
        if *name == target {
            files.extend(paths.iter().map(|p| root.join(p)));
        }
    }
    for file in files.iter().filter(|f| f.is_file()) {
        let name = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .to_string_lossy()
            .replace(['/', '\\'], "_");
        fs::copy(file, dir.join(format!("seed-{name}")))
            .with_context(|| format!("copying the seed {}", file.display()))?;
    }
    Ok(dir)
}

fn fuzz_command() -> Result<Command> {
    let mut cmd = Command::new("cargo");
    cmd.args(["+nightly", "fuzz"])
        .current_dir(project_root())
        .env("PATH", tools::tool_path()?);
    Ok(cmd)
}

/// The build flags of every target: no sanitizer (the code under test is safe Rust, and the
/// time goes to executions instead), with debug assertions and overflow checks on.
const BUILD_FLAGS: [&str; 7] = [
    "--fuzz-dir",
    "fuzz",
    "--target-dir",
    "target/fuzz/build",
    "--sanitizer",
    "none",
    "--debug-assertions",
];

fn run_target(target: &str, seconds: u64) -> Result<Outcome> {
    let corpus = corpus(target)?;
    let artifacts = work_dir().join("artifacts").join(target);
    fs::create_dir_all(&artifacts)?;
    let log_path = work_dir().join(format!("{target}.log"));
    let log = fs::File::create(&log_path)?;
    status_line(&format!("fuzz: {target} for {seconds} s"));
    let started = Instant::now();
    let status = fuzz_command()?
        .arg("run")
        .args(BUILD_FLAGS)
        .arg(target)
        .arg(&corpus)
        .arg("--")
        .arg(format!("-max_total_time={seconds}"))
        .arg("-rss_limit_mb=2048")
        .arg("-timeout=10")
        .arg("-max_len=65536")
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .stdout(log.try_clone()?)
        .stderr(log)
        .status()
        .with_context(|| format!("starting cargo fuzz run {target}"))?;
    let text = fs::read_to_string(&log_path).unwrap_or_default();
    let crash = crash_input(&text);
    if !status.success() && crash.is_none() {
        bail!(
            "cargo fuzz run {target} failed ({status}) without a crash input; see {}",
            log_path.display()
        );
    }
    Ok(Outcome {
        target: target.to_string(),
        executions: executions(&text),
        seconds: started.elapsed().as_secs_f64(),
        corpus: fs::read_dir(&corpus).map(|d| d.count()).unwrap_or(0),
        crash,
    })
}

pub fn table(outcomes: &[Outcome], seconds: u64) -> String {
    let mut out = format!(
        "| target | executions in {seconds} s | per second | corpus | result |\n|---|---:|---:|---:|---|\n"
    );
    for o in outcomes {
        let runs = o.executions.map_or("?".to_string(), |n| n.to_string());
        let rate = o.executions.map_or("?".to_string(), |n| {
            format!("{:.0}", n as f64 / seconds as f64)
        });
        let result = match &o.crash {
            Some(path) => format!("CRASH: {}", path.display()),
            None => "no crash".to_string(),
        };
        out.push_str(&format!(
            "| {} | {runs} | {rate} | {} | {result} |\n",
            o.target, o.corpus
        ));
    }
    out
}

pub fn run(options: &Options) -> Result<()> {
    bootstrap()?;
    // The fuzz crate is its own workspace, outside `cargo fmt --all`.
    crate::run(Command::new("cargo").args([
        "fmt",
        "--manifest-path",
        "fuzz/Cargo.toml",
        "--check",
    ]))?;
    let targets: Vec<&str> = if options.only.is_empty() {
        TARGETS.to_vec()
    } else {
        options.only.iter().map(String::as_str).collect()
    };
    status_line("fuzz: building the targets (nightly, debug assertions on)");
    let started = Instant::now();
    crate::run(fuzz_command()?.arg("build").args(BUILD_FLAGS))?;
    let built = started.elapsed().as_secs_f64();
    let mut outcomes = Vec::new();
    for target in targets {
        outcomes.push(run_target(target, options.seconds)?);
    }
    let table = table(&outcomes, options.seconds);
    let report = format!(
        "# Fuzzing\n\nEvery target for {} s, built in {built:.0} s; inputs start from \
         `fuzz/seeds/<target>/` and the repository's courses and classrooms, and grow in \
         `target/fuzz/corpus/<target>/`.\n\n{table}",
        options.seconds
    );
    fs::write(work_dir().join("..").join("fuzz-report.md"), &report)?;
    println!("\n{table}\nfuzz: report in target/fuzz-report.md");
    let crashes: Vec<String> = outcomes
        .iter()
        .filter_map(|o| {
            o.crash.as_ref().map(|c| {
                format!(
                    "{} crashed on {} (replay: cargo +nightly fuzz run --fuzz-dir fuzz {} {})",
                    o.target,
                    c.display(),
                    o.target,
                    c.display()
                )
            })
        })
        .collect();
    if !crashes.is_empty() {
        bail!("{}", crashes.join("\n"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `[[bin]]` names of the fuzz crate's manifest.
    fn declared_targets(manifest: &str) -> Vec<String> {
        manifest
            .split("[[bin]]")
            .skip(1)
            .filter_map(|bin| {
                bin.lines().find_map(|line| {
                    let value = line.trim().strip_prefix("name")?.trim().strip_prefix('=')?;
                    Some(value.trim().trim_matches('"').to_string())
                })
            })
            .collect()
    }

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_fuzz_crate_declares_exactly_the_targets_the_run_knows() {
        let manifest = fs::read_to_string(project_root().join("fuzz/Cargo.toml")).unwrap();
        let mut declared = declared_targets(&manifest);
        declared.sort();
        let mut known: Vec<String> = TARGETS.iter().map(|s| s.to_string()).collect();
        known.sort();
        assert_eq!(declared, known);
        for target in TARGETS {
            let source = project_root().join(format!("fuzz/fuzz_targets/{target}.rs"));
            assert!(source.is_file(), "{} is missing", source.display());
        }
    }

    #[test]
    fn every_target_has_seeds() {
        for target in TARGETS {
            let committed = fs::read_dir(project_root().join("fuzz/seeds").join(target))
                .map(|d| d.count())
                .unwrap_or(0);
            let from_repo = REPO_SEEDS
                .iter()
                .filter(|(name, _)| *name == target)
                .map(|(_, paths)| paths.len())
                .sum::<usize>();
            assert!(committed + from_repo > 0, "{target} has no seeds");
        }
        for (_, paths) in REPO_SEEDS {
            for path in *paths {
                assert!(project_root().join(path).is_file(), "{path} is gone");
            }
        }
    }

    #[test]
    fn the_options_read_seconds_and_targets_and_refuse_the_rest() {
        assert_eq!(
            parse_args(&args(&[])).unwrap(),
            Options {
                seconds: 60,
                only: vec![]
            }
        );
        assert_eq!(
            parse_args(&args(&["--seconds", "5", "--only", "sse,zip"])).unwrap(),
            Options {
                seconds: 5,
                only: vec!["sse".into(), "zip".into()]
            }
        );
        assert!(parse_args(&args(&["--seconds", "0"])).is_err());
        assert!(parse_args(&args(&["--seconds"])).is_err());
        assert!(parse_args(&args(&["--only", "pdf"])).is_err());
        assert!(parse_args(&args(&["--fast"])).is_err());
    }

    #[test]
    fn libfuzzer_logs_give_the_executions_and_the_crash_input() {
        let done = "#2097152\tpulse  cov: 812 ft: 2301 corp: 310/22Kb exec/s: 69905 rss: 88Mb\n\
                    Done 4194304 runs in 61 second(s)\n";
        assert_eq!(executions(done), Some(4194304));
        assert_eq!(crash_input(done), None);
        let crash = "thread '<unnamed>' panicked at fuzz_targets/sse.rs:40:5\n\
                     ==1234== ERROR: libFuzzer: deadly signal\n\
                     artifact_prefix='target/fuzz/artifacts/sse/'; Test unit written to target/fuzz/artifacts/sse/crash-0a1b\n";
        assert_eq!(executions(crash), None);
        assert_eq!(
            crash_input(crash),
            Some(PathBuf::from("target/fuzz/artifacts/sse/crash-0a1b"))
        );
    }

    #[test]
    fn the_table_shows_rates_and_names_a_crash() {
        let outcomes = [
            Outcome {
                target: "zip".into(),
                executions: Some(600),
                seconds: 61.0,
                corpus: 12,
                crash: None,
            },
            Outcome {
                target: "sse".into(),
                executions: None,
                seconds: 3.0,
                corpus: 4,
                crash: Some(PathBuf::from("a/crash-1")),
            },
        ];
        let table = table(&outcomes, 60);
        assert!(
            table.contains("| zip | 600 | 10 | 12 | no crash |"),
            "{table}"
        );
        assert!(
            table.contains("| sse | ? | ? | 4 | CRASH: a/crash-1 |"),
            "{table}"
        );
    }
}
