//! The provider presets: the one table of every vendor Aula knows, with its dialect, default URL
//! and models, whether it needs a key, and whether a web page may call it (CORS). Everything else
//! (the settings page, error messages, model lists) reads this table.

use crate::request::Dialect;

/// Whether a provider wants an API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyNeed {
    Required,
    /// Local servers started with an `--api-key`.
    Optional,
    None,
}

/// Whether a web page may call the provider straight from the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrowserAccess {
    /// The provider answers CORS preflights for any page.
    Direct,
    /// Allowed when the request carries an opt-in header (Anthropic's
    /// `anthropic-dangerous-direct-browser-access`), unless an organisation admin turned it off.
    OptInHeader,
    /// Not reliably open to web pages: use a proxy or another route to the same models.
    NeedsProxy,
    /// A server on the learner's computer that must be told to accept this page's origin; the
    /// text says how.
    LocalServerNeedsOrigin(&'static str),
    /// Not measured; may or may not work.
    Unverified,
}

/// One provider Aula can talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// Stable identifier, stored in settings.
    pub id: &'static str,
    /// What the learner sees.
    pub name: &'static str,
    pub dialect: Dialect,
    /// The default base URL, without a trailing slash (empty for `custom`).
    pub base_url: &'static str,
    /// Suggested models, best first for teaching. May be empty for local servers, whose models
    /// are whatever the learner installed (read them with `models_request`).
    pub models: &'static [&'static str],
    pub key: KeyNeed,
    pub browser: BrowserAccess,
    /// Whether the provider answers the model-list request of its dialect.
    pub lists_models: bool,
    /// Where the learner gets a key (empty when there is none to get).
    pub key_url: &'static str,
    /// One line for the settings page.
    pub notes: &'static str,
}

const OLLAMA_ORIGINS: &str = "Start it with OLLAMA_ORIGINS set to this page's address, e.g. \
     OLLAMA_ORIGINS=https://aula.example ollama serve (or OLLAMA_ORIGINS=* to allow any page).";

