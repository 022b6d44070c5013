//! A classroom session as an append-only event log, and the pure fold that turns it into what the
//! learner sees.
//!
//! # Layout
//!
//! Everything lives in [`Collection::Sessions`]:
//!
//! * `<session_id>` holds the [`SessionHeader`] (course, scene, start time, title, `format: 1`,
//!   `compacted_through`).
//! * `<session_id>/e/<seq>` holds one [`LoggedEvent`] per event, `seq` written as ten zero-padded
//!   digits (`s1/e/0000000042`), so the store's ascending key order is the event order. Sequence
//!   numbers start at 1 and are never reused; [`MAX_SEQ`] is the last one that fits ten digits.
//!
//! A session id must be non-empty and must not contain `/`: that keeps a header key from ever
//! looking like another session's event key, and `<id>/e/` from being a prefix of another
//! session's keys. Each event is its own record written by one `put`, so a crash loses at most
//! the event being written. One [`SessionLog`] is meant to write a session at a time.
//!
//! The app's classroom keeps two other records in the same collection: `talk:<course id>`, the
//! id of the course's current conversation as a JSON string (so opening a classroom reads one
//! pointer, not every session's header), and `resume:<course id>`, where the lecture stopped.
//! Neither parses as a header, so [`sessions_of_course`] passes them by. Every key format of the
//! collection is defined here: [`new_session_id`], [`event_key`], [`current_conversation_key`]
//! and [`resume_key`].
//!
//! A record that does not parse (damaged, or written by a newer Aula with an event kind this one
//! does not know) is skipped and reported by [`SessionLog::read`], and never deleted.
//!
//! # Compaction rule
//!
//! A *turn* is an `AgentStart { agent_id }` up to the next `AgentEnd` of the same agent. A turn
//! is *finished* when that `AgentEnd` exists before another `AgentStart` of the same agent (a
//! second start supersedes the first, which then stays unfinished forever). The `AgentEnd`
//! carries everything the turn said, so [`SessionLog::compact`] deletes the `TextDelta` and
//! `Thinking` records of finished turns and nothing else: starts, ends, actions, `ThinkingEnd`,
//! deltas outside any turn and every record of an unfinished turn stay. Deleting comes first, then
//! the header's `compacted_through` advances to the last sequence number before which no turn is
//! still open, so the next compaction reads only what came after. Compaction is idempotent and
//! never changes [`fold`]'s result.
//!
//! # Resume rule
//!
//! [`fold`] (the same as [`SessionView::apply`] on each event) shows a turn that has its
//! `AgentStart` but no `AgentEnd` yet as an *open* message: the text streamed so far,
//! `complete: false, interrupted: false`, and [`SessionView::speaking`] names its agent. While
//! the stream runs that is exactly right. After a reload no stream is running, so
//! [`SessionView::resume_point`] returns [`Resume::InterruptedTurn`] and the app appends the
//! checkpoints from [`SessionView::interrupted_checkpoints`]: `AgentEnd { interrupted: true }` with
//! the text streamed so far. From then on the message is shown with that text and
//! `interrupted: true, complete: false`, and the log itself says the turn was cut off, so the
//! next reload agrees. Otherwise the resume point is [`Resume::Ended`] after a `SessionEnd`,
//! [`Resume::WaitingForLearner`] after a `CueUser` (or a director's decision for `"USER"`), and
//! [`Resume::Idle`] when none of these hold (a new session, or a round cut off between turns).
//!
//! A `DiscussionStart` is shown as a topic line ([`ViewSpeaker::DiscussionTopic`]) before the
//! discussion's turns.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{get_json, put_json, Collection, Store, StoreError};

/// The header's `format`: bump when the layout or the event encoding changes incompatibly.
pub const SESSION_FORMAT: u32 = 1;

/// The largest sequence number: ten digits keep the keys in order.
pub const MAX_SEQ: u64 = 9_999_999_999;

/// What a `DirectorDecision`'s `next` says when the learner is to speak.
pub const NEXT_USER: &str = "USER";

/// What a `DirectorDecision`'s `next` says when the round is over.
pub const NEXT_END: &str = "END";

