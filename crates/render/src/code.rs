//! Syntax highlighting small enough to ship in the page: one pass over the code that marks
//! keywords, strings, numbers, comments and called functions with `tok-*` classes. Output is one
//! HTML string per line of input, each complete on its own (a token that spans lines is closed at
//! the end of a line and reopened on the next), so the whiteboard can number, type and edit lines.

use crate::push_escaped;

/// Highlights `code` as `language` (case-insensitive, common aliases like `rs`, `py`, `ts`, `sh`).
///
/// Returns one HTML string per line, where lines are separated by `\n` as in a course's code
/// block (a trailing `\r` is dropped), so the result has `code.split('\n').count()` entries.
/// Tokens are `<span class="tok-kw|tok-str|tok-num|tok-com|tok-fn">`. Keywords are known for Rust,
/// Python, JavaScript/TypeScript, C/C++/Java, Go, SQL and Bash; other languages get strings,
/// numbers and comments. Everything is escaped.
pub fn highlight_code(language: &str, code: &str) -> Vec<String> {
    let syntax = Syntax::for_language(language);
    let normalized;
    let code = if code.contains("\r\n") {
        normalized = code.replace("\r\n", "\n");
        normalized.as_str()
    } else {
        code
    };
    let mut out = Lines::default();
    Scanner {
        code,
        syntax,
        at: 0,
    }
    .run(&mut out);
    out.finish()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Plain,
    Keyword,
    String,
    Number,
    Comment,
    Function,
}

impl Token {
    fn class(self) -> Option<&'static str> {
        match self {
            Token::Plain => None,
            Token::Keyword => Some("tok-kw"),
            Token::String => Some("tok-str"),
            Token::Number => Some("tok-num"),
            Token::Comment => Some("tok-com"),
            Token::Function => Some("tok-fn"),
        }
    }
}

struct LineComment {
    prefix: &'static str,
    /// Only at the start of a line or after whitespace (`#` in shells, `//` in unknown text,
    /// so `$#` and `http://` are not comments).
    after_space: bool,
}

struct Quote {
    delimiter: &'static str,
    /// A string that may run over lines. One that may not is only a string when it closes on
    /// its line, so an apostrophe in prose does not colour the rest of the line.
    multiline: bool,
    backslash_escapes: bool,
}

struct Syntax {
    keywords: &'static [&'static str],
    keywords_ignore_case: bool,
    line_comments: &'static [LineComment],
    block_comment: Option<(&'static str, &'static str)>,
    quotes: &'static [Quote],
    /// Rust: `'a'` is a char but `'a` a lifetime, `r#"…"#` a raw string, `name!` a macro call.
    rust: bool,
}

const fn line(prefix: &'static str) -> LineComment {
    LineComment {
        prefix,
        after_space: false,
    }
}

const fn line_after_space(prefix: &'static str) -> LineComment {
    LineComment {
        prefix,
        after_space: true,
    }
}

const fn quote(delimiter: &'static str, multiline: bool, backslash_escapes: bool) -> Quote {
    Quote {
        delimiter,
        multiline,
        backslash_escapes,
    }
}

const SLASH_COMMENTS: &[LineComment] = &[line("//")];
const HASH_COMMENTS: &[LineComment] = &[line("#")];
const SHELL_COMMENTS: &[LineComment] = &[line_after_space("#")];
const DASH_COMMENTS: &[LineComment] = &[line("--")];
const GUESSED_COMMENTS: &[LineComment] = &[line_after_space("//"), line_after_space("#")];
const C_BLOCK: Option<(&str, &str)> = Some(("/*", "*/"));

const SIMPLE_QUOTES: &[Quote] = &[quote("\"", false, true), quote("'", false, true)];

