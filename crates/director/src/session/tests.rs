use super::*;
use crate::round::RoundEnd;
use crate::{Decision, EndReason};
use aula_storage::{get_json, put_json, Collection, MemoryStore, Store, StoreError};
use futures_executor::block_on;
use log::events_prefix;
use serde_json::json;

fn user(text: &str) -> ClassEvent {
    ClassEvent::LearnerMessage { text: text.into() }
}
fn decide(next: &str) -> ClassEvent {
    ClassEvent::Decision {
        decision: match next {
            "USER" => Decision::Learner,
            "END" => Decision::End(EndReason::DirectorSaidEnd),
            id => Decision::Agent(id.into()),
        },
        by_llm: true,
    }
}
fn start(agent: &str) -> ClassEvent {
    ClassEvent::AgentStart {
        agent_id: agent.into(),
    }
}
fn delta(agent: &str, text: &str) -> ClassEvent {
    ClassEvent::Text {
        agent_id: agent.into(),
        text: text.into(),
    }
}
fn think(agent: &str, text: &str) -> ClassEvent {
    ClassEvent::Thinking {
        agent_id: agent.into(),
        text: text.into(),
    }
}
fn think_end(agent: &str) -> ClassEvent {
    ClassEvent::ThinkingEnd {
        agent_id: agent.into(),
    }
}
fn action(agent: &str, id: &str) -> ClassEvent {
    ClassEvent::Action {
        agent_id: agent.into(),
        action: json!({"type": "spotlight", "id": id, "target": "el-1"}),
    }
}
fn end(agent: &str, text: &str, interrupted: bool) -> ClassEvent {
    ClassEvent::AgentEnd {
        agent_id: agent.into(),
        text: text.into(),
        interrupted,
    }
}
fn cue(from: Option<&str>) -> ClassEvent {
    ClassEvent::CueLearner {
        from_agent: from.map(str::to_owned),
    }
}
fn session_end() -> ClassEvent {
    ClassEvent::Finished(RoundEnd::Ended(EndReason::DirectorSaidEnd))
}

fn logged(events: Vec<ClassEvent>) -> Vec<LoggedEvent> {
    events
        .into_iter()
        .zip(1..)
        .map(|(event, seq)| LoggedEvent {
            seq,
            at_ms: 1000 + seq,
            event,
        })
        .collect()
}

fn header(id: &str, course: &str, started_ms: u64) -> SessionHeader {
    SessionHeader::new(id, course, format!("Session {id}"), started_ms)
}

async fn append_all<S: Store>(log: &mut SessionLog<'_, S>, events: Vec<ClassEvent>) {
    for event in events {
        let at = 5000 + log.next_seq();
        log.append(at, event).await.unwrap();
    }
}

#[test]
fn the_collections_key_formats_are_defined_here_and_never_meet() {
    let id = new_session_id("shared/course", 17);
    assert_eq!(id, "shared_course~17");
    assert!(is_valid_session_id(&id));
    let keys = [
        id.clone(),
        event_key(&id, 1),
        current_conversation_key("shared/course"),
        resume_key("shared/course"),
        opened_key("shared/course"),
        made_key("shared/course"),
    ];
    for (i, a) in keys.iter().enumerate() {
        for b in &keys[i + 1..] {
            assert_ne!(a, b);
        }
    }
    assert!(event_key(&id, 1).starts_with(&events_prefix(&id)));
    assert_eq!(current_conversation_key("c1"), "talk:c1");
    assert_eq!(resume_key("c1"), "resume:c1");
    assert_eq!(opened_key("c1"), "opened:c1");
}

async fn session_keys(store: &MemoryStore, prefix: &str) -> Vec<String> {
    store
        .keys(Collection::Sessions)
        .await
        .unwrap()
        .into_iter()
        .filter(|k| k.starts_with(prefix))
        .collect()
}

#[test]
fn a_discussion_shows_its_topic_before_its_turns_and_the_history_is_unchanged() {
    let view = fold(&logged(vec![
        user("Why?"),
        start("t"),
        end("t", "Because.", false),
        ClassEvent::DiscussionStart {
            topic: "Why n²?".into(),
            initiator: Some("sam".into()),
        },
        start("sam"),
        end("sam", "Is it the steps?", false),
    ]));
    let speakers: Vec<_> = view.messages.iter().map(|m| m.speaker.clone()).collect();
    assert_eq!(
        speakers,
        [
            ViewSpeaker::Learner,
            ViewSpeaker::Agent("t".into()),
            ViewSpeaker::DiscussionTopic,
            ViewSpeaker::Agent("sam".into()),
        ]
    );
    assert_eq!(view.messages[2].text, "Why n²?");
    assert!(view.messages[2].complete && view.speaking.is_none());
    assert_eq!(view.resume_point(), Resume::Idle);
}

