//! The learner's conversation with the class about one course, kept as a session event log in
//! IndexedDB (`aula_director::session`). One writer task per classroom visit owns the log: it
//! reads the course's latest session back first (a turn cut off by a reload is closed there as
//! interrupted, so the next reload agrees), then appends every event in the order the page hands
//! them over, compacting a turn's text deltas at its checkpoint.

use aula_director::session::{
    current_conversation_key, fold, new_session_id, ClassEvent, LoggedEvent, SessionHeader,
    SessionLog, SessionView,
};
use aula_storage::{get_json, put_json, Collection, Store};
use futures_channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};
use futures_util::StreamExt;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::library::open_store;

enum LogCommand {
    Append(ClassEvent),
    /// The next event opens a new session; the old one stays in the store, no longer current.
    StartOver,
}

/// The page's handle on the writer task; dropping the classroom closes it.
#[derive(Clone, Copy)]
pub struct ClassLog {
    inbox: StoredValue<Option<UnboundedSender<LogCommand>>>,
}

impl ClassLog {
    /// Starts the writer for `course_id`. `restored` receives the fold of the course's latest
    /// session (empty when there is none, or when the store cannot be read) before any event the
    /// page appends meanwhile is written.
    pub fn open(
        course_id: String,
        title: String,
        restored: impl FnOnce(SessionView) + 'static,
    ) -> ClassLog {
        let (sender, inbox) = unbounded();
        spawn_local(write(course_id, title, inbox, restored));
        let log = ClassLog {
            inbox: StoredValue::new(Some(sender)),
        };
        on_cleanup(move || {
            log.inbox.try_update_value(|inbox| inbox.take());
        });
        log
    }

    /// Appends `event` if the log keeps its kind ([`ClassEvent::is_logged`]).
    pub fn append(&self, event: ClassEvent) {
        if event.is_logged() {
            self.send(LogCommand::Append(event));
        }
    }

    /// The next question starts a new conversation.
    pub fn start_over(&self) {
        self.send(LogCommand::StartOver);
    }

    fn send(&self, command: LogCommand) {
        // try_: a round's last updates may come after the classroom (and its log) is gone.
        self.inbox.try_with_value(|inbox| {
            if let Some(inbox) = inbox {
                let _ = inbox.unbounded_send(command);
            }
        });
    }
}

/// One line in the console for what went wrong with the log; the classroom goes on without it.
fn warn(what: &str, error: &dyn std::fmt::Display) {
    leptos::logging::warn!("classroom: {what}: {error}");
}

/// Milliseconds since the Unix epoch, for the log's timestamps.
fn wall_ms() -> u64 {
    js_sys::Date::now() as u64
}

