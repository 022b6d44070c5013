//! A generation job over a [`TaskGraph`]: what has started, finished (with its output) and
//! failed, retries with capped exponential backoff, a retry the learner asks for, a token
//! budget, and the [`JobRecord`] saved after every finished task so a reload resumes where it
//! stopped without doing a finished task twice. Pure: the caller runs tasks, keeps the clock and
//! stores the record.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;

use serde::{Deserialize, Serialize};

use crate::{TaskGraph, TaskStates};

/// How often, and how patiently, a failing task is tried again by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in all, the first included.
    pub attempts: u32,
    /// Wait before the second try; each later wait doubles, up to `max_wait_ms`.
    pub first_wait_ms: u64,
    pub max_wait_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            attempts: 3,
            first_wait_ms: 1_000,
            max_wait_ms: 8_000,
        }
    }
}

impl RetryPolicy {
    /// The wait after failed try number `attempt` (from 1), or `None` when tries are used up.
    pub fn wait_after(&self, attempt: u32) -> Option<u64> {
        if attempt >= self.attempts {
            return None;
        }
        let doublings = attempt.saturating_sub(1).min(32);
        Some(
            self.first_wait_ms
                .saturating_mul(1u64 << doublings)
                .min(self.max_wait_ms),
        )
    }
}

/// What is kept of a job between visits: every finished task's output, every task that gave up
/// (with why), the tokens spent, and what each task cost. Tasks that were running are not in
/// it: they run again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRecord {
    pub finished: BTreeMap<String, String>,
    pub failed: BTreeMap<String, String>,
    pub tokens_spent: u64,
    /// Per task (and `outline`), summed over every try and visit.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stats: BTreeMap<String, TaskStats>,
}

/// What a task cost and how it went, over every try: shown per scene while the course is
/// written, and reported by the real-model suite.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskStats {
    /// Wall time of its calls, in milliseconds.
    #[serde(default)]
    pub ms: u64,
    #[serde(default)]
    pub tokens: u64,
    /// Calls to the model: a corrected retry and every provider retry count.
    #[serde(default)]
    pub calls: u32,
    /// Replies that could be read only by the tolerant reading (a fence, prose, a cut end).
    #[serde(default)]
    pub repairs: u32,
    /// Replies sent back to the model with why they could not be used as they were.
    #[serde(default)]
    pub corrections: u32,
    /// Replies that ran into their length limit.
    #[serde(default)]
    pub cut_at_limit: u32,
    /// Every try that failed, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    /// Part of the learner's document did not fit the model's context.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub document_cut: bool,
}

impl TaskStats {
    pub fn add(&mut self, other: &TaskStats) {
        self.ms += other.ms;
        self.tokens += other.tokens;
        self.calls += other.calls;
        self.repairs += other.repairs;
        self.corrections += other.corrections;
        self.cut_at_limit += other.cut_at_limit;
        self.failures.extend(other.failures.iter().cloned());
        self.document_cut |= other.document_cut;
    }
}

impl JobRecord {
    /// Adds one try's cost to a task's stats.
    pub fn count(&mut self, task: &str, stats: &TaskStats) {
        self.stats.entry(task.to_owned()).or_default().add(stats);
    }
}

/// What the job says after a task failed.
#[derive(Debug, Clone, PartialEq)]
pub enum AfterFailure {
    /// It goes again by itself at `at_ms`.
    RetryAt { at_ms: f64 },
    /// It gave up; what depends on it is blocked until the learner retries it.
    GaveUp,
}

/// One generation job: the graph and where it stands.
#[derive(Debug, Clone)]
pub struct Job<T> {
    graph: TaskGraph<T>,
    policy: RetryPolicy,
    limit: NonZeroUsize,
    token_budget: Option<u64>,
    progress: TaskStates,
    record: JobRecord,
    /// Failed tries so far, per task (reset by a manual retry).
    attempts: BTreeMap<String, u32>,
    /// Tasks waiting out a backoff: when they may start again.
    waiting_until: BTreeMap<String, f64>,
}

