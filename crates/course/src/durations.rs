//! How long things take during playback, in milliseconds at 1× speed. This table is the only
//! place these numbers live; the timeline, the player and every export read them from here.

use crate::action::Action;

/// Opening the whiteboard over the slide.
pub const WB_OPEN_MS: u64 = 2000;
/// Drawing one element (text, shape, chart, formula, table, line).
pub const WB_DRAW_MS: u64 = 800;
/// Typing a code block: a base, a cost per line, and a cap.
pub const WB_CODE_BASE_MS: u64 = 800;
pub const WB_CODE_PER_LINE_MS: u64 = 50;
pub const WB_CODE_MAX_MS: u64 = 3000;
/// Editing lines of a code block.
pub const WB_EDIT_CODE_MS: u64 = 600;
/// Removing one element.
pub const WB_DELETE_MS: u64 = 300;
/// Wiping the board: elements leave in a cascade, a base plus a cost per element, capped.
pub const WB_CLEAR_BASE_MS: u64 = 380;
pub const WB_CLEAR_PER_ELEMENT_MS: u64 = 55;
pub const WB_CLEAR_MAX_MS: u64 = 1400;
/// Closing the whiteboard.
pub const WB_CLOSE_MS: u64 = 700;
/// A message to the interactive widget, and the pause after it.
pub const WIDGET_MS: u64 = 300;
/// Spotlight and laser clear this long after the latest effect started.
pub const EFFECT_AUTO_CLEAR_MS: u64 = 5000;
/// A discussion action waits this long before the learner is offered to join.
pub const DISCUSSION_TRIGGER_DELAY_MS: u64 = 3000;
/// The longest a video is waited for.
pub const MAX_VIDEO_WAIT_MS: u64 = 5 * 60 * 1000;

/// Reading-time estimate for speech without audio: never shorter than this.
pub const READING_MIN_MS: u64 = 2000;
/// Per character, for text written mostly in Chinese, Japanese or Korean.
pub const READING_PER_CJK_CHAR_MS: u64 = 150;
/// Per word, for everything else.
pub const READING_PER_WORD_MS: u64 = 240;
/// Text counts as CJK when more than this share of its non-space characters are CJK.
pub const CJK_SHARE_THRESHOLD: f64 = 0.3;

/// Whether `text` reads as Chinese, Japanese or Korean (counted per character, not per word).
pub fn is_mostly_cjk(text: &str) -> bool {
    let (mut cjk, mut total) = (0usize, 0usize);
    for c in text.chars().filter(|c| !c.is_whitespace()) {
        total += 1;
        if aula_text::is_cjk(c) {
            cjk += 1;
        }
    }
    total > 0 && cjk as f64 / total as f64 > CJK_SHARE_THRESHOLD
}

/// How long reading `text` aloud takes when no audio length is known.
pub fn reading_time_ms(text: &str) -> u64 {
    let estimate = if is_mostly_cjk(text) {
        let chars = text.chars().filter(|c| !c.is_whitespace()).count() as u64;
        chars * READING_PER_CJK_CHAR_MS
    } else {
        text.split_whitespace().count() as u64 * READING_PER_WORD_MS
    };
    estimate.max(READING_MIN_MS)
}

/// Typing a code block of `code` (lines separated by `\n`).
pub fn code_typing_ms(code: &str) -> u64 {
    let lines = code.split('\n').count() as u64;
    (WB_CODE_BASE_MS + WB_CODE_PER_LINE_MS * lines).min(WB_CODE_MAX_MS)
}

/// Wiping a board that holds `elements` elements; an empty board clears at once.
pub fn clear_cascade_ms(elements: usize) -> u64 {
    if elements == 0 {
        return 0;
    }
    (WB_CLEAR_BASE_MS + WB_CLEAR_PER_ELEMENT_MS * elements as u64).min(WB_CLEAR_MAX_MS)
}

