//! Every formula in the bundled courses (slide `latex` elements and `wb_draw_latex` actions)
//! converts cleanly, so a course edit that uses something the converter lacks fails here.

use std::path::Path;

use aula_course::{Action, Course, SceneContent, SlideElement};
use aula_render::latex_to_mathml;

fn bundled_formulas() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../public/courses");
    let mut formulas = Vec::new();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let file = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        if !file.ends_with(".json") || file == "index.json" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a readable course file");
        let course = Course::from_json(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        for scene in &course.scenes {
            if let SceneContent::Slide(slide) = &scene.content {
                for element in &slide.elements {
                    if let SlideElement::Latex(e) = element {
                        formulas.push((file.clone(), e.latex.clone()));
                    }
                }
            }
            for action in &scene.actions {
                if let Action::WbDrawLatex(a) = action {
                    formulas.push((file.clone(), a.latex.clone()));
                }
            }
        }
    }
    formulas
}

#[test]
fn every_bundled_course_formula_converts_without_an_error_mark() {
    let formulas = bundled_formulas();
    assert!(
        formulas.len() >= 20,
        "only {} formulas found",
        formulas.len()
    );
    for (file, latex) in formulas {
        for display in [true, false] {
            let mathml = latex_to_mathml(&latex, display)
                .unwrap_or_else(|e| panic!("{file}: {latex:?}: {e}"));
            assert!(!mathml.contains("<merror"), "{file}: {latex:?} → {mathml}");
        }
    }
}
