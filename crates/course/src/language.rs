//! Which script a course's language is written in, and whether a text is written in it.
//!
//! Only the script is checked, never the language itself: English and French both pass as Latin,
//! Chinese and Japanese are told apart by kana. A text counts its letters by script, skipping what
//! is not prose (code spans, LaTeX commands and `$…$` math, URLs), and weighs them so that scripts
//! of different density compare fairly: a Han character or a Hangul syllable carries about as much
//! as three Latin letters, a kana two. Short texts and tags this module does not know always pass,
//! so a caller can check every reply and retry only when the check is sure.

/// A writing system, as a course's language tag implies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Script {
    Latin,
    Greek,
    Cyrillic,
    Hebrew,
    Arabic,
    Devanagari,
    Thai,
    /// Chinese characters alone (Chinese).
    Han,
    /// Kanji with hiragana and katakana (Japanese).
    Japanese,
    /// Korean.
    Hangul,
    /// Letters of any script not listed here.
    Other,
}

impl Script {
    /// The script's English name, for a note to a model ("Latin letters").
    pub fn describe(self) -> &'static str {
        match self {
            Script::Latin => "Latin letters",
            Script::Greek => "Greek letters",
            Script::Cyrillic => "Cyrillic letters",
            Script::Hebrew => "Hebrew letters",
            Script::Arabic => "Arabic script",
            Script::Devanagari => "Devanagari",
            Script::Thai => "Thai script",
            Script::Han => "Chinese characters",
            Script::Japanese => "Japanese kana and kanji",
            Script::Hangul => "Korean Hangul",
            Script::Other => "another script",
        }
    }
}

/// The script a language tag writes in, `None` for a tag this module does not know. A script
/// subtag wins (`sr-Latn` → Latin, `zh-Hant` → Han); otherwise the primary language decides.
pub fn script_of(tag: &str) -> Option<Script> {
    let mut parts = tag.trim().split(['-', '_']);
    let primary = parts.next().unwrap_or_default().to_ascii_lowercase();
    for subtag in parts {
        let script = match subtag.to_ascii_lowercase().as_str() {
            "latn" => Script::Latin,
            "grek" => Script::Greek,
            "cyrl" => Script::Cyrillic,
            "hebr" => Script::Hebrew,
            "arab" => Script::Arabic,
            "deva" => Script::Devanagari,
            "thai" => Script::Thai,
            "hans" | "hant" | "hani" => Script::Han,
            "jpan" => Script::Japanese,
            "kore" | "hang" => Script::Hangul,
            _ => continue,
        };
        return Some(script);
    }
    Some(match primary.as_str() {
        "en" | "fr" | "de" | "es" | "it" | "pt" | "nl" | "sv" | "da" | "no" | "nb" | "nn"
        | "fi" | "is" | "pl" | "cs" | "sk" | "sl" | "hr" | "bs" | "ro" | "hu" | "tr" | "az"
        | "uz" | "id" | "ms" | "vi" | "tl" | "fil" | "ca" | "eu" | "gl" | "et" | "lv" | "lt"
        | "sq" | "sw" | "af" | "ga" | "cy" | "mt" | "lb" | "eo" | "la" | "yo" | "ha" | "zu"
        | "xh" => Script::Latin,
        "el" => Script::Greek,
        "ru" | "uk" | "be" | "bg" | "sr" | "mk" | "kk" | "ky" | "mn" | "tg" => Script::Cyrillic,
        "he" | "iw" | "yi" => Script::Hebrew,
        "ar" | "fa" | "ur" | "ps" => Script::Arabic,
        "hi" | "mr" | "ne" | "sa" => Script::Devanagari,
        "th" => Script::Thai,
        "zh" | "yue" | "cmn" => Script::Han,
        "ja" => Script::Japanese,
        "ko" => Script::Hangul,
        _ => return None,
    })
}

