//! The player: the course-level playback state machine. It walks a course scene by scene over
//! each scene's resolved [`Timeline`], decides what is spoken and when (through the [`Narrator`]
//! port, as [`Output`]s), holds the script for speech, discussions and learners, and says what
//! the view shows as a [`Stage`], a pure fold over the timeline, so seeking rebuilds the
//! whiteboard and the effects exactly.
//!
//! It never reads a clock or speaks itself: every call is given `now_ms`, and the caller carries
//! out the outputs (the app over Web Speech and `requestAnimationFrame`, tests with plain
//! numbers and a recorder). It must never depend on a browser type, a timer or an async
//! runtime; of Aula's crates only on `aula-course` and `aula-timeline`.
//!
//! # How the app drives it
//!
//! 1. The classroom loads the course (IndexedDB first, then the bundled samples under
//!    `/courses/`), reads it with `Course::from_json`, and creates a [`CoursePlayer`].
//! 2. Every animation frame it hands finished utterances to [`CoursePlayer::speech_ended`],
//!    then calls [`CoursePlayer::tick`]; the speech adapter only queues what finished, so no
//!    callback re-enters the player. Buttons and keys go through [`CoursePlayer::handle`].
//! 3. The app carries out the [`Output`]s (speak, cancel speech, scene and state changes). The
//!    new [`Stage`] replaces the view's signal only when it differs, and memos split it so each
//!    part of the view updates alone.
//! 4. The resume point ([`Position`]) is saved on a scene change, a pause, an interrupt, the end,
//!    and every few seconds while playing, and restored when the course opens again.
//! 5. Without a voice for the course's language, or when the learner chooses, narration is
//!    captions only, timed by the reading estimate.
//!
//! While the class talks, agents' actions come in as [`Command::Live`] and are laid over the
//! lecture by the live layer (`live.rs`); the lecture's timeline never changes.

pub mod layout;
mod live;
pub mod progress;
mod sentences;
mod stage;

use std::collections::{HashMap, HashSet};

use aula_course::action::Speech as SpeechAction;
use aula_course::scene::SceneContent;
use aula_course::{Action, AgentRole, Course};
use aula_timeline::{resolve, DurationsFrom, Segment, Timeline};
use serde::{Deserialize, Serialize};

pub use sentences::sentences;
pub use stage::{
    BoardContent, BoardItem, Caption, CodeLine, DiscussionCue, Rect, Stage, LATEX_DEFAULT_HEIGHT,
};

use live::LiveLayer;
use stage::{sentence_windows, Board, ScenePlan};

/// The slowest and fastest playback speeds.
pub const MIN_SPEED: f64 = 0.5;
pub const MAX_SPEED: f64 = 2.0;
/// The pause between the end of a slide scene and the next scene, in wall-clock ms.
pub const SCENE_BEAT_MS: f64 = 1500.0;

/// A voice. Implemented by the app over Web Speech, and by a recorder in tests. When an
/// utterance has been spoken (or failed), the caller reports it with
/// [`CoursePlayer::speech_ended`]; a cancelled one needs no report.
pub trait Narrator {
    fn speak(&mut self, utterance: &SpokenLine);
    fn cancel(&mut self);
}

/// Hands the speech outputs of one call to `speech`, in order.
pub fn perform_speech(outputs: &[Output], speech: &mut dyn Narrator) {
    for output in outputs {
        match output {
            Output::Speak(utterance) => speech.speak(utterance),
            Output::CancelSpeech => speech.cancel(),
            _ => {}
        }
    }
}

