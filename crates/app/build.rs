//! Generates the string tables of the `i18n` module from `locales/*.json`, after checking that
//! every locale has exactly the keys of the default one (a missing translation fails the build).
//! In a split build (`--cfg aula_split`, from `cargo xtask build`) it sets `aula_lazy`, which
//! makes the `#[lazy]` parts split points, and links the page with the relocations the splitter
//! reads (`xtask/src/split.rs`); only the page, not the workers. The `whole` feature (the player
//! that exports carry, built by the same step) keeps the page in one module.
use std::collections::BTreeMap;
use std::error::Error;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The default locale first; the generated `Locale` enum follows this order.
const LOCALES: &[&str] = &["en", "zh"];

fn strings(locale: &str) -> Result<BTreeMap<String, String>, Box<dyn Error>> {
    let path = format!("locales/{locale}.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let map: BTreeMap<String, serde_json::Value> =
        serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    map.into_iter()
        .map(|(key, value)| match value {
            serde_json::Value::String(s) => Ok((key, s)),
            _ => Err(format!("{path}: `{key}` must be a string").into()),
        })
        .collect()
}

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=locales");
    println!("cargo::rustc-check-cfg=cfg(aula_lazy)");
    if std::env::var_os("CARGO_CFG_AULA_SPLIT").is_some()
        && std::env::var_os("CARGO_FEATURE_WHOLE").is_none()
    {
        println!("cargo::rustc-cfg=aula_lazy");
        println!("cargo::rustc-link-arg-bin=aula-app=--emit-relocs");
    }
    let tables: Vec<BTreeMap<String, String>> = LOCALES
        .iter()
        .map(|l| strings(l))
        .collect::<Result<_, _>>()?;
    let reference = &tables[0];
    // Every other locale is fetched from dist, where index.html must have Trunk copy it.
    println!("cargo::rerun-if-changed=../../web/index.html");
    let index = std::fs::read_to_string("../../web/index.html")?;
    for locale in &LOCALES[1..] {
        let copied =
            format!("href=\"../crates/app/locales/{locale}.json\" data-target-path=\"locales\"");
        if !index.contains(&copied) {
            return Err(format!("web/index.html must copy locales/{locale}.json: <link data-trunk rel=\"copy-file\" {copied} />").into());
        }
    }
    for (locale, table) in LOCALES.iter().zip(&tables).skip(1) {
        let missing: Vec<_> = reference
            .keys()
            .filter(|k| !table.contains_key(*k))
            .collect();
        let extra: Vec<_> = table
            .keys()
            .filter(|k| !reference.contains_key(*k))
            .collect();
        if !missing.is_empty() || !extra.is_empty() {
            return Err(format!(
                "locales/{locale}.json differs from {}.json: missing {missing:?}, extra {extra:?}",
                LOCALES[0]
            )
            .into());
        }
    }
    let mut out = String::new();
    writeln!(
        out,
        "/// One translatable text of the app (the keys of `locales/*.json`)."
    )?;
    writeln!(out, "#[allow(non_camel_case_types, dead_code)]\n#[derive(Debug, Clone, Copy, PartialEq, Eq)]\npub enum Key {{")?;
    for key in reference.keys() {
        writeln!(out, "    {key},")?;
    }
    writeln!(out, "}}\n")?;
    writeln!(out, "/// A language the app is translated into.")?;
    writeln!(out, "#[allow(non_camel_case_types)]\n#[derive(Debug, Clone, Copy, PartialEq, Eq)]\npub enum Locale {{")?;
    for locale in LOCALES {
        writeln!(out, "    {locale},")?;
    }
    writeln!(out, "}}\n")?;
    writeln!(
        out,
        "const LOCALE_NAMES: [&str; {}] = {LOCALES:?};",
        LOCALES.len()
    )?;
    writeln!(
        out,
        "const ALL_LOCALES: [Locale; {}] = [{}];",
        LOCALES.len(),
        LOCALES
            .iter()
            .map(|l| format!("Locale::{l}"))
            .collect::<Vec<_>>()
            .join(", ")
    )?;
    // Only the default locale's texts are in the page; the others are fetched on first use as
    // their `locales/<name>.json` (copied into dist by index.html), read into key order.
    writeln!(out, "const KEY_COUNT: usize = {};", reference.len())?;
    writeln!(out, "static DEFAULT_TEXTS: [&str; KEY_COUNT] = [")?;
    for value in reference.values() {
        writeln!(out, "    {value:?},")?;
    }
    writeln!(out, "];")?;
    let path =
        PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?).join("strings.rs");
    std::fs::write(path, out)?;
    Ok(())
}
