//! Facts about written text that every layer shares, defined once: the reading-time estimate,
//! the token counts, speech joining, LaTeX text runs and the document search all ask the same
//! question the same way; text in markup is escaped and decoded one way ([`markup`]). Depends
//! on nothing.

pub mod markup;

/// A character of Chinese, Japanese or Korean writing, punctuation included: Hangul jamo, CJK
/// punctuation, kana, bopomofo and the CJK blocks up to the unified ideographs, Hangul
/// syllables, compatibility ideographs, full-width forms and the supplementary ideographs.
/// Such text needs no space between words or sentences, and each character is about a token.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF        // Hangul jamo
        | 0x3000..=0x9FFF      // CJK punctuation, kana, bopomofo, … Extension A, unified ideographs
        | 0xAC00..=0xD7AF      // Hangul syllables
        | 0xF900..=0xFAFF      // CJK compatibility ideographs
        | 0xFF00..=0xFFEF      // full-width and half-width forms
        | 0x20000..=0x2FFFF) // Extensions B and on, compatibility supplement
}

/// A CJK character that is part of a word (an ideograph, kana, a Hangul syllable, a full-width
/// letter or digit), not punctuation: what word counts and term matching count.
pub fn is_cjk_letter(c: char) -> bool {
    is_cjk(c) && c.is_alphanumeric()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_japanese_and_korean_letters_and_punctuation_are_cjk() {
        for c in [
            '光', '合', 'ひ', 'カ', '한', 'ᄀ', '𠀀', '豈', '。', '，', '「', 'Ａ', '々',
        ] {
            assert!(is_cjk(c), "{c}");
        }
        for c in ['a', 'é', 'Ж', 'ا', ' ', '.', '😀', '—'] {
            assert!(!is_cjk(c), "{c}");
        }
    }

    #[test]
    fn cjk_punctuation_is_cjk_but_not_a_letter() {
        for c in ['。', '，', '、', '「', '」', '！', '？'] {
            assert!(is_cjk(c) && !is_cjk_letter(c), "{c}");
        }
        for c in ['光', 'ひ', '한', 'Ａ', '３', '々', '〇'] {
            assert!(is_cjk_letter(c), "{c}");
        }
    }
}
