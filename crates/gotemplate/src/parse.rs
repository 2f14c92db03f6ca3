//! Lexer and parser for Go `text/template` syntax: text, actions with trim
//! markers, comments, pipelines, variables, `if`/`else if`/`range`/`with`.
//!
//! `define`, `template` and `block` are parsed only for template sets
//! ([`parse_set`]); an ApplicationSet string ([`parse`]) rejects them with a
//! clear message. Every command keeps the byte offset and source text of its
//! operands, for Go's `template: NAME:LINE:COL: executing ...` errors.

/// A parsed template body.
pub(crate) type List = Vec<Node>;

/// One node of a template body.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    /// Literal text.
    Text(String),
    /// `{{pipeline}}`: evaluate and print (or just assign when it declares).
    Action(Pipe),
    /// `{{if}}`: the condition, then-branch, else-branch.
    If(Pipe, List, List),
    /// `{{range}}`: the pipeline, body, else-branch.
    Range(Pipe, List, List),
    /// `{{with}}`: the pipeline, body, else-branch.
    With(Pipe, List, List),
    /// `{{break}}`.
    Break,
    /// `{{continue}}`.
    Continue,
    /// `{{template "name" pipeline}}` (also what a `block` leaves in place).
    Template(TemplateCall),
}

/// A `{{template}}` action.
#[derive(Debug, Clone)]
pub(crate) struct TemplateCall {
    /// The template's name.
    pub(crate) name: String,
    /// The data pipeline, if any (`nil` data otherwise).
    pub(crate) pipe: Option<Pipe>,
    /// Byte offset of the action in its source.
    pub(crate) pos: usize,
    /// Go's `TemplateNode.String()`.
    pub(crate) text: String,
}

/// A pipeline, with its optional variable declaration or assignment.
#[derive(Debug, Clone)]
pub(crate) struct Pipe {
    /// Declared or assigned variables (`$x` / `$i, $v`), with `$`.
    pub(crate) vars: Vec<String>,
    /// `=` rather than `:=`.
    pub(crate) assign: bool,
    /// Commands separated by `|`.
    pub(crate) cmds: Vec<Cmd>,
    /// Source text, for error messages.
    pub(crate) text: String,
}

/// One command: a function call or a single operand.
#[derive(Debug, Clone)]
pub(crate) struct Cmd {
    /// The operands; the first may name a function.
    pub(crate) args: Vec<Arg>,
    /// Byte offset in the source of each operand.
    pub(crate) pos: Vec<usize>,
    /// Source text of each operand (Go's `Node.String()`).
    pub(crate) texts: Vec<String>,
}

impl Cmd {
    /// Go's `CommandNode.String()`: the operands joined by spaces.
    pub(crate) fn text(&self) -> String {
        self.texts.join(" ")
    }
}

