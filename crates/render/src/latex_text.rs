//! LaTeX as linear Unicode text (`\frac{QK^{\top}}{\sqrt{d_k}}` → `QKᵀ/√dₖ`), for places that
//! cannot show MathML but should show the same formula: a slide in a PowerPoint deck, which any
//! slide program opens and a reader can edit. It reads the MathML that [`latex_to_mathml`]
//! writes, so there is one LaTeX parser and one symbol table, and a formula names the same
//! characters on the page and in the deck. Operators are spaced as TeX spaces them; scripts
//! become Unicode super- and subscripts where every character has one, `^(..)` otherwise.
//!
//! The input is this crate's own well-formed output; anything it does not expect (or a formula
//! the parser refuses) gives the source back, never an empty string.

use aula_text::markup::decode_entities;

use crate::latex_to_mathml;

/// The linear form of `latex`, or its source (trimmed) when the parser refuses it.
pub fn latex_to_text(latex: &str) -> String {
    let source = latex.trim();
    let Some(tree) = latex_to_mathml(source, false)
        .ok()
        .and_then(|mathml| read(&mathml))
    else {
        return source.to_string();
    };
    let mut collapsed = String::new();
    for c in fold(&tree, false).trim().chars() {
        if !(c == ' ' && collapsed.ends_with(' ')) {
            collapsed.push(c);
        }
    }
    if collapsed.is_empty() {
        source.to_string()
    } else {
        collapsed
    }
}

enum Node {
    Element {
        name: String,
        attributes: String,
        children: Vec<Node>,
    },
    Text(String),
}

impl Node {
    fn attribute(&self, key: &str) -> Option<&str> {
        let Node::Element { attributes, .. } = self else {
            return None;
        };
        let start = attributes.find(&format!(" {key}=\""))? + key.len() + 3;
        let len = attributes[start..].find('"')?;
        Some(&attributes[start..start + len])
    }

    fn name(&self) -> &str {
        match self {
            Node::Element { name, .. } => name,
            Node::Text(_) => "",
        }
    }

    fn children(&self) -> &[Node] {
        match self {
            Node::Element { children, .. } => children,
            Node::Text(_) => &[],
        }
    }

    /// The text of a token element (`<mo>→</mo>`), decoded.
    fn token_text(&self) -> String {
        let mut out = String::new();
        for child in self.children() {
            match child {
                Node::Text(text) => out.push_str(text),
                element => out.push_str(&element.token_text()),
            }
        }
        out
    }
}

/// The element tree of MathML this crate wrote (no comments, no self-closing tags); `None` on
/// anything else.
fn read(markup: &str) -> Option<Node> {
    let mut stack: Vec<Node> = vec![Node::Element {
        name: String::new(),
        attributes: String::new(),
        children: Vec::new(),
    }];
    let mut rest = markup;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("</") {
            let end = after.find('>')?;
            let closed = stack.pop()?;
            if closed.name() != &after[..end] {
                return None;
            }
            push_child(stack.last_mut()?, closed);
            rest = &after[end + 1..];
        } else if let Some(after) = rest.strip_prefix('<') {
            let end = after.find('>')?;
            let tag = &after[..end];
            let name_len = tag.find(' ').unwrap_or(tag.len());
            stack.push(Node::Element {
                name: tag[..name_len].to_string(),
                attributes: tag[name_len..].to_string(),
                children: Vec::new(),
            });
            rest = &after[end + 1..];
        } else {
            let end = rest.find('<').unwrap_or(rest.len());
            let text = decode_entities(&rest[..end]).replace('\u{a0}', " ");
            push_child(stack.last_mut()?, Node::Text(text));
            rest = &rest[end..];
        }
    }
    let mut root = stack.pop()?;
    if !stack.is_empty() {
        return None;
    }
    match &mut root {
        Node::Element { children, .. } if children.len() == 1 => children.pop(),
        _ => None,
    }
}

fn push_child(parent: &mut Node, child: Node) {
    if let Node::Element { children, .. } = parent {
        children.push(child);
    }
}