const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while",
];
const PYTHON_KEYWORDS: &[&str] = &[
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "False", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "None", "nonlocal", "not", "or", "pass", "raise", "return", "self", "True", "try",
    "while", "with", "yield",
];
const JS_KEYWORDS: &[&str] = &[
    "abstract",
    "as",
    "async",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "declare",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "from",
    "function",
    "if",
    "implements",
    "import",
    "in",
    "instanceof",
    "interface",
    "keyof",
    "let",
    "new",
    "null",
    "of",
    "private",
    "protected",
    "public",
    "readonly",
    "return",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "type",
    "typeof",
    "undefined",
    "var",
    "void",
    "while",
    "yield",
];
const C_FAMILY_KEYWORDS: &[&str] = &[
    "abstract",
    "auto",
    "bool",
    "boolean",
    "break",
    "byte",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "constexpr",
    "continue",
    "default",
    "delete",
    "do",
    "double",
    "else",
    "enum",
    "extends",
    "extern",
    "false",
    "final",
    "finally",
    "float",
    "for",
    "goto",
    "if",
    "implements",
    "import",
    "inline",
    "instanceof",
    "int",
    "interface",
    "long",
    "namespace",
    "new",
    "null",
    "nullptr",
    "override",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "super",
    "switch",
    "synchronized",
    "template",
    "this",
    "throw",
    "throws",
    "true",
    "try",
    "typedef",
    "typename",
    "union",
    "unsigned",
    "using",
    "var",
    "virtual",
    "void",
    "volatile",
    "while",
];
const GO_KEYWORDS: &[&str] = &[
    "break",
    "case",
    "chan",
    "const",
    "continue",
    "default",
    "defer",
    "else",
    "fallthrough",
    "false",
    "for",
    "func",
    "go",
    "goto",
    "if",
    "import",
    "interface",
    "map",
    "nil",
    "package",
    "range",
    "return",
    "select",
    "struct",
    "switch",
    "true",
    "type",
    "var",
];
const SQL_KEYWORDS: &[&str] = &[
    "add",
    "all",
    "alter",
    "and",
    "as",
    "asc",
    "between",
    "by",
    "case",
    "create",
    "default",
    "delete",
    "desc",
    "distinct",
    "drop",
    "else",
    "end",
    "exists",
    "foreign",
    "from",
    "full",
    "group",
    "having",
    "in",
    "index",
    "inner",
    "insert",
    "into",
    "is",
    "join",
    "key",
    "left",
    "like",
    "limit",
    "not",
    "null",
    "offset",
    "on",
    "or",
    "order",
    "outer",
    "primary",
    "references",
    "right",
    "select",
    "set",
    "table",
    "then",
    "union",
    "update",
    "values",
    "when",
    "where",
    "with",
];
const BASH_KEYWORDS: &[&str] = &[
    "break", "case", "continue", "declare", "do", "done", "elif", "else", "esac", "export", "fi",
    "for", "function", "if", "in", "local", "readonly", "return", "select", "then", "until",
    "while",
];