/// An operand.
#[derive(Debug, Clone)]
pub(crate) enum Arg {
    /// `.`
    Dot,
    /// `.a.b`
    Field(Vec<String>),
    /// `$x.a.b` (`$` alone is the root).
    Var(String, Vec<String>),
    /// A function name.
    Ident(String),
    /// A string literal.
    Str(String),
    /// An integer literal (also character constants).
    Int(i64),
    /// A floating-point literal.
    Float(f64),
    /// `true` / `false`.
    Bool(bool),
    /// `nil`.
    Nil,
    /// `(pipeline).a.b`
    Sub(Box<Pipe>, Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Field(Vec<String>),
    Var(String, Vec<String>),
    Ident(String),
    Str(String),
    Int(i64),
    Float(f64),
    Dot,
    LParen,
    /// `)` followed by a field chain.
    RParen(Vec<String>),
    Pipe,
    Declare,
    Assign,
    Comma,
}

/// Parses a whole template.
///
/// # Errors
/// A syntax error, with a short description.
pub(crate) fn parse(src: &str) -> Result<List, String> {
    parse_inner(src, "", false, None)
        .map(|p| p.root)
        .map_err(|(_, e)| e)
}

/// One source parsed for a template set: its top-level body and the
/// templates it defines (`define` and `block`), in source order.
#[derive(Debug, Clone)]
pub(crate) struct Parsed {
    /// The body outside any `define`.
    pub(crate) root: List,
    /// `(name, body)` of each definition.
    pub(crate) defines: Vec<(String, List)>,
}

/// Parses a source of a template set named `name`, where `define`,
/// `template` and `block` are allowed; `known` checks each function name
/// as Go's parser does when it meets one.
///
/// # Errors
/// A syntax error with the byte offset of the token (or action) it was
/// found at.
pub(crate) fn parse_set(src: &str, name: &str, known: Known) -> Result<Parsed, (usize, String)> {
    parse_inner(src, name, true, known)
}

fn parse_inner(src: &str, name: &str, sets: bool, known: Known) -> Result<Parsed, (usize, String)> {
    let items = split_actions(src).map_err(|e| (src.len(), e))?;
    let mut p = Parser {
        items,
        pos: 0,
        depth: 0,
        sets,
        defines: Vec::new(),
        at: 0,
        known,
        src,
        name,
        delim: 0,
    };
    let (list, end) = p.list().map_err(|e| (p.at, e))?;
    match end {
        None => Ok(Parsed {
            root: list,
            defines: p.defines,
        }),
        Some(e) => Err((p.at, format!("unexpected {{{{{e}}}}}"))),
    }
}

enum Item {
    Text(String),
    /// The text inside the delimiters, its byte offset in the source and
    /// that of the left delimiter.
    Action(String, usize, usize),
    /// An action the lexer cannot close. Go's parser reads items in order,
    /// so an error at an earlier token of the action (or in an earlier
    /// action) is the one reported (text/template/parse `lex.go`,
    /// `Tree.parse`).
    Broken(Broken),
}

struct Broken {
    /// The rest of the source from the action's start.
    body: String,
    /// The byte offset of `body`.
    off: usize,
    /// The byte offset of the left delimiter.
    delim: usize,
    /// The lexer's error and its byte offset.
    err: String,
    err_at: usize,
}

/// Splits text and actions, applying trim markers and dropping comments.
fn split_actions(src: &str) -> Result<Vec<Item>, String> {
    let mut items: Vec<Item> = Vec::new();
    let mut rest = src;
    let mut trim_next = false;
    while !rest.is_empty() {
        let Some(open) = rest.find("{{") else {
            let mut text = rest;
            if trim_next {
                text = text.trim_start_matches(is_space);
            }
            if !text.is_empty() {
                items.push(Item::Text(text.to_string()));
            }
            break;
        };
        let mut text = &rest[..open];
        if trim_next {
            text = text.trim_start_matches(is_space);
        }
        let mut inner_start = open + 2;
        let after = &rest[inner_start..];
        let left_trim = after.starts_with('-') && after[1..].starts_with(is_space);
        if left_trim {
            text = text.trim_end_matches(is_space);
            inner_start += 2;
        }
        if !text.is_empty() {
            items.push(Item::Text(text.to_string()));
        }
        let body = &rest[inner_start..];
        // Comments: `/* ... */` directly after the delimiter (or its trim marker).
        if body.starts_with("/*") {
            let Some(end) = body.find("*/") else {
                return Err("unclosed comment".into());
            };
            let tail = &body[end + 2..];
            if let Some(t) = tail.strip_prefix("}}") {
                trim_next = false;
                rest = t;
            } else if tail.starts_with(is_space) && tail[1..].starts_with("-}}") {
                trim_next = true;
                rest = &tail[4..];
            } else {
                return Err("comment ends before closing delimiter".into());
            }
            continue;
        }
        let offset = src.len() - body.len();
        let delim = src.len() - rest.len() + open;
        let close = match find_close(body, 0) {
            Ok(c) => c,
            Err((at, err)) => {
                items.push(Item::Broken(Broken {
                    body: body.to_string(),
                    off: offset,
                    delim,
                    err,
                    err_at: offset + at,
                }));
                break;
            }
        };
        let mut inner_text = &body[..close];
        trim_next = false;
        if inner_text.ends_with('-') && inner_text[..inner_text.len() - 1].ends_with(is_space) {
            inner_text = &inner_text[..inner_text.len() - 1];
            trim_next = true;
        }
        items.push(Item::Action(inner_text.to_string(), offset, delim));
        rest = &body[close + 2..];
    }
    Ok(items)
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// Finds the closing `}}` of an action, skipping quoted strings; an
/// error has the byte offset Go's lexer gives it (where the string starts,
/// or the end).
fn find_close(body: &str, from: usize) -> Result<usize, (usize, String)> {
    let b = body.as_bytes();
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    if b[i.min(b.len() - 1)] == b'\n' {
                        return Err((start, "unterminated quoted string".into()));
                    }
                    i += 1;
                }
                if i >= b.len() {
                    return Err((start, "unterminated quoted string".into()));
                }
            }
            b'`' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'`' {
                    i += 1;
                }
                if i >= b.len() {
                    return Err((start, "unterminated raw quoted string".into()));
                }
            }
            b'\'' => {
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'}' if b.get(i + 1) == Some(&b'}') => return Ok(i),
            _ => {}
        }
        i += 1;
    }
    Err((b.len(), "unclosed action".into()))
}

