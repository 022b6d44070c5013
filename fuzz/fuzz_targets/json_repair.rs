//! The tolerant reading of an LLM's JSON reply, `aula_generation::repair::{strict, tolerant,
//! tolerant_values}`.
//!
//! Every candidate value is produced without a panic, and whatever JSON object or array the
//! strict reading accepts comes out of the tolerant reading unchanged once written compactly
//! (no line breaks, so no fence can start inside it).
#![no_main]

use aula_generation::repair::{strict, tolerant, tolerant_values};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let reply = String::from_utf8_lossy(data);
    let best = tolerant(&reply);
    let all: Vec<_> = tolerant_values(&reply).collect();
    assert_eq!(
        best.as_ref(),
        all.first(),
        "tolerant is the first candidate"
    );
    if let Ok(value) = strict(&reply) {
        if value.is_object() || value.is_array() {
            let compact = value.to_string();
            assert_eq!(
                tolerant(&compact),
                strict(&compact).ok(),
                "valid JSON is read as it is"
            );
        }
    }
});