impl<T> Job<T> {
    /// A job over `graph`, carrying on from `record` (empty for a new job). Outputs recorded for
    /// tasks the graph does not have are dropped.
    pub fn new(graph: TaskGraph<T>, record: JobRecord, limit: NonZeroUsize) -> Job<T> {
        let mut record = record;
        record.finished.retain(|id, _| graph.task(id).is_some());
        record.failed.retain(|id, _| graph.task(id).is_some());
        let progress = TaskStates {
            finished: record.finished.keys().cloned().collect(),
            failed: record.failed.keys().cloned().collect(),
            running: Default::default(),
        };
        Job {
            graph,
            policy: RetryPolicy::default(),
            limit,
            token_budget: None,
            progress,
            record,
            attempts: BTreeMap::new(),
            waiting_until: BTreeMap::new(),
        }
    }

    pub fn with_policy(mut self, policy: RetryPolicy) -> Job<T> {
        self.policy = policy;
        self
    }

    /// No new task starts once this many tokens are spent.
    pub fn with_token_budget(mut self, tokens: u64) -> Job<T> {
        self.token_budget = Some(tokens);
        self
    }

    pub fn graph(&self) -> &TaskGraph<T> {
        &self.graph
    }

    pub fn progress(&self) -> &TaskStates {
        &self.progress
    }

    /// What to save now.
    pub fn record(&self) -> &JobRecord {
        &self.record
    }

    /// Adds a try's cost to the task's stats in the record.
    pub fn count(&mut self, task: &str, stats: &TaskStats) {
        self.record.count(task, stats);
    }

    /// A finished task's output.
    pub fn output(&self, id: &str) -> Option<&str> {
        self.record.finished.get(id).map(String::as_str)
    }

    pub fn over_budget(&self) -> bool {
        self.token_budget
            .is_some_and(|budget| self.record.tokens_spent >= budget)
    }

    /// The tasks to start at `now_ms` (marked running): ready in the graph, not waiting out a
    /// backoff, within the concurrency limit, and nothing at all once over budget.
    pub fn start(&mut self, now_ms: f64) -> Vec<String> {
        if self.over_budget() {
            return Vec::new();
        }
        // A task backing off is counted as busy so it is not picked, but not against the limit.
        let mut view = self.progress.clone();
        let backing_off = self
            .waiting_until
            .iter()
            .filter(|(_, until)| **until > now_ms)
            .map(|(id, _)| id.clone());
        let before = view.running.len();
        view.running.extend(backing_off);
        let limit = self.limit.saturating_add(view.running.len() - before);
        let ids: Vec<String> = self
            .graph
            .ready(&view, limit)
            .into_iter()
            .map(|task| task.id.clone())
            .collect();
        for id in &ids {
            self.waiting_until.remove(id);
            self.progress.running.insert(id.clone());
        }
        ids
    }

    /// Task `id` finished with `output`, having spent `tokens`.
    pub fn finished(&mut self, id: &str, output: String, tokens: u64) {
        self.record.tokens_spent += tokens;
        if !self.progress.running.remove(id) {
            return;
        }
        self.attempts.remove(id);
        self.progress.finished.insert(id.to_owned());
        self.record.finished.insert(id.to_owned(), output);
    }

    /// Task `id` failed at `now_ms` with `error`, having spent `tokens`.
    pub fn failed(&mut self, id: &str, error: String, tokens: u64, now_ms: f64) -> AfterFailure {
        self.record.tokens_spent += tokens;
        self.progress.running.remove(id);
        let attempt = self.attempts.entry(id.to_owned()).or_insert(0);
        *attempt += 1;
        match self.policy.wait_after(*attempt) {
            Some(wait) => {
                let at_ms = now_ms + wait as f64;
                self.waiting_until.insert(id.to_owned(), at_ms);
                AfterFailure::RetryAt { at_ms }
            }
            None => {
                self.progress.failed.insert(id.to_owned());
                self.record.failed.insert(id.to_owned(), error);
                AfterFailure::GaveUp
            }
        }
    }