/// A token and the byte range of its text.
type Spanned = (Tok, usize, usize);

fn lex(src: &str) -> Result<Vec<Spanned>, String> {
    let mut out = Vec::new();
    lex_partial(src, &mut out).map(|()| out).map_err(|(_, e)| e)
}

/// Lexes into `out`, which keeps the tokens before an error; an error has
/// the byte offset of the token it was met at.
fn lex_partial(src: &str, out: &mut Vec<Spanned>) -> Result<(), (usize, String)> {
    let chars: Vec<char> = src.chars().collect();
    let byte_at: Vec<usize> = src
        .char_indices()
        .map(|(b, _)| b)
        .chain(std::iter::once(src.len()))
        .collect();
    let mut toks = Vec::new();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    let err = |start: usize, e: String| (byte_at[start], e);
    let ident_char = |c: char| c == '_' || c.is_alphanumeric();
    let read_fields = |i: &mut usize, chars: &[char]| -> Vec<String> {
        let mut fields = Vec::new();
        while *i < chars.len()
            && chars[*i] == '.'
            && chars.get(*i + 1).is_some_and(|c| ident_char(*c))
        {
            *i += 1;
            let s = *i;
            while *i < chars.len() && ident_char(chars[*i]) {
                *i += 1;
            }
            fields.push(chars[s..*i].iter().collect());
        }
        fields
    };
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        match c {
            ' ' | '\t' | '\r' | '\n' => i += 1,
            '(' => {
                toks.push(Tok::LParen);
                i += 1;
            }
            ')' => {
                i += 1;
                let f = read_fields(&mut i, &chars);
                toks.push(Tok::RParen(f));
            }
            '|' => {
                toks.push(Tok::Pipe);
                i += 1;
            }
            ',' => {
                toks.push(Tok::Comma);
                i += 1;
            }
            ':' if chars.get(i + 1) == Some(&'=') => {
                toks.push(Tok::Declare);
                i += 2;
            }
            '=' => {
                toks.push(Tok::Assign);
                i += 1;
            }
            '.' if chars
                .get(i + 1)
                .is_some_and(|c| ident_char(*c) && !c.is_ascii_digit()) =>
            {
                let f = read_fields(&mut i, &chars);
                toks.push(Tok::Field(f));
            }
            '.' if !chars.get(i + 1).is_some_and(char::is_ascii_digit) => {
                toks.push(Tok::Dot);
                i += 1;
            }
            '$' => {
                let s = i;
                i += 1;
                while i < chars.len() && ident_char(chars[i]) {
                    i += 1;
                }
                let name: String = chars[s..i].iter().collect();
                let f = read_fields(&mut i, &chars);
                toks.push(Tok::Var(name, f));
            }
            '"' => {
                i += 1;
                let mut s = String::new();
                loop {
                    let Some(&c) = chars.get(i) else {
                        return Err(err(start, "unterminated quoted string".into()));
                    };
                    i += 1;
                    match c {
                        '"' => break,
                        '\\' => {
                            let (ch, n) = unescape(&chars[i..]).map_err(|e| err(start, e))?;
                            s.push_str(&ch);
                            i += n;
                        }
                        c => s.push(c),
                    }
                }
                toks.push(Tok::Str(s));
            }
            '`' => {
                i += 1;
                let s = i;
                while i < chars.len() && chars[i] != '`' {
                    i += 1;
                }
                if i >= chars.len() {
                    return Err(err(start, "unterminated raw quoted string".into()));
                }
                toks.push(Tok::Str(chars[s..i].iter().collect()));
                i += 1;
            }
            '\'' => {
                i += 1;
                let (ch, n) = if chars.get(i) == Some(&'\\') {
                    let (s, n) = unescape(&chars[i + 1..]).map_err(|e| err(start, e))?;
                    (s, n + 1)
                } else {
                    (chars.get(i).map(ToString::to_string).unwrap_or_default(), 1)
                };
                i += n;
                if chars.get(i) != Some(&'\'') {
                    return Err(err(start, "malformed character constant".into()));
                }
                i += 1;
                let code = ch.chars().next().map_or(0, |c| i64::from(u32::from(c)));
                toks.push(Tok::Int(code));
            }
            c if c.is_ascii_digit()
                || ((c == '-' || c == '+' || c == '.')
                    && chars.get(i + 1).is_some_and(char::is_ascii_digit)) =>
            {
                let s = i;
                i += 1;
                while i < chars.len()
                    && (chars[i].is_ascii_alphanumeric()
                        || chars[i] == '.'
                        || chars[i] == '_'
                        || ((chars[i] == '-' || chars[i] == '+')
                            && matches!(chars[i - 1], 'e' | 'E' | 'p' | 'P')))
                {
                    i += 1;
                }
                let text: String = chars[s..i].iter().collect();
                toks.push(number(&text).map_err(|e| err(start, e))?);
            }
            c if ident_char(c) => {
                let s = i;
                while i < chars.len() && ident_char(chars[i]) {
                    i += 1;
                }
                toks.push(Tok::Ident(chars[s..i].iter().collect()));
            }
            // Go's lexer emits a printable ASCII character it does not know
            // as an `itemChar`, which the parser meets where an operand may
            // end (`Tree.command`); anything else it refuses itself.
            c if c.is_ascii_graphic() => {
                return Err(err(
                    start,
                    format!(
                        "unexpected {} in operand",
                        crate::go::quote::go_quote(&c.to_string())
                    ),
                ))
            }
            c if c.is_control() => {
                return Err(err(
                    start,
                    format!("unrecognized character in action: U+{:04X}", u32::from(c)),
                ))
            }
            c => {
                return Err(err(
                    start,
                    format!(
                        "unrecognized character in action: U+{:04X} '{c}'",
                        u32::from(c)
                    ),
                ))
            }
        }
        while spans.len() < toks.len() {
            let span = (byte_at[start], byte_at[i.min(chars.len())]);
            spans.push(span);
            out.push((toks[spans.len() - 1].clone(), span.0, span.1));
        }
    }
    Ok(())
}

