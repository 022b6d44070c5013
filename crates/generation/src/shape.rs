//! The course's shape is code's decision where code can make it: how many scenes the request
//! asks for (a stated count or length, else words like "short" or "in depth", else the
//! learner's level), and the mix of kinds. Slides carry the teaching; quizzes check it (the last
//! scene is one); an interactive page or a project only where the course is long enough for one
//! to serve, or where the learner asks for it. The outline prompt states the shape, and
//! [`crate::outline::normalize`] holds any outline to it.
//!
//! An outline with fewer scenes than [`Shape::min`] or more than [`Shape::max`] is asked for
//! again once; a plan without a quiz gets one at the end, made by code, when the shape has
//! quizzes. How long each scene's script must be is not the shape's business: it follows what
//! the slide shows (`stages::min_speech_words`).

use crate::outline::CourseRequest;

/// The most scenes a course may have.
pub const MAX_SCENES: usize = 20;
/// About how long one scene takes to play, in minutes.
const MINUTES_PER_SCENE: f64 = 2.0;

/// How a course should be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Scenes to ask for.
    pub scenes: usize,
    /// Fewer or more than these and the outline is asked for again once.
    pub min: usize,
    pub max: usize,
    /// Quizzes among the scenes (the last scene is one when this is not 0).
    pub quizzes: usize,
    /// At most this many interactive pages and projects.
    pub interactive: usize,
    pub projects: usize,
}

/// Lower-cased words, with CJK text kept as it is (its words are not space-separated).
fn folded(request: &CourseRequest) -> String {
    format!("{} \n {}", request.topic, request.learner).to_lowercase()
}

/// Whether `text` has one of `words`: CJK words anywhere, others as whole words (a plural
/// `s` allowed), so "kid" is not found in "kidney".
fn has_any(text: &str, words: &[&str]) -> bool {
    words.iter().any(|w| {
        if !w.is_ascii() {
            return text.contains(w);
        }
        text.match_indices(w).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + w.len()..].trim_start_matches('s').chars().next();
            before.is_none_or(|c| !c.is_alphanumeric()) && after.is_none_or(|c| !c.is_alphabetic())
        })
    })
}

const NUMBER_WORDS: &[(&str, usize)] = &[
    ("one", 1),
    ("two", 2),
    ("three", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("eleven", 11),
    ("twelve", 12),
    ("fifteen", 15),
    ("twenty", 20),
    ("thirty", 30),
    ("forty-five", 45),
    ("一", 1),
    ("两", 2),
    ("二", 2),
    ("三", 3),
    ("四", 4),
    ("五", 5),
    ("六", 6),
    ("七", 7),
    ("八", 8),
    ("九", 9),
    ("十", 10),
];

/// Every number in the text (digits, or a number word) with the text right after it.
fn numbers(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c.is_ascii_digit() {
            let mut end = at + 1;
            while let Some(&(i, d)) = chars.peek() {
                if !d.is_ascii_digit() {
                    break;
                }
                end = i + 1;
                chars.next();
            }
            if let Ok(n) = text[at..end].parse::<usize>() {
                out.push((n, &text[end..]));
            }
            continue;
        }
        // A number word at a word start (CJK numerals stand anywhere).
        let starts_word = text[..at]
            .chars()
            .next_back()
            .is_none_or(|p| !p.is_alphanumeric() || !p.is_ascii());
        if !starts_word {
            continue;
        }
        if let Some((word, n)) = NUMBER_WORDS
            .iter()
            .filter(|(w, _)| text[at..].starts_with(w))
            .max_by_key(|(w, _)| w.len())
        {
            let end = at + word.len();
            let whole = word.chars().all(|c| !c.is_ascii())
                || text[end..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_ascii_alphanumeric());
            if whole {
                out.push((*n, &text[end..]));
            }
        }
    }
    out
}

/// The unit right after a number: its first word, skipping a dash or spaces.
fn unit_is(after: &str, units: &[&str]) -> bool {
    let rest = after.trim_start_matches([' ', '-', '\u{a0}', '个', '张', '页']);
    units.iter().any(|u| rest.starts_with(u))
}

/// Scenes the request states outright ("4 scenes", "six slides", "5个场景").
fn stated_scenes(text: &str) -> Option<usize> {
    numbers(text)
        .into_iter()
        .find(|(_, after)| unit_is(after, &["scene", "slide", "场景", "幻灯片", "部分"]))
        .map(|(n, _)| n)
}