#[test]
fn every_event_kind_round_trips_with_its_kind_tag() {
    let cases = vec![
        (
            user("Why?"),
            json!({"kind": "learner_message", "text": "Why?"}),
        ),
        (
            decide("teacher"),
            json!({"kind": "director_decision", "next": "teacher", "by_llm": true}),
        ),
        (
            decide("USER"),
            json!({"kind": "director_decision", "next": "USER", "by_llm": true}),
        ),
        (
            ClassEvent::Decision {
                decision: Decision::End(EndReason::TurnLimit),
                by_llm: false,
            },
            json!({"kind": "director_decision", "next": "END", "by_llm": false,
                       "reason": "turn_limit"}),
        ),
        (
            ClassEvent::Decision {
                decision: Decision::End(EndReason::UnknownAgent("Mia".into())),
                by_llm: true,
            },
            json!({"kind": "director_decision", "next": "END", "by_llm": true,
                       "reason": "unknown_agent", "text": "Mia"}),
        ),
        (start("t"), json!({"kind": "agent_start", "agent_id": "t"})),
        (
            delta("t", "Hel"),
            json!({"kind": "text_delta", "agent_id": "t", "text": "Hel"}),
        ),
        (
            think("t", "hmm"),
            json!({"kind": "thinking", "agent_id": "t", "text": "hmm"}),
        ),
        (
            think_end("t"),
            json!({"kind": "thinking_end", "agent_id": "t"}),
        ),
        (
            action("t", "a1"),
            json!({"kind": "action", "agent_id": "t",
                       "action": {"type": "spotlight", "id": "a1", "target": "el-1"}}),
        ),
        (
            ClassEvent::Dropped {
                agent_id: "t".into(),
                name: "spotlight".into(),
                reason: "not on this scene".into(),
            },
            json!({"kind": "dropped", "agent_id": "t", "text": "spotlight",
                       "message": "not on this scene"}),
        ),
        (
            end("t", "Hello", true),
            json!({"kind": "agent_end", "agent_id": "t", "text": "Hello",
                       "interrupted": true}),
        ),
        (cue(None), json!({"kind": "cue_learner"})),
        (
            cue(Some("t")),
            json!({"kind": "cue_learner", "from_agent": "t"}),
        ),
        (
            ClassEvent::Error {
                agent_id: None,
                message: "rate limited".into(),
            },
            json!({"kind": "error", "message": "rate limited"}),
        ),
        (
            ClassEvent::Error {
                agent_id: Some("t".into()),
                message: "timed out".into(),
            },
            json!({"kind": "error", "agent_id": "t", "message": "timed out"}),
        ),
        (
            session_end(),
            json!({"kind": "session_end", "reason": "director_said_end"}),
        ),
        (
            ClassEvent::Finished(RoundEnd::Ended(EndReason::InvalidReply("no JSON".into()))),
            json!({"kind": "session_end", "reason": "invalid_reply",
                       "text": "no JSON"}),
        ),
        (
            ClassEvent::Finished(RoundEnd::LearnersTurn),
            json!({"kind": "session_end", "reason": "learners_turn"}),
        ),
        (
            ClassEvent::Finished(RoundEnd::Failed),
            json!({"kind": "session_end", "reason": "failed"}),
        ),
        (
            ClassEvent::DiscussionStart {
                topic: "Why n²?".into(),
                initiator: Some("sam".into()),
            },
            json!({"kind": "discussion_start", "text": "Why n²?", "agent_id": "sam"}),
        ),
        (
            ClassEvent::DiscussionStart {
                topic: "Why n²?".into(),
                initiator: None,
            },
            json!({"kind": "discussion_start", "text": "Why n²?"}),
        ),
    ];
    for (event, shape) in cases {
        assert_eq!(serde_json::to_value(&event).unwrap(), shape, "{event:?}");
        let back: ClassEvent = serde_json::from_value(shape.clone()).unwrap();
        assert_eq!(back, event);

        let record = LoggedEvent {
            seq: 7,
            at_ms: 1_700_000_000_123,
            event: event.clone(),
        };
        let mut flat = shape.as_object().unwrap().clone();
        flat.insert("seq".into(), json!(7));
        flat.insert("at_ms".into(), json!(1_700_000_000_123u64));
        let text = serde_json::to_string(&record).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            value,
            serde_json::Value::Object(flat),
            "flattened {event:?}"
        );
        assert_eq!(serde_json::from_str::<LoggedEvent>(&text).unwrap(), record);
    }
}