    /// The learner's retry of a task that gave up (or of a finished one, to write it again):
    /// it and everything after it that had finished go back to not started.
    pub fn retry(&mut self, id: &str) {
        if self.graph.task(id).is_none() || self.progress.running.contains(id) {
            return;
        }
        let mut again = vec![id.to_owned()];
        for task in self.graph.topological_order() {
            if task.depends_on.iter().any(|d| again.contains(d)) && !again.contains(&task.id) {
                again.push(task.id.clone());
            }
        }
        for task in &again {
            if self.progress.running.contains(task) {
                continue;
            }
            self.progress.finished.remove(task);
            self.progress.failed.remove(task);
            self.record.finished.remove(task);
            self.record.failed.remove(task);
            self.attempts.remove(task);
            self.waiting_until.remove(task);
        }
    }

    /// When the next backed-off task may start, if any is waiting.
    pub fn next_wake_ms(&self) -> Option<f64> {
        self.waiting_until.values().copied().reduce(f64::min)
    }

    /// Nothing runs, nothing waits, and nothing more can start.
    pub fn is_settled(&self) -> bool {
        self.progress.running.is_empty()
            && self.waiting_until.is_empty()
            && (self.over_budget() || self.graph.is_settled(&self.progress))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{plan_scenes, Task};

    #[test]
    fn a_record_keeps_its_stats_through_json() {
        let mut record = JobRecord::default();
        record.finished.insert("content:s1".into(), "{}".into());
        let stat = TaskStats {
            ms: 61_000,
            tokens: 900,
            calls: 2,
            repairs: 1,
            corrections: 1,
            cut_at_limit: 1,
            failures: vec!["the stream stopped".into()],
            document_cut: true,
        };
        record.stats.insert("content:s1".into(), stat);
        record.stats.insert("outline".into(), TaskStats::default());
        let text = serde_json::to_string(&record).unwrap();
        assert_eq!(serde_json::from_str::<JobRecord>(&text).unwrap(), record);

        // Older records have no stats at all.
        let old = r#"{"finished":{},"failed":{},"tokens_spent":0}"#;
        assert!(serde_json::from_str::<JobRecord>(old)
            .unwrap()
            .stats
            .is_empty());
    }

    fn scenes(n: usize) -> TaskGraph<crate::GenerationStep> {
        let ids: Vec<String> = (1..=n).map(|i| format!("s{i}")).collect();
        plan_scenes(&ids).unwrap()
    }

    fn limit(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).unwrap()
    }

    #[test]
    fn backoff_doubles_up_to_its_cap_and_stops_after_the_last_try() {
        let policy = RetryPolicy {
            attempts: 5,
            first_wait_ms: 1_000,
            max_wait_ms: 3_000,
        };
        let waits: Vec<_> = (1..=5).map(|n| policy.wait_after(n)).collect();
        assert_eq!(
            waits,
            [Some(1_000), Some(2_000), Some(3_000), Some(3_000), None]
        );
        let patient = RetryPolicy {
            attempts: 100,
            ..policy
        };
        assert_eq!(patient.wait_after(80), Some(3_000), "no overflow");
    }

    #[test]
    fn at_most_the_limit_runs_and_finished_work_frees_room() {
        let mut job = Job::new(scenes(4), JobRecord::default(), limit(3));
        let first = job.start(0.0);
        assert_eq!(first, ["s1/content", "s2/content", "s3/content"]);
        assert!(job.start(0.0).is_empty(), "full");
        job.finished("s2/content", "{}".into(), 10);
        assert_eq!(
            job.start(0.0),
            ["s2/actions"],
            "a ready script goes before more content"
        );
        job.finished("s1/content", "{}".into(), 10);
        assert_eq!(job.start(0.0), ["s1/actions"]);
        assert_eq!(job.record().tokens_spent, 20);
    }

