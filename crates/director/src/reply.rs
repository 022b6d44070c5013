//! Streaming reader for an agent's reply: a JSON array of text and action items that arrives in
//! arbitrary chunks.
//!
//! An agent (teacher or classmate) answers with something like
//!
//! ```text
//! [{"type":"action","name":"spotlight","params":{"element_id":"title"}},
//!  {"type":"text","content":"Look at the title."}]
//! ```
//!
//! and the classroom wants the words on screen (and in the speech engine) while they are still
//! arriving, and each action as soon as its object is complete. [`ReplyParser`] does that.
//!
//! # Design
//!
//! The parser is a hand-written, single-pass state machine: every character of the stream is
//! looked at exactly once, whatever the chunking, so a reply costs linear time even when the
//! provider sends it one character at a time. Nothing is ever re-parsed from the start.
//!
//! * **Phases.** Before the array (`Phase::Prose`) everything is kept aside as possible prose;
//!   a `[` whose next non-blank character could begin an item (`{`, `"` or `]`) starts the array
//!   (`Phase::Opening` waits for that character), so a citation like `[1]` or a code fence
//!   (```` ```json ````) before the array is skipped. Once the array closes (`Phase::Done`)
//!   the rest of the stream is ignored.
//! * **Items.** Inside the array the parser keeps only the current `Item`: a stack of the
//!   brackets it has opened, whether the scanner is inside a string (with its escape state), and,
//!   for objects, which top-level key the current value belongs to. Brackets inside strings
//!   never count, and nested arrays and objects in `params` only move the stack.
//! * **Text.** When an object's `type` is `"text"`, the characters of its top-level `content`
//!   string are decoded as they arrive (escapes, `\uXXXX`, surrogate pairs: a character is
//!   released only once its escape is complete) and passed through the `Cleaner`, which strips
//!   markdown meant for eyes rather than ears. If `content` comes before `type`, it is held
//!   until the item says what it is.
//! * **Actions.** An action item's raw text is buffered (only that item's) and handed to
//!   `serde_json` once, when its closing brace arrives; it is then turned into the course's
//!   [`Action`] by building `{"type": name, "id": id, ...params}`. The id is the item's
//!   `action_id`, or `act-1`, `act-2`, … counted by this parser.
//! * **Bare objects.** A reply that opens with an object (after blanks or a code fence's first
//!   line) is read as items of an array it never opened, as small models write them; anything
//!   but another object after them ends the reply.
//! * **No array.** A reply that never opens an array is read, when the stream finishes, as
//!   prose (shown as one piece of speech), unless it looks like a broken piece of JSON, which
//!   must not be read aloud.
//!
//! Events are collected while a chunk is scanned and returned at the end of [`ReplyParser::push`];
//! the text of one item grows as one [`ReplyEvent::Text`] per chunk, never spanning two items.
//!
//! The parser never panics: malformed items become [`ReplyEvent::Dropped`] with a reason for the
//! session log, and the stack of brackets lives on the heap, so deep nesting costs memory, not
//! the call stack (`serde_json` itself refuses input nested deeper than 128 levels).

use std::mem;

use aula_course::Action;
use aula_text::is_cjk;
use serde_json::{Map, Value};

/// What the reply stream has made available.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplyEvent {
    /// More speech of the current text item (never empty).
    Text(String),
    /// A complete action the agent performs, already converted to the course's Action type.
    Action(Action),
    /// An item that could not be used; `name` is the action name if known; `reason` says why (for the log).
    Dropped { name: String, reason: String },
}

/// Reason given for an item the stream ended in the middle of.
const CUT_OFF: &str = "the reply was cut off";

/// The longest top-level key worth remembering: the keys the parser looks for are short, so a
/// longer one only needs to be known not to match.
const MAX_KEY_CHARS: usize = 32;

/// How much of a non-object item is kept to quote in its drop reason.
const MAX_PREVIEW_BYTES: usize = 60;

/// Reads an agent's streamed reply; see the [module documentation](self).
#[derive(Debug, Default)]
pub struct ReplyParser {
    phase: Phase,
    /// Everything before the array, in case there is no array at all.
    prose: String,
    /// The reply opened with a bare object, read as the first item of an array it never
    /// opened (`{"type":"text",…}`): more objects may follow; anything else ends it.
    implicit: bool,
    /// The item being read; `None` between items.
    item: Option<Item>,
    out: Out,
}

/// Where the parser is in the stream.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before the array: text that is prose unless an array starts.
    #[default]
    Prose,
    /// Just after a `[` in the prose, waiting for the character that says whether it starts
    /// the array.
    Opening,
    /// Inside the array.
    Array,
    /// The array closed or the stream was finished: nothing more is read.
    Done,
}

/// Events being gathered during one call, and the counters that outlive items.
#[derive(Debug, Default)]
struct Out {
    events: Vec<ReplyEvent>,
    /// Speech of the current text item not yet put into an event.
    delta: String,
    had_text: bool,
    /// The last character of speech already put into an event, to space consecutive items.
    last_char: Option<char>,
    /// A text item ended since the last speech: the next speech is a new utterance.
    between_items: bool,
    actions: usize,
    /// The last generated action number (`act-<n>`).
    last_id: usize,
    /// Bytes scanned plus bytes handed to `serde_json`: the parser's work, which tests check
    /// stays linear in the input.
    work: usize,
}

impl Out {
    /// Two text items are two utterances: "One." then "Two." is spoken "One. Two.". Called when
    /// speech grew from byte `at` of the pending delta.
    fn space_after_item(&mut self, at: usize) {
        if !mem::take(&mut self.between_items) {
            return;
        }
        let previous = self.delta[..at].chars().last().or(self.last_char);
        let first = self.delta[at..].chars().next();
        if let (Some(p), Some(f)) = (previous, first) {
            if !p.is_whitespace() && !f.is_whitespace() && !is_cjk(p) && !is_cjk(f) {
                self.delta.insert(at, ' ');
            }
        }
    }

    /// Turns the pending speech into an event.
    fn flush_text(&mut self) {
        if !self.delta.is_empty() {
            self.had_text = true;
            self.last_char = self.delta.chars().last();
            self.events
                .push(ReplyEvent::Text(mem::take(&mut self.delta)));
        }
    }

    fn emit(&mut self, event: ReplyEvent) {
        self.flush_text();
        let event = match event {
            // Speech emitted whole (a bare string item, prose without an array): spaced too.
            ReplyEvent::Text(text) if !text.is_empty() => {
                self.delta = text;
                self.space_after_item(0);
                ReplyEvent::Text(mem::take(&mut self.delta))
            }
            other => other,
        };
        match &event {
            ReplyEvent::Action(_) => self.actions += 1,
            ReplyEvent::Text(text) if !text.is_empty() => {
                self.had_text = true;
                self.last_char = text.chars().last();
                self.between_items = true;
            }
            ReplyEvent::Text(_) => return,
            ReplyEvent::Dropped { .. } => {}
        }
        self.events.push(event);
    }

    fn drop_item(&mut self, name: impl Into<String>, reason: impl Into<String>) {
        self.emit(ReplyEvent::Dropped {
            name: name.into(),
            reason: reason.into(),
        });
    }
}

impl ReplyParser {
    /// A parser at the start of a reply.
    pub fn new() -> ReplyParser {
        ReplyParser::default()
    }

    /// Feeds the next chunk; returns the events it completes, in order.
    pub fn push(&mut self, chunk: &str) -> Vec<ReplyEvent> {
        for c in chunk.chars() {
            if self.phase == Phase::Done {
                break;
            }
            self.out.work += c.len_utf8();
            self.step(c);
        }
        self.out.flush_text();
        mem::take(&mut self.out.events)
    }

    /// The stream ended: returns whatever is still owed (see truncation rules).
    ///
    /// A text item cut off keeps the speech already given and adds nothing; any other item cut
    /// off is dropped as "the reply was cut off". A reply without an array is shown as speech
    /// when it reads as prose, and dropped when it looks like a broken piece of JSON.
    pub fn finish(&mut self) -> Vec<ReplyEvent> {
        match mem::replace(&mut self.phase, Phase::Done) {
            Phase::Done => {}
            Phase::Prose | Phase::Opening => {
                let prose = mem::take(&mut self.prose);
                self.out.work += prose.len();
                self.finish_prose(&prose);
            }
            Phase::Array => {
                if let Some(item) = self.item.take() {
                    if item.kind != Kind::Text {
                        self.out
                            .drop_item(item.name.unwrap_or_default(), CUT_OFF.to_string());
                    }
                }
            }
        }
        self.out.flush_text();
        mem::take(&mut self.out.events)
    }