/// One thing that happened in a classroom session, in order. Serialized with a "kind" tag in
/// snake_case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SessionEvent {
    UserMessage {
        text: String,
    },
    /// `next` is an agent id, "USER" or "END"; `reason` explains an END.
    DirectorDecision {
        next: String,
        by_llm: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    AgentStart {
        agent_id: String,
    },
    TextDelta {
        agent_id: String,
        text: String,
    },
    Thinking {
        agent_id: String,
        text: String,
    },
    ThinkingEnd {
        agent_id: String,
    },
    /// The action as the course JSON of an action ({"type": ..., "id": ..., ...}).
    Action {
        agent_id: String,
        action: serde_json::Value,
    },
    /// The checkpoint of a turn: everything it said, and whether it was cut off.
    AgentEnd {
        agent_id: String,
        text: String,
        interrupted: bool,
    },
    CueUser {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_agent: Option<String>,
    },
    Error {
        message: String,
    },
    /// The round (or the whole discussion) is over.
    SessionEnd {
        reason: String,
    },
    /// A discussion opens: its topic, and the agent who opens it (stored as `text` and
    /// `agent_id`, like every other event).
    DiscussionStart {
        #[serde(rename = "text")]
        topic: String,
        #[serde(rename = "agent_id", default, skip_serializing_if = "Option::is_none")]
        initiator: Option<String>,
    },
}

/// An event as stored: its place in the session and when it happened (milliseconds since the
/// Unix epoch), flattened with the event into one JSON object:
/// `{"seq": 3, "at_ms": 1700000000000, "kind": "text_delta", "agent_id": "t", "text": "Hi"}`.
///
/// On disk it goes through [`Record`], one flat struct, rather than `#[serde(flatten)]` over the
/// tagged enum: the same JSON, but reading it costs the page's bundle a fraction of the code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "Record", try_from = "Record")]
pub struct LoggedEvent {
    pub seq: u64,
    pub at_ms: u64,
    pub event: SessionEvent,
}

/// A [`LoggedEvent`] as stored: every field any kind uses, absent when unused.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Record {
    seq: u64,
    at_ms: u64,
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    next: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    by_llm: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    action: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    interrupted: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    from_agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

impl From<LoggedEvent> for Record {
    fn from(logged: LoggedEvent) -> Record {
        let base = |kind: &str| Record {
            seq: logged.seq,
            at_ms: logged.at_ms,
            kind: kind.to_owned(),
            ..Record::default()
        };
        let by = |kind: &str, agent_id: String| Record {
            agent_id: Some(agent_id),
            ..base(kind)
        };
        match logged.event {
            SessionEvent::UserMessage { text } => Record {
                text: Some(text),
                ..base("user_message")
            },
            SessionEvent::DirectorDecision {
                next,
                by_llm,
                reason,
            } => Record {
                next: Some(next),
                by_llm: Some(by_llm),
                reason,
                ..base("director_decision")
            },
            SessionEvent::AgentStart { agent_id } => by("agent_start", agent_id),
            SessionEvent::TextDelta { agent_id, text } => Record {
                text: Some(text),
                ..by("text_delta", agent_id)
            },
            SessionEvent::Thinking { agent_id, text } => Record {
                text: Some(text),
                ..by("thinking", agent_id)
            },
            SessionEvent::ThinkingEnd { agent_id } => by("thinking_end", agent_id),
            SessionEvent::Action { agent_id, action } => Record {
                action: Some(action),
                ..by("action", agent_id)
            },
            SessionEvent::AgentEnd {
                agent_id,
                text,
                interrupted,
            } => Record {
                text: Some(text),
                interrupted: Some(interrupted),
                ..by("agent_end", agent_id)
            },
            SessionEvent::CueUser { from_agent } => Record {
                from_agent,
                ..base("cue_user")
            },
            SessionEvent::Error { message } => Record {
                message: Some(message),
                ..base("error")
            },
            SessionEvent::SessionEnd { reason } => Record {
                reason: Some(reason),
                ..base("session_end")
            },
            SessionEvent::DiscussionStart { topic, initiator } => Record {
                text: Some(topic),
                agent_id: initiator,
                ..base("discussion_start")
            },
        }
    }
}

impl TryFrom<Record> for LoggedEvent {
    type Error = String;

