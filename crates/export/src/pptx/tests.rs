use std::collections::BTreeMap;

use aula_course::{Course, SceneContent};
use serde_json::json;

use super::deck::{data_image, image_size, speaker_notes};
use super::*;
use crate::base64::decode as base64_decode;
use crate::zip::{read_zip, ZipLimits};

const TRANSFORMER: &str = include_str!("../../../../public/courses/transformer-en.json");
const PHOTOSYNTHESIS: &str = include_str!("../../../../public/courses/photosynthesis-zh.json");
const EXPORTED_AT: u64 = 1_764_633_600_000;
/// A 1 × 1 PNG.
const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn sample(text: &str) -> Course {
    Course::from_json(text).expect("the sample course loads")
}

/// The package's files by path, every XML part checked to be well-formed.
fn unpack(pptx: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let entries = read_zip(pptx, &ZipLimits::BUNDLE).expect("a readable zip");
    let files: BTreeMap<String, Vec<u8>> = entries.into_iter().map(|e| (e.path, e.bytes)).collect();
    for (path, bytes) in &files {
        if path.ends_with(".xml") || path.ends_with(".rels") {
            let text = std::str::from_utf8(bytes).expect("XML parts are UTF-8");
            if let Err(e) = roxmltree::Document::parse(text) {
                panic!("{path} is not well-formed XML: {e}\n{text}");
            }
        }
    }
    files
}

fn text(files: &BTreeMap<String, Vec<u8>>, path: &str) -> String {
    let bytes = files
        .get(path)
        .unwrap_or_else(|| panic!("the package has no {path}"));
    String::from_utf8(bytes.clone()).expect("UTF-8")
}

/// All `a:t` text of an XML part, concatenated per paragraph with newlines between.
fn paragraph_texts(xml: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(xml).expect("well-formed");
    doc.descendants()
        .filter(|n| n.tag_name().name() == "p" && n.tag_name().namespace() == Some(NS_A))
        .map(|p| {
            p.descendants()
                .filter(|n| n.tag_name().name() == "t")
                .filter_map(|n| n.text())
                .collect::<String>()
        })
        .collect()
}

const NS_A: &str = "http://schemas.openxmlformats.org/drawingml/2006/main";

fn slide_scene_count(course: &Course) -> usize {
    course
        .scenes
        .iter()
        .filter(|s| matches!(s.content, SceneContent::Slide(_)))
        .count()
}

/// Resolves a relationship target against the folder of the part that names it.
fn resolve(source: &str, target: &str) -> String {
    let folder = match source.rsplit_once("/_rels/") {
        Some((folder, _)) => folder.to_string(),
        None => String::new(),
    };
    let mut parts: Vec<&str> = folder.split('/').filter(|s| !s.is_empty()).collect();
    for segment in target.split('/') {
        match segment {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            s => parts.push(s),
        }
    }
    parts.join("/")
}

