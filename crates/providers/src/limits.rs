//! How much a model takes at once and how many requests its server answers together. A local
//! server says (llama.cpp's `GET /props`: the context per slot and the slot count; Ollama's
//! `POST /api/show`: the model's `num_ctx` and trained length); otherwise the learner's numbers
//! in Settings, otherwise the preset's plan ([`crate::Preset::context_tokens`],
//! [`crate::Preset::parallel`]). Every prompt is budgeted to the context, and a course is written
//! with as many requests at once as the server answers, so nothing waits in a queue long
//! enough to look stalled.
//!
//! [`ModelLimits::resolve`] makes the choice: never less than [`MIN_CONTEXT_TOKENS`] of context,
//! and 1 to [`MAX_PARALLEL`] requests at once. The AI worker asks the server ([`probe_limits`])
//! before every generation and every classroom round, and for the settings page's note
//! (`Job::Limits`); a server that does not answer simply did not say.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::request::{Dialect, Endpoint};
use crate::transport::{HttpRequest, Method, Transport};
use crate::{auth_headers, next_chunk, preset};

/// The most of a props answer read.
const MAX_BODY_BYTES: usize = 256 * 1024;
/// Ollama's context when a model's parameters do not set one.
const OLLAMA_DEFAULT_CONTEXT: u32 = 4_096;

/// What the server said about itself; `None` where it did not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ServerLimits {
    #[serde(default)]
    pub context_tokens: Option<u32>,
    #[serde(default)]
    pub slots: Option<u32>,
}

/// What the learner typed in Settings → AI provider (`None`: not set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LearnerLimits {
    #[serde(default)]
    pub context_tokens: Option<u32>,
    #[serde(default)]
    pub parallel: Option<u32>,
}

/// Where a limit came from, for the settings page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitSource {
    Server,
    Learner,
    Preset,
}

/// The limits every request and the generation's concurrency are planned on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelLimits {
    pub context_tokens: u32,
    pub parallel: u32,
    pub context_from: LimitSource,
    pub parallel_from: LimitSource,
}

/// The smallest context Aula plans for: below it no stage's prompt fits.
pub const MIN_CONTEXT_TOKENS: u32 = 2_048;
/// The most requests at once.
pub const MAX_PARALLEL: u32 = 8;

impl ModelLimits {
    /// The rule: the context is the smallest of what the server says and what the learner set
    /// (a learner may ask for less; the server's figure is a hard limit), else the preset's;
    /// requests at once are the learner's, never more than the server's slots, else the
    /// slots, else the preset's.
    pub fn resolve(endpoint: &Endpoint, server: ServerLimits, learner: LearnerLimits) -> Self {
        let plan = preset(&endpoint.provider);
        let (plan_context, plan_parallel) =
            plan.map_or((8_192, 1), |p| (p.context_tokens, p.parallel));
        let positive = |n: Option<u32>| n.filter(|&n| n > 0);
        let (context_tokens, context_from) = match (
            positive(server.context_tokens),
            positive(learner.context_tokens),
        ) {
            (Some(s), Some(l)) if l < s => (l, LimitSource::Learner),
            (Some(s), _) => (s, LimitSource::Server),
            (None, Some(l)) => (l, LimitSource::Learner),
            (None, None) => (plan_context, LimitSource::Preset),
        };
        let (parallel, parallel_from) = match (positive(learner.parallel), positive(server.slots)) {
            (Some(l), Some(s)) if s < l => (s, LimitSource::Server),
            (Some(l), _) => (l, LimitSource::Learner),
            (None, Some(s)) => (s, LimitSource::Server),
            (None, None) => (plan_parallel, LimitSource::Preset),
        };
        ModelLimits {
            context_tokens: context_tokens.max(MIN_CONTEXT_TOKENS),
            parallel: parallel.clamp(1, MAX_PARALLEL),
            context_from,
            parallel_from,
        }
    }
}

/// Which self-description an endpoint's server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// llama.cpp's `GET /props`.
    LlamaCppProps,
    /// Ollama's `POST /api/show`.
    OllamaShow,
}

/// The server's address without the OpenAI-compatible `/v1` suffix.
fn server_root(endpoint: &Endpoint) -> &str {
    let base = endpoint.base();
    base.strip_suffix("/v1").unwrap_or(base)
}