const RUST: Syntax = Syntax {
    keywords: RUST_KEYWORDS,
    keywords_ignore_case: false,
    line_comments: SLASH_COMMENTS,
    block_comment: C_BLOCK,
    quotes: &[quote("\"", true, true)],
    rust: true,
};
const PYTHON: Syntax = Syntax {
    keywords: PYTHON_KEYWORDS,
    keywords_ignore_case: false,
    line_comments: HASH_COMMENTS,
    block_comment: None,
    quotes: &[
        quote("\"\"\"", true, true),
        quote("'''", true, true),
        quote("\"", false, true),
        quote("'", false, true),
    ],
    rust: false,
};
const JAVASCRIPT: Syntax = Syntax {
    keywords: JS_KEYWORDS,
    keywords_ignore_case: false,
    line_comments: SLASH_COMMENTS,
    block_comment: C_BLOCK,
    quotes: &[
        quote("`", true, true),
        quote("\"", false, true),
        quote("'", false, true),
    ],
    rust: false,
};
const C_FAMILY: Syntax = Syntax {
    keywords: C_FAMILY_KEYWORDS,
    keywords_ignore_case: false,
    line_comments: SLASH_COMMENTS,
    block_comment: C_BLOCK,
    // `"""` is a Java text block.
    quotes: &[
        quote("\"\"\"", true, true),
        quote("\"", false, true),
        quote("'", false, true),
    ],
    rust: false,
};
const GO: Syntax = Syntax {
    keywords: GO_KEYWORDS,
    keywords_ignore_case: false,
    line_comments: SLASH_COMMENTS,
    block_comment: C_BLOCK,
    quotes: &[
        quote("`", true, false),
        quote("\"", false, true),
        quote("'", false, true),
    ],
    rust: false,
};
const SQL: Syntax = Syntax {
    keywords: SQL_KEYWORDS,
    keywords_ignore_case: true,
    line_comments: DASH_COMMENTS,
    block_comment: C_BLOCK,
    quotes: &[quote("'", true, false), quote("\"", false, false)],
    rust: false,
};
const BASH: Syntax = Syntax {
    keywords: BASH_KEYWORDS,
    keywords_ignore_case: false,
    line_comments: SHELL_COMMENTS,
    block_comment: None,
    quotes: &[quote("'", true, false), quote("\"", true, true)],
    rust: false,
};
/// C-like languages without a keyword list (C#, Kotlin, Swift, PHP, CSS, JSON, …).
const SLASH_FAMILY: Syntax = Syntax {
    keywords: &[],
    keywords_ignore_case: false,
    line_comments: SLASH_COMMENTS,
    block_comment: C_BLOCK,
    quotes: SIMPLE_QUOTES,
    rust: false,
};
/// `#`-commented languages without a keyword list (Ruby, YAML, TOML, R, Perl, …).
const HASH_FAMILY: Syntax = Syntax {
    keywords: &[],
    keywords_ignore_case: false,
    line_comments: HASH_COMMENTS,
    block_comment: None,
    quotes: SIMPLE_QUOTES,
    rust: false,
};
/// `--`-commented languages without a keyword list (Lua, Haskell).
const DASH_FAMILY: Syntax = Syntax {
    keywords: &[],
    keywords_ignore_case: false,
    line_comments: DASH_COMMENTS,
    block_comment: None,
    quotes: SIMPLE_QUOTES,
    rust: false,
};
const MARKUP: Syntax = Syntax {
    keywords: &[],
    keywords_ignore_case: false,
    line_comments: &[],
    block_comment: Some(("<!--", "-->")),
    quotes: SIMPLE_QUOTES,
    rust: false,
};
/// An unknown or missing language: the comment markers most languages share.
const GUESSED: Syntax = Syntax {
    keywords: &[],
    keywords_ignore_case: false,
    line_comments: GUESSED_COMMENTS,
    block_comment: C_BLOCK,
    quotes: SIMPLE_QUOTES,
    rust: false,
};

impl Syntax {
    fn for_language(language: &str) -> &'static Syntax {
        match language.trim().to_ascii_lowercase().as_str() {
            "rust" | "rs" => &RUST,
            "python" | "py" | "python3" | "py3" => &PYTHON,
            "javascript" | "js" | "jsx" | "mjs" | "cjs" | "typescript" | "ts" | "tsx" | "node" => {
                &JAVASCRIPT
            }
            "c" | "h" | "cpp" | "c++" | "cc" | "cxx" | "hpp" | "java" => &C_FAMILY,
            "go" | "golang" => &GO,
            "sql" | "mysql" | "postgres" | "postgresql" | "sqlite" | "plsql" => &SQL,
            "bash" | "sh" | "shell" | "zsh" | "console" | "shellscript" => &BASH,
            "csharp" | "cs" | "c#" | "kotlin" | "kt" | "swift" | "php" | "scala" | "dart"
            | "css" | "scss" | "less" | "json" | "jsonc" | "groovy" => &SLASH_FAMILY,
            "ruby" | "rb" | "yaml" | "yml" | "toml" | "r" | "perl" | "pl" | "powershell"
            | "ps1" | "dockerfile" | "makefile" | "make" | "ini" | "conf" | "elixir" | "nim" => {
                &HASH_FAMILY
            }
            "lua" | "haskell" | "hs" => &DASH_FAMILY,
            "html" | "xml" | "svg" | "vue" | "markdown" | "md" => &MARKUP,
            _ => &GUESSED,
        }
    }

    fn is_keyword(&self, word: &str) -> bool {
        if self.keywords_ignore_case {
            self.keywords.iter().any(|k| k.eq_ignore_ascii_case(word))
        } else {
            self.keywords.contains(&word)
        }
    }
}