fn unescape(rest: &[char]) -> Result<(String, usize), String> {
    let Some(&c) = rest.first() else {
        return Err("unterminated escape".into());
    };
    let simple = match c {
        'n' => Some('\n'),
        't' => Some('\t'),
        'r' => Some('\r'),
        '\\' => Some('\\'),
        '"' => Some('"'),
        '\'' => Some('\''),
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        'f' => Some('\u{c}'),
        'v' => Some('\u{b}'),
        _ => None,
    };
    if let Some(s) = simple {
        return Ok((s.to_string(), 1));
    }
    // `strconv.UnquoteChar`: `\xHH` and the octal `\NNN` are one byte each,
    // `\u` and `\U` a code point.
    let code = |digits: &[char], radix: u32| -> Result<u32, String> {
        let text: String = digits.iter().collect();
        u32::from_str_radix(&text, radix).map_err(|_| "invalid syntax".to_string())
    };
    let byte = |value: u32, len: usize| -> Result<(String, usize), String> {
        match u8::try_from(value) {
            Ok(b) if b.is_ascii() => Ok((char::from(b).to_string(), len)),
            // Go puts the raw byte in the string, which is then not UTF-8.
            _ => Err(format!("the escape of byte {value:#x} is not supported by gitops-lint (Go writes the raw byte, which is not UTF-8)")),
        }
    };
    let digits = |n: usize| rest.get(1..=n).ok_or_else(|| "invalid syntax".to_string());
    match c {
        'x' => byte(code(digits(2)?, 16)?, 3),
        '0'..='7' => {
            let all = rest.get(..3).ok_or_else(|| "invalid syntax".to_string())?;
            let v = code(all, 8)?;
            if v > 255 {
                return Err("invalid syntax".into());
            }
            byte(v, 3)
        }
        'u' | 'U' => {
            let n = if c == 'u' { 4 } else { 8 };
            let ch = char::from_u32(code(digits(n)?, 16)?).ok_or("invalid syntax")?;
            Ok((ch.to_string(), n + 1))
        }
        _ => Err(format!("unknown escape sequence \\{c}")),
    }
}

