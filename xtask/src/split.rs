//! `cargo xtask split-page <staging dir>`: splits the page's wasm so that what only some screens
//! need loads when they are first opened (issue 18). Run by `web/precache.mjs` (Trunk's
//! post-build hook) in a release build, before it lists the app shell.
//!
//! Leptos's `#[lazy]` (`cfg_attr(aula_lazy, …)`: the app's build script sets `aula_lazy` when
//! `cargo xtask build` passes the `aula_split` cfg) marks a function as a split point; `wasm_split_cli_support` (the splitter made for it) cuts the module that rustc
//! linked with `--emit-relocs` into the main module and one wasm chunk per split point, plus a
//! small js module that fetches and instantiates a chunk against the main module's memory and
//! table. Trunk has already run wasm-bindgen and wasm-opt on the unsplit module; this step runs
//! them again the way a split module needs (`--keep-lld-exports`, so the chunks find what they
//! import) and writes over Trunk's js and wasm under the same names, with index.html's integrity
//! updated. Chunks and the loader are named by a hash of their content (`aula-split-….wasm`,
//! `aula-split-….js`); `split-parts.json` says which chunks each part loads (for
//! `cargo xtask size`).
//!
//! A lazy call whose chunk cannot be fetched aborts the page (wasm-split's loader panics), so
//! every chunk is precached by the service worker. The same step builds the page whole (the
//! app's `whole` feature, no split points) as the player that exports carry, since a SCORM
//! package or a file opened from disk has no chunks to fetch: `aula-player-….js` and `…_bg.wasm`,
//! also the baseline of the page-load bench.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::project_root;

/// The cfg that turns `#[lazy]` on in the app (without it a lazy view is an ordinary function).
pub const SPLIT_CFG: &str = "aula_split";

/// What `cargo xtask build` passes to rustc for the release build's wasm: the workspace's own
/// flags (`.cargo/config.toml`'s, which this replaces) and the split cfg. With the cfg, the app's
/// build script links the page (and only the page) with the relocations the splitter reads.
pub fn release_rustflags() -> String {
    format!("--cfg erase_components --cfg {SPLIT_CFG}")
}

/// A short hash of `bytes`, 16 hex digits, for file names.
fn content_hash(bytes: &[u8]) -> String {
    // FNV-1a, 64 bits: names only need to change with the content, not resist an attacker
    // (index.html's integrity and the service worker's version cover the files' content).
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// A name for `bytes` with a short content hash: `aula-split-<16 hex>.<ext>`.
pub fn hashed_name(bytes: &[u8], ext: &str) -> String {
    format!("aula-split-{}.{ext}", content_hash(bytes))
}

/// Written beside the chunks: which chunks each lazy part loads, `{"settings_view":
/// ["aula-split-….wasm", …], …}`, for `cargo xtask size` to hold each part to its budget.
pub const PARTS_FILE: &str = "split-parts.json";

/// The parts by name (the split point's name without the hash the macro adds), each with the
/// hashed names of the chunks it loads.
fn parts_json(
    prefetch: &std::collections::HashMap<String, Vec<String>>,
    renamed: &std::collections::HashMap<String, String>,
) -> Result<String> {
    let mut parts = std::collections::BTreeMap::new();
    for (split, stems) in prefetch {
        let name = match split.rsplit_once('_') {
            Some((name, hash)) if hash.bytes().all(|b| b.is_ascii_digit()) => name,
            _ => split.as_str(),
        };
        let mut chunks = stems
            .iter()
            .map(|stem| {
                renamed.get(stem).cloned().with_context(|| {
                    format!("the part {split} loads {stem}, which was not written")
                })
            })
            .collect::<Result<Vec<_>>>()?;
        chunks.sort();
        let name = if parts.contains_key(name) {
            split.as_str()
        } else {
            name
        };
        parts.insert(name.to_string(), chunks);
    }
    Ok(serde_json::to_string_pretty(&parts)? + "\n")
}

/// The loader, changed so that a chunk it cannot fetch (a newer deployment replaced it, the
/// network went away before the service worker held it) reloads the page once instead of
/// handing the failure to the wasm side, which would abort the whole page. The reload loads the
/// current build, or the cached one offline; a second failure in the same tab goes through.
fn reload_on_failure(loader: &str) -> Result<String> {
    const FINALLY: &str =
        "        } finally {\n            const sharedImports = getSharedImports();";
    const SUCCESS: &str = "            success = true;\n";
    if !loader.contains(FINALLY) || !loader.contains(SUCCESS) {
        bail!("the split loader's callback is not the one split.rs knows; see reload_on_failure");
    }
    Ok(loader
        .replacen(
            SUCCESS,
            "            success = true;\n            aulaReloaded(false);\n",
            1,
        )
        .replacen(
            FINALLY,
            "        }\n        if (!success && aulaReloaded(true)) return;\n        {\n            const sharedImports = getSharedImports();",
            1,
        )
        + "function aulaReloaded(failed) {\n    const key = \"aula.chunk-reload\";\n    try {\n        if (!failed) return void sessionStorage.removeItem(key);\n        if (sessionStorage.getItem(key)) return false;\n        sessionStorage.setItem(key, \"1\");\n    } catch {\n        return false;\n    }\n    location.reload();\n    return true;\n}\n")
}

/// Whether a linked module has split points at all (a build without the cfg has none).
pub fn has_split_points(wasm: &[u8]) -> bool {
    const MARK: &[u8] = b"__wasm_split_00";
    wasm.windows(MARK.len()).any(|w| w == MARK)
}

fn linked_wasm() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| project_root().join("target"));
    target
        .join(crate::tools::WASM_TARGET)
        .join("release")
        .join("aula-app.wasm")
}