fn is_word_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

struct Scanner<'a> {
    code: &'a str,
    syntax: &'static Syntax,
    at: usize,
}

impl<'a> Scanner<'a> {
    fn rest(&self) -> &'a str {
        &self.code[self.at..]
    }

    fn previous_char(&self) -> Option<char> {
        self.code[..self.at].chars().next_back()
    }

    fn run(&mut self, out: &mut Lines) {
        let mut plain_start = self.at;
        while self.at < self.code.len() {
            let start = self.at;
            match self.token_here() {
                Some((token, end)) => {
                    out.push(Token::Plain, &self.code[plain_start..start]);
                    out.push(token, &self.code[start..end]);
                    self.at = end;
                    plain_start = end;
                }
                None => {
                    let width = self.rest().chars().next().map_or(1, char::len_utf8);
                    self.at += width;
                }
            }
        }
        out.push(Token::Plain, &self.code[plain_start..]);
    }

    /// The token starting at the cursor and where it ends, or `None` for plain text.
    fn token_here(&self) -> Option<(Token, usize)> {
        let rest = self.rest();
        let first = rest.chars().next()?;
        let syntax = self.syntax;

        if let Some((open, close)) = syntax.block_comment {
            if let Some(body) = rest.strip_prefix(open) {
                let end = body
                    .find(close)
                    .map_or(self.code.len(), |i| self.at + open.len() + i + close.len());
                return Some((Token::Comment, end));
            }
        }
        for comment in syntax.line_comments {
            if rest.starts_with(comment.prefix)
                && (!comment.after_space || self.previous_char().is_none_or(char::is_whitespace))
            {
                return Some((Token::Comment, self.line_end()));
            }
        }
        if syntax.rust {
            if let Some(found) = self.rust_special() {
                return found;
            }
        }
        for q in syntax.quotes {
            if rest.starts_with(q.delimiter) {
                if let Some(end) = self.string_end(q) {
                    return Some((Token::String, end));
                }
            }
        }
        if first.is_ascii_digit() {
            return Some((Token::Number, self.number_end()));
        }
        if is_word_start(first) {
            let len = rest.find(|c| !is_word_char(c)).unwrap_or(rest.len());
            let word = &rest[..len];
            let end = self.at + len;
            if syntax.is_keyword(word) {
                return Some((Token::Keyword, end));
            }
            let after = &rest[len..];
            if syntax.rust && after.starts_with('!') && !after.starts_with("!=") {
                return Some((Token::Function, end + 1));
            }
            let token = if after.trim_start_matches([' ', '\t']).starts_with('(') {
                Token::Function
            } else {
                Token::Plain
            };
            return Some((token, end));
        }
        None
    }

    fn line_end(&self) -> usize {
        self.rest()
            .find('\n')
            .map_or(self.code.len(), |i| self.at + i)
    }

    /// Where the string opened by `q` at the cursor ends, if it is a string.
    fn string_end(&self, q: &Quote) -> Option<usize> {
        let body_start = self.at + q.delimiter.len();
        let body = &self.code[body_start..];
        let mut chars = body.char_indices();
        while let Some((i, c)) = chars.next() {
            if q.backslash_escapes && c == '\\' {
                match chars.next() {
                    Some((_, '\n')) if !q.multiline => return None,
                    _ => continue,
                }
            }
            if c == '\n' && !q.multiline {
                return None;
            }
            if body[i..].starts_with(q.delimiter) {
                return Some(body_start + i + q.delimiter.len());
            }
        }
        q.multiline.then_some(self.code.len())
    }

    fn number_end(&self) -> usize {
        let bytes = self.rest().as_bytes();
        let hex = bytes.len() > 1 && bytes[0] == b'0' && matches!(bytes[1], b'x' | b'X');
        let mut i = 1;
        while i < bytes.len() {
            let b = bytes[i];
            let fraction_dot = b == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
            let exponent_sign = matches!(b, b'+' | b'-')
                && !hex
                && matches!(bytes[i - 1], b'e' | b'E')
                && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
            if b.is_ascii_alphanumeric() || b == b'_' || fraction_dot || exponent_sign {
                i += 1;
            } else {
                break;
            }
        }
        self.at + i
    }

    /// Rust's char literals, lifetimes and raw strings; `None` when none starts here.
    fn rust_special(&self) -> Option<Option<(Token, usize)>> {
        let rest = self.rest();
        if let Some(after) = rest.strip_prefix('\'') {
            let mut chars = after.char_indices();
            return Some(match chars.next() {
                Some((_, '\\')) => after
                    .char_indices()
                    .skip(2)
                    .take(10)
                    .find(|&(_, c)| c == '\'' || c == '\n')
                    .filter(|&(_, c)| c == '\'')
                    .map(|(i, _)| (Token::String, self.at + 1 + i + 1)),
                Some((_, c)) if chars.next().is_some_and(|(_, next)| next == '\'') => {
                    Some((Token::String, self.at + 1 + c.len_utf8() + 1))
                }
                // A lifetime or label: plain, and its name is no keyword (`'static`).
                Some((_, c)) if is_word_start(c) => {
                    let len = after.find(|c| !is_word_char(c)).unwrap_or(after.len());
                    Some((Token::Plain, self.at + 1 + len))
                }
                _ => None,
            });
        }
        let starts_raw = (rest.starts_with("r\"") || rest.starts_with("r#"))
            && !self.previous_char().is_some_and(is_word_char);
        if starts_raw {
            let hashes = rest[1..].bytes().take_while(|&b| b == b'#').count();
            if rest[1 + hashes..].starts_with('"') {
                let body_start = self.at + 2 + hashes;
                let mut closing = String::with_capacity(1 + hashes);
                closing.push('"');
                closing.extend(std::iter::repeat_n('#', hashes));
                let end = self.code[body_start..]
                    .find(&closing)
                    .map_or(self.code.len(), |i| body_start + i + closing.len());
                return Some(Some((Token::String, end)));
            }
        }
        None
    }
}