fn number(text: &str) -> Result<Tok, String> {
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    let (neg, body) = match clean.strip_prefix('-') {
        Some(b) => (true, b.to_string()),
        None => (false, clean.trim_start_matches('+').to_string()),
    };
    let lower = body.to_ascii_lowercase();
    let int = if let Some(h) = lower.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(o) = lower.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()
    } else if let Some(b) = lower.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()
    } else if lower.len() > 1 && lower.starts_with('0') && lower.chars().all(|c| c.is_ascii_digit())
    {
        i64::from_str_radix(&lower[1..], 8).ok()
    } else {
        lower.parse::<i64>().ok()
    };
    if let Some(i) = int {
        return Ok(Tok::Int(if neg { -i } else { i }));
    }
    let float = match lower.strip_prefix("0x") {
        Some(h) => hex_float(h),
        None => lower.parse::<f64>().ok(),
    };
    match float {
        Some(f) => Ok(Tok::Float(if neg { -f } else { f })),
        None => Err(format!("bad number syntax: {text:?}")),
    }
}

/// `strconv.ParseFloat` of a hexadecimal float after its `0x`: hex digits
/// with at most one point, and the `p` exponent Go requires
/// (`0x1p60` is 2⁶⁰, `0x1.8p1` is 3).
fn hex_float(h: &str) -> Option<f64> {
    let (mantissa, exp) = h.split_once('p')?;
    let exp: i32 = exp.parse().ok()?;
    let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    let mut value = 0f64;
    for c in whole.chars().chain(frac.chars()) {
        value = value * 16.0 + f64::from(c.to_digit(16)?);
    }
    let shift = i32::try_from(frac.len()).ok()?.checked_mul(4)?;
    Some(value * 2f64.powi(exp.checked_sub(shift)?))
}

struct Parser<'k> {
    items: Vec<Item>,
    pos: usize,
    depth: usize,
    /// `define`, `template` and `block` are allowed (a template set).
    sets: bool,
    defines: Vec<(String, List)>,
    /// Byte offset of the action being parsed, for error locations.
    at: usize,
    /// Checks a function name as the parser meets it (template sets).
    known: Known<'k>,
    /// The source and its name, for where a lexer's error says its action
    /// started.
    src: &'k str,
    name: &'k str,
    /// Byte offset of the current action's left delimiter.
    delim: usize,
}

/// What tells the parser whether a function name is defined.
pub(crate) type Known<'k> = Option<&'k dyn Fn(&str) -> Result<(), String>>;

/// Deepest nesting of control actions or parentheses accepted (Go's parser
/// has a similar bound); keeps hostile templates from exhausting the stack.
const MAX_NESTING: usize = 100;