/// Texts whose letters weigh less than this (in Latin-letter equivalents) always pass.
pub const MIN_CHECKED_WEIGHT: u32 = 12;

/// The share of a text's letter weight that must be in the course's script.
pub const MIN_SHARE: f32 = 0.5;

/// Han text with kana on at least this share of its characters reads as Japanese, not Chinese.
const KANA_SHARE_OF_JAPANESE: f32 = 0.1;

/// Japanese text of at least this many Han characters with no kana at all reads as Chinese.
const HAN_WITHOUT_KANA: u32 = 20;

/// What [`writes_in`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LanguageCheck {
    /// The script the tag writes in; `None` for a tag this module does not know.
    pub expected: Option<Script>,
    /// The script with the most letter weight; `None` when the text has no letters counted.
    pub found: Option<Script>,
    /// The letters counted, weighed in Latin-letter equivalents.
    pub weight: u32,
    /// The share (0 to 1) of that weight in the expected script; 1 when nothing was counted or
    /// nothing is expected.
    pub share: f32,
    /// Whether the text is in the expected script (always, for a short text or an unknown tag).
    pub passes: bool,
}

impl LanguageCheck {
    /// A sentence for the model when the check fails ("Most of this text (96%) is in Latin
    /// letters; the course's language is written in Chinese characters."), `None` when it passes.
    /// The caller adds which language to write in.
    pub fn note(&self) -> Option<String> {
        if self.passes {
            return None;
        }
        let expected = self.expected?;
        let found = self.found?;
        Some(match (expected, found) {
            (Script::Japanese, Script::Han) if self.share >= MIN_SHARE => {
                "This text is written in Chinese characters without any kana, as Chinese is; \
                 Japanese mixes kanji with kana."
                    .to_string()
            }
            (Script::Han, Script::Japanese) => {
                "This text mixes kana with its Chinese characters, so it reads as Japanese."
                    .to_string()
            }
            _ => format!(
                "Only {}% of this text is in {}, the script of the course's language; most of it \
                 is in {}.",
                (self.share * 100.0).round() as u32,
                expected.describe(),
                found.describe()
            ),
        })
    }
}

/// Whether `text` is written in the script of the language `tag`.
pub fn writes_in(text: &str, tag: &str) -> LanguageCheck {
    writes_in_all([text], tag)
}

/// [`writes_in`] over several texts counted together, e.g. every learner-visible text of a scene:
/// short labels that pass alone still count towards the whole.
pub fn writes_in_all<'a>(texts: impl IntoIterator<Item = &'a str>, tag: &str) -> LanguageCheck {
    let mut tally = Tally::default();
    for text in texts {
        tally.count(text);
    }
    tally.check(script_of(tag))
}

/// A letter's class; Greek and letter-like symbols count as neutral outside a Greek course,
/// since science writes them as symbols (α, π, µ).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Letter {
    Latin,
    Greek,
    Cyrillic,
    Hebrew,
    Arabic,
    Devanagari,
    Thai,
    Han,
    Kana,
    Hangul,
    Other,
    Symbol,
}

const CLASSES: usize = 12;

