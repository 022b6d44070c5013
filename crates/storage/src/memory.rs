//! An in-memory `Store` for tests of the core: same contract as IndexedDB, no browser.

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::{Collection, Store, StoreError};

/// Records kept in a map for the life of the value. Can be told to fail writes, to test that
/// callers keep what they had when saving fails.
#[derive(Debug, Default)]
pub struct MemoryStore {
    records: RefCell<BTreeMap<(Collection, String), String>>,
    failing_writes: RefCell<Option<StoreError>>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every following `put`/`delete` fails with `error` until [`MemoryStore::heal`].
    pub fn fail_writes_with(&self, error: StoreError) {
        *self.failing_writes.borrow_mut() = Some(error);
    }

    pub fn heal(&self) {
        *self.failing_writes.borrow_mut() = None;
    }

    fn check_writable(&self) -> Result<(), StoreError> {
        match &*self.failing_writes.borrow() {
            Some(error) => Err(error.clone()),
            None => Ok(()),
        }
    }
}

impl Store for MemoryStore {
    async fn put(
        &self,
        collection: Collection,
        key: &str,
        record: String,
    ) -> Result<(), StoreError> {
        self.check_writable()?;
        self.records
            .borrow_mut()
            .insert((collection, key.to_owned()), record);
        Ok(())
    }

    async fn get(&self, collection: Collection, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .records
            .borrow()
            .get(&(collection, key.to_owned()))
            .cloned())
    }

    async fn keys(&self, collection: Collection) -> Result<Vec<String>, StoreError> {
        Ok(self
            .records
            .borrow()
            .keys()
            .filter(|(c, _)| *c == collection)
            .map(|(_, k)| k.clone())
            .collect())
    }

    async fn delete(&self, collection: Collection, key: &str) -> Result<(), StoreError> {
        self.check_writable()?;
        self.records
            .borrow_mut()
            .remove(&(collection, key.to_owned()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{get_json, put_json};
    use futures_executor::block_on;
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Note {
        title: String,
        pages: u32,
    }

    #[test]
    fn typed_record_round_trips_and_collections_are_separate() {
        block_on(async {
            let store = MemoryStore::new();
            let note = Note {
                title: "Photosynthesis".into(),
                pages: 3,
            };
            put_json(&store, Collection::Courses, "c1", &note)
                .await
                .unwrap();
            let back: Option<Note> = get_json(&store, Collection::Courses, "c1").await.unwrap();
            assert_eq!(back, Some(note));
            let elsewhere: Option<Note> =
                get_json(&store, Collection::Sessions, "c1").await.unwrap();
            assert_eq!(elsewhere, None);
        });
    }

    #[test]
    fn keys_are_sorted_and_delete_of_missing_key_is_fine() {
        block_on(async {
            let store = MemoryStore::new();
            for key in ["b", "a", "c"] {
                store
                    .put(Collection::Courses, key, "{}".into())
                    .await
                    .unwrap();
            }
            store.delete(Collection::Courses, "b").await.unwrap();
            store.delete(Collection::Courses, "zzz").await.unwrap();
            assert_eq!(
                store.keys(Collection::Courses).await.unwrap(),
                vec!["a", "c"]
            );
        });
    }

    #[test]
    fn corrupt_record_is_reported_and_left_in_place() {
        block_on(async {
            let store = MemoryStore::new();
            store
                .put(Collection::Settings, "ui", "{not json".into())
                .await
                .unwrap();
            let result: Result<Option<Note>, _> =
                get_json(&store, Collection::Settings, "ui").await;
            match result {
                Err(StoreError::Corrupt {
                    collection, key, ..
                }) => {
                    assert_eq!((collection, key.as_str()), ("settings", "ui"));
                }
                other => panic!("expected Corrupt, got {other:?}"),
            }
            assert_eq!(
                store
                    .get(Collection::Settings, "ui")
                    .await
                    .unwrap()
                    .as_deref(),
                Some("{not json")
            );
        });
    }

    #[test]
    fn failed_write_keeps_previous_record() {
        block_on(async {
            let store = MemoryStore::new();
            store
                .put(Collection::Courses, "c1", "old".into())
                .await
                .unwrap();
            store.fail_writes_with(StoreError::QuotaExceeded);
            let err = store
                .put(Collection::Courses, "c1", "new".into())
                .await
                .unwrap_err();
            assert_eq!(err, StoreError::QuotaExceeded);
            assert!(err.to_string().contains("full"));
            store.heal();
            assert_eq!(
                store
                    .get(Collection::Courses, "c1")
                    .await
                    .unwrap()
                    .as_deref(),
                Some("old")
            );
        });
    }
}