/// How long `action` holds the script up by this table alone, given how many elements are on the
/// whiteboard before it. Media lengths are not in the table: a speech gets its reading-time
/// estimate and a video 0 (the player waits for the video itself); callers that know the real
/// length of an audio clip or video use it instead. Fire-and-forget and unknown actions take 0.
pub fn action_ms(action: &Action, elements_on_board: usize) -> u64 {
    match action {
        Action::Speech(s) => reading_time_ms(&s.text),
        Action::Spotlight(_) | Action::Laser(_) | Action::Unknown { .. } => 0,
        Action::PlayVideo(_) => 0,
        Action::WbOpen(_) => WB_OPEN_MS,
        Action::WbClose(_) => WB_CLOSE_MS,
        Action::WbDrawText(t) if t.content.trim().is_empty() => 0,
        Action::WbDrawTable(t) if t.data.iter().all(Vec::is_empty) => 0,
        Action::WbDrawText(_)
        | Action::WbDrawShape(_)
        | Action::WbDrawChart(_)
        | Action::WbDrawLatex(_)
        | Action::WbDrawTable(_)
        | Action::WbDrawLine(_) => WB_DRAW_MS,
        Action::WbDrawCode(c) => code_typing_ms(&c.code),
        Action::WbEditCode(_) => WB_EDIT_CODE_MS,
        Action::WbDelete(_) => WB_DELETE_MS,
        Action::WbClear(_) => clear_cascade_ms(elements_on_board),
        Action::Discussion(_) => DISCUSSION_TRIGGER_DELAY_MS,
        Action::WidgetHighlight(_)
        | Action::WidgetAnnotation(_)
        | Action::WidgetReveal(_)
        | Action::WidgetSetState(_) => WIDGET_MS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::{Speech, WbClear, WbDrawCode, WbDrawText};

    #[test]
    fn english_speech_reads_at_240_ms_per_word() {
        let ten_words = "one two three four five six seven eight nine ten";
        assert_eq!(reading_time_ms(ten_words), 2400);
    }

    #[test]
    fn short_speech_takes_at_least_two_seconds() {
        assert_eq!(reading_time_ms("Hi!"), READING_MIN_MS);
        assert_eq!(reading_time_ms(""), READING_MIN_MS);
    }

    #[test]
    fn chinese_speech_reads_per_character() {
        // 20 ideographs, no spaces: by words this would be the 2 s minimum.
        let text = "光合作用是植物利用阳光把水和二氧化碳变成";
        assert_eq!(text.chars().count(), 20);
        assert_eq!(reading_time_ms(text), 20 * READING_PER_CJK_CHAR_MS);
    }

    #[test]
    fn text_with_a_few_cjk_characters_still_reads_by_words() {
        let text = "The word for light in Chinese is 光 and it is used in many words we know";
        assert!(!is_mostly_cjk(text));
        assert_eq!(reading_time_ms(text), 17 * READING_PER_WORD_MS);
        assert!(is_mostly_cjk("こんにちは、みなさん"));
        assert!(is_mostly_cjk("안녕하세요 여러분"));
    }

    #[test]
    fn code_typing_grows_per_line_up_to_a_cap() {
        assert_eq!(code_typing_ms("print(1)"), 850);
        assert_eq!(code_typing_ms("a\nb\nc\nd"), 1000);
        assert_eq!(code_typing_ms(&"x\n".repeat(100)), WB_CODE_MAX_MS);
    }

    #[test]
    fn clearing_cascades_per_element_up_to_a_cap_and_is_instant_when_empty() {
        assert_eq!(clear_cascade_ms(0), 0);
        assert_eq!(clear_cascade_ms(1), 435);
        assert_eq!(clear_cascade_ms(4), 600);
        assert_eq!(clear_cascade_ms(50), WB_CLEAR_MAX_MS);
    }

    #[test]
    fn action_durations_come_from_the_table() {
        let speech = Action::Speech(Speech {
            id: "s".into(),
            text: "one two three four five six seven eight nine ten".into(),
            speaker: None,
            audio_id: None,
        });
        assert_eq!(action_ms(&speech, 0), 2400);
        let clear = Action::WbClear(WbClear { id: "c".into() });
        assert_eq!(action_ms(&clear, 0), 0);
        assert_eq!(action_ms(&clear, 2), 490);
        let empty_text = Action::WbDrawText(WbDrawText {
            id: "t".into(),
            element_id: None,
            content: "  ".into(),
            x: 0.0,
            y: 0.0,
            width: 10.0,
            height: 10.0,
            font_size: 18.0,
            color: "#000000".into(),
        });
        assert_eq!(action_ms(&empty_text, 0), 0);
        let code = Action::WbDrawCode(WbDrawCode {
            id: "k".into(),
            element_id: None,
            language: "python".into(),
            code: "a = 1\nb = 2".into(),
            x: 0.0,
            y: 0.0,
            width: 500.0,
            height: 300.0,
            file_name: None,
        });
        assert_eq!(action_ms(&code, 0), 900);
    }
}
