//! Settings → AI provider: pick a provider, paste a key (optionally sealed with a passphrase),
//! choose models per role (listed by the provider when it can), and test the connection.
//!
//! Every provider call goes through the AI worker (`crate::workers`). The test streams a one-line reply
//! (`stream_chat_with_retry`, so retries show as they happen) once for every distinct model of
//! the three roles, then asks the server for its limits (`Job::Limits`) and shows the context and
//! slots it reports; every job asks again before it plans. "List models" fills the model picker
//! from the worker's `list_models` where the provider has a list. A passphrase must have at
//! least 8 characters.

use aula_providers::wire::Report;
use aula_providers::{BrowserAccess, ChatMessage, ChatRequest, Endpoint, KeyNeed, PRESETS};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::connection::{load_connection, save_connection, Connection, Role};
use crate::i18n::*;
use crate::now_ms;
use crate::vault;
use crate::workers;

/// Where a connection test stands.
#[derive(Debug, Clone, PartialEq)]
enum TestState {
    Idle,
    Running,
    Retrying(String),
    Passed { ms: f64 },
    Failed(String),
}

/// A one-line outcome shown beside a control: `Ok` is a confirmation, `Err` an error with its fix.
type Outcome = Option<Result<String, String>>;

/// One line for an outcome; a single element type whatever the outcome, which keeps the view code
/// small (each distinct view type costs its own build and update code in the bundle).
fn outcome_view(
    outcome: impl Fn() -> Outcome + Send + Sync + Copy + 'static,
    testid: &'static str,
) -> impl IntoView {
    let class = move || match outcome() {
        Some(Ok(_)) => "ok",
        Some(Err(_)) => "error",
        None => "",
    };
    let role = move || match outcome() {
        Some(Err(_)) => "alert",
        _ => "status",
    };
    let text = move || match outcome() {
        Some(Ok(m) | Err(m)) => m,
        None => String::new(),
    };
    view! { <span class=class role=role data-testid=testid hidden=move || outcome().is_none()>{text}</span> }
}

/// Every distinct model the roles use, the teaching model first: a typo in the director's model
/// should show up in the test, not in the middle of a lesson.
fn endpoints_to_test(connection: &Connection) -> Vec<Endpoint> {
    let mut endpoints: Vec<Endpoint> = Vec::new();
    for role in [Role::Agents, Role::Director, Role::Generation] {
        let endpoint = connection.endpoint(role);
        if !endpoints.iter().any(|e| e.model == endpoint.model) {
            endpoints.push(endpoint);
        }
    }
    endpoints
}

/// What the parts of the settings share: the connection being edited and how saving went.
#[derive(Clone, Copy)]
struct Form {
    i18n: I18n,
    connection: RwSignal<Connection>,
    /// A key typed but not yet taken into the connection.
    key_input: RwSignal<String>,
    saved: RwSignal<Outcome>,
    /// The model names the provider listed.
    listed: RwSignal<Vec<String>>,
    models_note: RwSignal<Outcome>,
    vault_note: RwSignal<Outcome>,
}

impl Form {
    /// Takes a key typed in the field into the connection (it replaces the saved one and any
    /// passphrase protection of it); the connection as it now stands.
    fn commit(self) -> Connection {
        let typed = self.key_input.get_untracked();
        if !typed.trim().is_empty() {
            self.connection.update(|c| {
                c.api_key = Some(typed.trim().to_owned());
                c.sealed_key = None;
            });
            self.key_input.set(String::new());
        }
        self.connection.get_untracked()
    }

    /// Saves `current`; `done` is what the learner reads when it worked.
    fn persist(self, current: Connection, done: Option<String>) {
        let (i18n, saved) = (self.i18n, self.saved);
        spawn_local(async move {
            saved.set(Some(match save_connection(&current).await {
                Ok(()) => Ok(done.unwrap_or_else(|| t_string!(i18n, provider_saved).to_owned())),
                Err(e) => Err(e.to_string()),
            }));
        });
    }
}

