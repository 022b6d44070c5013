//! The page's one store: IndexedDB, opened on first use and then shared by every part of the
//! page (the library, the classroom's log and resume point, generations, settings, files), so a
//! visit holds one connection instead of opening the database at every call site.
//!
//! In the page's wasm tests the store is a [`MemoryStore`] instead ([`use_memory_store`]), so the
//! page code that reads and writes records runs against the core's in-memory adapter with no
//! browser database at all. That variant exists in test builds only: the page pays nothing for it.

use std::cell::RefCell;
#[cfg(test)]
use std::rc::Rc;

#[cfg(test)]
use aula_storage::MemoryStore;
use aula_storage::{Collection, IndexedDbStore, Store, StoreError};

/// The IndexedDB database that holds everything Aula keeps.
pub const DATABASE_NAME: &str = "aula";

/// The store every part of the page uses.
#[derive(Clone)]
pub enum AppStore {
    IndexedDb(IndexedDbStore),
    #[cfg(test)]
    Memory(Rc<MemoryStore>),
}

thread_local! {
    static OPENED: RefCell<Option<AppStore>> = const { RefCell::new(None) };
}

/// The page's store, opened the first time it is asked for. A failed open is not kept: the next
/// call tries again (the learner may have freed space or left private browsing).
pub async fn open_store() -> Result<AppStore, StoreError> {
    if let Some(store) = OPENED.with(|s| s.borrow().clone()) {
        return Ok(store);
    }
    let store = AppStore::IndexedDb(IndexedDbStore::open(DATABASE_NAME).await?);
    // Two first calls may both open; the first kept wins and the other connection is dropped.
    Ok(OPENED.with(|s| s.borrow_mut().get_or_insert(store).clone()))
}

/// Stores `value` as JSON under `key` without waiting for it, for a record the page can do
/// without (a resume point, a job's progress): a failure is logged as `failed: why`.
pub fn put_json_later<T: serde::Serialize + 'static>(
    collection: Collection,
    key: String,
    value: T,
    failed: &'static str,
) {
    leptos::task::spawn_local(async move {
        let saved = match open_store().await {
            Ok(store) => aula_storage::put_json(&store, collection, &key, &value).await,
            Err(error) => Err(error),
        };
        if let Err(error) = saved {
            leptos::logging::warn!("{failed}: {error}");
        }
    });
}

/// Makes the page's store a fresh in-memory one, for a test; returns it to look into.
#[cfg(test)]
pub fn use_memory_store() -> Rc<MemoryStore> {
    let memory = Rc::new(MemoryStore::new());
    OPENED.with(|s| *s.borrow_mut() = Some(AppStore::Memory(memory.clone())));
    memory
}

impl Store for AppStore {
    async fn put(
        &self,
        collection: Collection,
        key: &str,
        record: String,
    ) -> Result<(), StoreError> {
        match self {
            AppStore::IndexedDb(store) => store.put(collection, key, record).await,
            #[cfg(test)]
            AppStore::Memory(store) => store.put(collection, key, record).await,
        }
    }

    async fn get(&self, collection: Collection, key: &str) -> Result<Option<String>, StoreError> {
        match self {
            AppStore::IndexedDb(store) => store.get(collection, key).await,
            #[cfg(test)]
            AppStore::Memory(store) => store.get(collection, key).await,
        }
    }

    async fn keys(&self, collection: Collection) -> Result<Vec<String>, StoreError> {
        match self {
            AppStore::IndexedDb(store) => store.keys(collection).await,
            #[cfg(test)]
            AppStore::Memory(store) => store.keys(collection).await,
        }
    }

    async fn delete(&self, collection: Collection, key: &str) -> Result<(), StoreError> {
        match self {
            AppStore::IndexedDb(store) => store.delete(collection, key).await,
            #[cfg(test)]
            AppStore::Memory(store) => store.delete(collection, key).await,
        }
    }
}
