//! Course generation: what the learner asked for (a topic, a language, who they are, and
//! optionally a PDF's text) becomes a course, written by an LLM stage by stage and checked by
//! code at every step. The modules, in the order a course is written:
//!
//! - [`outline`]: the request, the outline prompt, its strict reading, and what code decides
//!   (ids, counts, where the discussions go), with a preview while the reply streams;
//! - [`shape`]: the scene count and kinds from the stated length and level;
//! - [`stages`]: each scene's content and then its script, prompts and readers, checked by the
//!   course's own validation; [`repair`] is the one tolerant reading a reply gets;
//! - [`fit`] and [`document`]: every prompt fitted to the model's context, a PDF's passages
//!   ranked per scene;
//! - [`run`]: the runner over the providers' `Transport` (how a course is written, step by step);
//! - [`job`]: retries, the learner's retry, a token budget and the resumable `JobRecord`;
//! - [`assemble`]: the course file from the record; [`edit`]: the learner's changes to a
//!   written scene's words; [`wire`]: the AI worker's job and reports.
//!
//! This file holds the task graph: each step (today a scene's content or its script,
//! [`GenerationStep`]) is a task that waits for the tasks it depends on. This crate owns the graph,
//! its order (Kahn's algorithm, with cycles reported clearly) and the pure scheduling step that
//! says which tasks may start now under a concurrency limit. A failed task holds back only what
//! depends on it; unrelated work goes on.
//!
//! The graph and its scheduling are pure. [`run`] makes the LLM calls through the providers'
//! `Transport` and `Sleeper` ports, with a clock the caller gives. This crate must never depend
//! on a browser type, a real transport, a clock or an async runtime (only futures' plain
//! combinators), so host tests run it with a scripted transport.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::num::NonZeroUsize;

use thiserror::Error;

/// One step of work, named by a unique `id`, carrying whatever the caller needs in `work`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task<T> {
    pub id: String,
    pub depends_on: Vec<String>,
    pub work: T,
}

impl<T> Task<T> {
    pub fn new(id: impl Into<String>, depends_on: &[&str], work: T) -> Task<T> {
        Task {
            id: id.into(),
            depends_on: depends_on.iter().map(|d| d.to_string()).collect(),
            work,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GraphError {
    #[error("Two generation steps have the same id \"{0}\".")]
    DuplicateTask(String),
    #[error("The step \"{task}\" waits for \"{missing}\", which is not part of the plan.")]
    UnknownDependency { task: String, missing: String },
    #[error(
        "These steps wait for each other in a circle, so none of them can start: {}.",
        .0.join(" waits for ")
    )]
    Cycle(Vec<String>),
}

/// Where the work stands: what has finished, failed, or is running now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskStates {
    pub finished: HashSet<String>,
    pub failed: HashSet<String>,
    pub running: HashSet<String>,
}

impl TaskStates {
    fn is_touched(&self, id: &str) -> bool {
        self.finished.contains(id) || self.failed.contains(id) || self.running.contains(id)
    }
}

/// A checked, acyclic set of tasks.
#[derive(Debug, Clone)]
pub struct TaskGraph<T> {
    tasks: Vec<Task<T>>,
    /// `deps[i]`: indices of the tasks task `i` waits for.
    deps: Vec<Vec<usize>>,
    /// Task indices, dependencies first; among tasks free to go, plan order.
    order: Vec<usize>,
}