impl Letter {
    fn of(c: char) -> Option<Letter> {
        if c.is_ascii() {
            return c.is_ascii_alphabetic().then_some(Letter::Latin);
        }
        if !c.is_alphabetic() {
            return None;
        }
        Some(match c as u32 {
            0xB5 => Letter::Symbol, // micro sign
            0xAA | 0xBA | 0xC0..=0x24F | 0x1E00..=0x1EFF | 0x2C60..=0x2C7F | 0xA720..=0xA7FF => {
                Letter::Latin
            }
            0xFF21..=0xFF3A | 0xFF41..=0xFF5A => Letter::Latin, // full-width
            0x250..=0x2FF | 0x1D00..=0x1DBF => Letter::Symbol,  // IPA, modifier letters
            0x370..=0x3FF | 0x1F00..=0x1FFF => Letter::Greek,
            0x400..=0x52F | 0x1C80..=0x1C8F | 0x2DE0..=0x2DFF | 0xA640..=0xA69F => Letter::Cyrillic,
            0x590..=0x5FF | 0xFB1D..=0xFB4F => Letter::Hebrew,
            0x600..=0x6FF | 0x750..=0x77F | 0x8A0..=0x8FF | 0xFB50..=0xFDFF | 0xFE70..=0xFEFF => {
                Letter::Arabic
            }
            0x900..=0x97F | 0xA8E0..=0xA8FF => Letter::Devanagari,
            0xE00..=0xE7F => Letter::Thai,
            0x3040..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F => Letter::Kana,
            0x1100..=0x11FF | 0x3130..=0x318F | 0xA960..=0xA97F | 0xAC00..=0xD7FF => Letter::Hangul,
            0x2E80..=0x2FDF
            | 0x3005..=0x3007
            | 0x3021..=0x3029
            | 0x3100..=0x312F
            | 0x31A0..=0x31BF
            | 0x3400..=0x4DBF
            | 0x4E00..=0x9FFF
            | 0xF900..=0xFAFF
            | 0x20000..=0x3FFFF => Letter::Han,
            // Letter-like and number forms, circled letters, mathematical alphanumerics.
            0x2100..=0x218F | 0x24B6..=0x24E9 | 0x1D400..=0x1D7FF => Letter::Symbol,
            _ => Letter::Other,
        })
    }

    /// Latin-letter equivalents per character.
    fn weight(self, c: char) -> u32 {
        match self {
            Letter::Han => 3,
            Letter::Hangul if ('\u{AC00}'..='\u{D7A3}').contains(&c) => 3,
            Letter::Kana => 2,
            _ => 1,
        }
    }
}

#[derive(Default)]
struct Tally {
    weight: [u32; CLASSES],
    chars: [u32; CLASSES],
}

impl Tally {
    fn add(&mut self, letter: Letter, c: char) {
        let i = letter as usize;
        self.weight[i] = self.weight[i].saturating_add(letter.weight(c));
        self.chars[i] = self.chars[i].saturating_add(1);
    }

