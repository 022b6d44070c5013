//! What a generation's requests are fitted to: the model's context and whether its server
//! enforces JSON schemas ([`Target`]), and how long each stage's reply may be ([`reply_size`]).
//! Every stage request is built from sections and fitted here, so none is ever sent that the
//! server must reject for length, and every reply has a `max_tokens` that ends a runaway reply
//! cleanly (the reader then repairs what arrived or asks again).
//!
//! What is cut first when a prompt is too long, in every stage: the document's text (ranks
//! 10–19: in a scene's stages its least matching passages first, in the outline from its end),
//! then the course plan's other scenes (ranks 20–29, the farthest from this scene first). The
//! instructions, the scene's own plan and, for a script, what its slide shows are never cut; if
//! they alone do not fit, the stage fails with [`TooLong`]'s message and nothing is sent.
//!
//! Structured output: a preset whose server enforces JSON schemas while sampling (llama.cpp,
//! Ollama, LM Studio: `Preset::enforces_schemas`) gets every JSON stage's full schema; the
//! others get only the simple strict ones (outline, quiz). For an enforcing server the schema is
//! a sampling grammar, not prompt text, so it is not counted ([`fitted_prompt_tokens`]), the
//! same way for a stage's first request and for its corrected retry.

use aula_providers::budget::{
    fit_reply, prompt_room, prompt_tokens, text_tokens, ReplySize, Sections, TooLong,
};
use aula_providers::{preset, ChatMessage, ChatRequest, Endpoint, JsonSchema, ModelLimits};

use crate::outline::SceneKind;

/// Ranks of the document's passages (10 to 19, the least matching lowest): cut first.
pub const DOCUMENT_RANK: u8 = 10;
/// Ranks of the plan's other scenes (20 to 29, the farthest lowest).
pub const PLAN_RANK: u8 = 20;

/// The model a generation writes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub context_tokens: u32,
    /// Every JSON stage sends its full schema (the server enforces any schema while sampling);
    /// otherwise only the simple strict ones go out (outline, quiz).
    pub full_schemas: bool,
}

impl Target {
    pub fn new(endpoint: &Endpoint, limits: &ModelLimits) -> Target {
        Target {
            context_tokens: limits.context_tokens,
            full_schemas: preset(&endpoint.provider).is_some_and(|p| p.enforces_schemas),
        }
    }
}

impl Default for Target {
    /// A hosted model with room to spare.
    fn default() -> Target {
        Target {
            context_tokens: 128_000,
            full_schemas: false,
        }
    }
}

/// A stage of the generation, for its reply length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Outline,
    Content(SceneKind),
    Script,
}

/// How long a stage's reply may be, in tokens: room for a full answer of the size its prompt
/// asks for, with some slack; and the least worth asking for.
pub fn reply_size(stage: Stage) -> ReplySize {
    match stage {
        // Up to 12 scenes of four short fields.
        Stage::Outline => ReplySize::new(2_000, 600),
        // 3 to 7 elements with their geometry.
        Stage::Content(SceneKind::Slide) => ReplySize::new(1_600, 500),
        // 2 to 4 questions with options and explanations.
        Stage::Content(SceneKind::Quiz) => ReplySize::new(1_400, 500),
        // A whole HTML page with its script and styles.
        Stage::Content(SceneKind::Interactive) => ReplySize::new(3_500, 1_200),
        Stage::Content(SceneKind::Pbl) => ReplySize::new(1_200, 400),
        // 6 to 12 items of a few sentences.
        Stage::Script => ReplySize::new(1_600, 500),
    }
}