    #[test]
    fn a_failing_task_waits_out_its_backoff_then_gives_up_and_blocks_only_what_needs_it() {
        let graph = TaskGraph::new(vec![
            Task::new("a", &[], ()),
            Task::new("b", &["a"], ()),
            Task::new("c", &[], ()),
        ])
        .unwrap();
        let policy = RetryPolicy {
            attempts: 2,
            first_wait_ms: 500,
            max_wait_ms: 500,
        };
        let mut job = Job::new(graph, JobRecord::default(), limit(2)).with_policy(policy);
        assert_eq!(job.start(0.0), ["a", "c"]);
        assert_eq!(
            job.failed("a", "bad JSON".into(), 5, 100.0),
            AfterFailure::RetryAt { at_ms: 600.0 }
        );
        assert!(job.start(300.0).is_empty(), "a backs off, c still runs");
        assert_eq!(job.next_wake_ms(), Some(600.0));
        assert_eq!(job.start(600.0), ["a"]);
        assert_eq!(
            job.failed("a", "bad JSON again".into(), 5, 700.0),
            AfterFailure::GaveUp
        );
        job.finished("c", "ok".into(), 1);
        assert!(
            job.start(10_000.0).is_empty(),
            "b waits for a, which gave up"
        );
        assert!(job.is_settled());
        assert_eq!(job.record().failed["a"], "bad JSON again");
        assert_eq!(job.output("c"), Some("ok"));
        let blocked: Vec<_> = job
            .graph()
            .blocked(job.progress())
            .iter()
            .map(|t| t.id.clone())
            .collect();
        assert_eq!(blocked, ["b"]);

        // The learner's retry starts a over, and b can follow.
        job.retry("a");
        assert_eq!(job.start(10_000.0), ["a"]);
        job.finished("a", "fixed".into(), 5);
        assert_eq!(job.start(10_000.0), ["b"]);
    }

    #[test]
    fn a_reload_resumes_from_the_record_without_redoing_finished_tasks() {
        let mut job = Job::new(scenes(2), JobRecord::default(), limit(3));
        job.start(0.0);
        job.finished("s2/content", "slides 2".into(), 7);
        job.finished("s1/content", "slides 1".into(), 9);
        // s2/content was running when the page closed.
        let saved = serde_json::to_string(job.record()).unwrap();

        let record: JobRecord = serde_json::from_str(&saved).unwrap();
        let mut again = Job::new(scenes(2), record, limit(3));
        let started = again.start(0.0);
        assert_eq!(started, ["s1/actions", "s2/actions"]);
        assert!(!started.iter().any(|id| id.ends_with("/content")));
        assert_eq!(again.output("s1/content"), Some("slides 1"));
        assert_eq!(again.record().tokens_spent, 16);
    }

    #[test]
    fn a_record_from_another_plan_keeps_only_what_this_plan_has() {
        let record = JobRecord {
            finished: BTreeMap::from([
                ("s1/content".to_owned(), "x".to_owned()),
                ("s9/content".to_owned(), "gone".to_owned()),
            ]),
            failed: BTreeMap::from([("s8/actions".to_owned(), "old".to_owned())]),
            tokens_spent: 3,
            ..JobRecord::default()
        };
        let job = Job::new(scenes(1), record, limit(1));
        assert_eq!(job.record().finished.len(), 1);
        assert!(job.record().failed.is_empty());
    }

    #[test]
    fn nothing_new_starts_once_the_token_budget_is_spent() {
        let mut job = Job::new(scenes(3), JobRecord::default(), limit(2)).with_token_budget(100);
        assert_eq!(job.start(0.0).len(), 2);
        job.finished("s1/content", "slides".into(), 60);
        assert_eq!(job.start(0.0).len(), 1);
        job.finished("s2/content", "slides".into(), 50);
        assert!(job.over_budget());
        assert!(job.start(0.0).is_empty());
        job.finished("s1/actions", "script".into(), 5);
        assert!(job.is_settled(), "over budget with nothing running");
    }

    #[test]
    fn retrying_a_finished_scene_redoes_it_and_what_follows_from_it_only() {
        let mut job = Job::new(scenes(2), JobRecord::default(), limit(8));
        while !job.is_settled() {
            for id in job.start(0.0) {
                job.finished(&id, format!("out {id}"), 1);
            }
        }
        assert_eq!(job.record().finished.len(), 4);
        job.retry("s1/content");
        let again: Vec<_> = job.start(0.0);
        assert_eq!(again, ["s1/content"]);
        let kept: Vec<_> = job.record().finished.keys().cloned().collect();
        assert_eq!(
            kept,
            ["s2/actions", "s2/content"],
            "s1's content and script go again, scene 2 is kept"
        );
    }
}
