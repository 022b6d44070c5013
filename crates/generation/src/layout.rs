//! A generated slide's text boxes fitted to their text, by code: a small model gives a box the
//! height of one line for three lines of text, and stacks boxes on top of each other (run 7's
//! second English slide showed seven boxes 16 units high, overlapping, each cut to a line). Code
//! knows how much room a text needs, so it decides:
//! 1. a text box shorter than its text grows to fit it;
//! 2. a text box that overlaps one above it moves down below it;
//! 3. when the boxes then run off the bottom of the canvas, every text's font shrinks (to 60% at
//!    least) and the boxes are fitted again from their original places.
//!
//! Only text boxes are moved; a shape may sit behind text, and other elements keep their places.
//! The measure is an estimate (Latin letters about 0.55 em wide, CJK characters 1 em, lines 1.5
//! em high), generous enough that text fits in the browser and in PowerPoint.

use aula_course::scene::CANVAS_HEIGHT;
use serde_json::Value;

use aula_text::is_cjk;

/// A text's font size when the element gives none: the theme's body size.
const BODY_FONT: f64 = 20.0;
/// The room left between a box and the one it is moved below.
const GAP: f64 = 12.0;
/// The margin kept at the bottom of the canvas.
const MARGIN: f64 = 20.0;
/// The least a font is shrunk to, as a share of its size.
const SMALLEST_SCALE: f64 = 0.6;

/// One text box, as read from the slide's JSON.
#[derive(Debug, Clone, Copy)]
struct TextBox {
    index: usize,
    left: f64,
    top: f64,
    width: f64,
    height: f64,
}

impl TextBox {
    fn bottom(&self) -> f64 {
        self.top + self.height
    }

    /// Whether the two boxes share some area (touching edges do not count).
    fn overlaps(&self, other: &TextBox) -> bool {
        self.left < other.left + other.width
            && other.left < self.left + self.width
            && self.top < other.bottom()
            && other.top < self.bottom()
    }
}

/// Fits the text boxes among `elements` (a slide's elements as JSON) to their text; returns
/// notes saying what moved.
pub fn fit_text_boxes(elements: &mut [Value]) -> Vec<String> {
    let texts: Vec<(usize, String, f64)> = elements
        .iter()
        .enumerate()
        .filter(|(_, e)| e["type"] == "text")
        .map(|(i, e)| {
            let markdown = e["markdown"].as_str().unwrap_or_default().to_owned();
            let font = e["font_size"]
                .as_f64()
                .filter(|f| *f > 0.0)
                .unwrap_or(BODY_FONT);
            (i, markdown, font)
        })
        .collect();
    if texts.is_empty() {
        return Vec::new();
    }
    let original: Vec<TextBox> = texts
        .iter()
        .filter_map(|(i, _, _)| read_box(&elements[*i], *i))
        .collect();
    if original.len() != texts.len() {
        return Vec::new(); // a box without numbers: the course's checks will say so
    }
    let mut scale = 1.0;
    let mut placed = place(&original, &texts, scale);
    let lowest = placed.iter().map(TextBox::bottom).fold(0.0, f64::max);
    if lowest > CANVAS_HEIGHT - MARGIN {
        // The stack as it stands, and the room it has from its top: shrink by the ratio.
        let top = placed.iter().map(|b| b.top).fold(f64::MAX, f64::min);
        let room = CANVAS_HEIGHT - MARGIN - top;
        scale = (room / (lowest - top)).clamp(SMALLEST_SCALE, 1.0);
        placed = place(&original, &texts, scale);
    }
    let mut notes = Vec::new();
    let (mut grown, mut moved) = (0, 0);
    for (before, after) in original.iter().zip(&placed) {
        let Some(element) = elements[after.index].as_object_mut() else {
            continue;
        };
        if after.height > before.height + 0.05 {
            grown += 1;
            element.insert("height".into(), Value::from(round(after.height)));
        }
        if (after.top - before.top).abs() > 0.05 {
            moved += 1;
            element.insert("top".into(), Value::from(round(after.top)));
        }
    }
    if scale < 1.0 {
        for (i, _, font) in &texts {
            if let Some(element) = elements[*i].as_object_mut() {
                element.insert("font_size".into(), Value::from(round(font * scale)));
            }
        }
        notes.push(format!(
            "the slide's texts did not fit the canvas: their fonts were made {}% of their size",
            (scale * 100.0).round()
        ));
    }
    if grown > 0 {
        notes.push(format!(
            "{grown} text box(es) were made tall enough for their text"
        ));
    }
    if moved > 0 {
        notes.push(format!(
            "{moved} text box(es) that overlapped another were moved below it"
        ));
    }
    notes
}

fn read_box(element: &Value, index: usize) -> Option<TextBox> {
    Some(TextBox {
        index,
        left: element["left"].as_f64()?,
        top: element["top"].as_f64()?,
        width: element["width"].as_f64()?,
        height: element["height"].as_f64()?,
    })
}

/// The boxes grown to their text at `scale` of their fonts, then moved down, in reading order,
/// below any box they overlap. Returned in the order of `original`.
fn place(original: &[TextBox], texts: &[(usize, String, f64)], scale: f64) -> Vec<TextBox> {
    let mut boxes: Vec<TextBox> = original
        .iter()
        .zip(texts)
        .map(|(b, (_, markdown, font))| TextBox {
            height: b.height.max(needed_height(markdown, b.width, font * scale)),
            ..*b
        })
        .collect();
    // Reading order, top to bottom then left to right. A slide has a few boxes: an insertion
    // sort, which costs the worker far less code than the standard library's sorts.
    let mut order: Vec<usize> = Vec::with_capacity(boxes.len());
    for i in 0..boxes.len() {
        let key = |j: usize| (original[j].top, original[j].left);
        let at = order
            .iter()
            .position(|&j| key(i) < key(j))
            .unwrap_or(order.len());
        order.insert(at, i);
    }
    let mut done: Vec<usize> = Vec::new();
    for &i in &order {
        // Each move goes below a placed box, so this ends within as many steps as boxes.
        for _ in 0..=done.len() {
            let below = done
                .iter()
                .map(|&j| boxes[j])
                .filter(|other| boxes[i].overlaps(other))
                .map(|other| other.bottom())
                .fold(None, |lowest: Option<f64>, b| {
                    Some(lowest.map_or(b, |l| l.max(b)))
                });
            match below {
                Some(bottom) => boxes[i].top = bottom + GAP,
                None => break,
            }
        }
        done.push(i);
    }
    boxes
}