#[test]
fn records_an_older_aula_wrote_still_read() {
    let read = |record: serde_json::Value| serde_json::from_value::<ClassEvent>(record).unwrap();
    assert_eq!(
        read(json!({"kind": "user_message", "text": "Why?"})),
        user("Why?")
    );
    assert_eq!(
        read(json!({"kind": "cue_user", "from_agent": "t"})),
        cue(Some("t"))
    );
    // Before the codes, an end's reason was prose; it reads as not recorded.
    assert_eq!(
        read(
            json!({"kind": "director_decision", "next": "END", "by_llm": true,
                        "reason": "the director ended the round"})
        ),
        ClassEvent::Decision {
            decision: Decision::End(EndReason::NotRecorded),
            by_llm: true,
        }
    );
    assert_eq!(
        read(json!({"kind": "session_end", "reason": "Ended(DirectorSaidEnd)"})),
        ClassEvent::Finished(RoundEnd::Ended(EndReason::NotRecorded))
    );
}

#[test]
fn only_what_was_said_done_and_decided_is_logged() {
    assert!(user("Hi").is_logged() && start("t").is_logged() && session_end().is_logged());
    assert!(!ClassEvent::Dropped {
        agent_id: "t".into(),
        name: "x".into(),
        reason: "y".into()
    }
    .is_logged());
}

