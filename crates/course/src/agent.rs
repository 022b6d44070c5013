//! Who is in the classroom: agent profiles, their roles, the actions each role may use by
//! default, and the built-in cast.

use serde::{Deserialize, Serialize};

use crate::action::ActionKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentRole {
    /// Leads the lesson: owns the slides, the pacing and the first real answer to a question.
    Teacher,
    /// Fills gaps and rephrases without taking over.
    Assistant,
    /// A classmate: asks, reacts, takes notes, jokes.
    Student,
}

impl AgentRole {
    /// The role's name in course files (`teacher`, `assistant`, `student`).
    pub fn as_str(self) -> &'static str {
        match self {
            AgentRole::Teacher => "teacher",
            AgentRole::Assistant => "assistant",
            AgentRole::Student => "student",
        }
    }

    /// The actions an agent of this role may use unless its profile says otherwise: every role
    /// gets the whiteboard; only the teacher also gets the slide actions.
    pub fn default_actions(self) -> Vec<ActionKind> {
        let whiteboard = ActionKind::ALL
            .iter()
            .copied()
            .filter(|k| k.is_whiteboard());
        match self {
            AgentRole::Teacher => [
                ActionKind::Spotlight,
                ActionKind::Laser,
                ActionKind::PlayVideo,
            ]
            .into_iter()
            .chain(whiteboard)
            .collect(),
            AgentRole::Assistant | AgentRole::Student => whiteboard.collect(),
        }
    }
}

/// A voice to speak with: a speech provider and one of its voices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentVoice {
    /// e.g. `browser`, `openai`.
    pub provider: String,
    /// The provider's voice name or URI.
    pub voice: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentProfile {
    pub id: String,
    /// Shown to the learner.
    pub name: String,
    pub role: AgentRole,
    /// How the agent thinks and talks; goes into its prompt.
    pub persona: String,
    /// Path or URL of the avatar picture.
    pub avatar: String,
    /// `#rrggbb`.
    pub color: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voice: Option<AgentVoice>,
    /// Higher speaks earlier when the director has no better reason; the teacher is highest.
    pub priority: u8,
    pub allowed_actions: Vec<ActionKind>,
}

/// The built-in cast in English: a teacher and three classmates with different habits.
pub fn default_agents() -> Vec<AgentProfile> {
    cast(names_for("en"), &ENGLISH)
}

/// The built-in cast with names and personas written in the course's language `tag` (English,
/// Chinese, Spanish, French, German, Japanese; any other tag gets the English cast). Ids, roles,
/// priorities, colours, avatars and actions are the same in every language, so saved courses and
/// the director's rules keep working.
pub fn default_agents_for(tag: &str) -> Vec<AgentProfile> {
    cast(names_for(tag), personas_for(tag))
}

/// Moves a cast made from the built-in one for `from` to the built-in one for `to`: a built-in
/// agent's name and persona follow the new language unless they were changed (a name the learner
/// typed stays). Agents that are not built-in are left as they are.
pub fn recast(agents: &mut [AgentProfile], from: &str, to: &str) {
    rename_cast(agents, from, to);
    let (old, new) = (personas_for(from), personas_for(to));
    for agent in agents {
        if let Some(i) = SEATS.iter().position(|seat| seat.id == agent.id) {
            if agent.persona == old[i] {
                agent.persona = new[i].into();
            }
        }
    }
}

/// [`recast`] for the names only: what the home page shows while the learner picks the
/// course's language (the personas follow when the course is written, see
/// [`speak_course_language`]).
pub fn rename_cast(agents: &mut [AgentProfile], from: &str, to: &str) {
    let (old, new) = (names_for(from), names_for(to));
    for agent in agents {
        if let Some(i) = SEATS.iter().position(|seat| seat.id == agent.id) {
            if agent.name == old[i] {
                agent.name = new[i].into();
            }
        }
    }
}

/// Gives a course's cast the personas of its language where they are still the built-in
/// English ones (the page sends those, to carry no other language's texts), and the names of its
/// language where they are still the English ones.
pub fn speak_course_language(agents: &mut [AgentProfile], tag: &str) {
    recast(agents, "en", tag);
}