/// The height `markdown` needs in a box `width` wide at `font`: its lines, each wrapped at an
/// estimate of the characters a line holds, 1.5 em each (the height per line the slide rules ask
/// the model for).
fn needed_height(markdown: &str, width: f64, font: f64) -> f64 {
    let per_line = (width / (font * 0.55)).max(1.0);
    let lines: f64 = markdown
        .lines()
        .map(|line| {
            let ems: f64 = line
                .trim()
                .chars()
                .filter(|c| !matches!(c, '*' | '_' | '`' | '#'))
                .map(|c| if is_cjk(c) { 1.0 / 0.55 } else { 1.0 })
                .sum();
            (ems / per_line).ceil().max(1.0)
        })
        .sum::<f64>()
        .max(1.0);
    lines * font * 1.5
}

fn round(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text(id: &str, top: f64, height: f64, markdown: &str) -> Value {
        json!({"type": "text", "id": id, "left": 635, "top": top, "width": 165, "height": height, "markdown": markdown})
    }

    fn boxes(elements: &[Value]) -> Vec<(f64, f64, f64)> {
        elements
            .iter()
            .map(|e| {
                (
                    e["top"].as_f64().unwrap(),
                    e["height"].as_f64().unwrap(),
                    e["font_size"].as_f64().unwrap_or(BODY_FONT),
                )
            })
            .collect()
    }

    #[test]
    fn boxes_that_fit_and_do_not_overlap_are_left_as_they_are() {
        let mut elements = vec![
            json!({"type": "text", "id": "t", "left": 40, "top": 30, "width": 900, "height": 60, "markdown": "# Photosynthesis", "font_size": 32}),
            json!({"type": "text", "id": "b", "left": 40, "top": 110, "width": 900, "height": 100, "markdown": "- Light in\n- Sugar out"}),
            json!({"type": "shape", "id": "s", "left": 30, "top": 100, "width": 920, "height": 120, "shape": "rectangle", "fill": "#eef"}),
        ];
        let before = elements.clone();
        assert_eq!(fit_text_boxes(&mut elements), Vec::<String>::new());
        assert_eq!(elements, before);
    }

    #[test]
    fn run_sevens_stacked_one_line_boxes_are_grown_moved_apart_and_kept_on_the_canvas() {
        let lines = [
            "Chemical Reactions in Photosynthesis",
            "The key steps of photosynthesis",
            "Light absorption",
            "Glucose formation",
            "Oxygen production",
            "The chemical equation of photosynthesis",
            "Light absorption by chlorophyll",
        ];
        let mut elements: Vec<Value> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| text(&format!("e{i}"), 80.0 + 16.0 * i as f64, 16.0, l))
            .collect();
        let notes = fit_text_boxes(&mut elements);
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(notes[0].starts_with("the slide's texts did not fit the canvas"));
        let placed = boxes(&elements);
        for (i, (top, height, font)) in placed.iter().enumerate() {
            assert!(*font < BODY_FONT && *font >= BODY_FONT * SMALLEST_SCALE - 0.1);
            assert!(
                *height >= needed_height(lines[i], 165.0, *font) - 0.1,
                "box {i} fits its text"
            );
            if i > 0 {
                let (above_top, above_height, _) = placed[i - 1];
                assert!(
                    *top >= above_top + above_height,
                    "box {i} is below box {}",
                    i - 1
                );
            }
        }
        let (top, height, _) = placed[placed.len() - 1];
        assert!(top < CANVAS_HEIGHT, "the last box starts on the canvas");
        assert!(
            top + height <= CANVAS_HEIGHT + 1.0,
            "and ends on it: {placed:?}"
        );
    }

    #[test]
    fn a_short_box_grows_and_the_box_it_now_overlaps_moves_below_it() {
        let mut elements = vec![
            text(
                "a",
                100.0,
                30.0,
                "A long line of text that needs three or four lines in this narrow box",
            ),
            text("b", 140.0, 40.0, "Next"),
        ];
        let notes = fit_text_boxes(&mut elements);
        assert_eq!(
            notes,
            [
                "1 text box(es) were made tall enough for their text",
                "1 text box(es) that overlapped another were moved below it"
            ]
        );
        let placed = boxes(&elements);
        assert!(placed[0].1 > 30.0);
        assert_eq!(placed[1].0, round(placed[0].0 + placed[0].1 + GAP));
        assert_eq!(placed[1].1, 40.0);
    }

    #[test]
    fn chinese_text_counts_each_character_as_wide_as_the_font() {
        let latin = needed_height("abcdefghijklmnopqrstuvwxyzabcdefghij", 200.0, 20.0);
        let chinese = needed_height("光合作用是植物利用光能把二氧化碳和水变成糖", 200.0, 20.0);
        assert!(chinese > latin, "{chinese} > {latin}");
        // Two lines of markdown are two lines at least.
        assert_eq!(needed_height("a\nb", 900.0, 20.0), 2.0 * 30.0);
    }
}