    /// How many actions have been emitted so far.
    pub fn action_count(&self) -> usize {
        self.out.actions
    }

    /// Whether any text was emitted.
    pub fn had_text(&self) -> bool {
        self.out.had_text
    }

    /// Bytes of work done so far (see [`Out::work`]).
    #[cfg(test)]
    fn work(&self) -> usize {
        self.out.work
    }

    fn step(&mut self, c: char) {
        match self.phase {
            Phase::Prose => {
                if c == '{' && opens_reply(&self.prose) {
                    // A reply that is one bare item, as small models often write it.
                    self.prose = String::new();
                    self.implicit = true;
                    self.phase = Phase::Array;
                    self.array_char(c);
                    return;
                }
                self.prose.push(c);
                if c == '[' {
                    self.phase = Phase::Opening;
                }
            }
            Phase::Opening => match c {
                '{' | '"' | ']' => {
                    self.prose = String::new();
                    self.phase = Phase::Array;
                    self.array_char(c);
                }
                // `[[`: the later bracket is the new candidate.
                '[' => self.prose.push(c),
                c if c.is_whitespace() => self.prose.push(c),
                _ => {
                    self.prose.push(c);
                    self.phase = Phase::Prose;
                }
            },
            Phase::Array => self.array_char(c),
            Phase::Done => {}
        }
    }

    fn array_char(&mut self, c: char) {
        let Some(item) = self.item.as_mut() else {
            match c {
                ']' => self.phase = Phase::Done,
                ',' => {}
                c if c.is_whitespace() => {}
                // After bare objects, only another object continues the reply.
                c if self.implicit && c != '{' => self.phase = Phase::Done,
                // Anything else starts an item, even without a comma before it.
                c => self.item = Some(Item::start(c)),
            }
            return;
        };
        let step = item.step(c, &mut self.out);
        if step == Step::Continue {
            return;
        }
        if let Some(item) = self.item.take() {
            item.complete(&mut self.out);
        }
        if step == Step::CloseArray {
            self.phase = Phase::Done;
        }
    }

    fn finish_prose(&mut self, prose: &str) {
        let body = strip_fence(prose.trim());
        if body.is_empty() {
            return;
        }
        if looks_like_json(body) {
            self.out.drop_item(
                "",
                "the reply has no item array and looks like a piece of JSON, not speech",
            );
            return;
        }
        let mut cleaner = Cleaner::default();
        let mut speech = String::new();
        for c in body.chars() {
            cleaner.feed(c, &mut speech);
        }
        cleaner.end_text(&mut speech);
        let speech = speech.trim();
        if !speech.is_empty() {
            self.out.emit(ReplyEvent::Text(speech.to_string()));
        }
    }
}

/// Whether a `{` after `prose` opens the reply: nothing but blanks, or a code fence's opening
/// line (```` ```json ````), came before it.
fn opens_reply(prose: &str) -> bool {
    let before = prose.trim();
    if before.is_empty() {
        return true;
    }
    let Some(tag) = before.strip_prefix("```") else {
        return false;
    };
    !tag.contains(char::is_whitespace) && prose.trim_end_matches([' ', '\t']).ends_with('\n')
}

/// Removes a markdown code fence around `text`: the opening line (with its language tag) and
/// the closing backticks.
fn strip_fence(text: &str) -> &str {
    let mut body = text;
    if body.starts_with("```") {
        body = body.find('\n').map_or("", |newline| &body[newline + 1..]);
    }
    body.strip_suffix("```").unwrap_or(body).trim()
}

/// Whether a reply without an array is a broken piece of JSON rather than prose: it starts
/// with JSON punctuation or with a key (`"content": …`, or `content": …` with its opening quote
/// lost), or it ends like an object or array holding strings.
fn looks_like_json(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    if matches!(first, '{' | '}' | '[' | ']' | ',' | ':') {
        return true;
    }
    let rest = text.strip_prefix('"').unwrap_or(text);
    let word = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    if word > 0 {
        let after_word = &rest[word..];
        if let Some(after_key) = after_word.strip_prefix('"') {
            if after_key.trim_start().starts_with(':') {
                return true;
            }
        }
    }
    (text.ends_with('}') || text.ends_with(']')) && text.contains('"')
}

/// What an item's scanner tells the parser after a character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Continue,
    /// The item is complete.
    Complete,
    /// The item is complete and the character also closed the array.
    CloseArray,
}

/// The JSON shape an item started with.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Shape {
    #[default]
    Object,
    /// A bare string in the array, read as speech.
    BareString,
    /// Anything else: a number, a literal, a nested array, garbage. Always dropped.
    Other,
}

/// What an object item turned out to be.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
enum Kind {
    /// No `type` yet.
    #[default]
    Undecided,
    Text,
    Action,
    /// A `type` that is neither `text` nor `action`.
    Unknown(String),
}

/// Whether the scanner is between tokens or inside a string, and what that string is for.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Lex {
    #[default]
    Code,
    Str(Role),
}

/// What the characters of the current string are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A key of the item object.
    Key,
    /// The item's `type` value.
    Type,
    /// The item's `name` (or legacy `tool_name`) value.
    Name,
    /// The item's `content` value, or a bare string item: speech.
    Content,
    /// Any other string: only its end matters.
    Skip,
}

/// The item being read.
#[derive(Debug, Default)]
struct Item {
    shape: Shape,
    kind: Kind,
    /// The item's raw JSON, kept while it may be an action (for objects), or a preview of it
    /// (for other items).
    raw: String,
    keep_raw: bool,
    /// The brackets (`{` or `[`) open inside the item, its own included.
    stack: Vec<char>,
    lex: Lex,
    decoder: Decoder,
    /// At the object's top level: whether the next string is a key.
    expect_key: bool,
    /// The last top-level key (cut at [`MAX_KEY_CHARS`]).
    key: String,
    /// The `type` or `name` string being read.
    capture: String,
    name: Option<String>,
    /// `content` read before the item's `type` was known.
    pending: String,
    /// A `content` string was read to its end.
    content_string: bool,
    /// `content` held something other than a string.
    content_bad: bool,
    /// Some speech of this item was released.
    spoke: bool,
    cleaner: Cleaner,
}

impl Item {
    /// An item starting with `c`.
    fn start(c: char) -> Item {
        let mut item = Item::default();
        match c {
            '{' => {
                item.shape = Shape::Object;
                item.keep_raw = true;
                item.raw.push(c);
                item.stack.push(c);
                item.expect_key = true;
            }
            '"' => {
                item.shape = Shape::BareString;
                item.kind = Kind::Text;
                item.lex = Lex::Str(Role::Content);
            }
            _ => {
                item.shape = Shape::Other;
                item.raw.push(c);
                if c == '[' {
                    item.stack.push(c);
                }
            }
        }
        item
    }

    fn step(&mut self, c: char, out: &mut Out) -> Step {
        if self.keep_raw {
            self.raw.push(c);
        }
        match self.lex {
            Lex::Str(role) => {
                if self.shape == Shape::Other {
                    self.preview(c);
                }
                let decoded = self.decoder.step(c);
                for &ch in decoded.chars() {
                    self.string_char(role, ch, out);
                }
                if decoded.ended {
                    self.lex = Lex::Code;
                    return self.string_end(role, out);
                }
                Step::Continue
            }
            Lex::Code => match self.shape {
                Shape::Object => self.object_code(c),
                Shape::Other => self.other_code(c),
                // A bare string item completes with its string.
                Shape::BareString => Step::Complete,
            },
        }
    }

    fn open_string(&mut self, role: Role) {
        self.lex = Lex::Str(role);
        self.decoder = Decoder::default();
    }

    /// Whether the scanner is at the object's top level, on the value of `content`.
    fn at_content_value(&self) -> bool {
        self.stack.len() == 1 && !self.expect_key && self.key == "content"
    }