/// One sentence to say aloud.
#[derive(Debug, Clone, PartialEq)]
pub struct SpokenLine {
    /// Unique for the player's life; reported back to [`CoursePlayer::speech_ended`].
    pub id: u64,
    pub text: String,
    /// The course's language tag.
    pub lang: String,
    /// The agent id of who says it.
    pub speaker: String,
    /// The playback speed.
    pub rate: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PlayerOptions {
    /// No voice: captions carry the narration, timed by the timeline.
    pub captions_only: bool,
    /// 0.5 to 2; anything else is clamped.
    pub speed: f64,
    /// A slide scene moves on to the next one by itself after a short beat.
    pub auto_advance: bool,
    /// An AI provider is configured, so discussions can run live.
    pub live_discussion: bool,
}

impl Default for PlayerOptions {
    fn default() -> Self {
        PlayerOptions {
            captions_only: false,
            speed: 1.0,
            auto_advance: true,
            live_discussion: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Play,
    Pause,
    TogglePlay,
    /// Jump to `ms` into scene `scene` (both clamped).
    SeekScene {
        scene: usize,
        ms: f64,
    },
    NextScene,
    PreviousScene,
    SetSpeed(f64),
    SetCaptionsOnly(bool),
    /// Whether an AI provider is ready, so discussions without a recording are offered and run
    /// live (the app learns it after the player is made). The position is kept.
    SetLiveDiscussion(bool),
    /// The learner wants the floor: stop at a clean point.
    Interrupt,
    /// Go on after an interruption (or a pause).
    Resume,
    AcceptDiscussion,
    SkipDiscussion,
    /// The learner is done with a quiz, interactive or project scene.
    FinishScene,
    /// An action of the live classroom (an agent's drawing, spotlight, …), shown on top of the
    /// lecture's stage of the current scene; see the `live` module for the rules.
    Live(Action),
}

/// What the caller must do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    Speak(SpokenLine),
    CancelSpeech,
    SceneChanged(usize),
    StateChanged(PlayState),
    CourseEnded,
    /// Something to tell the learner (also kept in [`Stage::notices`] when it is about the
    /// scene).
    Notice(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayState {
    /// Not started yet.
    Idle,
    Playing,
    Paused,
    /// Stopped for the learner (a question, a live discussion); `Resume` goes on.
    Interrupted,
    /// A discussion is offered: `AcceptDiscussion` or `SkipDiscussion`.
    DiscussionOffered,
    /// A quiz, interactive or project scene waits for `FinishScene`.
    WaitingForLearner,
    /// The course is over.
    Ended,
}

impl PlayState {
    /// The state's name, lower case (the stage's `data-state`).
    pub fn name(self) -> &'static str {
        match self {
            PlayState::Idle => "idle",
            PlayState::Playing => "playing",
            PlayState::Paused => "paused",
            PlayState::Interrupted => "interrupted",
            PlayState::DiscussionOffered => "discussionoffered",
            PlayState::WaitingForLearner => "waitingforlearner",
            PlayState::Ended => "ended",
        }
    }
}

/// A resume point: which scene, and how far into it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Position {
    pub scene_id: String,
    pub scene_ms: f64,
}

/// How long past a sentence's share of time (in scene ms) the script waits for the voice to
/// report it spoken before going on without it.
pub const VOICE_TIMEOUT_MS: f64 = 15_000.0;

/// The notice when the voice stops reporting.
pub const NOTICE_VOICE_TIMED_OUT: &str =
    "The voice stopped answering, so the lesson went on without it. Turn on captions if this \
     keeps happening.";

/// The notice for a discussion skipped for want of a provider.
pub const NOTICE_DISCUSSION_NEEDS_PROVIDER: &str =
    "This discussion needs an AI provider (Settings → AI provider); skipped.";

/// Where the script is in the current scene.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Cursor {
    /// Index of the first segment not yet finished.
    next: usize,
    /// Whether that segment has begun (its start outputs were given).
    entered: bool,
}

/// Wall time `wall` was scene time `ms`; while playing, scene time runs at `speed` from there.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Anchor {
    wall: f64,
    ms: f64,
}

/// The sentence being spoken aloud.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Speaking {
    segment: usize,
    sentence: usize,
    utterance: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CoursePlayer {
    course: Course,
    options: PlayerOptions,
    /// Real lengths (ms) of audio clips and videos, by action id.
    media_ms: HashMap<String, u64>,
    plans: Vec<ScenePlan>,
    /// Discussions whose recording the learner chose to hear: their turns are in the timeline.
    accepted: HashSet<String>,
    empty: Timeline,
    scene: usize,
    ms: f64,
    state: PlayState,
    cursor: Cursor,
    anchor: Option<Anchor>,
    speaking: Option<Speaking>,
    /// When the beat after a finished slide scene began.
    beat_from: Option<f64>,
    /// The segment of the discussion on offer.
    offered: Option<usize>,
    /// The current segment became current during this call, so it finishes in a later one:
    /// every blocking action is current when some call returns, however long a frame took.
    fresh: bool,
    next_utterance: u64,
    live: LiveLayer,
    stage: Stage,
}

impl CoursePlayer {
    /// A player at the start of `course` (already validated by the caller), idle.
    pub fn new(course: Course, options: PlayerOptions) -> Self {
        Self::with_media_lengths(course, options, HashMap::new())
    }