/// The staged app js and wasm Trunk wrote: `aula-app-<hash>.js` and `aula-app-<hash>_bg.wasm`.
fn staged_app(staging: &Path) -> Result<(String, String)> {
    let mut js = None;
    for entry in std::fs::read_dir(staging).context("reading the staging folder")? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.starts_with("aula-app-") && name.ends_with(".js") {
            js = Some(name);
        }
    }
    let js = js.context("no aula-app-….js in the staging folder")?;
    let wasm = format!("{}_bg.wasm", js.trim_end_matches(".js"));
    if !staging.join(&wasm).is_file() {
        bail!("{wasm} is missing beside {js}");
    }
    Ok((js, wasm))
}

fn sha384_base64(bytes: &[u8]) -> String {
    use base64::Engine;
    use sha2::Digest;
    base64::engine::general_purpose::STANDARD.encode(sha2::Sha384::digest(bytes))
}

/// Points index.html's `integrity` for `path` at `bytes`.
fn set_integrity(html: &str, path: &str, bytes: &[u8]) -> Result<String> {
    let key = format!("href=\"/{path}\"");
    let at = html
        .find(&key)
        .with_context(|| format!("index.html does not link {path}"))?;
    let tag_end = at + html[at..].find('>').context("unclosed link tag")?;
    let tag = &html[at..tag_end];
    let Some(start) = tag.find("integrity=\"") else {
        return Ok(html.to_string());
    };
    let start = at + start + "integrity=\"".len();
    let end = start + html[start..].find('"').context("unclosed integrity")?;
    Ok(format!(
        "{}sha384-{}{}",
        &html[..start],
        sha384_base64(bytes),
        &html[end..]
    ))
}

/// Has the browser fetch the split loader with the page's module, not after it: the glue
/// imports it, so without this the module graph waits one more round trip before it can run.
/// No `integrity`: the import that uses it has none (an import cannot carry one), and
/// Chromium fetches a module again when the two differ (measured: the loader twice).
fn preload_loader(html: &str, loader: &str) -> Result<String> {
    let head = html.find("</head>").context("index.html has no </head>")?;
    Ok(format!(
        "{}<link rel=\"modulepreload\" href=\"/{loader}\" crossorigin=\"anonymous\">{}",
        &html[..head],
        &html[head..]
    ))
}

