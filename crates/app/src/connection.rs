//! The learner's AI provider connection: which provider, its URL, the key, and the model per
//! role. Kept in IndexedDB only (the `settings` store), never in localStorage, never logged, and
//! never part of an export. With a passphrase, only the sealed key is stored (see `vault`).
//!
//! It is one record, `providers` in the `settings` store: the preset, the base URL, the key, a
//! model for the agents (the teaching model) and, when they differ, for the director and for
//! generation, and the learner's "Context (tokens)" and "Requests at once" from Settings → AI
//! provider (0 means: ask the server, else use the preset's plan; see `aula_providers::limits`).
//! AI jobs take their endpoint and limits from here and hand them to the AI worker.

use aula_providers::{preset, Dialect, Endpoint, KeyNeed, LearnerLimits, Preset, PRESETS};
use aula_storage::{get_json, put_json, Collection, StoreError};
use serde::{Deserialize, Serialize};

use crate::library::open_store;
use crate::vault::SealedKey;

const SETTINGS_KEY: &str = "providers";

/// What the learner configured. `model` is the teaching model; the director and generation may
/// use cheaper or stronger ones (empty means "the same as `model`").
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Connection {
    pub preset: String,
    pub base_url: String,
    #[serde(default)]
    pub api_key: Option<String>,
    pub model: String,
    #[serde(default)]
    pub director_model: String,
    #[serde(default)]
    pub generation_model: String,
    /// The key encrypted under the learner's passphrase; when set, `api_key` is never stored and
    /// is `Some` only after the learner unlocked it on this page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_key: Option<SealedKey>,
    /// The model's context (tokens) and the requests at once the learner set (0: ask the
    /// server, else the preset's plan). Plain numbers, not a [`LearnerLimits`], so the page
    /// needs no reader of its own for them.
    #[serde(default)]
    pub context_tokens: u32,
    #[serde(default)]
    pub parallel: u32,
}

/// Which model a part of Aula uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Agents,
    Director,
    Generation,
}

impl Connection {
    pub fn from_preset(preset: &Preset) -> Connection {
        Connection {
            preset: preset.id.to_owned(),
            base_url: preset.base_url.to_owned(),
            api_key: None,
            model: preset
                .models
                .first()
                .copied()
                .unwrap_or_default()
                .to_owned(),
            director_model: String::new(),
            generation_model: String::new(),
            sealed_key: None,
            context_tokens: 0,
            parallel: 0,
        }
    }

    /// The limits the learner set, for a job.
    pub fn limits(&self) -> LearnerLimits {
        let set = |n: u32| (n > 0).then_some(n);
        LearnerLimits {
            context_tokens: set(self.context_tokens),
            parallel: set(self.parallel),
        }
    }

    pub fn preset(&self) -> &'static Preset {
        preset(&self.preset)
            .or_else(|| preset("custom"))
            .unwrap_or(&PRESETS[0])
    }

    pub fn dialect(&self) -> Dialect {
        self.preset().dialect
    }

    pub fn model_for(&self, role: Role) -> &str {
        let chosen = match role {
            Role::Agents => "",
            Role::Director => self.director_model.as_str(),
            Role::Generation => self.generation_model.as_str(),
        };
        if chosen.trim().is_empty() {
            &self.model
        } else {
            chosen
        }
    }

    pub fn endpoint(&self, role: Role) -> Endpoint {
        Endpoint {
            provider: self.preset.clone(),
            dialect: self.dialect(),
            base_url: self.base_url.trim().trim_end_matches('/').to_owned(),
            model: self.model_for(role).trim().to_owned(),
            api_key: self.api_key.clone().filter(|k| !k.trim().is_empty()),
        }
    }

    /// A passphrase-protected key that has not been unlocked yet.
    pub fn is_locked(&self) -> bool {
        self.sealed_key.is_some() && self.api_key.is_none()
    }

    /// Whether a call can go out now: the key is unlocked, and present where the provider needs one.
    pub fn ready(&self) -> bool {
        !self.is_locked() && (self.api_key.is_some() || self.preset().key != KeyNeed::Required)
    }

    /// What the settings page may show of the key: its first and last few characters.
    pub fn masked_key(&self) -> Option<String> {
        let key = self.api_key.as_deref()?.trim();
        if key.is_empty() {
            return None;
        }
        let chars: Vec<char> = key.chars().collect();
        let head: String = chars.iter().take(3).collect();
        let tail: String = chars
            .iter()
            .rev()
            .take(4)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        Some(if chars.len() <= 8 {
            "•••••".to_owned()
        } else {
            format!("{head}…{tail}")
        })
    }
}

pub async fn load_connection() -> Result<Option<Connection>, StoreError> {
    let store = open_store().await?;
    get_json(&store, Collection::Settings, SETTINGS_KEY).await
}

/// Why no AI call can go out now.
#[derive(Debug, Clone, PartialEq)]
pub enum Unusable {
    /// No provider set up, or its key is missing.
    NotSetUp,
    /// The key is sealed with a passphrase that has not been given this visit.
    Locked,
    /// The settings could not be read.
    Unreadable(String),
}

/// The connection, when a call can go out now.
pub async fn usable_connection() -> Result<Connection, Unusable> {
    match load_connection().await {
        Ok(Some(c)) if c.ready() => Ok(c),
        Ok(Some(c)) if c.is_locked() => Err(Unusable::Locked),
        Ok(_) => Err(Unusable::NotSetUp),
        Err(error) => Err(Unusable::Unreadable(error.to_string())),
    }
}

/// Saves the connection; a protected key is stored sealed only, never in the clear.
pub async fn save_connection(connection: &Connection) -> Result<(), StoreError> {
    let store = open_store().await?;
    let mut stored = connection.clone();
    if stored.sealed_key.is_some() {
        stored.api_key = None;
    }
    put_json(&store, Collection::Settings, SETTINGS_KEY, &stored).await
}