    /// Counts the letters of `text`, skipping code spans, LaTeX commands, `$…$` math and URLs.
    /// Inside a code span or math only ASCII is skipped, so an unmatched delimiter hides no prose
    /// of a non-Latin script.
    fn count(&mut self, text: &str) {
        let mut ascii_skip_until = 0usize; // byte offset: skip ASCII letters before it
        let mut no_fence_after = false;
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            match c {
                '\\' => {
                    // A LaTeX command: the backslash and the letters after it.
                    while chars.next_if(|(_, c)| c.is_ascii_alphabetic()).is_some() {}
                }
                '`' if at >= ascii_skip_until => {
                    let mut run = 1;
                    while chars.next_if(|(_, c)| *c == '`').is_some() {
                        run += 1;
                    }
                    let after = at + run;
                    let closing = if run >= 3 {
                        if no_fence_after {
                            None
                        } else {
                            let found = closing_fence(&text[after..]);
                            no_fence_after = found.is_none();
                            found
                        }
                    } else {
                        closing_span(&text[after..], run)
                    };
                    if let Some(len) = closing {
                        ascii_skip_until = after + len;
                    }
                }
                '$' if at >= ascii_skip_until => {
                    let rest = &text[at + 1..];
                    let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
                    if let Some(end) = line.find('$') {
                        ascii_skip_until = at + 1 + end + 1;
                    }
                }
                'h' if at >= ascii_skip_until
                    && (text[at..].starts_with("https://")
                        || text[at..].starts_with("http://")) =>
                {
                    let rest = &text[at..];
                    let len = rest
                        .find(|c: char| c.is_whitespace() || matches!(c, ')' | ']' | '>' | '"'))
                        .unwrap_or(rest.len());
                    ascii_skip_until = at + len;
                }
                c if c.is_ascii() && at < ascii_skip_until => {}
                c => {
                    if let Some(letter) = Letter::of(c) {
                        self.add(letter, c);
                    }
                }
            }
        }
    }

    fn check(&self, expected: Option<Script>) -> LanguageCheck {
        let w = |l: Letter| self.weight[l as usize];
        let n = |l: Letter| self.chars[l as usize];
        let greek_is_prose = expected == Some(Script::Greek);
        let japanese_like = {
            let (han, kana) = (n(Letter::Han), n(Letter::Kana));
            kana > 0 && kana as f32 >= KANA_SHARE_OF_JAPANESE * (han + kana) as f32
        };
        // Weight per script, with Han and kana folded into Japanese or Chinese.
        let han_and_kana = w(Letter::Han).saturating_add(w(Letter::Kana));
        let scripts = [
            (Script::Latin, w(Letter::Latin)),
            (
                Script::Greek,
                if greek_is_prose { w(Letter::Greek) } else { 0 },
            ),
            (Script::Cyrillic, w(Letter::Cyrillic)),
            (Script::Hebrew, w(Letter::Hebrew)),
            (Script::Arabic, w(Letter::Arabic)),
            (Script::Devanagari, w(Letter::Devanagari)),
            (Script::Thai, w(Letter::Thai)),
            (
                if japanese_like {
                    Script::Japanese
                } else {
                    Script::Han
                },
                han_and_kana,
            ),
            (Script::Hangul, w(Letter::Hangul)),
            (Script::Other, w(Letter::Other)),
        ];
        let weight = scripts
            .iter()
            .fold(0u32, |sum, (_, w)| sum.saturating_add(*w));
        let found = scripts
            .iter()
            .filter(|(_, w)| *w > 0)
            .max_by_key(|(_, w)| *w)
            .map(|(s, _)| *s);
        let in_script = match expected {
            None => weight,
            Some(Script::Japanese) => han_and_kana,
            // Kana are not Chinese; Chinese text with Japanese quoted keeps its Han.
            Some(Script::Han) => w(Letter::Han),
            Some(script) => scripts
                .iter()
                .filter(|(s, _)| *s == script)
                .map(|(_, w)| *w)
                .sum(),
        };
        let share = if weight == 0 {
            1.0
        } else {
            in_script as f32 / weight as f32
        };
        let script_passes = match expected {
            None => true,
            Some(Script::Han) => share >= MIN_SHARE && !japanese_like,
            Some(Script::Japanese) => {
                share >= MIN_SHARE && (n(Letter::Kana) > 0 || n(Letter::Han) < HAN_WITHOUT_KANA)
            }
            Some(_) => share >= MIN_SHARE,
        };
        // Japanese without a single kana is Chinese, however much of it is in the right script.
        let found = if expected == Some(Script::Japanese) && share >= MIN_SHARE && !script_passes {
            Some(Script::Han)
        } else {
            found
        };
        LanguageCheck {
            expected,
            found,
            weight,
            share,
            passes: weight < MIN_CHECKED_WEIGHT || script_passes,
        }
    }
}

/// The length of `rest` up to and including the next run of exactly `run` backticks on this line.
fn closing_span(rest: &str, run: usize) -> Option<usize> {
    let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let start = i;
            while i < bytes.len() && bytes[i] == b'`' {
                i += 1;
            }
            if i - start == run {
                return Some(i);
            }
        } else {
            i += 1;
        }
    }
    None
}

