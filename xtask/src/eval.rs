//! `cargo xtask eval-director --provider <preset> --model <model>`: plays the director scenarios
//! (`crates/director/scenarios/*.json`) against a real model with the user's key and prints how
//! often the director chose well: END rate where ending is premature, teacher rate where the
//! learner's question is open, and for answer-content scenarios how often the teacher's reply
//! leads with the answer. The key is read from an environment variable, never from the command
//! line. It cannot run in CI (no keys there); `self_test` runs the same code against mock-llm.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use aula_course::{default_agents, AgentProfile, AgentRole};
use aula_director::conversation::{agent_messages, learner_question_open};
use aula_director::model::{LearnerProfile, Utterance};
use aula_director::prompt::{
    agent_prompt, director_prompt, AgentContext, DirectorContext, DIRECTOR_ASK,
};
use aula_director::reply::{ReplyEvent, ReplyParser};
use aula_director::scenario::{load_dir, Scenario};
use aula_director::{decide, parse_director_reply, Decision, DirectorStep};
use aula_providers::{
    preset, stream_chat_with_retry, ChatMessage, ChatRequest, Endpoint, KeyNeed, RetryPolicy,
    StreamEvent,
};

use crate::curl::{block_on, CurlTransport, ThreadSleeper};
use crate::project_root;

pub const USAGE: &str = "usage: cargo xtask eval-director --provider <preset id> --model <model> \
[--director-model <model>] [--base-url <url>] [--samples N] [--scenario <id part>] [--key-env VAR]
The key is read from $AULA_EVAL_API_KEY (or the variable --key-env names).";

#[derive(Debug, Clone)]
pub struct Options {
    pub provider: String,
    pub model: String,
    pub director_model: Option<String>,
    pub base_url: Option<String>,
    pub samples: usize,
    pub scenario: Option<String>,
    pub key_env: String,
}

pub fn parse_args(args: &[String]) -> Result<Options> {
    let mut options = Options {
        provider: String::new(),
        model: String::new(),
        director_model: None,
        base_url: None,
        samples: 3,
        scenario: None,
        key_env: "AULA_EVAL_API_KEY".into(),
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .with_context(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--provider" => options.provider = value()?,
            "--model" => options.model = value()?,
            "--director-model" => options.director_model = Some(value()?),
            "--base-url" => options.base_url = Some(value()?),
            "--samples" => {
                options.samples = value()?.parse().context("--samples takes a number")?;
            }
            "--scenario" => options.scenario = Some(value()?),
            "--key-env" => options.key_env = value()?,
            other => bail!("unknown option {other:?}\n{USAGE}"),
        }
    }
    if options.provider.is_empty() || options.model.is_empty() {
        bail!("--provider and --model are required\n{USAGE}");
    }
    options.samples = options.samples.clamp(1, 50);
    Ok(options)
}

fn endpoint(options: &Options, model: &str) -> Result<Endpoint> {
    let Some(preset) = preset(&options.provider) else {
        let ids: Vec<&str> = aula_providers::PRESETS.iter().map(|p| p.id).collect();
        bail!(
            "no provider preset {:?}; one of: {}",
            options.provider,
            ids.join(", ")
        );
    };
    let key = std::env::var(&options.key_env)
        .ok()
        .filter(|k| !k.trim().is_empty());
    if key.is_none() && preset.key == KeyNeed::Required {
        bail!(
            "{} needs a key: set ${} (it is read from the environment only)",
            preset.name,
            options.key_env
        );
    }
    let mut endpoint = Endpoint::from_preset(preset, model, key);
    if let Some(url) = &options.base_url {
        endpoint.base_url = url.trim_end_matches('/').to_owned();
    }
    Ok(endpoint)
}

/// The text of one call, or the provider's error message.
fn complete(endpoint: &Endpoint, request: &ChatRequest) -> Result<(String, u64), String> {
    let mut text = String::new();
    let mut tokens = 0;
    let mut failure = None;
    let on_event = |event| match event {
        StreamEvent::TextDelta(t) => text.push_str(&t),
        StreamEvent::Usage { input, output, .. } => tokens += input + output,
        StreamEvent::Error(e) => failure = Some(e.to_string()),
        _ => {}
    };
    let on_retry = |attempt: u32, wait_ms: u64, error: &aula_providers::ProviderError| {
        eprintln!(
            "  retry {attempt} in {:.1} s: {error}",
            wait_ms as f64 / 1000.0
        );
    };
    let (_abort, run) = stream_chat_with_retry(
        &CurlTransport,
        &ThreadSleeper,
        RetryPolicy::default(),
        endpoint.clone(),
        request,
        on_event,
        on_retry,
    );
    block_on(run);
    match failure {
        Some(message) => Err(message),
        None => Ok((text, tokens)),
    }
}