impl Parser<'_> {
    /// Parses nodes until `{{end}}`, `{{else ...}}` or the end; returns the
    /// list and the terminating keyword line (`end`, `else`, `else if x`).
    fn list(&mut self) -> Result<(List, Option<String>), String> {
        let mut out = Vec::new();
        while self.pos < self.items.len() {
            let idx = self.pos;
            self.pos += 1;
            let (action, base) = match &self.items[idx] {
                Item::Text(t) => {
                    out.push(Node::Text(t.clone()));
                    continue;
                }
                Item::Action(a, off, delim) => {
                    self.delim = *delim;
                    let lead = a.len() - a.trim_start_matches(is_space).len();
                    (a.trim_matches(is_space).to_string(), off + lead)
                }
                Item::Broken(b) => {
                    let b = Broken {
                        body: b.body.clone(),
                        err: b.err.clone(),
                        ..*b
                    };
                    return Err(self.broken(b));
                }
            };
            self.at = base;
            let (kw, rest) = split_keyword(&action);
            let rest_base = base + action.len() - rest.len();
            match kw {
                "end" | "else" => return Ok((out, Some(action))),
                "if" | "range" | "with" => {
                    let node = self.control(kw, rest, rest_base)?;
                    out.push(node);
                }
                "break" => out.push(Node::Break),
                "continue" => out.push(Node::Continue),
                "define" | "template" | "block" if !self.sets => {
                    return Err(format!(
                        "`{kw}` actions are not supported in ApplicationSet templates"
                    ))
                }
                "template" => {
                    let (name, pipe) = self.template_args(kw, rest, rest_base)?;
                    out.push(Node::Template(TemplateCall {
                        name,
                        pipe,
                        pos: base,
                        text: format!("{{{{{action}}}}}"),
                    }));
                }
                "define" | "block" => {
                    // Go's parser takes `define` only at the top level
                    // (text/template/parse `Tree.parse`).
                    if kw == "define" && self.depth > 0 {
                        return Err("unexpected <define> in command".into());
                    }
                    let (name, pipe) = self.template_args(kw, rest, rest_base)?;
                    if kw == "define" && pipe.is_some() {
                        return Err("unexpected pipeline in define clause".into());
                    }
                    self.depth += 1;
                    let body = self.list();
                    self.depth -= 1;
                    let (body, end) = body?;
                    match end.as_deref().map(split_keyword) {
                        Some(("end", r)) if r.trim().is_empty() => {}
                        Some(_) => {
                            return Err(format!(
                                "unexpected {{{{{}}}}} in {kw} clause",
                                end.unwrap_or_default()
                            ))
                        }
                        None => return Err(format!("unexpected EOF in {kw} clause")),
                    }
                    self.defines.push((name.clone(), body));
                    if kw == "block" {
                        out.push(Node::Template(TemplateCall {
                            name,
                            pipe,
                            pos: base,
                            text: format!("{{{{{action}}}}}"),
                        }));
                    }
                }
                _ => {
                    if action.is_empty() {
                        return Err("missing value for command".into());
                    }
                    out.push(Node::Action(self.pipeline(&action, base)?));
                }
            }
        }
        Ok((out, None))
    }

    fn control(&mut self, kw: &str, rest: &str, base: usize) -> Result<Node, String> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(format!("actions nested more than {MAX_NESTING} deep"));
        }
        let r = self.control_inner(kw, rest, base);
        self.depth -= 1;
        r
    }

    fn control_inner(&mut self, kw: &str, rest: &str, base: usize) -> Result<Node, String> {
        let pipe = self.pipeline(rest, base)?;
        if pipe.cmds.is_empty() {
            return Err(format!("missing value for {kw}"));
        }
        let (body, end) = self.list()?;
        let end = end.ok_or_else(|| format!("unexpected EOF: `{kw}` has no `end`"))?;
        let (ekw, erest) = split_keyword(&end);
        let else_list = if ekw == "end" {
            Vec::new()
        } else {
            // `else`, `else if ...`, `else with ...`
            let (k2, r2) = split_keyword(erest);
            // Offsets inside an `{{else if}}` are not kept: its errors are
            // located at the `else` action.
            let r2_base = self.at;
            if k2.is_empty() {
                let (l, e2) = self.list()?;
                match e2.as_deref().map(split_keyword) {
                    Some(("end", _)) => l,
                    _ => {
                        return Err(format!(
                            "expected end; found {}",
                            e2.unwrap_or_else(|| "EOF".into())
                        ))
                    }
                }
            } else if (k2 == "if" && kw == "if") || (k2 == "with" && kw == "with") {
                // `{{else if}}` chains share the outer `{{end}}`.
                vec![self.control(k2, r2, r2_base)?]
            } else {
                return Err(format!("unexpected `else {k2}` in {kw}"));
            }
        };
        Ok(match kw {
            "if" => Node::If(pipe, body, else_list),
            "range" => Node::Range(pipe, body, else_list),
            _ => Node::With(pipe, body, else_list),
        })
    }
}

fn split_keyword(action: &str) -> (&str, &str) {
    let a = action.trim_start_matches(is_space);
    let end = a
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(a.len());
    let kw = &a[..end];
    match kw {
        "if" | "range" | "with" | "else" | "end" | "break" | "continue" | "define" | "template"
        | "block" => (kw, &a[end..]),
        _ => ("", a),
    }
}