pub fn split_page(staging: &Path) -> Result<()> {
    let input_path = linked_wasm();
    let input =
        std::fs::read(&input_path).with_context(|| format!("reading {}", input_path.display()))?;
    if !has_split_points(&input) {
        println!(
            "split-page: {} has no split points; the page stays one module",
            input_path.display()
        );
        return Ok(());
    }
    let (js_name, wasm_name) = staged_app(staging)?;
    let work = project_root().join("target").join("split-page");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let main_out = work.join("main.wasm");
    let main_module = format!("./{js_name}");
    let split = wasm_split_cli_support::transform({
        let mut options = wasm_split_cli_support::Options::new(&input);
        options.output_dir = &work;
        options.main_out_path = &main_out;
        options.main_module = &main_module;
        options.link_name = "./__wasm_split.js";
        options
    })
    .map_err(|e| anyhow::anyhow!("{e:?}"))
    .context("splitting the page's wasm")?;

    // The main module: wasm-bindgen as a split module needs it, then wasm-opt, under Trunk's names.
    let stem = js_name.trim_end_matches(".js");
    crate::run(Command::new("wasm-bindgen").args([
        "--target".as_ref(),
        "web".as_ref(),
        "--keep-lld-exports".as_ref(),
        "--no-typescript".as_ref(),
        "--out-dir".as_ref(),
        work.as_os_str(),
        "--out-name".as_ref(),
        stem.as_ref(),
        main_out.as_os_str(),
    ]))?;
    let wasm_opt = project_root().join("node_modules/.bin/wasm-opt");
    let optimise = |from: &Path, to: &Path| {
        crate::run(
            Command::new(&wasm_opt)
                .arg("-Oz")
                .arg(from)
                .arg("-o")
                .arg(to),
        )
    };
    optimise(
        &work.join(format!("{stem}_bg.wasm")),
        &staging.join(&wasm_name),
    )?;

    // The chunks, hashed, and the loader pointing at their new names.
    let mut loader = reload_on_failure(
        &std::fs::read_to_string(work.join("__wasm_split.js"))
            .context("the splitter wrote no loader")?,
    )?;
    let mut renamed = std::collections::HashMap::new();
    for chunk in &split.split_modules {
        let optimised = work.join("opt.wasm");
        optimise(chunk, &optimised)?;
        let bytes = std::fs::read(&optimised)?;
        let name = hashed_name(&bytes, "wasm");
        std::fs::write(staging.join(&name), &bytes)?;
        let old = chunk.file_name().context("chunk name")?.to_string_lossy();
        loader = loader.replace(&format!("\"./{old}\""), &format!("\"./{name}\""));
        let stem = chunk.file_stem().context("chunk name")?.to_string_lossy();
        renamed.insert(stem.into_owned(), name);
    }
    let parts = parts_json(&split.prefetch_map, &renamed)?;
    std::fs::write(staging.join(PARTS_FILE), parts)?;
    let loader_name = hashed_name(loader.as_bytes(), "js");
    std::fs::write(staging.join(&loader_name), &loader)?;
    let glue = std::fs::read_to_string(work.join(format!("{stem}.js")))?;
    // Only the import statements (one per split point) move to the hashed name: the wasm still
    // imports from the module named "./__wasm_split.js", the key the glue hands the loader in
    // under.
    const IMPORT: &str = "from \"./__wasm_split.js\"";
    if !glue.contains(IMPORT) {
        bail!("the page's glue does not import the split loader");
    }
    let glue = glue.replace(IMPORT, &format!("from \"./{loader_name}\""));
    std::fs::write(staging.join(&js_name), &glue)?;

    let index = staging.join("index.html");
    let mut html = std::fs::read_to_string(&index)?;
    html = set_integrity(&html, &js_name, glue.as_bytes())?;
    html = set_integrity(&html, &wasm_name, &std::fs::read(staging.join(&wasm_name))?)?;
    html = preload_loader(&html, &loader_name)?;
    std::fs::write(&index, html)?;
    println!(
        "split-page: the page's wasm in {} part(s) beside the main module",
        split.split_modules.len()
    );
    build_player(staging, &work)
}

