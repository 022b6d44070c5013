//! Reading a `.maic.zip` into a course: the manifest checked for what would make it unreadable
//! or unsafe, then everything converted, then the course repaired until it validates, each
//! repair listed.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use aula_course::scene::QuizQuestion;
use aula_course::{
    default_agents, Action, AgentProfile, AgentRole, AgentVoice, Course, Scene, SceneContent,
    SlideElement, ValidationIssue, FORMAT_VERSION,
};
use serde_json::Value;

use super::action::kind_of_openmaic_name;
use super::content::scene_from_archive;
use super::element::poster_key;
use super::text::{data_url, directive_for, extension_of_mime, has_cjk, language_of_directive};
use super::{
    get_array, get_f64, get_obj, get_str, scene_label, str_or_empty, tally, Links, MaicError,
    MaicImport, Notes, Obj, Resolve, AULA_KEY, MAIC_FORMAT_VERSION,
};
use crate::zip::{read_zip, ZipLimits};
use crate::{validate_entry_path, COURSE_PATH, MANIFEST_PATH};

/// Agent colours for agents whose own colour Aula cannot use.
const PALETTE: [&str; 6] = [
    "#2563eb", "#db2777", "#d97706", "#0891b2", "#16a34a", "#7c3aed",
];

/// Reads an OpenMAIC classroom archive into a new course with the id `course_id`. Scenes and
/// agents get new ids; actions, elements and questions keep theirs where Aula can. Whatever
/// Aula cannot hold is listed in [`MaicImport::dropped`].
pub fn import_maic(
    archive: &[u8],
    course_id: &str,
    limits: &ZipLimits,
) -> Result<MaicImport, MaicError> {
    let files: HashMap<String, Vec<u8>> = read_zip(archive, limits)?
        .into_iter()
        .map(|e| (e.path, e.bytes))
        .collect();
    let Some(manifest) = files.get(MANIFEST_PATH) else {
        return Err(MaicError::NoManifest {
            aula_bundle: files.contains_key(COURSE_PATH),
        });
    };
    let manifest: Value = serde_json::from_slice(manifest).map_err(|e| {
        let text = e.to_string();
        let detail = text
            .rsplit_once(" at line ")
            .map_or(text.as_str(), |(head, _)| head)
            .to_string();
        MaicError::BadJson {
            detail,
            line: e.line(),
            column: e.column(),
        }
    })?;
    let bad = |path: &str, problem: &str| MaicError::BadManifest {
        path: path.into(),
        problem: problem.into(),
    };
    let Some(manifest) = manifest.as_object() else {
        return Err(bad("(top level)", "must be a JSON object"));
    };
    let version = match manifest.get("formatVersion") {
        None => return Err(bad("formatVersion", "is missing")),
        Some(v) => v
            .as_u64()
            .ok_or_else(|| bad("formatVersion", "must be a whole number"))?,
    };
    if version > MAIC_FORMAT_VERSION {
        return Err(MaicError::NewerFormat {
            found: version,
            supported: MAIC_FORMAT_VERSION,
        });
    }
    let stage =
        get_obj(manifest, "stage").ok_or_else(|| bad("stage", "is missing or not an object"))?;
    let scenes = manifest
        .get("scenes")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("scenes", "is missing or not a list"))?;
    if manifest.get("agents").is_some_and(|a| !a.is_array()) {
        return Err(bad("agents", "must be a list"));
    }
    let media_index = match manifest.get("mediaIndex") {
        None | Some(Value::Null) => Obj::new(),
        Some(Value::Object(index)) => index.clone(),
        Some(_) => return Err(bad("mediaIndex", "must be an object")),
    };
    check_paths(&media_index, scenes)?;

    let mut dropped = Vec::new();
    let mut media = ArchiveMedia::new(&files, &media_index);

    let title = get_str(stage, "name")
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map_or_else(|| "Imported classroom".to_string(), |t| clip(t, 200));
    let agents = read_agents(
        get_array(manifest, "agents"),
        &mut media.links,
        &mut dropped,
    );

    // Scenes play in `order`; ties and gaps keep the manifest's order.
    let mut ordered: Vec<(usize, &Obj)> = scenes
        .iter()
        .filter_map(Value::as_object)
        .enumerate()
        .collect();
    ordered.sort_by(|(i, a), (j, b)| {
        let key = |o: &Obj, i: usize| get_f64(o, "order").unwrap_or(i as f64);
        key(a, *i).total_cmp(&key(b, *j)).then(i.cmp(j))
    });
    let mut course_scenes = Vec::new();
    let mut labels = Vec::new();
    for (number, (_, scene)) in ordered.iter().enumerate() {
        let number = number + 1;
        let title = get_str(scene, "title")
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map_or_else(|| format!("Scene {number}"), |t| clip(t, 200));
        let label = scene_label(number, &title);
        let mut notes = Notes {
            at: label.clone(),
            out: &mut dropped,
        };
        let Some((content, actions)) = scene_from_archive(scene, &title, &mut media, &mut notes)
        else {
            notes.add("the whole scene was left out");
            continue;
        };
        course_scenes.push(Scene {
            id: format!("scene-{}", course_scenes.len() + 1),
            title,
            content,
            actions,
        });
        labels.push(label);
    }
    give_unique_ids(&mut course_scenes);

    let created_at = get_f64(stage, "createdAt").map_or(0, |t| t.max(0.0) as u64);
    let updated_at =
        get_f64(stage, "updatedAt").map_or(created_at, |t| (t.max(0.0) as u64).max(created_at));
    let directive = get_str(stage, "language").filter(|d| !d.trim().is_empty());
    let language = directive
        .and_then(language_of_directive)
        .unwrap_or_else(|| {
            let sample = std::iter::once(title.as_str())
                .chain(course_scenes.iter().map(|s| s.title.as_str()))
                .collect::<String>();
            if has_cjk(&sample) { "zh-CN" } else { "en" }.to_string()
        });
    let mut stage_notes = Notes {
        at: "The classroom".into(),
        out: &mut dropped,
    };
    if let Some(directive) = directive.filter(|d| *d != directive_for(&language)) {
        stage_notes.add(format!(
            "its language directive \"{}\" (Aula keeps only the teaching language, {language})",
            clip(directive, 120)
        ));
    }
    if get_str(stage, "style").is_some_and(|s| !s.trim().is_empty()) {
        stage_notes.add("its teaching style setting");
    }

    let mut course = Course {
        format_version: FORMAT_VERSION,
        id: course_id.to_string(),
        title,
        language,
        description: clip(&str_or_empty(stage, "description"), 5_000),
        agents,
        scenes: course_scenes,
        created_at,
        updated_at,
    };
    let source_scenes = scenes.len();
    repair(&mut course, &mut labels, &mut dropped)?;
    if course.scenes.is_empty() {
        let why = if source_scenes == 0 {
            "it has no scenes.".to_string()
        } else {
            format!(
                "none of its {source_scenes} scene(s) is one Aula can play ({}).",
                dropped.first().map_or("", String::as_str)
            )
        };
        return Err(MaicError::NothingImportable(why));
    }
    let used = referenced_media(&course);
    let media = media
        .carried
        .into_iter()
        .filter(|(path, _)| used.contains(path))
        .collect();
    Ok(MaicImport {
        course,
        media,
        dropped: tally(dropped),
    })
}