    fn try_from(record: Record) -> Result<LoggedEvent, String> {
        let kind = record.kind;
        let missing = |field: &str| format!("a \"{kind}\" event needs \"{field}\"");
        let need = |value: Option<String>, field: &str| value.ok_or_else(|| missing(field));
        let agent = |value: Option<String>| need(value, "agent_id");
        let event = match kind.as_str() {
            "user_message" => SessionEvent::UserMessage {
                text: need(record.text, "text")?,
            },
            "director_decision" => SessionEvent::DirectorDecision {
                next: need(record.next, "next")?,
                by_llm: record.by_llm.ok_or_else(|| missing("by_llm"))?,
                reason: record.reason,
            },
            "agent_start" => SessionEvent::AgentStart {
                agent_id: agent(record.agent_id)?,
            },
            "text_delta" => SessionEvent::TextDelta {
                agent_id: agent(record.agent_id)?,
                text: need(record.text, "text")?,
            },
            "thinking" => SessionEvent::Thinking {
                agent_id: agent(record.agent_id)?,
                text: need(record.text, "text")?,
            },
            "thinking_end" => SessionEvent::ThinkingEnd {
                agent_id: agent(record.agent_id)?,
            },
            "action" => SessionEvent::Action {
                agent_id: agent(record.agent_id)?,
                action: record.action.ok_or_else(|| missing("action"))?,
            },
            "agent_end" => SessionEvent::AgentEnd {
                agent_id: agent(record.agent_id)?,
                text: need(record.text, "text")?,
                interrupted: record.interrupted.ok_or_else(|| missing("interrupted"))?,
            },
            "cue_user" => SessionEvent::CueUser {
                from_agent: record.from_agent,
            },
            "error" => SessionEvent::Error {
                message: need(record.message, "message")?,
            },
            "session_end" => SessionEvent::SessionEnd {
                reason: need(record.reason, "reason")?,
            },
            "discussion_start" => SessionEvent::DiscussionStart {
                topic: need(record.text, "text")?,
                initiator: record.agent_id,
            },
            _ => return Err(format!("\"{kind}\" is not an event kind this Aula knows")),
        };
        Ok(LoggedEvent {
            seq: record.seq,
            at_ms: record.at_ms,
            event,
        })
    }
}

/// The record under `<session_id>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionHeader {
    pub id: String,
    pub course_id: String,
    #[serde(default)]
    pub scene_id: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub started_ms: u64,
    pub title: String,
    /// Always [`SESSION_FORMAT`] for sessions this version writes.
    pub format: u32,
    /// Every event up to this sequence number has been compacted, and no turn is open there.
    #[serde(default)]
    pub compacted_through: u64,
}

impl SessionHeader {
    /// A header for a new session with no scene.
    pub fn new(
        id: impl Into<String>,
        course_id: impl Into<String>,
        title: impl Into<String>,
        started_ms: u64,
    ) -> Self {
        Self {
            id: id.into(),
            course_id: course_id.into(),
            scene_id: None,
            started_ms,
            title: title.into(),
            format: SESSION_FORMAT,
            compacted_through: 0,
        }
    }
}

/// Whether `id` can name a session: non-empty, without `/`.
pub fn is_valid_session_id(id: &str) -> bool {
    !id.is_empty() && !id.contains('/')
}

/// A new session's id, from its course's id and its start time: a valid session id, since a
/// `/` in the course's id becomes `_`.
pub fn new_session_id(course_id: &str, started_ms: u64) -> String {
    format!("{}~{started_ms}", course_id.replace('/', "_"))
}

/// The record naming a course's current conversation: its session id as a JSON string.
pub fn current_conversation_key(course_id: &str) -> String {
    format!("talk:{course_id}")
}

/// The record of where a course's lecture stopped.
pub fn resume_key(course_id: &str) -> String {
    format!("resume:{course_id}")
}

/// The key of event `seq` of session `session_id`.
pub fn event_key(session_id: &str, seq: u64) -> String {
    format!("{session_id}/e/{seq:010}")
}

fn events_prefix(session_id: &str) -> String {
    format!("{session_id}/e/")
}

/// The event keys of a session: well-formed ones with their sequence numbers, sorted, and keys
/// under the session's prefix that are not `<id>/e/<ten digits>`.
struct EventKeys {
    events: Vec<(u64, String)>,
    malformed: Vec<String>,
}

async fn event_keys<S: Store>(store: &S, session_id: &str) -> Result<EventKeys, StoreError> {
    let prefix = events_prefix(session_id);
    let mut events = Vec::new();
    let mut malformed = Vec::new();
    for key in store.keys(Collection::Sessions).await? {
        let Some(rest) = key.strip_prefix(&prefix) else {
            continue;
        };
        if rest.len() == 10 && rest.bytes().all(|b| b.is_ascii_digit()) {
            // Ten ASCII digits always parse into a u64.
            let seq = rest.parse::<u64>().unwrap_or_default();
            events.push((seq, key));
        } else {
            malformed.push(key);
        }
    }
    events.sort();
    Ok(EventKeys { events, malformed })
}