#[component]
pub fn ProviderSettings() -> impl IntoView {
    let i18n = use_i18n();
    let form = Form {
        i18n,
        connection: RwSignal::new(Connection::from_preset(&PRESETS[0])),
        key_input: RwSignal::new(String::new()),
        saved: RwSignal::new(None),
        listed: RwSignal::new(Vec::new()),
        models_note: RwSignal::new(None),
        vault_note: RwSignal::new(None),
    };
    let Form {
        connection,
        saved,
        listed,
        models_note,
        vault_note,
        ..
    } = form;
    spawn_local(async move {
        match load_connection().await {
            Ok(Some(stored)) => connection.set(stored),
            Ok(None) => {}
            Err(error) => saved.set(Some(Err(error.to_string()))),
        }
    });
    let preset = Memo::new(move |_| connection.with(|c| c.preset()));
    let choose_preset = move |ev| {
        let id = event_target_value(&ev);
        if let Some(p) = PRESETS.iter().find(|p| p.id == id) {
            connection.update(|c| {
                let (key, sealed) = (c.api_key.take(), c.sealed_key.take());
                *c = Connection::from_preset(p);
                // The key follows only when the new provider takes one at all.
                if p.key != KeyNeed::None {
                    c.api_key = key;
                    c.sealed_key = sealed;
                }
            });
            listed.set(Vec::new());
            models_note.set(None);
        }
    };
    let save = move |_| form.persist(form.commit(), None);
    let access_note = move || match preset.get().browser {
        BrowserAccess::Direct => None,
        BrowserAccess::OptInHeader => Some(t_string!(i18n, provider_access_opt_in).to_string()),
        BrowserAccess::NeedsProxy => Some(t_string!(i18n, provider_access_proxy).to_string()),
        BrowserAccess::LocalServerNeedsOrigin(how) => {
            Some(format!("{} {how}", t_string!(i18n, provider_access_local)))
        }
        BrowserAccess::Unverified => Some(t_string!(i18n, provider_access_unverified).to_string()),
    };

    // One view for the role models and the limits (each distinct view costs the bundle its own
    // code): a label, an input bound to the connection, and a placeholder.
    // `list` suggests model names; `mode` is the keyboard a phone shows.
    let connection_field = move |label: Key,
                                 testid: &'static str,
                                 placeholder: Key,
                                 (list, mode): (&'static str, &'static str),
                                 get: fn(&Connection) -> String,
                                 set: fn(&mut Connection, String)| {
        view! {
            <label class="field">
                <span class="field-label">{i18n.tr(label)}</span>
                <input list=list inputmode=mode data-testid=testid spellcheck="false" placeholder=i18n.tr(placeholder)
                    prop:value=move || connection.with(get)
                    on:input=move |ev| connection.update(|c| set(c, event_target_value(&ev)))/>
            </label>
        }
    };
    const MODEL: (&str, &str) = ("provider-models", "text");
    const NUMBER: (&str, &str) = ("", "numeric");
    // 0 is "not set": an empty field.
    fn number(n: u32) -> String {
        if n == 0 {
            String::new()
        } else {
            n.to_string()
        }
    }
    fn positive(text: String) -> u32 {
        text.trim().parse().unwrap_or(0)
    }

    view! {
        <div class="card provider-card" data-testid="provider-settings">
            <h2>{t!(i18n, provider_title)}</h2>
            <p class="hint">{t!(i18n, provider_privacy)}</p>
            <div class="form-grid">
                <label class="field">
                    <span class="field-label">{t!(i18n, provider_label)}</span>
                    <select data-testid="provider-preset" on:change=choose_preset>
                        {PRESETS.iter().map(|p| view! {
                            <option value=p.id selected=move || connection.with(|c| c.preset == p.id)>{p.name}</option>
                        }).collect_view()}
                    </select>
                </label>
                <label class="field">
                    <span class="field-label">{t!(i18n, provider_url)}</span>
                    <input type="url" data-testid="provider-url" spellcheck="false"
                        prop:value=move || connection.with(|c| c.base_url.clone())
                        on:input=move |ev| connection.update(|c| c.base_url = event_target_value(&ev))/>
                </label>
                <Show when=move || preset.get().key != KeyNeed::None>
                    <KeyField form=form preset=preset/>
                </Show>
                <ModelField form=form preset=preset/>
                {connection_field(Key::provider_director_model, "provider-director-model", Key::provider_same_model, MODEL, |c| c.director_model.clone(), |c, v| c.director_model = v)}
                {connection_field(Key::provider_generation_model, "provider-generation-model", Key::provider_same_model, MODEL, |c| c.generation_model.clone(), |c, v| c.generation_model = v)}
                {connection_field(Key::provider_context, "provider-context", Key::provider_limit_server, NUMBER, |c| number(c.context_tokens), |c, v| c.context_tokens = positive(v))}
                {connection_field(Key::provider_parallel, "provider-parallel", Key::provider_limit_server, NUMBER, |c| number(c.parallel), |c, v| c.parallel = positive(v))}
            </div>
            <p class="hint">{t!(i18n, provider_limits_hint)}</p>
            <KeyVault form=form/>
            {outcome_view(move || vault_note.get(), "provider-vault-note")}
            {move || access_note().map(|note| view! { <p class="note">{note}</p> })}
            <ConnectionTest form=form save=save/>
        </div>
    }
}