impl<T> TaskGraph<T> {
    /// Checks `tasks` (unique ids, known dependencies, no cycles) and orders them.
    pub fn new(tasks: Vec<Task<T>>) -> Result<TaskGraph<T>, GraphError> {
        let mut index: HashMap<&str, usize> = HashMap::with_capacity(tasks.len());
        for (i, task) in tasks.iter().enumerate() {
            if index.insert(task.id.as_str(), i).is_some() {
                return Err(GraphError::DuplicateTask(task.id.clone()));
            }
        }
        let mut deps = Vec::with_capacity(tasks.len());
        for task in &tasks {
            let mut mine = Vec::with_capacity(task.depends_on.len());
            for dep in &task.depends_on {
                match index.get(dep.as_str()) {
                    Some(&d) if !mine.contains(&d) => mine.push(d),
                    Some(_) => {}
                    None => {
                        return Err(GraphError::UnknownDependency {
                            task: task.id.clone(),
                            missing: dep.clone(),
                        })
                    }
                }
            }
            deps.push(mine);
        }

        // Kahn: repeatedly take a task whose dependencies are all placed; the smallest index
        // first, so the order follows the plan wherever the dependencies allow.
        let mut waiting: Vec<usize> = deps.iter().map(Vec::len).collect();
        let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); tasks.len()];
        for (i, mine) in deps.iter().enumerate() {
            for &d in mine {
                dependents[d].push(i);
            }
        }
        let mut free: BinaryHeap<Reverse<usize>> = (0..tasks.len())
            .filter(|&i| waiting[i] == 0)
            .map(Reverse)
            .collect();
        let mut order = Vec::with_capacity(tasks.len());
        while let Some(Reverse(i)) = free.pop() {
            order.push(i);
            for &next in &dependents[i] {
                waiting[next] -= 1;
                if waiting[next] == 0 {
                    free.push(Reverse(next));
                }
            }
        }
        if order.len() < tasks.len() {
            let cycle = find_cycle(&deps, &waiting)
                .into_iter()
                .map(|i| tasks[i].id.clone())
                .collect();
            return Err(GraphError::Cycle(cycle));
        }
        Ok(TaskGraph { tasks, deps, order })
    }

    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    pub fn task(&self, id: &str) -> Option<&Task<T>> {
        self.tasks.iter().find(|t| t.id == id)
    }

    /// Every task, each after everything it depends on.
    pub fn topological_order(&self) -> impl Iterator<Item = &Task<T>> {
        self.order.iter().map(|&i| &self.tasks[i])
    }

    /// The tasks that may start now: not started, every dependency finished, and no more than
    /// `limit` running at once (counting those already running). In topological order.
    pub fn ready(&self, progress: &TaskStates, limit: NonZeroUsize) -> Vec<&Task<T>> {
        let room = limit.get().saturating_sub(progress.running.len());
        self.topological_order()
            .filter(|task| !progress.is_touched(&task.id))
            .filter(|task| {
                task.depends_on
                    .iter()
                    .all(|d| progress.finished.contains(d))
            })
            .take(room)
            .collect()
    }

    /// Tasks that can never run because something they depend on, directly or not, failed.
    pub fn blocked(&self, progress: &TaskStates) -> Vec<&Task<T>> {
        let mut doomed = vec![false; self.tasks.len()];
        let mut out = Vec::new();
        for &i in &self.order {
            let task = &self.tasks[i];
            if progress.is_touched(&task.id) {
                doomed[i] = progress.failed.contains(&task.id);
                continue;
            }
            if self.deps[i].iter().any(|&d| doomed[d]) {
                doomed[i] = true;
                out.push(task);
            }
        }
        out
    }

    /// Nothing is running and nothing more can start: the job is over, fully or partly.
    pub fn is_settled(&self, progress: &TaskStates) -> bool {
        progress.running.is_empty() && self.ready(progress, NonZeroUsize::MIN).is_empty()
    }
}

/// A cycle among the tasks Kahn could not place: walk dependencies that are also unplaced until
/// one repeats. Returns it in "waits for" order, the first task repeated at the end.
fn find_cycle(deps: &[Vec<usize>], waiting: &[usize]) -> Vec<usize> {
    let stuck = |i: usize| waiting[i] > 0;
    let Some(start) = (0..deps.len()).find(|&i| stuck(i)) else {
        return Vec::new();
    };
    let mut path = vec![start];
    let mut seen_at: HashMap<usize, usize> = HashMap::from([(start, 0)]);
    let mut at = start;
    loop {
        // A stuck task always waits for at least one other stuck task.
        let Some(&next) = deps[at].iter().find(|&&d| stuck(d)) else {
            return path;
        };
        if let Some(&pos) = seen_at.get(&next) {
            let mut cycle = path.split_off(pos);
            cycle.push(next);
            return cycle;
        }
        seen_at.insert(next, path.len());
        path.push(next);
        at = next;
    }
}

/// What a course-generation task does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GenerationStep {
    /// Write one scene's slide, quiz, page or project.
    SceneContent { scene_id: String },
    /// Write one scene's script of actions.
    SceneActions { scene_id: String },
}

impl GenerationStep {
    pub fn scene_id(&self) -> &str {
        match self {
            GenerationStep::SceneContent { scene_id }
            | GenerationStep::SceneActions { scene_id } => scene_id,
        }
    }
}

/// The task id of a scene's content.
pub fn content_task(scene_id: &str) -> String {
    format!("{scene_id}/content")
}

/// The task id of a scene's script.
pub fn actions_task(scene_id: &str) -> String {
    format!("{scene_id}/actions")
}

/// The plan after the outline: every scene's content can be written at once, and each script
/// waits only for its own scene's content. Scripts do not wait for each other: the outline gives
/// every script the whole course's order, so a scene knows what came before it without its text,
/// the critical path is two calls long, and a failed script holds back no other scene.
pub fn plan_scenes(scene_ids: &[String]) -> Result<TaskGraph<GenerationStep>, GraphError> {
    let mut tasks = Vec::with_capacity(scene_ids.len() * 2);
    for scene in scene_ids {
        let content = content_task(scene);
        tasks.push(Task::new(
            content.clone(),
            &[],
            GenerationStep::SceneContent {
                scene_id: scene.clone(),
            },
        ));
        tasks.push(Task::new(
            actions_task(scene),
            &[&content],
            GenerationStep::SceneActions {
                scene_id: scene.clone(),
            },
        ));
    }
    TaskGraph::new(tasks)
}

pub mod assemble;
pub mod document;
pub mod edit;
pub mod fit;
pub mod job;
pub mod layout;
pub mod outline;
pub mod progress;
pub mod repair;
pub mod run;
pub mod shape;
pub mod stages;
pub mod wire;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod run_tests;