/// Minutes the request states ("a 10-minute lesson", "half an hour", "1 hour", "20分钟").
fn stated_minutes(text: &str) -> Option<usize> {
    if has_any(text, &["half an hour", "half-hour", "半小时", "半个小时"]) {
        return Some(30);
    }
    numbers(text).into_iter().find_map(|(n, after)| {
        if unit_is(after, &["min", "分钟", "分"]) {
            Some(n)
        } else if unit_is(after, &["hour", "hr", "h ", "小时", "钟头"]) {
            Some(n * 60)
        } else {
            None
        }
    })
}

/// The shape of the course `request` asks for.
pub fn shape_for(request: &CourseRequest) -> Shape {
    let text = folded(request);
    let (scenes, exact) = if let Some(n) = stated_scenes(&text).filter(|&n| n > 0) {
        (n, true)
    } else if let Some(minutes) = stated_minutes(&text).filter(|&m| m > 0) {
        (
            ((minutes as f64 / MINUTES_PER_SCENE).round() as usize).max(2),
            false,
        )
    } else if has_any(
        &text,
        &[
            "short",
            "brief",
            "quick",
            "简短",
            "简单介绍",
            "快速",
            "简要",
        ],
    ) {
        (4, false)
    } else if has_any(
        &text,
        &[
            "in depth",
            "in-depth",
            "detailed",
            "comprehensive",
            "thorough",
            "深入",
            "详细",
            "全面",
            "系统",
        ],
    ) {
        (10, false)
    } else if has_any(
        &text,
        &[
            "child",
            "kid",
            "primary",
            "elementary",
            "beginner",
            "小学",
            "儿童",
            "入门",
            "初学",
            "零基础",
        ],
    ) {
        (5, false)
    } else if has_any(
        &text,
        &[
            "university",
            "college",
            "graduate",
            "advanced",
            "undergraduate",
            "大学",
            "研究生",
            "本科",
            "专业",
        ],
    ) {
        (8, false)
    } else if has_any(
        &text,
        &[
            "high school",
            "high-school",
            "secondary",
            "middle school",
            "高中",
            "初中",
            "中学",
        ],
    ) {
        (7, false)
    } else {
        (6, false)
    };
    let scenes = scenes.clamp(1, MAX_SCENES);
    let (min, max) = if exact {
        (scenes, scenes)
    } else {
        (
            scenes.saturating_sub(1).max(1),
            (scenes + 2).min(MAX_SCENES),
        )
    };
    let asks_quiz = has_any(&text, &["quiz", "test", "exercise", "测验", "测试", "练习"]);
    let asks_hands_on = has_any(
        &text,
        &[
            "interactive",
            "simulation",
            "hands-on",
            "hands on",
            "experiment",
            "互动",
            "交互",
            "模拟",
            "实验",
        ],
    );
    let asks_project = has_any(&text, &["project", "项目"]);
    let quizzes = match scenes {
        0 | 1 => 0,
        2 => usize::from(asks_quiz),
        n => 1 + (n - 1) / 5,
    };
    let interactive = match scenes {
        n if n >= 10 => 2,
        n if n >= 5 => 1,
        n if n >= 3 && asks_hands_on => 1,
        _ => 0,
    };
    let projects = usize::from((asks_project && scenes >= 4) || scenes >= 12);
    Shape {
        scenes,
        min,
        max,
        quizzes,
        interactive,
        projects,
    }
}