/// The request that asks the endpoint's server for its limits, if its kind of server answers
/// one. Only presets known to have one are asked, so no other server logs a stray 404.
pub fn limits_request(endpoint: &Endpoint) -> Option<(Probe, HttpRequest)> {
    let root = server_root(endpoint);
    match (endpoint.provider.as_str(), endpoint.dialect) {
        ("llamacpp", _) => Some((
            Probe::LlamaCppProps,
            HttpRequest::get(format!("{root}/props"), auth_headers(endpoint)),
        )),
        ("ollama" | "ollama-native", _) | (_, Dialect::OllamaNative) => Some((
            Probe::OllamaShow,
            HttpRequest::json(
                Method::Post,
                format!("{root}/api/show"),
                Vec::new(),
                &json!({"model": endpoint.model.trim()}),
            ),
        )),
        _ => None,
    }
}

fn positive_u32(value: &Value) -> Option<u32> {
    value
        .as_u64()
        .filter(|&n| n > 0)
        .and_then(|n| u32::try_from(n).ok())
}

/// Reads a server's answer about itself. Anything unexpected reads as "it did not say".
pub fn parse_limits(probe: Probe, body: &str) -> ServerLimits {
    let Ok(json) = serde_json::from_str::<Value>(body) else {
        return ServerLimits::default();
    };
    match probe {
        Probe::LlamaCppProps => ServerLimits {
            context_tokens: positive_u32(&json["default_generation_settings"]["n_ctx"])
                .or_else(|| positive_u32(&json["n_ctx"])),
            slots: positive_u32(&json["total_slots"]),
        },
        Probe::OllamaShow => {
            let trained = json["model_info"].as_object().and_then(|info| {
                info.iter()
                    .find(|(key, _)| key.ends_with(".context_length"))
                    .and_then(|(_, v)| positive_u32(v))
            });
            let set = json["parameters"].as_str().and_then(|params| {
                params.lines().find_map(|line| {
                    let mut words = line.split_whitespace();
                    (words.next() == Some("num_ctx"))
                        .then(|| words.next()?.parse::<u32>().ok())
                        .flatten()
                })
            });
            let context = set.unwrap_or(OLLAMA_DEFAULT_CONTEXT);
            ServerLimits {
                context_tokens: Some(trained.map_or(context, |t| context.min(t))),
                slots: None,
            }
        }
    }
}