/// What reading the events after some sequence number found.
struct Scan {
    events: Vec<LoggedEvent>,
    skipped: Vec<(String, String)>,
    /// The largest sequence number among the keys read, parsed or not.
    last_key_seq: Option<u64>,
}

async fn scan_events<S: Store>(
    store: &S,
    session_id: &str,
    after: u64,
) -> Result<Scan, StoreError> {
    let keys = event_keys(store, session_id).await?;
    let mut skipped: Vec<(String, String)> = keys
        .malformed
        .into_iter()
        .map(|key| {
            let reason = format!("the key is not \"{session_id}/e/\" and a ten-digit number");
            (key, reason)
        })
        .collect();
    let mut events = Vec::new();
    let mut last_key_seq = None;
    for (seq, key) in keys.events.into_iter().filter(|(seq, _)| *seq > after) {
        last_key_seq = Some(seq);
        // Listed but gone: deleted since the listing, nothing to show.
        let Some(text) = store.get(Collection::Sessions, &key).await? else {
            continue;
        };
        match serde_json::from_str::<LoggedEvent>(&text) {
            Ok(event) if event.seq == seq => events.push(event),
            Ok(event) => {
                let reason = format!(
                    "the record says it is event {} but is stored as event {seq}",
                    event.seq
                );
                skipped.push((key, reason));
            }
            Err(error) => skipped.push((key, error.to_string())),
        }
    }
    Ok(Scan {
        events,
        skipped,
        last_key_seq,
    })
}

/// Writes one session's events. Borrowing the store keeps the log from outliving it.
pub struct SessionLog<'s, S: Store> {
    store: &'s S,
    header: SessionHeader,
    next_seq: u64,
}

impl<'s, S: Store> SessionLog<'s, S> {
    /// Creates a new session (header written) — error if the id exists.
    ///
    /// The id must satisfy [`is_valid_session_id`]. The header is written with
    /// `format: SESSION_FORMAT` and `compacted_through: 0`, whatever `header` says. An id is
    /// taken if it has a header or any event record left over.
    pub async fn create(store: &'s S, mut header: SessionHeader) -> Result<Self, StoreError> {
        if !is_valid_session_id(&header.id) {
            return Err(StoreError::Backend(format!(
                "\"{}\" cannot name a session: it must not be empty or contain '/'",
                header.id
            )));
        }
        let taken = store.get(Collection::Sessions, &header.id).await?.is_some() || {
            let keys = event_keys(store, &header.id).await?;
            !keys.events.is_empty() || !keys.malformed.is_empty()
        };
        if taken {
            return Err(StoreError::Backend(format!(
                "a session called \"{}\" already exists",
                header.id
            )));
        }
        header.format = SESSION_FORMAT;
        header.compacted_through = 0;
        put_json(store, Collection::Sessions, &header.id, &header).await?;
        Ok(Self {
            store,
            header,
            next_seq: 1,
        })
    }

    /// Opens an existing session, continuing its sequence after the last stored event.
    ///
    /// `Ok(None)` if there is no such session (or `session_id` cannot name one). A header that
    /// does not parse, names another id, or has another format is [`StoreError::Corrupt`].
    pub async fn open(store: &'s S, session_id: &str) -> Result<Option<Self>, StoreError> {
        if !is_valid_session_id(session_id) {
            return Ok(None);
        }
        let Some(header) =
            get_json::<S, SessionHeader>(store, Collection::Sessions, session_id).await?
        else {
            return Ok(None);
        };
        let corrupt = |reason: String| StoreError::Corrupt {
            collection: Collection::Sessions.name(),
            key: session_id.to_owned(),
            reason,
        };
        if header.id != session_id {
            return Err(corrupt(format!("it is the header of \"{}\"", header.id)));
        }
        if header.format != SESSION_FORMAT {
            return Err(corrupt(format!(
                "it is in format {}, and this version of Aula reads format {SESSION_FORMAT}",
                header.format
            )));
        }
        let keys = event_keys(store, session_id).await?;
        let last = keys.events.last().map_or(0, |(seq, _)| *seq);
        let next_seq = last.max(header.compacted_through) + 1;
        Ok(Some(Self {
            store,
            header,
            next_seq,
        }))
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.header.id
    }

