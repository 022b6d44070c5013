//! Grading a learner's quiz answers. Choice questions are graded here, by set equality, with
//! no model involved; a short answer is graded by the learner against the model answer (or, with
//! a provider, by the live classroom), so its grade leaves `correct` open.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::scene::QuizQuestion;

/// What the learner answered to one question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum Answer {
    /// The chosen option's id.
    Single(String),
    /// The chosen options' ids, in any order.
    Multiple(Vec<String>),
    Short(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grade {
    /// `None` when code cannot tell (a short answer).
    pub correct: Option<bool>,
    pub earned: u32,
    pub possible: u32,
}

/// Grades `answer` to `question`. An answer of the wrong kind (a single choice to a multiple
/// choice question, …) is simply wrong.
pub fn grade(question: &QuizQuestion, answer: &Answer) -> Grade {
    let possible = question.points();
    let correct = match (question, answer) {
        (QuizQuestion::Single(q), Answer::Single(chosen)) => Some(*chosen == q.answer),
        (QuizQuestion::Multiple(q), Answer::Multiple(chosen)) => {
            let chosen: BTreeSet<&String> = chosen.iter().collect();
            let expected: BTreeSet<&String> = q.answers.iter().collect();
            Some(chosen == expected)
        }
        (QuizQuestion::Short(_), Answer::Short(text)) if !text.trim().is_empty() => None,
        _ => Some(false),
    };
    Grade {
        correct,
        earned: if correct == Some(true) { possible } else { 0 },
        possible,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{MultipleChoice, QuizOption, ShortAnswer, SingleChoice};

    fn options(ids: &[&str]) -> Vec<QuizOption> {
        ids.iter()
            .map(|id| QuizOption {
                id: (*id).into(),
                text: format!("option {id}"),
            })
            .collect()
    }

    fn single() -> QuizQuestion {
        QuizQuestion::Single(SingleChoice {
            id: "q1".into(),
            question: "Which gas do plants release?".into(),
            options: options(&["a", "b", "c"]),
            answer: "b".into(),
            explanation: None,
            points: 2,
        })
    }

    fn multiple() -> QuizQuestion {
        QuizQuestion::Multiple(MultipleChoice {
            id: "q2".into(),
            question: "Which happen in the light reactions?".into(),
            options: options(&["a", "b", "c", "d"]),
            answers: vec!["a".into(), "c".into()],
            explanation: None,
            points: 3,
        })
    }

    #[test]
    fn single_choice_is_right_only_with_the_answer() {
        assert_eq!(
            grade(&single(), &Answer::Single("b".into())),
            Grade {
                correct: Some(true),
                earned: 2,
                possible: 2
            }
        );
        assert_eq!(grade(&single(), &Answer::Single("a".into())).earned, 0);
    }

    #[test]
    fn multiple_choice_needs_exactly_the_answer_set_in_any_order() {
        let q = multiple();
        assert_eq!(
            grade(&q, &Answer::Multiple(vec!["c".into(), "a".into()])).earned,
            3
        );
        assert_eq!(
            grade(&q, &Answer::Multiple(vec!["a".into()])).correct,
            Some(false)
        );
        assert_eq!(
            grade(
                &q,
                &Answer::Multiple(vec!["a".into(), "c".into(), "d".into()])
            )
            .correct,
            Some(false)
        );
        assert_eq!(
            grade(
                &q,
                &Answer::Multiple(vec!["a".into(), "a".into(), "c".into()])
            )
            .correct,
            Some(true)
        );
    }

    #[test]
    fn answer_of_the_wrong_kind_is_wrong() {
        assert_eq!(
            grade(&single(), &Answer::Multiple(vec!["b".into()])).correct,
            Some(false)
        );
        assert_eq!(
            grade(&multiple(), &Answer::Single("a".into())).correct,
            Some(false)
        );
    }

    #[test]
    fn short_answer_is_left_to_the_learner_unless_empty() {
        let q = QuizQuestion::Short(ShortAnswer {
            id: "q3".into(),
            question: "Why are leaves green?".into(),
            reference_answer: "Chlorophyll reflects green light.".into(),
            explanation: None,
            points: 1,
        });
        assert_eq!(
            grade(&q, &Answer::Short("they reflect green".into())).correct,
            None
        );
        assert_eq!(grade(&q, &Answer::Short("   ".into())).correct, Some(false));
    }
}