    /// A character outside strings, in an object item.
    fn object_code(&mut self, c: char) -> Step {
        let top = self.stack.len() == 1;
        match c {
            '"' if !top => self.open_string(Role::Skip),
            '"' if self.expect_key => {
                self.key.clear();
                self.open_string(Role::Key);
            }
            '"' => {
                let role = match self.key.as_str() {
                    "content" => Role::Content,
                    "type" => Role::Type,
                    "name" | "tool_name" => Role::Name,
                    _ => Role::Skip,
                };
                self.open_string(role);
            }
            '{' | '[' => {
                if self.at_content_value() {
                    self.content_bad = true;
                }
                self.stack.push(c);
            }
            // A mismatched closer still closes one level: the item ends rather than swallowing
            // the rest of the reply, and `serde_json` rejects it if it is an action.
            '}' | ']' => {
                self.stack.pop();
                if self.stack.is_empty() {
                    return Step::Complete;
                }
            }
            ':' if top => self.expect_key = false,
            ',' if top => self.expect_key = true,
            c if c.is_whitespace() => {}
            _ => {
                if self.at_content_value() {
                    self.content_bad = true;
                }
            }
        }
        Step::Continue
    }

    /// Keeps the start of a non-object item, to quote it in the drop reason.
    fn preview(&mut self, c: char) {
        if self.raw.len() < MAX_PREVIEW_BYTES {
            self.raw.push(c);
        }
    }

    /// A character outside strings, in an item that is neither an object nor a string.
    fn other_code(&mut self, c: char) -> Step {
        let container = self.raw.starts_with('[');
        match (c, self.stack.is_empty()) {
            // The delimiters after a scalar are not part of it.
            (',', true) => return Step::Complete,
            (']', true) => return Step::CloseArray,
            _ => self.preview(c),
        }
        match c {
            '"' => self.open_string(Role::Skip),
            '{' | '[' => self.stack.push(c),
            '}' | ']' => {
                // (A container item is complete as soon as its stack empties, so a closer
                // with nothing open only happens in a scalar, where it is just garbage.)
                self.stack.pop();
                if container && self.stack.is_empty() {
                    return Step::Complete;
                }
            }
            _ => {}
        }
        Step::Continue
    }

    /// A decoded character of the current string.
    fn string_char(&mut self, role: Role, c: char, out: &mut Out) {
        match role {
            Role::Key => {
                if self.key.chars().count() < MAX_KEY_CHARS {
                    self.key.push(c);
                }
            }
            Role::Type | Role::Name => self.capture.push(c),
            Role::Content => match self.kind {
                Kind::Text => self.speak(c, out),
                Kind::Undecided => self.pending.push(c),
                Kind::Action | Kind::Unknown(_) => {}
            },
            Role::Skip => {}
        }
    }

    /// The current string ended.
    fn string_end(&mut self, role: Role, out: &mut Out) -> Step {
        match role {
            Role::Type => {
                let type_name = mem::take(&mut self.capture);
                if self.kind == Kind::Undecided {
                    self.decide(&type_name, out);
                }
            }
            Role::Name => {
                let name = mem::take(&mut self.capture);
                self.name.get_or_insert(name);
            }
            Role::Content => {
                self.content_string = true;
                if self.kind == Kind::Text {
                    self.end_speech(out);
                }
            }
            Role::Key | Role::Skip => {}
        }
        if self.shape == Shape::BareString {
            Step::Complete
        } else {
            Step::Continue
        }
    }

    /// The item's `type` arrived.
    fn decide(&mut self, type_name: &str, out: &mut Out) {
        let type_name = type_name.trim();
        if type_name.eq_ignore_ascii_case("text") {
            self.become_text(out);
        } else if type_name.eq_ignore_ascii_case("action") {
            self.kind = Kind::Action;
            self.pending = String::new();
        } else {
            self.kind = Kind::Unknown(type_name.to_string());
            self.pending = String::new();
        }
    }

    /// The item is speech: stop buffering its raw text and release any content read so far.
    fn become_text(&mut self, out: &mut Out) {
        self.kind = Kind::Text;
        self.keep_raw = false;
        self.raw = String::new();
        let pending = mem::take(&mut self.pending);
        for c in pending.chars() {
            self.speak(c, out);
        }
        if self.content_string {
            self.end_speech(out);
        }
    }

    fn speak(&mut self, c: char, out: &mut Out) {
        let before = out.delta.len();
        self.cleaner.feed(c, &mut out.delta);
        let grew = out.delta.len() != before;
        if grew {
            out.space_after_item(before);
        }
        self.spoke |= grew;
    }

    fn end_speech(&mut self, out: &mut Out) {
        let before = out.delta.len();
        self.cleaner.end_text(&mut out.delta);
        self.spoke |= out.delta.len() != before;
    }

    /// The item's last character arrived: emit what it amounts to.
    fn complete(mut self, out: &mut Out) {
        if self.kind == Kind::Text {
            out.flush_text();
            if self.spoke {
                out.between_items = true;
            }
            if self.shape == Shape::Object && !self.spoke && self.content_bad {
                out.drop_item("", "a text item's content is not a string");
            }
            return;
        }
        match self.shape {
            Shape::Other => {
                let preview = self.raw.trim();
                out.drop_item(
                    "",
                    format!("an item that is neither an object nor a string: {preview}"),
                );
                return;
            }
            // Bare strings are always text (handled above).
            Shape::BareString => return,
            Shape::Object => {}
        }
        match mem::take(&mut self.kind) {
            Kind::Action => {
                let event = build_action(&self.raw, self.name.as_deref(), out);
                out.emit(event);
            }
            Kind::Unknown(type_name) => {
                let reason = format!("unknown item type \"{type_name}\"");
                out.drop_item(self.name.unwrap_or(type_name), reason);
            }
            Kind::Undecided if self.name.is_some() => {
                let event = build_action(&self.raw, self.name.as_deref(), out);
                out.emit(event);
            }
            Kind::Undecided if self.content_string => {
                self.become_text(out);
                out.flush_text();
            }
            Kind::Undecided if self.content_bad => {
                out.drop_item("", "a text item's content is not a string");
            }
            Kind::Undecided => out.drop_item("", "the item is neither text nor an action"),
            Kind::Text => {}
        }
    }
}

/// Turns a complete action item into an [`ReplyEvent::Action`], or says why it cannot be used.
///
/// The course action is deserialized from `{"type": name, "id": id, ...params}`: the item's
/// `type` and `id` always win over keys of the same name inside `params`. Without any `params`
/// (or `parameters`) key, the item's other top-level fields are taken as the parameters, which
/// forgives the flat `{"type":"action","name":"spotlight","element_id":"title"}` some models
/// write; a `null` params means no parameters.
fn build_action(raw: &str, name_seen: Option<&str>, out: &mut Out) -> ReplyEvent {
    out.work += raw.len();
    let dropped = |name: &str, reason: String| ReplyEvent::Dropped {
        name: name.to_string(),
        reason,
    };
    let mut item = match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(item)) => item,
        Ok(_) => return dropped(name_seen.unwrap_or(""), "not an object".into()),
        Err(e) => {
            return dropped(
                name_seen.unwrap_or(""),
                format!("the action is not valid JSON: {e}"),
            )
        }
    };
    let name = ["name", "tool_name"]
        .into_iter()
        .find_map(|key| item.get(key).and_then(Value::as_str))
        .map(str::to_string);
    let Some(name) = name else {
        return dropped("", "the action has no name".into());
    };
    let id = match item.get("action_id") {
        Some(Value::String(id)) if !id.trim().is_empty() => id.clone(),
        _ => {
            out.last_id += 1;
            format!("act-{}", out.last_id)
        }
    };
    let params = item.remove("params");
    let parameters = item.remove("parameters");
    let has_params_key = params.is_some() || parameters.is_some();
    let mut fields = match [params, parameters]
        .into_iter()
        .flatten()
        .find(|p| !p.is_null())
    {
        Some(Value::Object(fields)) => fields,
        Some(_) => return dropped(&name, "the action's params are not an object".into()),
        None if has_params_key => Map::new(),
        None => {
            for key in ["type", "name", "tool_name", "action_id"] {
                item.remove(key);
            }
            item
        }
    };
    fields.insert("type".into(), Value::String(name.clone()));
    fields.insert("id".into(), Value::String(id));
    match serde_json::from_value::<Action>(Value::Object(fields)) {
        Ok(Action::Unknown { .. }) => dropped(&name, "unknown action".into()),
        Ok(action) => ReplyEvent::Action(action),
        Err(e) => dropped(&name, e.to_string()),
    }
}

