//! The pinned toolchain and `bootstrap`: installs what is missing, skips what is there.
//!
//! Tools go into a machine-level folder (`$AULA_TOOLS`, default `~/.cache/aula-tools`) so a fresh
//! clone on the same machine finds them; only crates.io, npm and Debian are reachable here, so
//! every tool comes from one of those (see ../shared/TOOLCHAIN.md for why each pin).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::{command_exists, project_root, run, status_line};

pub const TRUNK_VERSION: &str = "0.21.14";
/// Must equal the `wasm-bindgen` crate in Cargo.lock exactly; `check_wasm_bindgen_pin` enforces it.
pub const WASM_BINDGEN_VERSION: &str = "0.2.130";
pub const BINARYEN_VERSION: &str = "132.0.0";
pub const PLAYWRIGHT_CORE_VERSION: &str = "1.65.1";
/// Mozilla's pdf.js: Trunk copies its browser build from node_modules into `dist/pdf/`, where the
/// page imports it only when a learner drops a PDF (web/pdf-text.mjs).
pub const PDFJS_DIST_VERSION: &str = "6.5.438";
/// The SCORM runtime the SCORM export is tested under (tests/e2e/scorm.test.mjs).
pub const SCORM_AGAIN_VERSION: &str = "3.4.3";
/// Minifies the app's js in a release build (web/precache.mjs).
pub const TERSER_VERSION: &str = "5.51.4";
pub const WASM_TARGET: &str = "wasm32-unknown-unknown";
pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// Chinese text in screenshots needs a CJK font; Debian's Chromium brings none.
const CJK_FONT_DIR: &str = "/usr/share/fonts/opentype/noto";

/// Where installed tools live: outside the clone, so CI's fresh clone still finds them.
pub fn tools_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("AULA_TOOLS") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    home.join(".cache").join("aula-tools")
}

pub fn tools_bin() -> PathBuf {
    tools_dir().join("bin")
}

/// PATH with the pinned tools first: our trunk/wasm-bindgen, then npm's wasm-opt, so Trunk can
/// never pick up Debian's broken binaryen.
pub fn tool_path() -> Result<std::ffi::OsString> {
    let mut dirs = vec![
        tools_bin(),
        project_root().join("node_modules").join(".bin"),
    ];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).context("building PATH")
}

/// First line of `program --version`, or None when it does not run.
fn version_of(program: &Path) -> Option<String> {
    let output = Command::new(program).arg("--version").output().ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8(output.stdout)
        .ok()?
        .lines()
        .next()
        .map(str::to_owned)
}

/// True when `line` (a `--version` line such as "trunk 0.21.14") names exactly `version`.
pub fn version_line_matches(line: &str, version: &str) -> bool {
    line.split_whitespace()
        .any(|word| word.trim_start_matches('v') == version)
}

/// Reads the locked version of `package` from Cargo.lock text.
pub fn locked_version(lock: &str, package: &str) -> Option<String> {
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == format!("name = \"{package}\"") {
            let next = lines.next()?;
            return next
                .trim()
                .strip_prefix("version = \"")
                .and_then(|v| v.strip_suffix('"'))
                .map(str::to_owned);
        }
    }
    None
}

pub fn check_wasm_bindgen_pin() -> Result<()> {
    let lock_path = project_root().join("Cargo.lock");
    let lock = std::fs::read_to_string(&lock_path)
        .with_context(|| format!("reading {}", lock_path.display()))?;
    match locked_version(&lock, "wasm-bindgen") {
        Some(v) if v == WASM_BINDGEN_VERSION => Ok(()),
        Some(v) => bail!(
            "Cargo.lock has wasm-bindgen {v} but the pinned wasm-bindgen-cli is {WASM_BINDGEN_VERSION}; \
             they must be equal (update xtask/src/tools.rs, Trunk.toml and Cargo.toml together)"
        ),
        None => bail!("Cargo.lock does not list wasm-bindgen"),
    }
}

struct Step {
    name: &'static str,
    started: Instant,
}

impl Step {
    fn start(name: &'static str) -> Self {
        Self {
            name,
            started: Instant::now(),
        }
    }
    fn skipped(self, why: &str) {
        status_line(&format!("bootstrap: {:<22} ok ({why})", self.name));
    }
    fn done(self) {
        status_line(&format!(
            "bootstrap: {:<22} installed in {:.1} s",
            self.name,
            self.started.elapsed().as_secs_f64()
        ));
    }
}

