//! Stream transcripts in the providers' real wire formats, shared by the tests.

/// A real OpenAI-compatible stream (OpenRouter flavour): a processing comment, role chunk,
/// content chunks with multi-byte characters, a usage chunk and the `[DONE]` marker.
pub const OPENAI_TRANSCRIPT: &str = concat!(
    ": OPENROUTER PROCESSING\n\n",
    "data: {\"id\":\"chatcmpl-9x\",\"object\":\"chat.completion.chunk\",\"created\":1764633600,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-9x\",\"object\":\"chat.completion.chunk\",\"created\":1764633600,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Plants turn light \"},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-9x\",\"object\":\"chat.completion.chunk\",\"created\":1764633600,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"into sugar — 光合作用 🌱.\"},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-9x\",\"object\":\"chat.completion.chunk\",\"created\":1764633600,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    "data: {\"id\":\"chatcmpl-9x\",\"object\":\"chat.completion.chunk\",\"created\":1764633600,\"model\":\"gpt-4o-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":42,\"completion_tokens\":9,\"total_tokens\":51,\"prompt_tokens_details\":{\"cached_tokens\":32}}}\n\n",
    "data: [DONE]\n\n",
);

/// DeepSeek's reasoner on the OpenAI dialect: `reasoning_content` before `content`, then usage.
pub const DEEPSEEK_TRANSCRIPT: &str = concat!(
    "data: {\"id\":\"a1b2\",\"object\":\"chat.completion.chunk\",\"created\":1764633600,\"model\":\"deepseek-reasoner\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"a1b2\",\"object\":\"chat.completion.chunk\",\"created\":1764633600,\"model\":\"deepseek-reasoner\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":null,\"reasoning_content\":\"Leaves reflect \"},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"a1b2\",\"object\":\"chat.completion.chunk\",\"created\":1764633600,\"model\":\"deepseek-reasoner\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":null,\"reasoning_content\":\"green light.\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"a1b2\",\"object\":\"chat.completion.chunk\",\"created\":1764633600,\"model\":\"deepseek-reasoner\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Chlorophyll reflects green — 叶绿素.\",\"reasoning_content\":null},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"a1b2\",\"object\":\"chat.completion.chunk\",\"created\":1764633600,\"model\":\"deepseek-reasoner\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\",\"reasoning_content\":null},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":31,\"total_tokens\":51,\"prompt_tokens_details\":{\"cached_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":12},\"prompt_cache_hit_tokens\":0,\"prompt_cache_miss_tokens\":20}}\n\n",
    "data: [DONE]\n\n",
);

/// Anthropic Messages with extended thinking: named events, a ping, a signature, usage split
/// between `message_start` and `message_delta`.
pub const ANTHROPIC_TRANSCRIPT: &str = concat!(
    "event: message_start\n",
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01XFDUDYJgAACzvnptvVoYEL\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":472,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":2048,\"output_tokens\":2}}}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n",
    "event: ping\n",
    "data: {\"type\": \"ping\"}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"The learner asks why leaves are green. \"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Chlorophyll absorbs red and blue.\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds\"}}\n\n",
    "event: content_block_stop\n",
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Leaves look green because \"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"chlorophyll reflects green light — 叶绿素 🌿.\"}}\n\n",
    "event: content_block_stop\n",
    "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
    "event: message_delta\n",
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":58}}\n\n",
    "event: message_stop\n",
    "data: {\"type\":\"message_stop\"}\n\n",
);

/// Gemini `streamGenerateContent?alt=sse`: CRLF-separated frames, each a whole
/// `GenerateContentResponse`; a thought summary, text, then `finishReason` and usage; no marker.
pub const GEMINI_TRANSCRIPT: &str = concat!(
    "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"**Explaining leaf colour**\\n\\nChlorophyll absorbs red and blue.\",\"thought\": true}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 12,\"totalTokenCount\": 60,\"thoughtsTokenCount\": 48},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"x3c1aKbGM8_Sz7IPlcrE-Ac\"}\r\n\r\n",
    "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Leaves look green because \"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 12,\"candidatesTokenCount\": 5,\"totalTokenCount\": 65,\"thoughtsTokenCount\": 48},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"x3c1aKbGM8_Sz7IPlcrE-Ac\"}\r\n\r\n",
    "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"chlorophyll reflects green light — 叶绿素 🌿.\"}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 12,\"candidatesTokenCount\": 20,\"totalTokenCount\": 80,\"thoughtsTokenCount\": 48,\"promptTokensDetails\": [{\"modality\": \"TEXT\",\"tokenCount\": 12}]},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"x3c1aKbGM8_Sz7IPlcrE-Ac\"}\r\n\r\n",
);