    /// Like [`CoursePlayer::new`], knowing the real lengths in ms of audio clips and videos by
    /// the id of the action that plays them; speeches without one get the reading-time
    /// estimate, and videos without one do not hold the script.
    pub fn with_media_lengths(
        course: Course,
        mut options: PlayerOptions,
        media_ms: HashMap<String, u64>,
    ) -> Self {
        options.speed = clamp_speed(options.speed).unwrap_or(1.0);
        let mut player = CoursePlayer {
            course,
            options,
            media_ms,
            plans: Vec::new(),
            accepted: HashSet::new(),
            empty: Timeline::default(),
            scene: 0,
            ms: 0.0,
            state: PlayState::Idle,
            cursor: Cursor::default(),
            anchor: None,
            speaking: None,
            beat_from: None,
            offered: None,
            fresh: false,
            next_utterance: 1,
            live: LiveLayer::default(),
            stage: empty_stage(),
        };
        player.plan_all();
        player.refresh_stage();
        player
    }

    pub fn course(&self) -> &Course {
        &self.course
    }

    pub fn options(&self) -> &PlayerOptions {
        &self.options
    }

    /// What the view shows now.
    pub fn stage(&self) -> &Stage {
        &self.stage
    }

    /// The timeline of scene `scene` (clamped), for the progress and seek bars.
    pub fn scene_timeline(&self, scene: usize) -> &Timeline {
        match self
            .plans
            .get(scene.min(self.plans.len().saturating_sub(1)))
        {
            Some(plan) => &plan.timeline,
            None => &self.empty,
        }
    }

    /// The index (into the current scene's timeline segments) of the blocking segment the
    /// script is in, once it has begun.
    pub fn current_segment(&self) -> Option<usize> {
        let segment = self.segments().get(self.cursor.next)?;
        (self.cursor.entered && segment.blocking).then_some(self.cursor.next)
    }

    /// Where to resume later: the current scene and the start of the sentence being spoken
    /// (or the exact position between speeches).
    pub fn position(&self) -> Position {
        Position {
            scene_id: self
                .course
                .scenes
                .get(self.scene)
                .map(|s| s.id.clone())
                .unwrap_or_default(),
            scene_ms: self.sentence_start().unwrap_or(self.ms),
        }
    }

    /// Goes to a saved resume point, paused. A point in a scene this course no longer has is
    /// ignored with a notice. (OpenMAIC restarts every scene from its first action on resume;
    /// this resumes at the sentence.)
    pub fn restore(&mut self, position: &Position, now_ms: f64) -> Vec<Output> {
        self.fresh = false;
        let mut out = Vec::new();
        match self
            .course
            .scenes
            .iter()
            .position(|s| s.id == position.scene_id)
        {
            Some(scene) => self.jump(
                scene,
                position.scene_ms,
                PlayState::Paused,
                now_ms,
                &mut out,
            ),
            None => out.push(Output::Notice(
                "The place saved last time is no longer in this course (it has changed), so \
                 playback stays where it is."
                    .into(),
            )),
        }
        self.finish(out)
    }

    pub fn handle(&mut self, command: Command, now_ms: f64) -> Vec<Output> {
        self.fresh = false;
        let mut out = Vec::new();
        self.advance(now_ms, &mut out);
        match command {
            Command::Play => self.play(now_ms, &mut out),
            Command::Pause => {
                if self.state == PlayState::Playing {
                    self.stop_at_sentence(PlayState::Paused, &mut out);
                }
            }
            Command::TogglePlay => {
                if self.state == PlayState::Playing {
                    self.stop_at_sentence(PlayState::Paused, &mut out);
                } else {
                    self.play(now_ms, &mut out);
                }
            }
            Command::SeekScene { scene, ms } => {
                let state = self.state_after_jump(false);
                self.jump(scene, ms, state, now_ms, &mut out);
            }
            Command::NextScene => {
                if self.scene + 1 < self.plans.len() {
                    let state = self.state_after_jump(true);
                    self.jump(self.scene + 1, 0.0, state, now_ms, &mut out);
                } else {
                    self.end_course(&mut out);
                }
            }
            Command::PreviousScene => {
                let state = self.state_after_jump(false);
                self.jump(self.scene.saturating_sub(1), 0.0, state, now_ms, &mut out);
            }
            Command::SetSpeed(speed) => self.set_speed(speed, now_ms, &mut out),
            Command::SetCaptionsOnly(on) => self.set_captions_only(on, now_ms, &mut out),
            Command::SetLiveDiscussion(on) => self.set_live_discussion(on, now_ms),
            Command::Interrupt => {
                if matches!(
                    self.state,
                    PlayState::Playing | PlayState::Paused | PlayState::Idle
                ) {
                    self.stop_at_sentence(PlayState::Interrupted, &mut out);
                }
            }
            Command::Resume => {
                self.live.end_round();
                if matches!(self.state, PlayState::Interrupted | PlayState::Paused) {
                    self.play(now_ms, &mut out);
                }
            }
            Command::AcceptDiscussion => self.accept_discussion(now_ms, &mut out),
            Command::SkipDiscussion => {
                if self.state == PlayState::DiscussionOffered {
                    self.offered = None;
                    self.start_playing(now_ms, &mut out);
                }
            }
            Command::Live(action) => {
                let lecture = self.plan().map(|p| p.board_at(self.ms)).unwrap_or_default();
                self.live.apply(self.scene, &lecture, &action);
            }
            Command::FinishScene => {
                if self.scene_waits_for_learner() {
                    if self.scene + 1 < self.plans.len() {
                        self.jump(self.scene + 1, 0.0, PlayState::Playing, now_ms, &mut out);
                    } else {
                        self.end_course(&mut out);
                    }
                }
            }
        }
        self.finish(out)
    }

