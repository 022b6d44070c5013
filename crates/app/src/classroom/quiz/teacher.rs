//! Short answers to the course's teacher: one streamed call per answer, all at once, each mark
//! reported as its reply ends; why the learner marks it instead when no teacher can grade
//! (embedded, locked, not set up, a failed call). What to ask and how to read the reply are
//! `director::grading`'s; this module only moves the calls.

use std::rc::Rc;

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
    mark: impl Fn(String, TeacherMark) + 'static,
) {
    // Embedded (an LMS, an offline file) there is no provider to grade with.
    if hosted {
        for (id, _, _) in to_grade {
            mark(id, TeacherMark::SelfMark(NoTeacher::Embedded));
        }
        return;
    }
    // Shown at once: the calls start once the grading code and the settings have been read.
    for (id, _, _) in &to_grade {
        mark(id.clone(), TeacherMark::Grading);
    }
    spawn_local(grade(to_grade, Rc::new(mark)));
}

/// The calls, loaded on first use in a split build (with the AI worker's client).
#[cfg_attr(aula_lazy, leptos::lazy)]
async fn grade(to_grade: Vec<(String, u32, ChatRequest)>, mark: Rc<dyn Fn(String, TeacherMark)>) {
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
        let mut reply = String::new();
        let mark = Rc::clone(&mark);
        workers::chat(endpoint.clone(), request, true, move |report| {
            let outcome = match report {
                Report::Text { text, .. } | Report::Json { text, .. } => {
                    reply.push_str(&text);
                    return;
                }
                Report::Done { .. } => TeacherMark::of_reply(&reply, points),
                Report::Failed { message, .. } => TeacherMark::SelfMark(NoTeacher::Failed(message)),
                _ => return,
            };
            mark(id.clone(), outcome);
        });
    }
}