/// Refuses the archive when any file path it names could escape Aula's bundle folder.
fn check_paths(media_index: &Obj, scenes: &[Value]) -> Result<(), MaicError> {
    let unsafe_path = |path: String, e| MaicError::UnsafePath { path, source: e };
    for (path, entry) in media_index {
        validate_entry_path(path).map_err(|e| unsafe_path(format!("mediaIndex[\"{path}\"]"), e))?;
        if let Some(aula) = entry
            .get(AULA_KEY)
            .and_then(|a| a.get("path"))
            .and_then(Value::as_str)
        {
            validate_entry_path(aula)
                .map_err(|e| unsafe_path(format!("mediaIndex[\"{path}\"].aula.path"), e))?;
        }
    }
    for (i, scene) in scenes.iter().enumerate() {
        let actions = scene.get("actions").and_then(Value::as_array);
        for (j, action) in actions.into_iter().flatten().enumerate() {
            if let Some(path) = action.get("audioRef").and_then(Value::as_str) {
                validate_entry_path(path)
                    .map_err(|e| unsafe_path(format!("scenes[{i}].actions[{j}].audioRef"), e))?;
            }
        }
    }
    Ok(())
}

fn clip(text: &str, max_chars: usize) -> String {
    text.chars().take(max_chars).collect()
}