    /// Moves playback on to `now_ms`. Call it every animation frame.
    pub fn tick(&mut self, now_ms: f64) -> Vec<Output> {
        self.fresh = false;
        let mut out = Vec::new();
        self.advance(now_ms, &mut out);
        self.finish(out)
    }

    /// SpokenLine `utterance_id` has been spoken (or failed to be). Stale ids are ignored.
    pub fn speech_ended(&mut self, utterance_id: u64, now_ms: f64) -> Vec<Output> {
        self.fresh = false;
        let mut out = Vec::new();
        let Some(speaking) = self.speaking.filter(|s| s.utterance == utterance_id) else {
            return out;
        };
        self.advance(now_ms, &mut out);
        if self.state == PlayState::Playing && self.speaking == Some(speaking) {
            self.speaking = None;
            self.sentence_spoken(speaking, now_ms, &mut out);
            self.advance(now_ms, &mut out);
        }
        self.finish(out)
    }

    /// The voice is done with a sentence: on to the next one, or past the speech's end.
    fn sentence_spoken(&mut self, spoken: Speaking, now: f64, out: &mut Vec<Output>) {
        let Some(segment) = self.segments().get(spoken.segment) else {
            return;
        };
        let end = segment.end_ms() as f64;
        let next_start = sentence_windows(segment)
            .and_then(|w| w.get(spoken.sentence + 1).map(|next| next.start));
        match next_start {
            Some(start) => {
                // Spoken faster than its share of time: catch up with the voice.
                self.ms = self.ms.max(start);
                self.speak(spoken.segment, spoken.sentence + 1, out);
            }
            // The last sentence: the speech is over, however early.
            None => self.ms = self.ms.max(end),
        }
        self.anchor = Some(Anchor {
            wall: now,
            ms: self.ms,
        });
    }

    fn finish(&mut self, out: Vec<Output>) -> Vec<Output> {
        self.refresh_stage();
        out
    }

    // ---- planning ----

    /// Plans every scene, each starting from the board the one before leaves, so a seek into
    /// any scene starts from its cached board.
    fn plan_all(&mut self) {
        let mut board = Board::default();
        for index in 0..self.course.scenes.len() {
            let timeline = self.resolve_scene(index, &board);
            let (plan, after) = ScenePlan::new(timeline, board);
            self.plans.push(plan);
            board = after;
        }
    }

    fn resolve_scene(&self, scene: usize, board: &Board) -> Timeline {
        let known = DurationsFrom(|a: &Action| self.known_ms(a));
        resolve(&self.effective_actions(scene), board.state(), &known)
    }

    /// A scene's script, with the turns of every accepted recorded discussion right after it.
    fn effective_actions(&self, scene: usize) -> Vec<Action> {
        let mut actions = Vec::new();
        for action in &self.course.scenes[scene].actions {
            actions.push(action.clone());
            if let Action::Discussion(d) = action {
                if self.accepted.contains(&d.id) {
                    actions.extend(d.recording.iter().enumerate().map(|(n, turn)| {
                        Action::Speech(SpeechAction {
                            id: format!("{}#turn{}", d.id, n + 1),
                            text: turn.text.clone(),
                            speaker: Some(turn.speaker.clone()),
                            audio_id: None,
                        })
                    }));
                }
            }
        }
        actions
    }

    fn known_ms(&self, action: &Action) -> Option<u64> {
        match action {
            // Nothing to offer: the discussion takes no time, and a notice says why.
            Action::Discussion(_) if self.discussion_is_skipped(action) => Some(0),
            _ => self.media_ms.get(action.id()).copied(),
        }
    }

    fn discussion_is_skipped(&self, action: &Action) -> bool {
        matches!(action, Action::Discussion(d) if !self.options.live_discussion && d.recording.is_empty())
    }