/// The finished lines and the one being written.
#[derive(Default)]
struct Lines {
    done: Vec<String>,
    current: String,
}

impl Lines {
    fn push(&mut self, token: Token, text: &str) {
        let mut pieces = text.split('\n');
        if let Some(first) = pieces.next() {
            self.push_piece(token, first);
        }
        for piece in pieces {
            self.end_line();
            self.push_piece(token, piece);
        }
    }

    fn push_piece(&mut self, token: Token, piece: &str) {
        if piece.is_empty() {
            return;
        }
        match token.class() {
            Some(class) => {
                self.current.push_str("<span class=\"");
                self.current.push_str(class);
                self.current.push_str("\">");
                push_escaped(&mut self.current, piece);
                self.current.push_str("</span>");
            }
            None => push_escaped(&mut self.current, piece),
        }
    }

    fn end_line(&mut self) {
        self.done.push(std::mem::take(&mut self.current));
    }

    fn finish(mut self) -> Vec<String> {
        self.end_line();
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markup_check::parse_markup;

    /// The line's tokens as (class, text), plain text as class "".
    fn tokens(line: &str) -> Vec<(String, String)> {
        let mut tokens = Vec::new();
        let mut rest = line;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix("<span class=\"") {
                let class_end = after.find('"').unwrap();
                let body = &after[class_end + 2..];
                let body_end = body.find("</span>").unwrap();
                let text = parse_markup(&body[..body_end]).unwrap().text;
                tokens.push((after[..class_end].to_owned(), text));
                rest = &body[body_end + 7..];
            } else {
                let end = rest.find("<span").unwrap_or(rest.len());
                tokens.push((String::new(), parse_markup(&rest[..end]).unwrap().text));
                rest = &rest[end..];
            }
        }
        tokens
    }

