//! A quiz scene: answer, check, read the explanations, see the score, continue. Choice
//! questions are graded by code; with an AI provider the course's teacher grades each short
//! answer (one call each, `director::grading`), otherwise the learner marks it against the model
//! answer, told why. The teacher's grade is shown in the question's verdict line, so it costs the
//! page no view code of its own.

use std::collections::BTreeMap;

use aula_course::quiz::{Answer, Grade};
use aula_course::scene::QuizQuestion;
use aula_director::grading::{answers_to_grade, quiz_grades, quiz_score, NoTeacher, TeacherMark};
use aula_player::Command;
use aula_providers::wire::Report;
use aula_render::markdown_to_html;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::lecture::Lecture;
use crate::connection::{usable_connection, Role, Unusable};
use crate::i18n::*;
use crate::workers;

#[component]
pub fn QuizView(session: Lecture, scene_index: usize) -> impl IntoView {
    let i18n = use_i18n();
    let questions: Vec<QuizQuestion> =
        session.course(|c| match c.scenes.get(scene_index).map(|s| &s.content) {
            Some(aula_course::SceneContent::Quiz(quiz)) => quiz.questions.clone(),
            _ => Vec::new(),
        });
    let answers = RwSignal::new(BTreeMap::<String, Answer>::new());
    // Short answers are compared with the model answer by the learner.
    let self_marked = RwSignal::new(BTreeMap::<String, bool>::new());
    let checked = RwSignal::new(false);
    let teacher_marks = RwSignal::new(BTreeMap::<String, TeacherMark>::new());
    // Counts checks, so a grade that arrives after "Try again" is dropped.
    let attempt = StoredValue::new(0u32);
    let questions = StoredValue::new(questions);
    let teacher = session.course(|c| c.teacher().map(|t| t.name.clone()));

    let grades = Memo::new(move |_| {
        questions.with_value(|qs| {
            answers.with(|a| {
                self_marked.with(|own| teacher_marks.with(|marks| quiz_grades(qs, a, own, marks)))
            })
        })
    });
    let score = move || grades.with(quiz_score);
    // The score as it stands after a check (grades may still arrive), for an embedding page.
    Effect::new(move || {
        if checked.get() {
            let (earned, possible) = score();
            session
                .quiz_result
                .set(Some((scene_index, earned, possible)));
        }
    });
    let all_answered = move || {
        questions.with_value(|qs| answers.with(|a| qs.iter().all(|q| a.contains_key(q.id()))))
    };

    // Checking shows every verdict at once and sends each short answer to the teacher.
    let check = move |_| {
        checked.set(true);
        attempt.update_value(|a| *a += 1);
        let this = attempt.get_value();
        let mark = move |id: String, mark: TeacherMark| {
            if attempt.try_get_value() == Some(this) {
                teacher_marks.try_update(|m| m.insert(id, mark));
            }
        };
        let to_grade = questions.with_value(|qs| {
            answers.with_untracked(|a| session.course(|c| answers_to_grade(c, qs, a)))
        });
        if to_grade.is_empty() {
            return;
        }
        // Embedded (an LMS, an offline file) there is no provider to grade with.
        if session.hosted {
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
            // Every call goes out at once; each grade shows when its reply has ended.
            for (id, points, request) in to_grade {
                mark(id.clone(), TeacherMark::Grading);
                let mut reply = String::new();
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
    };

    let question_views = questions.with_value(|qs| {
        qs.iter()
            .enumerate()
            .map(|(number, q)| view! { <QuestionCard number=number + 1 question=q.clone() answers=answers self_marked=self_marked checked=checked grades=grades teacher_marks=teacher_marks teacher=teacher.clone()/> })
            .collect_view()
    });

    view! {
        <div class="quiz" data-testid="quiz">
            <ol class="quiz-questions">{question_views}</ol>
            <div class="quiz-footer">
                <Show
                    when=move || checked.get()
                    fallback=move || view! {
                        <button class="primary" data-testid="quiz-check" disabled=move || !all_answered() on:click=check>
                            {t!(i18n, quiz_check)}
                        </button>
                        <span class="hint">{move || (!all_answered()).then(|| t_string!(i18n, quiz_answer_all))}</span>
                    }
                >
                    <p class="quiz-score" data-testid="quiz-score" role="status">
                        {t!(i18n, quiz_score, earned = move || score().0, possible = move || score().1)}
                    </p>
                    <button class="secondary" on:click=move |_| { checked.set(false); answers.set(BTreeMap::new()); self_marked.set(BTreeMap::new()); attempt.update_value(|a| *a += 1); teacher_marks.set(BTreeMap::new()); }>
                        {t!(i18n, quiz_retry)}
                    </button>
                    <button class="primary" data-testid="quiz-continue" on:click=move |_| session.send(Command::FinishScene)>
                        {t!(i18n, continue_button)}
                    </button>
                </Show>
            </div>
        </div>
    }
}

#[component]
fn QuestionCard(
    number: usize,
    question: QuizQuestion,
    answers: RwSignal<BTreeMap<String, Answer>>,
    self_marked: RwSignal<BTreeMap<String, bool>>,
    checked: RwSignal<bool>,
    grades: Memo<BTreeMap<String, Grade>>,
    teacher_marks: RwSignal<BTreeMap<String, TeacherMark>>,
    /// The course teacher's name, when the course has one.
    teacher: Option<String>,
) -> impl IntoView {
    let i18n = use_i18n();
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
            answers,
            checked,
        ),
        QuizQuestion::Multiple(q) => {
            choice_options(&q.id, &q.options, &q.answers, true, answers, checked)
        }
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
    answers: RwSignal<BTreeMap<String, Answer>>,
    checked: RwSignal<bool>,
) -> AnyView {
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
