//! The browser adapter: one IndexedDB database, one object store per [`Collection`], records as
//! JSON text under out-of-line string keys.

use indexed_db_futures::database::Database;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::TransactionMode;

use crate::{Collection, Store, StoreError};

/// Bump when the object stores change, and migrate in `open`'s upgrade handler.
const SCHEMA_VERSION: u32 = 1;

/// A connection to the database; clones share it.
#[derive(Clone)]
pub struct IndexedDbStore {
    db: Database,
}

impl IndexedDbStore {
    /// Opens (creating or upgrading) the database called `name`.
    pub async fn open(name: &str) -> Result<Self, StoreError> {
        let db = Database::open(name)
            .with_version(SCHEMA_VERSION)
            .with_on_upgrade_needed(|_event, db| {
                for collection in Collection::ALL {
                    let exists = db.object_store_names().any(|n| n == collection.name());
                    if !exists {
                        db.create_object_store(collection.name()).build()?;
                    }
                }
                Ok(())
            })
            .await
            .map_err(|e| StoreError::Unavailable(e.to_string()))?;
        Ok(Self { db })
    }
}

fn backend(error: impl std::fmt::Display) -> StoreError {
    let text = error.to_string();
    if text.contains("Quota") {
        StoreError::QuotaExceeded
    } else {
        StoreError::Backend(text)
    }
}

impl Store for IndexedDbStore {
    async fn put(
        &self,
        collection: Collection,
        key: &str,
        record: String,
    ) -> Result<(), StoreError> {
        let tx = self
            .db
            .transaction(collection.name())
            .with_mode(TransactionMode::Readwrite)
            .build()
            .map_err(backend)?;
        let store = tx.object_store(collection.name()).map_err(backend)?;
        store
            .put(record)
            .with_key(key.to_owned())
            .primitive()
            .map_err(backend)?
            .await
            .map_err(backend)?;
        // indexed_db_futures rolls a transaction back unless it is committed explicitly.
        tx.commit().await.map_err(backend)
    }

    async fn get(&self, collection: Collection, key: &str) -> Result<Option<String>, StoreError> {
        let tx = self
            .db
            .transaction(collection.name())
            .build()
            .map_err(backend)?;
        let store = tx.object_store(collection.name()).map_err(backend)?;
        let record: Option<String> = store
            .get(key.to_owned())
            .primitive()
            .map_err(backend)?
            .await
            .map_err(backend)?;
        Ok(record)
    }

    async fn keys(&self, collection: Collection) -> Result<Vec<String>, StoreError> {
        let tx = self
            .db
            .transaction(collection.name())
            .build()
            .map_err(backend)?;
        let store = tx.object_store(collection.name()).map_err(backend)?;
        let keys = store
            .get_all_keys::<String>()
            .primitive()
            .map_err(backend)?
            .await
            .map_err(backend)?;
        keys.collect::<Result<Vec<String>, _>>().map_err(backend)
    }

    async fn delete(&self, collection: Collection, key: &str) -> Result<(), StoreError> {
        let tx = self
            .db
            .transaction(collection.name())
            .with_mode(TransactionMode::Readwrite)
            .build()
            .map_err(backend)?;
        let store = tx.object_store(collection.name()).map_err(backend)?;
        store
            .delete(key.to_owned())
            .primitive()
            .map_err(backend)?
            .await
            .map_err(backend)?;
        tx.commit().await.map_err(backend)
    }
}