pub const PRESETS: &[Preset] = &[
    Preset {
        id: "openai",
        name: "OpenAI",
        dialect: Dialect::OpenAiChat,
        base_url: "https://api.openai.com/v1",
        models: &["gpt-5-mini", "gpt-5", "gpt-4.1-mini", "gpt-4o-mini"],
        key: KeyNeed::Required,
        browser: BrowserAccess::Direct,
        lists_models: true,
        key_url: "https://platform.openai.com/api-keys",
        notes: "Also offers text-to-speech and transcription with the same key.",
    },
    Preset {
        id: "anthropic",
        name: "Anthropic (Claude)",
        dialect: Dialect::Anthropic,
        base_url: "https://api.anthropic.com/v1",
        models: &["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"],
        key: KeyNeed::Required,
        browser: BrowserAccess::OptInHeader,
        lists_models: true,
        key_url: "https://console.anthropic.com/settings/keys",
        notes: "Browser access is on by default; an organisation admin can turn it off.",
    },
    Preset {
        id: "gemini",
        name: "Google Gemini",
        dialect: Dialect::Gemini,
        base_url: "https://generativelanguage.googleapis.com/v1beta",
        models: &[
            "gemini-2.5-flash",
            "gemini-2.5-pro",
            "gemini-2.5-flash-lite",
        ],
        key: KeyNeed::Required,
        browser: BrowserAccess::Direct,
        lists_models: true,
        key_url: "https://aistudio.google.com/apikey",
        notes: "Uses Gemini's own API: its OpenAI-compatible one refuses web pages.",
    },
    Preset {
        id: "deepseek",
        name: "DeepSeek",
        dialect: Dialect::OpenAiChat,
        base_url: "https://api.deepseek.com",
        models: &["deepseek-chat", "deepseek-reasoner"],
        key: KeyNeed::Required,
        browser: BrowserAccess::Direct,
        lists_models: true,
        key_url: "https://platform.deepseek.com/api_keys",
        notes: "deepseek-reasoner shows its reasoning before answering.",
    },
    Preset {
        id: "openrouter",
        name: "OpenRouter",
        dialect: Dialect::OpenAiChat,
        base_url: "https://openrouter.ai/api/v1",
        models: &[
            "openrouter/auto",
            "google/gemini-2.5-flash",
            "anthropic/claude-sonnet-4.5",
            "deepseek/deepseek-chat",
        ],
        key: KeyNeed::Required,
        browser: BrowserAccess::Direct,
        lists_models: true,
        key_url: "https://openrouter.ai/keys",
        notes: "One key for models from many vendors, including ones that refuse web pages.",
    },
    Preset {
        id: "groq",
        name: "Groq",
        dialect: Dialect::OpenAiChat,
        base_url: "https://api.groq.com/openai/v1",
        models: &[
            "llama-3.3-70b-versatile",
            "openai/gpt-oss-120b",
            "llama-3.1-8b-instant",
        ],
        key: KeyNeed::Required,
        browser: BrowserAccess::Direct,
        lists_models: true,
        key_url: "https://console.groq.com/keys",
        notes: "Very fast; also transcribes speech (Whisper) with the same key.",
    },
    Preset {
        id: "mistral",
        name: "Mistral",
        dialect: Dialect::OpenAiChat,
        base_url: "https://api.mistral.ai/v1",
        models: &[
            "mistral-large-latest",
            "mistral-medium-latest",
            "mistral-small-latest",
        ],
        key: KeyNeed::Required,
        browser: BrowserAccess::Direct,
        lists_models: true,
        key_url: "https://console.mistral.ai/api-keys",
        notes: "",
    },
    Preset {
        id: "xai",
        name: "xAI (Grok)",
        dialect: Dialect::OpenAiChat,
        base_url: "https://api.x.ai/v1",
        models: &["grok-4", "grok-3-mini"],
        key: KeyNeed::Required,
        browser: BrowserAccess::Direct,
        lists_models: true,
        key_url: "https://console.x.ai",
        notes: "",
    },
    Preset {
        id: "together",
        name: "Together AI",
        dialect: Dialect::OpenAiChat,
        base_url: "https://api.together.xyz/v1",
        models: &[
            "meta-llama/Llama-3.3-70B-Instruct-Turbo",
            "deepseek-ai/DeepSeek-V3",
            "Qwen/Qwen2.5-72B-Instruct-Turbo",
        ],
        key: KeyNeed::Required,
        browser: BrowserAccess::Direct,
        lists_models: true,
        key_url: "https://api.together.ai/settings/api-keys",
        notes: "",
    },
    Preset {
        id: "moonshot",
        name: "Moonshot (Kimi)",
        dialect: Dialect::OpenAiChat,
        base_url: "https://api.moonshot.ai/v1",
        models: &[
            "kimi-k2-0905-preview",
            "kimi-k2-thinking",
            "moonshot-v1-32k",
        ],
        key: KeyNeed::Required,
        browser: BrowserAccess::Direct,
        lists_models: true,
        key_url: "https://platform.moonshot.ai/console/api-keys",
        notes: "Keys from mainland China use https://api.moonshot.cn/v1.",
    },
    Preset {
        id: "zhipu",
        name: "Zhipu GLM (bigmodel.cn)",
        dialect: Dialect::OpenAiChat,
        base_url: "https://open.bigmodel.cn/api/paas/v4",
        models: &["glm-4.6", "glm-4.5-air", "glm-4.5-flash"],
        key: KeyNeed::Required,
        browser: BrowserAccess::Unverified,
        lists_models: false,
        key_url: "https://open.bigmodel.cn/usercenter/apikeys",
        notes: "Outside mainland China use Z.ai.",
    },
    Preset {
        id: "zai",
        name: "Z.ai (GLM)",
        dialect: Dialect::OpenAiChat,
        base_url: "https://api.z.ai/api/paas/v4",
        models: &["glm-4.6", "glm-4.5-air", "glm-4.5-flash"],
        key: KeyNeed::Required,
        browser: BrowserAccess::Direct,
        lists_models: false,
        key_url: "https://z.ai/manage-apikey/apikey-list",
        notes: "",
    },
    Preset {
        id: "qwen",
        name: "Qwen (Alibaba DashScope)",
        dialect: Dialect::OpenAiChat,
        base_url: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        models: &["qwen-plus", "qwen-max", "qwen-flash"],
        key: KeyNeed::Required,
        browser: BrowserAccess::NeedsProxy,
        lists_models: true,
        key_url: "https://bailian.console.alibabacloud.com/",
        notes: "Mainland China: https://dashscope.aliyuncs.com/compatible-mode/v1. Often refuses \
                web pages; Qwen models are also on OpenRouter.",
    },
    Preset {
        id: "siliconflow",
        name: "SiliconFlow",
        dialect: Dialect::OpenAiChat,
        base_url: "https://api.siliconflow.cn/v1",
        models: &[
            "deepseek-ai/DeepSeek-V3",
            "Qwen/Qwen2.5-72B-Instruct",
            "Qwen/Qwen3-8B",
        ],
        key: KeyNeed::Required,
        browser: BrowserAccess::Unverified,
        lists_models: true,
        key_url: "https://cloud.siliconflow.cn/account/ak",
        notes: "International accounts use https://api.siliconflow.com/v1.",
    },
    Preset {
        id: "ollama",
        name: "Ollama (on this computer)",
        dialect: Dialect::OpenAiChat,
        base_url: "http://localhost:11434/v1",
        models: &["llama3.2", "qwen3", "gemma3"],
        key: KeyNeed::None,
        browser: BrowserAccess::LocalServerNeedsOrigin(OLLAMA_ORIGINS),
        lists_models: true,
        key_url: "",
        notes: "Free and private; install a model first, e.g. `ollama pull llama3.2`.",
    },
    Preset {
        id: "ollama-native",
        name: "Ollama, native API (on this computer)",
        dialect: Dialect::OllamaNative,
        base_url: "http://localhost:11434",
        models: &["llama3.2", "qwen3", "gemma3"],
        key: KeyNeed::None,
        browser: BrowserAccess::LocalServerNeedsOrigin(OLLAMA_ORIGINS),
        lists_models: true,
        key_url: "",
        notes: "Ollama's own /api/chat: structured output and thinking switches work here.",
    },
    Preset {
        id: "lmstudio",
        name: "LM Studio (on this computer)",
        dialect: Dialect::OpenAiChat,
        base_url: "http://localhost:1234/v1",
        models: &[],
        key: KeyNeed::Optional,
        browser: BrowserAccess::LocalServerNeedsOrigin(
            "Start the server with `lms server start --cors`, or turn on \"Enable CORS\" in LM \
             Studio's Developer → Server settings.",
        ),
        lists_models: true,
        key_url: "",
        notes: "Load a model in LM Studio first.",
    },
    Preset {
        id: "llamacpp",
        name: "llama.cpp server (on this computer)",
        dialect: Dialect::OpenAiChat,
        base_url: "http://localhost:8080/v1",
        models: &[],
        key: KeyNeed::Optional,
        browser: BrowserAccess::LocalServerNeedsOrigin(
            "Recent llama-server builds need `--cors-origins` with this page's address; older \
             ones accept any page. Agent/tool modes restrict it to localhost.",
        ),
        lists_models: true,
        key_url: "",
        notes: "Pass the key here if you started llama-server with --api-key.",
    },
    Preset {
        id: "custom",
        name: "Custom (OpenAI-compatible URL)",
        dialect: Dialect::OpenAiChat,
        base_url: "",
        models: &[],
        key: KeyNeed::Optional,
        browser: BrowserAccess::Unverified,
        lists_models: true,
        key_url: "",
        notes: "Any server speaking OpenAI's chat completions, e.g. a proxy you run.",
    },
];

