//! LaTeX as linear Unicode text (`\frac{QK^{\top}}{\sqrt{d_k}}` → `(QKᵀ)/√(dₖ)`), which any slide
//! program shows and a reader can edit. Not a typesetter: it knows the common symbols, fonts,
//! fractions, roots, scripts and arrows, and writes any other command by its name. Its symbols
//! are render's own table (`aula_render::latex_symbol`), so a formula names the same characters
//! on the page and in the deck. Input is untrusted; nesting is bounded and every path ends.

const MAX_DEPTH: usize = 32;

/// The linear form of `latex`, or the source itself when nothing readable comes out.
pub(crate) fn linear_form(latex: &str) -> String {
    let chars: Vec<char> = latex.chars().collect();
    let mut parser = Parser { chars, at: 0 };
    let out = parser.sequence(0, None);
    let mut collapsed = String::with_capacity(out.len());
    for c in out.trim().chars() {
        if c == ' ' && collapsed.ends_with(' ') {
            continue;
        }
        collapsed.push(c);
    }
    if collapsed.is_empty() {
        latex.trim().to_string()
    } else {
        collapsed
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    /// Reads until the end, or until `until` at this level (consumed).
    fn sequence(&mut self, depth: usize, until: Option<char>) -> String {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            if Some(c) == until {
                self.at += 1;
                return out;
            }
            self.at += 1;
            match c {
                '{' => {
                    let inner = self.group_body(depth);
                    out.push_str(&inner);
                }
                '}' => {}
                '\\' => {
                    let piece = self.command(depth);
                    out.push_str(&piece);
                }
                '^' | '_' => {
                    let argument = self.argument(depth);
                    out.push_str(&script(&argument, c == '^'));
                }
                '&' => out.push(' '),
                '~' => out.push(' '),
                '\n' | '\t' | '\r' => out.push(' '),
                c => out.push(c),
            }
        }
        out
    }

    fn group_body(&mut self, depth: usize) -> String {
        if depth >= MAX_DEPTH {
            // Too deep: skip to the matching brace, keeping the text flat.
            let mut level = 1;
            let mut out = String::new();
            while let Some(c) = self.peek() {
                self.at += 1;
                match c {
                    '{' => level += 1,
                    '}' => {
                        level -= 1;
                        if level == 0 {
                            break;
                        }
                    }
                    c => out.push(c),
                }
            }
            return out;
        }
        self.sequence(depth + 1, Some('}'))
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    /// One argument: a `{group}`, a command, or one character.
    fn argument(&mut self, depth: usize) -> String {
        self.skip_spaces();
        match self.peek() {
            Some('{') => {
                self.at += 1;
                self.group_body(depth)
            }
            Some('\\') => {
                self.at += 1;
                if depth >= MAX_DEPTH {
                    return String::new();
                }
                self.command(depth + 1)
            }
            Some(c) => {
                self.at += 1;
                c.to_string()
            }
            None => String::new(),
        }
    }

    /// An optional `[argument]`.
    fn optional(&mut self, depth: usize) -> Option<String> {
        self.skip_spaces();
        if self.peek() != Some('[') {
            return None;
        }
        self.at += 1;
        if depth >= MAX_DEPTH {
            return None;
        }
        Some(self.sequence(depth + 1, Some(']')))
    }

    fn command(&mut self, depth: usize) -> String {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
            self.at += 1;
        }
        if self.at == start {
            // A one-character command: `\,`, `\{`, `\\` ...
            let Some(c) = self.peek() else {
                return String::new();
            };
            self.at += 1;
            return match c {
                ',' | ':' | ';' | ' ' => " ".into(),
                '!' => String::new(),
                '\\' => "; ".into(),
                '|' => "‖".into(),
                c => c.to_string(),
            };
        }
        let name: String = self.chars[start..self.at].iter().collect();
        self.skip_spaces();
        if let Some(c) = aula_render::latex_symbol(&name) {
            // Relations and arrows stand apart, as TeX spaces them.
            let relation = matches!(c as u32, 0x2190..=0x21FF | 0x27F0..=0x27FF | 0x2200..=0x22FF)
                && !matches!(c, '∑' | '∏' | '∐' | '∫' | '∬' | '∮' | '∂' | '∇' | '∞' | '∅')
                && !matches!(
                    c,
                    '∀' | '∃' | '¬' | '⋯' | '⋮' | '⋱' | '⊤' | '⊥' | '∘' | '∗' | '⋅' | '∙'
                );
            return if relation {
                format!(" {c} ")
            } else {
                c.to_string()
            };
        }
        match name.as_str() {
            "frac" | "dfrac" | "tfrac" | "cfrac" => {
                let top = self.argument(depth);
                let bottom = self.argument(depth);
                format!("{}/{}", wrapped(&top), wrapped(&bottom))
            }
            "sqrt" => {
                let index = self.optional(depth);
                let body = self.argument(depth);
                let root = match index.as_deref().map(str::trim) {
                    Some("3") => "∛".to_string(),
                    Some("4") => "∜".to_string(),
                    Some(n) if !n.is_empty() => format!("{}√", script(n, true)),
                    _ => "√".to_string(),
                };
                format!("{root}{}", wrapped(&body))
            }
            "mathrm" | "text" | "textrm" | "mathbf" | "mathit" | "mathsf" | "mathtt"
            | "mathcal" | "mathbb" | "mathfrak" | "operatorname" | "boldsymbol" | "textbf"
            | "textit" | "mbox" | "hbox" | "emph" | "textsf" | "texttt" => self.argument(depth),
            "overline" | "bar" => accent(&self.argument(depth), '\u{305}'),
            "hat" | "widehat" => accent(&self.argument(depth), '\u{302}'),
            "tilde" | "widetilde" => accent(&self.argument(depth), '\u{303}'),
            "vec" | "overrightarrow" => accent(&self.argument(depth), '\u{20D7}'),
            "dot" => accent(&self.argument(depth), '\u{307}'),
            "ddot" => accent(&self.argument(depth), '\u{308}'),
            "underline" => accent(&self.argument(depth), '\u{332}'),
            "xrightarrow" | "xleftarrow" | "xRightarrow" => {
                let below = self.optional(depth);
                let above = self.argument(depth);
                let arrow = if name == "xleftarrow" { "←" } else { "→" };
                let label = match below.filter(|b| !b.trim().is_empty()) {
                    Some(below) => format!("{}, {}", above.trim(), below.trim()),
                    None => above.trim().to_string(),
                };
                if label.is_empty() {
                    format!(" {arrow} ")
                } else {
                    format!(" ─{label}{arrow} ")
                }
            }
            "begin" | "end" => {
                // Environment names (matrix, cases, aligned) are layout, not content.
                self.argument(depth);
                " ".into()
            }
            "left" | "right" | "big" | "Big" | "bigg" | "Bigg" | "bigl" | "bigr" | "Bigl"
            | "Bigr" | "biggl" | "biggr" | "displaystyle" | "textstyle" | "scriptstyle"
            | "limits" | "nolimits" | "middle" => {
                if self.peek() == Some('.') {
                    self.at += 1;
                }
                String::new()
            }
            "quad" => "  ".into(),
            "qquad" => "    ".into(),
            "label" | "tag" | "color" => {
                self.argument(depth);
                String::new()
            }
            "textcolor" => {
                self.argument(depth);
                self.argument(depth)
            }
            "log" | "ln" | "lg" | "exp" | "sin" | "cos" | "tan" | "cot" | "sec" | "csc"
            | "sinh" | "cosh" | "tanh" | "arcsin" | "arccos" | "arctan" | "max" | "min" | "sup"
            | "inf" | "lim" | "arg" | "det" | "dim" | "ker" | "gcd" | "deg" | "Pr" => name,
            _ => name,
        }
    }
}