    /// The notice a segment leaves in the scene, if any.
    fn notice_for(&self, action: &Action) -> Option<String> {
        match action {
            Action::Unknown { type_name, .. } => Some(format!(
                "Skipped a \"{type_name}\" action: this version of Aula cannot play it."
            )),
            Action::Discussion(_) if self.discussion_is_skipped(action) => {
                Some(NOTICE_DISCUSSION_NEEDS_PROVIDER.into())
            }
            _ => None,
        }
    }

    // ---- where we are ----

    fn segments(&self) -> &[Segment] {
        &self.scene_timeline(self.scene).segments
    }

    fn total_ms(&self) -> f64 {
        self.scene_timeline(self.scene).total_ms as f64
    }

    fn plan(&self) -> Option<&ScenePlan> {
        self.plans.get(self.scene)
    }

    fn scene_content(&self) -> Option<&SceneContent> {
        self.course.scenes.get(self.scene).map(|s| &s.content)
    }

    fn scene_waits_for_learner(&self) -> bool {
        self.scene_content()
            .is_some_and(|c| !matches!(c, SceneContent::Slide(_)))
    }

    fn at_scene_end(&self) -> bool {
        self.cursor.next >= self.segments().len() && self.ms >= self.total_ms()
    }

    /// The start of the sentence playback is in, when it is in a speech.
    fn sentence_start(&self) -> Option<f64> {
        let (segment, sentence) = match self.speaking {
            Some(s) => (s.segment, s.sentence),
            None => self.plan()?.speech_at(self.ms)?,
        };
        let windows = sentence_windows(self.segments().get(segment)?)?;
        windows.get(sentence).map(|w| w.start)
    }

    /// The cursor for scene time `t` in the current scene, as playing there leaves it: in the
    /// blocking segment that started before `t` and ends at or after it, else before the first
    /// segment starting at or after `t`.
    fn locate(&self, t: f64) -> Cursor {
        let segments = self.segments();
        let started = segments.partition_point(|s| (s.start_ms as f64) < t);
        let current = segments[..started]
            .iter()
            .rposition(|s| s.blocking && s.duration_ms > 0)
            .filter(|&i| segments[i].end_ms() as f64 >= t);
        match current {
            Some(next) => Cursor {
                next,
                entered: true,
            },
            None => Cursor {
                next: started,
                entered: false,
            },
        }
    }

    /// Scene time by the clock alone: the anchor plus the wall time since, at speed.
    fn clock_ms(&self, now: f64) -> f64 {
        match self.anchor {
            Some(anchor) => anchor.ms + (now - anchor.wall).max(0.0) * self.options.speed,
            None => self.ms,
        }
    }

    /// Where the clock would put the position, within the scene and never backwards.
    fn target_ms(&self, now: f64) -> f64 {
        self.clock_ms(now)
            .clamp(self.ms, self.total_ms().max(self.ms))
    }

    // ---- playing ----

    /// Moves the script on to wall time `now`. A blocking segment finishes only in a call after
    /// the one it became current in, so every blocking action is current for at least one frame
    /// (the view sees it); time not used then is caught up on the next frames, as the anchor
    /// stays.
    fn advance(&mut self, now: f64, out: &mut Vec<Output>) {
        if self.state != PlayState::Playing {
            return;
        }
        if let Some(from) = self.beat_from {
            if now - from >= SCENE_BEAT_MS {
                self.beat_from = None;
                self.jump(self.scene + 1, 0.0, PlayState::Playing, now, out);
            }
            return;
        }
        loop {
            let Some(segment) = self.segments().get(self.cursor.next) else {
                self.ms = self.target_ms(now).max(self.ms);
                if self.ms >= self.total_ms() {
                    self.scene_finished(now, out);
                }
                return;
            };
            let (start, end, blocking) = (
                segment.start_ms as f64,
                segment.end_ms() as f64,
                segment.blocking,
            );
            if !self.cursor.entered {
                if start > self.target_ms(now) {
                    self.ms = self.target_ms(now);
                    return;
                }
                self.ms = self.ms.max(start);
                self.cursor.entered = true;
                self.fresh |= blocking;
                self.enter(self.cursor.next, now, out);
            }
            if !blocking {
                self.cursor = Cursor {
                    next: self.cursor.next + 1,
                    entered: false,
                };
                continue;
            }
            let hold = self.speech_hold(self.cursor.next).unwrap_or(end);
            let target = self.target_ms(now);
            if target < hold || self.fresh {
                self.ms = target.min(hold);
                return;
            }
            self.ms = hold;
            let index = self.cursor.next;
            if let Some(speaking) = self.speaking.filter(|s| s.segment == index) {
                if self.clock_ms(now) < hold + VOICE_TIMEOUT_MS {
                    return; // the voice is not done yet
                }
                // A voice that never reports back must not stall the course.
                self.speaking = None;
                out.push(Output::CancelSpeech);
                out.push(Output::Notice(NOTICE_VOICE_TIMED_OUT.into()));
                self.sentence_spoken(speaking, now, out);
                continue;
            }
            self.cursor = Cursor {
                next: index + 1,
                entered: false,
            };
            self.segment_finished(index, out);
            if self.state != PlayState::Playing {
                return;
            }
        }
    }