fn read_agents(
    native: &[Value],
    links: &mut Links,
    dropped: &mut Vec<String>,
) -> Vec<AgentProfile> {
    let mut notes = Notes {
        at: "Agents".into(),
        out: dropped,
    };
    let limit = aula_course::limits::MAX_AGENTS;
    if native.len() > limit {
        notes.add(format!(
            "{} agents beyond the first {limit} (Aula seats at most {limit})",
            native.len() - limit
        ));
    }
    let mut agents: Vec<(Option<String>, AgentProfile)> = Vec::new();
    for (i, value) in native.iter().take(limit).enumerate() {
        let Some(a) = value.as_object() else {
            notes.add(format!("agent {} is not an object", i + 1));
            agents.push((None, placeholder_agent(i)));
            continue;
        };
        let name = get_str(a, "name")
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map_or_else(|| format!("Agent {}", i + 1), |n| clip(n, 200));
        let role = match get_str(a, "role").unwrap_or("student") {
            "teacher" => AgentRole::Teacher,
            "assistant" => AgentRole::Assistant,
            "student" => AgentRole::Student,
            other => {
                notes.add(format!("{name}'s role \"{other}\" (seated as a student)"));
                AgentRole::Student
            }
        };
        let persona = str_or_empty(a, "persona");
        if persona.chars().count() > 2_000 {
            notes.add(format!(
                "{name}'s persona beyond its first 2,000 characters"
            ));
        }
        let color = get_str(a, "color")
            .and_then(hex_color)
            .unwrap_or_else(|| PALETTE[i % PALETTE.len()].to_string());
        let voice = get_obj(a, "voiceConfig").and_then(|v| {
            Some(AgentVoice {
                provider: get_str(v, "providerId")?.to_string(),
                voice: get_str(v, "voiceId")?.to_string(),
            })
        });
        let allowed_actions = match a.get("allowedActions").and_then(Value::as_array) {
            Some(names) => names
                .iter()
                .filter_map(Value::as_str)
                .filter_map(|n| {
                    let kind = kind_of_openmaic_name(n);
                    if kind.is_none() {
                        notes.add(format!("{name} may use `{n}`, which Aula does not have"));
                    }
                    kind
                })
                .collect(),
            None => role.default_actions(),
        };
        let priority = get_f64(a, "priority").unwrap_or(5.0).clamp(0.0, 255.0) as u8;
        agents.push((
            get_str(a, "id").map(str::to_string),
            AgentProfile {
                id: String::new(),
                name,
                role,
                persona: clip(&persona, 2_000),
                avatar: str_or_empty(a, "avatar"),
                color,
                voice,
                priority,
                allowed_actions,
            },
        ));
    }
    if agents.is_empty() {
        notes.add("the classroom has no agents, so Aula's default class teaches it");
        return default_agents();
    }
    // Aula has exactly one lead teacher: the highest-priority teacher (or, with none, agent).
    let teachers: Vec<usize> = (0..agents.len())
        .filter(|&i| agents[i].1.role == AgentRole::Teacher)
        .collect();
    let candidates = if teachers.is_empty() {
        (0..agents.len()).collect()
    } else {
        teachers.clone()
    };
    let lead = candidates
        .iter()
        .copied()
        .max_by_key(|&i| (agents[i].1.priority, std::cmp::Reverse(i)))
        .unwrap_or(0);
    if teachers.is_empty() {
        notes.add(format!(
            "no agent was the teacher, so {} leads the class",
            agents[lead].1.name
        ));
    }
    for &i in &teachers {
        if i != lead {
            notes.add(format!(
                "{} was a second teacher and assists instead",
                agents[i].1.name
            ));
        }
    }
    let mut counts: HashMap<AgentRole, usize> = HashMap::new();
    for (i, (_, agent)) in agents.iter_mut().enumerate() {
        let role = if i == lead {
            AgentRole::Teacher
        } else if agent.role == AgentRole::Teacher {
            AgentRole::Assistant
        } else {
            agent.role
        };
        if role != agent.role && agent.allowed_actions == agent.role.default_actions() {
            agent.allowed_actions = role.default_actions();
        }
        agent.role = role;
        let n = counts.entry(role).or_default();
        *n += 1;
        agent.id = if role == AgentRole::Teacher {
            "teacher".into()
        } else {
            format!("{}-{n}", role.as_str())
        };
    }
    links.agent_ids = agents.iter().map(|(_, a)| a.id.clone()).collect();
    for (i, (old, agent)) in agents.iter().enumerate() {
        if let Some(old) = old {
            links.agent_index.insert(old.clone(), i);
            links.agent_renamed.insert(old.clone(), agent.id.clone());
        }
    }
    agents.into_iter().map(|(_, a)| a).collect()
}

