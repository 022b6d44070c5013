//! Helpers shared by the tests.

use crate::event::StreamEvent;

/// Joins neighbouring deltas of the same kind, so streams that differ only in how text was cut
/// compare equal.
pub fn coalesce(events: Vec<StreamEvent>) -> Vec<StreamEvent> {
    let mut out: Vec<StreamEvent> = Vec::new();
    for event in events {
        match (out.last_mut(), event) {
            (Some(StreamEvent::TextDelta(a)), StreamEvent::TextDelta(b))
            | (Some(StreamEvent::ThinkingDelta(a)), StreamEvent::ThinkingDelta(b))
            | (Some(StreamEvent::JsonDelta(a)), StreamEvent::JsonDelta(b)) => a.push_str(&b),
            (_, event) => out.push(event),
        }
    }
    out
}
