//! The two prompts of a classroom round, in Aula's own words: the director's (who speaks next)
//! and an agent's (what it says and does).
//!
//! Both are pure functions of plain data. Their size is bounded whatever the session's length:
//! the conversation is a window of the last [`conversation::SUMMARY_MESSAGES`] messages of at most
//! [`conversation::SUMMARY_CHARS`] characters, previews are capped, and lists are cut.

use std::fmt::Write as _;

use aula_course::scene::QuizQuestion;
use aula_course::{Scene, SceneContent, SlideElement};

use crate::conversation::{self, SUMMARY_CHARS, SUMMARY_MESSAGES};
use crate::model::{
    clip, ActionKind, AgentProfile, AgentRole, DiscussionContext, LearnerProfile, LedgerEntry,
    TurnSummary, Utterance,
};
use crate::whiteboard::{round_drawings, summarize_ledger};

/// The user message sent with the director prompt.
pub const DIRECTOR_ASK: &str = "Who speaks next? Answer with the JSON object only.";

/// A turn preview in the director prompt is cut to this many characters.
const DIRECTOR_PREVIEW_CHARS: usize = 100;
/// At most this many turns of the round are listed (a round is capped well below this).
const MAX_LISTED_TURNS: usize = 20;
/// Slide elements, quiz questions and drawings listed in an agent prompt.
const MAX_LISTED_ITEMS: usize = 24;

/// Everything the director sees when it chooses the next speaker.
#[derive(Debug, Clone, Copy)]
pub struct DirectorContext<'a> {
    /// The agents in the room.
    pub agents: &'a [AgentProfile],
    /// The agent turns of this round so far, in order.
    pub turns: &'a [TurnSummary],
    /// The whole conversation (only its last messages are shown).
    pub history: &'a [Utterance],
    /// Set when the round is a discussion rather than questions and answers.
    pub discussion: Option<&'a DiscussionContext>,
    /// This round's whiteboard actions.
    pub ledger: &'a [LedgerEntry],
    pub learner: &'a LearnerProfile,
    pub whiteboard_open: bool,
}

fn learner_section(out: &mut String, learner: &LearnerProfile, heading: &str) {
    if learner.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n# {heading}");
    let name = learner
        .nickname
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty());
    let _ = writeln!(out, "Name: {}", clip(name.unwrap_or("not given"), 60));
    if let Some(bio) = learner
        .bio
        .as_deref()
        .map(str::trim)
        .filter(|b| !b.is_empty())
    {
        let _ = writeln!(out, "Background: {}", clip(bio, 300));
    }
}

fn whiteboard_state(open: bool) -> &'static str {
    if open {
        "OPEN: it covers the slide, so spotlight and laser would show nothing"
    } else {
        "CLOSED: the slide is visible"
    }
}