fn placeholder_agent(i: usize) -> AgentProfile {
    AgentProfile {
        id: String::new(),
        name: format!("Agent {}", i + 1),
        role: AgentRole::Student,
        persona: String::new(),
        avatar: String::new(),
        color: PALETTE[i % PALETTE.len()].into(),
        voice: None,
        priority: 1,
        allowed_actions: AgentRole::Student.default_actions(),
    }
}

/// `#rrggbb` from `#rrggbb` or `#rgb`.
fn hex_color(color: &str) -> Option<String> {
    let digits = color.trim().strip_prefix('#')?;
    if !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    match digits.len() {
        6 => Some(format!("#{}", digits.to_ascii_lowercase())),
        3 => Some(format!(
            "#{}",
            digits
                .chars()
                .flat_map(|c| [c, c])
                .collect::<String>()
                .to_ascii_lowercase()
        )),
        _ => None,
    }
}

fn usable_id(id: &str) -> bool {
    !id.trim().is_empty() && id.chars().count() <= aula_course::limits::MAX_ID_CHARS
}

/// Ids Aula needs unique: actions across the course; elements, questions and options within
/// their scene. A missing, over-long or repeated id is replaced.
fn give_unique_ids(scenes: &mut [Scene]) {
    let mut action_ids = HashSet::new();
    for scene in scenes.iter_mut() {
        for (j, action) in scene.actions.iter_mut().enumerate() {
            let id = action_id_mut(action);
            if let Some(id) = id {
                if !usable_id(id) || action_ids.contains(id.as_str()) {
                    let mut n = j + 1;
                    while action_ids.contains(&format!("{}-a{n}", scene.id)) {
                        n += 1;
                    }
                    *id = format!("{}-a{n}", scene.id);
                }
                action_ids.insert(id.clone());
            }
        }
        match &mut scene.content {
            SceneContent::Slide(slide) => {
                let mut seen = HashSet::new();
                for (k, element) in slide.elements.iter_mut().enumerate() {
                    let kind = element.kind_name();
                    let id = element_id_mut(element);
                    if !usable_id(id) || !seen.insert(id.clone()) {
                        *id = format!("{kind}-{}", k + 1);
                        seen.insert(id.clone());
                    }
                }
            }
            SceneContent::Quiz(quiz) => {
                let mut seen = HashSet::new();
                for (k, question) in quiz.questions.iter_mut().enumerate() {
                    let (id, options) = match question {
                        QuizQuestion::Single(q) => (&mut q.id, Some(&mut q.options)),
                        QuizQuestion::Multiple(q) => (&mut q.id, Some(&mut q.options)),
                        QuizQuestion::Short(q) => (&mut q.id, None),
                    };
                    if !usable_id(id) || !seen.insert(id.clone()) {
                        *id = format!("q{}", k + 1);
                        seen.insert(id.clone());
                    }
                    let mut option_ids = HashSet::new();
                    for (o, option) in options.into_iter().flatten().enumerate() {
                        if !usable_id(&option.id) || !option_ids.insert(option.id.clone()) {
                            option.id = format!("option-{}", o + 1);
                            option_ids.insert(option.id.clone());
                        }
                    }
                }
            }
            SceneContent::Interactive(_) | SceneContent::Pbl(_) => {}
        }
    }
}

