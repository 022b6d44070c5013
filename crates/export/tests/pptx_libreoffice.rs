//! The .pptx export as a real slide program reads it: LibreOffice converts each sample course's
//! deck to PDF, and poppler's `pdftotext` checks one page per slide scene, each showing its
//! scene's title. Needs `soffice` and `pdftotext` (`cargo xtask bootstrap` installs both); a
//! machine without them fails here instead of passing silently.
//!
//! Set `AULA_KEEP_PPTX=1` to keep the .pptx and PDF for a look (the path is printed).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aula_course::{Course, SceneContent};
use aula_export::pptx::course_to_pptx;

const CONVERSION_TIMEOUT: Duration = Duration::from_secs(120);

fn require(tool: &str, version_flag: &str) {
    match Command::new(tool)
        .arg(version_flag)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => panic!(
            "`{tool}` is not installed, and this test needs it to check the .pptx export. \
             Run `cargo xtask bootstrap`, which installs LibreOffice (soffice) and poppler-utils \
             (pdftotext)."
        ),
        Err(e) => panic!("`{tool}` could not be started: {e}"),
    }
}

/// A fresh folder under the system temp folder, unique to this run and course.
fn scratch(name: &str) -> PathBuf {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("aula-pptx-{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// Runs `command` to completion, killing it after `timeout`.
fn run(mut command: Command, timeout: Duration) -> std::process::Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the tool starts");
    let started = Instant::now();
    loop {
        match child.try_wait().expect("the tool can be waited on") {
            Some(_) => return child.wait_with_output().expect("the tool's output"),
            None if started.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{command:?} did not finish within {timeout:?}");
            }
            None => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

fn check_sample(name: &str, json: &str) {
    require("soffice", "--version");
    require("pdftotext", "-v");
    let course = Course::from_json(json).expect("the sample course loads");
    let titles: Vec<&str> = course
        .scenes
        .iter()
        .filter(|s| matches!(s.content, SceneContent::Slide(_)))
        .map(|s| s.title.as_str())
        .collect();
    let dir = scratch(name);
    let pptx = dir.join(format!("{name}.pptx"));
    std::fs::write(&pptx, course_to_pptx(&course, 1_764_633_600_000)).expect("the deck is written");

    // A profile of its own, so parallel conversions never share LibreOffice's lock.
    let profile = format!(
        "-env:UserInstallation=file://{}",
        dir.join("profile").display()
    );
    let mut soffice = Command::new("soffice");
    soffice
        .arg(profile)
        .args([
            "--headless",
            "--norestore",
            "--convert-to",
            "pdf",
            "--outdir",
        ])
        .arg(&dir)
        .arg(&pptx);
    let started = Instant::now();
    let converted = run(soffice, CONVERSION_TIMEOUT);
    eprintln!(
        "{name}: soffice took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let pdf = dir.join(format!("{name}.pdf"));
    assert!(
        converted.status.success() && pdf.exists(),
        "LibreOffice could not convert {}: {}\n{}\n{}",
        pptx.display(),
        converted.status,
        String::from_utf8_lossy(&converted.stdout),
        String::from_utf8_lossy(&converted.stderr)
    );

    let mut pdftotext = Command::new("pdftotext");
    pdftotext.arg("-layout").arg(&pdf).arg("-");
    let extracted = run(pdftotext, Duration::from_secs(30));
    assert!(
        extracted.status.success(),
        "pdftotext failed on {}",
        pdf.display()
    );
    let text = String::from_utf8_lossy(&extracted.stdout);
    // Pages end with a form feed.
    let pages: Vec<&str> = text.split('\u{c}').collect();
    let pages = match pages.split_last() {
        Some((last, rest)) if last.trim().is_empty() => rest.to_vec(),
        _ => pages,
    };
    assert_eq!(
        pages.len(),
        titles.len(),
        "one PDF page per slide scene ({})",
        pdf.display()
    );
    for (index, (page, title)) in pages.iter().zip(&titles).enumerate() {
        assert!(
            squeeze(page).contains(&squeeze(title)),
            "page {} of {} should show its scene's title {title:?}; it reads:\n{page}",
            index + 1,
            pdf.display()
        );
    }
    if std::env::var_os("AULA_KEEP_PPTX").is_some() {
        eprintln!("kept {}", dir.display());
    } else {
        remove(&dir);
    }
}

fn remove(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn libreoffice_shows_every_slide_of_the_english_sample_with_its_title() {
    check_sample(
        "transformer-en",
        include_str!("../../../public/courses/transformer-en.json"),
    );
}

#[test]
fn libreoffice_shows_every_slide_of_the_chinese_sample_with_its_title() {
    check_sample(
        "photosynthesis-zh",
        include_str!("../../../public/courses/photosynthesis-zh.json"),
    );
}