/// The key: typed here, shown masked once saved, removable.
#[component]
fn KeyField(form: Form, preset: Memo<&'static aula_providers::Preset>) -> impl IntoView {
    let Form {
        i18n,
        connection,
        key_input,
        vault_note,
        ..
    } = form;
    let remove_key = move |_| {
        connection.update(|c| {
            c.api_key = None;
            c.sealed_key = None;
        });
        vault_note.set(None);
        form.persist(connection.get_untracked(), None);
    };
    view! {
                    <div class="field">
                        <label class="field-label" for="provider-key">{t!(i18n, provider_key)}</label>
                        <input type="password" id="provider-key" data-testid="provider-key" autocomplete="off" spellcheck="false"
                            placeholder=move || connection.with(|c| c.masked_key()).unwrap_or_else(|| t_string!(i18n, provider_key_placeholder).to_string())
                            prop:value=move || key_input.get()
                            on:input=move |ev| key_input.set(event_target_value(&ev))/>
                        <span class="hint">
                            <a href=move || preset.get().key_url target="_blank" rel="noopener noreferrer">{t!(i18n, provider_get_key)}</a>
                            {move || connection.with(|c| c.sealed_key.is_some() || c.api_key.is_some()).then(|| view! {
                                " · " {t!(i18n, provider_key_saved)} " " <code>{move || connection.with(|c| c.masked_key()).unwrap_or_else(|| "••••".into())}</code> " "
                                <button class="link-button" data-testid="provider-key-remove" on:click=remove_key>{t!(i18n, provider_key_remove)}</button>
                            })}
                        </span>
                    </div>
    }
}

/// The teaching model, with the provider's list of models to pick from.
#[component]
fn ModelField(form: Form, preset: Memo<&'static aula_providers::Preset>) -> impl IntoView {
    let Form {
        i18n,
        connection,
        listed,
        models_note,
        ..
    } = form;
    let load_models = move |_| {
        let current = form.commit();
        if current.is_locked() {
            models_note.set(Some(Err(t_string!(i18n, provider_unlock_first).to_owned())));
            return;
        }
        models_note.set(Some(Ok(t_string!(i18n, provider_working).to_owned())));
        workers::models(current.endpoint(Role::Agents), move |report| {
            models_note.set(Some(match report {
                Report::Models {
                    models: Some(models),
                    ..
                } => {
                    let count = models.len();
                    listed.set(models);
                    Ok(i18n.fill(Key::provider_models_found, &[("count", count.to_string())]))
                }
                Report::Models { models: None, .. } => {
                    Ok(t_string!(i18n, provider_models_none).to_owned())
                }
                Report::Failed { message, .. } => Err(message),
                _ => return,
            }));
        });
    };

    view! {
                <div class="field">
                    <label class="field-label" for="provider-model">{t!(i18n, provider_model)}</label>
                    <div class="inline-form">
                        <input id="provider-model" list="provider-models" data-testid="provider-model" spellcheck="false"
                            prop:value=move || connection.with(|c| c.model.clone())
                            on:input=move |ev| connection.update(|c| c.model = event_target_value(&ev))/>
                        <button class="secondary" data-testid="provider-list-models" on:click=load_models>{t!(i18n, provider_models_load)}</button>
                    </div>
                    <span class="hint">{outcome_view(move || models_note.get(), "provider-models-note")}</span>
                    <datalist id="provider-models">
                        {move || {
                            let listed = listed.get();
                            let names: Vec<String> = if listed.is_empty() {
                                preset.get().models.iter().map(|m| m.to_string()).collect()
                            } else {
                                listed
                            };
                            names.into_iter().map(|m| view! { <option value=m></option> }).collect_view()
                        }}
                    </datalist>
                </div>
    }
}

