//! One question of a quiz: its prompt and points, its options (or the short answer's box and the
//! model answer to mark against), and, once checked, its verdict and explanation.

use aula_course::quiz::Answer;
use aula_course::scene::QuizQuestion;
use aula_director::grading::{NoTeacher, TeacherMark};
use aula_render::markdown_to_html;
use leptos::prelude::*;

use super::QuizState;
use crate::i18n::*;

#[component]
pub(super) fn QuestionCard(
    number: usize,
    question: QuizQuestion,
    state: QuizState,
    /// The course teacher's name, when the course has one.
    teacher: Option<String>,
) -> impl IntoView {
    let i18n = use_i18n();
    let QuizState {
        answers,
        self_marked,
        checked,
        teacher_marks,
        grades,
        ..
    } = state;
    let id = question.id().to_owned();
    let (prompt, explanation, points) = match &question {
        QuizQuestion::Single(q) => (q.question.clone(), q.explanation.clone(), q.points),
        QuizQuestion::Multiple(q) => (q.question.clone(), q.explanation.clone(), q.points),
        QuizQuestion::Short(q) => (q.question.clone(), q.explanation.clone(), q.points),
    };
    let verdict_id = id.clone();
    // A short answer's verdict is the teacher's grade and feedback, or why the learner marks it.
    let verdict = Memo::new(move |_| {
        let g = grades.with(|g| g.get(&verdict_id).cloned())?;
        let mark = teacher_marks.with(|m| m.get(&verdict_id).cloned());
        Some(match (g.correct, mark) {
            (Some(true), _) => ("correct", t_string!(i18n, quiz_correct).to_string()),
            (Some(false), _) => ("wrong", t_string!(i18n, quiz_wrong).to_string()),
            (None, Some(TeacherMark::Grading)) => {
                ("grading", t_string!(i18n, grade_grading).to_string())
            }
            (None, Some(TeacherMark::Graded(grade))) => (
                "graded",
                i18n.fill(
                    Key::grade_result,
                    &[
                        (
                            "teacher",
                            teacher
                                .clone()
                                .unwrap_or_else(|| t_string!(i18n, grade_teacher).to_owned()),
                        ),
                        ("score", grade.score.to_string()),
                        ("points", g.possible.to_string()),
                        ("feedback", grade.feedback),
                    ],
                ),
            ),
            (None, Some(TeacherMark::SelfMark(why))) => (
                "self",
                match why {
                    NoTeacher::Embedded => t_string!(i18n, grade_self).to_owned(),
                    NoTeacher::Locked => t_string!(i18n, grade_unlock).to_owned(),
                    NoTeacher::NotSetUp => t_string!(i18n, grade_needs_provider).to_owned(),
                    NoTeacher::Failed(reason) => {
                        i18n.fill(Key::grade_failed, &[("reason", reason)])
                    }
                },
            ),
            (None, None) => ("self", t_string!(i18n, quiz_self).to_string()),
        })
    });
    let body = match question {
        QuizQuestion::Single(q) => choice_options(
            &q.id,
            &q.options,
            std::slice::from_ref(&q.answer),
            false,
            state,
        ),
        QuizQuestion::Multiple(q) => choice_options(&q.id, &q.options, &q.answers, true, state),
        QuizQuestion::Short(q) => {
            let (qid, qid2) = (q.id.clone(), q.id.clone());
            let reference = q.reference_answer.clone();
            view! {
                <textarea rows="3" aria-label=move || t_string!(i18n, quiz_your_answer) disabled=move || checked.get()
                    prop:value=move || answers.with(|a| match a.get(&qid2) { Some(Answer::Short(t)) => t.clone(), _ => String::new() })
                    on:input=move |ev| {
                        let text = event_target_value(&ev);
                        answers.update(|a| { if text.trim().is_empty() { a.remove(&qid); } else { a.insert(qid.clone(), Answer::Short(text)); } });
                    }></textarea>
                <Show when=move || checked.get()>
                    <div class="model-answer">
                        <strong>{t!(i18n, quiz_model_answer)}" "</strong>{reference.clone()}
                        <label class="self-mark">
                            <input type="checkbox"
                                prop:checked={ let id = q.id.clone(); move || self_marked.with(|m| m.get(&id).copied().unwrap_or(false)) }
                                on:change={ let id = q.id.clone(); move |ev| { let on = event_target_checked(&ev); self_marked.update(|m| { m.insert(id.clone(), on); }); } }/>
                            " "{t!(i18n, quiz_self_mark)}
                        </label>
                    </div>
                </Show>
            }
            .into_any()
        }
    };
    view! {
        <li class="quiz-question" data-question=id>
            <p class="question-prompt"><span class="question-number">{number}"."</span> {prompt} <span class="points">{t!(i18n, quiz_points, points = move || points)}</span></p>
            <div class="options">{body}</div>
            <Show when=move || checked.get()>
                {move || verdict.get().map(|(class, text)| view! { <p class=format!("verdict {class}") data-testid="grade" data-state=class>{text}</p> })}
                {explanation.clone().map(|e| view! { <div class="explanation" inner_html=markdown_to_html(&e)></div> })}
            </Show>
        </li>
    }
}

/// The options of a choice question: radio buttons, or checkboxes when several may be right.
/// One code path for both kinds keeps the page small.
fn choice_options(
    question_id: &str,
    options: &[aula_course::scene::QuizOption],
    correct: &[String],
    multiple: bool,
    state: QuizState,
) -> AnyView {
    let QuizState {
        answers, checked, ..
    } = state;
    let name = format!("q-{question_id}");
    options
        .iter()
        .map(|option| {
            let qid = question_id.to_owned();
            let oid = option.id.clone();
            let is_answer = correct.contains(&option.id);
            let chosen = {
                let (qid, oid) = (qid.clone(), oid.clone());
                move || {
                    answers.with(|a| match a.get(&qid) {
                        Some(Answer::Single(x)) => *x == oid,
                        Some(Answer::Multiple(list)) => list.contains(&oid),
                        _ => false,
                    })
                }
            };
            let toggle = move |ev| {
                let on = event_target_checked(&ev);
                answers.update(|a| {
                    if !multiple {
                        a.insert(qid.clone(), Answer::Single(oid.clone()));
                        return;
                    }
                    let entry = a.entry(qid.clone()).or_insert_with(|| Answer::Multiple(Vec::new()));
                    if let Answer::Multiple(list) = entry {
                        list.retain(|x| *x != oid);
                        if on {
                            list.push(oid.clone());
                        }
                        if list.is_empty() {
                            a.remove(&qid);
                        }
                    }
                });
            };
            view! {
                <label class="option" class:answer=move || checked.get() && is_answer>
                    <input type=if multiple { "checkbox" } else { "radio" } name=name.clone() value=option.id.clone()
                        disabled=move || checked.get() prop:checked=chosen on:change=toggle/>
                    <span>{option.text.clone()}</span>
                </label>
            }
        })
        .collect_view()
        .into_any()
}