/// `text` in parentheses unless it is a single symbol or already bracketed.
fn wrapped(text: &str) -> String {
    let text = text.trim();
    let word = |t: &str| t.chars().all(|c| c.is_alphanumeric() || c == '.');
    let simple = text.chars().count() <= 1
        || word(text)
        || text.strip_prefix('√').is_some_and(word)
        || (text.starts_with('(') && text.ends_with(')') && text.matches('(').count() == 1);
    if simple {
        text.to_string()
    } else {
        format!("({text})")
    }
}

fn accent(text: &str, mark: char) -> String {
    let text = text.trim();
    if text.chars().count() == 1 {
        format!("{text}{mark}")
    } else {
        format!("({text}){mark}")
    }
}

/// A super- or subscript: Unicode script characters when every character has one, `^(..)` or
/// `_(..)` otherwise.
fn script(text: &str, superscript: bool) -> String {
    let text = text.trim();
    if text.is_empty() {
        return String::new();
    }
    let mapped: Option<String> = text
        .chars()
        .map(|c| {
            if superscript {
                superscript_of(c)
            } else {
                subscript_of(c)
            }
        })
        .collect();
    match mapped {
        Some(mapped) => mapped,
        None => {
            let mark = if superscript { '^' } else { '_' };
            if text.chars().count() == 1 {
                format!("{mark}{text}")
            } else {
                format!("{mark}({text})")
            }
        }
    }
}

