//! Exports that carry the player itself: a SCORM package (1.2 or 2004 4th edition) that an LMS
//! serves from its own origin, and a single offline `.html` file that opens from disk. Both hold
//! the page's own built files (listed by the build in `app-shell.json`), a small `index.html` of
//! our own with relative paths, and a package configuration the page reads at start
//! (`<script id="aula-package" type="application/json">`) telling it to show only the player.

use aula_player::progress::ProgressRules;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::bundle::{check_course, CourseFiles, ImportError};
use crate::zip::ZipWriter;
use crate::COURSE_PATH;

/// The script that finds the LMS's SCORM API and reports to it (see its header).
pub const SCORM_BRIDGE: &str = include_str!("../assets/scorm-bridge.js");
pub const SCORM_BRIDGE_PATH: &str = "scorm-bridge.js";

/// The build's list of the page's files (`dist/app-shell.json`).
#[derive(Debug, Clone, Deserialize)]
pub struct AppShell {
    pub version: String,
    pub files: Vec<ShellFile>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ShellFile {
    pub path: String,
    pub role: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlayerExportError {
    #[error("The list of Aula's own files (app-shell.json) cannot be read: {0}. Reload Aula and try again.")]
    Shell(String),
    #[error("Aula's list of its own files has no {0}; this copy of Aula is incomplete.")]
    MissingRole(&'static str),
}

/// Where the player's files are, relative to the site root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerPaths {
    pub js: String,
    pub wasm: String,
    pub css: String,
}

impl AppShell {
    pub fn from_json(text: &str) -> Result<AppShell, PlayerExportError> {
        serde_json::from_str(text).map_err(|e| PlayerExportError::Shell(e.to_string()))
    }

    pub fn player_paths(&self) -> Result<PlayerPaths, PlayerExportError> {
        let find = |role: &'static str| {
            self.files
                .iter()
                .find(|f| f.role == role && crate::validate_entry_path(&f.path).is_ok())
                .map(|f| f.path.clone())
                .ok_or(PlayerExportError::MissingRole(role))
        };
        // A split build's page loads parts of itself on first use (`xtask/src/split.rs`), which
        // a file played from disk cannot; it lists the page in one module for the player.
        Ok(PlayerPaths {
            js: find("player-js").or_else(|_| find("app-js"))?,
            wasm: find("player-wasm").or_else(|_| find("app-wasm"))?,
            css: find("css")?,
        })
    }
}

/// The player's files, fetched.
#[derive(Debug, Clone)]
pub struct PlayerFiles {
    pub paths: PlayerPaths,
    pub js: Vec<u8>,
    pub wasm: Vec<u8>,
    pub css: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ScormVersion {
    #[serde(rename = "1.2")]
    Scorm12,
    #[serde(rename = "2004")]
    Scorm2004,
}

/// What the page reads from `#aula-package`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackageConfig {
    /// The course file beside `index.html`; `None` when it is inlined (`#aula-course`).
    pub course: Option<String>,
    pub scorm: Option<ScormVersion>,
    pub rules: ProgressRules,
}

use aula_text::markup::escape as escape_xml;

/// JSON inside `<script>`: no `<` at all (`\u003c` is the same JSON), so nothing in it can close
/// or confuse the element.
fn script_json(json: &str) -> String {
    json.replace('<', "\\u003c")
}

/// The package's `index.html`: the player with relative paths, nothing from the network.
fn package_page(
    title: &str,
    language: &str,
    config: &PackageConfig,
    head: &str,
    boot: &str,
) -> String {
    let config = serde_json::to_string(config).unwrap_or_default();
    format!(
        "<!doctype html>\n<html lang=\"{lang}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<link rel=\"icon\" href=\"data:,\">\n\
         <script>try{{var t=localStorage.getItem(\"aula.theme\");document.documentElement.setAttribute(\"data-theme\",t===\"dark\"||(t!==\"light\"&&matchMedia(\"(prefers-color-scheme: dark)\").matches)?\"dark\":\"light\")}}catch(e){{document.documentElement.setAttribute(\"data-theme\",\"light\")}}</script>\n\
         <script id=\"aula-package\" type=\"application/json\">{config}</script>\n{head}\n\
         <script type=\"module\">\n{boot}\n</script>\n</head>\n<body></body>\n</html>\n",
        lang = escape_xml(language),
        title = escape_xml(title),
        config = script_json(&config),
    )
}

fn manifest_xml(
    version: ScormVersion,
    course_id: &str,
    title: &str,
    rules: &ProgressRules,
    files: &[String],
) -> String {
    let title = escape_xml(title);
    let identifier = escape_xml(&format!("aula-{course_id}"));
    let file_list: String = files
        .iter()
        .map(|f| format!("      <file href=\"{}\"/>\n", escape_xml(f)))
        .collect();
    match version {
        ScormVersion::Scorm12 => {
            let mastery = rules
                .passing_percent
                .map(|p| {
                    format!(
                        "        <adlcp:masteryscore>{}</adlcp:masteryscore>\n",
                        p.min(100)
                    )
                })
                .unwrap_or_default();
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
<manifest identifier=\"{identifier}\" version=\"1\"\n  xmlns=\"http://www.imsproject.org/xsd/imscp_rootv1p1p2\"\n  xmlns:adlcp=\"http://www.adlnet.org/xsd/adlcp_rootv1p2\"\n  xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"\n  xsi:schemaLocation=\"http://www.imsproject.org/xsd/imscp_rootv1p1p2 imscp_rootv1p1p2.xsd http://www.adlnet.org/xsd/adlcp_rootv1p2 adlcp_rootv1p2.xsd\">\n\
  <metadata>\n    <schema>ADL SCORM</schema>\n    <schemaversion>1.2</schemaversion>\n  </metadata>\n\
  <organizations default=\"org-1\">\n    <organization identifier=\"org-1\">\n      <title>{title}</title>\n\
      <item identifier=\"item-1\" identifierref=\"res-1\" isvisible=\"true\">\n        <title>{title}</title>\n{mastery}      </item>\n\
    </organization>\n  </organizations>\n  <resources>\n\
    <resource identifier=\"res-1\" type=\"webcontent\" adlcp:scormtype=\"sco\" href=\"index.html\">\n{file_list}    </resource>\n  </resources>\n</manifest>\n"
            )
        }
        ScormVersion::Scorm2004 => {
            let sequencing = rules
                .passing_percent
                .map(|p| {
                    format!(
                        "        <imsss:sequencing>\n          <imsss:objectives>\n            <imsss:primaryObjective objectiveID=\"passing\" satisfiedByMeasure=\"true\">\n              <imsss:minNormalizedMeasure>{:.2}</imsss:minNormalizedMeasure>\n            </imsss:primaryObjective>\n          </imsss:objectives>\n        </imsss:sequencing>\n",
                        f64::from(p.min(100)) / 100.0
                    )
                })
                .unwrap_or_default();
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
<manifest identifier=\"{identifier}\" version=\"1\"\n  xmlns=\"http://www.imsglobal.org/xsd/imscp_v1p1\"\n  xmlns:adlcp=\"http://www.adlnet.org/xsd/adlcp_v1p3\"\n  xmlns:adlseq=\"http://www.adlnet.org/xsd/adlseq_v1p3\"\n  xmlns:adlnav=\"http://www.adlnet.org/xsd/adlnav_v1p3\"\n  xmlns:imsss=\"http://www.imsglobal.org/xsd/imsss\"\n  xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"\n  xsi:schemaLocation=\"http://www.imsglobal.org/xsd/imscp_v1p1 imscp_v1p1.xsd http://www.adlnet.org/xsd/adlcp_v1p3 adlcp_v1p3.xsd http://www.adlnet.org/xsd/adlseq_v1p3 adlseq_v1p3.xsd http://www.adlnet.org/xsd/adlnav_v1p3 adlnav_v1p3.xsd http://www.imsglobal.org/xsd/imsss imsss_v1p0.xsd\">\n\
  <metadata>\n    <schema>ADL SCORM</schema>\n    <schemaversion>2004 4th Edition</schemaversion>\n  </metadata>\n\
  <organizations default=\"org-1\">\n    <organization identifier=\"org-1\">\n      <title>{title}</title>\n\
      <item identifier=\"item-1\" identifierref=\"res-1\" isvisible=\"true\">\n        <title>{title}</title>\n{sequencing}      </item>\n\
    </organization>\n  </organizations>\n  <resources>\n\
    <resource identifier=\"res-1\" type=\"webcontent\" adlcp:scormType=\"sco\" href=\"index.html\">\n{file_list}    </resource>\n  </resources>\n</manifest>\n"
            )
        }
    }
}