/// The first two sentences of a reply, lowercased.
fn lead(text: &str) -> String {
    let mut sentences = 0;
    let mut out = String::new();
    for c in text.chars() {
        out.push(c);
        if matches!(c, '.' | '!' | '?' | '。' | '！' | '？') {
            sentences += 1;
            if sentences == 2 {
                break;
            }
        }
    }
    out.to_lowercase()
}

fn has_keyword(lead: &str, keywords: &[String]) -> bool {
    keywords.iter().any(|k| {
        let k = k.to_lowercase();
        if k.chars().all(|c| c.is_ascii_alphanumeric()) {
            // Whole words only for Latin keywords ("no" must not match "know").
            lead.split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w == k)
        } else {
            lead.contains(&k)
        }
    })
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Tally {
    pub samples: usize,
    pub good: usize,
    pub bad: usize,
    pub ended: usize,
    pub teacher: usize,
    pub leads_with_answer: usize,
    pub answer_samples: usize,
    pub errors: usize,
    /// Samples that code decided, with no model asked.
    pub by_code: usize,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.samples += other.samples;
        self.good += other.good;
        self.bad += other.bad;
        self.ended += other.ended;
        self.teacher += other.teacher;
        self.leads_with_answer += other.leads_with_answer;
        self.answer_samples += other.answer_samples;
        self.errors += other.errors;
        self.by_code += other.by_code;
    }

    /// Counts one decision against the scenario's expectation.
    fn score(&mut self, scenario: &Scenario, cast: &[AgentProfile], decision: &Decision) {
        let label = Scenario::label(decision);
        self.samples += 1;
        self.good += usize::from(scenario.is_good(decision));
        self.bad += usize::from(scenario.is_bad(decision));
        self.ended += usize::from(label == "END");
        self.teacher += usize::from(teacher(cast).is_some_and(|t| t.id == label));
    }

    fn rate(n: usize, of: usize) -> String {
        if of == 0 {
            "-".into()
        } else {
            format!("{:.2}", n as f64 / of as f64)
        }
    }
}

fn teacher(cast: &[AgentProfile]) -> Option<&AgentProfile> {
    cast.iter().find(|a| a.role == AgentRole::Teacher)
}

fn play(
    scenario: &Scenario,
    options: &Options,
    director: &Endpoint,
    agents: &Endpoint,
    tokens: &mut u64,
) -> Result<Tally> {
    let cast = scenario
        .cast(&default_agents())
        .map_err(anyhow::Error::msg)?;
    let history: Vec<Utterance> = scenario.history(&cast);
    let turns = scenario.turns(&cast);
    let discussion = scenario.discussion();
    let ids: Vec<String> = cast.iter().map(|a| a.id.clone()).collect();
    let mut tally = Tally::default();
    let learner = LearnerProfile::default();
    let model_samples = match decide(&scenario.round_state(&cast)) {
        DirectorStep::Decided(decision) => {
            // Code decides, whatever the model: one sample, scored like a model's.
            tally.score(scenario, &cast, &decision);
            tally.by_code += 1;
            0
        }
        DirectorStep::NeedsLlm => options.samples,
    };
    let system = director_prompt(&DirectorContext {
        agents: &cast,
        turns: &turns,
        history: &history,
        discussion: discussion.as_ref(),
        ledger: &[],
        learner: &learner,
        whiteboard_open: false,
    });
    for _ in 0..model_samples {
        let mut request = ChatRequest::new(system.clone(), vec![ChatMessage::user(DIRECTOR_ASK)]);
        request.max_tokens = Some(200);
        if options.samples == 1 {
            request.temperature = Some(0.0);
        }
        match complete(director, &request) {
            Err(message) => {
                eprintln!("  {}: director call failed: {message}", scenario.id);
                tally.samples += 1;
                tally.errors += 1;
            }
            Ok((reply, used)) => {
                *tokens += used;
                tally.score(scenario, &cast, &parse_director_reply(&reply, &ids));
            }
        }
    }
    if scenario.kind == "answer_content" {
        let Some(teacher) = teacher(&cast) else {
            bail!(
                "{}: an answer-content scenario needs a teacher",
                scenario.id
            );
        };
        let system = agent_prompt(&AgentContext {
            agent: teacher,
            course_title: "How a transformer reads a sentence",
            course_description: "",
            language: if scenario
                .history
                .iter()
                .any(|(_, t)| t.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)))
            {
                "zh-CN"
            } else {
                "en"
            },
            scene: None,
            turns: &turns,
            ledger: &[],
            learner: &learner,
            discussion: discussion.as_ref(),
            whiteboard_open: false,
            answering_learner: learner_question_open(&history),
        });
        for _ in 0..options.samples {
            let request =
                ChatRequest::new(system.clone(), agent_messages(&history, &teacher.id, 20));
            tally.answer_samples += 1;
            match complete(agents, &request) {
                Err(message) => {
                    eprintln!("  {}: teacher call failed: {message}", scenario.id);
                    tally.errors += 1;
                }
                Ok((reply, used)) => {
                    *tokens += used;
                    let mut parser = ReplyParser::new();
                    let mut events = parser.push(&reply);
                    events.extend(parser.finish());
                    let speech: String = events
                        .iter()
                        .filter_map(|e| match e {
                            ReplyEvent::Text(t) => Some(t.as_str()),
                            _ => None,
                        })
                        .collect();
                    tally.leads_with_answer += usize::from(has_keyword(
                        &lead(&speech),
                        &scenario.expect.answer_keywords,
                    ));
                }
            }
        }
    }
    Ok(tally)
}