fn assert_package_is_complete(files: &BTreeMap<String, Vec<u8>>) {
    let types = text(files, "[Content_Types].xml");
    let doc = roxmltree::Document::parse(&types).unwrap();
    let defaults: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("Default"))
        .filter_map(|n| n.attribute("Extension").map(str::to_lowercase))
        .collect();
    let overrides: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("Override"))
        .filter_map(|n| {
            n.attribute("PartName")
                .map(|p| p.trim_start_matches('/').to_string())
        })
        .collect();
    for part in &overrides {
        assert!(
            files.contains_key(part),
            "[Content_Types] names missing {part}"
        );
    }
    for path in files.keys().filter(|p| *p != "[Content_Types].xml") {
        let extension = path.rsplit('.').next().unwrap_or("").to_lowercase();
        assert!(
            overrides.contains(path) || defaults.contains(&extension),
            "{path} has no content type"
        );
    }
    for (path, bytes) in files.iter().filter(|(p, _)| p.ends_with(".rels")) {
        let xml = std::str::from_utf8(bytes).unwrap();
        let doc = roxmltree::Document::parse(xml).unwrap();
        let mut ids = Vec::new();
        for r in doc.descendants().filter(|n| n.has_tag_name("Relationship")) {
            let target = resolve(path, r.attribute("Target").unwrap());
            assert!(
                files.contains_key(&target),
                "{path} points at missing {target}"
            );
            let id = r.attribute("Id").unwrap();
            assert!(!ids.contains(&id), "{path} uses {id} twice");
            ids.push(id);
        }
    }
    // Every r:id and r:embed a part uses is one of its relationships.
    for (path, bytes) in files.iter().filter(|(p, _)| p.ends_with(".xml")) {
        let xml = std::str::from_utf8(bytes).unwrap();
        let (folder, name) = path.rsplit_once('/').unwrap_or(("", path));
        let rels_path = if folder.is_empty() {
            format!("_rels/{name}.rels")
        } else {
            format!("{folder}/_rels/{name}.rels")
        };
        for used in ["r:id=\"", "r:embed=\""] {
            for piece in xml.split(used).skip(1) {
                let id = piece.split('"').next().unwrap();
                let rels = text(files, &rels_path);
                assert!(
                    rels.contains(&format!("Id=\"{id}\"")),
                    "{path} uses {id}, which {rels_path} does not define"
                );
            }
        }
    }
}

#[test]
fn every_part_named_in_content_types_and_relationships_exists() {
    for course in [sample(TRANSFORMER), sample(PHOTOSYNTHESIS)] {
        let files = unpack(&course_to_pptx(&course, EXPORTED_AT));
        assert_package_is_complete(&files);
        let first = read_zip(&course_to_pptx(&course, EXPORTED_AT), &ZipLimits::BUNDLE).unwrap();
        assert_eq!(
            first[0].path, "[Content_Types].xml",
            "the content types come first"
        );
    }
}