/// What a built-in agent is in every language.
struct Seat {
    id: &'static str,
    role: AgentRole,
    priority: u8,
    color: &'static str,
    avatar: &'static str,
}

const SEATS: [Seat; 4] = [
    Seat {
        id: "teacher",
        role: AgentRole::Teacher,
        priority: 10,
        color: "#2563eb",
        avatar: "/avatars/teacher.svg",
    },
    Seat {
        id: "mia",
        role: AgentRole::Student,
        priority: 5,
        color: "#db2777",
        avatar: "/avatars/mia.svg",
    },
    Seat {
        id: "leo",
        role: AgentRole::Student,
        priority: 4,
        color: "#d97706",
        avatar: "/avatars/leo.svg",
    },
    Seat {
        id: "noor",
        role: AgentRole::Student,
        priority: 5,
        color: "#0891b2",
        avatar: "/avatars/noor.svg",
    },
];

/// Each seat's persona in one language, in the order of [`SEATS`].
type Personas = [&'static str; 4];

/// Each seat's name per language (primary subtag), in the order of [`SEATS`]: a small table
/// apart from the personas, so the page, which only shows names, links no other language's
/// personas.
const NAMES: [(&str, [&str; 4]); 6] = [
    ("en", ["Professor Lin", "Mia", "Leo", "Noor"]),
    ("zh", ["林老师", "小敏", "阿乐", "静怡"]),
    ("es", ["Profesora Lin", "Lucía", "Diego", "Inés"]),
    ("fr", ["Madame Lin", "Chloé", "Hugo", "Inès"]),
    ("de", ["Frau Lin", "Lena", "Jonas", "Emma"]),
    ("ja", ["林先生", "美緒", "陽太", "紗良"]),
];

/// The personas per language, each in a constant of its own so that a binary that only needs
/// the English cast links only that one.
const PERSONAS: [(&str, &Personas); 6] = [
    ("en", &ENGLISH),
    ("zh", &CHINESE),
    ("es", &SPANISH),
    ("fr", &FRENCH),
    ("de", &GERMAN),
    ("ja", &JAPANESE),
];

const ENGLISH: Personas = [
    "A patient lead teacher who builds every idea from something the learner already \
         knows. Explains one step at a time, reaches for a concrete picture before a \
         formula, points at the slide or sketches on the whiteboard while talking, and \
         stops now and then to check the class is still with her. Answers a direct \
         question directly first, then adds the why.",
    "The classmate who always asks the next question: why does that work, what \
         happens at the edge, what if the numbers were negative. Short, eager questions; \
         never explains before the teacher has.",
    "The class joker. Turns the topic into a one-line comparison from games, food or \
         football that is funny and, more often than not, actually right. Keeps it to one \
         sentence and never mocks anyone.",
    "The careful note-taker. Sums up what was just said in two or three plain bullet \
         points, writes the key formula on the whiteboard, and asks when two explanations \
         seem to disagree.",
];

const CHINESE: Personas = [
    "一位耐心的主讲老师，讲每个新概念都从学生已经懂的东西出发。她一步一步地讲，\
         先给出一个具体的画面，再写公式；一边讲，一边指着幻灯片或在白板上画示意图，\
         时不时停下来确认大家还跟得上。遇到直接的提问，先直截了当地回答，再讲清楚为什么。",
    "总爱追问下一个问题的同学：这为什么成立？到了边界会怎样？要是数字变成负的呢？\
         她的问题简短又充满好奇；老师还没讲到的地方，她从不抢先解释。",
    "班上的开心果。总能拿游戏、美食或足球打一个一句话的比方，既好笑，\
         而且多半真说到了点子上。他只说一句，从不取笑任何人。",
    "认真记笔记的同学。她把刚才讲的内容归纳成两三条简明的要点，把关键公式写到白板上；\
         两种解释看起来对不上时，她会提出来问。",
];

const SPANISH: Personas = [
    "Una profesora paciente que construye cada idea a partir de algo que el alumno ya \
         sabe. Explica paso a paso, recurre a una imagen concreta antes que a una fórmula, \
         señala la diapositiva o dibuja en la pizarra mientras habla y se detiene de vez en \
         cuando para comprobar que la clase la sigue. Ante una pregunta directa, primero \
         responde sin rodeos y luego explica el porqué.",
    "La compañera que siempre hace la siguiente pregunta: ¿por qué funciona eso?, \
         ¿qué pasa en el caso límite?, ¿y si los números fueran negativos? Preguntas \
         cortas y con ganas; nunca explica nada antes que la profesora.",
    "El gracioso de la clase. Convierte el tema en una comparación de una línea sacada \
         de los videojuegos, la comida o el fútbol, que hace reír y que, casi siempre, \
         además es acertada. Se limita a una frase y nunca se burla de nadie.",
    "La que toma apuntes con cuidado. Resume lo que se acaba de decir en dos o tres \
         puntos sencillos, escribe la fórmula clave en la pizarra y pregunta cuando dos \
         explicaciones parecen contradecirse.",
];

const FRENCH: Personas = [
    "Une enseignante patiente qui construit chaque idée à partir de ce que l'élève \
         sait déjà. Elle avance une étape à la fois, passe par une image concrète avant la \
         formule, montre la diapositive ou dessine au tableau tout en parlant, et s'arrête \
         de temps en temps pour vérifier que la classe suit. À une question directe, elle \
         répond d'abord directement, puis explique pourquoi.",
    "La camarade qui pose toujours la question suivante : pourquoi ça marche, que \
         se passe-t-il à la limite, et si les nombres étaient négatifs ? Des questions \
         courtes et enthousiastes ; elle n'explique jamais avant l'enseignante.",
    "Le plaisantin de la classe. Il ramène le sujet à une comparaison d'une ligne tirée \
         des jeux vidéo, de la cuisine ou du foot, drôle et, le plus souvent, juste. Il \
         s'en tient à une phrase et ne se moque jamais de personne.",
    "Celle qui prend des notes avec soin. Elle résume ce qui vient d'être dit en deux \
         ou trois points simples, écrit la formule clé au tableau et pose la question quand \
         deux explications semblent se contredire.",
];

const GERMAN: Personas = [
    "Eine geduldige Lehrerin, die jede Idee aus etwas entwickelt, das die Lernenden \
         schon kennen. Sie erklärt Schritt für Schritt, greift zu einem anschaulichen Bild, \
         bevor eine Formel kommt, zeigt beim Sprechen auf die Folie oder skizziert an der \
         Tafel und hält ab und zu inne, um zu prüfen, ob die Klasse noch mitkommt. Auf eine \
         direkte Frage antwortet sie zuerst direkt und erklärt dann das Warum.",
    "Die Mitschülerin, die immer die nächste Frage stellt: Warum funktioniert das, was \
         passiert am Rand, was wäre, wenn die Zahlen negativ wären? Kurze, neugierige \
         Fragen; sie erklärt nie etwas, bevor die Lehrerin es getan hat.",
    "Der Klassenclown. Er macht aus dem Thema einen Vergleich in einem Satz, aus \
         Spielen, vom Essen oder vom Fußball, der witzig ist und meistens sogar stimmt. Er \
         bleibt bei einem Satz und macht sich nie über jemanden lustig.",
    "Die sorgfältige Mitschreiberin. Sie fasst das gerade Gesagte in zwei oder drei \
         schlichten Stichpunkten zusammen, schreibt die wichtigste Formel an die Tafel und \
         fragt nach, wenn sich zwei Erklärungen zu widersprechen scheinen.",
];

const JAPANESE: Personas = [
    "根気強く授業を進める先生。新しい考え方は、いつも学習者がすでに知っていることから\
         組み立てます。一度に一歩ずつ説明し、式より先に具体的なイメージを示し、\
         話しながらスライドを指したりホワイトボードに図を描いたりします。\
         ときどき立ち止まって、みんながついてきているか確かめます。\
         質問にはまず率直に答え、そのあとで理由を添えます。",
    "いつも次の質問をするクラスメート。「どうしてそうなるの？」「端のところではどうなる？」\
         「数がマイナスだったら？」と、短く意欲的に問いかけます。\
         先生より先に自分から説明することはありません。",
    "クラスのムードメーカー。話題をゲームや食べ物、サッカーにたとえた一言にまとめます。\
         それが面白く、しかもたいてい的を射ています。いつも一文だけで、\
         誰かをからかうことは決してありません。",
    "丁寧にノートを取るクラスメート。いま話された内容をわかりやすい箇条書き二、三点に\
         まとめ、大事な式をホワイトボードに書きます。二つの説明が食い違っているように\
         見えると、質問します。",
];

/// The primary subtag of a language tag (`zh-Hans` → `zh`, `ja-JP` → `ja`).
fn primary(tag: &str) -> &str {
    tag.trim().split(['-', '_']).next().unwrap_or_default()
}

/// The names for `tag`; English for any tag without a cast of its own.
fn names_for(tag: &str) -> &'static [&'static str; 4] {
    let primary = primary(tag);
    NAMES
        .iter()
        .find(|(language, _)| language.eq_ignore_ascii_case(primary))
        .map_or(&NAMES[0].1, |(_, names)| names)
}