/// Protecting the key with a passphrase, unlocking it, taking the protection off.
#[component]
fn KeyVault(form: Form) -> impl IntoView {
    let Form {
        i18n,
        connection,
        vault_note,
        ..
    } = form;
    let passphrase = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    let protect = move || {
        let current = form.commit();
        let phrase = passphrase.get_untracked();
        let Some(key) = current.api_key.clone() else {
            vault_note.set(Some(Err(t_string!(i18n, provider_no_key).to_owned())));
            return;
        };
        if phrase.chars().count() < 8 {
            vault_note.set(Some(Err(
                t_string!(i18n, provider_passphrase_short).to_owned()
            )));
            return;
        }
        busy.set(true);
        spawn_local(async move {
            match vault::seal(&key, &phrase).await {
                Ok(sealed) => {
                    connection.update(|c| c.sealed_key = Some(sealed));
                    passphrase.set(String::new());
                    vault_note.set(None);
                    form.persist(
                        connection.get_untracked(),
                        Some(t_string!(i18n, provider_protected).to_owned()),
                    );
                }
                Err(error) => vault_note.set(Some(Err(error.to_string()))),
            }
            busy.set(false);
        });
    };
    let unlock = move || {
        let Some(sealed) = connection.with_untracked(|c| c.sealed_key.clone()) else {
            return;
        };
        let phrase = passphrase.get_untracked();
        busy.set(true);
        spawn_local(async move {
            match vault::open(&sealed, &phrase).await {
                Ok(key) => {
                    connection.update(|c| c.api_key = Some(key));
                    passphrase.set(String::new());
                    vault_note.set(None);
                }
                Err(error) => vault_note.set(Some(Err(error.to_string()))),
            }
            busy.set(false);
        });
    };
    let unprotect = move |_| {
        connection.update(|c| c.sealed_key = None);
        form.persist(connection.get_untracked(), None);
    };

    // One structure for the three states of passphrase protection; parts are hidden, not rebuilt.
    let vault_state = move || {
        connection.with(
            |c| match (c.is_locked(), c.sealed_key.is_some(), c.api_key.is_some()) {
                (true, _, _) => "locked",
                (_, true, _) => "protected",
                (_, _, true) => "open",
                _ => "none",
            },
        )
    };
    view! {
        <div class="vault" data-testid="provider-vault" data-state=vault_state hidden=move || vault_state() == "none">
            <p class="vault-title">{move || match vault_state() {
                "locked" => t_string!(i18n, provider_locked),
                "protected" => t_string!(i18n, provider_protected),
                _ => t_string!(i18n, provider_vault_title),
            }}</p>
            <p class="hint" hidden=move || vault_state() != "open">{t!(i18n, provider_vault_hint)}</p>
            <div class="inline-form" hidden=move || vault_state() == "protected">
                <input type="password" data-testid="provider-passphrase" autocomplete="off" aria-label=t!(i18n, provider_passphrase)
                    placeholder=t!(i18n, provider_passphrase)
                    prop:value=move || passphrase.get()
                    on:input=move |ev| passphrase.set(event_target_value(&ev))
                    on:keydown=move |ev| if ev.key() == "Enter" { if vault_state() == "locked" { unlock() } else { protect() } }/>
                <button class="secondary" data-testid="provider-vault-action" disabled=move || busy.get()
                    on:click=move |_| if vault_state() == "locked" { unlock() } else { protect() }>
                    {move || if vault_state() == "locked" { t_string!(i18n, provider_unlock) } else { t_string!(i18n, provider_protect) }}
                </button>
            </div>
            <button class="link-button" data-testid="provider-unprotect" hidden=move || vault_state() != "protected" on:click=unprotect>{t!(i18n, provider_unprotect)}</button>
        </div>
    }
}