/// The length of `rest` up to and including the next run of three or more backticks.
fn closing_fence(rest: &str) -> Option<usize> {
    let start = rest.find("```")?;
    let run = rest[start..].bytes().take_while(|b| *b == b'`').count();
    Some(start + run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn tags_map_to_their_script_loosely() {
        assert_eq!(script_of("en"), Some(Script::Latin));
        assert_eq!(script_of("fr-CA"), Some(Script::Latin));
        assert_eq!(script_of("zh"), Some(Script::Han));
        assert_eq!(script_of("zh-CN"), Some(Script::Han));
        assert_eq!(script_of("zh_Hans"), Some(Script::Han));
        assert_eq!(script_of("ZH-hant-TW"), Some(Script::Han));
        assert_eq!(script_of("ja-JP"), Some(Script::Japanese));
        assert_eq!(script_of("ko"), Some(Script::Hangul));
        assert_eq!(script_of("ru"), Some(Script::Cyrillic));
        assert_eq!(script_of("sr-Latn"), Some(Script::Latin));
        assert_eq!(script_of("ar-EG"), Some(Script::Arabic));
        assert_eq!(script_of("tlh"), None);
        assert_eq!(script_of(""), None);
    }

    #[test]
    fn an_english_reply_fails_a_chinese_course_and_says_why() {
        let check = writes_in(
            "Photosynthesis turns light into chemical energy stored in glucose.",
            "zh-CN",
        );
        assert!(!check.passes);
        assert_eq!(check.expected, Some(Script::Han));
        assert_eq!(check.found, Some(Script::Latin));
        assert!(check.share < 0.01);
        let note = check.note().unwrap_or_default();
        assert!(note.contains("Chinese characters"), "{note}");
        assert!(note.contains("Latin letters"), "{note}");
    }

    #[test]
    fn chinese_with_english_technical_terms_passes_a_chinese_course() {
        for text in [
            "DNA 是由 ATP 提供能量的",
            "细胞通过 ATP 合酶把 ADP 和磷酸结合成 ATP，为 DNA 复制提供能量。",
            "在 Python 中，用 `list.append()` 给列表添加元素。",
            "当 $\\frac{\\partial f}{\\partial x} = 0$ 时，函数取得极值。",
            "详见 https://en.wikipedia.org/wiki/Photosynthesis 的说明。",
        ] {
            let check = writes_in(text, "zh");
            assert!(check.passes, "{text}: {check:?}");
            assert_eq!(check.note(), None);
        }
    }

    #[test]
    fn an_english_text_quoting_a_chinese_word_passes_an_english_course() {
        let check = writes_in(
            "The Chinese word for photosynthesis is 光合作用, literally light-combine-action.",
            "en",
        );
        assert!(check.passes, "{check:?}");
        assert_eq!(check.found, Some(Script::Latin));
    }

    #[test]
    fn a_chinese_reply_fails_an_english_course() {
        let check = writes_in("光合作用把光能转化为储存在葡萄糖中的化学能。", "en");
        assert!(!check.passes);
        assert_eq!(check.found, Some(Script::Han));
    }

    #[test]
    fn only_the_script_is_checked_so_french_passes_an_english_course() {
        let check = writes_in(
            "La photosynthèse transforme la lumière en énergie chimique.",
            "en",
        );
        assert!(check.passes);
        assert!(writes_in("Photosynthesis turns light into energy.", "de").passes);
    }

    #[test]
    fn short_texts_always_pass() {
        assert!(writes_in("Summary", "zh-CN").passes);
        assert!(writes_in("ATP synthase", "ja").passes);
        assert!(writes_in("总结", "en").passes);
        assert!(writes_in("", "ru").passes);
        assert!(writes_in("42 + 7 = 49 !!", "ja").passes);
        assert!(!writes_in("Introduction", "zh").passes);
    }

    #[test]
    fn japanese_and_chinese_are_told_apart_by_kana() {
        let japanese =
            "光合成は、光のエネルギーを使って二酸化炭素と水からブドウ糖を作るしくみです。";
        let chinese = "光合作用是植物利用光能把二氧化碳和水转化为葡萄糖并释放氧气的过程。";
        assert!(writes_in(japanese, "ja-JP").passes);
        assert!(!writes_in(japanese, "zh-CN").passes);
        assert_eq!(writes_in(japanese, "zh-CN").found, Some(Script::Japanese));
        let check = writes_in(chinese, "ja");
        assert!(!check.passes, "{check:?}");
        assert_eq!(check.found, Some(Script::Han));
        assert!(check.note().unwrap_or_default().contains("kana"));
        assert!(!writes_in("Photosynthesis makes sugar from light and water.", "ja").passes);
    }

    #[test]
    fn other_scripts_are_checked_the_same_way() {
        let russian = "Фотосинтез превращает энергию света в химическую энергию.";
        assert!(writes_in(russian, "ru").passes);
        assert!(!writes_in(russian, "en").passes);
        assert!(!writes_in("Photosynthesis turns light into energy.", "ru").passes);
        let korean = "광합성은 빛 에너지를 화학 에너지로 바꾸는 과정입니다.";
        assert!(writes_in(korean, "ko").passes);
        assert!(!writes_in(korean, "zh").passes);
        assert!(writes_in("التمثيل الضوئي يحول طاقة الضوء إلى طاقة كيميائية", "ar").passes);
    }

    #[test]
    fn greek_symbols_in_science_do_not_count_against_a_course() {
        let check = writes_in("波长 λ 与频率 ν 的乘积等于光速，α 粒子带正电。", "zh");
        assert!(check.passes, "{check:?}");
        let check = writes_in(
            "The wavelength λ times the frequency ν gives c; µ is micro.",
            "en",
        );
        assert!(check.passes, "{check:?}");
        assert!(writes_in("Η φωτοσύνθεση μετατρέπει το φως σε ενέργεια.", "el").passes);
    }

    #[test]
    fn code_math_and_links_are_not_counted_as_prose() {
        let code = "```python\ndef photosynthesis(light, water, carbon_dioxide):\n    return glucose\n```\n这个函数返回葡萄糖。";
        let check = writes_in(code, "zh");
        assert!(check.passes, "{check:?}");
        assert!(writes_in("`photosynthesis_rate_per_leaf_area` 表示速率", "zh").passes);
        // An unmatched backtick hides nothing: the English after it still counts.
        let stray = "` Photosynthesis turns light into chemical energy.";
        assert!(!writes_in(stray, "zh").passes);
    }

    #[test]
    fn an_unknown_tag_checks_nothing() {
        let check = writes_in("Photosynthesis turns light into chemical energy.", "tlh");
        assert!(check.passes);
        assert_eq!(check.expected, None);
        assert_eq!(check.note(), None);
    }

    #[test]
    fn several_texts_are_weighed_together() {
        let labels = ["Light", "Water", "Sugar", "Oxygen"];
        assert!(labels.iter().all(|l| writes_in(l, "zh").passes));
        assert!(!writes_in_all(labels, "zh").passes);
        assert!(writes_in_all(["光", "水", "糖", "氧气", "ATP"], "zh").passes);
    }

    proptest! {
        #[test]
        fn the_check_never_panics_and_its_share_is_a_share(
            text in any::<String>(),
            tag in any::<String>(),
        ) {
            let check = writes_in(&text, &tag);
            prop_assert!((0.0..=1.0).contains(&check.share));
            if check.weight < MIN_CHECKED_WEIGHT || check.expected.is_none() {
                prop_assert!(check.passes);
            }
            prop_assert_eq!(check.note().is_some(), !check.passes);
        }

        #[test]
        fn markup_heavy_text_never_panics(
            text in "[`$\\\\hpst:/ a-zA-Z光合の가\u{301}\n]{0,80}",
            tag in prop::sample::select(vec!["en", "zh-CN", "ja", "ko", "ru", "xx"]),
        ) {
            let check = writes_in(&text, tag);
            prop_assert!((0.0..=1.0).contains(&check.share));
        }
    }
}