#[test]
fn unknown_kind_or_missing_field_does_not_parse() {
    for text in [
        r#"{"seq":1,"at_ms":2,"kind":"telepathy","agent_id":"t"}"#,
        r#"{"seq":1,"at_ms":2,"kind":"agent_end","agent_id":"t","text":"x"}"#,
    ] {
        assert!(serde_json::from_str::<LoggedEvent>(text).is_err(), "{text}");
    }
    let why = |text: &str| {
        serde_json::from_str::<LoggedEvent>(text)
            .unwrap_err()
            .to_string()
    };
    assert!(why(r#"{"seq":1,"at_ms":2,"kind":"telepathy"}"#).contains("\"telepathy\" is not"));
    assert!(
        why(r#"{"seq":1,"at_ms":2,"kind":"agent_end","agent_id":"t","text":"x"}"#)
            .contains("needs \"interrupted\"")
    );
    assert!(
        why(r#"{"seq":1,"at_ms":2,"kind":"text_delta","text":"x"}"#).contains("needs \"agent_id\"")
    );
}

#[test]
fn create_append_read_and_reopen_continue_the_sequence() {
    block_on(async {
        let store = MemoryStore::new();
        let mut log = SessionLog::create(&store, header("s1", "c1", 10))
            .await
            .unwrap();
        assert_eq!(log.next_seq(), 1);
        for i in 1..=95u64 {
            let seq = log.append(i * 10, user(&format!("m{i}"))).await.unwrap();
            assert_eq!(seq, i);
        }
        drop(log);

        let mut log = SessionLog::open(&store, "s1").await.unwrap().unwrap();
        assert_eq!(log.next_seq(), 96);
        assert_eq!(log.header().course_id, "c1");
        for i in 96..=105u64 {
            assert_eq!(log.append(i * 10, user(&format!("m{i}"))).await.unwrap(), i);
        }

        let (events, skipped) = log.read().await.unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, (1..=105).collect::<Vec<_>>());
        assert_eq!(events[99].at_ms, 1000);
        assert_eq!(events[99].event, user("m100"));

        // The store's own key order is the event order, across 9→10 and 99→100.
        let keys = session_keys(&store, "s1/e/").await;
        let expected: Vec<String> = (1..=105).map(|seq| event_key("s1", seq)).collect();
        assert_eq!(keys, expected);
        assert_eq!(keys[9], "s1/e/0000000010");
        assert_eq!(keys[99], "s1/e/0000000100");
    });
}

#[test]
fn open_of_a_missing_or_impossible_session_is_none() {
    block_on(async {
        let store = MemoryStore::new();
        SessionLog::create(&store, header("s1", "c1", 10))
            .await
            .unwrap();
        assert!(SessionLog::open(&store, "s2").await.unwrap().is_none());
        assert!(SessionLog::open(&store, "").await.unwrap().is_none());
        assert!(SessionLog::open(&store, "s1/e/0000000001")
            .await
            .unwrap()
            .is_none());
    });
}

#[test]
fn creating_an_existing_or_invalid_session_is_an_error() {
    block_on(async {
        let store = MemoryStore::new();
        let mut log = SessionLog::create(&store, header("s1", "c1", 10))
            .await
            .unwrap();
        log.append(1, user("hi")).await.unwrap();
        let err = SessionLog::create(&store, header("s1", "other", 99))
            .await
            .err()
            .unwrap();
        assert!(err.to_string().contains("already exists"), "{err}");
        let kept = SessionLog::open(&store, "s1").await.unwrap().unwrap();
        assert_eq!(kept.header().course_id, "c1");
        assert_eq!(kept.read().await.unwrap().0.len(), 1);

        // Events left without a header also make the id taken.
        store
            .put(Collection::Sessions, &event_key("s2", 1), "{}".into())
            .await
            .unwrap();
        assert!(SessionLog::create(&store, header("s2", "c1", 10))
            .await
            .is_err());

        for bad in ["", "a/b"] {
            assert!(SessionLog::create(&store, header(bad, "c1", 10))
                .await
                .is_err());
        }
    });
}

#[test]
fn create_normalizes_format_and_compaction_mark() {
    block_on(async {
        let store = MemoryStore::new();
        let mut h = header("s1", "c1", 10);
        h.format = 9;
        h.compacted_through = 50;
        let log = SessionLog::create(&store, h).await.unwrap();
        assert_eq!(log.next_seq(), 1);
        let stored: SessionHeader = get_json(&store, Collection::Sessions, "s1")
            .await
            .unwrap()
            .unwrap();
        assert_eq!((stored.format, stored.compacted_through), (1, 0));
    });
}

#[test]
fn open_rejects_a_header_of_another_format() {
    block_on(async {
        let store = MemoryStore::new();
        let mut h = header("s1", "c1", 10);
        h.format = 2;
        put_json(&store, Collection::Sessions, "s1", &h)
            .await
            .unwrap();
        match SessionLog::open(&store, "s1").await {
            Err(StoreError::Corrupt { key, reason, .. }) => {
                assert_eq!(key, "s1");
                assert!(reason.contains("format 2"), "{reason}");
            }
            other => panic!("expected Corrupt, got {:?}", other.map(|l| l.is_some())),
        }
    });
}

#[test]
fn failed_append_keeps_the_sequence_number() {
    block_on(async {
        let store = MemoryStore::new();
        let mut log = SessionLog::create(&store, header("s1", "c1", 10))
            .await
            .unwrap();
        log.append(1, user("one")).await.unwrap();
        store.fail_writes_with(StoreError::QuotaExceeded);
        assert_eq!(
            log.append(2, user("two")).await,
            Err(StoreError::QuotaExceeded)
        );
        store.heal();
        assert_eq!(log.append(3, user("two")).await.unwrap(), 2);
        let (events, _) = log.read().await.unwrap();
        assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2]);
    });
}

#[test]
fn corrupt_event_is_skipped_reported_and_left_in_place() {
    block_on(async {
        let store = MemoryStore::new();
        let mut log = SessionLog::create(&store, header("s1", "c1", 10))
            .await
            .unwrap();
        append_all(&mut log, vec![user("a"), user("b"), user("c"), user("d")]).await;
        let broken = event_key("s1", 2);
        store
            .put(Collection::Sessions, &broken, "{not json".into())
            .await
            .unwrap();
        // Parses, but claims to be another event.
        let liar = event_key("s1", 3);
        let wrong = LoggedEvent {
            seq: 30,
            at_ms: 0,
            event: user("c"),
        };
        put_json(&store, Collection::Sessions, &liar, &wrong)
            .await
            .unwrap();
        store
            .put(Collection::Sessions, "s1/e/x", "{}".into())
            .await
            .unwrap();

        let (events, skipped) = log.read().await.unwrap();
        let texts: Vec<_> = events.iter().map(|e| e.event.clone()).collect();
        assert_eq!(texts, vec![user("a"), user("d")]);
        let skipped_keys: Vec<&str> = skipped.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(skipped_keys, ["s1/e/x", broken.as_str(), liar.as_str()]);
        assert!(skipped.iter().all(|(_, reason)| !reason.is_empty()));
        assert!(skipped[2].1.contains("event 30"), "{}", skipped[2].1);

        assert_eq!(
            store
                .get(Collection::Sessions, &broken)
                .await
                .unwrap()
                .as_deref(),
            Some("{not json")
        );
        // Reopening still continues after the damaged records, and compaction leaves them.
        let mut reopened = SessionLog::open(&store, "s1").await.unwrap().unwrap();
        assert_eq!(reopened.next_seq(), 5);
        reopened.compact().await.unwrap();
        assert!(store
            .get(Collection::Sessions, &broken)
            .await
            .unwrap()
            .is_some());
    });
}

/// A round where the teacher finished, a classmate finished with thinking and an action, and
/// the teacher's second turn is still streaming.
fn round_with_an_open_turn() -> Vec<ClassEvent> {
    vec![
        user("What is light?"),                    // 1
        decide("teacher"),                         // 2
        start("teacher"),                          // 3
        delta("teacher", "Light is "),             // 4
        action("teacher", "a1"),                   // 5
        delta("teacher", "a wave."),               // 6
        end("teacher", "Light is a wave.", false), // 7
        decide("ana"),                             // 8
        start("ana"),                              // 9
        think("ana", "Is it "),                    // 10
        think("ana", "a particle?"),               // 11
        think_end("ana"),                          // 12
        delta("ana", "Or a "),                     // 13
        delta("ana", "particle!"),                 // 14
        end("ana", "Or a particle!", false),       // 15
        decide("teacher"),                         // 16
        start("teacher"),                          // 17
        think("teacher", "Both..."),               // 18
        delta("teacher", "Both, "),                // 19
        action("teacher", "a2"),                   // 20
        delta("teacher", "in a way"),              // 21
    ]
}

#[test]
fn compaction_removes_only_finished_deltas_keeps_the_fold_and_is_idempotent() {
    block_on(async {
        let store = MemoryStore::new();
        let mut log = SessionLog::create(&store, header("s1", "c1", 10))
            .await
            .unwrap();
        append_all(&mut log, round_with_an_open_turn()).await;
        let (before, _) = log.read().await.unwrap();

        assert_eq!(log.compact().await.unwrap(), 6);
        let (after, skipped) = log.read().await.unwrap();
        assert!(skipped.is_empty());
        let kept: Vec<u64> = after.iter().map(|e| e.seq).collect();
        assert_eq!(
            kept,
            [1, 2, 3, 5, 7, 8, 9, 12, 15, 16, 17, 18, 19, 20, 21],
            "deltas and thinking of the two finished turns go, the open turn stays"
        );
        assert_eq!(fold(&after), fold(&before));
        let view = fold(&after);
        let texts: Vec<&str> = view.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "What is light?",
                "Light is a wave.",
                "Or a particle!",
                "Both, in a way"
            ]
        );
        assert_eq!(view.messages[1].actions.len(), 1);
        assert_eq!(view.messages[3].actions.len(), 1);
        assert_eq!(view.thinking.as_deref(), Some("Both..."));
        assert_eq!(view.speaking.as_deref(), Some("teacher"));
        // Compacted up to just before the open turn.
        assert_eq!(log.header().compacted_through, 16);
        let stored: SessionHeader = get_json(&store, Collection::Sessions, "s1")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.compacted_through, 16);

        // Idempotent.
        assert_eq!(log.compact().await.unwrap(), 0);
        assert_eq!(log.read().await.unwrap().0, after);

        // Once the open turn ends, a later compaction takes its deltas too.
        append_all(
            &mut log,
            vec![end("teacher", "Both, in a way.", false), cue(None)],
        )
        .await;
        let (before, _) = log.read().await.unwrap();
        assert_eq!(log.compact().await.unwrap(), 3);
        let (after, _) = log.read().await.unwrap();
        assert_eq!(fold(&after), fold(&before));
        assert_eq!(log.header().compacted_through, 23);
        let last_kept: Vec<u64> = after.iter().map(|e| e.seq).skip(10).collect();
        assert_eq!(last_kept, [17, 20, 22, 23]);

        // A reopened log continues after the last event, not after the compacted ones.
        let reopened = SessionLog::open(&store, "s1").await.unwrap().unwrap();
        assert_eq!(reopened.next_seq(), 24);
    });
}