    /// Where the voice holds the script in speech segment `index`: the end of the share of
    /// time of the sentence being spoken. The cursor waits there for `speech_ended`.
    fn speech_hold(&self, index: usize) -> Option<f64> {
        let speaking = self.speaking.filter(|s| s.segment == index)?;
        let segment = &self.segments()[index];
        let windows = sentence_windows(segment)?;
        windows.get(speaking.sentence).map(|w| w.end)
    }

    /// Segment `index` begins.
    fn enter(&mut self, index: usize, now: f64, out: &mut Vec<Output>) {
        let action = self.segments()[index].action.clone();
        if let Some(notice) = self.notice_for(&action) {
            out.push(Output::Notice(notice));
        }
        if matches!(action, Action::Speech(_)) && !self.options.captions_only {
            // The voice sets the pace from here: time before it spent catching up is dropped.
            self.anchor = Some(Anchor {
                wall: now,
                ms: self.ms,
            });
            self.speak_from_position(out);
        }
    }

    /// Speaks the sentence of the current speech that the position falls in.
    fn speak_from_position(&mut self, out: &mut Vec<Output>) {
        let Some((segment, sentence)) = self.plan().and_then(|p| p.speech_at(self.ms)) else {
            return;
        };
        if segment == self.cursor.next && self.cursor.entered {
            self.speak(segment, sentence, out);
        }
    }

    fn speak(&mut self, segment: usize, sentence: usize, out: &mut Vec<Output>) {
        let Some(seg) = self.segments().get(segment) else {
            return;
        };
        let Action::Speech(speech) = &seg.action else {
            return;
        };
        let Some(text) = sentence_windows(seg).and_then(|w| w.get(sentence).map(|w| w.text)) else {
            return;
        };
        let utterance = SpokenLine {
            id: self.next_utterance,
            text: text.to_string(),
            lang: self.course.language.clone(),
            speaker: self.speaker_of(speech),
            rate: self.options.speed,
        };
        self.next_utterance += 1;
        self.speaking = Some(Speaking {
            segment,
            sentence,
            utterance: utterance.id,
        });
        out.push(Output::Speak(utterance));
    }

    fn speaker_of(&self, speech: &SpeechAction) -> String {
        speech
            .speaker
            .clone()
            .or_else(|| self.course.teacher().map(|t| t.id.clone()))
            .unwrap_or_else(|| "teacher".into())
    }

    fn cancel_speech(&mut self, out: &mut Vec<Output>) {
        if self.speaking.take().is_some() {
            out.push(Output::CancelSpeech);
        }
    }

    /// Segment `index` is over.
    fn segment_finished(&mut self, index: usize, out: &mut Vec<Output>) {
        let Action::Discussion(d) = &self.segments()[index].action else {
            return;
        };
        if self.accepted.contains(&d.id)
            || self.discussion_is_skipped(&self.segments()[index].action)
        {
            return; // its turns follow in the timeline, or there was nothing to offer
        }
        self.offered = Some(index);
        self.anchor = None;
        self.set_state(PlayState::DiscussionOffered, out);
    }

    fn scene_finished(&mut self, now: f64, out: &mut Vec<Output>) {
        self.cancel_speech(out);
        if self.scene_waits_for_learner() {
            self.anchor = None;
            self.set_state(PlayState::WaitingForLearner, out);
        } else if self.scene + 1 >= self.plans.len() {
            self.end_course(out);
        } else if self.options.auto_advance {
            self.beat_from = Some(now);
        } else {
            self.anchor = None;
            self.set_state(PlayState::Paused, out);
        }
    }

    fn end_course(&mut self, out: &mut Vec<Output>) {
        self.cancel_speech(out);
        self.anchor = None;
        self.beat_from = None;
        self.offered = None;
        self.ms = self.total_ms();
        self.cursor = Cursor {
            next: self.segments().len(),
            entered: false,
        };
        if self.state != PlayState::Ended {
            self.set_state(PlayState::Ended, out);
            out.push(Output::CourseEnded);
        }
    }

