//! A quiz scene: answer, check, read the explanations, see the score, continue. Choice
//! questions are graded by code; with an AI provider the course's teacher grades each short
//! answer (one call each, `director::grading`, sent by [`teacher`]), otherwise the learner marks
//! it against the model answer, told why. The teacher's grade is shown in the question's verdict
//! line, so it costs the page no view code of its own.

mod question;
mod teacher;

use std::collections::BTreeMap;

use aula_course::quiz::{Answer, Grade};
use aula_course::scene::QuizQuestion;
use aula_director::grading::{answers_to_grade, quiz_grades, quiz_score, TeacherMark};
use aula_player::Command;
use leptos::prelude::*;

use super::lecture::Lecture;
use crate::i18n::*;
use question::QuestionCard;

/// What the learner answered and how it was judged, shared by the quiz and its questions.
#[derive(Clone, Copy)]
struct QuizState {
    answers: RwSignal<BTreeMap<String, Answer>>,
    /// Short answers the learner marked right against the model answer.
    self_marked: RwSignal<BTreeMap<String, bool>>,
    checked: RwSignal<bool>,
    teacher_marks: RwSignal<BTreeMap<String, TeacherMark>>,
    grades: Memo<BTreeMap<String, Grade>>,
    /// Counts checks, so a grade that arrives after "Try again" is dropped.
    attempt: StoredValue<u32>,
}

impl QuizState {
    fn new(questions: StoredValue<Vec<QuizQuestion>>) -> Self {
        let answers = RwSignal::new(BTreeMap::new());
        let self_marked = RwSignal::new(BTreeMap::new());
        let teacher_marks = RwSignal::new(BTreeMap::new());
        let grades = Memo::new(move |_| {
            questions.with_value(|qs| {
                answers.with(|a| {
                    self_marked
                        .with(|own| teacher_marks.with(|marks| quiz_grades(qs, a, own, marks)))
                })
            })
        });
        QuizState {
            answers,
            self_marked,
            checked: RwSignal::new(false),
            teacher_marks,
            grades,
            attempt: StoredValue::new(0),
        }
    }

    /// Clears every answer and mark for another try.
    fn reset(self) {
        self.checked.set(false);
        self.answers.set(BTreeMap::new());
        self.self_marked.set(BTreeMap::new());
        self.attempt.update_value(|a| *a += 1);
        self.teacher_marks.set(BTreeMap::new());
    }
}

#[component]
pub fn QuizView(session: Lecture, scene_index: usize) -> impl IntoView {
    let i18n = use_i18n();
    let questions: Vec<QuizQuestion> =
        session.course(|c| match c.scenes.get(scene_index).map(|s| &s.content) {
            Some(aula_course::SceneContent::Quiz(quiz)) => quiz.questions.clone(),
            _ => Vec::new(),
        });
    let questions = StoredValue::new(questions);
    let state = QuizState::new(questions);
    let QuizState {
        answers, checked, ..
    } = state;
    let teacher = session.course(|c| c.teacher().map(|t| t.name.clone()));

    let score = move || state.grades.with(quiz_score);
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
        state.attempt.update_value(|a| *a += 1);
        let this = state.attempt.get_value();
        let to_grade = questions.with_value(|qs| {
            answers.with_untracked(|a| session.course(|c| answers_to_grade(c, qs, a)))
        });
        if to_grade.is_empty() {
            return;
        }
        teacher::ask_teacher(to_grade, session.hosted, move |id, mark| {
            if state.attempt.try_get_value() == Some(this) {
                state.teacher_marks.try_update(|m| m.insert(id, mark));
            }
        });
    };

    let question_views = questions.with_value(|qs| {
        qs.iter()
            .enumerate()
            .map(|(number, q)| view! { <QuestionCard number=number + 1 question=q.clone() state=state teacher=teacher.clone()/> })
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
                    <button class="secondary" on:click=move |_| state.reset()>
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