/// A SCORM package: `imsmanifest.xml` at the root, the player, the course and its media, every
/// path relative so the LMS can serve it from anywhere.
pub fn scorm_package(
    files: &CourseFiles,
    player: &PlayerFiles,
    version: ScormVersion,
    rules: ProgressRules,
    exported_at_ms: u64,
) -> Result<Vec<u8>, ImportError> {
    let course = check_course(&files.course_json)?;
    let config = PackageConfig {
        course: Some(COURSE_PATH.to_string()),
        scorm: Some(version),
        rules,
    };
    let p = &player.paths;
    let head = format!(
        "<link rel=\"stylesheet\" href=\"{css}\">\n<script src=\"{SCORM_BRIDGE_PATH}\"></script>",
        css = escape_xml(&p.css)
    );
    let boot = format!(
        "import init from \"./{js}\";\ninit({{ module_or_path: \"./{wasm}\" }});",
        js = p.js,
        wasm = p.wasm
    );
    let page = package_page(&course.title, &course.language, &config, &head, &boot);

    let mut entries: Vec<(String, &[u8])> = vec![
        ("index.html".into(), page.as_bytes()),
        (SCORM_BRIDGE_PATH.into(), SCORM_BRIDGE.as_bytes()),
        (p.js.clone(), &player.js),
        (p.wasm.clone(), &player.wasm),
        (p.css.clone(), &player.css),
        (COURSE_PATH.into(), files.course_json.as_bytes()),
    ];
    for (path, bytes) in &files.media {
        entries.push((path.clone(), bytes));
    }
    for (path, _) in &entries {
        crate::validate_entry_path(path).map_err(crate::BundleError::from)?;
    }
    let listed: Vec<String> = entries.iter().map(|(p, _)| p.clone()).collect();
    let manifest = manifest_xml(version, &course.id, &course.title, &rules, &listed);

    let mut zip = ZipWriter::new(exported_at_ms);
    zip.add("imsmanifest.xml", manifest.as_bytes());
    for (path, bytes) in entries {
        zip.add(&path, bytes);
    }
    Ok(zip.finish())
}