/// Decodes the characters of a JSON string one input character at a time, keeping the state of
/// an unfinished escape between chunks.
#[derive(Debug, Default, Clone, Copy)]
struct Decoder {
    escape: Escape,
    /// A high surrogate waiting for its low half.
    high: Option<u32>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Escape {
    #[default]
    None,
    /// Just after a backslash.
    Backslash,
    /// Inside `\uXXXX`: `digits` read so far, their `value`.
    Unicode { digits: u8, value: u32 },
}

/// The result of one input character: up to three decoded characters (a broken surrogate, a
/// broken escape, the character itself) and whether the string ended.
#[derive(Debug, Default)]
struct Decoded {
    buf: [char; 3],
    len: usize,
    ended: bool,
}

impl Decoded {
    fn push(&mut self, c: char) {
        if self.len < self.buf.len() {
            self.buf[self.len] = c;
            self.len += 1;
        }
    }

    fn chars(&self) -> &[char] {
        &self.buf[..self.len]
    }
}

impl Decoder {
    fn step(&mut self, c: char) -> Decoded {
        let mut out = Decoded::default();
        self.step_into(c, &mut out);
        out
    }

    /// A high surrogate not followed by its low half stands for itself: the replacement
    /// character.
    fn drop_high(&mut self, out: &mut Decoded) {
        if self.high.take().is_some() {
            out.push(char::REPLACEMENT_CHARACTER);
        }
    }

    fn step_into(&mut self, c: char, out: &mut Decoded) {
        match self.escape {
            Escape::None => match c {
                '"' => {
                    self.drop_high(out);
                    out.ended = true;
                }
                '\\' => self.escape = Escape::Backslash,
                c => {
                    self.drop_high(out);
                    out.push(c);
                }
            },
            Escape::Backslash => {
                if c == 'u' {
                    self.escape = Escape::Unicode {
                        digits: 0,
                        value: 0,
                    };
                    return;
                }
                self.escape = Escape::None;
                self.drop_high(out);
                out.push(match c {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    // `\"`, `\\`, `\/`, and unknown escapes read leniently as the character.
                    c => c,
                });
            }
            Escape::Unicode { digits, value } => {
                let Some(digit) = c.to_digit(16) else {
                    // A broken `\u` escape: mark it, then read `c` normally (it may end the
                    // string).
                    self.escape = Escape::None;
                    self.drop_high(out);
                    out.push(char::REPLACEMENT_CHARACTER);
                    self.step_into(c, out);
                    return;
                };
                let value = value * 16 + digit;
                if digits < 3 {
                    self.escape = Escape::Unicode {
                        digits: digits + 1,
                        value,
                    };
                    return;
                }
                self.escape = Escape::None;
                match value {
                    0xD800..=0xDBFF => {
                        self.drop_high(out);
                        self.high = Some(value);
                    }
                    0xDC00..=0xDFFF => match self.high.take() {
                        Some(high) => {
                            let code = 0x10000 + ((high - 0xD800) << 10) + (value - 0xDC00);
                            out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
                        }
                        None => out.push(char::REPLACEMENT_CHARACTER),
                    },
                    _ => {
                        self.drop_high(out);
                        out.push(char::from_u32(value).unwrap_or(char::REPLACEMENT_CHARACTER));
                    }
                }
            }
        }
    }
}

/// Strips markdown from speech as it streams, one character at a time.
///
/// Removed: backticks anywhere; runs of two or more `*` or `_` (bold, underline); at the start
/// of a line, `>` blockquote markers and `#` heading markers (a run of `#` followed by a blank),
/// together with the blanks after them. A lone `*` or `_` is kept (`a * b`, `snake_case`), and so
/// is a `#` that does not start a heading (`#1`). Characters that cannot be judged yet (a `*`,
/// a `#` at a line start, blanks at a line start) are held until the next character decides;
/// [`Cleaner::end_text`] settles them when the text ends. Every other character is released
/// exactly once, in order.
#[derive(Debug, Default)]
struct Cleaner {
    /// Past the line's leading markers and blanks.
    mid_line: bool,
    /// A `>` or `#` marker was removed from this line, so the blanks after it go too.
    marker_seen: bool,
    /// Blanks at the line start, not yet released.
    held_blanks: String,
    /// A run of `#` at the line start, not yet judged.
    hashes: usize,
    /// A run of `*` or `_`, not yet judged.
    run: Option<(char, usize)>,
    /// Closing `}` and `]` not yet released: at the very end of the text, one that closes
    /// nothing is a piece of the JSON around the speech (`…light.}`) and is not spoken.
    closers: String,
    /// `{` and `[` released and not yet closed, so a closer at the end that matches is kept.
    open_braces: usize,
    open_brackets: usize,
}

impl Cleaner {
    fn feed(&mut self, c: char, out: &mut String) {
        if !self.closers.is_empty() && c != '}' && c != ']' {
            // Something follows the closers, so they are part of the speech.
            for closer in mem::take(&mut self.closers).chars() {
                self.release(closer, out);
            }
        }
        if let Some((run_char, length)) = self.run {
            if c == run_char {
                self.run = Some((run_char, length + 1));
                return;
            }
            self.run = None;
            if length == 1 {
                self.release(run_char, out);
            }
        }
        if self.hashes > 0 {
            if c == '#' {
                self.hashes += 1;
                return;
            }
            let hashes = mem::take(&mut self.hashes);
            if c == ' ' || c == '\t' {
                // A heading marker.
                self.marker_seen = true;
                self.held_blanks.clear();
                return;
            }
            if c != '\n' {
                // Not a heading (`#1`): the hashes are speech.
                for _ in 0..hashes {
                    self.release('#', out);
                }
            }
        }
        match c {
            '`' => {}
            '*' | '_' => self.run = Some((c, 1)),
            '}' | ']' => self.closers.push(c),
            '\n' => {
                self.held_blanks.clear();
                self.mid_line = false;
                self.marker_seen = false;
                out.push('\n');
            }
            c if self.mid_line => self.release(c, out),
            '>' => {
                self.marker_seen = true;
                self.held_blanks.clear();
            }
            '#' => self.hashes = 1,
            ' ' | '\t' => self.held_blanks.push(c),
            c => self.release(c, out),
        }
    }

    /// Releases a character of speech, with the line-start blanks before it unless a marker
    /// was removed.
    fn release(&mut self, c: char, out: &mut String) {
        if !self.mid_line {
            if !self.marker_seen {
                out.push_str(&self.held_blanks);
            }
            self.held_blanks.clear();
            self.mid_line = true;
        }
        match c {
            '{' => self.open_braces += 1,
            '[' => self.open_brackets += 1,
            '}' => self.open_braces = self.open_braces.saturating_sub(1),
            ']' => self.open_brackets = self.open_brackets.saturating_sub(1),
            _ => {}
        }
        out.push(c);
    }

    /// The text ended: a held lone `*` or `_` is speech, and so is a held closer that closes
    /// an opened bracket; held blanks, a bare heading marker and closers of nothing are not.
    /// The cleaner is then as new.
    fn end_text(&mut self, out: &mut String) {
        if let Some((run_char, 1)) = self.run {
            self.release(run_char, out);
        }
        for closer in mem::take(&mut self.closers).chars() {
            let open = match closer {
                '}' => self.open_braces,
                _ => self.open_brackets,
            };
            if open > 0 {
                self.release(closer, out);
            }
        }
        *self = Cleaner::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use std::time::{Duration, Instant};

    /// A realistic teacher reply: prose and a code fence around the array, escapes, markdown,
    /// non-ASCII text, nested params.
    const TEACHER: &str = r#"Sure, here is my turn:
```json
[
  {"type":"action","name":"spotlight","params":{"element_id":"title"}},
  {"type":"text","content":"Look at the **title**: it says \"Energy\".\nEinstein's famous équation links mass and energy."},
  {"type":"action","name":"wb_draw_text","params":{"content":"E = mc^2","x":100,"y":80}},
  {"type":"text","content":"Here c is the speed of light \u2014 about 3 \u00d7 10\u2078 m/s \ud83d\ude80, a [huge] {number}."},
  {"type":"action","name":"wb_draw_latex","params":{"latex":"E = mc^{2}","x":100,"y":200}}
]
```
Hope that helps!"#;

    const TEACHER_TEXT: &str = "Look at the title: it says \"Energy\".\nEinstein's famous équation links mass and energy. Here c is the speed of light — about 3 × 10⁸ m/s 🚀, a [huge] {number}.";

    fn action(value: Value) -> Action {
        serde_json::from_value(value).expect("a valid test action")
    }

    fn teacher_actions() -> Vec<Action> {
        vec![
            action(json!({"type":"spotlight","id":"act-1","element_id":"title"})),
            action(json!({"type":"wb_draw_text","id":"act-2","content":"E = mc^2","x":100,"y":80})),
            action(
                json!({"type":"wb_draw_latex","id":"act-3","latex":"E = mc^{2}","x":100,"y":200}),
            ),
        ]
    }

    /// Feeds `chunks` then finishes.
    fn run<'a>(chunks: impl IntoIterator<Item = &'a str>) -> Vec<ReplyEvent> {
        let mut parser = ReplyParser::new();
        let mut events = Vec::new();
        for chunk in chunks {
            events.extend(parser.push(chunk));
        }
        events.extend(parser.finish());
        events
    }