/// The player that exports carry (SCORM packages, the offline page): the page in one module
/// (the app's `whole` feature), so that a file played from disk or from an LMS needs no chunk.
/// Built with the same flags as the page, so only the app itself is compiled again; written as
/// `aula-player-<hash>.js` and `aula-player-<hash>_bg.wasm`, which `web/precache.mjs` lists.
fn build_player(staging: &Path, work: &Path) -> Result<()> {
    let output = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(project_root())
        .args([
            "build",
            "--release",
            "--offline",
            "--target",
            crate::tools::WASM_TARGET,
            "-p",
            "aula-app",
            "--bin",
            "aula-app",
            "--features",
            "whole",
            "--message-format=json-render-diagnostics",
        ])
        .env(
            "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS",
            release_rustflags(),
        )
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("could not start cargo for the player")?;
    if !output.status.success() {
        bail!("building the player ({}) failed", output.status);
    }
    let linked = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "aula-app")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .context("cargo named no aula-app executable for the player")?;
    if has_split_points(&std::fs::read(&linked)?) {
        bail!(
            "the player {} has split points; it must be one module",
            linked.display()
        );
    }
    let bindgen = work.join("player");
    let _ = std::fs::remove_dir_all(&bindgen);
    crate::run(Command::new("wasm-bindgen").args([
        "--target".as_ref(),
        "web".as_ref(),
        "--no-typescript".as_ref(),
        "--out-dir".as_ref(),
        bindgen.as_os_str(),
        "--out-name".as_ref(),
        "aula-player".as_ref(),
        linked.as_os_str(),
    ]))?;
    let optimised = bindgen.join("opt.wasm");
    crate::run(
        Command::new(project_root().join("node_modules/.bin/wasm-opt"))
            .arg("-Oz")
            .arg(bindgen.join("aula-player_bg.wasm"))
            .arg("-o")
            .arg(&optimised),
    )?;
    let wasm = std::fs::read(&optimised)?;
    let js = std::fs::read(bindgen.join("aula-player.js"))?;
    let stem = format!(
        "aula-player-{}",
        content_hash(&[wasm.as_slice(), js.as_slice()].concat())
    );
    std::fs::write(staging.join(format!("{stem}.js")), &js)?;
    std::fs::write(staging.join(format!("{stem}_bg.wasm")), &wasm)?;
    println!("split-page: the player for exports is {stem}.js and {stem}_bg.wasm");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_files_are_named_by_their_content() {
        assert_eq!(hashed_name(b"a", "wasm"), hashed_name(b"a", "wasm"));
        assert_ne!(hashed_name(b"a", "wasm"), hashed_name(b"b", "wasm"));
        assert!(hashed_name(b"", "js").starts_with("aula-split-"));
        assert!(hashed_name(b"", "js").ends_with(".js"));
    }

    #[test]
    fn each_part_lists_its_chunks_by_their_new_names() {
        let prefetch = [
            (
                "settings_view_2106".to_string(),
                vec![
                    "chunk_3".to_string(),
                    "split_settings_view_2106".to_string(),
                ],
            ),
            ("load".to_string(), vec!["split_load".to_string()]),
        ]
        .into_iter()
        .collect();
        let renamed = [
            ("chunk_3", "aula-split-0000000000000003.wasm"),
            (
                "split_settings_view_2106",
                "aula-split-00000000000000aa.wasm",
            ),
            ("split_load", "aula-split-00000000000000bb.wasm"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let parts: serde_json::Value =
            serde_json::from_str(&parts_json(&prefetch, &renamed).unwrap()).unwrap();
        assert_eq!(
            parts,
            serde_json::json!({
                "settings_view": ["aula-split-0000000000000003.wasm", "aula-split-00000000000000aa.wasm"],
                "load": ["aula-split-00000000000000bb.wasm"],
            })
        );
        let missing = [("x_1".to_string(), vec!["gone".to_string()])]
            .into_iter()
            .collect();
        assert!(parts_json(&missing, &renamed).is_err());
    }

    #[test]
    fn a_chunk_that_cannot_be_fetched_reloads_the_page_once() {
        let loader = "function wrapAsyncCb(callee) {\n    return async (callbackIndex, callbackData) => {\n        let success;\n        try {\n            await callee();\n            success = true;\n        } catch (e) {\n            console.error(e);\n            success = false;\n        } finally {\n            const sharedImports = getSharedImports();\n            sharedImports.__wasm_split.__indirect_function_table.get(callbackIndex)(callbackData, success);\n        }\n    }\n}\n";
        let patched = reload_on_failure(loader).unwrap();
        assert!(!patched.contains("finally"), "{patched}");
        assert!(patched.contains("if (!success && aulaReloaded(true)) return;"));
        assert!(patched.contains("aulaReloaded(false);"));
        assert!(patched.contains("location.reload()"));
        assert!(reload_on_failure("export const x = 1;").is_err());
    }

    #[test]
    fn only_a_module_with_lazy_functions_is_split() {
        assert!(has_split_points(b"..__wasm_split_00settings00_import_x.."));
        assert!(!has_split_points(b"an ordinary module"));
    }

    #[test]
    fn the_loader_is_fetched_with_the_page() {
        let html = "<html><head><title>x</title></head><body></body></html>";
        let updated = preload_loader(html, "aula-split-1.js").unwrap();
        let link = "<link rel=\"modulepreload\" href=\"/aula-split-1.js\" crossorigin=\"anonymous\"></head>";
        assert!(updated.contains(link), "{updated}");
        assert!(preload_loader("<body></body>", "x.js").is_err());
    }

    #[test]
    fn integrity_follows_the_new_content() {
        let html = r#"<link rel="modulepreload" href="/aula-app-1.js" integrity="sha384-old"><link rel="preload" href="/x.wasm">"#;
        let updated = set_integrity(html, "aula-app-1.js", b"abc").unwrap();
        assert!(!updated.contains("sha384-old"));
        // sha384("abc"), base64.
        assert!(updated
            .contains("sha384-ywB1P0WjXou1oD1pmsZQBycsMqsO3tFjGotgWkP/W+2AhgcroefMI1i67KE0yCWn"));
        assert_eq!(set_integrity(html, "x.wasm", b"abc").unwrap(), html);
        assert!(set_integrity(html, "missing.js", b"").is_err());
    }
}