/// The preset with this id.
pub fn preset(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.id == id)
}

/// What to do when a request to this provider never got an answer. A refused connection and a
/// CORS refusal look the same from inside a page, so the advice covers the likely cause for the
/// kind of provider it is.
pub fn explain_network_failure(preset_id: &str) -> String {
    let Some(p) = preset(preset_id).filter(|p| p.id != "custom") else {
        return "Check the base URL in Settings → AI provider. If it is right and other sites work, \
                the server may not accept requests from a web page (CORS): it must allow this \
                page's address, or be reached through a proxy that does."
            .to_string();
    };
    let name = p.name;
    match p.browser {
        BrowserAccess::Direct => format!(
            "Check your internet connection. {name} accepts requests from web pages, so if other \
             sites work, the service may be down, the base URL wrong, or something on this \
             network (a firewall or browser extension) blocking it (CORS)."
        ),
        BrowserAccess::OptInHeader => format!(
            "Check your internet connection. Aula sends {name}'s browser opt-in header; if other \
             sites work, an admin of your {name} organisation may have turned off browser (CORS) \
             access in the Console. Ask them to allow it, or reach the same models through \
             OpenRouter."
        ),
        BrowserAccess::NeedsProxy => format!(
            "{name} does not reliably accept requests from a web page (CORS). Reach it through a \
             proxy you run (enter its address as a Custom URL), or use the same models through \
             OpenRouter."
        ),
        BrowserAccess::LocalServerNeedsOrigin(how) => format!(
            "Is {name} running? It must also allow requests from this page (CORS). {how} If the \
             browser asks whether this page may reach devices on your local network, allow it."
        ),
        BrowserAccess::Unverified => format!(
            "Check your internet connection. If other sites work, {name} may not accept requests \
             from a web page (CORS); try the same models through OpenRouter, or a proxy you run."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn is_local(url: &str) -> bool {
        url.starts_with("http://localhost:") || url.starts_with("http://127.0.0.1:")
    }

    #[test]
    fn preset_ids_are_unique_and_found_by_lookup() {
        let ids: HashSet<_> = PRESETS.iter().map(|p| p.id).collect();
        assert_eq!(ids.len(), PRESETS.len());
        for p in PRESETS {
            assert_eq!(preset(p.id), Some(p));
        }
        assert_eq!(preset("nope"), None);
    }

    #[test]
    fn every_vendor_from_the_brief_has_a_preset() {
        for id in [
            "openai",
            "anthropic",
            "gemini",
            "deepseek",
            "openrouter",
            "groq",
            "mistral",
            "xai",
            "together",
            "moonshot",
            "zhipu",
            "zai",
            "qwen",
            "siliconflow",
            "ollama",
            "ollama-native",
            "lmstudio",
            "llamacpp",
            "custom",
        ] {
            assert!(preset(id).is_some(), "{id}");
        }
    }

    #[test]
    fn remote_providers_use_https_and_only_local_servers_use_http() {
        for p in PRESETS {
            match p.browser {
                BrowserAccess::LocalServerNeedsOrigin(_) => {
                    assert!(is_local(p.base_url), "{}", p.id);
                    assert_ne!(p.key, KeyNeed::Required, "{}", p.id);
                }
                _ if p.id == "custom" => assert!(p.base_url.is_empty()),
                _ => assert!(p.base_url.starts_with("https://"), "{}", p.id),
            }
            assert!(!p.base_url.ends_with('/'), "{}", p.id);
        }
    }

    #[test]
    fn every_dialect_is_spoken_by_some_preset() {
        for dialect in Dialect::ALL {
            assert!(PRESETS.iter().any(|p| p.dialect == dialect), "{dialect:?}");
        }
    }

    #[test]
    fn remote_presets_suggest_models_and_say_where_to_get_a_key() {
        for p in PRESETS {
            if p.key == KeyNeed::Required {
                assert!(!p.models.is_empty(), "{}", p.id);
                assert!(p.key_url.starts_with("https://"), "{}", p.id);
            }
            if p.models.is_empty() {
                assert!(p.lists_models, "{} has no way to find a model", p.id);
            }
        }
    }

    #[test]
    fn custom_speaks_openai_and_is_unverified() {
        let custom = preset("custom").unwrap();
        assert_eq!(custom.dialect, Dialect::OpenAiChat);
        assert_eq!(custom.browser, BrowserAccess::Unverified);
    }

    #[test]
    fn network_advice_names_the_fix_for_each_kind_of_provider() {
        assert!(explain_network_failure("ollama").contains("OLLAMA_ORIGINS"));
        assert!(explain_network_failure("ollama-native").contains("OLLAMA_ORIGINS"));
        assert!(explain_network_failure("lmstudio").contains("--cors"));
        assert!(explain_network_failure("llamacpp").contains("--cors-origins"));
        assert!(explain_network_failure("anthropic").contains("organisation"));
        assert!(explain_network_failure("qwen").contains("proxy"));
        assert!(explain_network_failure("custom").contains("base URL"));
        assert!(explain_network_failure("unknown").contains("base URL"));
        for p in PRESETS {
            assert!(explain_network_failure(p.id).contains("CORS"), "{}", p.id);
        }
    }
}
