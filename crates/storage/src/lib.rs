//! The `Store` port: where courses, sessions, settings and generation jobs live between visits.
//!
//! The core decides *what* to keep; a `Store` only keeps it. Records are JSON text under a string
//! key inside a named [`Collection`], so the format stays readable and versionable by the crates
//! that own the data. Two adapters: [`MemoryStore`] for host tests, and `IndexedDbStore` (wasm32
//! with the `indexed-db` feature, which only the page turns on) for the browser. Nothing here
//! depends on leptos or gloo; web-sys is used only by the IndexedDB adapter. What is kept and how
//! (the session log, the job record) belongs to the crates that own the data.

#[cfg(all(target_arch = "wasm32", feature = "indexed-db"))]
mod indexed_db;
mod memory;

#[cfg(all(target_arch = "wasm32", feature = "indexed-db"))]
pub use indexed_db::IndexedDbStore;
pub use memory::MemoryStore;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The kinds of records Aula keeps. Each is one IndexedDB object store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Collection {
    Courses,
    Sessions,
    Settings,
    Jobs,
}

impl Collection {
    /// Every collection, in the order the database schema creates them.
    pub const ALL: [Collection; 4] = [
        Collection::Courses,
        Collection::Sessions,
        Collection::Settings,
        Collection::Jobs,
    ];

    /// The object store's name; part of the on-disk schema, so never rename one.
    pub fn name(self) -> &'static str {
        match self {
            Collection::Courses => "courses",
            Collection::Sessions => "sessions",
            Collection::Settings => "settings",
            Collection::Jobs => "jobs",
        }
    }
}

/// Why a read or write did not happen. Messages are meant for the learner.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    #[error("This browser does not let Aula keep data ({0}). Private windows and some embedded pages block storage; courses will not be saved.")]
    Unavailable(String),
    #[error("The browser's storage for Aula is full. Delete a course or free disk space, then try again.")]
    QuotaExceeded,
    #[error("The saved {collection} record \"{key}\" could not be read: {reason}. It was left as it is.")]
    Corrupt {
        collection: &'static str,
        key: String,
        reason: String,
    },
    #[error("Saving failed: {0}")]
    Backend(String),
}

/// Keeps JSON records by key. Implemented by the browser adapter and by [`MemoryStore`].
///
/// The futures are not `Send`: in the browser everything runs on one thread.
#[allow(async_fn_in_trait)]
pub trait Store {
    /// Writes `record` under `key`, replacing what was there. Atomic: on error nothing changed.
    async fn put(
        &self,
        collection: Collection,
        key: &str,
        record: String,
    ) -> Result<(), StoreError>;
    async fn get(&self, collection: Collection, key: &str) -> Result<Option<String>, StoreError>;
    /// All keys of a collection, in ascending order.
    async fn keys(&self, collection: Collection) -> Result<Vec<String>, StoreError>;
    /// Removes `key`; removing a missing key is not an error.
    async fn delete(&self, collection: Collection, key: &str) -> Result<(), StoreError>;
}

/// Serializes `value` and stores it; the typed front door to [`Store::put`].
pub async fn put_json<S: Store, T: Serialize>(
    store: &S,
    collection: Collection,
    key: &str,
    value: &T,
) -> Result<(), StoreError> {
    let text = serde_json::to_string(value).map_err(|e| StoreError::Backend(e.to_string()))?;
    store.put(collection, key, text).await
}

/// Reads and parses a record. A record that no longer parses is reported as
/// [`StoreError::Corrupt`] and left in place, so nothing is lost by reading it.
pub async fn get_json<S: Store, T: DeserializeOwned>(
    store: &S,
    collection: Collection,
    key: &str,
) -> Result<Option<T>, StoreError> {
    match store.get(collection, key).await? {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| StoreError::Corrupt {
                collection: collection.name(),
                key: key.to_owned(),
                reason: e.to_string(),
            }),
    }
}
