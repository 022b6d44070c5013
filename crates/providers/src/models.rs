//! Which models an endpoint offers: the listing request of each dialect and the parser of its
//! answer, for the settings page's model picker.

use serde_json::Value;

use crate::auth_headers;
use crate::error::ProviderError;
use crate::presets::preset;
use crate::request::{Dialect, Endpoint};
use crate::transport::HttpRequest;

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
    let models = list
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
    Ok(models)
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
}