    /// The header as this log last wrote or read it.
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The sequence number the next [`SessionLog::append`] will use.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Appends one event (assigns seq and the given time) — one put per event, so a crash loses
    /// at most the event being written. Returns the event's sequence number; if the write fails,
    /// the next append uses the same number again.
    pub async fn append(&mut self, at_ms: u64, event: SessionEvent) -> Result<u64, StoreError> {
        let seq = self.next_seq;
        if seq > MAX_SEQ {
            return Err(StoreError::Backend(format!(
                "the session \"{}\" cannot hold more than {MAX_SEQ} events",
                self.header.id
            )));
        }
        let record = LoggedEvent { seq, at_ms, event };
        let key = event_key(&self.header.id, seq);
        put_json(self.store, Collection::Sessions, &key, &record).await?;
        self.next_seq = seq + 1;
        Ok(seq)
    }

    /// All events in order. A record that cannot be parsed is skipped and reported in the
    /// returned `skipped` list (key + reason) — never deleted, never a panic.
    pub async fn read(&self) -> Result<(Vec<LoggedEvent>, Vec<(String, String)>), StoreError> {
        let scan = scan_events(self.store, &self.header.id, 0).await?;
        Ok((scan.events, scan.skipped))
    }

    /// Compaction: for every turn that has its AgentEnd, delete its TextDelta and Thinking
    /// records (the AgentEnd carries the text) and advance `compacted_through` in the header.
    /// Never touches an unfinished turn. Idempotent. Returns how many records were removed.
    ///
    /// The header is read again first and only its `compacted_through` changes, so a title
    /// written meanwhile survives. A session deleted meanwhile is left alone (`Ok(0)`).
    pub async fn compact(&mut self) -> Result<usize, StoreError> {
        let id = self.header.id.clone();
        let Some(mut header) =
            get_json::<S, SessionHeader>(self.store, Collection::Sessions, &id).await?
        else {
            return Ok(0);
        };
        let from = header.compacted_through;
        let scan = scan_events(self.store, &id, from).await?;

        // Per agent: the open turn's start and the deltas seen in it so far.
        let mut open: BTreeMap<&str, (u64, Vec<u64>)> = BTreeMap::new();
        let mut doomed = Vec::new();
        for logged in &scan.events {
            match &logged.event {
                SessionEvent::AgentStart { agent_id } => {
                    // A second start supersedes an open turn, which keeps its deltas.
                    open.insert(agent_id, (logged.seq, Vec::new()));
                }
                SessionEvent::TextDelta { agent_id, .. }
                | SessionEvent::Thinking { agent_id, .. } => {
                    if let Some((_, deltas)) = open.get_mut(agent_id.as_str()) {
                        deltas.push(logged.seq);
                    }
                }
                SessionEvent::AgentEnd { agent_id, .. } => {
                    if let Some((_, deltas)) = open.remove(agent_id.as_str()) {
                        doomed.extend(deltas);
                    }
                }
                _ => {}
            }
        }
        let through = match open.values().map(|(start, _)| *start).min() {
            Some(start) => start - 1,
            None => scan.last_key_seq.unwrap_or(from),
        }
        .max(from);

        // Deletes before the header: a crash in between only means the next compaction looks
        // at these events again.
        for seq in &doomed {
            self.store
                .delete(Collection::Sessions, &event_key(&id, *seq))
                .await?;
        }
        if through != from {
            header.compacted_through = through;
            put_json(self.store, Collection::Sessions, &id, &header).await?;
        }
        self.header = header;
        Ok(doomed.len())
    }
}

/// Every session of a course, newest first (headers only). Sessions that started at the same
/// millisecond come in id order. A header that does not parse is left out (and left in place).
pub async fn sessions_of_course<S: Store>(
    store: &S,
    course_id: &str,
) -> Result<Vec<SessionHeader>, StoreError> {
    let mut headers = Vec::new();
    for key in store.keys(Collection::Sessions).await? {
        if !is_valid_session_id(&key) {
            continue;
        }
        match get_json::<S, SessionHeader>(store, Collection::Sessions, &key).await {
            Ok(Some(header)) if header.course_id == course_id => headers.push(header),
            Ok(_) | Err(StoreError::Corrupt { .. }) => {}
            Err(error) => return Err(error),
        }
    }
    headers.sort_by(|a, b| {
        b.started_ms
            .cmp(&a.started_ms)
            .then_with(|| a.id.cmp(&b.id))
    });
    Ok(headers)
}