/// The personas for `tag`; English for any tag without a cast of its own.
fn personas_for(tag: &str) -> &'static Personas {
    let primary = primary(tag);
    PERSONAS
        .iter()
        .find(|(language, _)| language.eq_ignore_ascii_case(primary))
        .map_or(&ENGLISH, |(_, personas)| personas)
}

fn cast(names: &[&str; 4], personas: &Personas) -> Vec<AgentProfile> {
    SEATS
        .iter()
        .zip(names.iter().zip(personas))
        .map(|(seat, (name, persona))| AgentProfile {
            id: seat.id.into(),
            name: (*name).into(),
            role: seat.role,
            persona: (*persona).into(),
            avatar: seat.avatar.into(),
            color: seat.color.into(),
            voice: None,
            priority: seat.priority,
            allowed_actions: seat.role.default_actions(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_s_name_is_the_one_course_files_use() {
        for role in [AgentRole::Teacher, AgentRole::Assistant, AgentRole::Student] {
            let json = serde_json::to_value(role).unwrap();
            assert_eq!(json.as_str(), Some(role.as_str()));
        }
    }

    #[test]
    fn default_cast_is_one_teacher_and_three_classmates_with_distinct_personas() {
        let agents = default_agents();
        assert_eq!(agents.len(), 4);
        assert_eq!(
            agents
                .iter()
                .filter(|a| a.role == AgentRole::Teacher)
                .count(),
            1
        );
        let mut personas: Vec<_> = agents.iter().map(|a| a.persona.as_str()).collect();
        personas.dedup();
        assert_eq!(personas.len(), 4);
        let mut ids: Vec<_> = agents.iter().map(|a| a.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 4);
    }

    /// The course languages the home page offers.
    const OFFERED: [&str; 6] = ["en", "zh-CN", "es", "fr", "de", "ja"];

    #[test]
    fn every_offered_language_has_the_english_cast_s_seats_in_its_own_words() {
        let english = default_agents();
        for tag in OFFERED {
            let agents = default_agents_for(tag);
            assert_eq!(agents.len(), 4, "{tag}");
            for (agent, seat) in agents.iter().zip(&english) {
                assert_eq!(agent.id, seat.id, "{tag}");
                assert_eq!(agent.role, seat.role, "{tag}");
                assert_eq!(agent.priority, seat.priority, "{tag}");
                assert_eq!(agent.color, seat.color, "{tag}");
                assert_eq!(agent.avatar, seat.avatar, "{tag}");
                assert_eq!(agent.allowed_actions, seat.allowed_actions, "{tag}");
                if tag != "en" {
                    assert_ne!(agent.persona, seat.persona, "{tag} {}", agent.id);
                }
                let persona = crate::language::writes_in(&agent.persona, tag);
                assert!(persona.passes, "{tag} {}: {persona:?}", agent.id);
                assert!(persona.weight >= 100, "{tag} {}: too short", agent.id);
                let name = crate::language::writes_in(&agent.name, tag);
                assert!(name.weight > 0 && name.share == 1.0, "{tag} {}", agent.name);
            }
            let mut personas: Vec<_> = agents.iter().map(|a| a.persona.as_str()).collect();
            personas.sort_unstable();
            personas.dedup();
            assert_eq!(personas.len(), 4, "{tag}");
            let mut names: Vec<_> = agents.iter().map(|a| a.name.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), 4, "{tag}");
        }
    }

    #[test]
    fn the_english_cast_is_the_default_and_the_fallback() {
        assert_eq!(default_agents_for("en"), default_agents());
        assert_eq!(default_agents()[0].name, "Professor Lin");
        for tag in ["", "tlh", "ko", "en-GB", "zz-Hans"] {
            assert_eq!(default_agents_for(tag), default_agents(), "{tag}");
        }
    }

    #[test]
    fn language_tags_match_the_cast_loosely() {
        let chinese = default_agents_for("zh-CN");
        assert_eq!(chinese[0].name, "林老师");
        assert_eq!(default_agents_for("zh"), chinese);
        assert_eq!(default_agents_for("zh-Hans"), chinese);
        assert_eq!(default_agents_for("ZH_cn"), chinese);
        assert_eq!(default_agents_for("ja-JP"), default_agents_for("ja"));
        assert_eq!(default_agents_for("fr-CA"), default_agents_for("fr"));
        assert_ne!(default_agents_for("ja"), chinese);
    }

    #[test]
    fn the_pages_cast_gets_the_course_languages_personas_when_the_course_is_written() {
        // What the home page sends: the English cast, renamed for Chinese, one name typed.
        let mut sent = default_agents();
        rename_cast(&mut sent, "en", "zh-CN");
        sent[3].name = "Nour".into();
        assert_eq!(sent[1].name, "小敏");
        assert_eq!(
            sent[1].persona,
            default_agents()[1].persona,
            "names only on the page"
        );
        speak_course_language(&mut sent, "zh-CN");
        let chinese = default_agents_for("zh-CN");
        assert_eq!(&sent[..3], &chinese[..3]);
        assert_eq!(sent[3].name, "Nour");
        assert_eq!(sent[3].persona, chinese[3].persona);
        // A persona the learner wrote is theirs.
        let mut own = default_agents();
        own[0].persona = "A strict examiner.".into();
        speak_course_language(&mut own, "de");
        assert_eq!(own[0].persona, "A strict examiner.");
        assert_eq!(own[0].name, "Frau Lin");
    }

    #[test]
    fn recasting_follows_the_new_language_but_keeps_the_learner_s_names() {
        let mut agents = default_agents();
        agents[2].name = "Captain Pun".into();
        recast(&mut agents, "en", "zh-CN");
        let chinese = default_agents_for("zh-CN");
        assert_eq!(agents[0], chinese[0]);
        assert_eq!(agents[1], chinese[1]);
        assert_eq!(agents[2].name, "Captain Pun");
        assert_eq!(agents[2].persona, chinese[2].persona);
        assert_eq!(agents[3], chinese[3]);
        recast(&mut agents, "zh-CN", "de");
        assert_eq!(agents[1].name, "Lena");
        assert_eq!(agents[2].name, "Captain Pun");
        recast(&mut agents, "de", "en");
        agents[2].name = "Leo".into();
        assert_eq!(agents, default_agents());
    }

    #[test]
    fn recasting_leaves_agents_that_are_not_built_in_alone() {
        let mut guest = default_agents()[1].clone();
        guest.id = "guest".into();
        let mut agents = vec![guest.clone()];
        recast(&mut agents, "en", "ja");
        assert_eq!(agents, vec![guest]);
    }

    #[test]
    fn only_the_teacher_gets_slide_actions_by_default() {
        let teacher = AgentRole::Teacher.default_actions();
        let student = AgentRole::Student.default_actions();
        assert!(teacher.contains(&ActionKind::Spotlight));
        assert!(teacher.contains(&ActionKind::PlayVideo));
        assert!(!student.contains(&ActionKind::Spotlight));
        assert!(student.contains(&ActionKind::WbDrawText));
        assert!(!student.contains(&ActionKind::Speech));
        assert_eq!(AgentRole::Assistant.default_actions(), student);
    }
}
