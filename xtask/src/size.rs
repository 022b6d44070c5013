//! `cargo xtask size`: what a learner downloads, gzip-compressed, against the budget.

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use flate2::write::GzEncoder;
use flate2::Compression;

/// wasm + js + css, gzip, in bytes. The product goal is 400 KB; this is the hard ceiling.
pub const BUDGET_BYTES: u64 = 500 * 1024;

pub fn gzip_len(bytes: &[u8]) -> Result<u64> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
    encoder.write_all(bytes)?;
    Ok(encoder.finish()?.len() as u64)
}

#[derive(Debug, Default, PartialEq)]
pub struct BundleSize {
    pub wasm: u64,
    pub js: u64,
    pub css: u64,
}

impl BundleSize {
    pub fn total(&self) -> u64 {
        self.wasm + self.js + self.css
    }
}

/// Sums the gzip sizes of the bundle's files by kind.
pub fn measure(dist: &Path) -> Result<BundleSize> {
    let mut size = BundleSize::default();
    let entries = std::fs::read_dir(dist)
        .with_context(|| format!("reading {} (run `cargo xtask build` first)", dist.display()))?;
    for entry in entries {
        let path = entry?.path();
        let slot = match path.extension().and_then(|e| e.to_str()) {
            Some("wasm") => &mut size.wasm,
            Some("js") => &mut size.js,
            Some("css") => &mut size.css,
            _ => continue,
        };
        *slot += gzip_len(&std::fs::read(&path)?)?;
    }
    if size.wasm == 0 {
        bail!(
            "no .wasm file in {}; the release build did not produce the app",
            dist.display()
        );
    }
    Ok(size)
}

fn kb(bytes: u64) -> String {
    format!("{:.1} KB", bytes as f64 / 1024.0)
}

pub fn report(dist: &Path) -> Result<BundleSize> {
    let size = measure(dist)?;
    println!("bundle (gzip -9)");
    println!("  wasm   {:>10}", kb(size.wasm));
    println!("  js     {:>10}", kb(size.js));
    println!("  css    {:>10}", kb(size.css));
    println!(
        "  total  {:>10}   budget {} ({:.0}% used)",
        kb(size.total()),
        kb(BUDGET_BYTES),
        100.0 * size.total() as f64 / BUDGET_BYTES as f64
    );
    if size.total() > BUDGET_BYTES {
        bail!(
            "the bundle is {} gzip, over the {} budget",
            kb(size.total()),
            kb(BUDGET_BYTES)
        );
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measure_sums_each_kind_and_ignores_other_files() {
        let dir = std::env::temp_dir().join(format!("aula-size-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let wasm = vec![7u8; 10_000];
        std::fs::write(dir.join("app_bg.wasm"), &wasm).unwrap();
        std::fs::write(dir.join("app.js"), "export function f() { return 1; }").unwrap();
        std::fs::write(dir.join("index.html"), "<html></html>").unwrap();
        let size = measure(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(size.wasm, gzip_len(&wasm).unwrap());
        assert!(size.js > 0);
        assert_eq!(size.css, 0);
        assert!(size.wasm < 10_000, "repetitive bytes must compress");
    }

    #[test]
    fn measure_fails_without_a_wasm_file() {
        let dir = std::env::temp_dir().join(format!("aula-size-empty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let result = measure(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(result.is_err());
    }
}
