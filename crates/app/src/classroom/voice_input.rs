//! Speaking a question instead of typing it: the browser's speech recognition (Web Speech's
//! `SpeechRecognition`, `webkitSpeechRecognition` in Chromium), where it has one. The button is
//! not shown where it has none. What is heard fills the question box as it comes, for the
//! learner to read and send; nothing is sent by voice alone. It listens in the course's
//! language.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::controls::icon;
use crate::i18n::*;

fn recognizer_class() -> Option<js_sys::Function> {
    let window = web_sys::window()?;
    ["SpeechRecognition", "webkitSpeechRecognition"]
        .into_iter()
        .find_map(|name| {
            js_sys::Reflect::get(&window, &JsValue::from_str(name))
                .ok()
                .filter(JsValue::is_function)
                .map(JsCast::unchecked_into)
        })
}

/// A recognizer listening, with the handlers it calls (kept alive as long as it is).
struct Listening {
    recognizer: JsValue,
    _handlers: Vec<Closure<dyn FnMut(JsValue)>>,
}

impl Listening {
    fn stop(&self) {
        call(&self.recognizer, "stop");
    }
}

fn call(target: &JsValue, method: &str) -> bool {
    js_sys::Reflect::get(target, &JsValue::from_str(method))
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .is_some_and(|f| f.call0(target).is_ok())
}

fn get(target: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// Everything heard so far in one recognition: the best alternative of each result, joined.
fn transcript(event: &JsValue) -> String {
    let results = get(event, "results");
    let count = get(&results, "length").as_f64().unwrap_or(0.0) as u32;
    (0..count)
        .filter_map(|i| {
            let result = js_sys::Reflect::get_u32(&results, i).ok()?;
            let best = js_sys::Reflect::get_u32(&result, 0).ok()?;
            get(&best, "transcript").as_string()
        })
        .collect::<Vec<_>>()
        .join(" ")
        .trim()
        .to_owned()
}

/// The microphone button beside the question box. `into` receives what is heard.
#[component]
pub fn VoiceInput(language: String, into: RwSignal<String>) -> impl IntoView {
    let i18n = use_i18n();
    let available = recognizer_class().is_some();
    let listening = StoredValue::new_local(None::<Listening>);
    let active = RwSignal::new(false);
    let problem = RwSignal::new(None::<String>);

    let start = move || {
        let Some(class) = recognizer_class() else {
            return;
        };
        let Ok(recognizer) = js_sys::Reflect::construct(&class, &js_sys::Array::new()) else {
            problem.set(Some(t_string!(i18n, voice_failed).to_owned()));
            return;
        };
        let set = |key: &str, value: JsValue| {
            let _ = js_sys::Reflect::set(&recognizer, &JsValue::from_str(key), &value);
        };
        set("lang", JsValue::from_str(&language));
        set("interimResults", JsValue::TRUE);
        set("continuous", JsValue::FALSE);
        let on_result = Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
            let heard = transcript(&event);
            if !heard.is_empty() {
                into.try_set(heard);
            }
        });
        let on_error = Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
            let code = get(&event, "error").as_string().unwrap_or_default();
            let message = match code.as_str() {
                // Silence or a stop by the learner is not a problem.
                "no-speech" | "aborted" => None,
                "not-allowed" | "service-not-allowed" => {
                    Some(t_string!(i18n, voice_denied).to_owned())
                }
                _ => Some(t_string!(i18n, voice_failed).to_owned()),
            };
            problem.try_set(message);
        });
        let on_end = Closure::<dyn FnMut(JsValue)>::new(move |_| {
            active.try_set(false);
        });
        set("onresult", on_result.as_ref().clone());
        set("onerror", on_error.as_ref().clone());
        set("onend", on_end.as_ref().clone());
        problem.set(None);
        if call(&recognizer, "start") {
            active.set(true);
            listening.set_value(Some(Listening {
                recognizer,
                _handlers: vec![on_result, on_error, on_end],
            }));
        } else {
            problem.set(Some(t_string!(i18n, voice_failed).to_owned()));
        }
    };
    let toggle = move |_| {
        if active.get_untracked() {
            listening.with_value(|l| {
                if let Some(l) = l {
                    l.stop();
                }
            });
        } else {
            start();
        }
    };
    on_cleanup(move || {
        listening.try_with_value(|l| {
            if let Some(l) = l {
                call(&l.recognizer, "abort");
            }
        });
    });

    available.then(|| {
        view! {
            <button class="secondary voice" type="button" data-testid="ask-voice"
                aria-pressed=move || active.get().to_string()
                title=move || if active.get() { t_string!(i18n, voice_stop) } else { t_string!(i18n, voice_start) }
                aria-label=move || if active.get() { t_string!(i18n, voice_stop) } else { t_string!(i18n, voice_start) }
                on:click=toggle>
                {icon("mic")}
                <span class="voice-state" hidden=move || !active.get()>{t!(i18n, voice_listening)}</span>
            </button>
            <span class="error voice-problem" role="alert" data-testid="voice-problem" hidden=move || problem.get().is_none()>
                {move || problem.get().unwrap_or_default()}
            </span>
        }
    })
}
