//! Every request fits its model's context. A prompt is counted high ([`prompt_tokens`]), its
//! reply gets the length its stage wants or what is left ([`fit_reply`]), and a request that
//! could not fit is refused before it is sent ([`TooLong`]): a local server would reject it for
//! length, a hosted one would bill it and cut the reply.
//!
//! Prompts that can grow (a document's text, the course's plan, the conversation) are built from
//! [`Sections`]; when the whole would not fit, sections are cut in the order their [`Cut`]
//! states, lowest rank first and, within a rank, the last section first. Each prompt builder
//! says its order where it builds its sections.
//!
//! Who uses it: every generation stage is fitted by `aula_generation::fit` (the document's text
//! is cut first, then the plan's other scenes, never the instructions), with a reply size per
//! stage; a classroom round leaves out the oldest messages first and sizes replies with
//! `AGENT_REPLY` and `DIRECTOR_REPLY` (`aula_director::round`); grading clips each text to its
//! own cap and asks for at most 400 tokens. So every request carries a `max_tokens`, and a
//! runaway reply ends with a length stop (a generation stage then repairs what arrived).

use thiserror::Error;

use crate::request::ChatRequest;

/// Tokens of framing per message (role markers, separators) in chat templates.
const PER_MESSAGE: u32 = 8;
/// Always left free besides the prompt and the reply: templates add a few tokens of their own.
const MARGIN: u32 = 32;

/// Tokens of `text`, counted high on purpose: real tokenizers split punctuation, digits, code
/// and JSON much finer than the four characters a token of plain English. A run of ASCII
/// letters counts one token per four letters (at least one), every digit one (several tokenizers split numbers into digits), every
/// other visible ASCII character one, a CJK character one, any other character (accented
/// Latin, Cyrillic, Arabic, emoji) one per two bytes of UTF-8. Spaces count a tenth.
pub fn text_tokens(text: &str) -> u32 {
    let mut tokens: u64 = 0;
    let mut letters = 0u64;
    let mut digits = 0u64;
    let mut spaces = 0u64;
    let flush = |run: &mut u64, per: u64, tokens: &mut u64| {
        if *run > 0 {
            *tokens += run.div_ceil(per);
            *run = 0;
        }
    };
    for c in text.chars() {
        if c.is_ascii_alphabetic() {
            flush(&mut digits, 1, &mut tokens);
            letters += 1;
            continue;
        }
        flush(&mut letters, 4, &mut tokens);
        if c.is_ascii_digit() {
            digits += 1;
            continue;
        }
        flush(&mut digits, 1, &mut tokens);
        if c.is_whitespace() {
            spaces += 1;
        } else if c.is_ascii() || aula_text::is_cjk(c) {
            tokens += 1;
        } else {
            tokens += (c.len_utf8() as u64).div_ceil(2);
        }
    }
    flush(&mut letters, 4, &mut tokens);
    flush(&mut digits, 1, &mut tokens);
    tokens += spaces.div_ceil(10);
    u32::try_from(tokens).unwrap_or(u32::MAX)
}

/// The prompt of `request` as the model's context counts it: the system prompt, every message,
/// their framing and the JSON schema (servers that enforce one add it to the prompt or turn it
/// into a grammar; either way it is not free). Counted high, see [`text_tokens`].
pub fn prompt_tokens(request: &ChatRequest) -> u32 {
    let messages: u32 = request
        .messages
        .iter()
        .map(|m| text_tokens(&m.content).saturating_add(PER_MESSAGE))
        .fold(0, u32::saturating_add);
    let schema = request
        .json_schema
        .as_ref()
        .map_or(0, |s| text_tokens(&s.schema.to_string()));
    text_tokens(&request.system)
        .saturating_add(PER_MESSAGE)
        .saturating_add(messages)
        .saturating_add(schema)
}

/// How long a stage's reply may be: `want` when there is room, never less than `least`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplySize {
    pub want: u32,
    pub least: u32,
}

impl ReplySize {
    pub const fn new(want: u32, least: u32) -> ReplySize {
        ReplySize { want, least }
    }
}

/// A request that would not fit its model's context, whatever was cut.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "This step needs about {prompt_tokens} tokens of prompt and at least {least_reply} for the \
     answer, more than the model's context of {context_tokens} tokens. Choose a model with a \
     larger context, or start the server with a larger one, in Settings → AI provider."
)]
pub struct TooLong {
    pub prompt_tokens: u32,
    pub least_reply: u32,
    pub context_tokens: u32,
}

/// The tokens a prompt may take in a context of `context_tokens` when its reply should get
/// `reply` tokens.
pub fn prompt_room(context_tokens: u32, reply: u32) -> u32 {
    context_tokens.saturating_sub(reply).saturating_sub(MARGIN)
}