    fn has(line: &str, class: &str, text: &str) -> bool {
        tokens(line).iter().any(|(c, t)| c == class && t == text)
    }

    #[test]
    fn rust_keywords_strings_numbers_comments_and_calls_are_tokenised() {
        let lines = highlight_code(
            "rust",
            "fn main() {\n    let n: u32 = 0x2A; // answer\n    println!(\"{n} < {}\", max(n, 1_000));\n}",
        );
        assert_eq!(lines.len(), 4);
        assert!(has(&lines[0], "tok-kw", "fn"), "{}", lines[0]);
        assert!(has(&lines[0], "tok-fn", "main"), "{}", lines[0]);
        assert!(has(&lines[1], "tok-kw", "let"), "{}", lines[1]);
        assert!(has(&lines[1], "tok-num", "0x2A"), "{}", lines[1]);
        assert!(has(&lines[1], "tok-com", "// answer"), "{}", lines[1]);
        assert!(has(&lines[2], "tok-fn", "println!"), "{}", lines[2]);
        assert!(has(&lines[2], "tok-str", "\"{n} < {}\""), "{}", lines[2]);
        assert!(has(&lines[2], "tok-fn", "max"), "{}", lines[2]);
        assert!(has(&lines[2], "tok-num", "1_000"), "{}", lines[2]);
        assert!(lines[2].contains("&lt;"), "{}", lines[2]);
        assert!(!lines[2].contains("{n} < {}"), "{}", lines[2]);
    }

    #[test]
    fn rust_lifetimes_are_not_chars_but_char_literals_are_strings() {
        let lines = highlight_code("rs", "fn f<'a>(s: &'static str) -> char { 'x' } '\\n'");
        assert!(!has(&lines[0], "tok-kw", "static"), "{}", lines[0]);
        assert!(has(&lines[0], "tok-str", "'x'"), "{}", lines[0]);
        assert!(has(&lines[0], "tok-str", "'\\n'"), "{}", lines[0]);
        assert!(has(&lines[0], "tok-kw", "fn"), "{}", lines[0]);
    }

    #[test]
    fn rust_raw_strings_end_at_their_own_delimiter() {
        let lines = highlight_code("rust", "let s = r#\"say \"hi\"\"#; x");
        assert!(
            has(&lines[0], "tok-str", "r#\"say \"hi\"\"#"),
            "{}",
            lines[0]
        );
    }

    #[test]
    fn python_keywords_strings_comments_and_defs_are_tokenised() {
        let lines = highlight_code(
            "Python",
            "def area(r):\n    # pi r squared\n    return 3.14159 * r ** 2  # approx\nprint('a<b', \"c\")",
        );
        assert_eq!(lines.len(), 4);
        assert!(has(&lines[0], "tok-kw", "def"), "{}", lines[0]);
        assert!(has(&lines[0], "tok-fn", "area"), "{}", lines[0]);
        assert!(has(&lines[1], "tok-com", "# pi r squared"), "{}", lines[1]);
        assert!(has(&lines[2], "tok-kw", "return"), "{}", lines[2]);
        assert!(has(&lines[2], "tok-num", "3.14159"), "{}", lines[2]);
        assert!(has(&lines[2], "tok-com", "# approx"), "{}", lines[2]);
        assert!(has(&lines[3], "tok-str", "'a<b'"), "{}", lines[3]);
        assert!(has(&lines[3], "tok-str", "\"c\""), "{}", lines[3]);
        assert!(lines[3].contains("a&lt;b"), "{}", lines[3]);
    }