    fn whole(reply: &str) -> Vec<ReplyEvent> {
        run([reply])
    }

    fn by_char(reply: &str) -> Vec<ReplyEvent> {
        let chars: Vec<String> = reply.chars().map(String::from).collect();
        run(chars.iter().map(String::as_str))
    }

    /// Splits `reply` at the given byte offsets (moved back to char boundaries).
    fn split_at(reply: &str, cuts: &[usize]) -> Vec<String> {
        let mut cuts: Vec<usize> = cuts
            .iter()
            .map(|&cut| {
                let mut cut = cut.min(reply.len());
                while !reply.is_char_boundary(cut) {
                    cut -= 1;
                }
                cut
            })
            .collect();
        cuts.sort_unstable();
        let mut chunks = Vec::new();
        let mut start = 0;
        for cut in cuts {
            chunks.push(reply[start..cut].to_string());
            start = cut;
        }
        chunks.push(reply[start..].to_string());
        chunks
    }

    /// Events with adjacent text deltas merged: what chunking must not change.
    fn normalized(events: &[ReplyEvent]) -> Vec<ReplyEvent> {
        let mut merged: Vec<ReplyEvent> = Vec::new();
        for event in events {
            if let (Some(ReplyEvent::Text(last)), ReplyEvent::Text(more)) =
                (merged.last_mut(), event)
            {
                last.push_str(more);
            } else {
                merged.push(event.clone());
            }
        }
        merged
    }