fn superscript_of(c: char) -> Option<char> {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    Some(match c {
        '0'..='9' => DIGITS[c as usize - '0' as usize],
        '+' => '⁺',
        '-' | '−' => '⁻',
        '=' => '⁼',
        '(' => '⁽',
        ')' => '⁾',
        'a' => 'ᵃ',
        'b' => 'ᵇ',
        'c' => 'ᶜ',
        'd' => 'ᵈ',
        'e' => 'ᵉ',
        'f' => 'ᶠ',
        'g' => 'ᵍ',
        'h' => 'ʰ',
        'i' => 'ⁱ',
        'j' => 'ʲ',
        'k' => 'ᵏ',
        'l' => 'ˡ',
        'm' => 'ᵐ',
        'n' => 'ⁿ',
        'o' => 'ᵒ',
        'p' => 'ᵖ',
        'r' => 'ʳ',
        's' => 'ˢ',
        't' => 'ᵗ',
        'u' => 'ᵘ',
        'v' => 'ᵛ',
        'w' => 'ʷ',
        'x' => 'ˣ',
        'y' => 'ʸ',
        'z' => 'ᶻ',
        'T' | '⊤' => 'ᵀ',
        'A' => 'ᴬ',
        'B' => 'ᴮ',
        'D' => 'ᴰ',
        'E' => 'ᴱ',
        'G' => 'ᴳ',
        'H' => 'ᴴ',
        'I' => 'ᴵ',
        'J' => 'ᴶ',
        'K' => 'ᴷ',
        'L' => 'ᴸ',
        'M' => 'ᴹ',
        'N' => 'ᴺ',
        'O' => 'ᴼ',
        'P' => 'ᴾ',
        'R' => 'ᴿ',
        'U' => 'ᵁ',
        'V' => 'ⱽ',
        'W' => 'ᵂ',
        '′' | '\'' => '′',
        '∗' | '*' => '*',
        ' ' | ',' | '/' | '.' => c,
        _ => return None,
    })
}

fn subscript_of(c: char) -> Option<char> {
    const DIGITS: [char; 10] = ['₀', '₁', '₂', '₃', '₄', '₅', '₆', '₇', '₈', '₉'];
    Some(match c {
        '0'..='9' => DIGITS[c as usize - '0' as usize],
        '+' => '₊',
        '-' | '−' => '₋',
        '=' => '₌',
        '(' => '₍',
        ')' => '₎',
        'a' => 'ₐ',
        'e' => 'ₑ',
        'h' => 'ₕ',
        'i' => 'ᵢ',
        'j' => 'ⱼ',
        'k' => 'ₖ',
        'l' => 'ₗ',
        'm' => 'ₘ',
        'n' => 'ₙ',
        'o' => 'ₒ',
        'p' => 'ₚ',
        'r' => 'ᵣ',
        's' => 'ₛ',
        't' => 'ₜ',
        'u' => 'ᵤ',
        'v' => 'ᵥ',
        'x' => 'ₓ',
        ' ' | ',' | '/' | '.' => c,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_roots_scripts_and_fonts_read_linearly() {
        assert_eq!(
            linear_form(r"\mathrm{softmax}\!\left(\frac{QK^{\top}}{\sqrt{d_k}}\right)V"),
            "softmax(QKᵀ/√dₖ)V"
        );
        assert_eq!(
            linear_form(r"x_i = \mathrm{embed}(\mathrm{token}_i) + p_i"),
            "xᵢ = embed(tokenᵢ) + pᵢ"
        );
        assert_eq!(
            linear_form(r"W_Q \alpha^{2m/d} p_{i,2m}"),
            "W_Q α²ᵐ/ᵈ pᵢ,₂ₘ"
        );
        assert_eq!(linear_form(r"P(w \mid x)\le 1"), "P(w ∣ x) ≤ 1");
    }

    #[test]
    fn chemistry_arrows_keep_their_labels() {
        assert_eq!(
            linear_form(
                r"6\,\mathrm{CO_2} \xrightarrow[\text{叶绿体}]{\text{光能}} \mathrm{C_6H_{12}O_6}"
            ),
            "6 CO₂ ─光能, 叶绿体→ C₆H₁₂O₆"
        );
    }

    #[test]
    fn hostile_or_broken_input_ends_and_never_comes_out_empty() {
        assert_eq!(linear_form(r"\frac{"), "/");
        assert_eq!(linear_form("{{{{"), "{{{{");
        assert_eq!(linear_form(""), "");
        let deep = "{".repeat(10_000) + "x" + &"}".repeat(10_000);
        assert_eq!(linear_form(&deep), "x");
        let scripts = "x^".repeat(5_000);
        let _ = linear_form(&scripts);
        let _ = linear_form(&r"\sqrt[".repeat(3_000));
    }
}
