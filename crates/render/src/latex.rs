//! LaTeX math to MathML Core, written here rather than with a general TeX engine: the page ships
//! this code, so it is one recursive-descent pass over the source with a sorted symbol table,
//! building MathML strings bottom-up. Chromium lays the result out natively (no fonts or CSS).
//!
//! Safety is by construction: every element and attribute name comes from this file, every
//! piece of the author's text goes through [`push_escaped`], and the only attribute values taken
//! from the source (colours and lengths) are validated first. Structural mistakes (unbalanced
//! braces, a missing argument, an unknown environment, nesting deeper than [`MAX_DEPTH`]) give a
//! [`LatexError`] so the caller can show the source instead of half a formula; an unknown command
//! is drawn in place as a red `<merror>` so the rest of the formula still reads.

use aula_text::is_cjk_letter as is_cjk;

use crate::push_escaped;

/// Groups, arguments and environments nested deeper than this are refused: real formulas stay
/// far below it, and it bounds the recursion on hostile input.
const MAX_DEPTH: usize = 64;

/// Why a formula could not be turned into MathML; `message` is short and meant for a tooltip
/// beside the formula's source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("This formula could not be read: {message}.")]
pub struct LatexError {
    pub message: String,
}

impl LatexError {
    fn new(message: impl Into<String>) -> Self {
        LatexError {
            message: message.into(),
        }
    }
}

/// Roughly how wide `latex` typesets, in ems, for sizing a formula to its box before layout:
/// each visible character counts, a command that draws one symbol (`\alpha`, `\mid`) counts as
/// one, relations and operators count double for their spacing, font and text commands
/// (`\mathrm{..}`, `\text{..}`) count by their argument, and grouping, script markers and
/// spacing count little or nothing. It errs wide (scripts and fractions are counted as if on the
/// line), so a formula sized by it fits.
pub fn approx_width_em(latex: &str) -> f64 {
    const CHAR_EM: f64 = 0.6;
    // A relation or binary operator brings its spacing on both sides.
    const OPERATOR_EM: f64 = 1.2;
    let mut width = 0.0;
    let mut chars = latex.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' | '}' | '^' | '_' | '$' | '&' => {}
            ' ' => {}
            '\\' => {
                let mut name = String::new();
                while let Some(&next) = chars.peek() {
                    if next.is_ascii_alphabetic() {
                        name.push(next);
                        chars.next();
                    } else {
                        break;
                    }
                }
                if name.is_empty() {
                    // `\,` `\;` `\!` `\\` and escaped characters.
                    match chars.next() {
                        Some(',' | ';' | ':' | '!' | '\\') | None => width += 0.2,
                        Some(_) => width += CHAR_EM,
                    }
                    continue;
                }
                let text_like = matches!(
                    name.as_str(),
                    "text"
                        | "textrm"
                        | "textbf"
                        | "textit"
                        | "mathrm"
                        | "mathbf"
                        | "mathit"
                        | "mathsf"
                        | "mathtt"
                        | "mathcal"
                        | "mathbb"
                        | "mathfrak"
                        | "boldsymbol"
                        | "operatorname"
                        | "left"
                        | "right"
                        | "big"
                        | "Big"
                        | "bigg"
                        | "Bigg"
                        | "displaystyle"
                        | "frac"
                        | "dfrac"
                        | "tfrac"
                        | "sqrt"
                        | "begin"
                        | "end"
                );
                let operator = matches!(
                    name.as_str(),
                    "mid"
                        | "le"
                        | "leq"
                        | "ge"
                        | "geq"
                        | "neq"
                        | "approx"
                        | "equiv"
                        | "sim"
                        | "times"
                        | "cdot"
                        | "pm"
                        | "mp"
                        | "to"
                        | "rightarrow"
                        | "leftarrow"
                        | "Rightarrow"
                        | "in"
                        | "notin"
                        | "subset"
                        | "cup"
                        | "cap"
                );
                if operator {
                    width += OPERATOR_EM;
                } else if matches!(name.as_str(), "quad") {
                    width += 1.0;
                } else if matches!(name.as_str(), "qquad") {
                    width += 2.0;
                } else if !text_like {
                    width += CHAR_EM;
                }
            }
            '=' | '+' | '-' | '<' | '>' => width += OPERATOR_EM,
            _ => width += CHAR_EM,
        }
    }
    width
}

fn fail<T>(parts: &[&str]) -> Result<T, LatexError> {
    Err(LatexError::new(parts.concat()))
}

/// LaTeX math (without `$` delimiters; a pair around the whole formula is tolerated) to one
/// `<math>` element, `display="block"` when `display` is set. The LaTeX source is kept, escaped,
/// as the formula's `application/x-tex` annotation, so copying and screen readers have it.
pub fn latex_to_mathml(latex: &str, display: bool) -> Result<String, LatexError> {
    let source = strip_delimiters(latex.trim());
    if source.is_empty() {
        return Err(LatexError::new("the formula is empty"));
    }
    let mut parser = Parser {
        src: source,
        pos: 0,
        display,
        depth: 0,
        font: Font::Auto,
    };
    let mut rows = parser.rows(End::Input)?;
    let body = if rows.len() == 1 && rows[0].len() == 1 {
        rows.remove(0).remove(0)
    } else {
        // Several lines without an environment: laid out like `gathered`, or `aligned` with `&`.
        let aligned = rows.iter().any(|row| row.len() > 1);
        table(&rows, if aligned { "rl" } else { "c" }, aligned, display)
    };
    let mut out = String::with_capacity(body.len() + latex.len() + 160);
    out.push_str("<math xmlns=\"http://www.w3.org/1998/Math/MathML\" display=\"");
    out.push_str(if display { "block" } else { "inline" });
    out.push_str("\"><semantics>");
    out.push_str(&body);
    out.push_str("<annotation encoding=\"application/x-tex\">");
    push_escaped(&mut out, latex);
    out.push_str("</annotation></semantics></math>");
    Ok(out)
}

fn strip_delimiters(source: &str) -> &str {
    for (open, close) in [("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$")] {
        if let Some(inner) = source
            .strip_prefix(open)
            .and_then(|s| s.strip_suffix(close))
        {
            if !inner.trim().is_empty() {
                return inner.trim();
            }
        }
    }
    source
}

/// What a symbol command becomes.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    /// An identifier, `<mi>` (italic when it is a single letter).
    Mi,
    /// An upright identifier: capital Greek, `\nabla`.
    Up,
    /// An operator, relation or punctuation, `<mo>` spaced by the browser's operator dictionary.
    Mo,
    /// A delimiter: does not stretch unless under `\left`/`\right` or `\big`.
    Fence,
    /// A large operator whose limits go under and over it in display style.
    LargeOp,
    /// An integral: limits stay at the side unless `\limits` says otherwise.
    Int,
    /// A function name written upright (`\sin`).
    Fun,
    /// A function name with limits under it in display style (`\lim`, `\max`).
    FunLim,
    /// An accent over one argument that keeps its size (`\hat`).
    Accent,
    /// An accent that stretches over its argument (`\widehat`, `\overline`).
    Wide,
    /// A stretching line or arrow under the argument (`\underline`).
    Under,
    /// A brace over the argument; a superscript becomes its label above.
    OverBrace,
    /// A brace under the argument; a subscript becomes its label below.
    UnderBrace,
    /// An extensible arrow with an optional label below and a label above.
    XArrow,
    // The commands below are structure rather than symbols; the character is a code that
    // picks the variant (a font, a size, a width) and is documented where it is read.
    Frac,
    Sqrt,
    Left,
    Sized,
    Begin,
    Text,
    FontCmd,
    Switch,
    ListEnd,
    OpName,
    Pass,
    Color,
    Boxed,
    Stack,
    Substack,
    Phantom,
    Not,
    Mod,
    Tag,
    Label,
    Ignore,
    HSpace,
    Space,
}

use Kind::*;