/// Saving, and the connection test: a one-line reply from every distinct model, then what the
/// server says of its limits.
#[component]
fn ConnectionTest(form: Form, save: impl Fn(leptos::ev::MouseEvent) + 'static) -> impl IntoView {
    let Form { i18n, saved, .. } = form;
    let reply = RwSignal::new(String::new());
    let test = RwSignal::new(TestState::Idle);
    let running = StoredValue::new(None::<u32>);
    let limits_note = RwSignal::new(String::new());
    let run_test = move |_| {
        let current = form.commit();
        reply.set(String::new());
        if current.is_locked() {
            test.set(TestState::Failed(
                t_string!(i18n, provider_unlock_first).to_owned(),
            ));
            return;
        }
        test.set(TestState::Running);
        let started = now_ms();
        let request = ChatRequest::new(
            "You are checking a connection for a classroom app. Answer in one short, friendly sentence.",
            vec![ChatMessage::user("Say hello to the class.")],
        );
        spawn_local(async move {
            for (index, endpoint) in endpoints_to_test(&current).into_iter().enumerate() {
                let model = endpoint.model.clone();
                let got_text = std::rc::Rc::new(std::cell::Cell::new(false));
                let text_seen = got_text.clone();
                let on_report = move |report: &Report| match report {
                    Report::Text { text, .. } => {
                        text_seen.set(true);
                        if index == 0 {
                            reply.update(|r| r.push_str(text));
                        }
                    }
                    Report::Retrying {
                        attempt,
                        wait_ms,
                        message,
                        ..
                    } => {
                        test.set(TestState::Retrying(i18n.fill(
                            Key::provider_retrying,
                            &[
                                ("error", message.clone()),
                                ("seconds", format!("{:.1}", *wait_ms as f64 / 1000.0)),
                                ("attempt", (attempt + 1).to_string()),
                            ],
                        )));
                    }
                    _ => {}
                };
                let (id, last) = workers::chat_to_end(endpoint, request.clone(), true, on_report);
                running.set_value(Some(id));
                let last = last.await;
                running.set_value(None);
                let failed = match last {
                    Report::Failed { message, .. } => Some(message),
                    _ => None,
                };
                let problem = match failed {
                    Some(message) => Some(message),
                    None if !got_text.get() => Some(t_string!(i18n, provider_no_text).to_owned()),
                    None => None,
                };
                if let Some(message) = problem {
                    test.set(TestState::Failed(if index == 0 {
                        message
                    } else {
                        format!("{model}: {message}")
                    }));
                    return;
                }
            }
            test.set(TestState::Passed {
                ms: now_ms() - started,
            });
            // What the server says about itself, shown (every job asks it again before it plans).
            let endpoint = current.endpoint(Role::Agents);
            workers::limits(endpoint, move |report| {
                let Report::Limits { limits, .. } = report else {
                    return;
                };
                if let (Some(context), Some(slots)) = (limits.context_tokens, limits.slots) {
                    limits_note.set(i18n.fill(
                        Key::provider_limits_found,
                        &[
                            ("context", context.to_string()),
                            ("slots", slots.to_string()),
                        ],
                    ));
                }
            });
        });
    };
    let stop_test = move |_| {
        if let Some(id) = running.get_value() {
            workers::abort(id);
        }
    };
    let testing = move || matches!(test.get(), TestState::Running | TestState::Retrying(_));

    view! {
            <div class="form-actions">
                <button class="primary" data-testid="provider-save" on:click=save>{t!(i18n, provider_save)}</button>
                <button class="secondary" data-testid="provider-test" disabled=testing on:click=run_test>
                    {t!(i18n, provider_test)}
                </button>
                <Show when=testing>
                    <button class="secondary" data-testid="provider-stop" on:click=stop_test>{t!(i18n, provider_stop)}</button>
                </Show>
                {outcome_view(move || saved.get(), "provider-saved")}
            </div>
            <div class="test-result" data-testid="provider-test-result" data-state=move || match test.get() {
                TestState::Idle => "idle",
                TestState::Running => "running",
                TestState::Retrying(_) => "retrying",
                TestState::Passed { .. } => "passed",
                TestState::Failed(_) => "failed",
            } aria-live="polite">
                {move || (!reply.get().is_empty()).then(|| view! { <p class="reply" data-testid="provider-reply">{reply.get()}</p> })}
                <p class=move || match test.get() {
                    TestState::Passed { .. } => "ok",
                    TestState::Failed(_) => "error",
                    _ => "muted",
                } data-testid=move || match test.get() {
                    TestState::Retrying(_) => "provider-retrying",
                    TestState::Failed(_) => "provider-error",
                    _ => "provider-status",
                } role=move || if matches!(test.get(), TestState::Failed(_)) { "alert" } else { "status" }
                  hidden=move || test.get() == TestState::Idle>
                    {move || match test.get() {
                        TestState::Idle => String::new(),
                        TestState::Running => t_string!(i18n, provider_testing).to_owned(),
                        TestState::Retrying(message) | TestState::Failed(message) => message,
                        TestState::Passed { ms } if ms < 1000.0 => format!("{} ({ms:.0} ms) {}", t_string!(i18n, provider_test_passed), limits_note.get()),
                        TestState::Passed { ms } => format!("{} ({:.1} s) {}", t_string!(i18n, provider_test_passed), ms / 1000.0, limits_note.get()),
                    }}
                </p>
            </div>
    }
}