impl Parser<'_> {
    /// The name (a string literal) and optional pipeline of a `template`,
    /// `define` or `block` action.
    fn template_args(
        &mut self,
        kw: &str,
        rest: &str,
        base: usize,
    ) -> Result<(String, Option<Pipe>), String> {
        let spanned = lex(rest)?;
        let Some((Tok::Str(name), _, end)) = spanned.first().cloned() else {
            return Err(format!("unexpected {} in {kw} clause", rest.trim()));
        };
        let tail = &rest[end..];
        if tail.trim().is_empty() {
            return Ok((name, None));
        }
        let p = self.pipeline(tail, base + end)?;
        Ok((name, Some(p)))
    }

    /// The error of an action the lexer cannot close: a function not
    /// defined or a character no operand may hold at a token before the
    /// lexer's error comes first, as Go's parser reads tokens as the lexer
    /// emits them.
    fn broken(&mut self, b: Broken) -> String {
        let Broken {
            body,
            off,
            delim,
            err,
            err_at,
        } = b;
        self.delim = delim;
        let body = body.as_str();
        let lead = body.len() - body.trim_start_matches(is_space).len();
        let (kw, rest) = split_keyword(&body[lead..]);
        let (text, base) = if kw.is_empty() {
            (&body[lead..], off + lead)
        } else {
            (rest, off + body.len() - rest.len())
        };
        let mut spanned = Vec::new();
        let lexed = lex_partial(text, &mut spanned);
        spanned.retain(|t| base + t.1 < err_at);
        if let Some(known) = self.known {
            for (t, a, _) in &spanned {
                if let Tok::Ident(id) = t {
                    if !matches!(id.as_str(), "true" | "false" | "nil") {
                        if let Err(e) = known(id) {
                            self.at = base + a;
                            return e;
                        }
                    }
                }
            }
        }
        match lexed {
            Err((at, e)) if base + at < err_at => {
                self.at = base + at;
                self.located(e)
            }
            _ => {
                self.at = err_at;
                self.located(err)
            }
        }
    }

    /// A lexer's error (Go's `itemError`) at `self.at`: one on another line
    /// than its action's left delimiter says where that action started
    /// (text/template/parse `Tree.unexpected`).
    fn located(&self, e: String) -> String {
        let lexers = [
            "unterminated",
            "unclosed",
            "unrecognized character",
            "malformed character",
        ];
        if self.name.is_empty() || !lexers.iter().any(|p| e.starts_with(p)) {
            return e;
        }
        let line = |at: usize| 1 + self.src.get(..at).unwrap_or(self.src).matches('\n').count();
        let started = line(self.delim);
        if line(self.at) == started {
            e
        } else if e.ends_with(" action") {
            format!("{e} started at {}:{started}", self.name)
        } else {
            format!("{e} in action started at {}:{started}", self.name)
        }
    }

    /// Parses one pipeline (the text inside an action); `base` is the byte
    /// offset of `src` in the template's source.
    fn pipeline(&mut self, src: &str, base: usize) -> Result<Pipe, String> {
        let mut spanned = Vec::new();
        let lexed = lex_partial(src, &mut spanned);
        if let Some(known) = self.known {
            for (t, a, _) in &spanned {
                if let Tok::Ident(id) = t {
                    if !matches!(id.as_str(), "true" | "false" | "nil") {
                        if let Err(e) = known(id) {
                            self.at = base + a;
                            return Err(e);
                        }
                    }
                }
            }
        }
        if let Err((at, e)) = lexed {
            self.at = base + at;
            return Err(self.located(e));
        }
        pipeline(src, base, &spanned)
    }
}

/// Parses one lexed pipeline.
fn pipeline(src: &str, base: usize, spanned: &[Spanned]) -> Result<Pipe, String> {
    let toks: Vec<Tok> = spanned.iter().map(|(t, _, _)| t.clone()).collect();
    let spans: Vec<(usize, usize)> = spanned.iter().map(|(_, a, b)| (*a, *b)).collect();
    let mut pos = 0;
    let cx = Cx {
        src,
        base,
        spans: &spans,
    };
    let p = parse_pipe(&toks, &mut pos, &cx, 0)?;
    if pos != toks.len() {
        return Err(format!("unexpected {:?} in {src:?}", toks[pos]));
    }
    Ok(p)
}

/// Where a pipeline's tokens come from.
struct Cx<'a> {
    src: &'a str,
    base: usize,
    spans: &'a [(usize, usize)],
}