/// Sets the request's `max_tokens`: what the stage wants, or what the context leaves after the
/// prompt. Refuses when that is less than the stage's least.
pub fn fit_reply(
    request: &mut ChatRequest,
    context_tokens: u32,
    size: ReplySize,
) -> Result<u32, TooLong> {
    let prompt = prompt_tokens(request);
    let left = context_tokens.saturating_sub(prompt).saturating_sub(MARGIN);
    let reply = size.want.min(left);
    if reply < size.least || reply == 0 {
        return Err(TooLong {
            prompt_tokens: prompt,
            least_reply: size.least,
            context_tokens,
        });
    }
    request.max_tokens = Some(reply);
    Ok(reply)
}

/// How a section may give way when the prompt is too long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// Never cut: the instructions, the scene itself.
    Keep,
    /// Cut from its end, at a line or word, down to `keep_chars` characters (0: entirely).
    Tail { rank: u8, keep_chars: usize },
    /// Left out whole.
    Drop { rank: u8 },
}

impl Cut {
    fn rank(self) -> Option<u8> {
        match self {
            Cut::Keep => None,
            Cut::Tail { rank, .. } | Cut::Drop { rank } => Some(rank),
        }
    }
}

/// What was cut from a prompt, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutNote {
    /// The section's label.
    pub what: String,
    /// Characters removed.
    pub chars: usize,
    /// Nothing of it was left.
    pub whole: bool,
}

/// A prompt in labelled sections, joined in order.
#[derive(Debug, Clone, Default)]
pub struct Sections {
    parts: Vec<Part>,
}

#[derive(Debug, Clone)]
struct Part {
    label: String,
    text: String,
    cut: Cut,
}

/// A prompt fitted to its room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    pub text: String,
    pub cuts: Vec<CutNote>,
}

/// Marks where a section was cut, so the model knows the text goes on.
const CUT_MARK: &str = " […]\n";

impl Sections {
    pub fn new() -> Sections {
        Sections::default()
    }

    /// Adds a section (`label` names it in the cut notes).
    pub fn push(&mut self, label: &str, cut: Cut, text: impl Into<String>) -> &mut Sections {
        let text = text.into();
        if !text.is_empty() {
            self.parts.push(Part {
                label: label.to_string(),
                text,
                cut,
            });
        }
        self
    }

    /// Adds every section of `other`, after these.
    pub fn append(&mut self, other: Sections) -> &mut Sections {
        self.parts.extend(other.parts);
        self
    }

    /// Adds a section that is never cut.
    pub fn keep(&mut self, text: impl Into<String>) -> &mut Sections {
        self.push("", Cut::Keep, text)
    }

    pub fn tokens(&self) -> u32 {
        self.parts
            .iter()
            .map(|p| text_tokens(&p.text))
            .fold(0, u32::saturating_add)
    }

    /// The sections joined, cut in their stated order until the estimate is at most `room`
    /// tokens or nothing more may be cut (then the caller's [`fit_reply`] decides).
    pub fn fit(mut self, room: u32) -> Fitted {
        let mut cuts = Vec::new();
        let mut order: Vec<usize> = (0..self.parts.len())
            .filter(|&i| self.parts[i].cut.rank().is_some())
            .collect();
        // Lowest rank first; within a rank, the last section first.
        order.sort_by_key(|&i| (self.parts[i].cut.rank(), std::cmp::Reverse(i)));
        for i in order {
            let total = self.tokens();
            if total <= room {
                break;
            }
            let excess = total - room;
            let part = &mut self.parts[i];
            let before = part.text.chars().count();
            match part.cut {
                Cut::Keep => {}
                Cut::Drop { .. } => part.text.clear(),
                Cut::Tail { keep_chars, .. } => {
                    let own = text_tokens(&part.text);
                    let target = own.saturating_sub(excess);
                    part.text = cut_to(&part.text, target, keep_chars);
                }
            }
            let after = part.text.chars().count();
            if after < before {
                cuts.push(CutNote {
                    what: part.label.clone(),
                    chars: before - after,
                    whole: part.text.is_empty(),
                });
            }
        }
        let text = self.parts.into_iter().map(|p| p.text).collect::<String>();
        Fitted { text, cuts }
    }
}

