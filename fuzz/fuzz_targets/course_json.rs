//! Course files, `aula_course::Course::from_json` (parse strictly, then `Course::validate`).
//!
//! A course that loads must serialize (`Course::to_json`) into a file that loads again as the
//! same course.
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
    assert_eq!(again, course, "saving and loading changes nothing");
});
