use std::num::NonZeroUsize;

use proptest::prelude::*;

use super::*;

fn graph(edges: &[(&str, &[&str])]) -> Result<TaskGraph<()>, GraphError> {
    TaskGraph::new(
        edges
            .iter()
            .map(|(id, deps)| Task::new(*id, deps, ()))
            .collect(),
    )
}

fn ids<T>(tasks: impl IntoIterator<Item = impl std::ops::Deref<Target = Task<T>>>) -> Vec<String> {
    tasks.into_iter().map(|t| t.id.clone()).collect()
}

fn set(items: &[&str]) -> HashSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn limit(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap_or(NonZeroUsize::MIN)
}

/// outline → {intro, photosynthesis} → quiz; glossary stands alone.
fn lesson() -> TaskGraph<()> {
    graph(&[
        ("quiz", &["intro", "photosynthesis"]),
        ("intro", &["outline"]),
        ("glossary", &[]),
        ("photosynthesis", &["outline"]),
        ("outline", &[]),
    ])
    .unwrap()
}

#[test]
fn order_puts_dependencies_first_and_otherwise_keeps_the_plan_order() {
    assert_eq!(
        ids(lesson().topological_order()),
        ["glossary", "outline", "intro", "photosynthesis", "quiz"]
    );
}

#[test]
fn a_cycle_is_reported_with_the_steps_in_it() {
    let err = graph(&[
        ("outline", &[]),
        ("a", &["outline", "c"]),
        ("b", &["a"]),
        ("c", &["b"]),
    ])
    .unwrap_err();
    let GraphError::Cycle(steps) = &err else {
        panic!("expected a cycle, got {err:?}");
    };
    assert_eq!(steps, &["a", "c", "b", "a"]);
    assert_eq!(
        err.to_string(),
        "These steps wait for each other in a circle, so none of them can start: \
         a waits for c waits for b waits for a."
    );
}

#[test]
fn a_task_waiting_for_itself_is_a_cycle() {
    assert_eq!(
        graph(&[("a", &["a"])]).unwrap_err(),
        GraphError::Cycle(vec!["a".into(), "a".into()])
    );
}

#[test]
fn an_unknown_dependency_is_named() {
    assert_eq!(
        graph(&[("quiz", &["scene-9"])]).unwrap_err(),
        GraphError::UnknownDependency {
            task: "quiz".into(),
            missing: "scene-9".into()
        }
    );
}

#[test]
fn duplicate_ids_are_refused() {
    assert_eq!(
        graph(&[("a", &[]), ("a", &[])]).unwrap_err(),
        GraphError::DuplicateTask("a".into())
    );
}

#[test]
fn tasks_without_unfinished_dependencies_are_ready_up_to_the_limit() {
    let g = lesson();
    let none = TaskStates::default();
    assert_eq!(ids(g.ready(&none, limit(5))), ["glossary", "outline"]);
    assert_eq!(ids(g.ready(&none, limit(1))), ["glossary"]);
    let outlined = TaskStates {
        finished: set(&["outline"]),
        ..TaskStates::default()
    };
    assert_eq!(
        ids(g.ready(&outlined, limit(5))),
        ["glossary", "intro", "photosynthesis"]
    );
}

#[test]
fn running_tasks_use_up_the_limit_and_are_not_offered_again() {
    let g = lesson();
    let p = TaskStates {
        finished: set(&["outline"]),
        running: set(&["intro"]),
        ..TaskStates::default()
    };
    assert_eq!(ids(g.ready(&p, limit(2))), ["glossary"]);
    assert!(g.ready(&p, limit(1)).is_empty());
}

#[test]
fn a_failed_task_blocks_only_what_depends_on_it() {
    let g = lesson();
    let p = TaskStates {
        finished: set(&["outline", "glossary", "intro"]),
        failed: set(&["photosynthesis"]),
        ..TaskStates::default()
    };
    assert!(g.ready(&p, limit(5)).is_empty());
    assert_eq!(ids(g.blocked(&p)), ["quiz"]);
    assert!(g.is_settled(&p));

    let p = TaskStates {
        failed: set(&["outline"]),
        ..TaskStates::default()
    };
    assert_eq!(
        ids(g.ready(&p, limit(5))),
        ["glossary"],
        "unrelated work goes on"
    );
    assert_eq!(
        ids(g.blocked(&p)),
        ["intro", "photosynthesis", "quiz"],
        "blocking is transitive"
    );
    assert!(!g.is_settled(&p));
}