/// A request of a system prompt and one user message, both in sections, asking for `schema`,
/// fitted to `target`: sections cut in their order (the system prompt's first, then the
/// message's) until the prompt leaves the reply its wanted length; then `max_tokens` set to
/// what is left, never below the stage's least. The cuts are returned for the log.
pub fn fit_request(
    system: Sections,
    ask: Sections,
    schema: Option<JsonSchema>,
    stage: Stage,
    target: Target,
) -> Result<(ChatRequest, Vec<String>), TooLong> {
    let size = reply_size(stage);
    // A server that enforces schemas turns one into a sampling grammar, not prompt text.
    let schema_tokens = match &schema {
        Some(s) if !target.full_schemas => text_tokens(&s.schema.to_string()),
        _ => 0,
    };
    // Two messages' framing and the schema are fixed.
    let room = prompt_room(target.context_tokens, size.want).saturating_sub(schema_tokens + 16);
    let system = system.fit(room.saturating_sub(ask.tokens()));
    let ask = ask.fit(room.saturating_sub(text_tokens(&system.text)));
    let mut chat = ChatRequest::new(system.text, vec![ChatMessage::user(ask.text)]);
    if !target.full_schemas {
        chat.json_schema = schema.clone();
    }
    let cuts = system
        .cuts
        .iter()
        .chain(&ask.cuts)
        .map(|c| {
            if c.whole {
                format!("left out {} to fit the model's context", c.what)
            } else {
                format!(
                    "cut {} characters of {} to fit the model's context",
                    c.chars, c.what
                )
            }
        })
        .collect();
    fit_reply(&mut chat, target.context_tokens, size)?;
    if target.full_schemas {
        chat.json_schema = schema;
    }
    Ok((chat, cuts))
}

/// The prompt of `request` as [`fit_request`] counted it against `target`'s context: a schema
/// the server enforces is a sampling grammar, not prompt text, so it is not counted.
pub fn fitted_prompt_tokens(request: &ChatRequest, target: Target) -> u32 {
    if target.full_schemas && request.json_schema.is_some() {
        let mut bare = request.clone();
        bare.json_schema = None;
        prompt_tokens(&bare)
    } else {
        prompt_tokens(request)
    }
}

/// Whether these cuts (from [`fit_request`]) left out some of the learner's document.
pub fn cuts_document(cuts: &[String]) -> bool {
    cuts.iter().any(|c| c.contains("document"))
}

/// Sections of one text that is never cut.
pub fn plain(text: impl Into<String>) -> Sections {
    let mut sections = Sections::new();
    sections.keep(text);
    sections
}

#[cfg(test)]
mod tests {
    use super::*;
    use aula_providers::budget::Cut;

    #[test]
    fn local_servers_get_full_schemas_and_the_limits_context() {
        let llama = Endpoint::from_preset(preset("llamacpp").unwrap(), "q", None);
        let limits = ModelLimits::resolve(
            &llama,
            aula_providers::ServerLimits {
                context_tokens: Some(8192),
                slots: Some(1),
            },
            Default::default(),
        );
        assert_eq!(
            Target::new(&llama, &limits),
            Target {
                context_tokens: 8192,
                full_schemas: true
            }
        );
        let openai = Endpoint::from_preset(preset("openai").unwrap(), "m", Some("k".into()));
        assert!(!Target::new(&openai, &limits).full_schemas);
    }

    #[test]
    fn a_fitted_request_never_exceeds_its_context_and_says_what_it_cut() {
        for context in [2_048u32, 3_000, 4_096, 8_192, 32_000] {
            let mut system = Sections::new();
            system.keep("Rules. ".repeat(100)).push(
                "the document",
                Cut::Tail {
                    rank: DOCUMENT_RANK,
                    keep_chars: 0,
                },
                "Chlorophyll absorbs red and blue light. ".repeat(800),
            );
            let target = Target {
                context_tokens: context,
                full_schemas: false,
            };
            let (chat, cuts) =
                fit_request(system, plain("Write it."), None, Stage::Script, target).unwrap();
            let max = chat.max_tokens.unwrap();
            assert!(
                prompt_tokens(&chat) + max <= context,
                "{context}: {} + {max}",
                prompt_tokens(&chat)
            );
            assert!(max >= reply_size(Stage::Script).least);
            if context < 16_000 {
                assert!(cuts[0].contains("the document"), "{cuts:?}");
            } else {
                assert!(cuts.is_empty(), "{cuts:?}");
            }
        }
    }

    #[test]
    fn instructions_that_alone_do_not_fit_are_refused_not_sent() {
        let mut system = Sections::new();
        system.keep("Never cut. ".repeat(2_000));
        let target = Target {
            context_tokens: 2_048,
            full_schemas: false,
        };
        let err = fit_request(system, plain("Go."), None, Stage::Outline, target).unwrap_err();
        assert_eq!(err.context_tokens, 2_048);
    }
}
