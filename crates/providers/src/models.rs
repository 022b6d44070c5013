//! Which models an endpoint offers: the listing request of each dialect and the parser of its
//! answer, for the settings page's model picker.

use serde_json::Value;

use crate::error::ProviderError;
use crate::presets::preset;
use crate::request::{Dialect, Endpoint};
use crate::transport::HttpRequest;
use crate::transport::Transport;
use crate::{auth_headers, http_failure, next_chunk, transport_failure};

/// The GET that lists the endpoint's models, or `None` when its preset has no such list.
pub fn models_request(endpoint: &Endpoint) -> Option<HttpRequest> {
    if preset(&endpoint.provider).is_some_and(|p| !p.lists_models) {
        return None;
    }
    let base = endpoint.base();
    let url = match endpoint.dialect {
        Dialect::OpenAiChat => format!("{base}/models"),
        Dialect::Anthropic => format!("{base}/models?limit=1000"),
        Dialect::Gemini => format!("{base}/models?pageSize=1000"),
        Dialect::OllamaNative => format!("{base}/api/tags"),
    };
    Some(HttpRequest::get(url, auth_headers(endpoint)))
}

/// The model ids in a listing answer, in the order given. Gemini's are given without their
/// `models/` prefix, and only those that can chat.
pub fn parse_models(dialect: Dialect, body: &str) -> Result<Vec<String>, ProviderError> {
    let malformed = |detail: String| ProviderError::MalformedReply {
        provider: dialect.label().to_string(),
        detail,
    };
    let json: Value = serde_json::from_str(body)
        .map_err(|e| malformed(format!("the model list is not JSON: {e}")))?;
    let (list, field) = match dialect {
        Dialect::OpenAiChat | Dialect::Anthropic => (json.get("data"), "id"),
        Dialect::Gemini => (json.get("models"), "name"),
        Dialect::OllamaNative => (json.get("models"), "name"),
    };
    let list = list
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("the answer has no model list".into()))?;
    let mut models: Vec<String> = list
        .iter()
        .filter(|m| {
            dialect != Dialect::Gemini
                || m["supportedGenerationMethods"]
                    .as_array()
                    .is_none_or(|ways| ways.iter().any(|w| w == "generateContent"))
        })
        .filter_map(|m| m[field].as_str())
        .map(|id| id.strip_prefix("models/").unwrap_or(id).to_string())
        .collect();
    // Sorted for the picker; a provider listing a model twice (aliases) shows it once.
    models.sort();
    models.dedup();
    Ok(models)
}

