//! One learner's playback of one course: the pure `CoursePlayer` driven by the page's clock
//! (requestAnimationFrame), the Web Speech port, and the resume point kept in IndexedDB.

use aula_course::Course;
use aula_director::session::resume_key;
use aula_player::{
    Command, CoursePlayer, Narrator, Output, PlayState, PlayerOptions, Position, Stage,
};
use aula_storage::{get_json, Collection};
use leptos::prelude::*;

use super::speech::WebSpeech;
use crate::library::open_store;
use crate::now_ms;
use crate::preferences;

/// How often the resume point is saved while playing, in page milliseconds.
const SAVE_EVERY_MS: f64 = 4000.0;

/// Everything the classroom view reads and the one way it acts: [`Lecture::send`].
#[derive(Clone, Copy)]
pub struct Lecture {
    player: StoredValue<CoursePlayer, LocalStorage>,
    speech: StoredValue<Option<WebSpeech>, LocalStorage>,
    last_saved_ms: StoredValue<f64>,
    alive: StoredValue<bool>,
    /// The player's view of the moment; replaced only when it changes.
    pub stage: RwSignal<Stage>,
    /// No voice: captions carry the narration (chosen, or forced when the browser has none).
    pub captions_only: RwSignal<bool>,
    /// The browser has a voice for the course's language.
    pub voice_available: bool,
    pub speed: RwSignal<f64>,
    /// Whether the subtitle bar is shown (key C).
    pub captions_visible: RwSignal<bool>,
    pub course_id: StoredValue<String>,
    /// The latest quiz check: (scene, points earned, points possible).
    pub quiz_result: RwSignal<Option<(usize, u32, u32)>>,
    /// Shown by another page (embed, SCORM, offline file): no provider, no settings.
    pub hosted: bool,
}

impl Lecture {
    pub fn new(course: Course) -> Lecture {
        let speech = WebSpeech::for_language(&course.language);
        let voice_available = speech.is_some();
        let captions_only = preferences::saved_captions_only() || !voice_available;
        let speed = preferences::saved_speed();
        let course_id = course.id.clone();
        let player = CoursePlayer::new(
            course,
            PlayerOptions {
                captions_only,
                speed,
                auto_advance: true,
                live_discussion: false,
            },
        );
        let stage = RwSignal::new(player.stage().clone());
        Lecture {
            player: StoredValue::new_local(player),
            speech: StoredValue::new_local(speech),
            last_saved_ms: StoredValue::new(0.0),
            alive: StoredValue::new(true),
            stage,
            captions_only: RwSignal::new(captions_only),
            voice_available,
            speed: RwSignal::new(speed),
            captions_visible: RwSignal::new(true),
            course_id: StoredValue::new(course_id),
            quiz_result: RwSignal::new(None),
            hosted: false,
        }
    }

    pub fn course<U>(&self, read: impl FnOnce(&Course) -> U) -> U {
        self.player.with_value(|p| read(p.course()))
    }

    pub fn send(&self, command: Command) {
        match &command {
            Command::SetSpeed(speed) => {
                self.speed.set(*speed);
                preferences::save_speed(*speed);
            }
            Command::SetCaptionsOnly(on) => {
                self.captions_only.set(*on);
                preferences::save_captions_only(*on);
            }
            _ => {}
        }
        let now = now_ms();
        let outputs = self
            .player
            .try_update_value(|p| p.handle(command, now))
            .unwrap_or_default();
        self.apply(outputs);
    }

    fn apply(&self, outputs: Vec<Output>) {
        let mut save = false;
        for output in outputs {
            match output {
                Output::Speak(utterance) => self.speech.update_value(|s| {
                    if let Some(speech) = s {
                        speech.speak(&utterance);
                    }
                }),
                Output::CancelSpeech => self.speech.update_value(|s| {
                    if let Some(speech) = s {
                        speech.cancel();
                    }
                }),
                Output::SceneChanged(_) | Output::CourseEnded => save = true,
                Output::StateChanged(state) => {
                    save |= matches!(
                        state,
                        PlayState::Paused | PlayState::Interrupted | PlayState::Ended
                    )
                }
                Output::Notice(text) => leptos::logging::log!("player: {text}"),
            }
        }
        // try_*: a save finishing after the learner left the classroom finds everything gone.
        let Some(fresh) = self.player.try_with_value(|p| p.stage().clone()) else {
            return;
        };
        if self.stage.try_with_untracked(|s| *s != fresh) == Some(true) {
            self.stage.try_set(fresh);
        }
        if save {
            self.save_position();
        }
    }

    /// One animation frame: finished utterances, then the clock.
    fn frame(&self) {
        let now = now_ms();
        let finished = self
            .speech
            .with_value(|s| s.as_ref().map(WebSpeech::take_finished).unwrap_or_default());
        let mut outputs = Vec::new();
        for id in finished {
            outputs.extend(
                self.player
                    .try_update_value(|p| p.speech_ended(id, now))
                    .unwrap_or_default(),
            );
        }
        outputs.extend(
            self.player
                .try_update_value(|p| p.tick(now))
                .unwrap_or_default(),
        );
        self.apply(outputs);
        let playing = self.stage.with_untracked(|s| s.state == PlayState::Playing);
        if playing && now - self.last_saved_ms.get_value() > SAVE_EVERY_MS {
            self.save_position();
        }
    }

    /// Drives the player until the classroom is left.
    pub fn start(&self) {
        let session = *self;
        fn schedule(session: Lecture) {
            request_animation_frame(move || {
                if session.alive.try_get_value() == Some(true) {
                    session.frame();
                    schedule(session);
                }
            });
        }
        schedule(session);
        on_cleanup(move || {
            session.alive.set_value(false);
            session.speech.update_value(|s| {
                if let Some(speech) = s {
                    speech.cancel();
                }
            });
        });
    }

    pub fn save_position(&self) {
        self.last_saved_ms.set_value(now_ms());
        let position = self.player.with_value(|p| p.position());
        crate::store::put_json_later(
            Collection::Sessions,
            resume_key(&self.course_id.get_value()),
            position,
            "classroom: the resume point was not saved",
        );
    }

    /// Puts the player where the learner left this course last time, if anywhere.
    pub fn restore_saved_position(&self) {
        let session = *self;
        let key = resume_key(&self.course_id.get_value());
        leptos::task::spawn_local(async move {
            let Ok(store) = open_store().await else {
                return;
            };
            match get_json::<_, Position>(&store, Collection::Sessions, &key).await {
                Ok(Some(position)) => {
                    let now = now_ms();
                    let outputs = session
                        .player
                        .try_update_value(|p| p.restore(&position, now))
                        .unwrap_or_default();
                    session.apply(outputs);
                }
                Ok(None) => {}
                Err(error) => {
                    leptos::logging::warn!("classroom: ignored the saved resume point: {error}")
                }
            }
        });
    }
}