fn parse_pipe(toks: &[Tok], pos: &mut usize, cx: &Cx, depth: usize) -> Result<Pipe, String> {
    let src = cx.src;
    if depth > MAX_NESTING {
        return Err(format!("parentheses nested more than {MAX_NESTING} deep"));
    }
    let top = depth == 0;
    let mut vars = Vec::new();
    let mut assign = false;
    // Declarations: `$x :=`, `$x =`, `$i, $v :=`.
    let mut look = *pos;
    let mut names = Vec::new();
    while let Some(Tok::Var(name, fields)) = toks.get(look) {
        if !fields.is_empty() {
            break;
        }
        names.push(name.clone());
        look += 1;
        match toks.get(look) {
            Some(Tok::Comma) if names.len() == 1 => look += 1,
            Some(Tok::Declare) => {
                vars = names;
                *pos = look + 1;
                break;
            }
            Some(Tok::Assign) => {
                vars = names;
                assign = true;
                *pos = look + 1;
                break;
            }
            _ => break,
        }
    }
    let mut cmds = Vec::new();
    let mut args = Vec::new();
    let mut poss = Vec::new();
    let mut texts = Vec::new();
    while let Some(t) = toks.get(*pos) {
        let (start, end) = cx.spans.get(*pos).copied().unwrap_or((0, 0));
        if !matches!(t, Tok::Pipe | Tok::RParen(_)) {
            // Go places a field chain at its second segment (`.a.b` at
            // `.b`) and a variable with fields at its first field
            // (text/template/parse `Tree.operand`, `newChain`).
            let at = match t {
                Tok::Field(f) if f.len() > 1 => start + 1 + f[0].len(),
                Tok::Var(n, f) if !f.is_empty() => start + n.len(),
                _ => start,
            };
            poss.push(cx.base + at);
            texts.push(src.get(start..end).unwrap_or_default().to_string());
        }
        match t {
            Tok::Pipe => {
                if args.is_empty() {
                    return Err("missing command before `|`".into());
                }
                cmds.push(Cmd {
                    args: std::mem::take(&mut args),
                    pos: std::mem::take(&mut poss),
                    texts: std::mem::take(&mut texts),
                });
                *pos += 1;
            }
            Tok::RParen(_) if !top => break,
            Tok::LParen => {
                *pos += 1;
                let inner = parse_pipe(toks, pos, cx, depth + 1)?;
                let Some(Tok::RParen(fields)) = toks.get(*pos) else {
                    return Err("unclosed left paren".into());
                };
                let close = cx.spans.get(*pos).map_or(end, |s| s.1);
                if let Some(t) = texts.last_mut() {
                    *t = src.get(start..close).unwrap_or_default().to_string();
                }
                *pos += 1;
                args.push(Arg::Sub(Box::new(inner), fields.clone()));
            }
            Tok::Field(f) => {
                args.push(Arg::Field(f.clone()));
                *pos += 1;
            }
            Tok::Var(n, f) => {
                args.push(Arg::Var(n.clone(), f.clone()));
                *pos += 1;
            }
            Tok::Dot => {
                args.push(Arg::Dot);
                *pos += 1;
            }
            Tok::Str(s) => {
                args.push(Arg::Str(s.clone()));
                *pos += 1;
            }
            Tok::Int(i) => {
                args.push(Arg::Int(*i));
                *pos += 1;
            }
            Tok::Float(f) => {
                args.push(Arg::Float(*f));
                *pos += 1;
            }
            Tok::Ident(id) => {
                args.push(match id.as_str() {
                    "true" => Arg::Bool(true),
                    "false" => Arg::Bool(false),
                    "nil" => Arg::Nil,
                    _ => Arg::Ident(id.clone()),
                });
                *pos += 1;
            }
            other => return Err(format!("unexpected {other:?} in {src:?}")),
        }
    }
    // A `|` right before the closing delimiter or parenthesis ends the
    // pipeline with no command after it, which Go accepts (`Tree.command`
    // stops at the pipe; `pipeline` then meets the end): `{{ x | }}`.
    if !args.is_empty() {
        cmds.push(Cmd {
            args,
            pos: poss,
            texts,
        });
    }
    if cmds.is_empty() && !vars.is_empty() {
        return Err("missing value for declaration".into());
    }
    Ok(Pipe {
        vars,
        assign,
        cmds,
        text: src.trim().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_markers_eat_whitespace() {
        let l = parse("a  {{- .x -}}  b").expect("parses");
        assert!(matches!(&l[0], Node::Text(t) if t == "a"));
        assert!(matches!(&l[2], Node::Text(t) if t == "b"));
    }

    #[test]
    fn comments_vanish_and_negative_numbers_are_not_trim_markers() {
        let l = parse("x{{/* hi */}}y{{-3}}").expect("parses");
        assert_eq!(l.len(), 3);
        let Node::Action(p) = &l[2] else {
            panic!("action")
        };
        assert!(matches!(p.cmds[0].args[0], Arg::Int(-3)));
    }

    #[test]
    fn else_if_chains_share_one_end() {
        let l = parse("{{if .a}}A{{else if .b}}B{{else}}C{{end}}").expect("parses");
        let Node::If(_, _, els) = &l[0] else {
            panic!("if")
        };
        assert!(matches!(&els[0], Node::If(..)));
    }

    #[test]
    fn syntax_errors_are_reported() {
        assert!(parse("{{if .a}}x").is_err());
        assert!(parse("{{ .a ").is_err());
        assert!(parse("{{ \"abc }}").is_err());
        assert!(parse("{{define \"x\"}}{{end}}").is_err());
        assert!(parse(&format!(
            "{}{}",
            "{{if .a}}".repeat(5000),
            "{{end}}".repeat(5000)
        ))
        .is_err());
        assert!(parse(&format!(
            "{{{{{}.a{}}}}}",
            "(".repeat(5000),
            ")".repeat(5000)
        ))
        .is_err());
    }
}
