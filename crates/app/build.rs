//! Generates the typed `i18n` module from `locales/*.json` (only for the browser build), after
//! checking that every locale has exactly the keys of the default one.
use leptos_i18n_build::{Config, TranslationsInfos};
use std::collections::BTreeSet;
use std::error::Error;
use std::path::PathBuf;

const DEFAULT_LOCALE: &str = "en";
const OTHER_LOCALES: &[&str] = &["zh"];

fn keys(locale: &str) -> Result<BTreeSet<String>, Box<dyn Error>> {
    let path = format!("locales/{locale}.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    Ok(map.keys().cloned().collect())
}

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=Cargo.toml");
    println!("cargo::rerun-if-changed=locales");
    let reference = keys(DEFAULT_LOCALE)?;
    for locale in OTHER_LOCALES {
        let found = keys(locale)?;
        let missing: Vec<_> = reference.difference(&found).collect();
        let extra: Vec<_> = found.difference(&reference).collect();
        if !missing.is_empty() || !extra.is_empty() {
            return Err(format!(
                "locales/{locale}.json differs from {DEFAULT_LOCALE}.json: missing {missing:?}, extra {extra:?}"
            )
            .into());
        }
    }
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("wasm32") {
        return Ok(());
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?).join("i18n");
    let mut config = Config::new(DEFAULT_LOCALE)?;
    for locale in OTHER_LOCALES {
        config = config.add_locale(locale)?;
    }
    let infos = TranslationsInfos::parse(config)?;
    infos.emit_diagnostics();
    infos.rerun_if_locales_changed();
    infos.generate_i18n_module(out)?;
    Ok(())
}
