//! The director scenarios in `scenarios/*.json`, checked on the host: the code path each one takes
//! (a code decision or an LLM call), what its director prompt must and must not show, and for
//! answer-content scenarios that the teacher is told to lead with the answer. The same files
//! drive `cargo xtask eval-director` against a real model.

use aula_course::default_agents;
use aula_director::model::{
    AgentProfile, DiscussionContext, LearnerProfile, TurnSummary, Utterance,
};
use aula_director::prompt::{agent_prompt, director_prompt, AgentContext, DirectorContext};
use aula_director::scenario::{load_dir, Scenario};
use aula_director::{decide, Decision, DirectorStep};

fn scenarios() -> Vec<Scenario> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
    let loaded = load_dir(std::path::Path::new(dir)).expect("the scenarios load");
    assert!(
        loaded.len() >= 12,
        "at least 12 scenarios, found {}",
        loaded.len()
    );
    loaded
}

#[test]
fn every_kind_of_the_reference_is_covered() {
    let kinds: Vec<String> = scenarios().iter().map(|s| s.kind.clone()).collect();
    for kind in [
        "premature_end",
        "acknowledgement",
        "frustrated",
        "answer_content",
        "code_path",
    ] {
        assert!(
            kinds.iter().filter(|k| *k == kind).count() >= 2,
            "at least two {kind} scenarios"
        );
    }
}

#[test]
fn each_scenario_takes_its_code_path() {
    let mut wrong = Vec::new();
    for scenario in scenarios() {
        let cast = scenario.cast(&default_agents()).unwrap();
        let step = decide(&scenario.round_state(&cast));
        let expected = scenario.expect.code_path.as_str();
        match (expected, &step) {
            ("llm", DirectorStep::NeedsLlm) => {}
            (id, DirectorStep::Decided(Decision::Agent(chosen))) if id == chosen => {}
            _ => wrong.push(format!(
                "{}: expected code path {expected}, got {step:?}",
                scenario.id
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_code_decision_is_one_of_its_scenarios_good_answers() {
    for scenario in scenarios() {
        let cast = scenario.cast(&default_agents()).unwrap();
        if let DirectorStep::Decided(decision) = decide(&scenario.round_state(&cast)) {
            assert!(
                scenario.is_good(&decision) && !scenario.is_bad(&decision),
                "{}: code decides {decision:?}",
                scenario.id
            );
        }
    }
}

#[test]
fn each_director_prompt_shows_what_its_scenario_needs() {
    for scenario in scenarios() {
        let cast = scenario.cast(&default_agents()).unwrap();
        let history = scenario.history(&cast);
        let turns: Vec<TurnSummary> = scenario.turns(&cast);
        let discussion: Option<DiscussionContext> = scenario.discussion();
        let prompt = director_prompt(&DirectorContext {
            agents: &cast,
            turns: &turns,
            history: &history,
            discussion: discussion.as_ref(),
            ledger: &[],
            learner: &LearnerProfile::default(),
            whiteboard_open: false,
        });
        for needle in &scenario.expect.director_prompt_contains {
            assert!(
                prompt.contains(needle.as_str()),
                "{}: the director prompt lacks {needle:?}\n{prompt}",
                scenario.id
            );
        }
        for needle in &scenario.expect.director_prompt_lacks {
            assert!(
                !prompt.contains(needle.as_str()),
                "{}: the director prompt should not show {needle:?}\n{prompt}",
                scenario.id
            );
        }
        // Every agent is listed with its id, and the labels and answer format are always there.
        for agent in &cast {
            assert!(
                prompt.contains(&format!("id: \"{}\"", agent.id)),
                "{}",
                scenario.id
            );
        }
        assert!(prompt.contains("[Student (Human)]") && prompt.contains("next_agent"));
    }
}

fn teacher(cast: &[AgentProfile]) -> &AgentProfile {
    cast.iter()
        .find(|a| a.role == aula_course::AgentRole::Teacher)
        .expect("a teacher in the room")
}

#[test]
fn answer_content_scenarios_tell_the_teacher_to_lead_with_the_answer() {
    for scenario in scenarios()
        .into_iter()
        .filter(|s| s.kind == "answer_content")
    {
        let cast = scenario.cast(&default_agents()).unwrap();
        let history = scenario.history(&cast);
        let question = history.last().map(|u: &Utterance| u.text.clone()).unwrap();
        let open = aula_director::conversation::learner_question_open(&history);
        assert!(open, "{}: the question is open", scenario.id);
        let prompt = agent_prompt(&AgentContext {
            agent: teacher(&cast),
            course_title: "How a transformer reads a sentence",
            course_description: "",
            language: "en",
            scene: None,
            turns: &[],
            ledger: &[],
            learner: &LearnerProfile::default(),
            discussion: None,
            whiteboard_open: false,
            answering_learner: open,
        });
        assert!(
            prompt.contains("# Answering the learner"),
            "{}",
            scenario.id
        );
        assert!(
            prompt.contains("Lead with the answer itself"),
            "{}",
            scenario.id
        );
        assert!(
            !scenario.expect.answer_keywords.is_empty(),
            "{}: keywords for the eval",
            scenario.id
        );
        let messages =
            aula_director::conversation::agent_messages(&history, &teacher(&cast).id, 20);
        assert!(
            messages
                .last()
                .is_some_and(|m| m.content.contains(&question)),
            "{}: the teacher's call ends with the learner's question",
            scenario.id
        );
    }
}

#[test]
fn each_llm_scenario_has_a_scripted_reply_that_is_one_of_its_good_answers() {
    for scenario in scenarios() {
        let cast = scenario.cast(&default_agents()).unwrap();
        if scenario.expect.code_path != "llm" {
            continue;
        }
        let reply = scenario
            .mock_reply
            .as_deref()
            .unwrap_or_else(|| panic!("{}: an LLM scenario needs mock_reply", scenario.id));
        let ids: Vec<String> = cast.iter().map(|a| a.id.clone()).collect();
        let decision = aula_director::parse_director_reply(reply, &ids);
        assert!(
            scenario.is_good(&decision),
            "{}: the scripted reply {reply} gives {decision:?}, not a good answer",
            scenario.id
        );
    }
}
