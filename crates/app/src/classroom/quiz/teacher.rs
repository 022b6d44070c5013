//! Short answers to the course's teacher: one streamed call per answer, all at once, each mark
//! reported as its reply ends; why the learner marks it instead when no teacher can grade
//! (embedded, locked, not set up, a failed call). What to ask and how to read the reply are
//! `director::grading`'s; this module only moves the calls.

use aula_director::grading::{NoTeacher, TeacherMark};
use aula_providers::wire::Report;
use aula_providers::ChatRequest;
use leptos::task::spawn_local;

use crate::connection::{usable_connection, Role, Unusable};
use crate::workers;

/// Asks the teacher to grade each `(question id, points, request)`; `mark` hears every change.
pub(super) fn ask_teacher(
    to_grade: Vec<(String, u32, ChatRequest)>,
    hosted: bool,
    mark: impl Fn(String, TeacherMark) + Clone + 'static,
) {
    // Embedded (an LMS, an offline file) there is no provider to grade with.
    if hosted {
        for (id, _, _) in to_grade {
            mark(id, TeacherMark::SelfMark(NoTeacher::Embedded));
        }
        return;
    }
    spawn_local(async move {
        let endpoint = match usable_connection().await {
            Ok(connection) => connection.endpoint(Role::Agents),
            Err(why) => {
                let why = match why {
                    Unusable::Locked => NoTeacher::Locked,
                    Unusable::NotSetUp => NoTeacher::NotSetUp,
                    Unusable::Unreadable(error) => NoTeacher::Failed(error),
                };
                for (id, _, _) in to_grade {
                    mark(id, TeacherMark::SelfMark(why.clone()));
                }
                return;
            }
        };
        for (id, points, request) in to_grade {
            mark(id.clone(), TeacherMark::Grading);
            let mut reply = String::new();
            let mark = mark.clone();
            workers::chat(endpoint.clone(), request, true, move |report| {
                let outcome = match report {
                    Report::Text { text, .. } | Report::Json { text, .. } => {
                        reply.push_str(&text);
                        return;
                    }
                    Report::Done { .. } => TeacherMark::of_reply(&reply, points),
                    Report::Failed { message, .. } => {
                        TeacherMark::SelfMark(NoTeacher::Failed(message))
                    }
                    _ => return,
                };
                mark(id.clone(), outcome);
            });
        }
    });
}