    #[test]
    fn multiline_strings_and_comments_are_closed_and_reopened_per_line() {
        let lines = highlight_code("python", "x = \"\"\"one\ntwo\"\"\" + 1");
        assert_eq!(lines.len(), 2);
        assert!(has(&lines[0], "tok-str", "\"\"\"one"), "{}", lines[0]);
        assert!(has(&lines[1], "tok-str", "two\"\"\""), "{}", lines[1]);
        assert!(has(&lines[1], "tok-num", "1"), "{}", lines[1]);

        let lines = highlight_code("js", "/* a\n\n b */ let x");
        assert_eq!(lines.len(), 3);
        assert!(has(&lines[0], "tok-com", "/* a"), "{}", lines[0]);
        assert_eq!(lines[1], "");
        assert!(has(&lines[2], "tok-com", " b */"), "{}", lines[2]);
        assert!(has(&lines[2], "tok-kw", "let"), "{}", lines[2]);
    }

    #[test]
    fn line_count_is_preserved_including_blank_and_trailing_lines() {
        for code in ["", "a", "a\n", "\n\n\n", "a\r\nb\r\n", "x = '''\n\n'''\n"] {
            let lines = highlight_code("python", code);
            assert_eq!(lines.len(), code.split('\n').count(), "{code:?}");
            assert!(
                lines.iter().all(|l| !l.contains('\n') && !l.contains('\r')),
                "{lines:?}"
            );
        }
    }

    #[test]
    fn crlf_inside_a_token_is_dropped_without_breaking_the_span() {
        let lines = highlight_code("rust", "// note\r\nlet x = \"a\r\nb\";");
        assert_eq!(lines[0], "<span class=\"tok-com\">// note</span>");
        assert_eq!(
            lines[1],
            "<span class=\"tok-kw\">let</span> x = <span class=\"tok-str\">&quot;a</span>"
        );
    }

    #[test]
    fn unclosed_single_line_quotes_are_plain_text() {
        let lines = highlight_code("python", "x = \"don't stop\nprint(it's)");
        assert!(!lines[0].contains("tok-str"), "{}", lines[0]);
        assert!(!lines[1].contains("tok-str"), "{}", lines[1]);
    }

    #[test]
    fn sql_keywords_ignore_case_and_dash_comments_count() {
        let lines = highlight_code("SQL", "SELECT name FROM t WHERE a = 'x' -- why");
        assert!(has(&lines[0], "tok-kw", "SELECT"), "{}", lines[0]);
        assert!(has(&lines[0], "tok-kw", "WHERE"), "{}", lines[0]);
        assert!(has(&lines[0], "tok-str", "'x'"), "{}", lines[0]);
        assert!(has(&lines[0], "tok-com", "-- why"), "{}", lines[0]);
    }

    #[test]
    fn shell_hash_is_a_comment_only_after_space() {
        let lines = highlight_code("bash", "echo $# # count\nif [ -n \"$x\" ]; then");
        assert!(has(&lines[0], "tok-com", "# count"), "{}", lines[0]);
        assert!(!has(&lines[0], "tok-com", "# # count"), "{}", lines[0]);
        assert!(has(&lines[1], "tok-kw", "if"), "{}", lines[1]);
        assert!(has(&lines[1], "tok-kw", "then"), "{}", lines[1]);
    }

    #[test]
    fn other_languages_get_strings_numbers_and_comments_but_no_keywords() {
        let lines = highlight_code("ruby", "def x = \"s\" + 42 # c");
        assert!(!lines[0].contains("tok-kw"), "{}", lines[0]);
        assert!(has(&lines[0], "tok-str", "\"s\""), "{}", lines[0]);
        assert!(has(&lines[0], "tok-num", "42"), "{}", lines[0]);
        assert!(has(&lines[0], "tok-com", "# c"), "{}", lines[0]);

        let lines = highlight_code("", "see http://example.org // note");
        assert!(has(&lines[0], "tok-com", "// note"), "{}", lines[0]);
        assert!(!lines[0].contains("tok-com\">//example"), "{}", lines[0]);
    }

    #[test]
    fn markup_in_code_is_escaped() {
        let lines = highlight_code("html", "<script>alert('x')</script> <!-- <b> -->");
        assert!(!lines[0].contains("<script"), "{}", lines[0]);
        assert!(lines[0].starts_with("&lt;script&gt;"), "{}", lines[0]);
        assert!(has(&lines[0], "tok-com", "<!-- <b> -->"), "{}", lines[0]);
    }
}