/// Every command, one per line as `name char kind`, sorted by name (bytewise) so [`symbol`]
/// can binary-search it. `char` is the symbol written, or for structural kinds a code read
/// where the kind is handled (`-` when unused). One text block rather than an array of
/// tuples: it is much smaller in the page.
const COMMANDS: &str = r"
! 4 Space
# # Mo
$ $ Mo
% % Mo
& & Mo
, 1 Space
/ - Ignore
: 2 Space
; 3 Space
> 2 Space
Alpha Α Up
Bbb 7 FontCmd
Beta Β Up
Big 2 Sized
Bigg 4 Sized
Biggl 4 Sized
Biggm 4 Sized
Biggr 4 Sized
Bigl 2 Sized
Bigm 2 Sized
Bigr 2 Sized
Box □ Mi
Chi Χ Up
Delta Δ Up
Diamond ◇ Mi
Downarrow ⇓ Mo
Epsilon Ε Up
Eta Η Up
Gamma Γ Up
Im ℑ Mi
Iota Ι Up
Kappa Κ Up
Lambda Λ Up
Leftarrow ⇐ Mo
Leftrightarrow ⇔ Mo
Longleftarrow ⟸ Mo
Longleftrightarrow ⟺ Mo
Longrightarrow ⟹ Mo
Mu Μ Up
Nu Ν Up
Omega Ω Up
Omicron Ο Up
P ¶ Mi
Phi Φ Up
Pi Π Up
Pr - FunLim
Psi Ψ Up
Re ℜ Mi
Rho Ρ Up
Rightarrow ⇒ Mo
S § Mi
Sigma Σ Up
Tau Τ Up
Theta Θ Up
Uparrow ⇑ Mo
Updownarrow ⇕ Mo
Upsilon Υ Up
Vert ‖ Fence
Xi Ξ Up
Zeta Ζ Up
\ n ListEnd
_ _ Mo
acute ´ Accent
aleph ℵ Mi
allowbreak - Ignore
alpha α Mi
amalg ⨿ Mo
angle ∠ Mi
approx ≈ Mo
approxeq ≊ Mo
arccos - Fun
arcsin - Fun
arctan - Fun
arg - Fun
argmax - FunLim
argmin - FunLim
ast ∗ Mo
asymp ≍ Mo
backslash \ Fence
bar ¯ Accent
because ∵ Mo
begin - Begin
beta β Mi
beth ℶ Mi
bf 2 Switch
big 1 Sized
bigcap ⋂ LargeOp
bigcirc ◯ Mo
bigcup ⋃ LargeOp
bigg 3 Sized
biggl 3 Sized
biggm 3 Sized
biggr 3 Sized
bigl 1 Sized
bigm 1 Sized
bigodot ⨀ LargeOp
bigoplus ⨁ LargeOp
bigotimes ⨂ LargeOp
bigr 1 Sized
bigsqcup ⨆ LargeOp
bigtriangledown ▽ Mo
bigtriangleup △ Mo
biguplus ⨄ LargeOp
bigvee ⋁ LargeOp
bigwedge ⋀ LargeOp
binom b Frac
blacksquare ■ Mi
bm 4 FontCmd
bmod b Mod
boldsymbol 4 FontCmd
bot ⊥ Mi
bowtie ⋈ Mo
boxed - Boxed
breve ˘ Accent
bullet ∙ Mo
cal 5 Switch
cap ∩ Mo
cdot ⋅ Mo
cdotp ⋅ Mo
cdots ⋯ Mo
cfrac d Frac
check ˇ Accent
checkmark ✓ Mi
chi χ Mi
circ ∘ Mo
clubsuit ♣ Mi
colon : Mo
coloneqq ≔ Mo
color C Switch
complement ∁ Mi
cong ≅ Mo
coprod ∐ LargeOp
copyright © Mi
cos - Fun
cosh - Fun
cot - Fun
coth - Fun
cr n ListEnd
csc - Fun
csch - Fun
cup ∪ Mo
dagger † Mo
dashv ⊣ Mo
dbinom B Frac
ddagger ‡ Mo
ddot ¨ Accent
ddots ⋱ Mo
deg - Fun
degree ° Mi
delta δ Mi
det - FunLim
dfrac d Frac
diamond ⋄ Mo
diamondsuit ♢ Mi
digamma ϝ Mi
dim - Fun
displaystyle D Switch
div ÷ Mo
dot ˙ Accent
doteq ≐ Mo
dots … Mo
dotsb ⋯ Mo
dotsc … Mo
dotsi ⋯ Mo
dotsm ⋯ Mo
dotso … Mo
downarrow ↓ Mo
ell ℓ Mi
emph 3 Text
emptyset ∅ Mi
end e ListEnd
enspace 8 Space
epsilon ϵ Mi
equiv ≡ Mo
eta η Mi
exists ∃ Mi
exp - Fun
fbox - Boxed
flat ♭ Mi
forall ∀ Mi
frac f Frac
frown ⌢ Mo
gamma γ Mi
gcd - FunLim
ge ≥ Mo
geq ≥ Mo
geqslant ⩾ Mo
gets ← Mo
gg ≫ Mo
ggg ⋙ Mo
grave ` Accent
gt > Mo
gtrsim ≳ Mo
hat ^ Accent
hbar ℏ Mi
hbox 1 Text
hdashline - Ignore
heartsuit ♡ Mi
hline - Ignore
hom - Fun
hookleftarrow ↩ Mo
hookrightarrow ↪ Mo
hphantom h Phantom
hskip - HSpace
hslash ℏ Mi
hspace - HSpace
iff ⟺ Mo
iiint ∭ Int
iint ∬ Int
imath ı Mi
impliedby ⟸ Mo
implies ⟹ Mo
in ∈ Mo
inf - FunLim
infty ∞ Mi
int ∫ Int
iota ι Mi
it 3 Switch
jmath ȷ Mi
kappa κ Mi
ker - Fun
kern - HSpace
lVert ‖ Fence
label - Label
lambda λ Mi
land ∧ Mo
langle ⟨ Fence
lbrace { Fence
lbrack [ Fence
lceil ⌈ Fence
ldotp . Mo
ldots … Mo
le ≤ Mo
leadsto ⇝ Mo
left - Left
leftarrow ← Mo
leftharpoondown ↽ Mo
leftharpoonup ↼ Mo
leftrightarrow ↔ Mo
leftrightarrows ⇆ Mo
leftrightharpoons ⇋ Mo
leq ≤ Mo
leqslant ⩽ Mo
lesssim ≲ Mo
lfloor ⌊ Fence
lg - Fun
lgroup ⟮ Fence
lhd ⊲ Mo
lim - FunLim
liminf - FunLim
limits - Ignore
limsup - FunLim
ll ≪ Mo
llbracket ⟦ Fence
lll ⋘ Mo
ln - Fun
lnot ¬ Mo
log - Fun
longleftarrow ⟵ Mo
longleftrightarrow ⟷ Mo
longmapsto ⟼ Mo
longrightarrow ⟶ Mo
lor ∨ Mo
lozenge ◊ Mi
lt < Mo
lvert | Fence
mapsto ↦ Mo
mathbb 7 FontCmd
mathbf 2 FontCmd
mathbin - Pass
mathcal 5 FontCmd
mathclose - Pass
mathfrak 6 FontCmd
mathinner - Pass
mathit 3 FontCmd
mathnormal 0 FontCmd
mathop m OpName
mathopen - Pass
mathord - Pass
mathpunct - Pass
mathrel - Pass
mathring ˚ Accent
mathrm 1 FontCmd
mathscr 5 FontCmd
mathsf 8 FontCmd
mathstrut - Ignore
mathtt 9 FontCmd
mathup 1 FontCmd
max - FunLim
mbox 1 Text
measuredangle ∡ Mi
medspace 2 Space
mho ℧ Mi
mid ∣ Mo
middle m ListEnd
min - FunLim
mod b Mod
models ⊨ Mo
mp ∓ Mo
mu μ Mi
nLeftrightarrow ⇎ Mo
nRightarrow ⇏ Mo
nabla ∇ Up
natural ♮ Mi
ncong ≇ Mo
ne ≠ Mo
nearrow ↗ Mo
neg ¬ Mo
negmedspace 5 Space
negthickspace 6 Space
negthinspace 4 Space
neq ≠ Mo
newline n ListEnd
nexists ∄ Mi
ngeq ≱ Mo
ngtr ≯ Mo
ni ∋ Mo
nleftarrow ↚ Mo
nleq ≰ Mo
nless ≮ Mo
nmid ∤ Mo
nobreakspace 7 Space
nolimits - Ignore
nonumber - Ignore
not - Not
notag - Ignore
notin ∉ Mo
nparallel ∦ Mo
nrightarrow ↛ Mo
nsim ≁ Mo
nsubseteq ⊈ Mo
nsupseteq ⊉ Mo
nu ν Mi
nwarrow ↖ Mo
odot ⊙ Mo
oiiint ∰ Int
oiint ∯ Int
oint ∮ Int
omega ω Mi
omicron ο Mi
ominus ⊖ Mo
operatorname o OpName
oplus ⊕ Mo
oslash ⊘ Mo
otimes ⊗ Mo
over o ListEnd
overbrace ⏞ OverBrace
overbracket ⎴ OverBrace
overleftarrow ← Wide
overleftrightarrow ↔ Wide
overline ‾ Wide
overrightarrow → Wide
overset o Stack
owns ∋ Mo
parallel ∥ Mo
partial ∂ Mi
perp ⊥ Mo
phantom p Phantom
phi ϕ Mi
pi π Mi
pm ± Mo
pmod p Mod
pounds £ Mi
prec ≺ Mo
preceq ⪯ Mo
prime ′ Mo
prod ∏ LargeOp
propto ∝ Mo
psi ψ Mi
qquad 0 Space
quad 9 Space
rVert ‖ Fence
rangle ⟩ Fence
rbrace } Fence
rbrack ] Fence
rceil ⌉ Fence
rfloor ⌋ Fence
rgroup ⟯ Fence
rhd ⊳ Mo
rho ρ Mi
right r ListEnd
rightarrow → Mo
rightharpoondown ⇁ Mo
rightharpoonup ⇀ Mo
rightleftarrows ⇄ Mo
rightleftharpoons ⇌ Mo
rightrightarrows ⇉ Mo
rm 1 Switch
rrbracket ⟧ Fence
rvert | Fence
scriptstyle P Switch
searrow ↘ Mo
sec - Fun
sech - Fun
setminus ∖ Mo
sf 8 Switch
sharp ♯ Mi
sigma σ Mi
sim ∼ Mo
simeq ≃ Mo
sin - Fun
sinh - Fun
smallsetminus ∖ Mo
smile ⌣ Mo
space 7 Space
spadesuit ♠ Mi
sqcap ⊓ Mo
sqcup ⊔ Mo
sqrt - Sqrt
sqsubseteq ⊑ Mo
sqsupseteq ⊒ Mo
square □ Mi
stackrel o Stack
star ⋆ Mo
strut - Ignore
subset ⊂ Mo
subseteq ⊆ Mo
subsetneq ⊊ Mo
substack - Substack
succ ≻ Mo
succeq ⪰ Mo
sum ∑ LargeOp
sup - FunLim
supset ⊃ Mo
supseteq ⊇ Mo
supsetneq ⊋ Mo
surd √ Mo
swarrow ↙ Mo
tag - Tag
tan - Fun
tanh - Fun
tau τ Mi
tbinom T Frac
text 1 Text
textbf 2 Text
textcolor - Color
textit 3 Text
textmd 1 Text
textnormal 1 Text
textrm 1 Text
textsf 8 Text
textsl 3 Text
textstyle T Switch
texttt 9 Text
textup 1 Text
tfrac t Frac
therefore ∴ Mo
theta θ Mi
thickspace 3 Space
thinspace 1 Space
tilde ~ Accent
times × Mo
to → Mo
top ⊤ Mi
triangle △ Mi
triangleleft ◃ Mo
triangleq ≜ Mo
triangleright ▹ Mo
tt 9 Switch
underbrace ⏟ UnderBrace
underbracket ⎵ UnderBrace
underleftarrow ← Under
underline _ Under
underrightarrow → Under
underset u Stack
uparrow ↑ Mo
updownarrow ↕ Mo
uplus ⊎ Mo
upsilon υ Mi
varepsilon ε Mi
varkappa ϰ Mi
varnothing ∅ Mi
varphi φ Mi
varpi ϖ Mi
varrho ϱ Mi
varsigma ς Mi
vartheta ϑ Mi
vdash ⊢ Mo
vdots ⋮ Mo
vec → Accent
vee ∨ Mo
vert | Fence
vphantom v Phantom
wedge ∧ Mo
widecheck ˇ Wide
widehat ^ Wide
widetilde ~ Wide
wp ℘ Mi
wr ≀ Mo
xLeftarrow ⇐ XArrow
xLeftrightarrow ⇔ XArrow
xRightarrow ⇒ XArrow
xhookrightarrow ↪ XArrow
xi ξ Mi
xleftarrow ← XArrow
xleftrightarrow ↔ XArrow
xleftrightharpoons ⇋ XArrow
xlongequal = XArrow
xmapsto ↦ XArrow
xrightarrow → XArrow
xrightleftharpoons ⇌ XArrow
yen ¥ Mi
zeta ζ Mi
{ { Fence
| ‖ Fence
} } Fence
";

impl Kind {
    fn named(word: &str) -> Option<Kind> {
        Some(match word {
            "Accent" => Accent,
            "Begin" => Begin,
            "LargeOp" => LargeOp,
            "Boxed" => Boxed,
            "Color" => Color,
            "Fence" => Fence,
            "FontCmd" => FontCmd,
            "Frac" => Frac,
            "Fun" => Fun,
            "FunLim" => FunLim,
            "HSpace" => HSpace,
            "Ignore" => Ignore,
            "Int" => Int,
            "Label" => Label,
            "Left" => Left,
            "ListEnd" => ListEnd,
            "Mi" => Mi,
            "Mo" => Mo,
            "Mod" => Mod,
            "Not" => Not,
            "OpName" => OpName,
            "OverBrace" => OverBrace,
            "Pass" => Pass,
            "Phantom" => Phantom,
            "Sized" => Sized,
            "Space" => Space,
            "Sqrt" => Sqrt,
            "Stack" => Stack,
            "Substack" => Substack,
            "Switch" => Switch,
            "Tag" => Tag,
            "Text" => Text,
            "Under" => Under,
            "UnderBrace" => UnderBrace,
            "Up" => Up,
            "Wide" => Wide,
            "XArrow" => XArrow,
            _ => return None,
        })
    }
}

/// The character a LaTeX command names, for the commands that are one symbol (letters,
/// operators, relations, arrows, delimiters, large operators and integrals), e.g. `alpha` → α,
/// `leq` → ≤. The one symbol table, which the PowerPoint writer's linear form also reads.
pub fn latex_symbol(name: &str) -> Option<char> {
    let (c, kind) = symbol(name)?;
    matches!(
        kind,
        Kind::Mi | Kind::Up | Kind::Mo | Kind::Fence | Kind::LargeOp | Kind::Int
    )
    .then_some(c)
}

/// The entry for a command name in [`COMMANDS`].
fn symbol(name: &str) -> Option<(char, Kind)> {
    let table = &COMMANDS[1..];
    let bytes = table.as_bytes();
    // `lo` and `hi` are always at the start of a line (or the end).
    let (mut lo, mut hi) = (0, bytes.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        let start = bytes[lo..mid]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(lo, |i| lo + i + 1);
        let end = start + bytes[start..].iter().position(|&b| b == b'\n')?;
        let (entry, rest) = table[start..end].split_once(' ')?;
        match entry.cmp(name) {
            std::cmp::Ordering::Less => lo = end + 1,
            std::cmp::Ordering::Greater => hi = start,
            std::cmp::Ordering::Equal => {
                let (c, kind) = rest.split_once(' ')?;
                return Some((c.chars().next()?, Kind::named(kind)?));
            }
        }
    }
    None
}

/// The name of the command whose backslash has just been read: a run of ASCII letters, or the
/// single character after the backslash (`\,`, `\{`, `\\`); empty at the end of the input.
fn command_name(after_backslash: &str) -> &str {
    let letters = after_backslash
        .bytes()
        .take_while(u8::is_ascii_alphabetic)
        .count();
    let len = match letters {
        0 => after_backslash.chars().next().map_or(0, char::len_utf8),
        n => n,
    };
    &after_backslash[..len]
}

/// `<name attrs>body</name>`; `attrs` starts with a space when there are any.
fn tag(name: &str, attrs: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 2 * name.len() + attrs.len() + 5);
    for part in ["<", name, attrs, ">", body, "</", name, ">"] {
        out.push_str(part);
    }
    out
}

/// A token element holding `text`, escaped.
fn token(name: &str, attrs: &str, text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + 4);
    push_escaped(&mut escaped, text);
    tag(name, attrs, &escaped)
}

fn token_char(name: &str, attrs: &str, c: char) -> String {
    token(name, attrs, c.encode_utf8(&mut [0; 4]))
}

const UPRIGHT: &str = " mathvariant=\"normal\"";
const FIXED: &str = " stretchy=\"false\"";
const EMPTY_ROW: &str = "<mrow></mrow>";

/// Horizontal space; `width` is a validated length, possibly negative.
fn space(width: &str) -> String {
    match width.strip_prefix('-') {
        // MathML Core has no negative `mspace` width; a negative margin does the same.
        Some(_) => ["<mspace style=\"margin-left:", width, "\"></mspace>"].concat(),
        None => ["<mspace width=\"", width, "\"></mspace>"].concat(),
    }
}

/// A TeX length the browser understands (`1em`, `-3pt`, `0.5ex`), or `None`.
fn css_length(text: &str) -> Option<&str> {
    let text = text.trim();
    let number = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &text[number.len()..];
    let digits = number.strip_prefix('-').unwrap_or(number);
    let valid = matches!(unit, "em" | "ex" | "pt" | "px" | "mm" | "cm" | "in")
        && (1..10).contains(&digits.len())
        && digits.bytes().any(|b| b.is_ascii_digit())
        && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && digits.bytes().filter(|&b| b == b'.').count() <= 1;
    valid.then_some(text)
}

/// The alphabet a letter or digit is drawn in. MathML Core leaves `mathvariant` (other than
/// `normal`) to the characters themselves, so the styled alphabets map to the Unicode
/// mathematical alphanumeric symbols.
#[derive(Clone, Copy, PartialEq)]
enum Font {
    Auto,
    Roman,
    Bold,
    Italic,
    BoldItalic,
    Script,
    Fraktur,
    DoubleStruck,
    Sans,
    Mono,
}

/// The font for a table code: `0` auto, `1` roman, `2` bold, `3` italic, `4` bold italic,
/// `5` script, `6` fraktur, `7` double-struck, `8` sans-serif, `9` monospace.
fn font_of(code: char) -> Font {
    match code {
        '1' => Font::Roman,
        '2' => Font::Bold,
        '3' => Font::Italic,
        '4' => Font::BoldItalic,
        '5' => Font::Script,
        '6' => Font::Fraktur,
        '7' => Font::DoubleStruck,
        '8' => Font::Sans,
        '9' => Font::Mono,
        _ => Font::Auto,
    }
}

fn styled(font: Font, c: char) -> char {
    // Letters the Unicode block leaves out because older blocks already had them.
    let (capital_a, zero, holes) = match font {
        Font::Bold => (0x1D400, 0x1D7CE, ""),
        Font::Italic => (0x1D434, 0, "hℎ"),
        Font::BoldItalic => (0x1D468, 0, ""),
        Font::Script => (0x1D49C, 0, "BℬEℰFℱHℋIℐLℒMℳRℛeℯgℊoℴ"),
        Font::Fraktur => (0x1D504, 0, "CℭHℌIℑRℜZℨ"),
        Font::DoubleStruck => (0x1D538, 0x1D7D8, "CℂHℍNℕPℙQℚRℝZℤ"),
        Font::Sans => (0x1D5A0, 0x1D7E2, ""),
        Font::Mono => (0x1D670, 0x1D7F6, ""),
        Font::Auto | Font::Roman => return c,
    };
    let mut holes = holes.chars();
    while let (Some(from), Some(to)) = (holes.next(), holes.next()) {
        if from == c {
            return to;
        }
    }
    let code = match c {
        'A'..='Z' => capital_a + (c as u32 - 'A' as u32),
        'a'..='z' => capital_a + 26 + (c as u32 - 'a' as u32),
        '0'..='9' if zero != 0 => zero + (c as u32 - '0' as u32),
        _ => return c,
    };
    char::from_u32(code).unwrap_or(c)
}

/// `\text{…}` content as one `<mtext>`: braces dropped, TeX escapes decoded, spaces kept (as
/// no-break spaces, since MathML trims a token's edges).
fn text_element(raw: &str, font: Font) -> String {
    let mut text = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        let c = match c {
            '\\' => match chars.next() {
                Some(e @ ('{' | '}' | '$' | '&' | '%' | '#' | '_')) => e,
                Some(' ' | ',' | ';' | ':' | '!' | '\n' | '\t') => '\u{a0}',
                Some('\\') | None => continue,
                Some(other) => {
                    text.push('\\');
                    other
                }
            },
            '{' | '}' => continue,
            '~' => '\u{a0}',
            c if c.is_whitespace() => {
                if text.ends_with('\u{a0}') {
                    continue;
                }
                '\u{a0}'
            }
            c if c.is_control() => continue,
            c => styled(font, c),
        };
        text.push(c);
    }
    token("mtext", "", &text)
}

/// Rows of cells to an `<mtable>`; column `i` is aligned by `spec[i % len]` (`l`, `c` or `r`).
/// `tight` drops the padding between each right-left pair of columns, as `aligned` does.
fn table(rows: &[Vec<String>], spec: &str, tight: bool, display: bool) -> String {
    let spec = if spec.is_empty() { "c" } else { spec }.as_bytes();
    let mut body = String::new();
    for row in rows {
        body.push_str("<mtr>");
        for (i, cell) in row.iter().enumerate() {
            body.push_str(match (spec[i % spec.len()], tight) {
                (b'l', false) => "<mtd style=\"text-align:left\">",
                (b'r', false) => "<mtd style=\"text-align:right\">",
                (b'l', true) => "<mtd style=\"text-align:left;padding-left:0\">",
                (b'r', true) => "<mtd style=\"text-align:right;padding-right:0\">",
                _ => "<mtd>",
            });
            body.push_str(cell);
            body.push_str("</mtd>");
        }
        body.push_str("</mtr>");
    }
    let attrs = if display {
        " displaystyle=\"true\""
    } else {
        ""
    };
    tag("mtable", attrs, &body)
}

/// Why a list of atoms ended.
#[derive(Clone, Copy, PartialEq)]
enum Stop<'a> {
    Input,
    Brace,
    Bracket,
    Cell,
    Row,
    Right,
    Middle,
    End(&'a str),
}

#[derive(Clone, Copy)]
enum End<'a> {
    Input,
    Brace,
    Env(&'a str),
}

fn misplaced(stop: Stop) -> LatexError {
    LatexError::new(match stop {
        Stop::Input => "the formula ends too early",
        Stop::Brace => "a } has no matching {",
        Stop::Bracket => "a ] is out of place",
        Stop::Cell | Stop::Row => {
            "& and \\\\ belong inside an environment such as aligned or matrix"
        }
        Stop::Right => "\\right has no matching \\left",
        Stop::Middle => "\\middle belongs between \\left and \\right",
        Stop::End(_) => "\\end has no matching \\begin",
    })
}

/// A run of MathML elements and how many there are, so a single one needs no `<mrow>`.
#[derive(Default)]
struct Seq {
    ml: String,
    n: usize,
}

impl Seq {
    fn push(&mut self, ml: &str) {
        self.ml.push_str(ml);
        self.n += 1;
    }

    fn row(self) -> String {
        if self.n == 1 {
            self.ml
        } else {
            tag("mrow", "", &self.ml)
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Limits {
    Side,
    InDisplay,
    Always,
}

/// One base before its scripts.
struct Atom {
    ml: String,
    limits: Limits,
    /// A function name, followed by a thin space before an ordinary argument (`\sin x`).
    function: bool,
}

impl Atom {
    fn plain(ml: String) -> Option<Atom> {
        Some(Atom {
            ml,
            limits: Limits::Side,
            function: false,
        })
    }
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    /// Display style (TeX's `\displaystyle`): big operators take limits under and over.
    display: bool,
    depth: usize,
    font: Font,
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    /// The name of the command at the cursor (which is on its backslash), without consuming it.
    fn peek_command(&self) -> &'a str {
        command_name(self.rest().get(1..).unwrap_or(""))
    }

    fn skip_space(&mut self) {
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() => self.pos += c.len_utf8(),
                // A TeX comment runs to the end of the line.
                Some('%') => {
                    self.pos = self
                        .rest()
                        .find('\n')
                        .map_or(self.src.len(), |i| self.pos + i)
                }
                _ => return,
            }
        }
    }

    fn enter(&mut self) -> Result<(), LatexError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(LatexError::new("the formula is nested too deeply"));
        }
        Ok(())
    }

    /// Atoms with their scripts until something ends the list: the input, `}`, `]` (when
    /// `bracket`), `&`, `\\`, `\right`, `\middle` or `\end{…}`.
    fn list(&mut self, bracket: bool) -> Result<(Seq, Stop<'a>), LatexError> {
        self.enter()?;
        let mut seq = Seq::default();
        let mut numerator: Option<Seq> = None;
        let stop = loop {
            self.skip_space();
            let Some(c) = self.peek() else {
                break Stop::Input;
            };
            match c {
                '}' => {
                    self.pos += 1;
                    break Stop::Brace;
                }
                ']' if bracket => {
                    self.pos += 1;
                    break Stop::Bracket;
                }
                '&' => {
                    self.pos += 1;
                    break Stop::Cell;
                }
                '\\' => {
                    let name = self.peek_command();
                    let after = self.pos + 1 + name.len();
                    match symbol(name) {
                        // ListEnd codes: `n` new row, `r` \right, `m` \middle, `e` \end, `o` \over.
                        Some(('n', ListEnd)) => {
                            self.pos = after;
                            // `\\[4pt]`: extra row spacing, ignored.
                            if self.rest().starts_with('[') {
                                self.raw_until(']');
                            }
                            break Stop::Row;
                        }
                        Some(('r', ListEnd)) => {
                            self.pos = after;
                            break Stop::Right;
                        }
                        Some(('m', ListEnd)) => {
                            self.pos = after;
                            break Stop::Middle;
                        }
                        Some(('e', ListEnd)) => {
                            self.pos = after;
                            break Stop::End(self.env_name()?);
                        }
                        Some((_, ListEnd)) => {
                            self.pos = after;
                            if numerator.is_some() {
                                return Err(LatexError::new("two \\over in one group"));
                            }
                            numerator = Some(std::mem::take(&mut seq));
                            continue;
                        }
                        Some((code, Switch)) => {
                            self.pos = after;
                            if let Some(stop) = self.switch(code, bracket, &mut seq)? {
                                break stop;
                            }
                            continue;
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
            let Some(atom) = self.atom(false)? else {
                continue;
            };
            let function = atom.function;
            seq.push(&self.scripts(atom)?);
            if function && self.next_is_ordinary() {
                seq.push(&space("0.1667em"));
            }
        };
        self.depth -= 1;
        if let Some(numerator) = numerator {
            let fraction = tag("mfrac", "", &(numerator.row() + &seq.row()));
            seq = Seq::default();
            seq.push(&fraction);
        }
        Ok((seq, stop))
    }

    /// A style, font or colour switch: it applies to the rest of the current list, which is
    /// parsed here. `None` when `\color{…}{…}` turned out to take an argument instead.
    fn switch(
        &mut self,
        code: char,
        bracket: bool,
        seq: &mut Seq,
    ) -> Result<Option<Stop<'a>>, LatexError> {
        let saved = (self.display, self.font);
        // Switch codes: `C` colour, `D`/`T`/`P` display/text/script style, digits a font.
        let attrs = match code {
            'C' => {
                let color = self.color()?;
                self.skip_space();
                if self.peek() == Some('{') {
                    self.pos += 1;
                    let body = self.group("\\color")?;
                    seq.push(&tag("mstyle", &color, &body));
                    return Ok(None);
                }
                color
            }
            'D' => {
                self.display = true;
                " displaystyle=\"true\"".to_string()
            }
            'T' => {
                self.display = false;
                " displaystyle=\"false\"".to_string()
            }
            'P' => {
                self.display = false;
                " displaystyle=\"false\" scriptlevel=\"1\"".to_string()
            }
            _ => {
                self.font = font_of(code);
                String::new()
            }
        };
        let (rest, stop) = self.list(bracket)?;
        (self.display, self.font) = saved;
        if attrs.is_empty() {
            seq.ml.push_str(&rest.ml);
            seq.n += rest.n;
        } else {
            seq.push(&tag("mstyle", &attrs, &rest.ml));
        }
        Ok(Some(stop))
    }

    /// The `mathcolor` attribute for a `{colour}` argument; nothing for a colour Aula does not
    /// know, so the formula still reads.
    fn color(&mut self) -> Result<String, LatexError> {
        let color = self.raw_arg("\\color")?.trim();
        if !aula_course::is_color(color) {
            return Ok(String::new());
        }
        let mut attrs = " mathcolor=\"".to_string();
        push_escaped(&mut attrs, color);
        attrs.push('"');
        Ok(attrs)
    }

    /// After `{`: the group up to its `}` as one element.
    fn group(&mut self, what: &str) -> Result<String, LatexError> {
        match self.list(false)? {
            (seq, Stop::Brace) => Ok(seq.row()),
            (_, Stop::Input) if what.is_empty() => fail(&["missing }"]),
            (_, Stop::Input) => fail(&["missing } after ", what]),
            (_, stop) => Err(misplaced(stop)),
        }
    }

    /// A required argument: a `{group}` or a single token.
    fn arg(&mut self, what: &str) -> Result<String, LatexError> {
        self.skip_space();
        match self.peek() {
            Some('{') => {
                self.pos += 1;
                self.group(what)
            }
            None | Some('}' | '&' | '^' | '_' | '\'') => fail(&["missing argument for ", what]),
            Some(_) => {
                self.enter()?;
                let atom = self.atom(true)?;
                self.depth -= 1;
                match atom {
                    Some(atom) => Ok(atom.ml),
                    None => fail(&["missing argument for ", what]),
                }
            }
        }
    }

    /// An argument set smaller, as scripts and labels are.
    fn script(&mut self, what: &str) -> Result<String, LatexError> {
        let saved = self.display;
        self.display = false;
        let arg = self.arg(what);
        self.display = saved;
        arg
    }

    /// An optional `[argument]`, set as a script.
    fn optional(&mut self, what: &str) -> Result<Option<String>, LatexError> {
        self.skip_space();
        if self.peek() != Some('[') {
            return Ok(None);
        }
        self.pos += 1;
        let saved = self.display;
        self.display = false;
        let result = self.list(true)?;
        self.display = saved;
        match result {
            (seq, Stop::Bracket) => Ok(Some(seq.row())),
            (_, Stop::Input) => fail(&["missing ] after ", what]),
            (_, stop) => Err(misplaced(stop)),
        }
    }

    /// A `{…}` argument as source text (balanced braces), or a single character.
    fn raw_arg(&mut self, what: &str) -> Result<&'a str, LatexError> {
        self.skip_space();
        match self.peek() {
            Some('{') => {}
            Some(c) if !matches!(c, '}' | '&' | '\\' | '^' | '_') => {
                self.pos += c.len_utf8();
                return Ok(&self.src[self.pos - c.len_utf8()..self.pos]);
            }
            _ => return fail(&["missing argument for ", what]),
        }
        let rest = self.rest();
        let bytes = rest.as_bytes();
        let (mut depth, mut i) = (0usize, 0);
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 1,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos += i + 1;
                        return Ok(&rest[1..i]);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        fail(&["missing } after ", what])
    }

    /// Skips to just after `close` (or the end), returning what came before it.
    fn raw_until(&mut self, close: char) -> &'a str {
        let rest = self.rest();
        let end = rest.find(close).unwrap_or(rest.len());
        self.pos += (end + close.len_utf8()).min(rest.len());
        &rest[..end]
    }

    fn env_name(&mut self) -> Result<&'a str, LatexError> {
        self.skip_space();
        if self.peek() == Some('{') {
            self.pos += 1;
            let name = self.raw_until('}');
            if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphabetic() || b == b'*') {
                return Ok(name);
            }
        }
        Err(LatexError::new(
            "\\begin and \\end need an environment name in braces",
        ))
    }

    /// Whether what follows a function name is an ordinary argument that TeX would set off
    /// with a thin space (`\sin x`, `\log 2`, `\cos\theta`), rather than `(`, an operator or the end.
    fn next_is_ordinary(&mut self) -> bool {
        self.skip_space();
        match self.peek() {
            Some(c) if c.is_ascii_alphanumeric() || is_letter(c) => true,
            Some('\\') => {
                let name = self.peek_command();
                matches!(symbol(name), Some((_, Mi | Up | Fun | FunLim)))
                    || matches!(name, "frac" | "sqrt" | "mathrm" | "operatorname")
            }
            _ => false,
        }
    }

    /// `^`, `_`, primes and `\limits` after a base, making the script element.
    fn scripts(&mut self, atom: Atom) -> Result<String, LatexError> {
        let (mut sub, mut sup, mut primes) = (None, None, String::new());
        let mut limits = atom.limits;
        loop {
            self.skip_space();
            match self.peek() {
                Some('\'') if sup.is_none() => {
                    self.pos += 1;
                    primes.push('′');
                }
                Some('^') => {
                    if sup.is_some() {
                        return fail(&["a double superscript; group it with braces"]);
                    }
                    self.pos += 1;
                    sup = Some(self.script("^")?);
                }
                Some('_') => {
                    if sub.is_some() {
                        return fail(&["a double subscript; group it with braces"]);
                    }
                    self.pos += 1;
                    sub = Some(self.script("_")?);
                }
                Some('\\') => match self.peek_command() {
                    "limits" => {
                        self.pos += 7;
                        limits = Limits::Always;
                    }
                    "nolimits" => {
                        self.pos += 9;
                        limits = Limits::Side;
                    }
                    _ => break,
                },
                _ => break,
            }
        }
        if !primes.is_empty() {
            let primes = token("mo", "", &primes);
            sup = Some(match sup {
                Some(sup) => tag("mrow", "", &(primes + &sup)),
                None => primes,
            });
        }
        let over = limits == Limits::Always || (limits == Limits::InDisplay && self.display);
        let (one_under, one_over, both) = if over {
            ("munder", "mover", "munderover")
        } else {
            ("msub", "msup", "msubsup")
        };
        Ok(match (sub, sup) {
            (None, None) => atom.ml,
            (Some(sub), None) => tag(one_under, "", &(atom.ml + &sub)),
            (None, Some(sup)) => tag(one_over, "", &(atom.ml + &sup)),
            (Some(sub), Some(sup)) => tag(both, "", &[atom.ml, sub, sup].concat()),
        })
    }

    /// One base: a group, number, letter, operator or command. `single` takes one character
    /// of a number or name, as a TeX argument without braces does (`\frac12`).
    fn atom(&mut self, single: bool) -> Result<Option<Atom>, LatexError> {
        let Some(c) = self.peek() else {
            return Ok(None);
        };
        let start = self.pos;
        self.pos += c.len_utf8();
        let run = |s: &str, f: &dyn Fn(char) -> bool| {
            if single {
                c.len_utf8()
            } else {
                s.find(|c: char| !f(c)).unwrap_or(s.len())
            }
        };
        let ml = match c {
            '{' => self.group("")?,
            '\\' => {
                self.pos = start;
                return self.command();
            }
            // Scripts with nothing before them (`^{18}O`) attach to an empty base.
            '^' | '_' | '\'' => {
                self.pos = start;
                EMPTY_ROW.to_string()
            }
            '0'..='9' => {
                let rest = &self.src[start..];
                let mut len = run(rest, &|c| c.is_ascii_digit() || c == '.');
                // A decimal point belongs to the number only with a digit after it.
                if rest[..len].ends_with('.') {
                    len = rest[..len].trim_end_matches('.').len();
                }
                self.pos = start + len;
                let digits: String = rest[..len].chars().map(|c| styled(self.font, c)).collect();
                token("mn", "", &digits)
            }
            'a'..='z' | 'A'..='Z' => {
                if self.font == Font::Roman {
                    // Upright letters read as one word (`\mathrm{softmax}`).
                    let len = run(&self.src[start..], &|c| c.is_ascii_alphabetic());
                    self.pos = start + len;
                    let word = &self.src[start..start + len];
                    token("mi", if len == 1 { UPRIGHT } else { "" }, word)
                } else {
                    token_char("mi", "", styled(self.font, c))
                }
            }
            '~' => space("0.3333em"),
            c if is_cjk(c) => {
                let len = run(&self.src[start..], &is_cjk);
                self.pos = start + len;
                token("mtext", "", &self.src[start..start + len])
            }
            c if is_letter(c) => token_char("mi", "", c),
            c if c.is_control() => return Ok(None),
            '-' => token_char("mo", "", '−'),
            '*' => token_char("mo", "", '∗'),
            '(' | ')' | '[' | ']' | '|' | '/' => token_char("mo", FIXED, c),
            c => token_char("mo", "", c),
        };
        Ok(Atom::plain(ml))
    }

    /// A command at the cursor (on its backslash).
    fn command(&mut self) -> Result<Option<Atom>, LatexError> {
        let start = self.pos;
        let name = self.peek_command();
        if name.is_empty() {
            return fail(&["the formula ends with a lone \\"]);
        }
        self.pos += 1 + name.len();
        let what = &self.src[start..self.pos];
        // A backslash before a space, tab or line break is a word space.
        let entry = symbol(name).or(name.trim().is_empty().then_some(('7', Space)));
        let Some((c, kind)) = entry else {
            return Ok(Atom::plain(unknown(what)));
        };
        let (limits, function) = match kind {
            LargeOp | FunLim => (Limits::InDisplay, kind == FunLim),
            OverBrace | UnderBrace => (Limits::Always, false),
            Fun => (Limits::Side, true),
            _ => (Limits::Side, false),
        };
        let ml = match kind {
            Mi => token_char("mi", "", c),
            Up => token_char("mi", UPRIGHT, c),
            Mo | LargeOp | Int => token_char("mo", "", c),
            Fence => token_char("mo", FIXED, c),
            Fun | FunLim => {
                let text = match name {
                    "liminf" => "lim inf",
                    "limsup" => "lim sup",
                    "argmax" => "arg max",
                    "argmin" => "arg min",
                    _ => name,
                };
                token("mi", "", text)
            }
            Accent | Wide | OverBrace => {
                let body = self.arg(what)?;
                let (attrs, mark) = match kind {
                    Accent => (" accent=\"true\"", FIXED),
                    Wide => (" accent=\"true\"", ""),
                    _ => ("", ""),
                };
                tag("mover", attrs, &(body + &token_char("mo", mark, c)))
            }
            Under | UnderBrace => {
                let body = self.arg(what)?;
                let attrs = if kind == Under {
                    " accentunder=\"true\""
                } else {
                    ""
                };
                tag("munder", attrs, &(body + &token_char("mo", "", c)))
            }
            XArrow => {
                let below = self.optional(what)?;
                let above = self.script(what)?;
                let arrow = token_char("mo", " stretchy=\"true\"", c);
                let pad = |label: &str| tag("mrow", " style=\"padding:0 0.4em\"", label);
                match below {
                    Some(below) => tag(
                        "munderover",
                        "",
                        &[arrow, pad(&below), pad(&above)].concat(),
                    ),
                    None => tag("mover", "", &(arrow + &pad(&above))),
                }
            }
            // Codes: `f` \frac, `d` \dfrac, `t` \tfrac; `b`, `B`, `T` the same for \binom.
            Frac => {
                let saved = self.display;
                let big = matches!(c, 'd' | 'B');
                self.display = big;
                let numerator = self.arg(what);
                let denominator = numerator.and_then(|n| Ok(n + &self.arg(what)?));
                self.display = saved;
                let parts = denominator?;
                let parts = if big {
                    // MathML shrinks fraction parts; `\dfrac` keeps them at full size.
                    tag("mstyle", " displaystyle=\"true\" scriptlevel=\"0\"", &parts)
                } else {
                    parts
                };
                let binom = matches!(c, 'b' | 'B' | 'T');
                let attrs = if binom { " linethickness=\"0\"" } else { "" };
                let mut fraction = tag("mfrac", attrs, &parts);
                if matches!(c, 't' | 'T') {
                    fraction = tag("mstyle", " displaystyle=\"false\"", &fraction);
                }
                if binom {
                    fraction = tag(
                        "mrow",
                        "",
                        &["<mo>(</mo>", &fraction, "<mo>)</mo>"].concat(),
                    );
                }
                fraction
            }
            Sqrt => {
                let index = self.optional(what)?;
                let radicand = self.arg(what)?;
                match index {
                    Some(index) => tag("mroot", "", &(radicand + &index)),
                    None => tag("msqrt", "", &radicand),
                }
            }
            Left => {
                const STRETCHY: &str = " stretchy=\"true\"";
                let mut ml = self.delimiter(what, STRETCHY)?;
                loop {
                    let (seq, stop) = self.list(false)?;
                    ml.push_str(&seq.ml);
                    match stop {
                        Stop::Middle => ml.push_str(&self.delimiter("\\middle", STRETCHY)?),
                        Stop::Right => {
                            ml.push_str(&self.delimiter("\\right", STRETCHY)?);
                            break;
                        }
                        _ => return fail(&["missing \\right after \\left"]),
                    }
                }
                tag("mrow", "", &ml)
            }
            // Codes `1` to `4`: \big, \Big, \bigg, \Bigg.
            Sized => {
                let size = ["1.2em", "1.8em", "2.4em", "3em"][(c as usize - '1' as usize) & 3];
                let attrs = [
                    " stretchy=\"true\" minsize=\"",
                    size,
                    "\" maxsize=\"",
                    size,
                    "\"",
                ];
                let ml = self.delimiter(what, &attrs.concat())?;
                if ml.is_empty() {
                    EMPTY_ROW.to_string()
                } else {
                    ml
                }
            }
            Begin => self.environment()?,
            Text => text_element(self.raw_arg(what)?, font_of(c)),
            FontCmd => {
                let saved = self.font;
                self.font = font_of(c);
                let ml = self.arg(what);
                self.font = saved;
                ml?
            }
            // Code `o` \operatorname (upright, limits only when starred), `m` \mathop.
            OpName => {
                let star = self.rest().starts_with('*');
                if star {
                    self.pos += 1;
                }
                let saved = self.font;
                if c == 'o' {
                    self.font = Font::Roman;
                }
                let ml = self.arg(what);
                self.font = saved;
                return Ok(Some(Atom {
                    ml: ml?,
                    limits: if star || c == 'm' {
                        Limits::InDisplay
                    } else {
                        Limits::Side
                    },
                    function: true,
                }));
            }
            Pass => self.arg(what)?,
            // Only a list can end at these or switch style; where an argument is expected, it
            // is missing.
            ListEnd => return Ok(None),
            Switch if c != 'C' => return Ok(None),
            // \color here is an argument (`\frac\color{red}{x}…`); in a list it is a switch.
            Color | Switch => {
                let color = self.color()?;
                tag("mstyle", &color, &self.arg(what)?)
            }
            Boxed => tag(
                "mrow",
                " style=\"border:0.06em solid;padding:0.2em 0.3em\"",
                &self.arg(what)?,
            ),
            // Code `o` puts the first argument over the second, `u` under it.
            Stack => {
                let label = self.script(what)?;
                let base = self.arg(what)?;
                let name = if c == 'u' { "munder" } else { "mover" };
                tag(name, "", &(base + &label))
            }
            Substack => {
                self.skip_space();
                if self.peek() != Some('{') {
                    return fail(&["missing { after \\substack"]);
                }
                self.pos += 1;
                let rows = self.rows(End::Brace)?;
                table(&rows, "c", false, false)
            }
            // Code `p` \phantom, `h` \hphantom (no height), `v` \vphantom (no width).
            Phantom => {
                let ml = tag("mphantom", "", &self.arg(what)?);
                match c {
                    'h' => tag("mpadded", " height=\"0\" depth=\"0\"", &ml),
                    'v' => tag("mpadded", " width=\"0\"", &ml),
                    _ => ml,
                }
            }
            Not => {
                self.skip_space();
                let (negated, len) = match self.peek() {
                    Some('=') => ('≠', 1),
                    Some('<') => ('≮', 1),
                    Some('>') => ('≯', 1),
                    Some('\\') => {
                        let name = self.peek_command();
                        match symbol(name) {
                            Some(('∈', _)) => ('∉', 1 + name.len()),
                            Some((c, Mo | Fence)) => (c, 1 + name.len()),
                            _ => return Ok(Atom::plain(unknown(what))),
                        }
                    }
                    _ => return Ok(Atom::plain(unknown(what))),
                };
                self.pos += len;
                let mut text = negated.to_string();
                if !matches!(negated, '≠' | '≮' | '≯' | '∉') {
                    // U+0338 COMBINING LONG SOLIDUS OVERLAY strikes the relation through.
                    text.push('\u{338}');
                }
                token("mo", "", &text)
            }
            // Code `p` \pmod{n} (in parentheses), `b` \bmod and \mod (a binary operator).
            Mod if c == 'p' => {
                let arg = self.arg(what)?;
                let ml = [
                    &space("0.4444em"),
                    "<mo>(</mo><mi>mod</mi>",
                    &space("0.3333em"),
                    &arg,
                    "<mo>)</mo>",
                ];
                tag("mrow", "", &ml.concat())
            }
            Mod => "<mo>mod</mo>".to_string(),
            Tag => {
                let raw = self.raw_arg(what)?;
                space("2em") + &text_element(&["(", raw, ")"].concat(), Font::Roman)
            }
            Label => {
                self.raw_arg(what)?;
                return Ok(None);
            }
            Ignore => return Ok(None),
            HSpace => {
                if self.rest().starts_with('*') {
                    self.pos += 1;
                }
                match css_length(self.raw_arg(what)?) {
                    Some(width) => space(width),
                    None => return fail(&[what, " needs a length such as 1em"]),
                }
            }
            // Codes index the widths: \, \: \; \! and their negatives, \ , \enspace, \quad.
            Space => {
                let widths = [
                    "2em",
                    "0.1667em",
                    "0.2222em",
                    "0.2778em",
                    "-0.1667em",
                    "-0.2222em",
                    "-0.2778em",
                    "0.3333em",
                    "0.5em",
                    "1em",
                ];
                space(widths[(c as usize).wrapping_sub('0' as usize) % 10])
            }
        };
        Ok(Some(Atom {
            ml,
            limits,
            function,
        }))
    }

    /// The delimiter after `\left`, `\right`, `\middle` or `\big`, as an `<mo>` with `attrs`;
    /// empty for `.`.
    fn delimiter(&mut self, what: &str, attrs: &str) -> Result<String, LatexError> {
        self.skip_space();
        let c = match self.peek() {
            Some('.') => {
                self.pos += 1;
                return Ok(String::new());
            }
            Some(c @ ('(' | ')' | '[' | ']' | '|' | '/')) => c,
            Some('<') => '⟨',
            Some('>') => '⟩',
            Some('\\') => {
                let name = self.peek_command();
                let c = match name {
                    "{" | "}" => name.chars().next().unwrap_or('{'),
                    "|" => '‖',
                    _ => match symbol(name) {
                        Some((c, Fence | Mo)) => c,
                        _ => return fail(&["missing delimiter after ", what]),
                    },
                };
                self.pos += name.len();
                c
            }
            _ => return fail(&["missing delimiter after ", what]),
        };
        self.pos += 1;
        Ok(token_char("mo", attrs, c))
    }

    /// `\begin{name}` … `\end{name}` (the `\begin` has been read).
    fn environment(&mut self) -> Result<String, LatexError> {
        let env = self.env_name()?;
        let (open, close, display) = match env {
            "pmatrix" => ("(", ")", false),
            "bmatrix" => ("[", "]", false),
            "Bmatrix" => ("{", "}", false),
            "vmatrix" => ("|", "|", false),
            "Vmatrix" => ("‖", "‖", false),
            "cases" => ("{", "", false),
            "dcases" => ("{", "", true),
            "rcases" => ("", "}", false),
            "matrix" | "smallmatrix" | "array" | "subarray" => ("", "", false),
            "aligned" | "align" | "align*" | "alignat" | "alignat*" | "alignedat" | "split"
            | "eqnarray" | "eqnarray*" | "gathered" | "gather" | "gather*" | "equation"
            | "equation*" | "multline" | "multline*" | "displaymath" => ("", "", true),
            _ => {
                let shown = &env[..env.len().min(24)];
                return fail(&["unknown environment ", shown]);
            }
        };
        let aligned = matches!(
            env.trim_end_matches('*'),
            "aligned" | "align" | "alignat" | "alignedat" | "split" | "eqnarray"
        );
        let mut spec = if aligned {
            "rl".to_string()
        } else if env.ends_with("cases") {
            "l".to_string()
        } else {
            "c".to_string()
        };
        if matches!(
            env,
            "array" | "subarray" | "alignat" | "alignat*" | "alignedat"
        ) {
            let raw = self.raw_arg("\\begin{array}")?;
            if !aligned {
                spec = raw
                    .chars()
                    .filter(|c| matches!(c, 'l' | 'c' | 'r'))
                    .collect();
            }
        }
        let saved = self.display;
        self.display = display;
        let rows = self.rows(End::Env(env));
        self.display = saved;
        let mut rows = rows?;
        let body = if rows.len() == 1 && rows[0].len() == 1 && display && !aligned {
            rows.remove(0).remove(0)
        } else {
            table(&rows, &spec, aligned, display)
        };
        if open.is_empty() && close.is_empty() {
            return Ok(body);
        }
        let mut ml = String::new();
        if !open.is_empty() {
            ml.push_str(&token("mo", "", open));
        }
        ml.push_str(&body);
        if !close.is_empty() {
            ml.push_str(&token("mo", "", close));
        }
        Ok(tag("mrow", "", &ml))
    }

    /// Cells separated by `&` and rows by `\\`, up to `end`. A final `\\` adds no empty row.
    fn rows(&mut self, end: End<'a>) -> Result<Vec<Vec<String>>, LatexError> {
        let mut rows = Vec::new();
        let mut row = Vec::new();
        loop {
            let (seq, stop) = self.list(false)?;
            row.push(seq.row());
            match (stop, end) {
                (Stop::Cell, _) => {}
                (Stop::Row, _) => rows.push(std::mem::take(&mut row)),
                (Stop::Input, End::Input) | (Stop::Brace, End::Brace) => break,
                (Stop::End(name), End::Env(env)) if name == env => break,
                (Stop::End(name), End::Env(env)) => {
                    let (env, name) = (&env[..env.len().min(24)], &name[..name.len().min(24)]);
                    return fail(&["\\begin{", env, "} is ended by \\end{", name, "}"]);
                }
                (Stop::Input, End::Env(env)) => {
                    return fail(&["missing \\end{", &env[..env.len().min(24)], "}"]);
                }
                (Stop::Input, End::Brace) => return fail(&["missing }"]),
                (stop, _) => return Err(misplaced(stop)),
            }
        }
        if !(!rows.is_empty() && row.len() == 1 && row[0] == EMPTY_ROW) {
            rows.push(row);
        }
        Ok(rows)
    }
}

/// Whether a character typed directly (not as a command) reads as a letter: anything outside
/// ASCII except the symbol and punctuation blocks. Cheaper than `char::is_alphabetic`, whose
/// Unicode tables would ship in the page.
fn is_letter(c: char) -> bool {
    !c.is_ascii()
        && !matches!(c as u32,
            0x80..=0xBF | 0xD7 | 0xF7 // Latin-1 punctuation and symbols, × and ÷
            | 0x2000..=0x2BFF // punctuation, arrows, mathematical operators, shapes
            | 0x2E00..=0x2E7F | 0x3000..=0x303F // more punctuation, CJK punctuation
            | 0xFE30..=0xFE4F | 0xFF00..=0xFF0F | 0xFF1A..=0xFF20 // full-width punctuation
        )
}

/// An unknown command, drawn in place so the rest of the formula still reads.
fn unknown(what: &str) -> String {
    tag("merror", " mathcolor=\"red\"", &token("mtext", "", what))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_formula_is_as_wide_as_what_it_shows() {
        let one = super::approx_width_em("x");
        assert!((one - 0.6).abs() < 1e-9);
        // Font commands count by their argument, symbol commands as one character.
        assert_eq!(
            super::approx_width_em("\\mathrm{softmax}"),
            super::approx_width_em("softmax")
        );
        assert_eq!(super::approx_width_em("\\alpha"), one);
        assert_eq!(super::approx_width_em("{x}^{2}_{i}"), 3.0 * one);
        let wide = super::approx_width_em(
            "P(w \\mid \\text{text}) = \\mathrm{softmax}(h\\, W_{\\mathrm{vocab}})_w",
        );
        assert!((17.0..18.5).contains(&wide), "{wide}");
        assert!(
            super::approx_width_em("a=b") > 3.0 * one,
            "operators bring their spacing"
        );
        assert_eq!(super::approx_width_em(""), 0.0);
    }

    use super::*;
    use crate::markup_check::{assert_safe_markup, parse_markup, Element};

    /// The MathML Core elements and presentation attributes this converter may write: nothing
    /// that loads, links or runs.
    const ELEMENTS: &[&str] = &[
        "math",
        "semantics",
        "annotation",
        "mrow",
        "mi",
        "mn",
        "mo",
        "mtext",
        "mspace",
        "mfrac",
        "msqrt",
        "mroot",
        "msub",
        "msup",
        "msubsup",
        "munder",
        "mover",
        "munderover",
        "mtable",
        "mtr",
        "mtd",
        "mstyle",
        "mpadded",
        "mphantom",
        "merror",
    ];
    const ATTRIBUTES: &[&str] = &[
        "xmlns",
        "display",
        "encoding",
        "mathvariant",
        "stretchy",
        "minsize",
        "maxsize",
        "accent",
        "accentunder",
        "linethickness",
        "displaystyle",
        "scriptlevel",
        "mathcolor",
        "width",
        "height",
        "depth",
        "style",
    ];

    /// Well-formed, inert, allow-listed MathML; returns its elements.
    fn checked(mathml: &str) -> Vec<Element> {
        assert_safe_markup(mathml);
        let elements = parse_markup(mathml)
            .unwrap_or_else(|e| panic!("{e}: {mathml}"))
            .elements;
        for element in &elements {
            assert!(
                ELEMENTS.contains(&element.name.as_str()),
                "<{}> in {mathml}",
                element.name
            );
            for (name, value) in &element.attributes {
                assert!(ATTRIBUTES.contains(&name.as_str()), "{name} in {mathml}");
                if name == "style" {
                    assert!(
                        value
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b":;.- ".contains(&b)),
                        "style {value:?} in {mathml}"
                    );
                }
            }
        }
        elements
    }

    fn convert(latex: &str, display: bool) -> (String, Vec<String>) {
        let mathml = latex_to_mathml(latex, display).unwrap_or_else(|e| panic!("{latex}: {e}"));
        let names = checked(&mathml).into_iter().map(|e| e.name).collect();
        (mathml, names)
    }

    fn has(names: &[String], name: &str) -> bool {
        names.iter().any(|n| n == name)
    }

    #[test]
    fn quadratic_formula_becomes_mathml_with_a_fraction_and_a_root() {
        let (mathml, names) = convert(r"x = \frac{-b \pm \sqrt{b^2 - 4ac}}{2a}", true);
        assert!(mathml.starts_with("<math"), "{mathml}");
        assert!(mathml.contains("display=\"block\""), "{mathml}");
        for needed in ["math", "mfrac", "msqrt", "msup"] {
            assert!(has(&names, needed), "no <{needed}> in {mathml}");
        }
        assert!(
            mathml.contains("<mo>±</mo>") && mathml.contains("<mo>−</mo>"),
            "{mathml}"
        );
        assert!(
            mathml.contains("<msup><mi>b</mi><mn>2</mn></msup>"),
            "{mathml}"
        );
    }

    #[test]
    fn inline_fraction_has_an_mfrac_and_no_block_display() {
        let (mathml, names) = convert(r"\frac{1}{2}", false);
        assert!(has(&names, "mfrac"), "{mathml}");
        assert!(mathml.contains("display=\"inline\""), "{mathml}");
        assert!(convert(r"\frac12", false)
            .0
            .contains("<mfrac><mn>1</mn><mn>2</mn></mfrac>"));
    }

    #[test]
    fn source_is_kept_as_an_escaped_tex_annotation() {
        let (mathml, _) = convert("a<b", false);
        assert!(
            mathml.ends_with(
                "<annotation encoding=\"application/x-tex\">a&lt;b</annotation></semantics></math>"
            ),
            "{mathml}"
        );
    }

    #[test]
    fn sum_limits_go_under_and_over_in_display_and_to_the_side_inline() {
        let (block, _) = convert(r"\sum_{i=1}^{n} i", true);
        assert!(block.contains("<munderover><mo>∑</mo>"), "{block}");
        let (inline, _) = convert(r"\sum_{i=1}^{n} i", false);
        assert!(inline.contains("<msubsup><mo>∑</mo>"), "{inline}");
        let (integral, _) = convert(r"\int_0^1 f", true);
        assert!(integral.contains("<msubsup><mo>∫</mo>"), "{integral}");
        let (forced, _) = convert(r"\int\limits_0^1 f", false);
        assert!(forced.contains("<munderover><mo>∫</mo>"), "{forced}");
        let (lim, _) = convert(r"\lim_{x \to 0} f", true);
        assert!(lim.contains("<munder><mi>lim</mi>"), "{lim}");
    }

    #[test]
    fn limits_in_a_fraction_stay_at_the_side_even_in_display() {
        let (mathml, _) = convert(r"\frac{\sum_a^b x}{2}", true);
        assert!(mathml.contains("<msubsup><mo>∑</mo>"), "{mathml}");
        let (dfrac, _) = convert(r"\dfrac{\sum_a^b x}{2}", false);
        assert!(dfrac.contains("<munderover><mo>∑</mo>"), "{dfrac}");
    }

    #[test]
    fn scripts_primes_and_prescripts_nest_as_tex_does() {
        assert!(convert("x^{2}_{i}", false)
            .0
            .contains("<msubsup><mi>x</mi><mi>i</mi><mn>2</mn></msubsup>"));
        assert!(convert("f'(x)", false)
            .0
            .contains("<msup><mi>f</mi><mo>′</mo></msup>"));
        assert!(convert("f''^2", false)
            .0
            .contains("<msup><mi>f</mi><mrow><mo>′′</mo><mn>2</mn></mrow></msup>"));
        let (isotope, _) = convert(r"{}^{18}\mathrm{O}", false);
        assert!(
            isotope
                .contains("<msup><mrow></mrow><mn>18</mn></msup><mi mathvariant=\"normal\">O</mi>"),
            "{isotope}"
        );
        assert!(convert("^{14}C", false)
            .0
            .contains("<msup><mrow></mrow><mn>14</mn></msup>"));
    }

    #[test]
    fn letters_are_separate_identifiers_but_upright_names_are_words() {
        let (mathml, _) = convert(r"ab + \mathrm{softmax}(x) + \mathrm{d}x + \sin x", false);
        assert!(mathml.contains("<mi>a</mi><mi>b</mi>"), "{mathml}");
        assert!(mathml.contains("<mi>softmax</mi>"), "{mathml}");
        assert!(
            mathml.contains("<mi mathvariant=\"normal\">d</mi>"),
            "{mathml}"
        );
        assert!(mathml.contains("<mi>sin</mi><mspace width=\"0.1667em\"></mspace><mi>x</mi>"));
        let (chem, _) = convert(r"\mathrm{C_6H_{12}O_6}", false);
        assert!(chem.contains(
            "<msub><mi mathvariant=\"normal\">C</mi><mn>6</mn></msub><msub><mi mathvariant=\"normal\">H</mi><mn>12</mn></msub>"
        ), "{chem}");
        assert!(convert("3.14 + 2.", false)
            .0
            .contains("<mn>3.14</mn><mo>+</mo><mn>2</mn><mo>.</mo>"));
    }

    #[test]
    fn styled_alphabets_use_mathematical_letters() {
        let (mathml, _) = convert(
            r"\mathbb{R}^n \mathbf{v} \mathcal{L} \mathfrak{g} \mathbb{1}",
            false,
        );
        for letter in ["ℝ", "𝐯", "ℒ", "𝔤", "𝟙"] {
            assert!(mathml.contains(letter), "{letter} in {mathml}");
        }
    }

    #[test]
    fn greek_letters_and_symbols_come_from_the_table() {
        let (mathml, _) = convert(r"\alpha \varepsilon \Omega \le \infty \to \nabla", false);
        assert!(mathml.contains("<mi>α</mi><mi>ε</mi><mi mathvariant=\"normal\">Ω</mi><mo>≤</mo><mi>∞</mi><mo>→</mo>"), "{mathml}");
    }

    #[test]
    fn every_table_symbol_converts_without_an_error_mark() {
        let entries: Vec<(&str, char, Kind)> = COMMANDS
            .lines()
            .skip(1)
            .map(|line| {
                let mut fields = line.split(' ');
                let (name, code, kind) = (fields.next(), fields.next(), fields.next());
                let kind = kind.and_then(Kind::named);
                match (
                    name,
                    code.and_then(|c| c.chars().next()),
                    kind,
                    fields.next(),
                ) {
                    (Some(name), Some(code), Some(kind), None) => (name, code, kind),
                    _ => panic!("bad COMMANDS line {line:?}"),
                }
            })
            .collect();
        assert!(
            entries.windows(2).all(|w| w[0].0 < w[1].0),
            "COMMANDS must be sorted"
        );
        for &(name, code, kind) in &entries {
            assert_eq!(symbol(name), Some((code, kind)), "{name}");
            let source = match kind {
                Sized => format!("\\{name}( x"),
                Frac | Stack => format!("\\{name}{{x}}{{y}}"),
                Not => format!("\\{name}="),
                Switch if code == 'C' => format!("\\{name}{{red}} x"),
                Color => format!("\\{name}{{red}}{{x}}"),
                HSpace => format!("\\{name}{{1em}}"),
                Substack => format!("\\sum_{{\\{name}{{a\\\\b}}}}"),
                // Structure with tests of its own.
                ListEnd | Left | Begin => continue,
                _ => format!("\\{name}{{x}}"),
            };
            let (mathml, names) = convert(&source, true);
            assert!(!has(&names, "merror"), "{source}: {mathml}");
        }
    }

    #[test]
    fn left_right_delimiters_stretch() {
        let (mathml, _) = convert(r"\left(\frac{a}{b}\right)", true);
        assert!(mathml.starts_with("<math xmlns=\"http://www.w3.org/1998/Math/MathML\" display=\"block\"><semantics><mrow><mo stretchy=\"true\">(</mo><mfrac>"), "{mathml}");
        assert!(
            mathml.contains("<mo stretchy=\"true\">)</mo></mrow>"),
            "{mathml}"
        );
        let (mid, _) = convert(r"\left\{ x \middle| x > 0 \right.", false);
        assert!(
            mid.contains("<mo stretchy=\"true\">{</mo><mi>x</mi><mo stretchy=\"true\">|</mo>"),
            "{mid}"
        );
        assert!(convert(r"\langle x \rangle", false)
            .0
            .contains("<mo stretchy=\"false\">⟨</mo>"));
        assert!(convert(r"\Big( x \Big)", false)
            .0
            .contains("minsize=\"1.8em\""));
    }

    #[test]
    fn matrices_become_tables_with_their_fences() {
        let (mathml, names) = convert(r"\begin{pmatrix} a & b \\ c & d \end{pmatrix}", true);
        assert!(has(&names, "mtable"), "{mathml}");
        assert_eq!(names.iter().filter(|n| *n == "mtr").count(), 2, "{mathml}");
        assert_eq!(names.iter().filter(|n| *n == "mtd").count(), 4, "{mathml}");
        assert!(mathml.contains("<mrow><mo>(</mo><mtable>"), "{mathml}");
        for (env, open) in [
            ("bmatrix", "["),
            ("Bmatrix", "{"),
            ("vmatrix", "|"),
            ("Vmatrix", "‖"),
        ] {
            let (mathml, _) = convert(
                &format!("\\begin{{{env}}} 1 & 0 \\\\ 0 & 1 \\\\ \\end{{{env}}}"),
                false,
            );
            assert!(
                mathml.contains(&format!("<mo>{open}</mo><mtable>")),
                "{mathml}"
            );
            assert_eq!(
                mathml.matches("<mtr>").count(),
                2,
                "a final \\\\ adds no row: {mathml}"
            );
        }
        let (array, _) = convert(r"\begin{array}{l|r} 1 & 2 \end{array}", false);
        assert!(
            array.contains(
                "<mtd style=\"text-align:left\"><mn>1</mn></mtd><mtd style=\"text-align:right\">"
            ),
            "{array}"
        );
    }

    #[test]
    fn cases_have_a_left_brace_and_left_aligned_columns() {
        let (mathml, _) = convert(
            r"|x| = \begin{cases} x & \text{if } x \ge 0 \\ -x & \text{otherwise} \end{cases}",
            true,
        );
        assert!(
            mathml.contains("<mrow><mo>{</mo><mtable><mtr><mtd style=\"text-align:left\">"),
            "{mathml}"
        );
        assert!(mathml.contains("<mtext>if\u{a0}</mtext>"), "{mathml}");
    }

    #[test]
    fn aligned_columns_alternate_right_and_left() {
        for source in [
            r"\begin{aligned} f(x) &= x^2 \\ &= x \cdot x \end{aligned}",
            r"\begin{align*} f(x) &= x^2 \\ &= x \cdot x \end{align*}",
            r"f(x) &= x^2 \\ &= x \cdot x",
        ] {
            let (mathml, _) = convert(source, true);
            assert!(mathml.contains("<mtable displaystyle=\"true\"><mtr><mtd style=\"text-align:right;padding-right:0\">"), "{mathml}");
            assert!(
                mathml.contains("<mtd style=\"text-align:left;padding-left:0\"><mrow><mo>=</mo>"),
                "{mathml}"
            );
        }
        let (wrapped, names) = convert(r"\begin{equation} E = mc^2 \end{equation}", true);
        assert!(!has(&names, "mtable"), "{wrapped}");
    }

    #[test]
    fn accents_braces_and_labelled_arrows_stack() {
        assert!(convert(r"\hat{x}", false)
            .0
            .contains("<mover accent=\"true\"><mi>x</mi><mo stretchy=\"false\">^</mo></mover>"));
        assert!(convert(r"\overline{AB}", false)
            .0
            .contains("<mo>‾</mo></mover>"));
        let (brace, _) = convert(r"\underbrace{a+b}_{n}", false);
        assert!(brace.starts_with("<math xmlns=\"http://www.w3.org/1998/Math/MathML\" display=\"inline\"><semantics><munder><munder>"), "{brace}");
        let (arrow, _) = convert(r"A \xrightarrow[\text{below}]{\text{above}} B", false);
        assert!(
            arrow.contains("<munderover><mo stretchy=\"true\">→</mo>"),
            "{arrow}"
        );
        assert!(
            arrow.contains("below") && arrow.contains("above"),
            "{arrow}"
        );
        assert!(convert(r"\overset{!}{=}", false)
            .0
            .contains("<mover><mo>=</mo><mo>!</mo></mover>"));
    }

    #[test]
    fn roots_spaces_colours_and_boxes() {
        assert!(convert(r"\sqrt[3]{x}", false)
            .0
            .contains("<mroot><mi>x</mi><mn>3</mn></mroot>"));
        assert!(convert(r"a\,b\quad c\!d", false)
            .0
            .contains("<mspace width=\"0.1667em\"></mspace>"));
        assert!(convert(r"a\!b", false).0.contains("margin-left:-0.1667em"));
        assert!(convert(r"\color{red}{x} + \color{#00aa00} y", false).0.contains("<mstyle mathcolor=\"red\"><mi>x</mi></mstyle><mo>+</mo><mstyle mathcolor=\"#00aa00\"><mi>y</mi></mstyle>"));
        let (bad, _) = convert(
            r#"\color{red" onclick="x}{x} \textcolor{url(javascript:1)}{y}"#,
            false,
        );
        assert!(!bad.contains("mathcolor"), "{bad}");
        assert!(convert(r"\boxed{x}", false).0.contains("border"));
        assert!(latex_to_mathml(r"\hspace{1em;color:red}", false).is_err());
    }

    #[test]
    fn cjk_text_and_chemistry_read() {
        let (mathml, names) = convert(
            r"6\,\mathrm{CO_2} \xrightarrow[\text{叶绿体}]{\text{光能}} \mathrm{C_6H_{12}O_6}",
            true,
        );
        assert!(
            mathml.contains("<mtext>叶绿体</mtext>") && mathml.contains("<mtext>光能</mtext>"),
            "{mathml}"
        );
        assert!(!has(&names, "merror"), "{mathml}");
    }

    #[test]
    fn text_with_markup_is_escaped() {
        let (mathml, _) = convert(r"\text{<script>alert(1)</script>} + 1", false);
        assert!(!mathml.contains("<script"), "{mathml}");
        assert!(mathml.contains("&lt;script&gt;"), "{mathml}");
    }

    #[test]
    fn annotation_keeps_the_source_escaped() {
        let (mathml, _) = convert(r"a < b \text{</annotation><img>}", false);
        assert!(mathml.contains("a &lt; b"), "{mathml}");
        assert!(!mathml.contains("<img"), "{mathml}");
    }

    #[test]
    fn verbatim_operator_names_cannot_open_elements() {
        for source in [
            r"\operatorname{<img src=x onerror=alert(1)>}",
            r#"\operatorname{<mi onclick="alert(1)">}"#,
            r#"\mathop{<mi style="background:url(https://t.example/x)">}"#,
            r"\operatorname{</math><img src=x>}",
            r"\mathop{<x>} \& < >",
            r"\operatorname{&nbsp;&#60;&}",
        ] {
            let Ok(mathml) = latex_to_mathml(source, false) else {
                continue;
            };
            checked(&mathml);
            assert!(!mathml.contains("<img"), "{mathml}");
        }
        let (mathml, _) = convert(r"\operatorname{<img onerror>}", false);
        assert!(mathml.contains("<mo>&lt;</mo><mi>img</mi>"), "{mathml}");
    }

    #[test]
    fn less_than_operator_is_escaped_text() {
        let (mathml, _) = convert("a < b", false);
        assert!(mathml.contains("<mo>&lt;</mo>"), "{mathml}");
    }

    #[test]
    fn unknown_command_is_marked_in_place_and_the_rest_still_reads() {
        let (mathml, names) = convert(r"x + \notacommand{y} + \<", false);
        assert!(
            mathml.contains("<merror mathcolor=\"red\"><mtext>\\notacommand</mtext></merror>"),
            "{mathml}"
        );
        assert!(mathml.contains("<mtext>\\&lt;</mtext>"), "{mathml}");
        assert!(has(&names, "mi"), "{mathml}");
    }

    #[test]
    fn garbage_gives_a_short_error() {
        for garbage in [
            r"\frac{1}{",
            r"\frac{1}",
            r"x^^2",
            r"x_1_2",
            "}",
            "{x",
            r"\left( x",
            r"x \right)",
            r"\sqrt[3 x",
            r"a & b }",
            r"\begin{nothing} x \end{nothing}",
            r"\begin{pmatrix} x \end{bmatrix}",
            r"\begin{cases} x",
            r"\text{abc",
            r"x^",
            "\\",
        ] {
            let error = latex_to_mathml(garbage, false).expect_err(garbage);
            assert!(!error.message.is_empty(), "{garbage}");
            assert!(
                !error.message.contains('\n'),
                "{garbage}: {:?}",
                error.message
            );
            assert!(error.message.len() < 120, "{garbage}: {:?}", error.message);
        }
        let error = latex_to_mathml(r"\frac{1}{", false).unwrap_err();
        assert_eq!(
            error.to_string(),
            "This formula could not be read: missing } after \\frac."
        );
        let error = latex_to_mathml(r"\begin{foo}x\end{foo}", false).unwrap_err();
        assert_eq!(error.message, "unknown environment foo");
    }

    #[test]
    fn empty_formula_is_an_error() {
        assert!(latex_to_mathml("  ", true).is_err());
        assert!(latex_to_mathml("", false).is_err());
        assert!(
            latex_to_mathml("$$ $$", false).is_ok(),
            "a lone `$$` is just two dollars"
        );
        assert!(convert("$x$", false).0.contains("<mi>x</mi><annotation"));
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        for bomb in [
            format!("{}x{}", "{".repeat(5_000), "}".repeat(5_000)),
            format!("{}x", r"\sqrt".repeat(5_000)),
            format!("{}x{}", "x^{".repeat(5_000), "}".repeat(5_000)),
            format!("{}x{}", r"\left(".repeat(5_000), r"\right)".repeat(5_000)),
            format!("{}x", r"\rm ".repeat(5_000)),
            r"\begin{matrix}".repeat(5_000),
        ] {
            let error = latex_to_mathml(&bomb, false).expect_err("too deep");
            assert!(
                error.message.contains("nested too deeply"),
                "{}",
                error.message
            );
        }
        let ok = format!("{}x{}", "{".repeat(60), "}".repeat(60));
        assert!(latex_to_mathml(&ok, false).is_ok());
    }

    #[test]
    fn a_100_kb_formula_converts() {
        let piece = r"x_i^2 + \frac{a}{\sqrt{b}} - \alpha \cdot \left( y \right) \\ ";
        let source = piece.repeat(100_000 / piece.len() + 1);
        let mathml = latex_to_mathml(&source, true).unwrap();
        assert!(mathml.len() > source.len());
        let wide = "x+".repeat(50_000) + "x";
        assert!(latex_to_mathml(&wide, false).is_ok());
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn any_formula_is_allow_listed_mathml_or_an_error(
            pieces in prop::collection::vec(prop::sample::select(&[
                "\\frac", "\\sqrt", "[", "]", "{", "}", "^", "_", "'", "x", "12", "\\text{", "<",
                ">", "&", "\\\\", "\\left(", "\\right)", "\\middle|", "\\begin{pmatrix}",
                "\\end{pmatrix}", "\\begin{aligned}", "\\end{aligned}", "\\color{red}",
                "\\color{\"}", "\\mathbb{R}", "\\mathrm", "\\sum", "\\int", "\\limits",
                "\\alpha", " ", "\\operatorname{", "\\hat", "\\overbrace", "\\xrightarrow",
                "\\not", "\\over", "\\rm", "\\displaystyle", "\\hspace{", "1em", "\\big",
                "\\boxed", "\\binom", "\\unknown", "\\", "%", "\"", "光", "\u{0}", "\\tag{",
            ][..]), 0..24).prop_map(|pieces| pieces.concat()),
            display in any::<bool>(),
        ) {
            if let Ok(mathml) = latex_to_mathml(&pieces, display) {
                checked(&mathml);
            }
        }
    }
}