/// The director's system prompt.
pub fn director_prompt(ctx: &DirectorContext) -> String {
    let mut out = String::with_capacity(6 * 1024);
    out.push_str(
        "You direct a live class taught by AI agents to one human learner. You never speak; you \
         only choose who speaks next, one agent at a time.\n",
    );

    out.push_str("\n# In the room\n");
    for agent in ctx.agents {
        let _ = writeln!(
            out,
            "- id: \"{}\", name: \"{}\", role: {}, priority: {}",
            agent.id,
            clip(&agent.name, 40),
            agent.role.as_str(),
            agent.priority
        );
    }

    out.push_str("\n# Turns taken this round\n");
    if ctx.turns.is_empty() {
        out.push_str("Nobody has spoken yet this round.\n");
    }
    for turn in ctx.turns.iter().take(MAX_LISTED_TURNS) {
        let _ = write!(
            out,
            "- {} ({}, {}): \"{}\" [{} action{}",
            clip(&turn.agent_name, 40),
            turn.agent_id,
            turn.role.as_str(),
            clip(&turn.preview, DIRECTOR_PREVIEW_CHARS),
            turn.action_count,
            if turn.action_count == 1 { "" } else { "s" }
        );
        if !turn.board_notes.is_empty() {
            let notes: Vec<&str> = turn
                .board_notes
                .iter()
                .take(4)
                .map(String::as_str)
                .collect();
            let _ = write!(out, "; board: {}", notes.join(", "));
        }
        out.push_str("]\n");
    }

    out.push_str(
        "\n# Conversation (the labels are authoritative: [Student (Human)] is the human learner, \
         [Agent: …] lines are AI agents)\n",
    );
    out.push_str(&conversation::summarize(
        ctx.history,
        SUMMARY_MESSAGES,
        SUMMARY_CHARS,
    ));
    out.push('\n');

    if let Some(question) = open_question(ctx.history) {
        let _ = writeln!(
            out,
            "\n# Open question\nThe learner's latest message has not been answered yet: \"{}\"",
            clip(question, SUMMARY_CHARS)
        );
        if conversation::sounds_frustrated(question) {
            out.push_str(
                "The learner sounds frustrated with the answers so far: the teacher must answer \
                 the question itself now.\n",
            );
        }
    }

    if let Some(discussion) = ctx.discussion {
        out.push_str("\n# Discussion\n");
        let _ = writeln!(out, "Topic: \"{}\"", clip(&discussion.topic, 200));
        if let Some(prompt) = discussion
            .prompt
            .as_deref()
            .filter(|p| !p.trim().is_empty())
        {
            let _ = writeln!(out, "How it should go: \"{}\"", clip(prompt, 300));
        }
        if let Some(initiator) = &discussion.initiator {
            let _ = writeln!(out, "Opened by: \"{initiator}\"");
        }
        out.push_str(
            "The learner chose to join this discussion; it is a conversation among the class, \
             not a question-and-answer exchange.\n",
        );
    }

    let board = summarize_ledger(ctx.ledger);
    if !ctx.ledger.is_empty() {
        out.push_str("\n# Whiteboard this round\n");
        let _ = writeln!(
            out,
            "It holds {} element{}, drawn by {}.",
            board.element_count,
            if board.element_count == 1 { "" } else { "s" },
            if board.contributors.is_empty() {
                "nobody".to_owned()
            } else {
                board.contributors.join(", ")
            }
        );
        if board.is_crowded() {
            out.push_str(
                "⚠ The board is getting crowded: prefer an agent who will tidy it up, and avoid \
                 agents who would only draw more.\n",
            );
        }
    }

    learner_section(&mut out, ctx.learner, "The learner");

    out.push_str("\n# Now\n");
    let _ = writeln!(
        out,
        "This is decision {} of the round. The whiteboard is {}.",
        ctx.turns.len() + 1,
        whiteboard_state(ctx.whiteboard_open)
    );

    out.push_str("\n# How to choose\n");
    let first = match ctx.discussion {
        None => "1. In questions and answers the teacher normally speaks first.".to_owned(),
        Some(d) => format!(
            "1. In a discussion {} opens it, then the teacher guides, then the other classmates join in.",
            d.initiator
                .as_deref()
                .map(|id| format!("\"{id}\""))
                .unwrap_or_else(|| "the agent who proposed it".into())
        ),
    };
    out.push_str(&first);
    out.push_str(
        "\n2. After the teacher, bring in a classmate only when they add something: a follow-up \
         question, a fresh angle, a short recap, a light joke.\n\
         3. Do not give the same agent two turns in one round unless it is really needed.\n\
         4. Answer END when the learner's question has been answered or the topic is covered.\n\
         5. Keep rounds short: one or two agents is usually enough. Do not drag it out.\n\
         6. Answer USER only when an agent has just asked the learner something directly and is \
         waiting for the reply.\n\
         7. When the whiteboard is crowded, avoid agents who would draw more unless they clean up.\n\
         8. While the whiteboard is open, spotlight and laser have no visible effect.\n\
         9. Trust the labels: only [Student (Human)] lines are the learner. What an [Agent: …] line \
         says belongs to that agent, whatever names it contains.\n\
         10. Never END while the learner's latest question is unanswered, that is while the last \
         [Student (Human)] line comes after the last real answer.\n\
         11. A bare acknowledgement (\"ok\", \"got it\", \"interesting\", \"好的\") neither answers \
         nor asks anything.\n\
         12. CRITICAL, this overrides rules 2 to 5: if the learner's latest turn has not been \
         answered directly (with the concrete formula, yes or no, term, number, definition or \
         steps it asked for), choose the agent whose role is teacher. Never hand an open learner \
         question to an assistant or a classmate for variety. Frustration (\"you didn't answer my \
         question\", \"答非所问\", \"我没听懂\") makes this more urgent. Never answer USER to the \
         learner's own turn: that leaves silence; a vague request gets a clarifying question from \
         the teacher instead.\n",
    );

    out.push_str(
        "\n# Quality\n\
         - Never two agents of the same role in a row.\n\
         - Each agent adds something (asks, challenges, connects, takes notes); nobody re-explains.\n\
         - Move forward: explain, question, go deeper, another perspective, summary.\n\
         - At most one agent greets.\n",
    );

    out.push_str(
        "\n# Answer\nOnly one JSON object, nothing else: {\"next_agent\":\"<agent id>\"}, \
         {\"next_agent\":\"USER\"} or {\"next_agent\":\"END\"}.\n",
    );
    out
}

/// The learner's latest message when it is still waiting for an answer.
fn open_question(history: &[Utterance]) -> Option<&str> {
    if conversation::learner_question_open(history) {
        conversation::last_learner_text(history)
    } else {
        None
    }
}

/// The actions an agent may use in a scene: its own list, without the slide effects (spotlight,
/// laser) when the scene is not a slide. Speech, discussions and widget actions belong to scene
/// scripts, never to live replies.
pub fn effective_actions(agent: &AgentProfile, scene: Option<&SceneContent>) -> Vec<ActionKind> {
    let on_slide = matches!(scene, None | Some(SceneContent::Slide(_)));
    agent
        .allowed_actions
        .iter()
        .copied()
        .filter(|kind| action_reference(*kind).is_some())
        .filter(|kind| on_slide || !kind.is_slide_effect())
        .collect()
}