/// One `.html` file that plays the course from disk (`file://`) with no network: the styles, the
/// course, the page's script and its WebAssembly (base64) all inline. Media beyond the course
/// file are not carried (courses keep images inline or as links).
pub fn offline_html(course_json: &str, player: &PlayerFiles) -> Result<String, ImportError> {
    let course = check_course(course_json)?;
    let config = PackageConfig {
        course: None,
        scorm: None,
        rules: ProgressRules::default(),
    };
    let css = String::from_utf8_lossy(&player.css).replace("</style", "<\\/style");
    let head = format!(
        "<style>\n{css}\n</style>\n<script id=\"aula-course\" type=\"application/json\">{}</script>\n\
         <script id=\"aula-wasm\" type=\"application/octet-stream\">{}</script>",
        script_json(course_json),
        crate::base64::encode(&player.wasm)
    );
    // The glue runs inline as a module script, started by its `__wbg_init` (the release build's
    // minifier keeps that name) with the WebAssembly bytes instead of a URL (file:// pages cannot
    // fetch). Its line-leading `export`s are dropped; an `export {…}` left inside a minified line
    // is allowed in a module.
    let js = String::from_utf8_lossy(&player.js);
    let mut glue = String::with_capacity(js.len());
    for line in js.lines() {
        if line.starts_with("export {") {
            continue;
        }
        glue.push_str(line.strip_prefix("export ").unwrap_or(line));
        glue.push('\n');
    }
    let boot = format!(
        "{glue}\nconst aulaWasm = Uint8Array.from(atob(document.getElementById(\"aula-wasm\").textContent.trim()), (c) => c.charCodeAt(0));\n__wbg_init({{ module_or_path: aulaWasm }});",
        glue = glue.replace("</script", "<\\/script")
    );
    Ok(package_page(
        &course.title,
        &course.language,
        &config,
        &head,
        &boot,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zip::{read_zip, ZipLimits};
    use aula_player::progress::CompletionRule;

    const COURSE: &str = include_str!("../../course/tests/fixtures/photosynthesis.json");

    fn player() -> PlayerFiles {
        let shell = AppShell::from_json(
            r#"{"version":"abc","files":[{"path":"index.html","bytes":1,"role":"page"},
            {"path":"aula-app-1f.js","bytes":1,"role":"app-js"},{"path":"aula-app-1f_bg.wasm","bytes":1,"role":"app-wasm"},
            {"path":"style-2e.css","bytes":1,"role":"css"}]}"#,
        )
        .unwrap();
        PlayerFiles {
            paths: shell.player_paths().unwrap(),
            js: b"export class Thing {}\nfunction __wbg_init(o) {}\nexport { initSync, __wbg_init as default };\n".to_vec(),
            wasm: b"\0asm\x01\0\0\0".to_vec(),
            css: b"body { color: red }".to_vec(),
        }
    }

    #[test]
    fn a_split_build_exports_its_player_in_one_module() {
        let shell = AppShell::from_json(
            r#"{"version":"abc","files":[{"path":"aula-app-1f.js","role":"app-js"},
            {"path":"aula-app-1f_bg.wasm","role":"app-wasm"},{"path":"style-2e.css","role":"css"},
            {"path":"aula-split-00112233445566ff.js","role":"app-split-loader"},
            {"path":"aula-split-aabbccddeeff0011.wasm","role":"app-chunk"},
            {"path":"aula-player-0123456789abcdef.js","role":"player-js"},
            {"path":"aula-player-0123456789abcdef_bg.wasm","role":"player-wasm"}]}"#,
        )
        .unwrap();
        let paths = shell.player_paths().unwrap();
        assert_eq!(paths.js, "aula-player-0123456789abcdef.js");
        assert_eq!(paths.wasm, "aula-player-0123456789abcdef_bg.wasm");
        assert_eq!(paths.css, "style-2e.css");
    }

    fn files() -> CourseFiles {
        CourseFiles {
            course_json: COURSE.into(),
            media: vec![("media/leaf.png".into(), b"png".to_vec())],
        }
    }

    const RULES: ProgressRules = ProgressRules {
        completion: CompletionRule::AllScenes,
        passing_percent: Some(80),
    };

    #[test]
    fn a_scorm_12_package_lists_every_file_under_a_sco_with_relative_paths() {
        let zip = scorm_package(&files(), &player(), ScormVersion::Scorm12, RULES, 0).unwrap();
        let entries = read_zip(&zip, &ZipLimits::BUNDLE).unwrap();
        let paths: Vec<&str> = entries.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths[0], "imsmanifest.xml");
        let manifest = std::str::from_utf8(&entries[0].bytes).unwrap();
        assert!(manifest.contains("<schemaversion>1.2</schemaversion>"));
        assert!(manifest.contains("adlcp:scormtype=\"sco\" href=\"index.html\""));
        assert!(manifest.contains("<adlcp:masteryscore>80</adlcp:masteryscore>"));
        for path in &paths[1..] {
            assert!(
                manifest.contains(&format!("<file href=\"{path}\"/>")),
                "{path} is not listed"
            );
            assert!(!path.starts_with('/'));
        }
        let page = std::str::from_utf8(
            &entries
                .iter()
                .find(|e| e.path == "index.html")
                .unwrap()
                .bytes,
        )
        .unwrap();
        assert!(page.contains("import init from \"./aula-app-1f.js\""));
        assert!(page.contains("module_or_path: \"./aula-app-1f_bg.wasm\""));
        assert!(page.contains("<script src=\"scorm-bridge.js\"></script>"));
        assert!(!page.contains("=\"/"), "no root-relative URL: {page}");
        let config: PackageConfig = serde_json::from_str(
            page.split("<script id=\"aula-package\" type=\"application/json\">")
                .nth(1)
                .unwrap()
                .split("</script>")
                .next()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(config.scorm, Some(ScormVersion::Scorm12));
        assert_eq!(config.rules, RULES);
        assert_eq!(config.course.as_deref(), Some("course.json"));
    }

    #[test]
    fn a_scorm_2004_package_says_4th_edition_and_its_passing_measure() {
        let zip = scorm_package(&files(), &player(), ScormVersion::Scorm2004, RULES, 0).unwrap();
        let entries = read_zip(&zip, &ZipLimits::BUNDLE).unwrap();
        let manifest = std::str::from_utf8(&entries[0].bytes).unwrap();
        assert!(manifest.contains("<schemaversion>2004 4th Edition</schemaversion>"));
        assert!(manifest.contains("adlcp:scormType=\"sco\""));
        assert!(manifest.contains("<imsss:minNormalizedMeasure>0.80</imsss:minNormalizedMeasure>"));
        let no_pass = ProgressRules {
            passing_percent: None,
            ..RULES
        };
        let zip = scorm_package(&files(), &player(), ScormVersion::Scorm2004, no_pass, 0).unwrap();
        let manifest = read_zip(&zip, &ZipLimits::BUNDLE).unwrap().remove(0).bytes;
        assert!(!String::from_utf8(manifest)
            .unwrap()
            .contains("imsss:sequencing"));
    }

    #[test]
    fn titles_are_escaped_in_the_manifest_and_the_page() {
        let course = COURSE.replacen("\"title\": \"", "\"title\": \"<Leaves & \\\"light\\\"> ", 1);
        let files = CourseFiles {
            course_json: course,
            media: vec![],
        };
        let zip = scorm_package(&files, &player(), ScormVersion::Scorm12, RULES, 0).unwrap();
        let entries = read_zip(&zip, &ZipLimits::BUNDLE).unwrap();
        let manifest = std::str::from_utf8(&entries[0].bytes).unwrap();
        assert!(
            manifest.contains("&lt;Leaves &amp; &quot;light&quot;&gt;"),
            "{manifest}"
        );
        assert!(!manifest.contains("<Leaves"));
    }

    #[test]
    fn the_offline_page_inlines_everything_and_escapes_the_course() {
        let course = COURSE.replacen(
            "\"title\": \"",
            "\"title\": \"</script><script>alert(1)</script>",
            1,
        );
        let page = offline_html(&course, &player()).unwrap();
        assert_eq!(
            page.matches("</script>").count(),
            5,
            "theme, package, course, wasm and module scripts"
        );
        assert_eq!(page.matches("<script").count(), 5);
        assert!(!page.contains("export {"));
        assert!(page.contains("class Thing {}") && !page.contains("export class"));
        assert!(page.contains("<style>\nbody { color: red }"));
        assert!(page.contains(&crate::base64::encode(b"\0asm\x01\0\0\0")));
        assert!(
            !page.contains("src=\"") && !page.contains("href=\"/"),
            "nothing to fetch"
        );
        let inline = page
            .split("<script id=\"aula-course\" type=\"application/json\">")
            .nth(1)
            .unwrap()
            .split("</script>")
            .next()
            .unwrap();
        let back: serde_json::Value = serde_json::from_str(inline).unwrap();
        assert!(back["title"].as_str().unwrap().starts_with("</script>"));
    }

    #[test]
    fn base64_matches_the_standard_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(crate::base64::encode(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn a_shell_list_without_the_wasm_is_a_clear_error() {
        let shell =
            AppShell::from_json(r#"{"version":"1","files":[{"path":"a.js","role":"app-js"}]}"#)
                .unwrap();
        assert_eq!(
            shell.player_paths(),
            Err(PlayerExportError::MissingRole("app-wasm"))
        );
        assert!(AppShell::from_json("<html>").is_err());
    }
}
