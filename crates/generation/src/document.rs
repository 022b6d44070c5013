//! The learner's document in the scene stages: each scene's content and script see the
//! passages of the document that match the scene best (words of its title, goal and key points;
//! pairs of characters for CJK text), in the document's order, so slides and scripts teach from
//! the document and not only its plan. Passages are sections of the prompt, the least matching
//! cut first when the prompt does not fit the model (see [`crate::fit`]).

use std::collections::{HashMap, HashSet};

use aula_providers::budget::{Cut, Sections};

use crate::fit::DOCUMENT_RANK;
use crate::outline::SceneOutline;

/// A passage is about this long: long enough to carry an idea, short enough to pick finely.
const PASSAGE_CHARS: usize = 700;
/// The most of a document one scene's prompt asks for before fitting.
pub const SCENE_DOCUMENT_CHARS: usize = 8_000;

/// English words too common to tell passages apart.
const STOPWORDS: &[&str] = &[
    "the", "and", "that", "this", "with", "from", "into", "what", "when", "which", "their",
    "there", "about", "have", "they", "them", "then", "than", "these", "those", "your", "will",
    "would", "could", "should", "does", "each", "more", "most", "some", "such", "only", "also",
    "very", "over", "under", "between", "because", "while", "where", "were", "been", "being",
    "how", "why",
];

use aula_text::is_cjk_letter as is_cjk;

/// The terms of a text: lower-cased words of four letters or more (not stopwords), and pairs of
/// adjacent CJK characters.
fn terms(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut word = String::new();
    let mut previous_cjk: Option<char> = None;
    for c in text.chars().chain(std::iter::once(' ')) {
        if is_cjk(c) {
            if let Some(p) = previous_cjk {
                out.insert(format!("{p}{c}"));
            }
            previous_cjk = Some(c);
        } else {
            previous_cjk = None;
        }
        if c.is_alphanumeric() && !is_cjk(c) {
            word.extend(c.to_lowercase());
        } else {
            if word.chars().count() >= 4 && !STOPWORDS.contains(&word.as_str()) {
                out.insert(std::mem::take(&mut word));
            }
            word.clear();
        }
    }
    out
}

/// The document cut into passages of about [`PASSAGE_CHARS`]: paragraphs, small ones joined,
/// long ones split at sentence ends.
fn passages(document: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let flush = |current: &mut String, out: &mut Vec<String>| {
        let text = current.trim();
        if !text.is_empty() {
            out.push(text.to_string());
        }
        current.clear();
    };
    for paragraph in document.split("\n\n") {
        for sentence in paragraph.split_inclusive(['.', '!', '?', '。', '！', '？', '\n']) {
            if current.chars().count() + sentence.chars().count() > PASSAGE_CHARS
                && !current.is_empty()
            {
                flush(&mut current, &mut out);
            }
            if sentence.chars().count() > PASSAGE_CHARS {
                let chars: Vec<char> = sentence.chars().collect();
                for piece in chars.chunks(PASSAGE_CHARS) {
                    out.push(piece.iter().collect::<String>().trim().to_string());
                }
                continue;
            }
            current.push_str(sentence);
        }
        if current.chars().count() >= PASSAGE_CHARS / 2 {
            flush(&mut current, &mut out);
        } else if !current.is_empty() {
            current.push('\n');
        }
    }
    flush(&mut current, &mut out);
    out.retain(|p| !p.is_empty());
    out
}