/// Asks the endpoint's server for its limits. Never an error: a server that does not answer,
/// or answers something else, simply did not say.
pub async fn probe_limits(transport: &dyn Transport, endpoint: &Endpoint) -> ServerLimits {
    let Some((probe, request)) = limits_request(endpoint) else {
        return ServerLimits::default();
    };
    let Ok(mut response) = transport.send(request).response.await else {
        return ServerLimits::default();
    };
    if !(200..300).contains(&response.status) {
        return ServerLimits::default();
    }
    let mut body = Vec::new();
    while let Some(Ok(chunk)) = next_chunk(&mut response.body).await {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_BODY_BYTES {
            return ServerLimits::default();
        }
    }
    parse_limits(probe, &String::from_utf8_lossy(&body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::memory::{run_to_end, ScriptedAnswer, ScriptedTransport};

    fn endpoint(id: &str) -> Endpoint {
        Endpoint::from_preset(preset(id).unwrap(), "qwen2.5-coder", None)
    }

    #[test]
    fn llama_cpp_is_asked_for_its_props_at_the_server_root() {
        let (probe, request) = limits_request(&endpoint("llamacpp")).unwrap();
        assert_eq!(probe, Probe::LlamaCppProps);
        assert_eq!(request.method, Method::Get);
        assert_eq!(request.url, "http://localhost:8081/props");
        let (probe, request) = limits_request(&endpoint("ollama")).unwrap();
        assert_eq!(probe, Probe::OllamaShow);
        assert_eq!(request.url, "http://localhost:11434/api/show");
        assert_eq!(request.json_body()["model"], "qwen2.5-coder");
        assert!(limits_request(&endpoint("openai")).is_none());
        assert!(limits_request(&endpoint("custom")).is_none());
    }

    #[test]
    fn llama_cpp_props_give_the_context_per_slot_and_the_slots() {
        // As the real server (llama.cpp via xllamacpp 2026.10) answers, trimmed.
        let body = r#"{"default_generation_settings":{"params":{"seed":4294967295,"temperature":0.8,"max_tokens":-1},"n_ctx":8192},"total_slots":1,"model_alias":"qwen2.5-coder-1.5b","model_path":"/m.gguf","build_info":"b0-unknown","is_sleeping":false}"#;
        assert_eq!(
            parse_limits(Probe::LlamaCppProps, body),
            ServerLimits {
                context_tokens: Some(8192),
                slots: Some(1)
            }
        );
    }

    #[test]
    fn ollama_show_gives_num_ctx_within_the_trained_length() {
        let body = r#"{"parameters":"num_ctx                        16384\nstop                           \"<|im_end|>\"","model_info":{"general.architecture":"qwen2","qwen2.context_length":32768}}"#;
        assert_eq!(
            parse_limits(Probe::OllamaShow, body).context_tokens,
            Some(16384)
        );
        let unset = r#"{"parameters":"stop \"x\"","model_info":{"llama.context_length":131072}}"#;
        assert_eq!(
            parse_limits(Probe::OllamaShow, unset).context_tokens,
            Some(OLLAMA_DEFAULT_CONTEXT)
        );
        let small = r#"{"model_info":{"gemma.context_length":2048}}"#;
        assert_eq!(
            parse_limits(Probe::OllamaShow, small).context_tokens,
            Some(2048)
        );
    }

    #[test]
    fn an_answer_that_is_not_props_says_nothing() {
        for body in [
            "",
            "<html>404</html>",
            "[]",
            r#"{"total_slots":-1,"n_ctx":"big"}"#,
        ] {
            assert_eq!(
                parse_limits(Probe::LlamaCppProps, body),
                ServerLimits::default(),
                "{body}"
            );
        }
    }

    #[test]
    fn the_server_bounds_what_the_learner_sets_and_the_preset_fills_the_rest() {
        let llama = endpoint("llamacpp");
        let server = ServerLimits {
            context_tokens: Some(8192),
            slots: Some(1),
        };
        let none = LearnerLimits::default();
        let limits = ModelLimits::resolve(&llama, server, none);
        assert_eq!((limits.context_tokens, limits.parallel), (8192, 1));
        assert_eq!(limits.context_from, LimitSource::Server);
        // The learner may ask for less, never more than the server takes.
        let learner = LearnerLimits {
            context_tokens: Some(4096),
            parallel: Some(3),
        };
        let limits = ModelLimits::resolve(&llama, server, learner);
        assert_eq!((limits.context_tokens, limits.parallel), (4096, 1));
        assert_eq!(
            (limits.context_from, limits.parallel_from),
            (LimitSource::Learner, LimitSource::Server)
        );
        let more = LearnerLimits {
            context_tokens: Some(32_000),
            parallel: None,
        };
        assert_eq!(
            ModelLimits::resolve(&llama, server, more).context_tokens,
            8192
        );
        // A server that says nothing: the learner's, else the preset's plan.
        let quiet = ServerLimits::default();
        let limits = ModelLimits::resolve(&llama, quiet, none);
        assert_eq!((limits.context_tokens, limits.parallel), (4096, 1));
        assert_eq!(limits.parallel_from, LimitSource::Preset);
        let openai = ModelLimits::resolve(&endpoint("openai"), quiet, learner);
        assert_eq!((openai.context_tokens, openai.parallel), (4096, 3));
        let zero = LearnerLimits {
            context_tokens: Some(0),
            parallel: Some(0),
        };
        let limits = ModelLimits::resolve(&endpoint("openai"), quiet, zero);
        assert_eq!((limits.context_tokens, limits.parallel), (128_000, 3));
        let tiny = ServerLimits {
            context_tokens: Some(512),
            slots: Some(99),
        };
        let limits = ModelLimits::resolve(&llama, tiny, none);
        assert_eq!(
            (limits.context_tokens, limits.parallel),
            (MIN_CONTEXT_TOKENS, MAX_PARALLEL)
        );
    }

    #[test]
    fn probing_a_server_that_fails_or_lies_says_nothing() {
        let ok = ScriptedTransport::answering(
            Vec::new(),
            ScriptedAnswer::status(
                200,
                vec![],
                r#"{"default_generation_settings":{"n_ctx":16384},"total_slots":2}"#,
            ),
        );
        assert_eq!(
            run_to_end(probe_limits(&ok, &endpoint("llamacpp"))),
            ServerLimits {
                context_tokens: Some(16384),
                slots: Some(2)
            }
        );
        let missing = ScriptedTransport::answering(
            Vec::new(),
            ScriptedAnswer::status(404, vec![], "not found"),
        );
        assert_eq!(
            run_to_end(probe_limits(&missing, &endpoint("llamacpp"))),
            ServerLimits::default()
        );
        let mut refused = ScriptedAnswer::status(200, vec![], "");
        refused.connect_error = Some(crate::TransportError::Network("refused".into()));
        let refused = ScriptedTransport::answering(Vec::new(), refused);
        assert_eq!(
            run_to_end(probe_limits(&refused, &endpoint("llamacpp"))),
            ServerLimits::default()
        );
    }
}