#[test]
fn compaction_keeps_a_title_written_meanwhile() {
    block_on(async {
        let store = MemoryStore::new();
        let mut log = SessionLog::create(&store, header("s1", "c1", 10))
            .await
            .unwrap();
        append_all(
            &mut log,
            vec![start("t"), delta("t", "x"), end("t", "x", false)],
        )
        .await;
        let mut renamed = log.header().clone();
        renamed.title = "Light".into();
        put_json(&store, Collection::Sessions, "s1", &renamed)
            .await
            .unwrap();
        assert_eq!(log.compact().await.unwrap(), 1);
        let stored: SessionHeader = get_json(&store, Collection::Sessions, "s1")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (stored.title.as_str(), stored.compacted_through),
            ("Light", 3)
        );
    });
}

#[test]
fn superseded_turn_keeps_its_deltas() {
    block_on(async {
        let store = MemoryStore::new();
        let mut log = SessionLog::create(&store, header("s1", "c1", 10))
            .await
            .unwrap();
        append_all(
            &mut log,
            vec![
                start("t"),
                delta("t", "cut "),
                start("t"),
                delta("t", "again"),
                end("t", "again", false),
                delta("t", "stray"),
            ],
        )
        .await;
        let (before, _) = log.read().await.unwrap();
        assert_eq!(log.compact().await.unwrap(), 1);
        let (after, _) = log.read().await.unwrap();
        assert_eq!(
            after.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [1, 2, 3, 5, 6]
        );
        let view = fold(&after);
        assert_eq!(view, fold(&before));
        assert_eq!(view.messages[0].text, "cut ");
        assert!(view.messages[0].interrupted && !view.messages[0].complete);
        assert_eq!(view.messages[1].text, "again");
        assert!(view.messages[1].complete);
        assert_eq!(view.messages[2].text, "stray");
        assert_eq!(view.speaking.as_deref(), Some("t"));
    });
}