/// Ollama `/api/chat` with `think: true`: one JSON object a line, thinking then content, and the
/// final `done: true` line with counts.
pub const OLLAMA_TRANSCRIPT: &str = concat!(
    "{\"model\":\"qwen3\",\"created_at\":\"2025-06-01T10:00:00.000001Z\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"thinking\":\"The learner asks why leaves are green. \"},\"done\":false}\n",
    "{\"model\":\"qwen3\",\"created_at\":\"2025-06-01T10:00:00.000002Z\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"thinking\":\"Chlorophyll absorbs red and blue.\"},\"done\":false}\n",
    "{\"model\":\"qwen3\",\"created_at\":\"2025-06-01T10:00:00.000003Z\",\"message\":{\"role\":\"assistant\",\"content\":\"Leaves look green because \"},\"done\":false}\n",
    "{\"model\":\"qwen3\",\"created_at\":\"2025-06-01T10:00:00.000004Z\",\"message\":{\"role\":\"assistant\",\"content\":\"chlorophyll reflects green light — 叶绿素 🌿.\"},\"done\":false}\n",
    "{\"model\":\"qwen3\",\"created_at\":\"2025-06-01T10:00:00.000005Z\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done_reason\":\"stop\",\"done\":true,\"total_duration\":4883583458,\"load_duration\":1334875,\"prompt_eval_count\":26,\"prompt_eval_duration\":342546000,\"eval_count\":282,\"eval_duration\":4535599000}\n",
);

/// OpenAI declining (gpt-4o with structured output): `delta.refusal` in pieces instead of
/// `content`, `"usage": null` on every chunk until the usage chunk, and the `obfuscation`
/// padding newer streams carry.
pub const OPENAI_REFUSAL_TRANSCRIPT: &str = concat!(
    "data: {\"id\":\"chatcmpl-C4rXz1Qp8aLm2VtYb6NdKs0Hw9EeJ\",\"object\":\"chat.completion.chunk\",\"created\":1764634100,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_cbf1785567\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"refusal\":\"\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"k3Q\"}\n\n",
    "data: {\"id\":\"chatcmpl-C4rXz1Qp8aLm2VtYb6NdKs0Hw9EeJ\",\"object\":\"chat.completion.chunk\",\"created\":1764634100,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_cbf1785567\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"I’m sorry, \"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"Zq1pX\"}\n\n",
    "data: {\"id\":\"chatcmpl-C4rXz1Qp8aLm2VtYb6NdKs0Hw9EeJ\",\"object\":\"chat.completion.chunk\",\"created\":1764634100,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_cbf1785567\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"but I can’t help with \"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"r\"}\n\n",
    "data: {\"id\":\"chatcmpl-C4rXz1Qp8aLm2VtYb6NdKs0Hw9EeJ\",\"object\":\"chat.completion.chunk\",\"created\":1764634100,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_cbf1785567\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"making a poison at home.\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"7uWm\"}\n\n",
    "data: {\"id\":\"chatcmpl-C4rXz1Qp8aLm2VtYb6NdKs0Hw9EeJ\",\"object\":\"chat.completion.chunk\",\"created\":1764634100,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_cbf1785567\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":null,\"obfuscation\":\"Hh\"}\n\n",
    "data: {\"id\":\"chatcmpl-C4rXz1Qp8aLm2VtYb6NdKs0Hw9EeJ\",\"object\":\"chat.completion.chunk\",\"created\":1764634100,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_cbf1785567\",\"choices\":[],\"usage\":{\"prompt_tokens\":58,\"completion_tokens\":19,\"total_tokens\":77,\"prompt_tokens_details\":{\"cached_tokens\":0,\"audio_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}},\"obfuscation\":\"pL0\"}\n\n",
    "data: [DONE]\n\n",
);

