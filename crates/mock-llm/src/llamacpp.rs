//! What a local llama.cpp server (`llama-server`) says beyond the OpenAI format: `GET /props`
//! (the context per slot and the number of slots) and its refusal of a prompt that does not
//! fit the context.

use serde_json::{json, Value};

/// The context `/props` reports when the script sets none (llama.cpp's own default).
pub const DEFAULT_N_CTX: usize = 4096;

/// The refusal of a prompt of `prompt_tokens` in a context of `n_ctx`, byte for byte as
/// llama.cpp writes it (its JSON keeps this key order).
pub fn context_error(prompt_tokens: usize, n_ctx: usize) -> String {
    format!(
        "{{\"error\":{{\"code\":400,\"message\":\"request ({prompt_tokens} tokens) exceeds the \
         available context size ({n_ctx} tokens), try increasing it\",\"type\":\
         \"exceed_context_size_error\",\"n_prompt_tokens\":{prompt_tokens},\"n_ctx\":{n_ctx}}}}}"
    )
}

/// `GET /props`: `default_generation_settings.n_ctx` is the context of one slot.
pub fn props(model: &str, n_ctx: usize, total_slots: usize) -> Value {
    json!({
        "default_generation_settings": {
            "n_ctx": n_ctx,
            "params": {
                "n_predict": -1, "seed": 4_294_967_295u32, "temperature": 0.8, "top_k": 40,
                "top_p": 0.95, "min_p": 0.05, "n_keep": 0, "n_discard": 0, "stream": true,
                "samplers": ["penalties", "dry", "top_k", "typ_p", "top_p", "min_p", "xtc", "temperature"],
            },
        },
        "total_slots": total_slots,
        "model_alias": model,
        "model_ftype": "Q4_K - Medium",
        "model_path": format!("/models/{model}.gguf"),
        "modalities": {"vision": false, "video": false, "audio": false},
        "endpoint_slots": true,
        "endpoint_props": false,
        "endpoint_metrics": false,
        "ui": true,
        "chat_template": "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n",
        "bos_token": "<|endoftext|>",
        "eos_token": "<|im_end|>",
        "build_info": "b7000-mock-llm",
        "is_sleeping": false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_error_is_llama_cpps_json_in_its_key_order() {
        let body = context_error(9030, 8192);
        assert_eq!(
            body,
            r#"{"error":{"code":400,"message":"request (9030 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9030,"n_ctx":8192}}"#
        );
        assert!(serde_json::from_str::<Value>(&body).is_ok());
    }
}