fn action_id_mut(action: &mut Action) -> Option<&mut String> {
    Some(match action {
        Action::Speech(a) => &mut a.id,
        Action::Spotlight(a) => &mut a.id,
        Action::Laser(a) => &mut a.id,
        Action::PlayVideo(a) => &mut a.id,
        Action::WbOpen(a) => &mut a.id,
        Action::WbClose(a) => &mut a.id,
        Action::WbDrawText(a) => &mut a.id,
        Action::WbDrawShape(a) => &mut a.id,
        Action::WbDrawChart(a) => &mut a.id,
        Action::WbDrawLatex(a) => &mut a.id,
        Action::WbDrawTable(a) => &mut a.id,
        Action::WbDrawLine(a) => &mut a.id,
        Action::WbDrawCode(a) => &mut a.id,
        Action::WbEditCode(a) => &mut a.id,
        Action::WbDelete(a) => &mut a.id,
        Action::WbClear(a) => &mut a.id,
        Action::Discussion(a) => &mut a.id,
        Action::WidgetHighlight(a) => &mut a.id,
        Action::WidgetAnnotation(a) => &mut a.id,
        Action::WidgetReveal(a) => &mut a.id,
        Action::WidgetSetState(a) => &mut a.id,
        Action::Unknown { .. } => return None,
    })
}

fn element_id_mut(element: &mut SlideElement) -> &mut String {
    match element {
        SlideElement::Text(e) => &mut e.id,
        SlideElement::Image(e) => &mut e.id,
        SlideElement::Shape(e) => &mut e.id,
        SlideElement::Video(e) => &mut e.id,
        SlideElement::Line(e) => &mut e.id,
        SlideElement::Chart(e) => &mut e.id,
        SlideElement::Table(e) => &mut e.id,
        SlideElement::Latex(e) => &mut e.id,
        SlideElement::Code(e) => &mut e.id,
    }
}

/// What a validation problem asks to remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Removal {
    Scene(usize),
    Part(usize, Part, usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    Action,
    Element,
    Question,
}

fn removal_for(issue: &ValidationIssue) -> Option<Removal> {
    let rest = issue.path.strip_prefix("scenes[")?;
    let (scene, rest) = rest.split_once(']')?;
    let scene: usize = scene.parse().ok()?;
    let index_after = |prefix: &str| -> Option<usize> {
        rest.strip_prefix(prefix)?.split_once(']')?.0.parse().ok()
    };
    Some(if let Some(j) = index_after(".actions[") {
        Removal::Part(scene, Part::Action, j)
    } else if let Some(k) = index_after(".content.elements[") {
        Removal::Part(scene, Part::Element, k)
    } else if let Some(k) = index_after(".content.questions[") {
        Removal::Part(scene, Part::Question, k)
    } else {
        Removal::Scene(scene)
    })
}

