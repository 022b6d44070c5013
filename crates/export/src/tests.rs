use super::*;

const COURSE_JSON: &[u8] = br#"{"format_version":1,"id":"course-photosynthesis"}"#;
const NARRATION: &[u8] = b"ID3\x04\x00fake mp3 bytes of the first speech";

fn manifest() -> BundleManifest {
    let mut m = BundleManifest::new("course-photosynthesis", 1_764_633_600_000, "0.1.0");
    m.add_entry(COURSE_PATH, COURSE_JSON).unwrap();
    m.add_entry("audio/scene-leaf/a-02.mp3", NARRATION).unwrap();
    m
}

#[test]
fn plain_relative_paths_are_accepted() {
    for path in [
        "course.json",
        "audio/scene-leaf/a-02.mp3",
        "media/leaf cross-section.png",
        "media/光合作用.png",
        ".well-hidden",
        "a..b/c",
    ] {
        assert_eq!(validate_entry_path(path), Ok(()), "{path}");
    }
}

#[test]
fn absolute_paths_are_rejected() {
    assert!(matches!(
        validate_entry_path("/etc/passwd"),
        Err(EntryPathError::Absolute(_))
    ));
}

#[test]
fn parent_segments_are_rejected_wherever_they_are() {
    for path in ["../x", "media/../../x", "media/.."] {
        assert!(
            matches!(
                validate_entry_path(path),
                Err(EntryPathError::ParentSegment(_))
            ),
            "{path}"
        );
    }
    assert!(matches!(
        validate_entry_path("./course.json"),
        Err(EntryPathError::CurrentSegment(_))
    ));
}

#[test]
fn backslashes_are_rejected() {
    assert!(matches!(
        validate_entry_path("media\\..\\x"),
        Err(EntryPathError::Backslash(_))
    ));
}

#[test]
fn drive_letters_and_colons_are_rejected() {
    assert!(matches!(
        validate_entry_path("C:/Windows/x"),
        Err(EntryPathError::DriveLetter(_))
    ));
    assert!(matches!(
        validate_entry_path("c:x"),
        Err(EntryPathError::DriveLetter(_))
    ));
    assert!(matches!(
        validate_entry_path("media/a.png:hidden"),
        Err(EntryPathError::ForbiddenCharacter(_))
    ));
    assert!(matches!(
        validate_entry_path("media/a\u{0}.png"),
        Err(EntryPathError::ForbiddenCharacter(_))
    ));
}

#[test]
fn empty_names_and_segments_are_rejected() {
    assert_eq!(validate_entry_path(""), Err(EntryPathError::Empty));
    for path in ["media//a.png", "media/", "a/ /b/"] {
        assert!(
            matches!(
                validate_entry_path(path),
                Err(EntryPathError::EmptySegment(_))
            ),
            "{path}"
        );
    }
}

#[test]
fn over_long_paths_and_names_are_rejected() {
    let long_name = format!("media/{}.png", "a".repeat(MAX_SEGMENT_BYTES));
    assert!(matches!(
        validate_entry_path(&long_name),
        Err(EntryPathError::SegmentTooLong { .. })
    ));
    let deep = "abc/".repeat(70) + "x";
    let err = validate_entry_path(&deep).unwrap_err();
    assert!(matches!(err, EntryPathError::TooLong { .. }));
    assert!(
        err.to_string().chars().count() < 200,
        "the message cuts the path"
    );
}

#[test]
fn sha256_matches_the_standard_test_vector() {
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn manifest_lists_size_and_checksum_of_each_entry() {
    let m = manifest();
    assert_eq!(m.entries[1].size, NARRATION.len() as u64);
    assert_eq!(m.entries[1].sha256, sha256_hex(NARRATION));
    assert_eq!(m.course_format_version, aula_course::FORMAT_VERSION);
}

#[test]
fn manifest_round_trips_through_json() {
    let m = manifest();
    assert_eq!(BundleManifest::from_json(&m.to_json()), Ok(m));
}

#[test]
fn an_entry_cannot_be_added_twice_even_in_another_case() {
    let mut m = manifest();
    assert!(matches!(
        m.add_entry("AUDIO/scene-leaf/a-02.mp3", b"x"),
        Err(BundleError::DuplicateEntry(_))
    ));
    assert!(matches!(
        m.add_entry(MANIFEST_PATH, b"{}"),
        Err(BundleError::DuplicateEntry(_))
    ));
    assert!(matches!(
        m.add_entry("../evil", b"x"),
        Err(BundleError::InvalidPath(EntryPathError::ParentSegment(_)))
    ));
}

#[test]
fn verifying_detects_altered_truncated_and_unlisted_files() {
    let m = manifest();
    assert_eq!(m.verify_entry(COURSE_PATH, COURSE_JSON), Ok(()));
    let mut altered = COURSE_JSON.to_vec();
    altered[5] ^= 1;
    assert_eq!(
        m.verify_entry(COURSE_PATH, &altered),
        Err(BundleError::ChecksumMismatch(COURSE_PATH.into()))
    );
    assert!(matches!(
        m.verify_entry(COURSE_PATH, &COURSE_JSON[..10]),
        Err(BundleError::SizeMismatch { expected, actual: 10, .. }) if expected == COURSE_JSON.len() as u64
    ));
    assert_eq!(
        m.verify_entry("media/extra.js", b"alert(1)"),
        Err(BundleError::NotListed("media/extra.js".into()))
    );
}

#[test]
fn a_manifest_with_an_unsafe_path_is_refused_on_read() {
    let mut m = manifest();
    m.entries[1].path = "../../home/learner/.bashrc".into();
    assert!(matches!(
        BundleManifest::from_json(&m.to_json()),
        Err(BundleError::InvalidPath(EntryPathError::ParentSegment(_)))
    ));
}

#[test]
fn a_manifest_without_a_course_or_with_a_bad_checksum_is_refused() {
    let mut m = manifest();
    m.entries.remove(0);
    assert_eq!(m.validate(), Err(BundleError::MissingCourse));
    let mut m = manifest();
    m.entries[0].sha256 = "ABC".into();
    assert!(matches!(
        m.validate(),
        Err(BundleError::MalformedChecksum(_))
    ));
}

#[test]
fn a_manifest_from_a_newer_aula_asks_for_an_update() {
    let text = r#"{"format_version": 9, "holograms": true}"#;
    let err = BundleManifest::from_json(text).unwrap_err();
    assert_eq!(
        err,
        BundleError::NewerFormat {
            found: 9,
            supported: BUNDLE_FORMAT_VERSION
        }
    );
    assert!(err.to_string().contains("Update Aula"));
}

#[test]
fn a_manifest_that_is_not_json_is_unreadable() {
    assert!(matches!(
        BundleManifest::from_json("PK\u{3}\u{4}"),
        Err(BundleError::UnreadableManifest(_))
    ));
}