/// The text of `node`; `tight` inside scripts, where operators take no spaces.
fn fold(node: &Node, tight: bool) -> String {
    let children = node.children();
    let part = |i: usize| children.get(i).map(|c| fold(c, tight)).unwrap_or_default();
    let script_of = |i: usize, superscript: bool| script_at(children, i, superscript);
    match node {
        Node::Text(text) => text.clone(),
        _ => match node.name() {
            "mi" | "mn" | "mtext" | "mo" => node.token_text(),
            "annotation" | "mphantom" => String::new(),
            "semantics" => part(0),
            "mspace" => match node.attribute("width") {
                Some(_) => " ".into(),
                None => String::new(),
            },
            "mfrac" if node.attribute("linethickness") == Some("0") => {
                format!("{} {}", part(0).trim(), part(1).trim())
            }
            "mfrac" => format!("{}/{}", wrapped(&part(0)), wrapped(&part(1))),
            "msqrt" => format!("√{}", wrapped(&row(children, tight))),
            "mroot" => {
                let root = match part(1).trim() {
                    "3" => "∛".to_string(),
                    "4" => "∜".to_string(),
                    "" => "√".to_string(),
                    index => format!("{}√", script(index, true)),
                };
                format!("{root}{}", wrapped(&part(0)))
            }
            "msup" => part(0) + &script_of(1, true),
            "msub" => part(0) + &script_of(1, false),
            "msubsup" => part(0) + &script_of(1, false) + &script_of(2, true),
            "mover" | "munder" | "munderover" => stacked(node, tight),
            "mtable" => children
                .iter()
                .map(|r| {
                    let cells: Vec<String> = r
                        .children()
                        .iter()
                        .map(|cell| fold(cell, tight).trim().to_string())
                        .collect();
                    cells.join(" ")
                })
                .collect::<Vec<_>>()
                .join("; "),
            _ => row(children, tight),
        },
    }
}

/// Children side by side, operators spaced as TeX spaces them (unless `tight`), and a space
/// after a script written out as `_Q` when a letter follows, so it does not run into it.
fn row(children: &[Node], tight: bool) -> String {
    let mut out = String::new();
    let mut written_out_script = false;
    for child in children {
        if child.name() == "mo" {
            let text = child.token_text();
            let mut chars = text.chars();
            if let (Some(c), None, false) = (chars.next(), chars.next(), tight) {
                let after_operand = out
                    .trim_end()
                    .chars()
                    .last()
                    .is_some_and(|last| !"([{|,;".contains(last) && !spaced(last));
                if spaced(c) && (after_operand || relation_only(c)) {
                    out.push(' ');
                    out.push(c);
                    out.push(' ');
                    written_out_script = false;
                    continue;
                }
            }
        }
        let piece = fold(child, tight);
        if written_out_script && piece.starts_with(char::is_alphanumeric) {
            out.push(' ');
        }
        written_out_script = matches!(child.name(), "msub" | "msup" | "msubsup")
            && piece
                .chars()
                .rev()
                .nth(1)
                .is_some_and(|c| c == '_' || c == '^');
        out.push_str(&piece);
    }
    out
}

/// An operator that TeX sets with space around it: relations, arrows and binary operators.
fn spaced(c: char) -> bool {
    matches!(c, '=' | '<' | '>' | '+' | '-' | '−' | '±' | '∓' | '×' | '÷')
        || (matches!(c as u32, 0x2190..=0x21FF | 0x27F0..=0x27FF | 0x2200..=0x22FF)
            && !matches!(
                c,
                '∑' | '∏'
                    | '∐'
                    | '∫'
                    | '∬'
                    | '∮'
                    | '∂'
                    | '∇'
                    | '∞'
                    | '∅'
                    | '∀'
                    | '∃'
                    | '¬'
                    | '⋯'
                    | '⋮'
                    | '⋱'
                    | '⊤'
                    | '⊥'
                    | '∘'
                    | '∗'
                    | '⋅'
                    | '∙'
                    | '−'
                    | '∓'
            ))
}

/// A spaced operator that keeps its space even with nothing before it (a minus does not).
fn relation_only(c: char) -> bool {
    spaced(c) && !matches!(c, '+' | '-' | '−' | '±' | '∓')
}