    fn set_state(&mut self, state: PlayState, out: &mut Vec<Output>) {
        if self.state != state {
            self.state = state;
            out.push(Output::StateChanged(state));
        }
    }

    fn play(&mut self, now: f64, out: &mut Vec<Output>) {
        match self.state {
            PlayState::Playing | PlayState::DiscussionOffered | PlayState::WaitingForLearner => {}
            PlayState::Ended => {
                if !self.plans.is_empty() {
                    self.jump(0, 0.0, PlayState::Playing, now, out);
                }
            }
            PlayState::Idle | PlayState::Paused | PlayState::Interrupted => {
                if self.plans.is_empty() {
                    self.end_course(out);
                } else if self.at_scene_end() && !self.scene_waits_for_learner() {
                    // Stopped at the end of a slide scene: play goes on to the next.
                    if self.scene + 1 < self.plans.len() {
                        self.jump(self.scene + 1, 0.0, PlayState::Playing, now, out);
                    } else {
                        self.end_course(out);
                    }
                } else {
                    self.start_playing(now, out);
                }
            }
        }
    }

    /// Playing from the position: re-speaks the sentence it is in, then moves on.
    fn start_playing(&mut self, now: f64, out: &mut Vec<Output>) {
        self.set_state(PlayState::Playing, out);
        self.anchor = Some(Anchor {
            wall: now,
            ms: self.ms,
        });
        if !self.options.captions_only && self.speaking.is_none() {
            self.speak_from_position(out);
        }
        self.advance(now, out);
    }

    /// Pauses or interrupts at a clean point: the voice stops and the position goes back to
    /// the start of the sentence, which is spoken again from its start on resume.
    fn stop_at_sentence(&mut self, state: PlayState, out: &mut Vec<Output>) {
        if let Some(start) = self.sentence_start() {
            self.ms = start.min(self.ms);
        }
        self.cancel_speech(out);
        self.anchor = None;
        self.beat_from = None;
        self.set_state(state, out);
    }

    /// The state a jump leaves the player in: playing stays playing (and so does a learner
    /// who moves on from a quiz or an offer), anything else pauses at the new place.
    fn state_after_jump(&self, moving_on: bool) -> PlayState {
        match self.state {
            PlayState::Playing => PlayState::Playing,
            PlayState::WaitingForLearner | PlayState::DiscussionOffered if moving_on => {
                PlayState::Playing
            }
            _ => PlayState::Paused,
        }
    }

    /// Goes to `ms` (clamped) into scene `scene` (clamped), in `state`. Everything the view
    /// shows there comes from the fold, so nothing of the old place lingers and the board is
    /// exactly what playing there builds (OpenMAIC's seek moved the cursor and left the board
    /// as it was).
    fn jump(&mut self, scene: usize, ms: f64, state: PlayState, now: f64, out: &mut Vec<Output>) {
        if self.plans.is_empty() {
            return;
        }
        self.cancel_speech(out);
        self.beat_from = None;
        self.offered = None;
        self.anchor = None;
        let scene = scene.min(self.plans.len() - 1);
        if scene != self.scene {
            self.scene = scene;
            out.push(Output::SceneChanged(scene));
        }
        let ms = if ms.is_finite() { ms } else { 0.0 };
        self.ms = ms.clamp(0.0, self.total_ms());
        self.cursor = self.locate(self.ms);
        self.fresh = true;
        if state == PlayState::Playing {
            self.start_playing(now, out);
        } else {
            self.set_state(state, out);
        }
    }

    fn set_speed(&mut self, speed: f64, now: f64, out: &mut Vec<Output>) {
        let Some(clamped) = clamp_speed(speed) else {
            out.push(Output::Notice(format!(
                "Playback speed {speed} is not a number; keeping {}×.",
                self.options.speed
            )));
            return;
        };
        if clamped != speed {
            out.push(Output::Notice(format!(
                "Playback speed {speed}× is not available; using {clamped}× (from {MIN_SPEED}× to \
                 {MAX_SPEED}×)."
            )));
        }
        // Time so far ran at the old speed; from now on at the new one. A sentence being spoken
        // keeps its rate; the next one gets the new one.
        self.options.speed = clamped;
        if self.anchor.is_some() {
            self.anchor = Some(Anchor {
                wall: now,
                ms: self.ms,
            });
        }
    }

