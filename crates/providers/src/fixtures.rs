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
