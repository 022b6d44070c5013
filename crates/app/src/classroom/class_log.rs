//! The learner's conversation with the class about one course, kept as a session event log in
//! IndexedDB (`aula_storage::session`). One writer task per classroom visit owns the log: it
//! reads the course's latest session back first (a turn cut off by a reload is closed there as
//! interrupted, so the next reload agrees), then appends every event in the order the page hands
//! them over, compacting a turn's text deltas at its checkpoint.

use aula_director::wire::RoundUpdate;
use aula_storage::session::{
    current_conversation_key, fold, new_session_id, LoggedEvent, SessionEvent, SessionHeader,
    SessionLog, SessionView, NEXT_END,
};
use aula_storage::{get_json, put_json, Collection, Store};
use futures_channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};
use futures_util::StreamExt;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::library::open_store;

enum LogCommand {
    Append(SessionEvent),
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

    pub fn append(&self, event: SessionEvent) {
        self.send(LogCommand::Append(event));
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
            leptos::logging::warn!("classroom: the conversation will not be kept: {error}");
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
            leptos::logging::warn!("classroom: the last conversation is unknown: {error}");
            None
        }
    };
    let mut log = match latest {
        Some(id) => SessionLog::open(&store, &id).await.unwrap_or_else(|error| {
            leptos::logging::warn!("classroom: the last conversation is damaged: {error}");
            None
        }),
        None => None,
    };
    let mut view = SessionView::default();
    if let Some(log) = log.as_mut() {
        match log.read().await {
            Ok((events, skipped)) => {
                for (key, reason) in skipped {
                    leptos::logging::warn!("classroom: skipped the damaged record {key}: {reason}");
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
                        Err(error) => leptos::logging::warn!("classroom: {error}"),
                    }
                }
                // Finished turns were compacted at their checkpoints; only new ones need it.
                if closed_any {
                    if let Err(error) = log.compact().await {
                        leptos::logging::warn!("classroom: compacting the conversation: {error}");
                    }
                }
            }
            Err(error) => leptos::logging::warn!("classroom: the last conversation: {error}"),
        }
    }
    restored(view);

    while let Some(command) = inbox.next().await {
        let event = match command {
            LogCommand::StartOver => {
                log = None;
                // The next visit opens empty even if nothing is asked before it.
                if let Err(error) = store.delete(Collection::Sessions, &pointer).await {
                    leptos::logging::warn!("classroom: the old conversation may reopen: {error}");
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
                        leptos::logging::warn!(
                            "classroom: the conversation will not reopen: {error}"
                        );
                    }
                    log = Some(created);
                }
                Err(error) => {
                    leptos::logging::warn!("classroom: the conversation is not kept: {error}");
                    continue;
                }
            }
        }
        let Some(log) = log.as_mut() else { continue };
        let checkpoint = matches!(event, SessionEvent::AgentEnd { .. });
        if let Err(error) = log.append(wall_ms(), event).await {
            leptos::logging::warn!("classroom: an event of the conversation was lost: {error}");
        }
        if checkpoint {
            if let Err(error) = log.compact().await {
                leptos::logging::warn!("classroom: compacting the conversation: {error}");
            }
        }
    }
}

/// The log's record of a round update, if the update is one the log keeps (usage and dropped
/// actions are not).
pub fn session_event(update: &RoundUpdate) -> Option<SessionEvent> {
    let agent_id = || update.agent_id.clone().unwrap_or_default();
    let text = || update.text.clone();
    Some(match update.event.as_str() {
        "decision" => {
            let (next, reason) = match update.text.strip_prefix(NEXT_END) {
                Some(rest) => (
                    NEXT_END.to_owned(),
                    Some(rest.trim_start_matches(':').trim().to_owned()).filter(|r| !r.is_empty()),
                ),
                None => (update.text.clone(), None),
            };
            SessionEvent::DirectorDecision {
                next,
                by_llm: update.by_llm,
                reason,
            }
        }
        "agent_start" => SessionEvent::AgentStart {
            agent_id: agent_id(),
        },
        "text" => SessionEvent::TextDelta {
            agent_id: agent_id(),
            text: text(),
        },
        "thinking" => SessionEvent::Thinking {
            agent_id: agent_id(),
            text: text(),
        },
        "thinking_end" => SessionEvent::ThinkingEnd {
            agent_id: agent_id(),
        },
        "action" => SessionEvent::Action {
            agent_id: agent_id(),
            action: serde_json::from_str(update.action.as_deref()?).ok()?,
        },
        "agent_end" => SessionEvent::AgentEnd {
            agent_id: agent_id(),
            text: text(),
            interrupted: update.interrupted,
        },
        "cue_learner" => SessionEvent::CueUser {
            from_agent: update.agent_id.clone(),
        },
        "error" => SessionEvent::Error { message: text() },
        "finished" => SessionEvent::SessionEnd { reason: text() },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::wasm_bindgen_test;

    use super::*;

    fn update(event: &str, agent: Option<&str>, text: &str) -> RoundUpdate {
        RoundUpdate {
            event: event.into(),
            agent_id: agent.map(str::to_owned),
            text: text.into(),
            ..RoundUpdate::default()
        }
    }

    #[wasm_bindgen_test]
    fn round_updates_become_the_events_the_log_keeps() {
        let ended = session_event(&RoundUpdate {
            by_llm: true,
            ..update("decision", None, "END: the question was answered")
        });
        assert_eq!(
            ended,
            Some(SessionEvent::DirectorDecision {
                next: "END".into(),
                by_llm: true,
                reason: Some("the question was answered".into()),
            })
        );
        assert_eq!(
            session_event(&update("decision", None, "teacher")),
            Some(SessionEvent::DirectorDecision {
                next: "teacher".into(),
                by_llm: false,
                reason: None,
            })
        );
        assert_eq!(
            session_event(&RoundUpdate {
                interrupted: true,
                ..update("agent_end", Some("t"), "Half of it")
            }),
            Some(SessionEvent::AgentEnd {
                agent_id: "t".into(),
                text: "Half of it".into(),
                interrupted: true,
            })
        );
        let drawn = session_event(&RoundUpdate {
            action: Some(r#"{"type":"wb_open","id":"a1"}"#.into()),
            ..update("action", Some("t"), "")
        });
        assert!(
            matches!(drawn, Some(SessionEvent::Action { action, .. }) if action["type"] == "wb_open")
        );
        // A broken action and the events the log does not keep give nothing.
        let broken = RoundUpdate {
            action: Some("{".into()),
            ..update("action", Some("t"), "")
        };
        assert_eq!(session_event(&broken), None);
        assert_eq!(session_event(&update("usage", None, "10+2")), None);
        assert_eq!(
            session_event(&update("text", Some("t"), "Hi")),
            Some(SessionEvent::TextDelta {
                agent_id: "t".into(),
                text: "Hi".into()
            })
        );
    }
}
