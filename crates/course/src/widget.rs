//! The message contract between the player and the page of an interactive scene.
//!
//! The page runs in `<iframe sandbox="allow-scripts allow-forms" srcdoc="…">`: its scripts and
//! forms run (a guard script keeps a form's submission inside the page), but with an opaque
//! origin, so it cannot read the app's storage, keys or DOM, and cannot call into it. The only
//! channel is `postMessage` with plain JSON objects tagged by `"type"`:
//!
//! - **player → page** ([`ToWidget`]), built from the scene's `widget_*` actions by
//!   [`ToWidget::from_action`] and posted with `iframe.contentWindow.postMessage(message, "*")`.
//!   The target origin has to be `*` because an opaque origin cannot be named; the messages carry
//!   nothing private. The player posts nothing before the page has said `ready`, and posts what it
//!   held back, in order, right after.
//!   - `{"type": "highlight", "target": "#light", "content": "Drag this slider."}`
//!   - `{"type": "annotate", "target": "#bubbles", "content": "It stops rising here."}`
//!   - `{"type": "reveal", "target": "#answer"}`
//!   - `{"type": "set_state", "state": {"light": 80}}` (merged into the page's state)
//!
//!   `target` is a CSS selector inside the page; `content` is optional.
//! - **page → player** ([`FromWidget`]), posted with `window.parent.postMessage(message, "*")`.
//!   The player reads a message only when `event.source` is the scene's iframe window (every
//!   sandboxed frame has the origin `"null"`, so the origin proves nothing), parses it with
//!   [`FromWidget::parse`], and ignores anything that does not parse.
//!   - `{"type": "ready"}` once the page listens for messages;
//!   - `{"type": "state_changed", "state": {...}}` after the learner changed something;
//!   - `{"type": "completed", "score": 3, "max_score": 4}` when the task is done (both numbers
//!     optional).
//!
//! A page that ignores the contract still works as a plain page: the widget actions wait their
//! usual time and the script moves on.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use thiserror::Error;

use crate::action::Action;
use crate::validate::limits::MAX_WIDGET_STATE_BYTES;

/// What an interactive page was generated as; the player may show a hint, an export may choose a
/// fallback. Plain HTML pages have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WidgetKind {
    /// Sliders and variables driving a model.
    Simulation,
    /// Nodes and edges, revealed step by step.
    Diagram,
    /// A coding exercise with tests.
    Code,
    /// A scored quiz game.
    Game,
    /// A 3D scene to turn and explore.
    #[serde(rename = "visualization3d")]
    Visualization3d,
}

/// A message from the player to the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToWidget {
    Highlight {
        target: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
    },
    Annotate {
        target: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
    },
    Reveal {
        target: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
    },
    SetState {
        state: Map<String, Value>,
    },
}

impl ToWidget {
    /// The message a `widget_*` action sends; `None` for every other action. The note of a
    /// `widget_set_state` is for the learner, so it is not sent.
    pub fn from_action(action: &Action) -> Option<ToWidget> {
        match action {
            Action::WidgetHighlight(a) => Some(ToWidget::Highlight {
                target: a.target.clone(),
                content: a.content.clone(),
            }),
            Action::WidgetAnnotation(a) => Some(ToWidget::Annotate {
                target: a.target.clone(),
                content: a.content.clone(),
            }),
            Action::WidgetReveal(a) => Some(ToWidget::Reveal {
                target: a.target.clone(),
                content: a.content.clone(),
            }),
            Action::WidgetSetState(a) => Some(ToWidget::SetState {
                state: a.state.clone(),
            }),
            Action::Speech(_)
            | Action::Spotlight(_)
            | Action::Laser(_)
            | Action::PlayVideo(_)
            | Action::WbOpen(_)
            | Action::WbClose(_)
            | Action::WbDrawText(_)
            | Action::WbDrawShape(_)
            | Action::WbDrawChart(_)
            | Action::WbDrawLatex(_)
            | Action::WbDrawTable(_)
            | Action::WbDrawLine(_)
            | Action::WbDrawCode(_)
            | Action::WbEditCode(_)
            | Action::WbDelete(_)
            | Action::WbClear(_)
            | Action::Discussion(_)
            | Action::Unknown { .. } => None,
        }
    }
}