/// Removes what keeps the course from validating (an action aimed at a missing element, an
/// empty quiz, …), listing each removal, until it validates.
fn repair(
    course: &mut Course,
    labels: &mut Vec<String>,
    dropped: &mut Vec<String>,
) -> Result<(), MaicError> {
    // Each round removes at least one thing; a removal can only surface problems in what
    // pointed at it, so a few rounds always suffice.
    for _ in 0..8 {
        let issues = match course.validate() {
            Ok(()) => return Ok(()),
            Err(issues) => issues,
        };
        let mut removals: BTreeMap<Removal, &ValidationIssue> = BTreeMap::new();
        for issue in &issues {
            let Some(removal) = removal_for(issue) else {
                return Err(MaicError::Invalid(issues));
            };
            removals.entry(removal).or_insert(issue);
        }
        let doomed: BTreeSet<usize> = removals
            .keys()
            .filter_map(|r| match r {
                Removal::Scene(s) => Some(*s),
                Removal::Part(..) => None,
            })
            .collect();
        // Back to front, so the indices of what is still to go stay right.
        for (removal, issue) in removals.iter().rev() {
            match *removal {
                Removal::Part(s, _, _) if doomed.contains(&s) => {}
                Removal::Part(s, part, k) => {
                    let Some(scene) = course.scenes.get_mut(s) else {
                        continue;
                    };
                    let what = match (part, &mut scene.content) {
                        (Part::Action, _) if k < scene.actions.len() => {
                            let action = scene.actions.remove(k);
                            format!("a `{}` action", action.type_name())
                        }
                        (Part::Element, SceneContent::Slide(slide)) if k < slide.elements.len() => {
                            let element = slide.elements.remove(k);
                            format!("{} element \"{}\"", element.kind_name(), element.id())
                        }
                        (Part::Question, SceneContent::Quiz(quiz)) if k < quiz.questions.len() => {
                            let question = quiz.questions.remove(k);
                            format!("question \"{}\"", question.id())
                        }
                        _ => continue,
                    };
                    dropped.push(format!("{}: {what} ({})", labels[s], issue.problem));
                }
                Removal::Scene(s) => {
                    if s < course.scenes.len() {
                        course.scenes.remove(s);
                        let label = labels.remove(s);
                        dropped.push(format!(
                            "{label}: the whole scene was left out ({})",
                            issue.problem
                        ));
                    }
                }
            }
        }
    }
    course.validate().map_err(MaicError::Invalid)
}

/// Every media path the course refers to.
fn referenced_media(course: &Course) -> HashSet<String> {
    let mut used = HashSet::new();
    for scene in &course.scenes {
        if let SceneContent::Slide(slide) = &scene.content {
            for element in &slide.elements {
                match element {
                    SlideElement::Image(e) => {
                        used.insert(e.src.clone());
                    }
                    SlideElement::Video(e) => {
                        used.insert(e.src.clone());
                        used.extend(e.poster.clone());
                    }
                    _ => {}
                }
            }
        }
        for action in &scene.actions {
            if let Action::Speech(s) = action {
                used.extend(s.audio_id.clone());
            }
        }
    }
    used
}

/// The archive's files as the conversions reach them, and the ones carried into Aula's bundle.
struct ArchiveMedia<'a> {
    files: &'a HashMap<String, Vec<u8>>,
    links: Links,
    /// Zip path → path in Aula's bundle.
    bundle_path: HashMap<String, String>,
    /// Generated media by placeholder: the file, and its poster.
    generated: HashMap<String, String>,
    posters: HashMap<String, String>,
    missing: HashSet<String>,
    carried: BTreeMap<String, Vec<u8>>,
}