/// `\hat x`, `\xrightarrow{label}`, `\sum` with limits, `\overbrace`: an accent becomes a
/// combining mark, a labelled arrow `─label→`, limits become scripts, a brace is left out.
fn stacked(node: &Node, tight: bool) -> String {
    let children = node.children();
    let (Some(first), Some(last)) = (children.first(), children.last()) else {
        return String::new();
    };
    if first.name() == "mo" && first.attribute("stretchy") == Some("true") {
        let arrow = first.token_text();
        let labels: Vec<String> = children[1..]
            .iter()
            .rev()
            .map(|label| fold(label, tight).trim().to_string())
            .filter(|label| !label.is_empty())
            .collect();
        return if labels.is_empty() {
            format!(" {arrow} ")
        } else {
            format!(" ─{}{arrow} ", labels.join(", "))
        };
    }
    let body = fold(first, tight);
    let mark = last.token_text();
    let accent =
        node.attribute("accent") == Some("true") || node.attribute("accentunder") == Some("true");
    if accent && children.len() == 2 {
        let combining = match mark.as_str() {
            "´" => '\u{301}',
            "`" => '\u{300}',
            "¯" | "‾" => '\u{305}',
            "_" => '\u{332}',
            "˘" => '\u{306}',
            "ˇ" => '\u{30C}',
            "¨" => '\u{308}',
            "˙" => '\u{307}',
            "˚" => '\u{30A}',
            "~" => '\u{303}',
            "→" => '\u{20D7}',
            "←" => '\u{20D6}',
            _ => '\u{302}',
        };
        return accented(&body, combining);
    }
    if matches!(mark.as_str(), "⏞" | "⎴" | "⏟" | "⎵") {
        return body;
    }
    let script_of = |i: usize, superscript: bool| script_at(children, i, superscript);
    match node.name() {
        "munder" => body + &script_of(1, false),
        "mover" => body + &script_of(1, true),
        _ => body + &script_of(1, false) + &script_of(2, true),
    }
}

/// Child `i` of a scripted element as a super- or subscript (folded tight: no operator spaces).
fn script_at(children: &[Node], i: usize, superscript: bool) -> String {
    let text = children.get(i).map(|c| fold(c, true)).unwrap_or_default();
    script(&text, superscript)
}

/// `text` in parentheses unless it is one symbol, a word, or already bracketed.
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

fn accented(text: &str, mark: char) -> String {
    let text = text.trim();
    if text.chars().count() == 1 {
        format!("{text}{mark}")
    } else {
        format!("({text}){mark}")
    }
}

/// A super- or subscript: Unicode script characters when every character has one, `^x` or
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
    use super::latex_to_text as text;

    #[test]
    fn fractions_roots_scripts_and_fonts_read_linearly() {
        assert_eq!(
            text(r"\mathrm{softmax}\!\left(\frac{QK^{\top}}{\sqrt{d_k}}\right)V"),
            "softmax(QKᵀ/√dₖ)V"
        );
        assert_eq!(
            text(r"x_i = \mathrm{embed}(\mathrm{token}_i) + p_i"),
            "xᵢ = embed(tokenᵢ) + pᵢ"
        );
        assert_eq!(text(r"W_Q \alpha^{2m/d} p_{i,2m}"), "W_Q α²ᵐ/ᵈpᵢ,₂ₘ");
        assert_eq!(text(r"P(w \mid x)\le 1"), "P(w ∣ x) ≤ 1");
        assert_eq!(text(r"\sqrt[3]{a+b} - \frac{1}{2}"), "∛(a + b) − 1/2");
        assert_eq!(text(r"-x^{n+1}"), "−xⁿ⁺¹");
        assert_eq!(text(r"e^{i\pi} + 1 = 0"), "e^(iπ) + 1 = 0");
    }

    #[test]
    fn the_page_and_the_deck_name_the_same_characters() {
        // Fonts and symbols come from the page's own parser and table.
        assert_eq!(text(r"x \in \mathbb{R}^n"), "x ∈ ℝⁿ");
        assert_eq!(text(r"\sum_{i=1}^{n} i"), "∑ᵢ₌₁ⁿi");
        assert_eq!(text(r"\hat{x} + \vec v"), "x̂ + v⃗");
        assert_eq!(text(r"\binom{n}{k}"), "(n k)");
        assert_eq!(
            text(r"\begin{pmatrix} a & b \\ c & d \end{pmatrix}"),
            "(a b; c d)"
        );
    }

    #[test]
    fn chemistry_arrows_keep_their_labels() {
        assert_eq!(
            text(
                r"6\,\mathrm{CO_2} \xrightarrow[\text{叶绿体}]{\text{光能}} \mathrm{C_6H_{12}O_6}"
            ),
            "6 CO₂ ─光能, 叶绿体→ C₆H₁₂O₆"
        );
    }

    #[test]
    fn hostile_or_broken_input_ends_and_never_comes_out_empty() {
        assert_eq!(text(r"\frac{"), r"\frac{");
        assert_eq!(text("{{{{"), "{{{{");
        assert_eq!(text(""), "");
        assert_eq!(text(r"x < \notacommand"), r"x < \notacommand");
        let deep = "{".repeat(10_000) + "x" + &"}".repeat(10_000);
        assert_eq!(text(&deep), deep);
        assert_eq!(text(&("{".repeat(20) + "x" + &"}".repeat(20))), "x");
        let scripts = "x^".repeat(5_000);
        assert_eq!(text(&scripts), scripts);
        let roots = r"\sqrt[".repeat(3_000);
        assert_eq!(text(&roots), roots);
    }
}