/// A message from the page to the player.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum FromWidget {
    /// The page listens for messages now.
    Ready,
    /// The learner changed the page's state; `state` is all of it.
    StateChanged { state: Map<String, Value> },
    /// The learner finished the page's task.
    Completed {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        score: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_score: Option<f64>,
    },
}

/// Why a message from a page was not accepted. The player drops such messages; the text is for
/// the developer console of whoever wrote the page.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum WidgetMessageError {
    #[error("The interactive page sent a message Aula does not understand: {0}.")]
    Unreadable(String),
    #[error(
        "The interactive page sent a state of {bytes} bytes; Aula accepts at most {limit} bytes."
    )]
    StateTooLarge { bytes: usize, limit: usize },
    #[error("The interactive page reported an impossible score: {0}.")]
    ImpossibleScore(String),
}

impl FromWidget {
    /// Parses one message strictly: a known `"type"`, no other fields than its own, a state of at
    /// most [`MAX_WIDGET_STATE_BYTES`], and a score that makes sense.
    pub fn parse(message: &Value) -> Result<FromWidget, WidgetMessageError> {
        // Reject extra fields before serde does, so a unit message (`ready`) is strict too.
        let Some(object) = message.as_object() else {
            return Err(WidgetMessageError::Unreadable(
                "a message must be a JSON object with a \"type\"".into(),
            ));
        };
        let allowed: &[&str] = match object.get("type").and_then(Value::as_str) {
            Some("ready") => &["type"],
            Some("state_changed") => &["type", "state"],
            Some("completed") => &["type", "score", "max_score"],
            Some(other) => {
                return Err(WidgetMessageError::Unreadable(format!(
                    "unknown message type `{other}`"
                )))
            }
            None => {
                return Err(WidgetMessageError::Unreadable(
                    "a message needs a string \"type\"".into(),
                ))
            }
        };
        if let Some(extra) = object.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(WidgetMessageError::Unreadable(format!(
                "unexpected field `{extra}`"
            )));
        }
        let parsed = FromWidget::deserialize(message)
            .map_err(|e| WidgetMessageError::Unreadable(e.to_string()))?;
        match &parsed {
            FromWidget::Ready => {}
            FromWidget::StateChanged { state } => {
                let bytes = state_bytes(state);
                if bytes > MAX_WIDGET_STATE_BYTES {
                    return Err(WidgetMessageError::StateTooLarge {
                        bytes,
                        limit: MAX_WIDGET_STATE_BYTES,
                    });
                }
            }
            FromWidget::Completed { score, max_score } => check_score(*score, *max_score)?,
        }
        Ok(parsed)
    }
}

/// The size of a state as JSON text.
pub(crate) fn state_bytes(state: &Map<String, Value>) -> usize {
    serde_json::to_string(state).map_or(usize::MAX, |text| text.len())
}