impl<'a> ArchiveMedia<'a> {
    fn new(files: &'a HashMap<String, Vec<u8>>, index: &Obj) -> ArchiveMedia<'a> {
        let mut media = ArchiveMedia {
            files,
            links: Links::default(),
            bundle_path: HashMap::new(),
            generated: HashMap::new(),
            posters: HashMap::new(),
            missing: HashSet::new(),
            carried: BTreeMap::new(),
        };
        for path in files.keys() {
            let Some(name) = path.strip_prefix("media/") else {
                continue;
            };
            if let Some((placeholder, _)) = name.split_once(".poster.") {
                media.posters.insert(placeholder.to_string(), path.clone());
            } else if let Some((placeholder, _)) = name.rsplit_once('.') {
                media
                    .generated
                    .insert(placeholder.to_string(), path.clone());
            }
        }
        for (zip_path, entry) in index {
            if entry.get("missing").and_then(Value::as_bool) == Some(true) {
                media.missing.insert(zip_path.clone());
                continue;
            }
            // Only Aula's own bundle folders; anything else keeps its archive path.
            let aula = entry
                .get(AULA_KEY)
                .and_then(|a| a.get("path"))
                .and_then(Value::as_str)
                .filter(|p| p.starts_with("media/") || p.starts_with("audio/"));
            let bundle = aula.unwrap_or(zip_path).to_string();
            let native = match zip_path.strip_prefix("media/") {
                Some(name) => match name.split_once(".poster.") {
                    Some((placeholder, _)) => {
                        media
                            .links
                            .aula_path
                            .insert(poster_key(placeholder), bundle.clone());
                        zip_path.clone()
                    }
                    None => name.rsplit_once('.').map_or(name, |(p, _)| p).to_string(),
                },
                None => zip_path.clone(),
            };
            media
                .links
                .native_ref
                .insert(bundle.clone(), native.clone());
            media.links.aula_path.insert(native, bundle.clone());
            media.bundle_path.insert(zip_path.clone(), bundle);
        }
        media
    }

    fn carry(&mut self, zip_path: &str) -> Option<String> {
        let bytes = self.files.get(zip_path)?;
        let bundle = self
            .bundle_path
            .get(zip_path)
            .cloned()
            .unwrap_or_else(|| zip_path.to_string());
        self.carried.insert(bundle.clone(), bytes.clone());
        Some(bundle)
    }
}

impl Resolve for ArchiveMedia<'_> {
    fn media(&mut self, src: &str, element_id: &str) -> Result<String, String> {
        if src.trim().is_empty() {
            return Err("it has no source".into());
        }
        if src.starts_with("data:") {
            let (mime, bytes) = data_url(src).ok_or("its embedded picture cannot be decoded")?;
            let stem: String = element_id
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(60)
                .collect();
            let mut path = format!("media/{stem}.{}", extension_of_mime(&mime));
            let mut n = 2;
            while self.carried.contains_key(&path) || self.files.contains_key(&path) {
                path = format!("media/{stem}-{n}.{}", extension_of_mime(&mime));
                n += 1;
            }
            self.carried.insert(path.clone(), bytes);
            return Ok(path);
        }
        if src.starts_with("blob:") {
            return Err("its address was valid only in the browser session that made it".into());
        }
        if self.files.contains_key(src) && validate_entry_path(src).is_ok() && src != MANIFEST_PATH
        {
            return self.carry(src).ok_or_else(|| "its file is missing".into());
        }
        if !src.contains('/') && !src.contains(':') {
            let Some(zip_path) = self.generated.get(src).cloned() else {
                return Err("its generated picture or video is not in the archive".into());
            };
            return self
                .carry(&zip_path)
                .ok_or_else(|| "its file is missing".into());
        }
        if src.chars().count() > aula_course::limits::MAX_URL_CHARS {
            return Err("its address is longer than Aula accepts".into());
        }
        Ok(src.to_string())
    }

    fn poster(&mut self, placeholder: &str) -> Option<String> {
        let zip_path = self.posters.get(placeholder)?.clone();
        self.carry(&zip_path)
    }

    fn audio(&mut self, audio_ref: &str) -> Option<String> {
        if self.missing.contains(audio_ref) {
            return None;
        }
        self.carry(audio_ref)
    }

    fn links(&self) -> &Links {
        &self.links
    }
}