/// OpenAI failing on its side mid-reply: a bare `error` object with no `choices`, after which
/// the connection closes.
pub const OPENAI_SERVER_ERROR_TRANSCRIPT: &str = concat!(
    "data: {\"id\":\"chatcmpl-C4s0aY7tRk2Wm9PxQe5Lb3Nj8Hf1D\",\"object\":\"chat.completion.chunk\",\"created\":1764634160,\"model\":\"gpt-4o-mini-2024-07-18\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_560af6e559\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-C4s0aY7tRk2Wm9PxQe5Lb3Nj8Hf1D\",\"object\":\"chat.completion.chunk\",\"created\":1764634160,\"model\":\"gpt-4o-mini-2024-07-18\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_560af6e559\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Chlorophyll \"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"error\":{\"message\":\"The server had an error while processing your request. Sorry about that!\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n",
);

/// OpenRouter relaying a reply cut for length, then an error chunk of its own (a numeric
/// `code`, and `finish_reason: "error"` in the same chunk).
pub const OPENROUTER_LENGTH_THEN_ERROR_TRANSCRIPT: &str = concat!(
    ": OPENROUTER PROCESSING\n\n",
    "data: {\"id\":\"gen-1764634200-aBcDeFgHiJkLmNoP\",\"provider\":\"DeepInfra\",\"model\":\"meta-llama/llama-3.3-70b-instruct\",\"object\":\"chat.completion.chunk\",\"created\":1764634200,\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Osmosis moves water \"},\"finish_reason\":null,\"native_finish_reason\":null,\"logprobs\":null}]}\n\n",
    "data: {\"id\":\"gen-1764634200-aBcDeFgHiJkLmNoP\",\"provider\":\"DeepInfra\",\"model\":\"meta-llama/llama-3.3-70b-instruct\",\"object\":\"chat.completion.chunk\",\"created\":1764634200,\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"across a membrane — 渗透\"},\"finish_reason\":\"length\",\"native_finish_reason\":\"length\",\"logprobs\":null}]}\n\n",
    "data: {\"id\":\"gen-1764634200-aBcDeFgHiJkLmNoP\",\"provider\":\"DeepInfra\",\"model\":\"meta-llama/llama-3.3-70b-instruct\",\"object\":\"chat.completion.chunk\",\"created\":1764634200,\"error\":{\"code\":502,\"message\":\"Upstream provider closed the stream unexpectedly\"},\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"finish_reason\":\"error\",\"native_finish_reason\":\"error\"}]}\n\n",
    "data: [DONE]\n\n",
);

/// An `n = 2` reply: each chunk carries one choice or both, in any order; choice 1 starts
/// first and stops for length after choice 0 has finished.
pub const OPENAI_TWO_CHOICES_TRANSCRIPT: &str = concat!(
    "data: {\"id\":\"chatcmpl-C4s3Vb\",\"object\":\"chat.completion.chunk\",\"created\":1764634300,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":1,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-C4s3Vb\",\"object\":\"chat.completion.chunk\",\"created\":1764634300,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-C4s3Vb\",\"object\":\"chat.completion.chunk\",\"created\":1764634300,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":1,\"delta\":{\"content\":\"Water climbs \"},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-C4s3Vb\",\"object\":\"chat.completion.chunk\",\"created\":1764634300,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":1,\"delta\":{\"content\":\"by capillarity\"},\"logprobs\":null,\"finish_reason\":null},{\"index\":0,\"delta\":{\"content\":\"Roots pull \"},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-C4s3Vb\",\"object\":\"chat.completion.chunk\",\"created\":1764634300,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"water up — 根.\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-C4s3Vb\",\"object\":\"chat.completion.chunk\",\"created\":1764634300,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}]}\n\n",
    "data: {\"id\":\"chatcmpl-C4s3Vb\",\"object\":\"chat.completion.chunk\",\"created\":1764634300,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":1,\"delta\":{\"content\":\" and\"},\"logprobs\":null,\"finish_reason\":\"length\"}]}\n\n",
    "data: {\"id\":\"chatcmpl-C4s3Vb\",\"object\":\"chat.completion.chunk\",\"created\":1764634300,\"model\":\"gpt-4o-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":15,\"completion_tokens\":24,\"total_tokens\":39,\"prompt_tokens_details\":{\"cached_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0}}}\n\n",
    "data: [DONE]\n\n",
);