#[test]
fn streamed_then_interrupted_turn_resumes_as_interrupted() {
    let events = logged(vec![
        user("Tell me about frogs"),
        decide("teacher"),
        start("teacher"),
        think("teacher", "Frogs..."),
        delta("teacher", "Frogs are "),
        action("teacher", "a1"),
        delta("teacher", "amphibians"),
    ]);
    let mut view = fold(&events);
    let open = &view.messages[1];
    assert_eq!(open.speaker, ViewSpeaker::Agent("teacher".into()));
    assert_eq!(open.text, "Frogs are amphibians");
    assert_eq!(open.actions.len(), 1);
    assert!(!open.complete && !open.interrupted);
    assert_eq!(view.speaking.as_deref(), Some("teacher"));
    assert_eq!(view.thinking.as_deref(), Some("Frogs..."));
    assert_eq!(
        view.resume_point(),
        Resume::InterruptedTurn {
            agent_id: "teacher".into()
        }
    );

    let checkpoints = view.interrupted_checkpoints();
    assert_eq!(
        checkpoints,
        vec![end("teacher", "Frogs are amphibians", true)]
    );
    view.apply(&LoggedEvent {
        seq: 8,
        at_ms: 9,
        event: checkpoints[0].clone(),
    });
    let shown = &view.messages[1];
    assert_eq!(shown.text, "Frogs are amphibians");
    assert!(shown.interrupted && !shown.complete);
    assert_eq!(shown.actions.len(), 1);
    assert_eq!(view.speaking, None);
    assert_eq!(view.thinking, None);
    assert_eq!(view.resume_point(), Resume::Idle);
    assert!(view.interrupted_checkpoints().is_empty());
}

#[test]
fn lone_agent_round_ending_in_cue_learner_waits_for_the_learner() {
    let view = fold(&logged(vec![
        user("Hi"),
        start("teacher"),
        delta("teacher", "Hello"),
        end("teacher", "Hello!", false),
        cue(Some("teacher")),
    ]));
    assert!(view.waiting_for_learner);
    assert_eq!(view.resume_point(), Resume::WaitingForLearner);
    assert_eq!(view.speaking, None);
    assert_eq!(view.last_seq, 5);
    let answer = &view.messages[1];
    assert_eq!(answer.text, "Hello!");
    assert!(answer.complete && !answer.interrupted);

    let mut next = view.clone();
    next.apply(&LoggedEvent {
        seq: 6,
        at_ms: 0,
        event: user("And?"),
    });
    assert!(!next.waiting_for_learner);
    assert_eq!(next.resume_point(), Resume::Idle);
}

#[test]
fn session_end_ends_until_the_next_round() {
    let mut events = vec![
        user("Hi"),
        decide("teacher"),
        start("teacher"),
        end("teacher", "Hello", false),
        ClassEvent::Error {
            agent_id: None,
            message: "the classmate timed out".into(),
        },
        decide("END"),
        session_end(),
    ];
    let view = fold(&logged(events.clone()));
    assert_eq!(
        view.ended,
        Some(RoundEnd::Ended(EndReason::DirectorSaidEnd))
    );
    assert_eq!(view.errors, ["the classmate timed out"]);
    assert_eq!(view.resume_point(), Resume::Ended);
    assert!(!view.waiting_for_learner);

    events.push(user("One more question"));
    let view = fold(&logged(events));
    assert_eq!(view.ended, None);
    assert_eq!(view.resume_point(), Resume::Idle);
}

