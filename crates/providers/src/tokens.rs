//! Token estimates for budgets when a provider reports no usage. The rule of thumb: about four
//! characters per token for Latin-script text (English averages a little over four), and about
//! one token per CJK character (Han, kana, Hangul), which tokenizers seldom merge. It is an
//! estimate for budgeting, within a few tens of percent, not a tokenizer.

use crate::request::ChatRequest;

/// Counts tokens the cheap way; see the module doc.
#[derive(Debug, Clone, Copy, Default)]
pub struct TokenCounter;

impl TokenCounter {
    pub fn estimate_tokens(&self, text: &str) -> u32 {
        estimate_tokens(text)
    }

    /// The prompt of a request: system, every message, and a few tokens of framing each.
    pub fn estimate_request(&self, request: &ChatRequest) -> u32 {
        const PER_MESSAGE: u32 = 4;
        let messages = request
            .messages
            .iter()
            .map(|m| estimate_tokens(&m.content) + PER_MESSAGE);
        let schema = request
            .json_schema
            .as_ref()
            .map_or(0, |s| estimate_tokens(&s.schema.to_string()));
        estimate_tokens(&request.system) + PER_MESSAGE + messages.sum::<u32>() + schema
    }
}

/// About 4 characters per token for Latin text, 1 token per CJK character; 0 only for "".
pub fn estimate_tokens(text: &str) -> u32 {
    let (cjk, other) = text.chars().fold((0u32, 0u32), |(cjk, other), c| {
        if aula_text::is_cjk(c) {
            (cjk.saturating_add(1), other)
        } else {
            (cjk, other.saturating_add(1))
        }
    });
    cjk.saturating_add(other.div_ceil(4))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::ChatMessage;

    #[test]
    fn latin_text_is_about_four_characters_a_token() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("a"), 1);
        assert_eq!(estimate_tokens("Plants turn light into sugar."), 8); // 29 chars
    }

    #[test]
    fn each_cjk_character_is_a_token() {
        assert_eq!(estimate_tokens("光合作用"), 4);
        assert_eq!(estimate_tokens("ひらがなカタカナ한국어"), 11);
        assert_eq!(estimate_tokens("光合作用 is photosynthesis"), 4 + 5); // 18 other chars
    }

    #[test]
    fn a_request_counts_its_system_messages_and_framing() {
        let request = ChatRequest::new("Teach.", vec![ChatMessage::user("What is light?")]);
        assert_eq!(TokenCounter.estimate_request(&request), 2 + 4 + 4 + 4);
    }
}