#[test]
fn a_finished_job_is_settled_with_nothing_ready() {
    let g = lesson();
    let p = TaskStates {
        finished: set(&["outline", "glossary", "intro", "photosynthesis", "quiz"]),
        ..TaskStates::default()
    };
    assert!(g.ready(&p, limit(3)).is_empty());
    assert!(g.is_settled(&p));
    assert!(!g.is_settled(&TaskStates {
        running: set(&["outline"]),
        ..TaskStates::default()
    }));
}

#[test]
fn scene_contents_run_in_parallel_and_each_script_waits_only_for_its_content() {
    let scenes: Vec<String> = ["s1", "s2", "s3"].iter().map(|s| s.to_string()).collect();
    let g = plan_scenes(&scenes).unwrap();
    assert_eq!(g.len(), 2 * 3);
    assert_eq!(
        ids(g.ready(&TaskStates::default(), limit(10))),
        ["s1/content", "s2/content", "s3/content"]
    );
    assert_eq!(
        ids(g.ready(&TaskStates::default(), limit(2))),
        ["s1/content", "s2/content"],
        "in outline order under the limit"
    );
    let written = TaskStates {
        finished: set(&["s2/content", "s3/content"]),
        ..TaskStates::default()
    };
    assert_eq!(
        ids(g.ready(&written, limit(10))),
        ["s1/content", "s2/actions", "s3/actions"]
    );
    assert_eq!(
        g.task("s2/actions").map(|t| t.work.clone()),
        Some(GenerationStep::SceneActions {
            scene_id: "s2".into()
        })
    );
    let failed = TaskStates {
        finished: set(&["s1/content", "s3/content"]),
        failed: set(&["s2/content"]),
        ..TaskStates::default()
    };
    assert_eq!(
        ids(g.blocked(&failed)),
        ["s2/actions"],
        "only its own script waits"
    );
}

/// Random DAGs: task i may depend only on tasks before it, then shuffled by reversing.
fn arbitrary_dag() -> impl Strategy<Value = Vec<Vec<usize>>> {
    (1usize..20).prop_flat_map(|n| {
        (0..n)
            .map(|i| prop::collection::vec(0..i.max(1), 0..3.min(i + 1)))
            .collect::<Vec<_>>()
            .prop_map(|deps| {
                deps.into_iter()
                    .enumerate()
                    .map(|(i, d)| d.into_iter().filter(|&x| x < i).collect())
                    .collect()
            })
    })
}

proptest! {
    #[test]
    fn scheduling_a_random_plan_respects_dependencies_limit_and_failures(
        dag in arbitrary_dag(),
        fail_mask in any::<u32>(),
        cap in 1usize..4,
    ) {
        let tasks: Vec<Task<()>> = dag
            .iter()
            .enumerate()
            .rev()
            .map(|(i, deps)| Task {
                id: format!("t{i}"),
                depends_on: deps.iter().map(|d| format!("t{d}")).collect(),
                work: (),
            })
            .collect();
        let g = TaskGraph::new(tasks).unwrap();

        let order = ids(g.topological_order());
        for (i, deps) in dag.iter().enumerate() {
            let at = |id: &str| order.iter().position(|o| o == id).unwrap_or(usize::MAX);
            for d in deps {
                let (before, after) = (at(&format!("t{d}")), at(&format!("t{i}")));
                prop_assert!(before < after);
            }
        }

        // Start everything ready, then finish (or fail) the oldest running task, until settled.
        let mut p = TaskStates::default();
        let mut running: Vec<String> = Vec::new();
        for _ in 0..200 {
            for task in g.ready(&p, limit(cap)) {
                for d in &task.depends_on {
                    prop_assert!(p.finished.contains(d));
                }
                running.push(task.id.clone());
                p.running.insert(task.id.clone());
            }
            prop_assert!(p.running.len() <= cap);
            if running.is_empty() {
                break;
            }
            let done = running.remove(0);
            p.running.remove(&done);
            let n: u32 = done[1..].parse().unwrap_or(0);
            if fail_mask & (1 << (n % 32)) != 0 {
                p.failed.insert(done);
            } else {
                p.finished.insert(done);
            }
        }
        prop_assert!(g.is_settled(&p));
        let blocked = g.blocked(&p).len();
        prop_assert_eq!(p.finished.len() + p.failed.len() + blocked, g.len());
    }
}