/// How an action is written in a reply, or `None` for actions agents never use live.
pub fn action_reference(kind: ActionKind) -> Option<&'static str> {
    Some(match kind {
        ActionKind::Spotlight => "dims everything on the slide except one element. params: {\"element_id\": string, \"dim_opacity\"?: 0..1}",
        ActionKind::Laser => "points a laser dot at one slide element. params: {\"element_id\": string, \"color\"?: string}",
        ActionKind::PlayVideo => "plays a video element of the slide to its end. params: {\"element_id\": string}",
        ActionKind::WbOpen => "opens the whiteboard over the slide. params: {}",
        ActionKind::WbClose => "closes the whiteboard, showing the slide again. params: {}",
        ActionKind::WbDrawText => "writes text. params: {\"content\": string, \"x\": number, \"y\": number, \"width\"?: number, \"height\"?: number, \"font_size\"?: number, \"color\"?: string, \"element_id\"?: string}",
        ActionKind::WbDrawShape => "draws a shape. params: {\"shape\": \"rectangle\"|\"circle\"|\"triangle\", \"x\", \"y\", \"width\", \"height\": numbers, \"fill_color\"?: string, \"element_id\"?: string}",
        ActionKind::WbDrawChart => "draws a chart. params: {\"chart_type\": \"bar\"|\"column\"|\"line\"|\"pie\"|\"ring\"|\"area\"|\"radar\"|\"scatter\", \"x\", \"y\", \"width\", \"height\": numbers, \"data\": {\"labels\": [string], \"legends\": [string], \"series\": [[number]]}, \"element_id\"?: string}",
        ActionKind::WbDrawLatex => "writes a formula. params: {\"latex\": string, \"x\": number, \"y\": number, \"width\"?: number, \"color\"?: string, \"element_id\"?: string}",
        ActionKind::WbDrawTable => "draws a table; row 0 is the header. params: {\"x\", \"y\", \"width\", \"height\": numbers, \"data\": [[string]], \"element_id\"?: string}",
        ActionKind::WbDrawLine => "draws a line or arrow. params: {\"start_x\", \"start_y\", \"end_x\", \"end_y\": numbers, \"color\"?: string, \"width\"?: number, \"style\"?: \"solid\"|\"dashed\", \"ends\"?: [\"plain\"|\"arrow\", \"plain\"|\"arrow\"], \"element_id\"?: string}",
        ActionKind::WbDrawCode => "types a code block. params: {\"language\": string, \"code\": string (lines separated by \\n), \"x\": number, \"y\": number, \"width\"?: number, \"height\"?: number, \"file_name\"?: string, \"element_id\"?: string}",
        ActionKind::WbEditCode => "changes lines of a code block on the board. params: {\"element_id\": string, \"operation\": \"insert_after\"|\"insert_before\"|\"delete_lines\"|\"replace_lines\", \"line_id\"?: string, \"line_ids\"?: [string], \"content\"?: string}",
        ActionKind::WbDelete => "removes one element from the board. params: {\"element_id\": string}",
        ActionKind::WbClear => "wipes the whole board. params: {}",
        ActionKind::Speech
        | ActionKind::Discussion
        | ActionKind::WidgetHighlight
        | ActionKind::WidgetAnnotation
        | ActionKind::WidgetReveal
        | ActionKind::WidgetSetState => return None,
    })
}

/// Everything an agent sees when it takes its turn.
#[derive(Debug, Clone, Copy)]
pub struct AgentContext<'a> {
    pub agent: &'a AgentProfile,
    pub course_title: &'a str,
    pub course_description: &'a str,
    /// The course's language tag, e.g. `en` or `zh-CN`.
    pub language: &'a str,
    /// The scene on screen, if any.
    pub scene: Option<&'a Scene>,
    /// The other agents' turns this round, in order.
    pub turns: &'a [TurnSummary],
    /// This round's whiteboard actions.
    pub ledger: &'a [LedgerEntry],
    pub learner: &'a LearnerProfile,
    pub discussion: Option<&'a DiscussionContext>,
    pub whiteboard_open: bool,
    /// The learner's latest question is still open (the agent should answer it first).
    pub answering_learner: bool,
}

fn role_guidance(role: AgentRole) -> &'static str {
    match role {
        AgentRole::Teacher => {
            "You are the LEAD TEACHER. You own the lesson's flow and pacing and give the first real \
             answer to any question. Explain step by step with a concrete example or analogy, then \
             check understanding. Point at the slide with spotlight or laser and use the whiteboard \
             when a picture, a formula or steps help; never announce what you are about to do."
        }
        AgentRole::Assistant => {
            "You are the TEACHING ASSISTANT. You fill gaps the teacher left, rephrase in simpler \
             words or add a practical example. Support the teacher; never take over the lesson. Use \
             the whiteboard sparingly."
        }
        AgentRole::Student => {
            "You are a STUDENT in this class, a classmate of the learner. You ask, react or share a \
             thought in one or two short sentences, in your own character. You do not lecture, and \
             you draw on the whiteboard only when the teacher invites you."
        }
    }
}

fn length_guidance(role: AgentRole) -> &'static str {
    match role {
        AgentRole::Teacher => "about 100 characters of speech in total: two or three short spoken sentences that make the learner think",
        AgentRole::Assistant => "about 80 characters of speech: one point, said simply",
        AgentRole::Student => "about 50 characters of speech: one or two short sentences",
    }
}