#[test]
fn sessions_of_course_are_newest_first_and_per_course() {
    block_on(async {
        let store = MemoryStore::new();
        for (id, course, started) in [
            ("a", "c1", 100),
            ("b", "c2", 500),
            ("c", "c1", 300),
            ("d", "c1", 200),
            ("e", "c1", 300),
        ] {
            let mut log = SessionLog::create(&store, header(id, course, started))
                .await
                .unwrap();
            log.append(1, user("hi")).await.unwrap();
        }
        store
            .put(Collection::Sessions, "broken", "{".into())
            .await
            .unwrap();
        let ids = |headers: Vec<SessionHeader>| -> Vec<String> {
            headers.into_iter().map(|h| h.id).collect()
        };
        assert_eq!(
            ids(sessions_of_course(&store, "c1").await.unwrap()),
            ["c", "e", "d", "a"]
        );
        assert_eq!(ids(sessions_of_course(&store, "c2").await.unwrap()), ["b"]);
        assert!(sessions_of_course(&store, "c3").await.unwrap().is_empty());
    });
}

#[test]
fn delete_session_removes_only_that_session() {
    block_on(async {
        let store = MemoryStore::new();
        for id in ["s1", "s10", "s2"] {
            let mut log = SessionLog::create(&store, header(id, "c1", 1))
                .await
                .unwrap();
            append_all(&mut log, vec![user("a"), user("b")]).await;
        }
        delete_session(&store, "s1").await.unwrap();
        assert!(SessionLog::open(&store, "s1").await.unwrap().is_none());
        assert!(session_keys(&store, "s1/").await.is_empty());
        assert!(store
            .get(Collection::Sessions, "s1")
            .await
            .unwrap()
            .is_none());
        for id in ["s10", "s2"] {
            let log = SessionLog::open(&store, id).await.unwrap().unwrap();
            assert_eq!(log.read().await.unwrap().0.len(), 2, "{id}");
        }
        // Missing or impossible ids are fine and touch nothing.
        delete_session(&store, "s1").await.unwrap();
        delete_session(&store, "s10/e/0000000001").await.unwrap();
        assert_eq!(session_keys(&store, "s10/e/").await.len(), 2);
        // The recreated id starts afresh.
        let log = SessionLog::create(&store, header("s1", "c1", 2))
            .await
            .unwrap();
        assert_eq!(log.next_seq(), 1);
    });
}

/// xorshift64*: deterministic, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_event(rng: &mut Rng, step: u64) -> ClassEvent {
    let agent = ["teacher", "ana", "bo"][rng.below(3) as usize];
    let text = format!("w{step} ");
    match rng.below(20) {
        0 => user(&text),
        1 => decide(["teacher", "ana", "USER", "END"][rng.below(4) as usize]),
        2 | 3 => start(agent),
        4..=8 => delta(agent, &text),
        9 | 10 => think(agent, &text),
        11 => think_end(agent),
        12 => action(agent, &format!("a{step}")),
        13 | 14 => end(agent, &format!("said {step}"), rng.below(4) == 0),
        15 => cue(Some(agent)),
        16 => ClassEvent::Error {
            agent_id: None,
            message: text.clone(),
        },
        17 => session_end(),
        // Mostly well-formed turns: start, deltas, end of the same agent.
        _ => delta("teacher", &text),
    }
}

fn check_invariants(view: &SessionView, events: &[LoggedEvent]) {
    assert_eq!(view.last_seq, events.last().map_or(0, |e| e.seq));
    let open: Vec<&str> = view
        .messages
        .iter()
        .filter_map(|m| m.open_agent())
        .collect();
    assert_eq!(view.speaking.as_deref(), open.last().copied());
    let mut distinct = open.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), open.len(), "one open message per agent");
    assert_eq!(
        view.interrupted_checkpoints().len(),
        open.len(),
        "a checkpoint for every open turn"
    );
    let mut closed = view.clone();
    for (event, seq) in view.interrupted_checkpoints().into_iter().zip(1..) {
        closed.apply(&LoggedEvent {
            seq: view.last_seq + seq,
            at_ms: 0,
            event,
        });
    }
    assert!(!matches!(
        closed.resume_point(),
        Resume::InterruptedTurn { .. }
    ));
}