/// Plays every scenario; returns the tallies per kind (and prints the table).
pub fn evaluate(options: &Options, scenarios_dir: &Path) -> Result<BTreeMap<String, Tally>> {
    let agents = endpoint(options, &options.model)?;
    let director = endpoint(
        options,
        options.director_model.as_deref().unwrap_or(&options.model),
    )?;
    let scenarios: Vec<Scenario> = load_dir(scenarios_dir)
        .map_err(anyhow::Error::msg)?
        .into_iter()
        .filter(|s| {
            options
                .scenario
                .as_deref()
                .is_none_or(|part| s.id.contains(part))
        })
        .collect();
    if scenarios.is_empty() {
        bail!("no scenario matches");
    }
    println!(
        "director: {} / {}, agents: {} / {}, {} sample(s) per scenario\n",
        director.provider, director.model, agents.provider, agents.model, options.samples
    );
    println!(
        "{:<44} {:<16} {:>5} {:>6} {:>6} {:>8} {:>6} {:>7}",
        "scenario", "kind", "good", "END", "teacher", "leads", "errors", "decider"
    );
    let mut by_kind: BTreeMap<String, Tally> = BTreeMap::new();
    let mut tokens = 0;
    for scenario in &scenarios {
        let tally = play(scenario, options, &director, &agents, &mut tokens)?;
        println!(
            "{:<44} {:<16} {:>5} {:>6} {:>6} {:>8} {:>6} {:>7}",
            scenario.id,
            scenario.kind,
            Tally::rate(tally.good, tally.samples),
            Tally::rate(tally.ended, tally.samples),
            Tally::rate(tally.teacher, tally.samples),
            Tally::rate(tally.leads_with_answer, tally.answer_samples),
            tally.errors,
            if tally.by_code > 0 { "code" } else { "model" }
        );
        by_kind
            .entry(scenario.kind.clone())
            .or_default()
            .add(&tally);
    }
    println!("\nby kind (goals: premature_end bad rate <= 0.20, bad = END or USER while the question is open; frustrated and answer_content teacher rate >= 0.70; answer_content leads >= 0.70)");
    for (kind, tally) in &by_kind {
        println!(
            "  {:<16} good {:>5}  bad {:>5}  END {:>5}  teacher {:>5}  leads {:>5}  ({} samples, {} by code, {} errors)",
            kind,
            Tally::rate(tally.good, tally.samples),
            Tally::rate(tally.bad, tally.samples),
            Tally::rate(tally.ended, tally.samples),
            Tally::rate(tally.teacher, tally.samples),
            Tally::rate(tally.leads_with_answer, tally.answer_samples),
            tally.samples,
            tally.by_code,
            tally.errors
        );
    }
    println!("\ntokens used (as the provider reported them): {tokens}");
    Ok(by_kind)
}

/// Whether the tallies meet the goals printed above.
pub fn goals_met(by_kind: &BTreeMap<String, Tally>) -> bool {
    let rate = |n: usize, of: usize| {
        if of == 0 {
            None
        } else {
            Some(n as f64 / of as f64)
        }
    };
    let ok = |value: Option<f64>, pass: fn(f64) -> bool| value.is_none_or(pass);
    let get = |kind: &str| by_kind.get(kind).cloned().unwrap_or_default();
    let premature = get("premature_end");
    let frustrated = get("frustrated");
    let answers = get("answer_content");
    by_kind.values().all(|t| t.errors == 0)
        && ok(rate(premature.bad, premature.samples), |r| r <= 0.2)
        && ok(rate(frustrated.teacher, frustrated.samples), |r| r >= 0.7)
        && ok(rate(answers.teacher, answers.samples), |r| r >= 0.7)
        && ok(
            rate(answers.leads_with_answer, answers.answer_samples),
            |r| r >= 0.7,
        )
}

