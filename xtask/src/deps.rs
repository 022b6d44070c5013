//! The dependency rule of ARCHITECTURE.md, checked on the real graph: no core crate depends on
//! the browser or UI stack. Only storage's IndexedDB adapter, compiled for wasm32 alone, may use
//! web-sys (never leptos or gloo).

use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::project_root;

pub const CORE_CRATES: &[&str] = &[
    "aula-course",
    "aula-timeline",
    "aula-player",
    "aula-providers",
    "aula-director",
    "aula-generation",
    "aula-storage",
    "aula-export",
    "aula-render",
];

const BROWSER_STACK: &[&str] = &["web-sys", "js-sys", "wasm-bindgen", "leptos", "gloo"];
const UI_STACK: &[&str] = &["leptos", "gloo"];

/// Names in `cargo tree --prefix none` output that belong to a forbidden family
/// (`leptos` also forbids `leptos_router`, `gloo` forbids `gloo-net`, ...).
pub fn forbidden_in(tree: &str, families: &[&str]) -> Vec<String> {
    let mut found: Vec<String> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| {
            families.iter().any(|family| {
                *name == *family
                    || name
                        .strip_prefix(family)
                        .is_some_and(|rest| rest.starts_with('-') || rest.starts_with('_'))
            })
        })
        .map(str::to_owned)
        .collect();
    found.sort();
    found.dedup();
    found
}

fn tree(package: &str, target: Option<&str>) -> Result<String> {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args([
        "tree", "--quiet", "--prefix", "none", "--edges", "normal", "-p", package,
    ])
    .current_dir(project_root());
    if let Some(target) = target {
        cmd.args(["--target", target]);
    }
    let output = cmd.output().context("running cargo tree")?;
    if !output.status.success() {
        bail!(
            "cargo tree -p {package} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8(output.stdout)?)
}

pub fn check() -> Result<()> {
    let mut problems = Vec::new();
    for &package in CORE_CRATES {
        let host = forbidden_in(&tree(package, None)?, BROWSER_STACK);
        if !host.is_empty() {
            problems.push(format!("{package} (host) depends on {}", host.join(", ")));
        }
        let families = if package == "aula-storage" {
            UI_STACK
        } else {
            BROWSER_STACK
        };
        let wasm = forbidden_in(&tree(package, Some("wasm32-unknown-unknown"))?, families);
        if !wasm.is_empty() {
            problems.push(format!("{package} (wasm32) depends on {}", wasm.join(", ")));
        }
    }
    if !problems.is_empty() {
        bail!(
            "core crates must not depend on the browser/UI stack:\n  {}",
            problems.join("\n  ")
        );
    }
    println!(
        "dependency rule holds for {} core crates (host and wasm32)",
        CORE_CRATES.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_in_finds_families_but_not_lookalikes() {
        let tree = "aula-app v0.1.0\nleptos_router v0.8.17\ngloo-net v0.7.0\nserde v1.0.0\nweb-sys v0.3.107\nwebsys-lookalike v1.0.0\n";
        assert_eq!(
            forbidden_in(tree, BROWSER_STACK),
            vec!["gloo-net", "leptos_router", "web-sys"]
        );
        assert!(forbidden_in("serde v1\nthiserror v2\n", BROWSER_STACK).is_empty());
    }
}