async fn write(
    course_id: String,
    title: String,
    mut inbox: UnboundedReceiver<LogCommand>,
    restored: impl FnOnce(SessionView),
) {
    let store = match open_store().await {
        Ok(store) => store,
        Err(error) => {
            warn("the conversation will not be kept", &error);
            restored(SessionView::default());
            return;
        }
    };
    // The course's current conversation, named by a pointer record: one read instead of
    // reading every session's header.
    let pointer = current_conversation_key(&course_id);
    let latest = match get_json::<_, String>(&store, Collection::Sessions, &pointer).await {
        Ok(id) => id,
        Err(error) => {
            warn("the last conversation is unknown", &error);
            None
        }
    };
    let mut log = match latest {
        Some(id) => SessionLog::open(&store, &id).await.unwrap_or_else(|error| {
            warn("the last conversation is damaged", &error);
            None
        }),
        None => None,
    };
    let mut view = SessionView::default();
    if let Some(log) = log.as_mut() {
        match log.read().await {
            Ok((events, skipped)) => {
                for (key, reason) in skipped {
                    warn(&format!("skipped the damaged record {key}"), &reason);
                }
                view = fold(&events);
                // A turn the last visit left streaming was cut off: say so in the log itself.
                let checkpoints = view.interrupted_checkpoints();
                let closed_any = !checkpoints.is_empty();
                for checkpoint in checkpoints {
                    let at_ms = wall_ms();
                    match log.append(at_ms, checkpoint.clone()).await {
                        Ok(seq) => view.apply(&LoggedEvent {
                            seq,
                            at_ms,
                            event: checkpoint,
                        }),
                        Err(error) => warn("writing the conversation", &error),
                    }
                }
                // Finished turns were compacted at their checkpoints; only new ones need it.
                if closed_any {
                    if let Err(error) = log.compact().await {
                        warn("compacting the conversation", &error);
                    }
                }
            }
            Err(error) => warn("the last conversation", &error),
        }
    }
    restored(view);

    while let Some(command) = inbox.next().await {
        let event = match command {
            LogCommand::StartOver => {
                log = None;
                // The next visit opens empty even if nothing is asked before it.
                if let Err(error) = store.delete(Collection::Sessions, &pointer).await {
                    warn("the old conversation may reopen", &error);
                }
                continue;
            }
            LogCommand::Append(event) => event,
        };
        if log.is_none() {
            let started = wall_ms();
            let header = SessionHeader::new(
                new_session_id(&course_id, started),
                &course_id,
                &title,
                started,
            );
            match SessionLog::create(&store, header).await {
                Ok(created) => {
                    let id = created.id().to_owned();
                    if let Err(error) = put_json(&store, Collection::Sessions, &pointer, &id).await
                    {
                        warn("the conversation will not reopen", &error);
                    }
                    log = Some(created);
                }
                Err(error) => {
                    warn("the conversation is not kept", &error);
                    continue;
                }
            }
        }
        let Some(log) = log.as_mut() else { continue };
        let checkpoint = matches!(event, ClassEvent::AgentEnd { .. });
        if let Err(error) = log.append(wall_ms(), event).await {
            warn("an event of the conversation was lost", &error);
        }
        if checkpoint {
            if let Err(error) = log.compact().await {
                warn("compacting the conversation", &error);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use aula_director::session::{event_key, ViewSpeaker};
    use wasm_bindgen_test::*;

    use super::*;

    wasm_bindgen_test_configure!(run_in_browser);

    /// Lets the writer task run for `ms`.
    async fn pause(ms: i32) {
        let promise = js_sys::Promise::new(&mut |resolve, _| {
            let _ = web_sys::window()
                .unwrap()
                .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        });
        let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
    }

    #[wasm_bindgen_test]
    async fn a_turn_a_reload_cut_off_comes_back_marked_and_the_log_says_so() {
        let _ = any_spawner::Executor::init_wasm_bindgen();
        let memory = crate::store::use_memory_store();
        let header = SessionHeader::new("c1~1", "c1", "Tides", 1);
        let mut log = SessionLog::create(&*memory, header).await.unwrap();
        for event in [
            ClassEvent::LearnerMessage {
                text: "Why two tides a day?".into(),
            },
            ClassEvent::AgentStart {
                agent_id: "teacher".into(),
            },
            ClassEvent::Text {
                agent_id: "teacher".into(),
                text: "Because the Earth".into(),
            },
        ] {
            log.append(2, event).await.unwrap();
        }
        put_json(
            &*memory,
            Collection::Sessions,
            &current_conversation_key("c1"),
            &"c1~1",
        )
        .await
        .unwrap();

        let (sender, receiver) = futures_channel::oneshot::channel();
        let owner = Owner::new();
        let _log = owner.with(|| {
            ClassLog::open("c1".into(), "Tides".into(), move |view| {
                let _ = sender.send(view);
            })
        });
        let view = receiver.await.expect("the log is read back");
        assert_eq!(view.messages.len(), 2);
        assert_eq!(view.messages[0].speaker, ViewSpeaker::Learner);
        assert_eq!(view.messages[1].text, "Because the Earth");
        assert!(view.messages[1].interrupted && view.speaking.is_none());

        // The log itself now closes the turn, so the next visit agrees; its deltas are compacted.
        let checkpoint = memory
            .get(Collection::Sessions, &event_key("c1~1", 4))
            .await
            .unwrap()
            .expect("a checkpoint was appended");
        assert!(
            checkpoint.contains("\"agent_end\"") && checkpoint.contains("\"interrupted\":true")
        );
        assert_eq!(
            memory
                .get(Collection::Sessions, &event_key("c1~1", 3))
                .await
                .unwrap(),
            None
        );
    }

    #[wasm_bindgen_test]
    async fn a_course_without_a_conversation_opens_empty_and_the_first_event_starts_one() {
        let _ = any_spawner::Executor::init_wasm_bindgen();
        let memory = crate::store::use_memory_store();
        let (sender, receiver) = futures_channel::oneshot::channel();
        let owner = Owner::new();
        let log = owner.with(|| {
            ClassLog::open("c2".into(), "Waves".into(), move |view| {
                let _ = sender.send(view);
            })
        });
        let view = receiver.await.unwrap();
        assert!(view.messages.is_empty());
        log.append(ClassEvent::LearnerMessage {
            text: "What is a wave?".into(),
        });
        // A dropped reply item is not kept.
        log.append(ClassEvent::Dropped {
            agent_id: "teacher".into(),
            name: "laser".into(),
            reason: "not here".into(),
        });
        let pointer = current_conversation_key("c2");
        let mut id = None;
        for _ in 0..50 {
            id = get_json::<_, String>(&*memory, Collection::Sessions, &pointer)
                .await
                .unwrap();
            if id.is_some() {
                break;
            }
            pause(10).await;
        }
        let id = id.expect("the conversation got a session");
        let keys = memory.keys(Collection::Sessions).await.unwrap();
        let events: Vec<&String> = keys
            .iter()
            .filter(|k| k.starts_with(&format!("{id}/e/")))
            .collect();
        assert_eq!(events.len(), 1, "{keys:?}");
    }
}