fn wasm_target() -> Result<()> {
    let step = Step::start("wasm32 target");
    let sysroot = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .context("running rustc")?;
    let sysroot = PathBuf::from(String::from_utf8(sysroot.stdout)?.trim());
    let target_dir = sysroot.join("lib").join("rustlib").join(WASM_TARGET);
    if target_dir.is_dir() {
        step.skipped("present");
        return Ok(());
    }
    status_line("bootstrap: rustup target add wasm32-unknown-unknown");
    run(Command::new("rustup").args(["target", "add", WASM_TARGET])).context(
        "installing the wasm32 target with rustup (see TOOLCHAIN notes in ARCHITECTURE.md)",
    )?;
    step.done();
    Ok(())
}

pub(crate) fn cargo_tool(
    name: &'static str,
    binary: &str,
    version: &str,
    install_args: &[&str],
) -> Result<()> {
    let step = Step::start(name);
    let path = tools_bin().join(binary);
    if version_of(&path).is_some_and(|line| version_line_matches(&line, version)) {
        step.skipped(version);
        return Ok(());
    }
    status_line(&format!(
        "bootstrap: cargo install {name} {version} into {} (takes minutes)",
        tools_dir().display()
    ));
    let mut cmd = Command::new("cargo");
    cmd.arg("install")
        .args(install_args)
        .arg("--root")
        .arg(tools_dir());
    run(&mut cmd)?;
    match version_of(&path) {
        Some(line) if version_line_matches(&line, version) => {
            step.done();
            Ok(())
        }
        other => bail!(
            "{name} was installed but `{} --version` says {other:?}",
            path.display()
        ),
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn chromium() -> Result<()> {
    let step = Step::start("chromium, driver, curl, libreoffice, poppler");
    let browser_ready = Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists();
    let fonts_ready = Path::new(CJK_FONT_DIR).is_dir();
    // curl carries eval-director's requests (and its mock-llm self-test in `cargo xtask test`).
    let curl_ready = Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    // LibreOffice and pdftotext check the .pptx export (crates/export/tests/pptx_libreoffice.rs).
    let office_ready = command_exists("soffice") && command_exists("pdftotext");
    if browser_ready && fonts_ready && curl_ready && office_ready {
        step.skipped("Debian packages present");
        return Ok(());
    }
    if !is_root() {
        if !curl_ready {
            bail!("curl is needed (eval-director and its self-test). Install it with `sudo apt-get install -y curl`.");
        }
        if !office_ready {
            bail!("LibreOffice and pdftotext check the .pptx export. Install them with `sudo apt-get install -y --no-install-recommends libreoffice-impress poppler-utils`, then run this again.");
        }
        if browser_ready {
            status_line("bootstrap: note: no CJK font (fonts-noto-cjk); Chinese text in screenshots shows as boxes");
            step.skipped("present, without CJK fonts");
            return Ok(());
        }
        bail!(
            "Chromium and ChromeDriver are needed for the browser tests. Install them with \
             `sudo apt-get install -y chromium chromium-driver fonts-noto-cjk` (Debian/Ubuntu), then run this again."
        );
    }
    run(Command::new("apt-get").arg("update").arg("-qq"))?;
    run(Command::new("apt-get")
        .args([
            "install",
            "-y",
            "-qq",
            "--no-install-recommends",
            "chromium",
            "chromium-driver",
            "fonts-noto-cjk",
            "curl",
            "libreoffice-impress",
            "poppler-utils",
        ])
        .env("DEBIAN_FRONTEND", "noninteractive"))?;
    step.done();
    Ok(())
}

fn npm_package_version(name: &str) -> Option<String> {
    let manifest = project_root()
        .join("node_modules")
        .join(name)
        .join("package.json");
    let text = std::fs::read_to_string(manifest).ok()?;
    // A tiny, dependency-free read of `"version": "x.y.z"`.
    let after = text.split("\"version\"").nth(1)?;
    after.split('"').nth(1).map(str::to_owned)
}

fn npm_tools() -> Result<()> {
    let step = Step::start("npm (wasm-opt, playwright, pdf.js, scorm-again, terser)");
    let binaryen = npm_package_version("binaryen");
    let playwright = npm_package_version("playwright-core");
    let pdfjs = npm_package_version("pdfjs-dist");
    let scorm = npm_package_version("scorm-again");
    let terser = npm_package_version("terser");
    if binaryen.as_deref() == Some(BINARYEN_VERSION)
        && playwright.as_deref() == Some(PLAYWRIGHT_CORE_VERSION)
        && pdfjs.as_deref() == Some(PDFJS_DIST_VERSION)
        && scorm.as_deref() == Some(SCORM_AGAIN_VERSION)
        && terser.as_deref() == Some(TERSER_VERSION)
    {
        step.skipped("node_modules matches package-lock.json");
        return Ok(());
    }
    if !command_exists("npm") {
        bail!("npm is needed (Node.js 20 or newer) to install wasm-opt, Playwright and pdf.js; install Node.js, then run this again");
    }
    run(Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(project_root()))?;
    step.done();
    Ok(())
}

/// A virtualenv with the pinned Python SDKs of tests/sdk/requirements.txt (PyPI), rebuilt when
/// the requirements change; returns its python.
pub fn sdk_python() -> Result<PathBuf> {
    let step = Step::start("python SDKs (PyPI)");
    let requirements = project_root()
        .join("tests")
        .join("sdk")
        .join("requirements.txt");
    let wanted = std::fs::read_to_string(&requirements)
        .with_context(|| format!("reading {}", requirements.display()))?;
    let venv = tools_dir().join("sdk-venv");
    let python = venv.join("bin").join("python");
    let stamp = venv.join("aula-requirements.txt");
    if python.exists() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) {
        step.skipped("requirements unchanged");
        return Ok(python);
    }
    if !command_exists("python3") {
        bail!("python3 is needed for the SDK fidelity test; install Python 3.9 or newer, then run this again");
    }
    run(Command::new("python3")
        .arg("-m")
        .arg("venv")
        .arg("--clear")
        .arg(&venv))?;
    run(Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg(&requirements))?;
    std::fs::write(&stamp, wanted)?;
    step.done();
    Ok(python)
}

/// Installs every missing tool. Idempotent and quiet when everything is there.
pub fn bootstrap() -> Result<()> {
    let started = Instant::now();
    wasm_target()?;
    cargo_tool(
        "trunk",
        "trunk",
        TRUNK_VERSION,
        &["--locked", &format!("trunk@{TRUNK_VERSION}")],
    )?;
    // Not --locked: its lock file wants a webpki-roots release the registry does not have.
    cargo_tool(
        "wasm-bindgen-cli",
        "wasm-bindgen",
        WASM_BINDGEN_VERSION,
        &["wasm-bindgen-cli", "--version", WASM_BINDGEN_VERSION],
    )?;
    if !tools_bin().join("wasm-bindgen-test-runner").exists() {
        bail!("wasm-bindgen-test-runner is missing from {}; delete that folder and run bootstrap again", tools_bin().display());
    }
    chromium()?;
    npm_tools()?;
    if project_root()
        .join("tests")
        .join("sdk")
        .join("requirements.txt")
        .exists()
    {
        sdk_python()?;
    }
    check_wasm_bindgen_pin()?;
    status_line(&format!(
        "bootstrap: done in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_line_matches_only_the_exact_version() {
        assert!(version_line_matches("trunk 0.21.14", "0.21.14"));
        assert!(version_line_matches("wasm-bindgen 0.2.130", "0.2.130"));
        assert!(!version_line_matches("wasm-bindgen 0.2.13", "0.2.130"));
        assert!(!version_line_matches("trunk 0.22.0", "0.21.14"));
    }

    #[test]
    fn locked_version_reads_the_named_package() {
        let lock = "[[package]]\nname = \"wasm-bindgen-futures\"\nversion = \"0.4.80\"\n\n\
                    [[package]]\nname = \"wasm-bindgen\"\nversion = \"0.2.130\"\n";
        assert_eq!(
            locked_version(lock, "wasm-bindgen").as_deref(),
            Some("0.2.130")
        );
        assert_eq!(locked_version(lock, "leptos"), None);
    }

    #[test]
    fn package_json_pins_the_npm_tools_exactly() {
        let manifest = std::fs::read_to_string(project_root().join("package.json")).unwrap();
        for (name, version) in [
            ("binaryen", BINARYEN_VERSION),
            ("playwright-core", PLAYWRIGHT_CORE_VERSION),
            ("pdfjs-dist", PDFJS_DIST_VERSION),
            ("scorm-again", SCORM_AGAIN_VERSION),
            ("terser", TERSER_VERSION),
        ] {
            assert!(
                manifest.contains(&format!("\"{name}\": \"{version}\"")),
                "package.json must pin {name} to exactly {version} (xtask/src/tools.rs)"
            );
        }
    }

    #[test]
    fn workspace_lock_pins_the_same_wasm_bindgen_as_the_cli() {
        check_wasm_bindgen_pin().unwrap();
    }
}