#[test]
fn one_slide_per_slide_scene_in_order_and_no_others() {
    for course in [sample(TRANSFORMER), sample(PHOTOSYNTHESIS)] {
        let expected = slide_scene_count(&course);
        assert!(
            expected < course.scenes.len(),
            "the samples have a quiz too"
        );
        let deck = Deck::from_course(&course);
        let titles: Vec<&str> = deck.slides.iter().map(|s| s.title.as_str()).collect();
        let scene_titles: Vec<&str> = course
            .scenes
            .iter()
            .filter(|s| matches!(s.content, SceneContent::Slide(_)))
            .map(|s| s.title.as_str())
            .collect();
        assert_eq!(titles, scene_titles);
        let files = unpack(&course_to_pptx(&course, EXPORTED_AT));
        let slides = files
            .keys()
            .filter(|p| p.starts_with("ppt/slides/slide"))
            .count();
        let notes = files
            .keys()
            .filter(|p| p.starts_with("ppt/notesSlides/notesSlide"))
            .count();
        assert_eq!((slides, notes), (expected, expected));
        let presentation = text(&files, "ppt/presentation.xml");
        assert_eq!(presentation.matches("<p:sldId ").count(), expected);
        assert!(presentation.contains(r#"<p:sldSz cx="12192000" cy="6858000"/>"#));
    }
}

#[test]
fn speaker_notes_hold_every_speech_of_the_scene_in_order() {
    for course in [sample(TRANSFORMER), sample(PHOTOSYNTHESIS)] {
        let files = unpack(&course_to_pptx(&course, EXPORTED_AT));
        let slide_scenes = course
            .scenes
            .iter()
            .filter(|s| matches!(s.content, SceneContent::Slide(_)));
        for (index, scene) in slide_scenes.enumerate() {
            let notes = text(
                &files,
                &format!("ppt/notesSlides/notesSlide{}.xml", index + 1),
            );
            let paragraphs: Vec<String> = paragraph_texts(&notes)
                .into_iter()
                .filter(|p| !p.is_empty())
                .collect();
            let speeches: Vec<String> = scene
                .actions
                .iter()
                .filter_map(|a| match a {
                    aula_course::Action::Speech(s) => Some(s.text.trim().to_string()),
                    _ => None,
                })
                .collect();
            assert!(!speeches.is_empty());
            assert_eq!(paragraphs, speeches, "notes of {}", scene.title);
            assert_eq!(speaker_notes(scene), speeches.join("\n\n"));
        }
    }
}

#[test]
fn every_slide_shows_its_scene_title_once_as_its_title() {
    for course in [sample(TRANSFORMER), sample(PHOTOSYNTHESIS)] {
        let files = unpack(&course_to_pptx(&course, EXPORTED_AT));
        let deck = Deck::from_course(&course);
        for (index, slide) in deck.slides.iter().enumerate() {
            let xml = text(&files, &format!("ppt/slides/slide{}.xml", index + 1));
            let all: String = paragraph_texts(&xml).concat();
            let squeeze = |s: &str| s.split_whitespace().collect::<String>();
            assert!(
                squeeze(&all).contains(&squeeze(&slide.title)),
                "slide {} does not show {:?}",
                index + 1,
                slide.title
            );
            assert_eq!(xml.matches(r#"<p:ph type="title"/>"#).count(), 1);
        }
    }
}

/// A one-slide course with `elements`, a speech, and the given title.
fn course_with(title: &str, elements: serde_json::Value, speech: &str) -> Course {
    serde_json::from_value(json!({
        "format_version": 1,
        "id": "test",
        "title": title,
        "language": "en",
        "agents": [],
        "scenes": [
            {"id": "s1", "title": title, "content": {"type": "slide", "elements": elements},
             "actions": [{"type": "speech", "id": "a1", "text": speech}]},
            {"id": "q", "title": "Quiz", "content": {"type": "quiz", "questions": []}}
        ],
        "created_at": 0,
        "updated_at": 0
    }))
    .expect("a course")
}

#[test]
fn hostile_text_is_escaped_and_characters_xml_cannot_hold_are_dropped() {
    let hostile = "Tom & <Jerry> \"quoted\" 'single' \u{1}\u{8}\u{b}\u{c}\u{1b}\u{fffe} ]]> end";
    let course = course_with(
        hostile,
        json!([
            {"type": "text", "id": "t", "left": 40, "top": 100, "width": 400, "height": 100,
             "markdown": hostile},
            {"type": "shape", "id": "s", "left": 40, "top": 220, "width": 200, "height": 80,
             "shape": "rectangle", "fill": "#123456", "text": hostile},
            {"type": "table", "id": "tb", "left": 500, "top": 100, "width": 400, "height": 100,
             "rows": [[hostile, "b"], ["c", hostile]]},
            {"type": "code", "id": "c", "left": 500, "top": 220, "width": 400, "height": 100,
             "language": "rust", "code": hostile, "file_name": hostile},
            {"type": "latex", "id": "l", "left": 500, "top": 340, "width": 400, "height": 60,
             "latex": hostile},
            {"type": "image", "id": "i", "left": 40, "top": 340, "width": 200, "height": 100,
             "src": "https://example.com/a.png?x=<y>&z=\"1\"", "alt": hostile}
        ]),
        hostile,
    );
    let files = unpack(&course_to_pptx(&course, EXPORTED_AT));
    let slide = text(&files, "ppt/slides/slide1.xml");
    let notes = text(&files, "ppt/notesSlides/notesSlide1.xml");
    let core = text(&files, "docProps/core.xml");
    let clean = "Tom & <Jerry> \"quoted\" 'single'  ]]> end";
    for xml in [&slide, &notes] {
        assert!(
            paragraph_texts(xml).iter().any(|p| p.contains(clean)),
            "the text survives, minus control characters"
        );
        assert!(!xml.contains('\u{1}') && !xml.contains('\u{1b}') && !xml.contains('\u{fffe}'));
    }
    assert!(core.contains("Tom &amp; &lt;Jerry&gt;"));
    assert!(slide.contains("descr=\"Tom &amp; &lt;Jerry&gt; &quot;quoted&quot; &#39;single&#39;"));
}

#[test]
fn the_same_course_gives_the_same_bytes() {
    let course = sample(PHOTOSYNTHESIS);
    let first = course_to_pptx(&course, EXPORTED_AT);
    assert_eq!(first, course_to_pptx(&course, EXPORTED_AT));
    assert_ne!(first, course_to_pptx(&course, EXPORTED_AT + 86_400_000));
    let files = unpack(&first);
    assert!(text(&files, "docProps/core.xml").contains("2025-12-02T00:00:00Z"));
}

#[test]
fn canvas_positions_convert_to_emu_on_a_16_9_slide() {
    assert_eq!(canvas_to_emu(1000.0), SLIDE_WIDTH_EMU);
    assert_eq!(canvas_to_emu(562.5), SLIDE_HEIGHT_EMU);
    assert_eq!(canvas_to_emu(500.0), 6_096_000);
    assert_eq!(canvas_to_emu(-40.0), -487_680);
    assert_eq!(canvas_to_emu(f64::NAN), 0);
    assert_eq!(canvas_to_emu(f64::INFINITY), 0);
    assert_eq!(canvas_to_emu(1e300), 10 * SLIDE_WIDTH_EMU);
    assert_eq!(
        EmuRect::from_canvas(40.0, 20.0, 920.0, 62.0),
        EmuRect {
            x: 487_680,
            y: 243_840,
            cx: 11_216_640,
            cy: 755_904
        }
    );
    assert_eq!(EmuRect::slide().cx, SLIDE_WIDTH_EMU);
    assert_eq!(EmuRect::from_canvas(0.0, 0.0, -5.0, 10.0).cx, 0);
    // 28 canvas px on a 13.333 in slide is 26.88 pt.
    assert_eq!(canvas_font_to_centipoints(28.0), 2688);
    assert_eq!(canvas_font_to_centipoints(0.0), 100);
}

#[test]
fn every_element_kind_becomes_its_native_counterpart() {
    let png = format!("data:image/png;base64,{PNG_1X1}");
    let course = course_with(
        "All the kinds",
        json!([
            {"type": "text", "id": "t", "left": 40, "top": 20, "width": 920, "height": 60,
             "markdown": "All the **kinds**", "font_size": 28, "color": "#0f172a", "align": "center"},
            {"type": "shape", "id": "s", "left": 40, "top": 100, "width": 150, "height": 80,
             "shape": "rounded_rectangle", "fill": "#dbeafe", "text": "Box"},
            {"type": "shape", "id": "e", "left": 200, "top": 100, "width": 80, "height": 80,
             "shape": "ellipse", "fill": "navy"},
            {"type": "line", "id": "ln", "start": [300, 150], "end": [200, 120],
             "color": "#475569", "width": 2, "style": "dashed", "ends": ["plain", "arrow"]},
            {"type": "image", "id": "png", "left": 400, "top": 100, "width": 100, "height": 50,
             "src": png, "alt": "a dot"},
            {"type": "image", "id": "web", "left": 520, "top": 100, "width": 100, "height": 50,
             "src": "https://example.com/leaf.jpg", "alt": "A leaf"},
            {"type": "video", "id": "v", "left": 640, "top": 100, "width": 160, "height": 90,
             "src": "https://example.com/clip.mp4"},
            {"type": "chart", "id": "ch", "left": 40, "top": 200, "width": 300, "height": 200,
             "chart_type": "column", "data": {"labels": ["a", "b"], "legends": ["x"], "series": [[1, 2]]}},
            {"type": "table", "id": "tb", "left": 360, "top": 200, "width": 300, "height": 100,
             "rows": [["H1", "H2"], ["1", "2"]]},
            {"type": "latex", "id": "lx", "left": 360, "top": 320, "width": 300, "height": 60,
             "latex": "\\frac{a}{b} \\in \\mathbb{R}"},
            {"type": "code", "id": "cd", "left": 680, "top": 200, "width": 280, "height": 200,
             "language": "python", "code": "def f():\n    return 1", "file_name": "f.py"}
        ]),
        "Hello.",
    );
    let pptx = course_to_pptx(&course, EXPORTED_AT);
    let files = unpack(&pptx);
    assert_package_is_complete(&files);
    let slide = text(&files, "ppt/slides/slide1.xml");
    for expected in [
        r#"<p:ph type="title"/>"#,
        r#"algn="ctr""#,
        r#"<a:prstGeom prst="roundRect">"#,
        r#"<a:prstGeom prst="ellipse">"#,
        r#"<a:srgbClr val="000080"/>"#,
        r#"<p:cxnSp>"#,
        r#"flipH="1""#,
        r#"<a:prstDash val="dash"/>"#,
        r#"<a:tailEnd type="triangle""#,
        r#"<p:pic>"#,
        r#"descr="a dot""#,
        "https://example.com/leaf.jpg",
        "▶ Video",
        r#"<p:grpSp>"#,
        r#"<a:tbl>"#,
        r#"<a:gridCol w="#,
        r#"typeface="Cambria Math""#,
        // The page's LaTeX parser, read as text: the same symbols and fonts as on the page.
        "a/b ∈ ℝ",
        r#"typeface="Courier New""#,
        "f.py",
    ] {
        assert!(slide.contains(expected), "the slide lacks {expected}");
    }
    assert_eq!(files.get("ppt/media/image1.png").map(Vec::len), Some(70));
    let types = text(&files, "[Content_Types].xml");
    assert!(types.contains(r#"<Default Extension="png" ContentType="image/png"/>"#));
    let rels = text(&files, "ppt/slides/_rels/slide1.xml.rels");
    assert!(rels.contains(r#"Target="../media/image1.png""#));
    assert!(!slide.contains(r#"a:t>All the kinds"#) || slide.matches("All the").count() == 1);
}

#[test]
fn data_uris_decode_only_to_the_picture_formats_they_claim() {
    let (format, bytes) = data_image(&format!("data:image/png;base64,{PNG_1X1}")).unwrap();
    assert_eq!(format, ImageFormat::Png);
    assert_eq!(image_size(format, &bytes), Some((1, 1)));
    assert_eq!(base64_decode("aGk=").unwrap(), b"hi");
    assert_eq!(base64_decode("aG\nk").unwrap(), b"hi");
    assert!(base64_decode("a*b").is_none());
    // A GIF that says it is a PNG, SVG, and non-base64 data are not embedded.
    assert!(data_image("data:image/png;base64,R0lGODlhAQABAAAAACw=").is_none());
    assert!(data_image("data:image/svg+xml;base64,PHN2Zz4=").is_none());
    assert!(data_image("data:image/png,rawbytes").is_none());
    assert!(data_image("https://example.com/a.png").is_none());
    let gif = base64_decode("R0lGODlhAwACAIAAAP///wAAACwAAAAAAwACAAACAoRRADs=").unwrap();
    assert_eq!(image_size(ImageFormat::Gif, &gif), Some((3, 2)));
    let jpeg = [
        0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0, 0xff, 0xc0, 0, 11, 8, 0, 20, 0, 30, 1, 0, 0, 0,
    ];
    assert_eq!(image_size(ImageFormat::Jpeg, &jpeg), Some((30, 20)));
    assert_eq!(image_size(ImageFormat::Jpeg, &jpeg[..10]), None);
}

#[test]
fn a_title_missing_from_the_slide_is_added_where_there_is_room() {
    let course = sample(TRANSFORMER);
    let deck = Deck::from_course(&course);
    // "Tokens and embeddings" is not what the heading says: a title box is added above it.
    let DeckItem::Shape(title) = &deck.slides[0].items[0] else {
        panic!("the first item is the title")
    };
    assert_eq!(title.role, ShapeRole::Title);
    assert_eq!(
        title.text.as_ref().unwrap().paragraphs[0].text(),
        "Tokens and embeddings"
    );
    assert!(title.frame.y >= 0 && title.frame.y + title.frame.cy <= canvas_to_emu(20.0));
    // The Chinese sample's first heading is its title: it becomes the title, nothing is added.
    let zh = Deck::from_course(&sample(PHOTOSYNTHESIS));
    let SceneContent::Slide(slide) = &sample(PHOTOSYNTHESIS).scenes[0].content else {
        panic!("a slide")
    };
    assert_eq!(zh.slides[0].items.len(), slide.elements.len());
    let DeckItem::Shape(heading) = &zh.slides[0].items[0] else {
        panic!("a shape")
    };
    assert_eq!(heading.role, ShapeRole::Title);
}

#[test]
fn odd_but_valid_content_never_panics_and_stays_well_formed() {
    let charts: Vec<serde_json::Value> = [
        "bar", "column", "line", "pie", "ring", "area", "radar", "scatter",
    ]
    .iter()
    .flat_map(|kind| {
        [
            json!({"labels": [], "legends": [], "series": []}),
            json!({"labels": ["a"], "series": [[0]]}),
            json!({"labels": ["a", "b"], "series": [[-1, 1e300], [5]]}),
            json!({"labels": ["a", "b", "c", "d"], "legends": ["x", "y"], "series": [[0, 0, 0, 0], [1, 2, 3, 4]]}),
        ]
        .into_iter()
        .enumerate()
        .map(move |(i, data)| {
            json!({"type": "chart", "id": format!("{kind}{i}"), "left": 0, "top": 0,
                   "width": if i == 0 { 0 } else { 300 }, "height": 200,
                   "chart_type": kind, "data": data, "colors": ["nope", "#abc"]})
        })
    })
    .collect();
    let mut elements = charts;
    elements.extend([
        json!({"type": "text", "id": "empty", "left": 0, "top": 0, "width": 0, "height": 0, "markdown": ""}),
        json!({"type": "text", "id": "md", "left": -50, "top": 500, "width": 2000, "height": 10,
               "markdown": "# H\n\n> quote\n\n1. a\n   1. b\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n---\n\n![alt](x.png) [link](https://x) `code`  \nbreak ~~gone~~", "font_size": 200}),
        json!({"type": "table", "id": "empty-table", "left": 0, "top": 0, "width": 100, "height": 100, "rows": []}),
        json!({"type": "table", "id": "ragged", "left": 0, "top": 0, "width": 100, "height": 100, "rows": [["a"], ["b", "c", "d"], []], "header": false}),
        json!({"type": "latex", "id": "bad", "left": 0, "top": 0, "width": 10, "height": 10, "latex": "\\frac{\\sqrt[{}}{^_^_}}}}"}),
        json!({"type": "code", "id": "empty-code", "left": 0, "top": 0, "width": 10, "height": 10, "language": "", "code": ""}),
        json!({"type": "shape", "id": "clear", "left": 0, "top": 0, "width": 10, "height": 10, "shape": "triangle", "fill": "transparent", "text": "   "}),
        json!({"type": "shape", "id": "arrow", "left": 0, "top": 0, "width": 10, "height": 10, "shape": "arrow", "fill": "#ff000080", "text": "a\nb"}),
        json!({"type": "line", "id": "dot", "start": [5, 5], "end": [5, 5]}),
        json!({"type": "image", "id": "bad-data", "left": 0, "top": 0, "width": 10, "height": 10, "src": "data:image/png;base64,!!!"}),
        json!({"type": "video", "id": "v", "left": 0, "top": 0, "width": 10, "height": 10, "src": ""}),
    ]);
    let course = course_with("   ", json!(elements), "");
    let files = unpack(&course_to_pptx(&course, u64::MAX));
    assert_package_is_complete(&files);
    // A course without slides is still a presentation that opens.
    let quiz_only: Course = serde_json::from_value(json!({
        "format_version": 1, "id": "q", "title": "Quiz only", "language": "", "agents": [],
        "scenes": [{"id": "q", "title": "Quiz", "content": {"type": "quiz", "questions": []}}],
        "created_at": 0, "updated_at": 0
    }))
    .unwrap();
    let files = unpack(&course_to_pptx(&quiz_only, 0));
    assert_package_is_complete(&files);
    assert!(!text(&files, "ppt/presentation.xml").contains("sldIdLst"));
}

#[test]
fn a_different_writer_can_take_the_same_deck() {
    struct SlideTitles;
    impl DeckWriter for SlideTitles {
        fn write(&self, deck: &Deck) -> Vec<u8> {
            let titles: Vec<&str> = deck.slides.iter().map(|s| s.title.as_str()).collect();
            titles.join("\n").into_bytes()
        }
    }
    let deck = Deck::from_course(&sample(TRANSFORMER));
    let out = String::from_utf8(SlideTitles.write(&deck)).unwrap();
    assert!(out.starts_with("Tokens and embeddings\n"));
    assert_eq!(out.lines().count(), 7);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Text from every corner: markup, entities, Markdown and LaTeX syntax, controls, CJK,
    /// astral characters.
    fn any_text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("<".to_string()),
                Just("&amp;".to_string()),
                Just("**".to_string()),
                Just("_".to_string()),
                Just("\\frac{".to_string()),
                Just("}".to_string()),
                Just("^".to_string()),
                Just("\n".to_string()),
                Just("- ".to_string()),
                Just("1. ".to_string()),
                Just("```".to_string()),
                Just("| a |".to_string()),
                "[\\x00-\\x1f]",
                "[a-z ]{0,6}",
                "[光合作用𝛼é\u{fffe}\u{ffff}]{0,3}",
            ],
            0..24,
        )
        .prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn any_text_and_numbers_give_a_well_formed_deck(
            title in any_text(),
            text in any_text(),
            latex in any_text(),
            cell in any_text(),
            value in proptest::num::f64::NORMAL | proptest::num::f64::ZERO,
            left in -200.0..1200.0_f64,
            size in 0.0..2000.0_f64,
            kind in prop::sample::select(vec!["bar", "column", "line", "pie", "ring", "area", "radar", "scatter"]),
        ) {
            let course = course_with(&title, json!([
                {"type": "text", "id": "t", "left": left, "top": 10, "width": size, "height": size / 2.0, "markdown": text, "font_size": size / 10.0},
                {"type": "latex", "id": "l", "left": 10, "top": left / 2.0, "width": size, "height": 40, "latex": latex},
                {"type": "shape", "id": "s", "left": 0, "top": 0, "width": size, "height": 5, "shape": "ellipse", "fill": "#abc", "text": text},
                {"type": "table", "id": "tb", "left": 0, "top": 0, "width": size, "height": size, "rows": [[cell, "x"], [text, cell]]},
                {"type": "code", "id": "c", "left": 0, "top": 0, "width": size, "height": 30, "language": "rust", "code": text},
                {"type": "chart", "id": "ch", "left": left, "top": 0, "width": size, "height": size / 3.0,
                 "chart_type": kind, "data": {"labels": [cell, "b", "c"], "legends": [text], "series": [[value, -value, 1.0], [value]]}}
            ]), &text);
            let files = unpack(&course_to_pptx(&course, 0));
            assert_package_is_complete(&files);
        }
    }
}
