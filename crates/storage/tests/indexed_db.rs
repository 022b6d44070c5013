//! The IndexedDB adapter against the real IndexedDB of headless Chromium.
#![cfg(all(target_arch = "wasm32", feature = "indexed-db"))]

use aula_storage::{get_json, put_json, Collection, IndexedDbStore, Store};
use serde::{Deserialize, Serialize};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct CourseStub {
    id: String,
    title: String,
    scenes: Vec<String>,
}

#[wasm_bindgen_test]
async fn record_written_to_indexed_db_reads_back_after_reopening() {
    let name = "aula-test-roundtrip";
    let course = CourseStub {
        id: "c-photosynthesis".into(),
        title: "光合作用 — how plants eat light".into(),
        scenes: vec!["intro".into(), "quiz".into()],
    };
    {
        let store = IndexedDbStore::open(name).await.unwrap();
        put_json(&store, Collection::Courses, &course.id, &course)
            .await
            .unwrap();
    }
    // A fresh connection sees the committed record: it really reached IndexedDB.
    let store = IndexedDbStore::open(name).await.unwrap();
    let back: Option<CourseStub> = get_json(&store, Collection::Courses, &course.id)
        .await
        .unwrap();
    assert_eq!(back, Some(course));
    assert!(store
        .keys(Collection::Courses)
        .await
        .unwrap()
        .contains(&"c-photosynthesis".to_string()));
    assert_eq!(
        store
            .get(Collection::Sessions, "c-photosynthesis")
            .await
            .unwrap(),
        None
    );
}

#[wasm_bindgen_test]
async fn delete_removes_only_its_key() {
    let store = IndexedDbStore::open("aula-test-delete").await.unwrap();
    store
        .put(Collection::Settings, "a", "1".into())
        .await
        .unwrap();
    store
        .put(Collection::Settings, "b", "2".into())
        .await
        .unwrap();
    store.delete(Collection::Settings, "a").await.unwrap();
    assert_eq!(
        store.keys(Collection::Settings).await.unwrap(),
        vec!["b".to_string()]
    );
    assert_eq!(
        store
            .get(Collection::Settings, "b")
            .await
            .unwrap()
            .as_deref(),
        Some("2")
    );
}
