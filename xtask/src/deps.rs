//! The dependency rules of ARCHITECTURE.md, checked on the real graph:
//! - no core crate depends on the browser or UI stack; only storage's IndexedDB adapter,
//!   compiled for wasm32 alone, may use web-sys (never leptos or gloo);
//! - the crate map's arrows (the block between `<!-- map:begin -->` and `<!-- map:end -->`)
//!   are exactly our crates' dependencies on each other in `cargo metadata`, so the map cannot
//!   drift from the code.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::project_root;

pub const CORE_CRATES: &[&str] = &[
    "aula-text",
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

/// Each crate's dependencies on our own crates: (normal and build, dev only), by short name
/// (`course`, not `aula-course`).
pub type Arrows = BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>;

const MAP_BEGIN: &str = "<!-- map:begin -->";
const MAP_END: &str = "<!-- map:end -->";

fn short_name(package: &str) -> &str {
    package.strip_prefix("aula-").unwrap_or(package)
}

/// The arrows the map draws: one line per crate, `name → dep dep (dev: dep)`, or
/// `name → (nothing of ours)`.
pub fn drawn_arrows(doc: &str) -> Result<Arrows, String> {
    let start = doc
        .find(MAP_BEGIN)
        .ok_or_else(|| format!("ARCHITECTURE.md has no {MAP_BEGIN} line"))?;
    let block = &doc[start + MAP_BEGIN.len()..];
    let block = &block[..block
        .find(MAP_END)
        .ok_or_else(|| format!("ARCHITECTURE.md has no {MAP_END} line"))?];
    let mut arrows = Arrows::new();
    for line in block.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (name, targets) = line
            .split_once('→')
            .ok_or_else(|| format!("a map line without an arrow: {line:?}"))?;
        let name = name.trim().to_string();
        let targets = targets.trim();
        let (normal, dev) = if targets == "(nothing of ours)" {
            ("", "")
        } else {
            match targets.split_once("(dev:") {
                Some((normal, dev)) => (
                    normal,
                    dev.strip_suffix(')')
                        .ok_or_else(|| format!("an unclosed (dev: …) in {line:?}"))?,
                ),
                None => (targets, ""),
            }
        };
        let set = |list: &str| list.split_whitespace().map(str::to_string).collect();
        if arrows
            .insert(name.clone(), (set(normal), set(dev)))
            .is_some()
        {
            return Err(format!("the map draws {name} twice"));
        }
    }
    Ok(arrows)
}

/// The arrows `cargo metadata --no-deps` gives between the workspace's crates.
pub fn actual_arrows(metadata: &serde_json::Value) -> Arrows {
    let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
    let ours: BTreeSet<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    let mut arrows = Arrows::new();
    for package in &packages {
        let Some(name) = package["name"].as_str() else {
            continue;
        };
        let (mut normal, mut dev) = (BTreeSet::new(), BTreeSet::new());
        for dep in package["dependencies"].as_array().into_iter().flatten() {
            let Some(dep_name) = dep["name"].as_str().filter(|d| ours.contains(d)) else {
                continue;
            };
            let short = short_name(dep_name).to_string();
            if dep["kind"].as_str() == Some("dev") {
                dev.insert(short);
            } else {
                normal.insert(short);
            }
        }
        // A crate that is both a normal and a dev dependency is drawn once, as normal.
        dev.retain(|d| !normal.contains(d));
        arrows.insert(short_name(name).to_string(), (normal, dev));
    }
    arrows
}

/// What the map draws that the code does not have, and the other way round.
pub fn map_differences(drawn: &Arrows, actual: &Arrows) -> Vec<String> {
    let mut problems = Vec::new();
    let names: BTreeSet<&String> = drawn.keys().chain(actual.keys()).collect();
    for name in names {
        let (Some(map), Some(code)) = (drawn.get(name), actual.get(name)) else {
            problems.push(match drawn.get(name) {
                None => format!("{name} is a workspace crate the map does not draw"),
                Some(_) => format!("the map draws {name}, which is not a workspace crate"),
            });
            continue;
        };
        for (kind, map, code) in [("", &map.0, &code.0), ("dev-", &map.1, &code.1)] {
            for dep in code.difference(map) {
                problems.push(format!(
                    "{name} has a {kind}dependency on {dep} that the map does not draw"
                ));
            }
            for dep in map.difference(code) {
                problems.push(format!(
                    "the map draws {name} → {dep} ({kind}dependency), which Cargo.toml does not have"
                ));
            }
        }
    }
    problems
}