/// Deletes a session and all its events. The events go first, so a failure part-way leaves a
/// session that still opens and can be deleted again. Deleting a missing session is fine.
pub async fn delete_session<S: Store>(store: &S, session_id: &str) -> Result<(), StoreError> {
    if !is_valid_session_id(session_id) {
        return Ok(());
    }
    let keys = event_keys(store, session_id).await?;
    for key in keys
        .events
        .iter()
        .map(|(_, key)| key)
        .chain(keys.malformed.iter())
    {
        store.delete(Collection::Sessions, key).await?;
    }
    store.delete(Collection::Sessions, session_id).await
}

/// Who said a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewSpeaker {
    Learner,
    /// An agent, by id.
    Agent(String),
    /// Not a speaker: a discussion opens here; the message's text is its topic.
    DiscussionTopic,
}

/// One message as the learner sees it.
///
/// An agent's message is *open* (still streaming, or cut off by a reload) while
/// `complete` and `interrupted` are both false; `complete` means it ended normally,
/// `interrupted` that it was cut off. Learner messages are always complete.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewMessage {
    pub speaker: ViewSpeaker,
    pub text: String,
    /// Course JSON of the actions the turn performed, in order.
    pub actions: Vec<serde_json::Value>,
    pub interrupted: bool,
    pub complete: bool,
}

impl ViewMessage {
    fn is_open_by(&self, agent: &str) -> bool {
        self.open_agent() == Some(agent)
    }

    fn open_agent(&self) -> Option<&str> {
        match &self.speaker {
            ViewSpeaker::Agent(id) if !self.complete && !self.interrupted => Some(id),
            _ => None,
        }
    }
}

/// What the app should do with a session it has just loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resume {
    /// Nothing is pending: a new session, or a round cut off between turns.
    Idle,
    /// The learner has the word.
    WaitingForLearner,
    /// A turn has no `AgentEnd`: append [`SessionView::interrupted_checkpoints`].
    InterruptedTurn { agent_id: String },
    /// The last round (or the discussion) is over.
    Ended,
}

/// The UI state of a session: the fold of its events.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionView {
    pub messages: Vec<ViewMessage>,
    /// The agent currently speaking (an AgentStart without its AgentEnd yet) — after a reload
    /// with no further events this is the interrupted turn: `resume_point()` tells the app to
    /// mark it interrupted. If several turns are open, the latest.
    pub speaking: Option<String>,
    /// Thinking text of the current turn, until ThinkingEnd (or the turn's start or end).
    pub thinking: Option<String>,
    /// The last thing was a CueUser (or a director's decision for "USER"); a learner message,
    /// an agent starting, another decision or a SessionEnd clears it.
    pub waiting_for_learner: bool,
    /// The reason of the last SessionEnd, until a learner message, a decision or an agent
    /// starts the next round.
    pub ended: Option<String>,
    pub errors: Vec<String>,
    /// The largest sequence number applied; 0 for none.
    pub last_seq: u64,
}

/// The view of `events`, in the order given: the same as [`SessionView::apply`] on each.
///
/// `TextDelta` and `Action` go to the agent's open message (opening one if there is none);
/// `AgentEnd` replaces that message's text with the checkpoint text and closes it.
pub fn fold(events: &[LoggedEvent]) -> SessionView {
    let mut view = SessionView::default();
    for event in events {
        view.apply(event);
    }
    view
}