    fn set_captions_only(&mut self, on: bool, now: f64, out: &mut Vec<Output>) {
        if self.options.captions_only == on {
            return;
        }
        self.options.captions_only = on;
        if on {
            self.cancel_speech(out);
        } else if self.state == PlayState::Playing {
            // Say the sentence being captioned, from its start.
            if let Some(start) = self.sentence_start() {
                self.ms = start;
            }
            self.anchor = Some(Anchor {
                wall: now,
                ms: self.ms,
            });
            self.speak_from_position(out);
        }
    }

    fn set_live_discussion(&mut self, on: bool, now: f64) {
        if self.options.live_discussion == on {
            return;
        }
        self.options.live_discussion = on;
        // Discussions change length (a skipped one takes no time): plan again, same place.
        self.plans.clear();
        self.plan_all();
        self.ms = self.ms.clamp(0.0, self.total_ms());
        self.cursor = self.locate(self.ms);
        if self.anchor.is_some() {
            self.anchor = Some(Anchor {
                wall: now,
                ms: self.ms,
            });
        }
    }

    fn accept_discussion(&mut self, now: f64, out: &mut Vec<Output>) {
        if self.state != PlayState::DiscussionOffered {
            return;
        }
        let Some(index) = self.offered.take() else {
            return;
        };
        let Action::Discussion(d) = &self.segments()[index].action else {
            return;
        };
        let id = d.id.clone();
        if self.options.live_discussion {
            // The live classroom takes over; Resume goes on after the discussion.
            self.set_state(PlayState::Interrupted, out);
            return;
        }
        self.accepted.insert(id);
        // The turns go right after the discussion; later scenes' boards do not change.
        self.replan_scene(self.scene);
        self.cursor = Cursor {
            next: index + 1,
            entered: false,
        };
        self.start_playing(now, out);
    }

    fn replan_scene(&mut self, scene: usize) {
        let board = self.plans[scene].board_at_start.clone();
        let timeline = self.resolve_scene(scene, &board);
        self.plans[scene] = ScenePlan::new(timeline, board).0;
    }

    // ---- the view ----

    fn refresh_stage(&mut self) {
        self.live.follow(self.scene);
        let Some(plan) = self.plan() else {
            self.stage = Stage {
                state: self.state,
                ..empty_stage()
            };
            return;
        };
        let t = self.ms;
        let mut board = plan.board_at(t);
        let mut effects = plan.effects_at(t);
        self.live.overlay(self.scene, &mut board, &mut effects);
        let (spotlight, laser) = effects;
        let spoken = self.speaking.map(|s| (s.segment, s.sentence));
        let caption = spoken
            .or_else(|| plan.speech_at(t))
            .and_then(|(segment, sentence)| {
                let seg = plan.timeline.segments.get(segment)?;
                let Action::Speech(speech) = &seg.action else {
                    return None;
                };
                let text = sentence_windows(seg)?.get(sentence)?.text.to_string();
                Some(Caption {
                    speaker: self.speaker_of(speech),
                    text,
                })
            });
        let discussion = match (self.state, self.offered) {
            (PlayState::DiscussionOffered, Some(index)) => {
                match &plan.timeline.segments[index].action {
                    Action::Discussion(d) => Some(DiscussionCue {
                        topic: d.topic.clone(),
                        prompt: d.prompt.clone(),
                        agent_id: d.agent_id.clone().or_else(|| self.first_classmate()),
                        has_recording: !d.recording.is_empty(),
                    }),
                    _ => None,
                }
            }
            _ => None,
        };
        self.stage = Stage {
            scene_index: self.scene,
            state: self.state,
            scene_ms: t,
            scene_total_ms: plan.timeline.total_ms as f64,
            board_open: board.open,
            board: board.items,
            spotlight,
            laser,
            caption,
            discussion,
            video: plan.video_at(t),
            notices: plan.notices_at(t, |a| self.notice_for(a)),
        };
    }

    /// The classmate who opens a discussion that names nobody: the most eager student.
    fn first_classmate(&self) -> Option<String> {
        self.course
            .agents
            .iter()
            .filter(|a| a.role == AgentRole::Student)
            .max_by_key(|a| a.priority)
            .map(|a| a.id.clone())
    }
}

fn clamp_speed(speed: f64) -> Option<f64> {
    speed.is_finite().then(|| speed.clamp(MIN_SPEED, MAX_SPEED))
}

fn empty_stage() -> Stage {
    Stage {
        scene_index: 0,
        state: PlayState::Idle,
        scene_ms: 0.0,
        scene_total_ms: 0.0,
        board_open: false,
        board: Vec::new(),
        spotlight: None,
        laser: None,
        caption: None,
        discussion: None,
        video: None,
        notices: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
