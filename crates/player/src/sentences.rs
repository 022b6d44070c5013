//! Splitting a speech into the sentences that are spoken (and captioned) one at a time. Browser
//! speech engines cut long utterances off (Chrome near 15 s), and a sentence is also the clean
//! point an interrupted speech resumes from.

/// Closes a sentence wherever it appears.
const WIDE_STOPS: [char; 3] = ['。', '！', '？'];
/// Closes a sentence when followed by a space or the end, so `3.14` and `e.g.x` stay whole.
const NARROW_STOPS: [char; 3] = ['.', '!', '?'];
/// Closing quotes and brackets that belong to the sentence they follow.
const CLOSERS: [char; 8] = ['"', '\'', '”', '’', ')', ']', '」', '』'];

/// The sentences of `text`, in order, each keeping its closing punctuation, trimmed, without
/// empty ones. Breaks after `。！？`, after `.!?` followed by whitespace or the end (a run such
/// as `?!` or `...` stays together, and so do closing quotes after it), and at newlines.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    let mut push = |from: usize, to: usize| {
        let piece = text[from..to].trim();
        if !piece.is_empty() {
            out.push(piece);
        }
    };
    while let Some((i, c)) = chars.next() {
        if c == '\n' {
            push(start, i);
            start = i + c.len_utf8();
            continue;
        }
        let wide = WIDE_STOPS.contains(&c);
        if !wide && !NARROW_STOPS.contains(&c) {
            continue;
        }
        // Take the whole run of stops and closers.
        let mut end = i + c.len_utf8();
        let mut any_wide = wide;
        while let Some(&(j, next)) = chars.peek() {
            if WIDE_STOPS.contains(&next) || NARROW_STOPS.contains(&next) || CLOSERS.contains(&next)
            {
                any_wide |= WIDE_STOPS.contains(&next);
                end = j + next.len_utf8();
                chars.next();
            } else {
                break;
            }
        }
        let at_break = chars.peek().is_none_or(|&(_, next)| next.is_whitespace());
        if any_wide || at_break {
            push(start, end);
            start = end;
        }
    }
    push(start, text.len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_after_each_stop_and_keeps_the_punctuation() {
        assert_eq!(
            sentences("Light is energy. Is it food? Not quite! Read on"),
            ["Light is energy.", "Is it food?", "Not quite!", "Read on"]
        );
    }

    #[test]
    fn splits_chinese_at_full_width_stops_without_spaces() {
        assert_eq!(
            sentences("光合作用需要光。植物吃什么？它们自己做！"),
            ["光合作用需要光。", "植物吃什么？", "它们自己做！"]
        );
    }

    #[test]
    fn splits_at_newlines_and_drops_empty_lines() {
        assert_eq!(
            sentences("First point\n\n  Second point  \nThird."),
            ["First point", "Second point", "Third."]
        );
    }

    #[test]
    fn keeps_runs_of_stops_and_closing_quotes_together() {
        assert_eq!(
            sentences("Wait... really?! She said \"yes.\" Then left."),
            ["Wait...", "really?!", "She said \"yes.\"", "Then left."]
        );
    }

    #[test]
    fn does_not_split_inside_numbers_or_abbreviations_without_a_space() {
        assert_eq!(
            sentences("Pi is 3.14 and e.g.this stays. Done"),
            ["Pi is 3.14 and e.g.this stays.", "Done"]
        );
    }

    #[test]
    fn empty_and_blank_text_has_no_sentences() {
        assert!(sentences("").is_empty());
        assert!(sentences(" \n \n").is_empty());
        assert_eq!(sentences("..."), ["..."]);
    }

    #[test]
    fn the_sentences_cover_every_non_space_character_in_order() {
        let text = "One. Two!Three? 四。五\nsix";
        let joined: String = sentences(text).concat();
        let expected: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        assert_eq!(joined.replace(' ', ""), expected);
    }
}