    fn text_of(events: &[ReplyEvent]) -> String {
        events
            .iter()
            .filter_map(|e| match e {
                ReplyEvent::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    fn actions_of(events: &[ReplyEvent]) -> Vec<Action> {
        events
            .iter()
            .filter_map(|e| match e {
                ReplyEvent::Action(a) => Some(a.clone()),
                _ => None,
            })
            .collect()
    }

    fn dropped_of(events: &[ReplyEvent]) -> Vec<(String, String)> {
        events
            .iter()
            .filter_map(|e| match e {
                ReplyEvent::Dropped { name, reason } => Some((name.clone(), reason.clone())),
                _ => None,
            })
            .collect()
    }

    fn assert_no_empty_text(events: &[ReplyEvent]) {
        for event in events {
            assert_ne!(event, &ReplyEvent::Text(String::new()));
        }
    }

    fn text(s: &str) -> ReplyEvent {
        ReplyEvent::Text(s.to_string())
    }

    fn dropped(name: &str, reason: &str) -> ReplyEvent {
        ReplyEvent::Dropped {
            name: name.into(),
            reason: reason.into(),
        }
    }

    #[test]
    fn the_teacher_reply_gives_its_speech_and_actions_in_order() {
        let events = whole(TEACHER);
        assert_no_empty_text(&events);
        let [a1, t1, a2, t2, a3] = normalized(&events).try_into().expect("five events");
        let actions = teacher_actions();
        assert_eq!(a1, ReplyEvent::Action(actions[0].clone()));
        assert_eq!(a2, ReplyEvent::Action(actions[1].clone()));
        assert_eq!(a3, ReplyEvent::Action(actions[2].clone()));
        let (ReplyEvent::Text(t1), ReplyEvent::Text(t2)) = (t1, t2) else {
            panic!("text expected between the actions: {events:?}");
        };
        assert_eq!(format!("{t1}{t2}"), TEACHER_TEXT);
        assert!(
            t2.starts_with(" Here c is"),
            "the second item is a new utterance: {t2}"
        );
    }

    #[test]
    fn whole_char_by_char_and_every_two_way_split_agree() {
        let reference = normalized(&whole(TEACHER));
        assert_eq!(text_of(&reference), TEACHER_TEXT);
        assert_eq!(actions_of(&reference), teacher_actions());
        assert_eq!(normalized(&by_char(TEACHER)), reference);
        for cut in 0..=TEACHER.len() {
            if !TEACHER.is_char_boundary(cut) {
                continue;
            }
            let events = run([&TEACHER[..cut], &TEACHER[cut..]]);
            assert_no_empty_text(&events);
            assert_eq!(normalized(&events), reference, "split at byte {cut}");
        }
    }

    #[test]
    fn the_parser_counts_actions_and_text() {
        let mut parser = ReplyParser::new();
        assert_eq!((parser.action_count(), parser.had_text()), (0, false));
        parser.push(TEACHER);
        parser.finish();
        assert_eq!((parser.action_count(), parser.had_text()), (3, true));
    }

    #[test]
    fn text_streams_while_the_string_is_open_and_actions_wait_for_their_brace() {
        let mut parser = ReplyParser::new();
        assert_eq!(
            parser.push(r#"[{"type":"text","content":"Hello "#),
            [text("Hello ")]
        );
        assert_eq!(parser.push("wor"), [text("wor")]);
        assert_eq!(parser.push(r#"ld"},{"type":"action","#), [text("ld")]);
        assert_eq!(
            parser.push(r#""name":"spotlight","params":{"element_id":"t"}"#),
            []
        );
        let done = parser.push("}");
        assert_eq!(
            done,
            [ReplyEvent::Action(action(
                json!({"type":"spotlight","id":"act-1","element_id":"t"})
            ))]
        );
        assert_eq!(parser.push("]"), []);
        assert_eq!(parser.finish(), []);
    }

    #[test]
    fn two_text_items_in_one_chunk_give_separate_events() {
        let events =
            whole(r#"[{"type":"text","content":"One."},{"type":"text","content":"Two."}]"#);
        assert_eq!(events, [text("One."), text(" Two.")]);
    }

    #[test]
    fn prose_fences_and_bracketed_citations_around_the_array_are_ignored() {
        let reply = "I think [1] this is right (see [a, b]).\n```json\n[{\"type\":\"text\",\"content\":\"Hi!\"}]\n```\nAnything [\"else\"]?";
        assert_eq!(whole(reply), [text("Hi!")]);
        assert_eq!(normalized(&by_char(reply)), [text("Hi!")]);
        // `[[` before the array: the inner bracket starts it.
        assert_eq!(
            whole(r#"Note [[{"type":"text","content":"x"}]"#),
            [text("x")]
        );
    }

    #[test]
    fn an_empty_array_gives_nothing() {
        assert_eq!(whole("```json\n[ ]\n```"), []);
        assert_eq!(whole("[]"), []);
    }

    #[test]
    fn escapes_split_across_chunks_are_released_whole() {
        let mut parser = ReplyParser::new();
        assert_eq!(
            parser.push(r#"[{"type":"text","content":"caf\u00"#),
            [text("caf")]
        );
        assert_eq!(parser.push("e"), []);
        assert_eq!(parser.push("9 "), [text("é ")]);
        assert_eq!(parser.push(r"\ud83d"), []);
        assert_eq!(parser.push(r"\u"), []);
        assert_eq!(parser.push(r"de00"), [text("😀")]);
        assert_eq!(parser.push(r"\"), []);
        assert_eq!(parser.push(r#"" and \"#), [text("\" and ")]);
        assert_eq!(parser.push(r"\ \"), [text("\\ ")]);
        assert_eq!(parser.push(r#"n\t\/""#), [text("\n\t/")]);
        assert_eq!(parser.push("}]"), []);
        assert!(parser.had_text());
    }

    #[test]
    fn broken_escapes_become_replacement_characters() {
        let events = whole(r#"[{"type":"text","content":"a\ud83db\udc00c\u12x\u00"}]"#);
        assert_eq!(text_of(&events), "a\u{fffd}b\u{fffd}c\u{fffd}x\u{fffd}");
        // A broken escape that ends at the string's quote still ends the string.
        assert_eq!(
            normalized(&whole(r#"["x\u4", {"type":"text","content":"y"}]"#)),
            [text("x\u{fffd} y")]
        );
    }

    #[test]
    fn content_before_type_waits_for_the_type() {
        let mut parser = ReplyParser::new();
        assert_eq!(parser.push(r#"[{"content":"Hi **there**","#), []);
        assert_eq!(parser.push(r#""type":"te"#), []);
        assert_eq!(parser.push(r#"xt"#), []);
        assert_eq!(parser.push(r#"""#), [text("Hi there")]);
        assert_eq!(parser.push("}]"), []);

        // The same content in an action item is not speech.
        let events = whole(
            r#"[{"content":"not speech","type":"action","name":"wb_draw_text","params":{"content":"x","x":1,"y":2}}]"#,
        );
        assert_eq!(
            events,
            [ReplyEvent::Action(action(
                json!({"type":"wb_draw_text","id":"act-1","content":"x","x":1,"y":2})
            ))]
        );
    }

    #[test]
    fn an_item_without_a_type_is_text_by_content_or_an_action_by_name() {
        let events = whole(
            r#"[{"content":"Plain."},{"name":"wb_clear"},{"params":{"element_id":"x"},"name":"laser"}]"#,
        );
        assert_eq!(
            events,
            [
                text("Plain."),
                ReplyEvent::Action(action(json!({"type":"wb_clear","id":"act-1"}))),
                ReplyEvent::Action(action(
                    json!({"type":"laser","id":"act-2","element_id":"x"})
                )),
            ]
        );
        assert_eq!(
            whole(r#"[{"foo":1}]"#),
            [dropped("", "the item is neither text nor an action")]
        );
    }

    #[test]
    fn keys_may_come_in_any_order() {
        let events = whole(
            r##"[{"params":{"element_id":"chart","color":"#00ff00"},"name":"laser","type":"action","action_id":"L1"}]"##,
        );
        assert_eq!(
            events,
            [ReplyEvent::Action(action(
                json!({"type":"laser","id":"L1","element_id":"chart","color":"#00ff00"})
            ))]
        );
    }

    #[test]
    fn legacy_tool_name_and_parameters_are_accepted() {
        let events = whole(
            r#"[{"type":"action","tool_name":"wb_delete","parameters":{"element_id":"box"}}]"#,
        );
        assert_eq!(
            events,
            [ReplyEvent::Action(action(
                json!({"type":"wb_delete","id":"act-1","element_id":"box"})
            ))]
        );
    }

    #[test]
    fn action_ids_are_kept_and_generated_ones_count_from_one() {
        let events = whole(
            r#"[{"type":"action","name":"wb_open"},
                {"type":"action","name":"wb_clear","action_id":"clear-1"},
                {"type":"action","name":"wb_close","params":{"id":"ignored"}}]"#,
        );
        let ids: Vec<String> = actions_of(&events)
            .iter()
            .map(|a| a.id().to_string())
            .collect();
        assert_eq!(ids, ["act-1", "clear-1", "act-2"]);
    }

    #[test]
    fn flat_params_and_null_params_are_forgiven() {
        let events = whole(
            r#"[{"type":"action","name":"spotlight","element_id":"title","dim_opacity":0.8},
                {"type":"action","name":"wb_open","params":null}]"#,
        );
        assert_eq!(
            actions_of(&events),
            [
                action(
                    json!({"type":"spotlight","id":"act-1","element_id":"title","dim_opacity":0.8})
                ),
                action(json!({"type":"wb_open","id":"act-2"})),
            ]
        );
    }

    #[test]
    fn an_unknown_action_is_dropped() {
        let mut parser = ReplyParser::new();
        let events = parser.push(
            r#"[{"type":"action","name":"wb_draw_hologram","params":{"depth":3}},{"type":"action","name":"wb_open"}]"#,
        );
        assert_eq!(events[0], dropped("wb_draw_hologram", "unknown action"));
        assert!(matches!(events[1], ReplyEvent::Action(Action::WbOpen(_))));
        assert_eq!(parser.action_count(), 1);
        assert!(!parser.had_text());
    }

    #[test]
    fn invalid_params_are_dropped_with_the_reason() {
        let events = whole(
            r#"[{"type":"action","name":"spotlight","params":{}},
                {"type":"action","name":"wb_draw_text","params":{"content":"x","x":1,"y":2,"colour":"red"}},
                {"type":"action","name":"laser","params":["title"]},
                {"type":"action","name":"wb_draw_latex","params":{"latex":"x","x":"left","y":0}},
                {"type":"action","params":{"element_id":"t"}},
                {"type":"action","name":"spotlight","params":{"element_id":"t"},}]"#,
        );
        let dropped = dropped_of(&events);
        assert_eq!(dropped.len(), 6, "{events:?}");
        assert!(actions_of(&events).is_empty());
        let expect = [
            ("spotlight", "element_id"),
            ("wb_draw_text", "colour"),
            ("laser", "params are not an object"),
            ("wb_draw_latex", "invalid type"),
            ("", "no name"),
            ("spotlight", "not valid JSON"),
        ];
        for ((name, reason), (want_name, want_reason)) in dropped.iter().zip(expect) {
            assert_eq!(name, want_name);
            assert!(reason.contains(want_reason), "{reason}");
        }
        // The reason is serde's own text.
        let serde_reason =
            serde_json::from_value::<Action>(json!({"type":"spotlight","id":"act-1"}))
                .unwrap_err()
                .to_string();
        assert_eq!(dropped[0].1, serde_reason);
    }

    #[test]
    fn an_item_with_an_unknown_type_is_dropped() {
        assert_eq!(
            whole(r#"[{"type":"image","url":"x.png"}]"#),
            [dropped("image", "unknown item type \"image\"")]
        );
    }

    #[test]
    fn a_text_item_whose_content_is_not_a_string_is_dropped() {
        assert_eq!(
            whole(r#"[{"type":"text","content":{"a":1}},{"content":42}]"#),
            [
                dropped("", "a text item's content is not a string"),
                dropped("", "a text item's content is not a string"),
            ]
        );
    }

    #[test]
    fn a_reply_cut_off_in_a_text_keeps_what_was_said() {
        let mut parser = ReplyParser::new();
        let reply = r#"[{"type":"action","name":"wb_open"},{"type":"text","content":"Hello wor"#;
        let events = parser.push(reply);
        assert_eq!(
            events,
            [
                ReplyEvent::Action(action(json!({"type":"wb_open","id":"act-1"}))),
                text("Hello wor"),
            ]
        );
        assert_eq!(parser.finish(), []);
        assert!(parser.had_text());
        // A held `*` is not released by the cut.
        assert_eq!(
            normalized(&whole(r#"[{"type":"text","content":"a *"#)),
            [text("a ")]
        );
    }

    #[test]
    fn a_reply_cut_off_in_an_action_drops_it() {
        let mut parser = ReplyParser::new();
        let events = parser
            .push(r#"[{"type":"text","content":"See."},{"type":"action","name":"spotlight","params":{"element_"#);
        assert_eq!(events, [text("See.")]);
        assert_eq!(parser.finish(), [dropped("spotlight", CUT_OFF)]);
        assert_eq!(parser.action_count(), 0);

        assert_eq!(whole(r#"[{"type":"action","na"#), [dropped("", CUT_OFF)]);
        assert_eq!(
            whole(r#"[{"content":"Hi"}, 12"#),
            [text("Hi"), dropped("", CUT_OFF)]
        );
        // Cut between items: nothing owed.
        assert_eq!(whole(r#"[{"content":"Hi"},"#), [text("Hi")]);
    }

    #[test]
    fn nothing_is_read_after_the_array_or_after_finish() {
        let mut parser = ReplyParser::new();
        assert_eq!(
            parser.push(r#"[{"type":"text","content":"Done."}] [{"type":"text","content":"#),
            [text("Done.")]
        );
        assert_eq!(parser.push(r#""Again"}]"#), []);
        assert_eq!(parser.finish(), []);
        assert_eq!(parser.push(r#"[{"type":"text","content":"Late"}]"#), []);
        assert_eq!(parser.finish(), []);

        let mut parser = ReplyParser::new();
        parser.push("Just prose");
        assert_eq!(parser.finish(), [text("Just prose")]);
        assert_eq!(parser.push(r#"[{"type":"text","content":"Late"}]"#), []);
        assert_eq!(parser.finish(), []);
    }

    #[test]
    fn a_reply_without_an_array_is_shown_as_prose() {
        let mut parser = ReplyParser::new();
        assert_eq!(parser.push("  Photosynthesis turns **light** "), []);
        assert_eq!(parser.push("into sugar.\n"), []);
        assert_eq!(
            parser.finish(),
            [text("Photosynthesis turns light into sugar.")]
        );
        assert!(parser.had_text());
        // A `[` that does not start an array stays prose.
        assert_eq!(whole("See [1] for more."), [text("See [1] for more.")]);
        assert_eq!(
            whole("```\nA fenced answer.\n```"),
            [text("A fenced answer.")]
        );
        assert_eq!(whole(" \n "), []);
    }

    #[test]
    fn a_reply_that_is_one_bare_object_or_several_is_read_as_their_items() {
        for reply in [
            r#"{"type":"text","content":"Hi there."}"#,
            "```json\n{\"type\":\"text\",\"content\":\"Hi there.\"}\n```",
            " \n{\"content\":\"Hi there.\",\"type\":\"text\"}\nThanks!",
        ] {
            assert_eq!(whole(reply), [text("Hi there.")], "{reply:?}");
            assert_eq!(
                normalized(&by_char(reply)),
                [text("Hi there.")],
                "{reply:?}"
            );
        }
        let two = r#"{"type":"text","content":"Look."}
{"type":"action","name":"spotlight","params":{"element_id":"title"}}, {"type":"text","content":"There."}"#;
        let events = whole(two);
        assert_eq!(text_of(&events), "Look. There.");
        assert_eq!(actions_of(&events).len(), 1, "{events:?}");
        // Cut off inside a bare text object: what was said stays.
        assert_eq!(
            whole(r#"{"type":"text","content":"Half a sen"#),
            [text("Half a sen")]
        );
        // Prose that mentions an object later is still prose.
        assert_eq!(whole("Use {braces} here."), [text("Use {braces} here.")]);
    }

    #[test]
    fn a_json_fragment_without_an_array_is_suppressed() {
        for fragment in [
            r#""content": "Hello there"}"#,
            r#"content": "Hello there"}"#,
            r#""type":"text""#,
            r#"  "name" : "spotlight""#,
            r#"ello there"}]"#,
            "[",
            "[  \n",
        ] {
            let mut parser = ReplyParser::new();
            let mut events = parser.push(fragment);
            events.extend(parser.finish());
            assert!(
                matches!(events.as_slice(), [ReplyEvent::Dropped { name, .. }] if name.is_empty()),
                "{fragment:?} gave {events:?}"
            );
            assert!(!parser.had_text());
        }
        // Prose that merely starts with a quotation is speech.
        assert_eq!(
            whole("\"To be or not to be\": that is the question."),
            [text("\"To be or not to be\": that is the question.")]
        );
    }

    #[test]
    fn markdown_is_stripped_from_speech() {
        let content = "> **Bold** and __under__ with `code`.\n## A heading\n#1 is #tag, 2 * 3 = 6\n  > > nested quote\n***Both*** snake_case ```x```\n   indented";
        let reply = format!(
            r#"[{{"type":"text","content":{}}}]"#,
            serde_json::to_string(content).unwrap()
        );
        let expected = "Bold and under with code.\nA heading\n#1 is #tag, 2 * 3 = 6\nnested quote\nBoth snake_case x\n   indented";
        assert_eq!(text_of(&whole(&reply)), expected);
        assert_eq!(text_of(&by_char(&reply)), expected);
    }

    #[test]
    fn a_closing_brace_or_bracket_that_ends_the_speech_and_closes_nothing_is_not_spoken() {
        let spoken = |content: &str| {
            let reply = json!([{"type": "text", "content": content}]).to_string();
            (text_of(&whole(&reply)), text_of(&by_char(&reply)))
        };
        let same = |s: &str| (s.to_string(), s.to_string());
        assert_eq!(
            spoken("这个过程被称为光合作用。}"),
            same("这个过程被称为光合作用。")
        );
        assert_eq!(spoken("Light drives it.}]"), same("Light drives it."));
        assert_eq!(spoken("The set {1, 2}"), same("The set {1, 2}"));
        assert_eq!(spoken("A list [a, {b}]}"), same("A list [a, {b}]"));
        assert_eq!(spoken("Mid } text stays"), same("Mid } text stays"));
    }

    #[test]
    fn a_trailing_lone_star_is_released_when_the_text_ends() {
        assert_eq!(
            normalized(&whole(r#"[{"type":"text","content":"Rate it 5*"},"x _"]"#)),
            [text("Rate it 5* x _")]
        );
    }

    #[test]
    fn an_item_that_is_empty_after_cleanup_emits_nothing() {
        let mut parser = ReplyParser::new();
        let events = parser
            .push(r#"[{"type":"text","content":"**``** \n## "},{"type":"text","content":""}]"#);
        let mut all = events;
        all.extend(parser.finish());
        assert_eq!(all, [text("\n")]);
        let mut parser = ReplyParser::new();
        let mut all = parser.push(r#"[{"type":"text","content":"**`` __ **"}, "  "]"#);
        all.extend(parser.finish());
        assert_eq!(all, []);
        assert!(!parser.had_text());
    }

    #[test]
    fn brackets_inside_strings_and_nested_params_keep_item_boundaries() {
        let reply = r#"[
            {"type":"text","content":"Arrays look like [1, 2]} and objects like {\"a\": [}."},
            {"type":"action","name":"wb_draw_chart","params":{"chart_type":"bar","x":10,"y":20,"width":300,"height":200,
              "data":{"labels":["a]","b}"],"legends":["[x"],"series":[[1,2],[3,4]]}}},
            {"type":"action","name":"wb_draw_table","params":{"x":0,"y":0,"width":100,"height":50,"data":[["a","b"],["{","]"]]}},
            {"type":"text","content":"End."}
        ]"#;
        let events = whole(reply);
        assert_eq!(
            text_of(&events),
            "Arrays look like [1, 2]} and objects like {\"a\": [}. End."
        );
        let actions = actions_of(&events);
        assert_eq!(actions.len(), 2, "{events:?}");
        let Action::WbDrawChart(chart) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert_eq!(chart.data.series, [[1.0, 2.0], [3.0, 4.0]]);
        assert_eq!(chart.data.labels, ["a]", "b}"]);
        let Action::WbDrawTable(table) = &actions[1] else {
            panic!("{actions:?}")
        };
        assert_eq!(table.data, [["a", "b"], ["{", "]"]]);
        assert_eq!(normalized(&by_char(reply)), normalized(&events));
    }

    #[test]
    fn items_that_are_not_objects() {
        let events = whole(r#"["Bare **words**", 42, null, [1, [2]], true, {"content":"ok"}]"#);
        assert_eq!(
            events,
            [
                text("Bare words"),
                dropped("", "an item that is neither an object nor a string: 42"),
                dropped("", "an item that is neither an object nor a string: null"),
                dropped(
                    "",
                    "an item that is neither an object nor a string: [1, [2]]"
                ),
                dropped("", "an item that is neither an object nor a string: true"),
                text(" ok"),
            ]
        );
        // A scalar that ends the array.
        assert_eq!(
            whole(r#"[{"content":"a"}, 7]"#),
            [
                text("a"),
                dropped("", "an item that is neither an object nor a string: 7")
            ]
        );
    }

    #[test]
    fn deep_nesting_does_not_overflow_anything() {
        let depth = 50_000;
        let mut reply = String::from(r#"[{"type":"action","name":"wb_open","params":"#);
        reply.push_str(&"{\"a\":[".repeat(depth));
        reply.push_str(&"]}".repeat(depth));
        reply.push_str(r#"}, [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]"#);
        let events = whole(&reply);
        assert_eq!(events.len(), 2, "{:?}", &events);
        assert!(matches!(&events[0], ReplyEvent::Dropped { name, .. } if name == "wb_open"));
        assert!(matches!(&events[1], ReplyEvent::Dropped { reason, .. } if reason == CUT_OFF));
    }

    /// A ~200 KB reply of many items fed one character at a time.
    fn big_reply() -> String {
        let mut reply = String::from("Here you go:\n```json\n[");
        let mut i = 0;
        while reply.len() < 200_000 {
            reply.push_str(&format!(
                r#"{{"type":"text","content":"Sentence {i} is about \"energy\" \u00e9 and **mass**. "}},{{"type":"action","name":"wb_draw_text","params":{{"content":"step {i}","x":{i},"y":10}}}},"#
            ));
            i += 1;
        }
        reply.push_str(&format!(
            r#"{{"type":"text","content":"{}"}}]```"#,
            "long speech ".repeat(2_000)
        ));
        reply
    }

    #[test]
    fn a_big_reply_fed_char_by_char_takes_linear_work() {
        let reply = big_reply();
        let started = Instant::now();
        let mut parser = ReplyParser::new();
        let mut text_len = 0;
        let mut buf = [0u8; 4];
        for c in reply.chars() {
            for event in parser.push(c.encode_utf8(&mut buf)) {
                if let ReplyEvent::Text(t) = event {
                    text_len += t.len();
                }
            }
        }
        assert_eq!(parser.finish(), []);
        let elapsed = started.elapsed();
        let items = reply.matches(r#""type":"action""#).count();
        assert_eq!(parser.action_count(), items);
        assert!(text_len > 50_000, "{text_len}");
        assert!(
            parser.work() <= 2 * reply.len(),
            "{} bytes of work for {} bytes of reply",
            parser.work(),
            reply.len()
        );
        // A generous bound for a shared debug machine; the work bound above is the real check.
        assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
    }

    /// An item of a generated reply.
    #[derive(Debug, Clone)]
    enum GenItem {
        Text(String),
        Action(usize),
    }

    /// Actions of generated replies: (item JSON, the action it gives with id `act-<n>`).
    fn gen_action(which: usize, n: usize) -> (String, Action) {
        let id = format!("act-{n}");
        match which % 4 {
            0 => (
                r#"{"type":"action","name":"spotlight","params":{"element_id":"title"}}"#.into(),
                action(json!({"type":"spotlight","id":id,"element_id":"title"})),
            ),
            1 => (
                r#"{"name":"wb_draw_latex","params":{"latex":"\\frac{a}{b} [x] {y}","x":1,"y":2},"type":"action"}"#.into(),
                action(json!({"type":"wb_draw_latex","id":id,"latex":"\\frac{a}{b} [x] {y}","x":1,"y":2})),
            ),
            2 => (
                r#"{"type":"action","tool_name":"wb_draw_chart","parameters":{"chart_type":"line","x":0,"y":0,"width":9,"height":9,"data":{"labels":["q"],"series":[[1],[2]]}}}"#.into(),
                action(json!({"type":"wb_draw_chart","id":id,"chart_type":"line","x":0,"y":0,"width":9,"height":9,"data":{"labels":["q"],"series":[[1],[2]]}})),
            ),
            _ => (
                r#"{"type":"action","name":"wb_draw_text","params":{"content":"a \"quoted\" \u00e9","x":100,"y":80}}"#.into(),
                action(json!({"type":"wb_draw_text","id":id,"content":"a \"quoted\" é","x":100,"y":80})),
            ),
        }
    }

    /// Encodes `text` as a JSON string, writing each character plainly or as `\u` escapes as
    /// `escape_mask` says.
    fn encode(text: &str, escape_mask: u64) -> String {
        let mut out = String::from("\"");
        for (i, c) in text.chars().enumerate() {
            let escape = escape_mask >> (i % 64) & 1 == 1;
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                c if escape || (c as u32) < 0x20 => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    /// What the cleaner makes of markdown-free text: closers at the very end that close nothing
    /// opened before them are dropped, and blank lines lose their blanks (blanks at a line start
    /// are held until something follows them on the line).
    fn expected_speech(text: &str) -> String {
        let body = text.trim_end_matches(['}', ']']);
        let depth = |open: char, close: char| {
            body.chars().fold(0usize, |depth, c| match c {
                c if c == open => depth + 1,
                c if c == close => depth.saturating_sub(1),
                _ => depth,
            })
        };
        let (mut braces, mut brackets) = (depth('{', '}'), depth('[', ']'));
        let mut kept = body.to_string();
        for c in text[body.len()..].chars() {
            let open = if c == '}' { &mut braces } else { &mut brackets };
            if *open > 0 {
                *open -= 1;
                kept.push(c);
            }
        }
        kept.split('\n')
            .map(|line| if line.trim().is_empty() { "" } else { line })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn speech_text() -> impl Strategy<Value = String> {
        // No markdown characters, so the expected speech is the text itself.
        proptest::string::string_regex("[a-zA-Z0-9 .,!?'\"\\\\{}\\[\\]:\néß€😀\u{1F680}]{1,40}")
            .expect("a valid regex")
    }

    fn gen_items() -> impl Strategy<Value = Vec<GenItem>> {
        proptest::collection::vec(
            prop_oneof![
                speech_text().prop_map(GenItem::Text),
                (0usize..4).prop_map(GenItem::Action),
            ],
            0..8,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn any_input_in_any_chunks_never_panics_and_chunking_does_not_matter(
            input in prop_oneof![
                ".{0,120}",
                "[\\[\\]{}\",:\\\\ u0-9a-f*#>_`\n]{0,120}",
                "[a-z ]{0,10}\\[[{}\\[\\]\",: \\\\a-z0-9]{0,120}",
            ],
            cuts in proptest::collection::vec(0usize..200, 0..12),
        ) {
            let chunks = split_at(&input, &cuts);
            let mut parser = ReplyParser::new();
            let mut events = Vec::new();
            for chunk in &chunks {
                events.extend(parser.push(chunk));
            }
            events.extend(parser.finish());
            prop_assert!(parser.push("[\"more\"]").is_empty());
            prop_assert!(parser.finish().is_empty());
            assert_no_empty_text(&events);
            prop_assert_eq!(normalized(&events), normalized(&whole(&input)));
            prop_assert_eq!(parser.action_count(), actions_of(&events).len());
            prop_assert!(parser.work() <= 2 * input.len() + 1);
        }

        #[test]
        fn a_valid_reply_gives_its_texts_and_actions_whatever_the_chunking(
            items in gen_items(),
            masks in proptest::collection::vec(any::<u64>(), 8),
            before in "[a-zA-Z ,.\n]{0,20}",
            cuts in proptest::collection::vec(0usize..2000, 0..20),
        ) {
            let mut reply = format!("{before}```json\n[");
            let mut expected_text = String::new();
            let mut expected_actions = Vec::new();
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    reply.push_str(",\n  ");
                }
                match item {
                    GenItem::Text(t) => {
                        let content = encode(t, masks[i % masks.len()]);
                        if i % 2 == 0 {
                            reply.push_str(&format!(r#"{{"type":"text","content":{content}}}"#));
                        } else {
                            reply.push_str(&format!(r#"{{"content":{content},"type":"text"}}"#));
                        }
                        join_speech(&mut expected_text, &expected_speech(t));
                    }
                    GenItem::Action(which) => {
                        let (json, action) = gen_action(*which, expected_actions.len() + 1);
                        reply.push_str(&json);
                        expected_actions.push(action);
                    }
                }
            }
            reply.push_str("]\n```\nThanks [for] {reading}.");

            let reference = whole(&reply);
            prop_assert_eq!(text_of(&reference), expected_text);
            let chunked = run(split_at(&reply, &cuts).iter().map(String::as_str));
            assert_no_empty_text(&chunked);
            prop_assert_eq!(normalized(&chunked), normalized(&reference));
            prop_assert_eq!(actions_of(&reference), expected_actions);
            prop_assert!(dropped_of(&reference).is_empty());
        }
    }

    /// What consecutive text items sound like: separate utterances, spaced unless either side
    /// is whitespace or CJK text.
    fn join_speech(expected: &mut String, speech: &str) {
        if let (Some(p), Some(f)) = (expected.chars().last(), speech.chars().next()) {
            if !p.is_whitespace() && !f.is_whitespace() && !is_cjk(p) && !is_cjk(f) {
                expected.push(' ');
            }
        }
        expected.push_str(speech);
    }
}
