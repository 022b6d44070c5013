//! The player's `Narrator` port over the browser's Web Speech API (speechSynthesis).
//!
//! The player hands over one sentence at a time (Chrome cuts long utterances short). When an
//! utterance ends, its id is queued; the classroom loop drains the queue on the next frame and
//! tells the player, so no callback ever re-enters the player.

use std::cell::RefCell;
use std::rc::Rc;

use aula_player::{Narrator, SpokenLine};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{
    SpeechSynthesis, SpeechSynthesisErrorCode, SpeechSynthesisErrorEvent, SpeechSynthesisUtterance,
};

const KEPT_HANDLERS: usize = 32;

pub struct WebSpeech {
    synth: SpeechSynthesis,
    finished: Rc<RefCell<Vec<u64>>>,
    // Kept alive while their utterance may still fire: a cancelled utterance reports its
    // error event later, and a dropped closure would throw. Old ones are trimmed.
    handlers: Vec<Closure<dyn FnMut(web_sys::Event)>>,
}

impl WebSpeech {
    /// The browser's speech synthesis, when it has at least one voice for `lang`'s language.
    pub fn for_language(lang: &str) -> Option<WebSpeech> {
        let synth = leptos::prelude::window().speech_synthesis().ok()?;
        voice_for(&synth, lang)?;
        Some(WebSpeech {
            synth,
            finished: Rc::default(),
            handlers: Vec::new(),
        })
    }

    /// Ids of utterances that ended (or failed) since the last call.
    pub fn take_finished(&self) -> Vec<u64> {
        std::mem::take(&mut *self.finished.borrow_mut())
    }
}

/// The voice for `lang`: an exact match of the tag (`zh-CN`), else one of the same language.
fn voice_for(synth: &SpeechSynthesis, lang: &str) -> Option<web_sys::SpeechSynthesisVoice> {
    let wanted = lang.to_ascii_lowercase().replace('_', "-");
    let prefix = wanted.split('-').next().unwrap_or(&wanted).to_owned();
    let voices: Vec<web_sys::SpeechSynthesisVoice> = synth
        .get_voices()
        .iter()
        .filter_map(|v| v.dyn_into().ok())
        .collect();
    voices
        .iter()
        .find(|v| v.lang().to_ascii_lowercase().replace('_', "-") == wanted)
        .or_else(|| {
            voices
                .iter()
                .find(|v| v.lang().to_ascii_lowercase().starts_with(&prefix))
        })
        .cloned()
}

impl Narrator for WebSpeech {
    fn speak(&mut self, utterance: &SpokenLine) {
        self.synth.cancel();
        if self.handlers.len() > KEPT_HANDLERS {
            self.handlers.drain(..self.handlers.len() - KEPT_HANDLERS);
        }
        let Ok(spoken) = SpeechSynthesisUtterance::new_with_text(&utterance.text) else {
            self.finished.borrow_mut().push(utterance.id);
            return;
        };
        spoken.set_lang(&utterance.lang);
        spoken.set_rate(utterance.rate as f32);
        if let Some(voice) = voice_for(&self.synth, &utterance.lang) {
            spoken.set_voice(Some(&voice));
        }
        let id = utterance.id;
        let finished = self.finished.clone();
        let on_end =
            Closure::<dyn FnMut(web_sys::Event)>::new(move |_| finished.borrow_mut().push(id));
        let finished = self.finished.clone();
        let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |event: web_sys::Event| {
            // A cancel we asked for is not a failure; anything else skips the sentence.
            let cancelled = event
                .dyn_ref::<SpeechSynthesisErrorEvent>()
                .is_some_and(|e| {
                    matches!(
                        e.error(),
                        SpeechSynthesisErrorCode::Canceled | SpeechSynthesisErrorCode::Interrupted
                    )
                });
            if !cancelled {
                finished.borrow_mut().push(id);
            }
        });
        spoken.set_onend(Some(on_end.as_ref().unchecked_ref()));
        spoken.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        self.handlers.push(on_end);
        self.handlers.push(on_error);
        self.synth.speak(&spoken);
    }

    fn cancel(&mut self) {
        self.synth.cancel();
    }
}