fn check_score(score: Option<f64>, max_score: Option<f64>) -> Result<(), WidgetMessageError> {
    let bad = |why: String| Err(WidgetMessageError::ImpossibleScore(why));
    if let Some(score) = score {
        if !score.is_finite() || score < 0.0 {
            return bad(format!("score {score} is not a number of 0 or more"));
        }
    }
    if let Some(max) = max_score {
        if !max.is_finite() || max <= 0.0 {
            return bad(format!("max_score {max} is not a number above 0"));
        }
    }
    if let (Some(score), Some(max)) = (score, max_score) {
        if score > max {
            return bad(format!("score {score} is above max_score {max}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::{Speech, WidgetAnnotation, WidgetHighlight, WidgetReveal, WidgetSetState};
    use serde_json::json;

    fn state(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn widget_actions_become_their_messages() {
        let highlight = Action::WidgetHighlight(WidgetHighlight {
            id: "w1".into(),
            target: "#light".into(),
            content: Some("Drag this slider.".into()),
        });
        assert_eq!(
            serde_json::to_value(ToWidget::from_action(&highlight)).unwrap(),
            json!({"type": "highlight", "target": "#light", "content": "Drag this slider."})
        );
        let annotate = Action::WidgetAnnotation(WidgetAnnotation {
            id: "w2".into(),
            target: "#bubbles".into(),
            content: Some("It stops rising here.".into()),
        });
        assert_eq!(
            serde_json::to_value(ToWidget::from_action(&annotate)).unwrap(),
            json!({"type": "annotate", "target": "#bubbles", "content": "It stops rising here."})
        );
        let reveal = Action::WidgetReveal(WidgetReveal {
            id: "w3".into(),
            target: "#answer".into(),
            content: None,
        });
        assert_eq!(
            serde_json::to_value(ToWidget::from_action(&reveal)).unwrap(),
            json!({"type": "reveal", "target": "#answer"})
        );
    }

    #[test]
    fn set_state_sends_the_state_but_not_the_learners_note() {
        let set = Action::WidgetSetState(WidgetSetState {
            id: "w4".into(),
            state: state(json!({"light": 80, "plant": "fern"})),
            content: Some("Now at bright light.".into()),
        });
        assert_eq!(
            serde_json::to_value(ToWidget::from_action(&set)).unwrap(),
            json!({"type": "set_state", "state": {"light": 80, "plant": "fern"}})
        );
    }

    #[test]
    fn non_widget_actions_send_nothing() {
        let speech = Action::Speech(Speech {
            id: "s".into(),
            text: "Hello".into(),
            speaker: None,
            audio_id: None,
        });
        assert_eq!(ToWidget::from_action(&speech), None);
        let unknown: Action =
            serde_json::from_value(json!({"type": "widget_wiggle", "id": "x", "target": "#a"}))
                .unwrap();
        assert_eq!(ToWidget::from_action(&unknown), None);
    }

    #[test]
    fn page_messages_parse() {
        assert_eq!(
            FromWidget::parse(&json!({"type": "ready"})),
            Ok(FromWidget::Ready)
        );
        assert_eq!(
            FromWidget::parse(&json!({"type": "state_changed", "state": {"light": 20}})),
            Ok(FromWidget::StateChanged {
                state: state(json!({"light": 20}))
            })
        );
        assert_eq!(
            FromWidget::parse(&json!({"type": "completed", "score": 3, "max_score": 4})),
            Ok(FromWidget::Completed {
                score: Some(3.0),
                max_score: Some(4.0)
            })
        );
        assert_eq!(
            FromWidget::parse(&json!({"type": "completed"})),
            Ok(FromWidget::Completed {
                score: None,
                max_score: None
            })
        );
    }

    #[test]
    fn page_messages_with_unknown_types_or_fields_are_refused() {
        for bad in [
            json!("ready"),
            json!({"kind": "ready"}),
            json!({"type": 1}),
            json!({"type": "hello"}),
            json!({"type": "ready", "extra": true}),
            json!({"type": "state_changed"}),
            json!({"type": "state_changed", "state": [1, 2]}),
            json!({"type": "completed", "score": "3"}),
            json!({"type": "completed", "scor": 3}),
        ] {
            assert!(
                matches!(
                    FromWidget::parse(&bad),
                    Err(WidgetMessageError::Unreadable(_))
                ),
                "accepted {bad}"
            );
        }
    }

    #[test]
    fn impossible_scores_are_refused() {
        for (score, max) in [
            (json!(-1), json!(4)),
            (json!(5), json!(4)),
            (json!(1), json!(0)),
        ] {
            let message = json!({"type": "completed", "score": score, "max_score": max});
            assert!(
                matches!(
                    FromWidget::parse(&message),
                    Err(WidgetMessageError::ImpossibleScore(_))
                ),
                "accepted {message}"
            );
        }
    }

    #[test]
    fn an_oversized_state_is_refused() {
        let big = "x".repeat(MAX_WIDGET_STATE_BYTES);
        let message = json!({"type": "state_changed", "state": {"log": big}});
        assert!(matches!(
            FromWidget::parse(&message),
            Err(WidgetMessageError::StateTooLarge { .. })
        ));
    }

    #[test]
    fn widget_kinds_use_the_reference_names() {
        assert_eq!(
            serde_json::to_value(WidgetKind::Visualization3d).unwrap(),
            json!("visualization3d")
        );
        assert_eq!(
            serde_json::from_value::<WidgetKind>(json!("simulation")).unwrap(),
            WidgetKind::Simulation
        );
    }
}