pub fn run(args: &[String]) -> Result<()> {
    let options = parse_args(args)?;
    let by_kind = evaluate(&options, &project_root().join("crates/director/scenarios"))?;
    if !goals_met(&by_kind) {
        bail!("the director missed a goal (see the table above)");
    }
    Ok(())
}

/// The eval's own plumbing, against mock-llm over real HTTP through curl: a script answers each
/// scenario with its scripted director reply (and a teacher reply that leads with the answer), so
/// every goal must be met exactly. Part of `cargo xtask test`.
pub fn self_test() -> Result<()> {
    let mock = crate::mock::MockLlm::start()?;
    let dir = project_root().join("crates/director/scenarios");
    let scenarios = load_dir(&dir).map_err(anyhow::Error::msg)?;
    let mut rules = Vec::new();
    for scenario in &scenarios {
        let (Some(reply), Some((_, last))) = (&scenario.mock_reply, scenario.history.last()) else {
            continue;
        };
        rules.push(serde_json::json!({
            "match": {"last_message_contains": DIRECTOR_ASK, "system_contains": last},
            "reply": {"text": reply}
        }));
        if let Some(keyword) = scenario.expect.answer_keywords.first() {
            let answer = format!("[{{\"type\":\"text\",\"content\":\"{keyword}: that is the answer. Here is why.\"}}]");
            rules.push(serde_json::json!({
                "match": {"system_contains": "# Answering the learner", "last_message_contains": last},
                "reply": {"text": answer}
            }));
        }
    }
    let script = serde_json::json!({"rules": rules, "default": {"text": "{\"next_agent\":\"END\"}"}, "chunk_words": 2});
    mock.set_script(&script.to_string())?;
    let options = Options {
        provider: "custom".into(),
        model: "mock-model".into(),
        director_model: None,
        base_url: Some(format!("{}/v1", mock.url)),
        samples: 1,
        scenario: None,
        key_env: "AULA_EVAL_SELF_TEST_KEY".into(),
    };
    std::env::set_var("AULA_EVAL_SELF_TEST_KEY", "sk-eval-self-test");
    let by_kind = evaluate(&options, &dir)?;
    let all = by_kind.values().fold(Tally::default(), |mut sum, t| {
        sum.add(t);
        sum
    });
    if all.errors > 0 || all.good != all.samples || !goals_met(&by_kind) {
        bail!("the eval against mock-llm should be perfect: {all:?}");
    }
    let answers = by_kind.get("answer_content").cloned().unwrap_or_default();
    if answers.answer_samples == 0 || answers.leads_with_answer != answers.answer_samples {
        bail!("answer-content replies were not judged as leading with the answer: {answers:?}");
    }
    println!(
        "eval-director self-test: {} scenario samples, all as scripted",
        all.samples
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_parsed_and_required() {
        let args: Vec<String> = ["--provider", "openai", "--model", "gpt-x", "--samples", "5"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let o = parse_args(&args).unwrap();
        assert_eq!(
            (o.provider.as_str(), o.model.as_str(), o.samples),
            ("openai", "gpt-x", 5)
        );
        assert!(parse_args(&["--model".into(), "m".into()]).is_err());
        assert!(parse_args(&["--provider".into()]).is_err());
        assert!(parse_args(&["--nope".into(), "x".into()]).is_err());
    }

    #[test]
    fn the_lead_is_two_sentences_and_keywords_match_whole_words() {
        assert_eq!(
            lead("No. It reads them all at once. Then it weighs them."),
            "no. it reads them all at once."
        );
        assert!(has_keyword(&lead("No, it does not."), &["no".into()]));
        assert!(!has_keyword(
            &lead("You know, it is complicated."),
            &["no".into()]
        ));
        assert!(has_keyword(&lead("原论文用了 8 个头。"), &["8".into()]));
        assert!(has_keyword(&lead("一共八个头。"), &["八".into()]));
    }

    #[test]
    fn goals_follow_the_rates() {
        let mut by_kind = BTreeMap::new();
        by_kind.insert(
            "premature_end".to_string(),
            Tally {
                samples: 10,
                bad: 2,
                ..Tally::default()
            },
        );
        by_kind.insert(
            "frustrated".to_string(),
            Tally {
                samples: 10,
                teacher: 7,
                ..Tally::default()
            },
        );
        assert!(goals_met(&by_kind));
        by_kind.insert(
            "premature_end".to_string(),
            Tally {
                samples: 10,
                bad: 3,
                ..Tally::default()
            },
        );
        assert!(!goals_met(&by_kind));
    }
}