impl SessionView {
    /// Applies one more event, so the UI can follow a stream without folding again.
    pub fn apply(&mut self, logged: &LoggedEvent) {
        self.last_seq = self.last_seq.max(logged.seq);
        match &logged.event {
            SessionEvent::UserMessage { text } => {
                self.push_complete(ViewSpeaker::Learner, text);
                self.waiting_for_learner = false;
                self.ended = None;
            }
            SessionEvent::DiscussionStart { topic, .. } => {
                self.push_complete(ViewSpeaker::DiscussionTopic, topic);
                self.waiting_for_learner = false;
                self.ended = None;
            }
            SessionEvent::DirectorDecision { next, .. } => {
                self.waiting_for_learner = next == NEXT_USER;
                self.ended = None;
            }
            SessionEvent::AgentStart { agent_id } => {
                if let Some(index) = self.open_message(agent_id) {
                    self.messages[index].interrupted = true;
                }
                self.push_open(agent_id);
                self.thinking = None;
                self.waiting_for_learner = false;
                self.ended = None;
                self.update_speaking();
            }
            SessionEvent::TextDelta { agent_id, text } => {
                let index = self.open_or_push(agent_id);
                self.messages[index].text.push_str(text);
            }
            SessionEvent::Thinking { text, .. } => {
                self.thinking.get_or_insert_with(String::new).push_str(text);
            }
            SessionEvent::ThinkingEnd { .. } => self.thinking = None,
            SessionEvent::Action { agent_id, action } => {
                let index = self.open_or_push(agent_id);
                self.messages[index].actions.push(action.clone());
            }
            SessionEvent::AgentEnd {
                agent_id,
                text,
                interrupted,
            } => {
                let index = self
                    .open_message(agent_id)
                    .unwrap_or_else(|| self.push_open(agent_id));
                let message = &mut self.messages[index];
                message.text = text.clone();
                message.interrupted = *interrupted;
                message.complete = !*interrupted;
                self.thinking = None;
                self.update_speaking();
            }
            SessionEvent::CueUser { .. } => self.waiting_for_learner = true,
            SessionEvent::Error { message } => self.errors.push(message.clone()),
            SessionEvent::SessionEnd { reason } => {
                self.ended = Some(reason.clone());
                self.waiting_for_learner = false;
            }
        }
    }

    /// What the app should do after loading the session (see the module's resume rule).
    pub fn resume_point(&self) -> Resume {
        if let Some(agent_id) = &self.speaking {
            Resume::InterruptedTurn {
                agent_id: agent_id.clone(),
            }
        } else if self.ended.is_some() {
            Resume::Ended
        } else if self.waiting_for_learner {
            Resume::WaitingForLearner
        } else {
            Resume::Idle
        }
    }

    /// The `AgentEnd { interrupted: true }` checkpoints that close every open turn with the text
    /// streamed so far, in message order. Empty unless the resume point is
    /// [`Resume::InterruptedTurn`].
    pub fn interrupted_checkpoints(&self) -> Vec<SessionEvent> {
        self.messages
            .iter()
            .filter_map(|message| {
                message.open_agent().map(|agent_id| SessionEvent::AgentEnd {
                    agent_id: agent_id.to_owned(),
                    text: message.text.clone(),
                    interrupted: true,
                })
            })
            .collect()
    }

    fn push_complete(&mut self, speaker: ViewSpeaker, text: &str) {
        self.messages.push(ViewMessage {
            speaker,
            text: text.to_owned(),
            actions: Vec::new(),
            interrupted: false,
            complete: true,
        });
    }

    fn open_message(&self, agent_id: &str) -> Option<usize> {
        self.messages.iter().rposition(|m| m.is_open_by(agent_id))
    }

    fn push_open(&mut self, agent_id: &str) -> usize {
        self.messages.push(ViewMessage {
            speaker: ViewSpeaker::Agent(agent_id.to_owned()),
            text: String::new(),
            actions: Vec::new(),
            interrupted: false,
            complete: false,
        });
        self.messages.len() - 1
    }

    fn open_or_push(&mut self, agent_id: &str) -> usize {
        match self.open_message(agent_id) {
            Some(index) => index,
            None => {
                let index = self.push_open(agent_id);
                self.update_speaking();
                index
            }
        }
    }

