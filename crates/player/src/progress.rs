//! What a learner has done in a course, as an LMS or an embedding page needs it: the scenes seen,
//! each quiz's score, completion and pass/fail under the rules chosen at export, and a compact
//! bookmark that restores all of it (SCORM 1.2 keeps only 4,096 characters of suspend data).

use std::collections::{BTreeMap, BTreeSet};

use aula_course::{Course, SceneContent};
use serde::{Deserialize, Serialize};

/// When a course counts as completed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompletionRule {
    /// Every scene has been opened.
    #[default]
    AllScenes,
    /// Every quiz has been answered and the score reaches the passing score.
    QuizPassed,
}

/// The export's reporting rules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgressRules {
    #[serde(default)]
    pub completion: CompletionRule,
    /// Percent of the quiz points needed to pass; `None` reports no pass/fail.
    #[serde(default)]
    pub passing_percent: Option<u32>,
}

/// Points earned out of points possible.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Score {
    pub raw: u32,
    pub max: u32,
}

impl Score {
    /// −1..1 as SCORM 2004 wants it (0..1 here).
    pub fn scaled(&self) -> f64 {
        if self.max == 0 {
            0.0
        } else {
            f64::from(self.raw) / f64::from(self.max)
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    scenes: usize,
    /// Each quiz scene's points possible.
    quizzes: BTreeMap<usize, u32>,
    seen: BTreeSet<usize>,
    /// Each answered quiz scene's points earned (the latest check).
    earned: BTreeMap<usize, u32>,
    pub current: usize,
}

/// The bookmark's format marker; a bookmark from another format is ignored, not misread.
const BOOKMARK_VERSION: &str = "a1";

impl Progress {
    pub fn new(course: &Course) -> Progress {
        let quizzes = course
            .scenes
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match &s.content {
                SceneContent::Quiz(quiz) => {
                    Some((i, quiz.questions.iter().map(|q| q.points()).sum()))
                }
                _ => None,
            })
            .collect();
        Progress {
            scenes: course.scenes.len(),
            quizzes,
            seen: BTreeSet::new(),
            earned: BTreeMap::new(),
            current: 0,
        }
    }

    /// The learner is at `scene`. Returns whether anything changed.
    pub fn visit(&mut self, scene: usize) -> bool {
        if scene >= self.scenes {
            return false;
        }
        let moved = self.current != scene;
        self.current = scene;
        self.seen.insert(scene) || moved
    }

    /// A quiz scene was checked with this many points. Returns whether anything changed.
    pub fn quiz_checked(&mut self, scene: usize, earned: u32) -> bool {
        let Some(&possible) = self.quizzes.get(&scene) else {
            return false;
        };
        self.earned.insert(scene, earned.min(possible)) != Some(earned.min(possible))
    }

    pub fn seen(&self) -> usize {
        self.seen.len()
    }

    pub fn scenes(&self) -> usize {
        self.scenes
    }

    /// The quiz score over the whole course; `None` when it has no quiz points to earn.
    pub fn score(&self) -> Option<Score> {
        let max: u32 = self.quizzes.values().sum();
        (max > 0).then(|| Score {
            raw: self.earned.values().sum(),
            max,
        })
    }

    fn all_quizzes_answered(&self) -> bool {
        self.quizzes.keys().all(|k| self.earned.contains_key(k))
    }

    /// Passed or failed, once every quiz has been answered; `None` before, or with no passing
    /// score or nothing to score.
    pub fn passed(&self, rules: &ProgressRules) -> Option<bool> {
        let percent = rules.passing_percent?;
        let score = self.score()?;
        self.all_quizzes_answered()
            .then(|| u64::from(score.raw) * 100 >= u64::from(percent) * u64::from(score.max))
    }

    pub fn completed(&self, rules: &ProgressRules) -> bool {
        match rules.completion {
            CompletionRule::AllScenes => self.scenes > 0 && self.seen.len() == self.scenes,
            // With no quiz (or no passing score), "passed" falls back to seeing everything.
            CompletionRule::QuizPassed => match self.passed(rules) {
                Some(passed) => passed,
                None => {
                    self.scenes > 0 && self.seen.len() == self.scenes && self.all_quizzes_answered()
                }
            },
        }
    }

    /// `a1;3;0-3,5;2:3,6:1`: format, current scene, seen scenes as ranges, quiz points by scene.
    /// At most a few hundred characters even for the largest course.
    pub fn bookmark(&self) -> String {
        let mut ranges: Vec<String> = Vec::new();
        let mut seen = self.seen.iter().copied().peekable();
        while let Some(start) = seen.next() {
            let mut end = start;
            while seen.peek() == Some(&(end + 1)) {
                end = seen.next().unwrap_or(end);
            }
            ranges.push(if end == start {
                start.to_string()
            } else {
                format!("{start}-{end}")
            });
        }
        let quizzes: Vec<String> = self
            .earned
            .iter()
            .map(|(s, e)| format!("{s}:{e}"))
            .collect();
        format!(
            "{BOOKMARK_VERSION};{};{};{}",
            self.current,
            ranges.join(","),
            quizzes.join(",")
        )
    }

    /// Restores a bookmark of this course. Anything malformed or out of range leaves the progress
    /// as it was and returns `false`.
    pub fn restore(&mut self, bookmark: &str) -> bool {
        match self.parse(bookmark) {
            Some(restored) => {
                *self = restored;
                true
            }
            None => false,
        }
    }

    fn parse(&self, bookmark: &str) -> Option<Progress> {
        let mut parts = bookmark.split(';');
        if parts.next()? != BOOKMARK_VERSION {
            return None;
        }
        let current: usize = parts.next()?.parse().ok()?;
        let seen_text = parts.next()?;
        let quiz_text = parts.next()?;
        if parts.next().is_some() || current >= self.scenes {
            return None;
        }
        let mut restored = Progress {
            current,
            seen: BTreeSet::new(),
            earned: BTreeMap::new(),
            ..self.clone()
        };
        for range in seen_text.split(',').filter(|r| !r.is_empty()) {
            let (start, end) = match range.split_once('-') {
                Some((a, b)) => (a.parse::<usize>().ok()?, b.parse::<usize>().ok()?),
                None => {
                    let n = range.parse::<usize>().ok()?;
                    (n, n)
                }
            };
            if start > end || end >= self.scenes {
                return None;
            }
            restored.seen.extend(start..=end);
        }
        for quiz in quiz_text.split(',').filter(|q| !q.is_empty()) {
            let (scene, earned) = quiz.split_once(':')?;
            let scene: usize = scene.parse().ok()?;
            let earned: u32 = earned.parse().ok()?;
            let possible = *self.quizzes.get(&scene)?;
            restored.earned.insert(scene, earned.min(possible));
        }
        Some(restored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COURSE: &str = include_str!("../../course/tests/fixtures/photosynthesis.json");

    fn course() -> Course {
        Course::from_json(COURSE).unwrap()
    }

    fn quiz_scenes(p: &Progress) -> Vec<(usize, u32)> {
        p.quizzes.iter().map(|(k, v)| (*k, *v)).collect()
    }

    #[test]
    fn completion_by_scenes_needs_every_scene_seen() {
        let course = course();
        let mut p = Progress::new(&course);
        let rules = ProgressRules::default();
        for i in 0..course.scenes.len() - 1 {
            assert!(p.visit(i));
            assert!(!p.completed(&rules));
        }
        assert!(
            !p.visit(course.scenes.len() - 2),
            "revisiting the same scene changes nothing"
        );
        p.visit(course.scenes.len() - 1);
        assert!(p.completed(&rules));
        assert_eq!(p.seen(), course.scenes.len());
        assert!(!p.visit(99), "a scene the course does not have is ignored");
    }

    #[test]
    fn the_score_sums_every_quiz_and_passing_waits_for_all_answers() {
        let course = course();
        let mut p = Progress::new(&course);
        let quizzes = quiz_scenes(&p);
        assert!(!quizzes.is_empty());
        let max: u32 = quizzes.iter().map(|q| q.1).sum();
        assert_eq!(p.score(), Some(Score { raw: 0, max }));
        let rules = ProgressRules {
            completion: CompletionRule::QuizPassed,
            passing_percent: Some(50),
        };
        assert_eq!(p.passed(&rules), None, "nothing answered yet");
        let (scene, possible) = quizzes[0];
        assert!(
            p.quiz_checked(scene, possible + 5),
            "points are capped at the quiz's"
        );
        assert_eq!(p.score().unwrap().raw, possible);
        if quizzes.len() == 1 {
            assert_eq!(p.passed(&rules), Some(possible * 100 >= 50 * max));
        }
        for (scene, _) in &quizzes {
            p.quiz_checked(*scene, 0);
        }
        assert_eq!(p.passed(&rules), Some(false));
        assert!(!p.completed(&rules));
        for (scene, possible) in &quizzes {
            p.quiz_checked(*scene, *possible);
        }
        assert_eq!(p.passed(&rules), Some(true));
        assert!(p.completed(&rules));
        assert_eq!(p.score().unwrap().scaled(), 1.0);
        assert!(
            !p.quiz_checked(0, 1) || quizzes.iter().any(|q| q.0 == 0),
            "only quiz scenes score"
        );
    }

    #[test]
    fn a_bookmark_restores_scene_seen_scenes_and_quiz_points() {
        let course = course();
        let mut p = Progress::new(&course);
        for i in [0, 1, 2, 4] {
            p.visit(i);
        }
        let (scene, possible) = quiz_scenes(&p)[0];
        p.quiz_checked(scene, possible);
        p.visit(2);
        let mark = p.bookmark();
        assert!(mark.starts_with("a1;2;0-2,4;"), "{mark}");
        let mut fresh = Progress::new(&course);
        assert!(fresh.restore(&mark));
        assert_eq!(fresh, p);
    }

    #[test]
    fn a_bad_bookmark_leaves_progress_alone() {
        let course = course();
        let mut p = Progress::new(&course);
        p.visit(1);
        let before = p.clone();
        for bad in [
            "",
            "a1",
            "z9;0;;",
            "a1;99;;",
            "a1;0;5-2;",
            "a1;0;0-99;",
            "a1;0;;0:x",
            "a1;0;;1:1;x",
            "a1;-1;;",
            "a1;0;;99:1",
        ] {
            assert!(!p.restore(bad), "{bad:?} should be refused");
            assert_eq!(p, before);
        }
        assert!(p.restore("a1;0;;"), "nothing seen yet is a valid bookmark");
        assert_eq!(p.seen(), 0);
    }

    #[test]
    fn the_largest_course_fits_scorm_12_suspend_data() {
        let mut course = course();
        let quiz = course
            .scenes
            .iter()
            .find(|s| matches!(s.content, SceneContent::Quiz(_)))
            .unwrap()
            .clone();
        course.scenes = (0..500)
            .map(|i| {
                let mut s = quiz.clone();
                s.id = format!("q{i}");
                s
            })
            .collect();
        let mut p = Progress::new(&course);
        for i in (0..500).step_by(2) {
            p.visit(i);
            p.quiz_checked(i, 1);
        }
        assert!(
            p.bookmark().len() < 4096,
            "{} characters",
            p.bookmark().len()
        );
    }
}