/// Asks the endpoint for its models: `Ok(None)` when its preset has no list (type the name),
/// otherwise the names, or the classified error (bad key, no browser access, ...).
pub async fn list_models(
    transport: &dyn Transport,
    endpoint: &Endpoint,
) -> Result<Option<Vec<String>>, ProviderError> {
    let Some(request) = models_request(endpoint) else {
        return Ok(None);
    };
    let pending = transport.send(request);
    let mut response = pending
        .response
        .await
        .map_err(|e| transport_failure(endpoint, e, false))?;
    let mut body = Vec::new();
    while let Some(chunk) = next_chunk(&mut response.body).await {
        body.extend(chunk.map_err(|e| transport_failure(endpoint, e, true))?);
    }
    let text = String::from_utf8_lossy(&body);
    match response.status {
        200..=299 => {}
        // Not a missing model: this address has no list at all.
        404 => {
            return Err(ProviderError::BadRequest {
                provider: endpoint.provider_name(),
                status: 404,
                message: "there is no model list at this address; check the base URL, or type \
                          the model's name"
                    .into(),
            })
        }
        status => return Err(http_failure(endpoint, status, &response.headers, &text)),
    }
    parse_models(endpoint.dialect, &text).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::preset;
    use crate::transport::Method;

    fn endpoint(id: &str, key: Option<&str>) -> Endpoint {
        Endpoint::from_preset(preset(id).unwrap(), "m", key.map(str::to_string))
    }

    #[test]
    fn each_dialect_lists_models_at_its_own_address_with_its_own_auth() {
        let r = models_request(&endpoint("openai", Some("sk-a"))).unwrap();
        assert_eq!(
            (r.method, r.url.as_str()),
            (Method::Get, "https://api.openai.com/v1/models")
        );
        assert_eq!(
            r.headers,
            [("authorization".to_string(), "Bearer sk-a".to_string())]
        );
        assert!(r.body.is_empty());
        let r = models_request(&endpoint("anthropic", Some("k"))).unwrap();
        assert_eq!(r.url, "https://api.anthropic.com/v1/models?limit=1000");
        assert_eq!(r.header("x-api-key"), Some("k"));
        assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
        let r = models_request(&endpoint("gemini", Some("g"))).unwrap();
        assert_eq!(
            r.url,
            "https://generativelanguage.googleapis.com/v1beta/models?pageSize=1000"
        );
        assert_eq!(r.headers, [("x-goog-api-key".to_string(), "g".to_string())]);
        let r = models_request(&endpoint("ollama-native", None)).unwrap();
        assert_eq!(r.url, "http://localhost:11434/api/tags");
        assert!(r.headers.is_empty());
        assert!(models_request(&endpoint("zhipu", Some("z"))).is_none());
    }

    #[test]
    fn model_lists_are_read_in_every_dialect() {
        let openai = r#"{"object":"list","data":[{"id":"gpt-4o-mini","object":"model","created":1721172741,"owned_by":"system"},{"id":"gpt-5","object":"model","created":1754425777,"owned_by":"system"}]}"#;
        assert_eq!(
            parse_models(Dialect::OpenAiChat, openai).unwrap(),
            ["gpt-4o-mini", "gpt-5"]
        );
        let anthropic = r#"{"data":[{"type":"model","id":"claude-sonnet-4-5-20250929","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z"}],"has_more":false,"first_id":"claude-sonnet-4-5-20250929","last_id":"claude-sonnet-4-5-20250929"}"#;
        assert_eq!(
            parse_models(Dialect::Anthropic, anthropic).unwrap(),
            ["claude-sonnet-4-5-20250929"]
        );
        let gemini = r#"{"models":[{"name":"models/gemini-2.5-flash","version":"001","displayName":"Gemini 2.5 Flash","supportedGenerationMethods":["generateContent","countTokens","createCachedContent","batchGenerateContent"]},{"name":"models/text-embedding-004","supportedGenerationMethods":["embedContent"]}],"nextPageToken":""}"#;
        assert_eq!(
            parse_models(Dialect::Gemini, gemini).unwrap(),
            ["gemini-2.5-flash"]
        );
        let ollama = r#"{"models":[{"name":"llama3.2:latest","model":"llama3.2:latest","modified_at":"2025-05-04T17:37:44.706015396-07:00","size":2019393189,"digest":"a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72","details":{"format":"gguf","family":"llama","parameter_size":"3.2B","quantization_level":"Q4_K_M"}}]}"#;
        assert_eq!(
            parse_models(Dialect::OllamaNative, ollama).unwrap(),
            ["llama3.2:latest"]
        );
    }

    #[test]
    fn an_answer_without_a_list_is_malformed() {
        for body in ["<html>", r#"{"error":"nope"}"#] {
            assert!(matches!(
                parse_models(Dialect::OpenAiChat, body),
                Err(ProviderError::MalformedReply { .. })
            ));
        }
    }

    mod listing {
        use super::*;
        use crate::transport::memory::{run_to_end, ScriptedAnswer, ScriptedTransport};
        use crate::transport::TransportError;

        fn answering(answer: ScriptedAnswer) -> ScriptedTransport {
            ScriptedTransport::answering(Vec::new(), answer)
        }

        #[test]
        fn a_listing_is_fetched_with_the_key_and_parsed() {
            let transport = answering(ScriptedAnswer::status(
                200,
                vec![],
                r#"{"object":"list","data":[{"id":"gpt-b"},{"id":"gpt-a"}]}"#,
            ));
            let models =
                run_to_end(list_models(&transport, &endpoint("openai", Some("sk-a")))).unwrap();
            assert_eq!(models, Some(vec!["gpt-a".to_string(), "gpt-b".to_string()]));
            let sent = transport.requests.borrow();
            assert_eq!(sent[0].method, Method::Get);
            assert_eq!(sent[0].header("authorization"), Some("Bearer sk-a"));
        }

        #[test]
        fn a_rejected_key_and_a_missing_list_are_explained_without_the_key() {
            let transport = answering(ScriptedAnswer::status(
                401,
                vec![],
                r#"{"error":{"message":"Incorrect API key provided: sk-secret"}}"#,
            ));
            let error = run_to_end(list_models(
                &transport,
                &endpoint("openai", Some("sk-secret")),
            ))
            .unwrap_err();
            assert!(
                matches!(error, ProviderError::KeyRejected { status: 401, .. }),
                "{error:?}"
            );
            assert!(!error.to_string().contains("sk-secret"));

            let transport = answering(ScriptedAnswer::status(404, vec![], "Not Found"));
            let error =
                run_to_end(list_models(&transport, &endpoint("openai", Some("k")))).unwrap_err();
            assert!(
                error.to_string().contains("no model list at this address"),
                "{error}"
            );
        }

        #[test]
        fn an_unreachable_server_gets_the_provider_s_fix_and_a_preset_without_a_list_asks_nothing()
        {
            let mut answer = ScriptedAnswer::status(200, vec![], "");
            answer.connect_error = Some(TransportError::Network("refused".into()));
            let error =
                run_to_end(list_models(&answering(answer), &endpoint("ollama", None))).unwrap_err();
            assert!(matches!(error, ProviderError::Network { .. }), "{error:?}");
            assert!(error.to_string().contains("OLLAMA_ORIGINS"), "{error}");

            // Zhipu's API has no model list: the learner types the name, nothing is sent.
            let transport = answering(ScriptedAnswer::status(500, vec![], ""));
            assert_eq!(
                run_to_end(list_models(&transport, &endpoint("zhipu", Some("k")))).unwrap(),
                None
            );
            assert!(transport.requests.borrow().is_empty());
        }
    }
}