/// Holds ARCHITECTURE.md's crate map against `cargo metadata`.
pub fn check_map() -> Result<()> {
    let doc = std::fs::read_to_string(project_root().join("ARCHITECTURE.md"))
        .context("reading ARCHITECTURE.md")?;
    let drawn = drawn_arrows(&doc).map_err(anyhow::Error::msg)?;
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "metadata",
            "--no-deps",
            "--offline",
            "--format-version",
            "1",
        ])
        .current_dir(project_root())
        .output()
        .context("running cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).context("reading cargo metadata")?;
    let problems = map_differences(&drawn, &actual_arrows(&metadata));
    if !problems.is_empty() {
        bail!(
            "ARCHITECTURE.md's crate map differs from the code; fix the map or the dependency:\n  {}",
            problems.join("\n  ")
        );
    }
    println!(
        "the crate map matches cargo metadata ({} crates)",
        drawn.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAP: &str = "text\n<!-- map:begin -->\napp   → course player (dev: mock)\nplayer → course\ncourse → (nothing of ours)\nmock → (dev: course)\n<!-- map:end -->\nmore";

    fn metadata(edges: &[(&str, &str, Option<&str>)]) -> serde_json::Value {
        let names = ["aula-app", "aula-player", "aula-course", "aula-mock"];
        serde_json::json!({"packages": names.iter().map(|name| serde_json::json!({
            "name": name,
            "dependencies": edges.iter().filter(|(from, _, _)| from == name).map(|(_, to, kind)| {
                serde_json::json!({"name": to, "kind": kind})
            }).collect::<Vec<_>>(),
        })).collect::<Vec<_>>()})
    }

    const CODE: &[(&str, &str, Option<&str>)] = &[
        ("aula-app", "aula-course", None),
        ("aula-app", "aula-player", None),
        ("aula-app", "aula-mock", Some("dev")),
        ("aula-app", "serde", None),
        ("aula-player", "aula-course", None),
        ("aula-player", "aula-course", Some("dev")),
        ("aula-mock", "aula-course", Some("dev")),
    ];

    #[test]
    fn the_map_agrees_with_a_graph_that_has_its_arrows() {
        let drawn = drawn_arrows(MAP).unwrap();
        assert_eq!(drawn["app"].1, BTreeSet::from(["mock".to_string()]));
        assert!(drawn["course"].0.is_empty());
        assert_eq!(
            map_differences(&drawn, &actual_arrows(&metadata(CODE))),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_dependency_the_map_does_not_draw_fails_the_check_by_name() {
        let mut code = CODE.to_vec();
        code.push(("aula-course", "aula-player", None));
        code.push(("aula-player", "aula-mock", Some("dev")));
        let problems = map_differences(
            &drawn_arrows(MAP).unwrap(),
            &actual_arrows(&metadata(&code)),
        );
        assert_eq!(
            problems,
            [
                "course has a dependency on player that the map does not draw",
                "player has a dev-dependency on mock that the map does not draw",
            ]
        );
    }

    #[test]
    fn an_arrow_or_crate_the_code_lacks_fails_the_check_too() {
        let code: Vec<_> = CODE
            .iter()
            .copied()
            .filter(|e| e.1 != "aula-player")
            .collect();
        let mut drawn = drawn_arrows(MAP).unwrap();
        drawn.insert("ghost".into(), Default::default());
        assert_eq!(
            map_differences(&drawn, &actual_arrows(&metadata(&code))),
            [
                "the map draws app → player (dependency), which Cargo.toml does not have",
                "the map draws ghost, which is not a workspace crate",
            ]
        );
        assert!(drawn_arrows("no map here").is_err());
        assert!(drawn_arrows("<!-- map:begin -->\na b\n<!-- map:end -->").is_err());
    }

    #[test]
    fn the_architecture_documents_map_matches_cargo_metadata() {
        let doc = std::fs::read_to_string(project_root().join("ARCHITECTURE.md")).unwrap();
        let drawn = drawn_arrows(&doc).unwrap();
        for name in ["app", "worker", "files", "course", "xtask", "mock-llm"] {
            assert!(drawn.contains_key(name), "{name} missing from the map");
        }
        check_map().unwrap();
    }

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