/// The passages of `document` that best match `scene`, at most `max_chars` of them, as prompt
/// sections in the document's order; each is cut (left out) in order of how little it matches.
/// With no passage matching at all, the document's start.
pub fn scene_passages(document: &str, scene: &SceneOutline, max_chars: usize) -> Sections {
    let all = passages(document);
    let mut wanted = terms(&scene.title);
    wanted.extend(terms(&scene.goal));
    for point in &scene.key_points {
        wanted.extend(terms(point));
    }
    let passage_terms: Vec<HashSet<String>> = all.iter().map(|p| terms(p)).collect();
    // Rarer terms tell more: weigh each by how few passages have it.
    let mut frequency: HashMap<&str, usize> = HashMap::new();
    for set in &passage_terms {
        for term in set.iter().filter(|t| wanted.contains(*t)) {
            *frequency.entry(term).or_default() += 1;
        }
    }
    let n = all.len().max(1) as f64;
    let scores: Vec<f64> = passage_terms
        .iter()
        .map(|set| {
            set.iter()
                .filter_map(|t| frequency.get(t.as_str()))
                .map(|&df| (1.0 + n / df as f64).ln())
                .sum()
        })
        .collect();
    let mut by_score: Vec<usize> = (0..all.len()).collect();
    by_score.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    if by_score.first().is_none_or(|&i| scores[i] <= 0.0) {
        by_score = (0..all.len()).collect();
    }
    let mut chosen = Vec::new();
    let mut used = 0;
    for i in by_score {
        let len = all[i].chars().count();
        if used + len > max_chars && !chosen.is_empty() {
            continue;
        }
        used += len;
        chosen.push(i);
        if used >= max_chars {
            break;
        }
    }
    // Least matching first among the chosen: it gets the lowest rank, so it is cut first.
    let mut by_match = chosen.clone();
    by_match.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    let rank_of: HashMap<usize, u8> = by_match
        .iter()
        .enumerate()
        .map(|(place, &i)| (i, DOCUMENT_RANK + (place.min(9) as u8)))
        .collect();
    chosen.sort_unstable();
    let mut sections = Sections::new();
    for i in chosen {
        sections.push(
            "a passage of the document",
            Cut::Drop { rank: rank_of[&i] },
            format!("{}\n\n", all[i]),
        );
    }
    sections
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outline::SceneKind;

    fn scene(title: &str, points: &[&str]) -> SceneOutline {
        SceneOutline {
            id: "s2".into(),
            kind: SceneKind::Slide,
            title: title.into(),
            goal: String::new(),
            key_points: points.iter().map(|p| p.to_string()).collect(),
            discussion: false,
        }
    }

    /// A document of four paragraphs, each long enough to be its own passage.
    fn document() -> String {
        let paragraph = |first: &str, rest: &str| format!("{first} {}", rest.repeat(8));
        [
            paragraph(
                "Photosynthesis happens in the chloroplasts of leaf cells.",
                "Leaves hold many of them near the light. ",
            ),
            paragraph(
                "The light reactions split water and release oxygen in the thylakoid membranes.",
                "They make ATP and NADPH for later. ",
            ),
            paragraph(
                "The Calvin cycle fixes carbon dioxide into sugar in the stroma.",
                "It spends the carriers to build glucose. ",
            ),
            paragraph(
                "Farmers measure crop yield in tonnes per hectare.",
                "Markets set the price each season. ",
            ),
        ]
        .join("\n\n")
    }

    fn text(sections: Sections) -> String {
        sections.fit(u32::MAX).text
    }

    #[test]
    fn a_scene_gets_the_passages_about_it_in_the_documents_order() {
        let calvin = scene(
            "The Calvin cycle",
            &["Carbon dioxide becomes sugar", "Stroma"],
        );
        let got = text(scene_passages(&document(), &calvin, 400));
        assert!(got.contains("Calvin cycle fixes carbon dioxide"), "{got}");
        assert!(!got.contains("Farmers"), "{got}");
        let light = scene(
            "Light reactions",
            &["Water is split", "Thylakoid membranes"],
        );
        let got = text(scene_passages(&document(), &light, 2_000));
        let light_at = got.find("light reactions split").unwrap();
        assert!(got.find("chloroplasts").is_none_or(|c| c < light_at));
    }

    #[test]
    fn the_least_matching_passage_is_cut_first() {
        let calvin = scene("The Calvin cycle and ATP", &["NADPH", "stroma sugar"]);
        let sections = scene_passages(&document(), &calvin, 10_000);
        let whole = sections.tokens();
        let fitted = sections.fit(whole - 5);
        assert!(
            fitted.text.contains("Calvin cycle fixes"),
            "{}",
            fitted.text
        );
        assert_eq!(fitted.cuts.len(), 1);
    }

    #[test]
    fn chinese_documents_match_by_character_pairs() {
        let doc = [
            "光合作用发生在叶绿体中。".repeat(40),
            "卡尔文循环把二氧化碳固定成糖。".repeat(30),
            "农民用吨来计算产量。".repeat(40),
        ]
        .join("\n\n");
        let got = text(scene_passages(
            &doc,
            &scene("卡尔文循环", &["二氧化碳变成糖"]),
            500,
        ));
        assert!(got.contains("卡尔文循环"), "{got}");
        assert!(!got.contains("农民"), "{got}");
    }

    #[test]
    fn with_nothing_matching_the_start_of_the_document_is_used() {
        let got = text(scene_passages(&document(), &scene("Zebras", &[]), 300));
        assert!(got.starts_with("Photosynthesis happens"), "{got}");
    }

    #[test]
    fn any_text_is_cut_into_passages_without_a_panic() {
        for doc in ["", "\n\n\n", &"é".repeat(5_000), &"一。".repeat(3_000)] {
            let got = scene_passages(doc, &scene("x", &["y"]), 1_000);
            assert!(got.fit(u32::MAX).text.chars().count() <= 1_000 + PASSAGE_CHARS + 4);
        }
    }
}