    fn update_speaking(&mut self) {
        self.speaking = self
            .messages
            .iter()
            .rev()
            .find_map(|m| m.open_agent())
            .map(str::to_owned);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStore;
    use futures_executor::block_on;
    use serde_json::json;

    fn user(text: &str) -> SessionEvent {
        SessionEvent::UserMessage { text: text.into() }
    }
    fn decide(next: &str) -> SessionEvent {
        SessionEvent::DirectorDecision {
            next: next.into(),
            by_llm: true,
            reason: None,
        }
    }
    fn start(agent: &str) -> SessionEvent {
        SessionEvent::AgentStart {
            agent_id: agent.into(),
        }
    }
    fn delta(agent: &str, text: &str) -> SessionEvent {
        SessionEvent::TextDelta {
            agent_id: agent.into(),
            text: text.into(),
        }
    }
    fn think(agent: &str, text: &str) -> SessionEvent {
        SessionEvent::Thinking {
            agent_id: agent.into(),
            text: text.into(),
        }
    }
    fn think_end(agent: &str) -> SessionEvent {
        SessionEvent::ThinkingEnd {
            agent_id: agent.into(),
        }
    }
    fn action(agent: &str, id: &str) -> SessionEvent {
        SessionEvent::Action {
            agent_id: agent.into(),
            action: json!({"type": "spotlight", "id": id, "target": "el-1"}),
        }
    }
    fn end(agent: &str, text: &str, interrupted: bool) -> SessionEvent {
        SessionEvent::AgentEnd {
            agent_id: agent.into(),
            text: text.into(),
            interrupted,
        }
    }
    fn cue(from: Option<&str>) -> SessionEvent {
        SessionEvent::CueUser {
            from_agent: from.map(str::to_owned),
        }
    }
    fn session_end(reason: &str) -> SessionEvent {
        SessionEvent::SessionEnd {
            reason: reason.into(),
        }
    }

    fn logged(events: Vec<SessionEvent>) -> Vec<LoggedEvent> {
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

    async fn append_all<S: Store>(log: &mut SessionLog<'_, S>, events: Vec<SessionEvent>) {
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
        ];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert!(event_key(&id, 1).starts_with(&events_prefix(&id)));
        assert_eq!(current_conversation_key("c1"), "talk:c1");
        assert_eq!(resume_key("c1"), "resume:c1");
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
            SessionEvent::DiscussionStart {
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
                json!({"kind": "user_message", "text": "Why?"}),
            ),
            (
                decide("teacher"),
                json!({"kind": "director_decision", "next": "teacher", "by_llm": true}),
            ),
            (
                SessionEvent::DirectorDecision {
                    next: "END".into(),
                    by_llm: false,
                    reason: Some("all said".into()),
                },
                json!({"kind": "director_decision", "next": "END", "by_llm": false,
                       "reason": "all said"}),
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
                end("t", "Hello", true),
                json!({"kind": "agent_end", "agent_id": "t", "text": "Hello",
                       "interrupted": true}),
            ),
            (cue(None), json!({"kind": "cue_user"})),
            (
                cue(Some("t")),
                json!({"kind": "cue_user", "from_agent": "t"}),
            ),
            (
                SessionEvent::Error {
                    message: "rate limited".into(),
                },
                json!({"kind": "error", "message": "rate limited"}),
            ),
            (
                session_end("round over"),
                json!({"kind": "session_end", "reason": "round over"}),
            ),
            (
                SessionEvent::DiscussionStart {
                    topic: "Why n²?".into(),
                    initiator: Some("sam".into()),
                },
                json!({"kind": "discussion_start", "text": "Why n²?", "agent_id": "sam"}),
            ),
            (
                SessionEvent::DiscussionStart {
                    topic: "Why n²?".into(),
                    initiator: None,
                },
                json!({"kind": "discussion_start", "text": "Why n²?"}),
            ),
        ];
        for (event, shape) in cases {
            assert_eq!(serde_json::to_value(&event).unwrap(), shape, "{event:?}");
            let back: SessionEvent = serde_json::from_value(shape.clone()).unwrap();
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
    fn unknown_kind_or_missing_field_does_not_parse() {
        for text in [
            r#"{"seq":1,"at_ms":2,"kind":"telepathy","agent_id":"t"}"#,
            r#"{"seq":1,"at_ms":2,"kind":"agent_end","agent_id":"t","text":"x"}"#,
            r#"{"seq":1,"kind":"user_message","text":"x"}"#,
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
        assert!(why(r#"{"seq":1,"at_ms":2,"kind":"text_delta","text":"x"}"#)
            .contains("needs \"agent_id\""));
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
    fn round_with_an_open_turn() -> Vec<SessionEvent> {
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
    fn lone_agent_round_ending_in_cue_user_waits_for_the_learner() {
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
            SessionEvent::Error {
                message: "the classmate timed out".into(),
            },
            SessionEvent::DirectorDecision {
                next: "END".into(),
                by_llm: true,
                reason: Some("done".into()),
            },
            session_end("discussion over"),
        ];
        let view = fold(&logged(events.clone()));
        assert_eq!(view.ended.as_deref(), Some("discussion over"));
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

    fn random_event(rng: &mut Rng, step: u64) -> SessionEvent {
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
            16 => SessionEvent::Error {
                message: text.clone(),
            },
            17 => session_end(&text),
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
}
