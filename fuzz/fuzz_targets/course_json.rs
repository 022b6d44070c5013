//! Course files, `aula_course::Course::from_json` (parse strictly, then `Course::validate`).
//!
//! A course that loads must serialize (`Course::to_json`) into a file that loads again as the
//! same course, its numbers within a float's last bits (`aula_fuzz::FLOAT_ULPS` says why).
#![no_main]

use aula_course::Course;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(course) = Course::from_json(text) else {
        return;
    };
    course.validate().expect("a loaded course is valid");
    let saved = course.to_json();
    let again = Course::from_json(&saved).expect("a saved course loads again");
    let first: serde_json::Value = serde_json::from_str(&saved).expect("a saved course is JSON");
    let second: serde_json::Value =
        serde_json::from_str(&again.to_json()).expect("a saved course is JSON");
    assert!(
        aula_fuzz::same_json(&first, &second),
        "saving and loading changes nothing but a float's last bits:\n{saved}\n{}",
        again.to_json()
    );
});
