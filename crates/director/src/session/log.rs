//! A classroom session as an append-only log of [`ClassEvent`]s in the [`Store`].
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
//! Two more are the library's: `opened:<course id>`, when the learner last opened the course (ms
//! since the epoch), and `made:<course id>`, how it came to be where the rest does not say
//! (`"copy"`). None parses as a header, so [`sessions_of_course`] passes them by. Every key
//! format of the collection is defined here: [`new_session_id`], [`event_key`],
//! [`current_conversation_key`], [`resume_key`], [`opened_key`] and [`made_key`].
//!
//! # What a course owns
//!
//! [`course_records`] lists every record of a course across the store: the course itself
//! ([`Collection::Courses`]), its generation record ([`Collection::Jobs`], under the course's id),
//! the four records above and every session of it with its events. [`delete_course`] removes
//! them and hands them back, so that [`restore_records`] can undo it.
//!
//! A record that does not parse (damaged, or written by a newer Aula with an event kind this one
//! does not know) is skipped and reported by [`SessionLog::read`], and never deleted.
//!
//! # Compaction rule
//!
//! A *turn* is an `AgentStart { agent_id }` up to the next `AgentEnd` of the same agent. A turn
//! is *finished* when that `AgentEnd` exists before another `AgentStart` of the same agent (a
//! second start supersedes the first, which then stays unfinished forever). The `AgentEnd`
//! carries everything the turn said, so [`SessionLog::compact`] deletes the `Text` and
//! `Thinking` records of finished turns and nothing else: starts, ends, actions, `ThinkingEnd`,
//! deltas outside any turn and every record of an unfinished turn stay. Deleting comes first, then
//! the header's `compacted_through` advances to the last sequence number before which no turn is
//! still open, so the next compaction reads only what came after. Compaction is idempotent and
//! never changes [`fold`]'s result.

use std::collections::BTreeMap;

use aula_storage::{get_json, put_json, Collection, Store, StoreError};
use serde::{Deserialize, Serialize};

use super::{ClassEvent, LoggedEvent};

/// The header's `format`: bump when the layout or the event encoding changes incompatibly.
pub const SESSION_FORMAT: u32 = 1;

/// The largest sequence number: ten digits keep the keys in order.
pub const MAX_SEQ: u64 = 9_999_999_999;

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

/// The record of how a course came to be, where that is not plain from the rest (a copy).
pub fn made_key(course_id: &str) -> String {
    format!("made:{course_id}")
}

/// The record of when a course was last opened.
pub fn opened_key(course_id: &str) -> String {
    format!("opened:{course_id}")
}

/// The key of event `seq` of session `session_id`.
pub fn event_key(session_id: &str, seq: u64) -> String {
    format!("{session_id}/e/{seq:010}")
}

pub(super) fn events_prefix(session_id: &str) -> String {
    format!("{session_id}/e/")
}

/// The event keys of a session: well-formed ones with their sequence numbers, sorted, and keys
/// under the session's prefix that are not `<id>/e/<ten digits>`.
struct EventKeys {
    events: Vec<(u64, String)>,
    malformed: Vec<String>,
}

async fn event_keys<S: Store>(store: &S, session_id: &str) -> Result<EventKeys, StoreError> {
    Ok(event_keys_among(
        store.keys(Collection::Sessions).await?,
        session_id,
    ))
}

/// [`event_keys`] among the collection's keys, listed once by the caller.
fn event_keys_among(keys: impl IntoIterator<Item = String>, session_id: &str) -> EventKeys {
    let prefix = events_prefix(session_id);
    let mut events = Vec::new();
    let mut malformed = Vec::new();
    for key in keys {
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
    EventKeys { events, malformed }
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
    pub async fn append(&mut self, at_ms: u64, event: ClassEvent) -> Result<u64, StoreError> {
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

    /// Compaction: for every turn that has its AgentEnd, delete its Text and Thinking
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
                ClassEvent::AgentStart { agent_id } => {
                    // A second start supersedes an open turn, which keeps its deltas.
                    open.insert(agent_id, (logged.seq, Vec::new()));
                }
                ClassEvent::Text { agent_id, .. } | ClassEvent::Thinking { agent_id, .. } => {
                    if let Some((_, deltas)) = open.get_mut(agent_id.as_str()) {
                        deltas.push(logged.seq);
                    }
                }
                ClassEvent::AgentEnd { agent_id, .. } => {
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

/// One record as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRecord {
    pub collection: Collection,
    pub key: String,
    pub text: String,
}

/// Every record the store keeps for a course (see the module's "What a course owns"): the
/// course last, so that a list of them put back in order makes the course appear only once
/// everything it owns is there again.
pub async fn course_records<S: Store>(
    store: &S,
    course_id: &str,
) -> Result<Vec<StoredRecord>, StoreError> {
    let mut records = Vec::new();
    let mut take = |collection: Collection, key: String, text: Option<String>| {
        if let Some(text) = text {
            records.push(StoredRecord {
                collection,
                key,
                text,
            });
        }
    };
    let job = store.get(Collection::Jobs, course_id).await?;
    take(Collection::Jobs, course_id.to_owned(), job);
    for key in [
        current_conversation_key(course_id),
        resume_key(course_id),
        opened_key(course_id),
        made_key(course_id),
    ] {
        let text = store.get(Collection::Sessions, &key).await?;
        take(Collection::Sessions, key, text);
    }
    let sessions = sessions_of_course(store, course_id).await?;
    // The collection's keys listed once for all of the course's sessions.
    let listed = if sessions.is_empty() {
        Vec::new()
    } else {
        store.keys(Collection::Sessions).await?
    };
    for header in sessions {
        let keys = event_keys_among(listed.iter().cloned(), &header.id);
        for key in keys
            .events
            .into_iter()
            .map(|(_, key)| key)
            .chain(keys.malformed)
            .chain([header.id.clone()])
        {
            let text = store.get(Collection::Sessions, &key).await?;
            take(Collection::Sessions, key, text);
        }
    }
    let course = store.get(Collection::Courses, course_id).await?;
    take(Collection::Courses, course_id.to_owned(), course);
    Ok(records)
}

/// Deletes a course and everything it owns, and returns what it deleted (for an undo). The
/// course goes first, so a failure part-way never leaves a listed course missing its sessions;
/// what is left of it then is deleted with the next try.
pub async fn delete_course<S: Store>(
    store: &S,
    course_id: &str,
) -> Result<Vec<StoredRecord>, StoreError> {
    let records = course_records(store, course_id).await?;
    for record in records.iter().rev() {
        store.delete(record.collection, &record.key).await?;
    }
    Ok(records)
}

/// Puts records back as they were, in order (an undo of [`delete_course`]).
pub async fn restore_records<S: Store>(
    store: &S,
    records: &[StoredRecord],
) -> Result<(), StoreError> {
    for record in records {
        store
            .put(record.collection, &record.key, record.text.clone())
            .await?;
    }
    Ok(())
}