impl Shape {
    /// The shape as the outline prompt states it.
    pub fn describe(&self) -> String {
        let mut out = if self.min == self.max {
            format!("The course has exactly {} scenes.", self.scenes)
        } else {
            format!(
                "The course has {} scenes (between {} and {}).",
                self.scenes, self.min, self.max
            )
        };
        out.push_str(" The first scene is a slide, and slides carry the teaching.");
        match self.quizzes {
            0 => out.push_str(" No quiz."),
            1 => out.push_str(" One quiz: the last scene."),
            n => out.push_str(&format!(
                " {n} quizzes: one after every few slides, and the last scene."
            )),
        }
        match self.interactive {
            0 => out.push_str(" No interactive scene."),
            n => out.push_str(&format!(
                " At most {n} interactive scene{} (a hands-on page: a simulation, a diagram to \
                 explore, a small game), only where doing teaches better than a slide.",
                if n == 1 { "" } else { "s" }
            )),
        }
        match self.projects {
            0 => out.push_str(" No pbl scene."),
            _ => out.push_str(" At most one pbl scene (a small project), near the end."),
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aula_course::default_agents;

    fn asking(topic: &str, learner: &str) -> Shape {
        shape_for(&CourseRequest {
            topic: topic.into(),
            language: "en".into(),
            document: None,
            learner: learner.into(),
            agents: default_agents(),
        })
    }

    #[test]
    fn a_stated_scene_count_is_exact() {
        let shape = asking("Photosynthesis in 4 scenes", "");
        assert_eq!((shape.scenes, shape.min, shape.max), (4, 4, 4));
        assert_eq!(asking("A three-scene course on tides", "").scenes, 3);
        assert_eq!(asking("Five slides on vaccines", "").scenes, 5);
        assert_eq!(asking("光合作用，4个场景", "").scenes, 4);
        assert_eq!(asking("牛顿定律 三个场景", "").scenes, 3);
        assert_eq!(asking("Give me 40 scenes on Rome", "").scenes, MAX_SCENES);
    }

    #[test]
    fn a_stated_length_becomes_about_two_minutes_a_scene() {
        assert_eq!(asking("A 10-minute lesson on tides", "").scenes, 5);
        assert_eq!(asking("a 6 minute intro to DNS", "").scenes, 3);
        assert_eq!(asking("Half an hour on the Roman republic", "").scenes, 15);
        assert_eq!(
            asking("A one hour lesson on calculus", "").scenes,
            MAX_SCENES
        );
        assert_eq!(asking("20分钟的光合作用课", "").scenes, 10);
        let shape = asking("A 10-minute lesson", "");
        assert!(shape.min < shape.scenes && shape.scenes < shape.max);
    }

    #[test]
    fn without_a_length_words_and_level_decide() {
        assert_eq!(asking("A short intro to tides", "").scenes, 4);
        assert_eq!(asking("An in-depth course on entropy", "").scenes, 10);
        assert_eq!(asking("Fractions", "a primary school kid").scenes, 5);
        assert_eq!(
            asking("Cell biology for a high-school lesson", "").scenes,
            7
        );
        assert_eq!(
            asking("Group theory", "an advanced undergraduate").scenes,
            8
        );
        assert_eq!(asking("Photosynthesis", "").scenes, 6);
        // A number that is not a length is not read as one.
        assert_eq!(asking("World War 2 in Europe", "").scenes, 6);
        assert_eq!(asking("How the kidney filters blood", "").scenes, 6);
        assert_eq!(
            asking("The latest contest results in 2 scenes", "").quizzes,
            0
        );
    }

    #[test]
    fn slides_teach_and_other_kinds_come_only_where_they_serve() {
        let short = asking("Tides in 3 scenes", "");
        assert_eq!(
            (short.quizzes, short.interactive, short.projects),
            (1, 0, 0)
        );
        let two = asking("Tides in 2 scenes", "");
        assert_eq!(two.quizzes, 0);
        assert_eq!(asking("Tides in 2 scenes with a quiz", "").quizzes, 1);
        let hands_on = asking("An interactive 3-scene course on pendulums", "");
        assert_eq!(hands_on.interactive, 1);
        let usual = asking("Photosynthesis", "");
        assert_eq!(
            (usual.quizzes, usual.interactive, usual.projects),
            (2, 1, 0)
        );
        assert_eq!(asking("A project-based course on bridges", "").projects, 1);
        assert_eq!(asking("A project in 3 scenes", "").projects, 0);
        let long = asking("An in-depth course on entropy", "");
        assert_eq!((long.quizzes, long.interactive), (2, 2));
    }

    #[test]
    fn the_prompt_states_the_shape() {
        let text = asking("Tides in 4 scenes", "").describe();
        assert!(text.contains("exactly 4 scenes"), "{text}");
        assert!(text.contains("last scene"), "{text}");
        assert!(text.contains("No interactive"), "{text}");
        let text = asking("Photosynthesis", "").describe();
        assert!(text.contains("between 5 and 8"), "{text}");
    }
}