fn board_guidance(role: AgentRole) -> &'static str {
    match role {
        AgentRole::Teacher => {
            "Draw one to three elements per turn, reuse what is already on the board, and wipe it \
             (wb_clear) or remove elements (wb_delete) when it is full. Give drawings an element_id \
             so they can be changed later; change code with wb_edit_code rather than drawing it \
             again. Do not close the board at the end of your turn."
        }
        AgentRole::Assistant => {
            "Add at most one or two small elements, never clear or delete what others drew, and \
             keep to speech when the board already holds six or more elements."
        }
        AgentRole::Student => {
            "Leave the board alone unless the teacher invited you; then add one small element with \
             clear space around it, and never clear or delete anything."
        }
    }
}

pub fn language_name(tag: &str) -> String {
    let primary = tag
        .split(['-', '_'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let name = match primary.as_str() {
        "en" => "English",
        "zh" => "Chinese (简体中文 unless the course says otherwise)",
        "es" => "Spanish",
        "fr" => "French",
        "de" => "German",
        "ja" => "Japanese",
        "ko" => "Korean",
        "pt" => "Portuguese",
        "ru" => "Russian",
        "it" => "Italian",
        "ar" => "Arabic",
        _ => return format!("the course's language ({})", clip(tag, 20)),
    };
    name.to_owned()
}

fn scene_kind(content: &SceneContent) -> &'static str {
    content.kind_name()
}

pub fn element_line(element: &SlideElement) -> String {
    let frame = element.frame();
    let what = match element {
        SlideElement::Text(e) => format!("text \"{}\"", clip(&e.markdown, 60)),
        SlideElement::Image(e) => format!("image \"{}\"", clip(&e.alt, 60)),
        SlideElement::Shape(e) => match &e.text {
            Some(text) => format!("shape with \"{}\"", clip(text, 40)),
            None => "shape".to_owned(),
        },
        SlideElement::Video(_) => "video".to_owned(),
        SlideElement::Line(_) => "line".to_owned(),
        SlideElement::Chart(e) => {
            let labels: Vec<String> = e.data.labels.iter().take(4).map(|l| clip(l, 20)).collect();
            format!("chart ({})", labels.join(", "))
        }
        SlideElement::Table(e) => format!(
            "table {}×{}",
            e.rows.len(),
            e.rows.first().map(Vec::len).unwrap_or(0)
        ),
        SlideElement::Latex(e) => format!("formula \"{}\"", clip(&e.latex, 40)),
        SlideElement::Code(e) => format!(
            "code ({}, {} lines)",
            clip(&e.language, 20),
            e.code.lines().count()
        ),
    };
    format!(
        "- [{}] {what} at ({:.0}, {:.0}), {:.0}×{:.0}",
        clip(element.id(), 40),
        frame.left,
        frame.top,
        frame.width,
        frame.height
    )
}

fn question_text(question: &QuizQuestion) -> &str {
    match question {
        QuizQuestion::Single(q) => &q.question,
        QuizQuestion::Multiple(q) => &q.question,
        QuizQuestion::Short(q) => &q.question,
    }
}

/// The agent's system prompt.
pub fn agent_prompt(ctx: &AgentContext) -> String {
    let agent = ctx.agent;
    let scene_content = ctx.scene.map(|s| &s.content);
    let actions = effective_actions(agent, scene_content);
    let slide_actions = actions.iter().any(|k| k.is_slide_effect());
    let mut out = String::with_capacity(8 * 1024);

    let _ = writeln!(
        out,
        "You are {}, taking part in a live class with one human learner.",
        clip(&agent.name, 40)
    );
    if !agent.persona.trim().is_empty() {
        let _ = writeln!(out, "Your character: {}", clip(&agent.persona, 600));
    }
    out.push_str(role_guidance(agent.role));
    out.push('\n');

    learner_section(&mut out, ctx.learner, "The learner");
    if !ctx.learner.is_empty() {
        out.push_str("Speak to them by name now and then, and fit examples to their background.\n");
    }

    let others: Vec<&TurnSummary> = ctx
        .turns
        .iter()
        .filter(|t| t.agent_id != agent.id)
        .take(MAX_LISTED_TURNS)
        .collect();
    if !others.is_empty() {
        out.push_str("\n# Already said this round (important)\n");
        for turn in &others {
            let _ = writeln!(
                out,
                "- {} ({}): \"{}\"",
                clip(&turn.agent_name, 40),
                turn.role.as_str(),
                clip(&turn.preview, TurnSummary::PREVIEW_CHARS)
            );
        }
        out.push_str(
            "Do not greet again and do not repeat what was said. Add your own angle: build on it, \
             question it, or agree in a few words and then add something new.\n",
        );
    }

    let _ = writeln!(
        out,
        "\n# Language (important)\nSpeak {}. If the learner asks for another language, switch at once.",
        language_name(ctx.language)
    );

    out.push_str("\n# Reply format\nReply with one JSON array and nothing else, for example:\n");
    let [label, after_drawing, after_spotlight] = example_words(ctx.language);
    if slide_actions {
        let _ = writeln!(
            out,
            "[{{\"type\":\"action\",\"name\":\"spotlight\",\"params\":{{\"element_id\":\"<a slide element id>\"}}}},\
             {{\"type\":\"text\",\"content\":\"{after_spotlight}\"}}]"
        );
    } else {
        let _ = writeln!(
            out,
            "[{{\"type\":\"action\",\"name\":\"wb_draw_text\",\"params\":{{\"content\":\"{label}\",\"x\":80,\"y\":60}}}},\
             {{\"type\":\"text\",\"content\":\"{after_drawing}\"}}]"
        );
    }
    out.push_str(
        "- Text items are {\"type\":\"text\",\"content\":\"…\"}; action items are \
         {\"type\":\"action\",\"name\":\"…\",\"params\":{…}}. Mix them in the order things happen.\n\
         - Start with [ and end with ]; no code fences, no prose outside the array, also after an interruption.\n",
    );
    if slide_actions {
        out.push_str("- Put a spotlight or laser just before the words about that element; at most two per reply.\n");
    }

    let _ = writeln!(
        out,
        "\n# Speaking\nEverything in text items is read aloud: plain spoken sentences, no markdown, no \
         lists, no emoji, and never narrate your actions (\"let me draw…\"). Length: {}.",
        length_guidance(agent.role)
    );

    if ctx.answering_learner {
        out.push_str(
            "\n# Answering the learner\nThe learner's latest message is waiting for an answer. Lead \
             with the answer itself: the formula, the yes or no, the term, the number, the steps. No \
             greeting, no preamble. If they said you missed the point, answer their earlier question \
             again, properly. If the request is vague, ask one short clarifying question. If \
             something is impossible (for example turning the slides yourself), say so and offer \
             what you can do. If you are not sure, say so rather than drift.\n",
        );
    }

    out.push_str("\n# Actions you can use\n");
    if actions.is_empty() {
        out.push_str("None: you can only speak.\n");
    }
    for kind in &actions {
        if let Some(reference) = action_reference(*kind) {
            let _ = writeln!(out, "- {}: {reference}", kind.as_str());
        }
    }
    if actions.iter().any(|k| k.is_whiteboard()) {
        out.push_str(
            "\n# Whiteboard\nThe board is 1000 wide and 562 high; keep 20 units from every edge and \
             20 to 30 between elements, and never cover more than a third of another element. \
             Font sizes: titles 28 to 32, body 18 to 24, notes 14 to 16. In JSON, LaTeX backslashes \
             are doubled (\"\\\\frac{a}{b}\"). Any drawing opens the board by itself; close it \
             (wb_close) before using spotlight or laser. ",
        );
        out.push_str(board_guidance(agent.role));
        out.push('\n');
    }

    out.push_str("\n# Now\n");
    let _ = writeln!(
        out,
        "Course: {}{}",
        clip(ctx.course_title, 120),
        if ctx.course_description.trim().is_empty() {
            String::new()
        } else {
            format!(" ({})", clip(ctx.course_description, 200))
        }
    );
    let _ = writeln!(
        out,
        "Whiteboard: {}.",
        whiteboard_state(ctx.whiteboard_open)
    );
    if let Some(scene) = ctx.scene {
        let _ = writeln!(
            out,
            "On screen: \"{}\" ({}, id {})",
            clip(&scene.title, 120),
            scene_kind(&scene.content),
            scene.id
        );
        match &scene.content {
            SceneContent::Slide(slide) => {
                let _ = writeln!(out, "Slide elements ({}):", slide.elements.len());
                for element in slide.elements.iter().take(MAX_LISTED_ITEMS) {
                    out.push_str(&element_line(element));
                    out.push('\n');
                }
            }
            SceneContent::Quiz(quiz) => {
                for question in quiz.questions.iter().take(5) {
                    let _ = writeln!(out, "- question: {}", clip(question_text(question), 80));
                }
            }
            SceneContent::Interactive(_) => {
                out.push_str("An interactive page the learner can use.\n");
            }
            SceneContent::Pbl(project) => {
                let _ = writeln!(out, "A project: {}", clip(&project.briefing, 200));
            }
        }
    }
    let drawings = round_drawings(ctx.ledger);
    if !drawings.is_empty() {
        out.push_str("Drawn on the whiteboard this round (already there, do not draw it again):\n");
        for line in drawings.iter().take(MAX_LISTED_ITEMS) {
            let _ = writeln!(out, "- {}", clip(line, 120));
        }
    }

    if let Some(discussion) = ctx.discussion {
        let _ = writeln!(
            out,
            "\n# Discussion\nTopic: \"{}\"",
            clip(&discussion.topic, 200)
        );
        if let Some(prompt) = discussion
            .prompt
            .as_deref()
            .filter(|p| !p.trim().is_empty())
        {
            let _ = writeln!(out, "How it should go: {}", clip(prompt, 300));
        }
        if others.is_empty() {
            out.push_str(
                "You open this discussion: introduce the topic in a sentence, give your view, and \
                 invite the others to respond.\n",
            );
        } else {
            out.push_str(
                "You are joining a discussion already under way: no introduction and no greeting; \
                 respond to what was said.\n",
            );
        }
    }

    // Last, where a small model reads it just before it writes: run 6's Chinese round was
    // answered in English by a model told the language only in the middle of the prompt.
    let _ = writeln!(
        out,
        "\nRemember: one JSON array, spoken text in {}, your role's length.",
        language_name(ctx.language)
    );
    out
}

/// The reply example's words in the course's language, so that a small model copying its
/// example speaks that language: a board label, a line after drawing it, a line after a
/// spotlight.
fn example_words(language: &str) -> [&'static str; 3] {
    let primary = language.split(['-', '_']).next().unwrap_or_default();
    match primary.to_ascii_lowercase().as_str() {
        "zh" => ["关键概念", "这就是关键概念。", "先看这一部分。"],
        "ja" => [
            "大事な考え",
            "これが大事な考えです。",
            "まずここを見てください。",
        ],
        "es" => [
            "Idea clave",
            "Esta es la idea clave.",
            "Mira primero esta parte.",
        ],
        "fr" => [
            "Idée clé",
            "Voici l'idée clé.",
            "Regardez d'abord cette partie.",
        ],
        "de" => [
            "Kernidee",
            "Das ist die Kernidee.",
            "Seht euch zuerst diesen Teil an.",
        ],
        _ => [
            "Key idea",
            "Here is the key idea.",
            "Look at this part first.",
        ],
    }
}

#[cfg(test)]
mod tests {
    use aula_course::{default_agents, Course};

    use super::*;
    use crate::model::{Action, Speaker};

    fn agents() -> Vec<AgentProfile> {
        default_agents()
    }

    fn teacher() -> AgentProfile {
        agents()
            .into_iter()
            .find(|a| a.role == AgentRole::Teacher)
            .unwrap()
    }

    fn student() -> AgentProfile {
        agents()
            .into_iter()
            .find(|a| a.role == AgentRole::Student)
            .unwrap()
    }

    /// The built-in cast has no assistant; one is made from the teacher.
    fn assistant() -> AgentProfile {
        AgentProfile {
            id: "ta".into(),
            name: "Dana".into(),
            role: AgentRole::Assistant,
            allowed_actions: AgentRole::Assistant.default_actions(),
            ..teacher()
        }
    }

    fn sample_course() -> Course {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../public/courses/transformer-en.json"
        ))
        .unwrap();
        Course::from_json(&text).unwrap()
    }

    /// The course's first scene of this kind.
    fn first_scene<'c>(course: &'c Course, kind: &str) -> &'c Scene {
        course
            .scenes
            .iter()
            .find(|s| s.content.kind_name() == kind)
            .unwrap_or_else(|| panic!("the sample has a {kind} scene"))
    }

    fn director(history: &[Utterance], turns: &[TurnSummary]) -> String {
        let agents = agents();
        director_prompt(&DirectorContext {
            agents: &agents,
            turns,
            history,
            discussion: None,
            ledger: &[],
            learner: &LearnerProfile::default(),
            whiteboard_open: false,
        })
    }

    fn turn(agent: &AgentProfile, text: &str) -> TurnSummary {
        TurnSummary {
            agent_id: agent.id.clone(),
            agent_name: agent.name.clone(),
            role: agent.role,
            preview: text.to_owned(),
            action_count: 0,
            board_notes: Vec::new(),
        }
    }

    fn draw(agent: &AgentProfile, n: usize) -> LedgerEntry {
        LedgerEntry {
            agent_id: agent.id.clone(),
            agent_name: agent.name.clone(),
            action: serde_json::from_value::<Action>(serde_json::json!({
                "type": "wb_draw_text", "id": format!("d{n}"), "content": format!("note {n}"), "x": 40, "y": 40
            }))
            .unwrap(),
        }
    }

    #[test]
    fn the_director_prompt_lists_every_agent_the_rules_and_the_answer_format() {
        let prompt = director(&[Utterance::learner("What is attention?")], &[]);
        for agent in agents() {
            assert!(
                prompt.contains(&format!("id: \"{}\"", agent.id)),
                "{}",
                agent.id
            );
        }
        for needle in [
            "next_agent",
            "END",
            "USER",
            "[Student (Human)]",
            "Nobody has spoken yet this round.",
            "decision 1 of the round",
            "CLOSED",
            "CRITICAL",
            "Never END while the learner's latest question is unanswered",
            "bare acknowledgement",
            "Never two agents of the same role in a row",
        ] {
            assert!(prompt.contains(needle), "missing {needle:?}");
        }
        assert!(
            !prompt.contains("# Discussion"),
            "no discussion block in Q&A"
        );
        assert!(!prompt.contains("{{"), "no unfilled placeholder");
    }

    #[test]
    fn an_unanswered_question_is_shown_and_frustration_raises_it() {
        let history = [Utterance::learner("How many heads does the model use?")];
        let prompt = director(&history, &[]);
        assert!(prompt.contains("# Open question"));
        assert!(prompt.contains("How many heads does the model use?"));
        assert!(!prompt.contains("frustrated"));

        let history = [
            Utterance::learner("What does the softmax do?"),
            Utterance::agent(
                &teacher(),
                "Great question, attention is a fascinating topic in modern AI research.",
            ),
            Utterance::learner("You didn't answer my question. What does the softmax do?"),
        ];
        let prompt = director(&history, &[]);
        assert!(prompt.contains("# Open question"));
        assert!(prompt.contains("frustrated"));

        let history = [
            Utterance::learner("What does the softmax do?"),
            Utterance::agent(
                &teacher(),
                "It turns the scores into weights that are positive and add up to one.",
            ),
            Utterance::learner("ok got it"),
        ];
        assert!(!director(&history, &[]).contains("# Open question"));
    }

    #[test]
    fn turns_are_listed_with_previews_and_the_turn_number_advances() {
        let t = teacher();
        let long = "word ".repeat(100);
        let turns = [turn(&t, &long)];
        let prompt = director(&[Utterance::learner("Why?")], &turns);
        assert!(prompt.contains(&format!("- {} ({}, teacher): \"", t.name, t.id)));
        assert!(prompt.contains("decision 2 of the round"));
        assert!(!prompt.contains("Nobody has spoken yet"));
        let line = prompt
            .lines()
            .find(|l| l.starts_with(&format!("- {}", t.name)))
            .unwrap();
        assert!(
            line.chars().count() < DIRECTOR_PREVIEW_CHARS + 80,
            "preview is capped: {line}"
        );
    }

    #[test]
    fn discussion_mode_names_topic_prompt_and_initiator() {
        let agents = agents();
        let discussion = DiscussionContext {
            topic: "Is attention all you need?".into(),
            prompt: Some("Argue both sides".into()),
            initiator: Some(student().id),
        };
        let prompt = director_prompt(&DirectorContext {
            agents: &agents,
            turns: &[],
            history: &[],
            discussion: Some(&discussion),
            ledger: &[],
            learner: &LearnerProfile::default(),
            whiteboard_open: true,
        });
        assert!(prompt.contains("# Discussion"));
        assert!(prompt.contains("Is attention all you need?"));
        assert!(prompt.contains("Argue both sides"));
        assert!(prompt.contains(&format!("\"{}\" opens it", student().id)));
        assert!(prompt.contains("OPEN: it covers the slide"));
    }

    #[test]
    fn the_whiteboard_block_counts_and_warns_when_crowded() {
        let agents = agents();
        let t = teacher();
        let some: Vec<LedgerEntry> = (0..5).map(|n| draw(&t, n)).collect();
        let ctx = |ledger: &[LedgerEntry]| {
            director_prompt(&DirectorContext {
                agents: &agents,
                turns: &[],
                history: &[],
                discussion: None,
                ledger,
                learner: &LearnerProfile::default(),
                whiteboard_open: true,
            })
        };
        let prompt = ctx(&some);
        assert!(prompt.contains("It holds 5 elements"));
        assert!(prompt.contains(&t.name));
        assert!(!prompt.contains("getting crowded"));
        let crowded: Vec<LedgerEntry> = (0..6).map(|n| draw(&t, n)).collect();
        assert!(ctx(&crowded).contains("getting crowded"));
        assert!(!ctx(&[]).contains("# Whiteboard this round"));
    }

    #[test]
    fn the_learner_profile_appears_only_when_given() {
        let agents = agents();
        let learner = LearnerProfile {
            nickname: Some("Mei".into()),
            bio: Some("Second-year biology student".into()),
        };
        let prompt = director_prompt(&DirectorContext {
            agents: &agents,
            turns: &[],
            history: &[],
            discussion: None,
            ledger: &[],
            learner: &learner,
            whiteboard_open: false,
        });
        assert!(prompt.contains("Name: Mei"));
        assert!(prompt.contains("Second-year biology student"));
        assert!(!director(&[], &[]).contains("# The learner"));
    }

    #[test]
    fn the_director_prompt_stays_bounded_however_long_the_session() {
        let t = teacher();
        let mut history = Vec::new();
        for n in 0..500 {
            history.push(Utterance::learner(format!(
                "question {n} {}",
                "x".repeat(400)
            )));
            history.push(Utterance::agent(
                &t,
                format!("answer {n} {}", "y".repeat(400)),
            ));
        }
        let short = director(&history[..20], &[]);
        let long = director(&history, &[]);
        assert!(long.len() < 12 * 1024, "{} bytes", long.len());
        assert!(
            (long.len() as i64 - short.len() as i64).abs() < 200,
            "the window does not grow"
        );
        assert!(long.contains("answer 499") && !long.contains("answer 100 "));
    }

    #[test]
    fn effective_actions_drop_slide_effects_off_slides_and_never_offer_script_actions() {
        let course = sample_course();
        let slide = first_scene(&course, "slide");
        let quiz = first_scene(&course, "quiz");
        let mut t = teacher();
        t.allowed_actions.push(ActionKind::Speech);
        t.allowed_actions.push(ActionKind::WidgetReveal);
        let on_slide = effective_actions(&t, Some(&slide.content));
        assert!(on_slide.contains(&ActionKind::Spotlight) && on_slide.contains(&ActionKind::Laser));
        assert!(
            !on_slide.contains(&ActionKind::Speech)
                && !on_slide.contains(&ActionKind::WidgetReveal)
        );
        let on_quiz = effective_actions(&t, Some(&quiz.content));
        assert!(!on_quiz.contains(&ActionKind::Spotlight) && !on_quiz.contains(&ActionKind::Laser));
        assert!(
            on_quiz.contains(&ActionKind::PlayVideo) && on_quiz.contains(&ActionKind::WbDrawText)
        );
    }

    fn agent_ctx<'a>(
        agent: &'a AgentProfile,
        scene: Option<&'a Scene>,
        turns: &'a [TurnSummary],
        learner: &'a LearnerProfile,
    ) -> AgentContext<'a> {
        AgentContext {
            agent,
            course_title: "How a transformer reads a sentence",
            course_description: "Attention, step by step",
            language: "zh-CN",
            scene,
            turns,
            ledger: &[],
            learner,
            discussion: None,
            whiteboard_open: false,
            answering_learner: false,
        }
    }

    #[test]
    fn an_agent_prompt_gives_its_example_in_the_course_language_and_ends_with_it() {
        let course = sample_course();
        let slide = first_scene(&course, "slide");
        let quiz = first_scene(&course, "quiz");
        let none = LearnerProfile::default();
        let t = teacher();

        let on_slide = agent_prompt(&agent_ctx(&t, Some(slide), &[], &none));
        assert!(on_slide.contains("{\"type\":\"text\",\"content\":\"先看这一部分。\"}"));
        assert!(!on_slide.contains("Look at this part first."));
        let on_quiz = agent_prompt(&agent_ctx(&t, Some(quiz), &[], &none));
        assert!(on_quiz.contains("\"content\":\"关键概念\""));
        assert!(on_quiz.contains("这就是关键概念。"));
        let last = on_slide.trim_end().lines().last().unwrap();
        assert!(
            last.contains("in Chinese"),
            "the prompt's last line: {last}"
        );

        let english = agent_prompt(&AgentContext {
            language: "en",
            ..agent_ctx(&t, Some(slide), &[], &none)
        });
        assert!(english.contains("Look at this part first.") && !english.contains("先看"));
        assert!(english
            .trim_end()
            .ends_with("spoken text in English, your role's length."));
    }

    #[test]
    fn agent_prompts_follow_the_role_and_the_scene() {
        let course = sample_course();
        let slide = first_scene(&course, "slide");
        let quiz = first_scene(&course, "quiz");
        let none = LearnerProfile::default();
        let (t, a, s) = (teacher(), assistant(), student());

        let teacher_prompt = agent_prompt(&agent_ctx(&t, Some(slide), &[], &none));
        assert!(teacher_prompt.contains("LEAD TEACHER"));
        assert!(teacher_prompt
            .lines()
            .any(|l| l.starts_with("- spotlight:")));
        assert!(teacher_prompt.contains("\"element_id\":\"<a slide element id>\""));
        assert!(teacher_prompt.contains("Slide elements ("));
        if let SceneContent::Slide(content) = &slide.content {
            assert!(teacher_prompt.contains(&format!("[{}]", content.elements[0].id())));
        }
        assert!(teacher_prompt.contains("Speak Chinese"));
        assert!(!teacher_prompt.contains("# Already said this round"));
        assert!(!teacher_prompt.contains("# Answering the learner"));

        let quiz_prompt = agent_prompt(&agent_ctx(&t, Some(quiz), &[], &none));
        assert!(!quiz_prompt
            .lines()
            .any(|l| l.starts_with("- spotlight:") || l.starts_with("- laser:")));
        assert!(quiz_prompt.contains("- question: "));

        let assistant_prompt = agent_prompt(&agent_ctx(&a, Some(slide), &[], &none));
        assert!(
            assistant_prompt.contains("TEACHING ASSISTANT")
                && !assistant_prompt.contains("LEAD TEACHER")
        );
        let student_prompt = agent_prompt(&agent_ctx(&s, Some(slide), &[], &none));
        assert!(student_prompt.contains("STUDENT") && !student_prompt.contains("LEAD TEACHER"));
        assert!(student_prompt.contains("about 50 characters"));
        assert!(
            !student_prompt
                .lines()
                .any(|l| l.starts_with("- spotlight:")),
            "students have no slide effects by default"
        );
    }

    #[test]
    fn peers_the_open_question_the_profile_and_the_discussion_shape_the_agent_prompt() {
        let (t, s) = (teacher(), student());
        let turns = [turn(
            &t,
            "Attention weighs every word against every other word.",
        )];
        let learner = LearnerProfile {
            nickname: Some("Sam".into()),
            bio: None,
        };
        let mut ctx = agent_ctx(&s, None, &turns, &learner);
        ctx.answering_learner = true;
        let discussion = DiscussionContext {
            topic: "RNNs or transformers?".into(),
            prompt: None,
            initiator: None,
        };
        ctx.discussion = Some(&discussion);
        let prompt = agent_prompt(&ctx);
        assert!(prompt.contains("# Already said this round"));
        assert!(prompt.contains("Attention weighs every word"));
        assert!(prompt.contains("# Answering the learner"));
        assert!(prompt.contains("Name: Sam"));
        assert!(prompt.contains("RNNs or transformers?"));
        assert!(prompt.contains("joining a discussion"));

        // The agent's own turn is not listed as someone else's.
        let own = [turn(&s, "I wonder about that.")];
        let prompt = agent_prompt(&agent_ctx(&s, None, &own, &LearnerProfile::default()));
        assert!(!prompt.contains("# Already said this round"));
    }

    #[test]
    fn an_agent_without_actions_is_told_it_can_only_speak() {
        let mut s = student();
        s.allowed_actions.clear();
        let prompt = agent_prompt(&agent_ctx(&s, None, &[], &LearnerProfile::default()));
        assert!(prompt.contains("None: you can only speak."));
        assert!(!prompt.contains("# Whiteboard\n"));
        let _ = Speaker::System;
    }
}