#[test]
fn incremental_apply_equals_fold_and_compaction_keeps_the_fold_on_random_logs() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut total_removed, mut open_at_end) = (0, 0);
    for case in 0..60 {
        let len = 1 + rng.below(120);
        let events: Vec<LoggedEvent> = (1..=len)
            .map(|seq| LoggedEvent {
                seq,
                at_ms: seq * 7,
                event: random_event(&mut rng, seq),
            })
            .collect();

        // Apply one by one, checking every prefix against a fresh fold of it.
        let mut view = SessionView::default();
        for (i, event) in events.iter().enumerate() {
            view.apply(event);
            if i % 7 == 0 {
                assert_eq!(view, fold(&events[..=i]), "case {case}, prefix {i}");
            }
        }
        assert_eq!(view, fold(&events), "case {case}");
        check_invariants(&view, &events);
        open_at_end += usize::from(view.speaking.is_some());

        // Same events through a store, compacting at random points along the way.
        block_on(async {
            let store = MemoryStore::new();
            let mut log = SessionLog::create(&store, header("s", "c", 0))
                .await
                .unwrap();
            let mut removed = 0;
            for event in &events {
                log.append(event.at_ms, event.event.clone()).await.unwrap();
                if rng.below(10) == 0 {
                    let (before, _) = log.read().await.unwrap();
                    removed += log.compact().await.unwrap();
                    let (after, _) = log.read().await.unwrap();
                    assert_eq!(fold(&after), fold(&before), "case {case}");
                }
            }
            removed += log.compact().await.unwrap();
            let (after, skipped) = log.read().await.unwrap();
            assert!(skipped.is_empty());
            assert_eq!(
                fold(&after),
                view,
                "case {case}: compaction changed the view"
            );
            assert_eq!(after.len() + removed, events.len());
            assert_eq!(log.compact().await.unwrap(), 0, "case {case}: idempotent");

            // What a single full compaction removes, incremental ones removed too.
            let full = MemoryStore::new();
            let mut once = SessionLog::create(&full, header("s", "c", 0))
                .await
                .unwrap();
            for event in &events {
                once.append(event.at_ms, event.event.clone()).await.unwrap();
            }
            assert_eq!(once.compact().await.unwrap(), removed, "case {case}");
            assert_eq!(once.read().await.unwrap().0, after);
            total_removed += removed;
        });
    }
    // The generator must exercise both paths, or the test proves nothing.
    assert!(
        total_removed > 100,
        "only {total_removed} records compacted"
    );
    assert!(
        open_at_end > 5,
        "only {open_at_end} logs end in an open turn"
    );
}

/// Everything of one course across the store, as (collection, key) pairs, sorted.
async fn all_keys(store: &MemoryStore) -> Vec<(&'static str, String)> {
    let mut keys = Vec::new();
    for collection in Collection::ALL {
        for key in store.keys(collection).await.unwrap() {
            keys.push((collection.name(), key));
        }
    }
    keys.sort();
    keys
}

#[test]
fn deleting_a_course_takes_everything_it_owns_and_leaves_the_rest_and_undo_puts_it_back() {
    block_on(async {
        let store = MemoryStore::new();
        for course in ["c1", "c2"] {
            store
                .put(
                    Collection::Courses,
                    course,
                    format!("{{\"id\":\"{course}\"}}"),
                )
                .await
                .unwrap();
            store
                .put(Collection::Jobs, course, "{}".into())
                .await
                .unwrap();
            for key in [
                current_conversation_key(course),
                resume_key(course),
                opened_key(course),
                made_key(course),
            ] {
                store
                    .put(Collection::Sessions, &key, "1".into())
                    .await
                    .unwrap();
            }
            for started in [10, 20] {
                let id = new_session_id(course, started);
                let mut log = SessionLog::create(&store, header(&id, course, started))
                    .await
                    .unwrap();
                log.append(started + 1, user("hi")).await.unwrap();
                log.append(started + 2, user("again")).await.unwrap();
            }
        }
        // A key under the session's prefix that is not an event is the session's too.
        store
            .put(Collection::Sessions, "c1~10/e/junk", "?".into())
            .await
            .unwrap();
        store
            .put(Collection::Settings, "provider", "{}".into())
            .await
            .unwrap();
        let before = all_keys(&store).await;

        let deleted = delete_course(&store, "c1").await.unwrap();
        let after = all_keys(&store).await;
        assert!(
            after.iter().all(|(_, key)| !key.contains("c1")),
            "left of c1: {after:?}"
        );
        assert_eq!(after.iter().filter(|(_, k)| k.contains("c2")).count(), 12);
        assert!(after.contains(&("settings", "provider".to_owned())));
        // 1 course, 1 job, 4 pointers, 2 sessions × (header + 2 events), 1 stray key.
        assert_eq!(deleted.len(), 13, "{deleted:?}");
        assert_eq!(deleted.last().unwrap().collection, Collection::Courses);

        restore_records(&store, &deleted).await.unwrap();
        assert_eq!(all_keys(&store).await, before);
        let log = SessionLog::open(&store, "c1~20").await.unwrap().unwrap();
        assert_eq!(log.read().await.unwrap().0.len(), 2);

        // Deleting a course that is not there deletes nothing.
        assert!(delete_course(&store, "nope").await.unwrap().is_empty());
        assert_eq!(all_keys(&store).await, before);
    });
}
