//! `cargo xtask bench`: every benchmark, and a short markdown report of their summary lines.
//!
//! Each bench prints one summary line per comparison, `<area>: <what> = …; baseline …; ratio R`,
//! measured against a baseline in the same run (never an absolute time to compare across runs).

use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::project_root;

/// The crates with criterion benches.
const BENCHED: &[&str] = &["aula-timeline", "aula-director"];

/// The summary lines of a bench's output: `area: … ratio …`.
pub fn summary_lines(output: &str) -> Vec<String> {
    output
        .lines()
        .map(str::trim)
        .filter(|line| line.contains(": ") && line.contains("baseline") && line.contains("ratio"))
        .map(str::to_owned)
        .collect()
}

pub fn report_markdown(lines: &[(String, String)]) -> String {
    let mut report = String::from("# Benchmarks\n\n| crate | result |\n|---|---|\n");
    for (package, line) in lines {
        report.push_str(&format!("| {package} | {} |\n", line.replace('|', "\\|")));
    }
    report
}

/// A Playwright timing script against the built page and mock-llm; its summary lines.
fn page_bench(name: &str, script: &str) -> Result<Vec<String>> {
    let output = Command::new("node")
        .arg(script)
        .current_dir(project_root())
        .env("PATH", crate::tools::tool_path()?)
        .env("AULA_DIST", project_root().join("dist"))
        .env("MOCK_LLM_BIN", crate::mock::binary()?)
        .env("CHROMIUM", crate::tools::CHROMIUM)
        .output()
        .with_context(|| format!("running the {name} page bench"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!(
            "the {name} page bench failed:\n{text}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let found = summary_lines(&text);
    if found.is_empty() {
        bail!("the {name} page bench printed no summary line");
    }
    Ok(found)
}

pub fn run() -> Result<()> {
    let mut lines = Vec::new();
    for package in BENCHED {
        let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["bench", "-p", package])
            .current_dir(project_root())
            .output()
            .with_context(|| format!("running the benches of {package}"))?;
        let text = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            bail!(
                "cargo bench -p {package} failed:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let found = summary_lines(&text);
        if found.is_empty() {
            bail!("{package}'s benches printed no summary line (`…; baseline …; ratio …`)");
        }
        lines.extend(found.into_iter().map(|l| (package.to_string(), l)));
    }
    lines.extend(
        page_bench("generation", "tests/bench/generation.bench.mjs")?
            .into_iter()
            .map(|l| ("page (generation)".to_string(), l)),
    );
    // Cold loads of the home page and a sample's classroom, against the same build unsplit (the
    // player in one module that it carries for exports), or AULA_BASELINE_DIST when it is set.
    lines.extend(
        page_bench("page-load", "tests/bench/page-load.bench.mjs")?
            .into_iter()
            .map(|l| ("page (load)".to_string(), l)),
    );
    let report = report_markdown(&lines);
    let path = project_root().join("target").join("bench-report.md");
    std::fs::write(&path, &report).with_context(|| format!("writing {}", path.display()))?;
    print!("{report}");
    println!("\nwritten to {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_lines_keep_only_comparisons_with_a_baseline_and_ratio() {
        let output = "Benchmarking resolve\nresolve time: [7.9 ms 8.0 ms 8.1 ms]\n\
                      timeline: resolve 10000 actions = 7993 µs; baseline (clone the actions) 848 µs; ratio 9.43\n";
        assert_eq!(
            summary_lines(output),
            vec!["timeline: resolve 10000 actions = 7993 µs; baseline (clone the actions) 848 µs; ratio 9.43"]
        );
        assert!(summary_lines("resolve time: [7.9 ms 8.0 ms]").is_empty());
    }

    #[test]
    fn report_is_a_markdown_table_row_per_line() {
        let report = report_markdown(&[(
            "aula-timeline".into(),
            "timeline: a | b; baseline 1; ratio 2".into(),
        )]);
        assert!(report.contains("| aula-timeline | timeline: a \\| b; baseline 1; ratio 2 |"));
    }
}