/// The longest start of `text` within `tokens` (and at least `keep_chars` characters), ended
/// after a space, a punctuation mark or a CJK character (never inside a word), with a mark that
/// it was cut; at a line end when one is near. Empty when nothing need be kept.
fn cut_to(text: &str, tokens: u32, keep_chars: usize) -> String {
    if text_tokens(text) <= tokens {
        return text.to_string();
    }
    let budget = tokens.saturating_sub(text_tokens(CUT_MARK));
    // Pieces end after any character that is not an ASCII letter or digit, so letter and digit
    // runs are never split and the pieces' sum is at least the prefix's estimate.
    let (mut end, mut used, mut piece_start, mut chars) = (0, 0u32, 0, 0usize);
    for (at, c) in text.char_indices() {
        chars += 1;
        if c.is_ascii_alphanumeric() {
            continue;
        }
        let next = at + c.len_utf8();
        let cost = text_tokens(&text[piece_start..next]);
        if used.saturating_add(cost) > budget && chars > keep_chars {
            break;
        }
        used = used.saturating_add(cost);
        piece_start = next;
        end = next;
    }
    let kept = &text[..end];
    let kept = match kept.rfind('\n') {
        Some(line) if line >= kept.len() * 3 / 4 && line > 0 => &kept[..line],
        _ => kept.trim_end(),
    };
    if kept.is_empty() {
        return String::new();
    }
    format!("{kept}{CUT_MARK}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::ChatMessage;

    #[test]
    fn text_is_counted_higher_than_four_characters_a_token_where_tokenizers_split_finer() {
        assert_eq!(text_tokens(""), 0);
        assert_eq!(text_tokens("word"), 1);
        // JSON: every quote, colon and brace is its own token.
        assert!(text_tokens(r#"{"type":"text","id":"e1"}"#) >= 15);
        assert!(text_tokens("2026-12-04") >= 7);
        assert_eq!(text_tokens("光合作用"), 4);
        assert!(text_tokens("éèàç") >= 4);
        // Plain English stays near a token per word.
        let prose = "The moon pulls the sea toward it, and the water piles up.";
        let words = prose.split_whitespace().count() as u32;
        assert!((words..=words * 2).contains(&text_tokens(prose)));
    }

    #[test]
    fn a_reply_gets_what_it_wants_or_what_is_left_and_never_less_than_its_least() {
        let mut request = ChatRequest::new("x ".repeat(1000), vec![ChatMessage::user("Go.")]);
        let prompt = prompt_tokens(&request);
        assert_eq!(
            fit_reply(&mut request, 100_000, ReplySize::new(1_500, 200)),
            Ok(1_500)
        );
        assert_eq!(request.max_tokens, Some(1_500));
        let context = prompt + MARGIN + 600;
        assert_eq!(
            fit_reply(&mut request, context, ReplySize::new(1_500, 200)),
            Ok(600)
        );
        let tight = prompt + MARGIN + 100;
        let err = fit_reply(&mut request, tight, ReplySize::new(1_500, 200)).unwrap_err();
        assert_eq!(err.context_tokens, tight);
        assert!(err.to_string().contains("Settings → AI provider"), "{err}");
    }

    #[test]
    fn sections_are_cut_lowest_rank_first_and_the_last_of_a_rank_first() {
        let mut sections = Sections::new();
        sections
            .keep("RULES\n")
            .push("plan", Cut::Drop { rank: 2 }, "PLAN ".repeat(50))
            .push(
                "document",
                Cut::Tail {
                    rank: 1,
                    keep_chars: 0,
                },
                "doc ".repeat(400),
            )
            .push("old note", Cut::Drop { rank: 3 }, "old ".repeat(50))
            .push("new note", Cut::Drop { rank: 3 }, "new ".repeat(50));
        let whole = sections.tokens();
        // Room for everything but part of the document: only the document is cut.
        let fitted = sections.clone().fit(whole - 50);
        assert_eq!(fitted.cuts.len(), 1);
        assert_eq!(fitted.cuts[0].what, "document");
        assert!(fitted.text.contains("PLAN") && fitted.text.contains("[…]"));
        assert!(text_tokens(&fitted.text) <= whole - 50);
        // Less room: the document goes entirely, then the plan, then the newest note before the old.
        let fitted = sections.clone().fit(text_tokens("RULES\n") + 60);
        let order: Vec<&str> = fitted.cuts.iter().map(|c| c.what.as_str()).collect();
        assert_eq!(order, ["document", "plan", "new note"]);
        assert!(fitted.text.contains("old") && !fitted.text.contains("new"));
        // No room at all: everything cuttable is gone, the kept rules remain.
        let fitted = sections.fit(0);
        assert_eq!(fitted.text, "RULES\n");
    }

    #[test]
    fn a_tail_cut_keeps_its_minimum_and_ends_at_a_line() {
        let text = (1..=200).map(|i| format!("line {i}\n")).collect::<String>();
        let mut sections = Sections::new();
        sections.push(
            "lines",
            Cut::Tail {
                rank: 1,
                keep_chars: 30,
            },
            text.clone(),
        );
        let fitted = sections.clone().fit(0);
        assert!(fitted.text.starts_with("line 1\n"));
        assert!(fitted.text.chars().count() >= 30);
        let fitted = sections.fit(text_tokens(&text) / 2);
        assert!(fitted.text.ends_with(CUT_MARK));
        let kept = fitted.text.trim_end_matches(CUT_MARK);
        assert!(kept.ends_with(|c: char| c.is_ascii_digit()), "{kept:?}");
        assert!(text_tokens(&fitted.text) <= text_tokens(&text) / 2);
    }

    #[test]
    fn cutting_never_splits_a_character() {
        let text = "光合作用把光能变成化学能。".repeat(40);
        for room in 0..60 {
            let mut sections = Sections::new();
            sections.push(
                "zh",
                Cut::Tail {
                    rank: 1,
                    keep_chars: 0,
                },
                text.clone(),
            );
            let fitted = sections.fit(room);
            assert!(text_tokens(&fitted.text) <= room.max(1) + 3, "{room}");
        }
    }
}
