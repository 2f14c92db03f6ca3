//! The glob dialects Argo CD matches paths and names with. This module is
//! Argo CD's `util/glob` (AC `util/glob/glob.go` `Match`), which compiles
//! patterns with gobwas/glob v0.2.3. Every place gitops-lint models that
//! Argo CD matches with `util/glob` uses [`Glob`]; the ApplicationSet git
//! generator's dialects (`path.Match`, git pathspecs, `doublestar`) are
//! other libraries, in [`go`].
//!
//! The dialect, read from gobwas's lexer and parser (`syntax/lexer`,
//! `syntax/ast`) and its matchers (`match/`):
//!
//! - `*` matches any run of non-separator characters and `?` one
//!   non-separator character; `**` matches any run of characters. With no
//!   separators (how the directory source calls it), `*` and `**` are the
//!   same, and `/` is an ordinary character: `**/tests/**` means "contains
//!   `/tests/`", so `tests/x.yaml` does not match it, and `**/*.yaml` does not
//!   match a top-level `x.yaml`.
//! - `[abc]`, `[a-z]`, negated by `!` (never `^`, which is a literal). A class
//!   is one list or one range: `[a-z0-9]` does not compile. Classes ignore
//!   separators.
//! - `{a,b}` alternatives, nested freely; a `{` never closed still
//!   alternates up to the end of the pattern. `,` and `}` outside braces are
//!   literal.
//! - `\c` is `c`; a trailing `\` is dropped.
//!
//! A pattern that does not compile matches nothing: `Match` logs a warning
//! and returns false.

pub mod go;

/// A compiled `util/glob` pattern.
#[derive(Debug, Clone)]
pub struct Glob {
    prog: Vec<Inst>,
}

/// Why a pattern does not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GlobError {
    /// gobwas refuses it (worded after its errors): Argo CD matches nothing.
    Invalid(String),
    /// Past [`MAX_PATTERN_CHARS`] or [`MAX_BRACE_DEPTH`]: gitops-lint's
    /// limit, not Argo CD's, so what Argo CD matches is not known.
    TooLarge,
}

impl std::fmt::Display for GlobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GlobError::Invalid(why) => f.write_str(why),
            GlobError::TooLarge => write!(
                f,
                "the pattern is longer than {MAX_PATTERN_CHARS} characters or nests braces deeper than {MAX_BRACE_DEPTH} levels"
            ),
        }
    }
}

/// Longest pattern compiled: matching costs its length per character.
pub const MAX_PATTERN_CHARS: usize = 4096;

/// Deepest brace nesting compiled (compiling recurses into each level).
pub const MAX_BRACE_DEPTH: usize = 64;

impl Glob {
    /// Compiles `pattern` as `glob.Compile(pattern, separators...)` does.
    ///
    /// # Errors
    /// The pattern is malformed (an unterminated or empty class, a class
    /// mixing a range and a list, a range whose end is below its start).
    pub fn new(pattern: &str, separators: &[char]) -> Result<Glob, GlobError> {
        if pattern.chars().count() > MAX_PATTERN_CHARS {
            return Err(GlobError::TooLarge);
        }
        let tokens = lex(pattern)?;
        let mut depth = 0usize;
        for t in &tokens {
            match t {
                Token::TermsOpen => depth += 1,
                Token::TermsClose => depth = depth.saturating_sub(1),
                _ => {}
            }
            if depth > MAX_BRACE_DEPTH {
                return Err(GlobError::TooLarge);
            }
        }
        let ast = parse(&tokens)?;
        let mut prog = Vec::new();
        emit_seq(&ast, separators, &mut prog);
        prog.push(Inst::Match);
        Ok(Glob { prog })
    }

    /// Whether the whole of `text` matches.
    #[must_use]
    pub fn is_match(&self, text: &str) -> bool {
        // A Thompson simulation: linear in the text for every pattern, so a
        // hostile pattern cannot make matching exponential.
        let n = self.prog.len();
        let mut current = vec![false; n];
        let mut next = vec![false; n];
        let mut stack = Vec::new();
        add(&self.prog, 0, &mut current, &mut stack);
        for c in text.chars() {
            next.fill(false);
            let mut any = false;
            for (pc, inst) in self.prog.iter().enumerate() {
                if let (true, Inst::Char(class)) = (current[pc], inst) {
                    if class.matches(c) {
                        add(&self.prog, pc + 1, &mut next, &mut stack);
                        any = true;
                    }
                }
            }
            std::mem::swap(&mut current, &mut next);
            if !any {
                return false;
            }
        }
        current
            .iter()
            .zip(&self.prog)
            .any(|(on, inst)| *on && matches!(inst, Inst::Match))
    }
}

#[derive(Debug, Clone)]
enum Inst {
    Char(Class),
    Split(usize, usize),
    Jump(usize),
    Match,
}

#[derive(Debug, Clone)]
enum Class {
    Lit(char),
    /// Any character but the separators (`?`, and each step of `*`).
    NotSep(Vec<char>),
    /// Any character (each step of `**`).
    Any,
    List(Vec<char>, bool),
    Range(char, char, bool),
}

impl Class {
    fn matches(&self, c: char) -> bool {
        match self {
            Class::Lit(l) => *l == c,
            Class::NotSep(seps) => !seps.contains(&c),
            Class::Any => true,
            Class::List(chars, not) => chars.contains(&c) != *not,
            Class::Range(lo, hi, not) => (*lo <= c && c <= *hi) != *not,
        }
    }
}

fn add(prog: &[Inst], pc: usize, set: &mut [bool], stack: &mut Vec<usize>) {
    stack.push(pc);
    while let Some(pc) = stack.pop() {
        if set[pc] {
            continue;
        }
        set[pc] = true;
        match prog[pc] {
            Inst::Split(a, b) => {
                stack.push(b);
                stack.push(a);
            }
            Inst::Jump(a) => stack.push(a),
            Inst::Char(_) | Inst::Match => {}
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Text(String),
    Any,
    Super,
    Single,
    TermsOpen,
    Separator,
    TermsClose,
    RangeOpen,
    Not,
    RangeLo(char),
    RangeHi(char),
    RangeClose,
}

/// gobwas's lexer: the token stream, or its first error.
fn lex(pattern: &str) -> Result<Vec<Token>, GlobError> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut terms = 0usize;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '{' => {
                terms += 1;
                out.push(Token::TermsOpen);
                i += 1;
            }
            ',' if terms > 0 => {
                out.push(Token::Separator);
                i += 1;
            }
            '}' if terms > 0 => {
                terms -= 1;
                out.push(Token::TermsClose);
                i += 1;
            }
            '[' => {
                out.push(Token::RangeOpen);
                i = lex_range(&chars, i + 1, &mut out)?;
            }
            '?' => {
                out.push(Token::Single);
                i += 1;
            }
            '*' if chars.get(i + 1) == Some(&'*') => {
                out.push(Token::Super);
                i += 2;
            }
            '*' => {
                out.push(Token::Any);
                i += 1;
            }
            _ => {
                let breakers: &[char] = if terms > 0 {
                    &['?', '*', '[', '{', '}', ',']
                } else {
                    &['?', '*', '[', '{']
                };
                let (text, next) = lex_text(&chars, i, breakers);
                if !text.is_empty() {
                    out.push(Token::Text(text));
                }
                i = next;
            }
        }
    }
    Ok(out)
}

/// Reads text up to a breaker; `\` takes the next character literally and
/// is dropped at the end of the pattern.
fn lex_text(chars: &[char], mut i: usize, breakers: &[char]) -> (String, usize) {
    let mut text = String::new();
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            if let Some(&e) = chars.get(i + 1) {
                text.push(e);
            }
            i += 2;
            continue;
        }
        if breakers.contains(&c) {
            break;
        }
        text.push(c);
        i += 1;
    }
    (text, i.min(chars.len()))
}

/// The inside of a class, from just after `[`; returns the index after `]`.
fn lex_range(chars: &[char], mut i: usize, out: &mut Vec<Token>) -> Result<usize, GlobError> {
    let end = || GlobError::Invalid("unexpected end of input".into());
    let mut seen_not = false;
    loop {
        let c = *chars.get(i).ok_or_else(end)?;
        if !seen_not && c == '!' {
            out.push(Token::Not);
            seen_not = true;
            i += 1;
            continue;
        }
        if chars.get(i + 1) == Some(&'-') {
            out.push(Token::RangeLo(c));
            let hi = *chars.get(i + 2).ok_or_else(end)?;
            out.push(Token::RangeHi(hi));
            i += 3;
        } else {
            let (text, next) = lex_text(chars, i, &[']']);
            if !text.is_empty() {
                out.push(Token::Text(text));
            }
            i = next;
        }
        match chars.get(i) {
            Some(']') => {
                out.push(Token::RangeClose);
                return Ok(i + 1);
            }
            Some(_) => return Err(GlobError::Invalid("expected close range character".into())),
            None => return Err(end()),
        }
    }
}

#[derive(Debug, Clone)]
enum Node {
    Text(String),
    Any,
    Super,
    Single,
    List(Vec<char>, bool),
    Range(char, char, bool),
    AnyOf(Vec<Vec<Node>>),
}

/// gobwas's parser. Braces still open at the end close there.
fn parse(tokens: &[Token]) -> Result<Vec<Node>, GlobError> {
    // Each open brace: the sequence before it and its finished alternatives.
    let mut open: Vec<(Vec<Node>, Vec<Vec<Node>>)> = Vec::new();
    let mut seq: Vec<Node> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Text(t) => seq.push(Node::Text(t.clone())),
            Token::Any => seq.push(Node::Any),
            Token::Super => seq.push(Node::Super),
            Token::Single => seq.push(Node::Single),
            Token::TermsOpen => open.push((std::mem::take(&mut seq), Vec::new())),
            Token::Separator => {
                if let Some((_, alts)) = open.last_mut() {
                    alts.push(std::mem::take(&mut seq));
                }
            }
            Token::TermsClose => {
                if let Some((before, mut alts)) = open.pop() {
                    alts.push(std::mem::replace(&mut seq, before));
                    seq.push(Node::AnyOf(alts));
                }
            }
            Token::RangeOpen => {
                let (node, next) = parse_range(tokens, i + 1)?;
                seq.push(node);
                i = next;
                continue;
            }
            Token::Not | Token::RangeLo(_) | Token::RangeHi(_) | Token::RangeClose => {
                return Err(GlobError::Invalid(format!(
                    "unexpected token: {:?}",
                    tokens[i]
                )));
            }
        }
        i += 1;
    }
    while let Some((before, mut alts)) = open.pop() {
        alts.push(std::mem::replace(&mut seq, before));
        seq.push(Node::AnyOf(alts));
    }
    Ok(seq)
}

fn parse_range(tokens: &[Token], mut i: usize) -> Result<(Node, usize), GlobError> {
    let mut not = false;
    let mut lo = None;
    let mut hi = None;
    let mut chars = String::new();
    while let Some(t) = tokens.get(i) {
        match t {
            Token::Not => not = true,
            Token::RangeLo(c) => lo = Some(*c),
            Token::RangeHi(c) => {
                let l = lo.unwrap_or('\0');
                if *c < l {
                    return Err(GlobError::Invalid(format!(
                        "hi character '{c}' should be greater than lo '{l}'"
                    )));
                }
                hi = Some(*c);
            }
            Token::Text(t) => chars.clone_from(t),
            Token::RangeClose => {
                // gobwas takes a NUL bound for "no range".
                let range = match (lo, hi) {
                    (Some(l), Some(h)) if l != '\0' && h != '\0' => Some((l, h)),
                    _ => None,
                };
                return match (range, chars.is_empty()) {
                    (Some((l, h)), true) => Ok((Node::Range(l, h, not), i + 1)),
                    (None, false) => Ok((Node::List(chars.chars().collect(), not), i + 1)),
                    _ => Err(GlobError::Invalid("could not parse range".into())),
                };
            }
            _ => return Err(GlobError::Invalid("unexpected token in range".into())),
        }
        i += 1;
    }
    Err(GlobError::Invalid("unexpected end".into()))
}

fn emit_seq(seq: &[Node], seps: &[char], prog: &mut Vec<Inst>) {
    for node in seq {
        match node {
            Node::Text(t) => prog.extend(t.chars().map(|c| Inst::Char(Class::Lit(c)))),
            Node::Single => prog.push(Inst::Char(Class::NotSep(seps.to_vec()))),
            Node::List(chars, not) => prog.push(Inst::Char(Class::List(chars.clone(), *not))),
            Node::Range(lo, hi, not) => prog.push(Inst::Char(Class::Range(*lo, *hi, *not))),
            Node::Any | Node::Super => {
                // L: split(L+1, L+3); L+1: char; L+2: jump L; L+3: ...
                let class = if matches!(node, Node::Super) {
                    Class::Any
                } else {
                    Class::NotSep(seps.to_vec())
                };
                let l = prog.len();
                prog.push(Inst::Split(l + 1, l + 3));
                prog.push(Inst::Char(class));
                prog.push(Inst::Jump(l));
            }
            Node::AnyOf(alts) => {
                // split(a1, split(a2, ... )); every alternative jumps past the group.
                let mut jumps = Vec::new();
                for (k, alt) in alts.iter().enumerate() {
                    let last = k + 1 == alts.len();
                    let split_at = prog.len();
                    if !last {
                        prog.push(Inst::Split(split_at + 1, 0));
                    }
                    emit_seq(alt, seps, prog);
                    if !last {
                        jumps.push(prog.len());
                        prog.push(Inst::Jump(0));
                        let next = prog.len();
                        prog[split_at] = Inst::Split(split_at + 1, next);
                    }
                }
                let end = prog.len();
                for j in jumps {
                    prog[j] = Inst::Jump(end);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `util/glob.Match`: a pattern that does not compile matches nothing.
    fn is_match(pattern: &str, text: &str, separators: &[char]) -> bool {
        Glob::new(pattern, separators).is_ok_and(|g| g.is_match(text))
    }

    fn m(pattern: &str, text: &str) -> bool {
        Glob::new(pattern, &[]).unwrap().is_match(text)
    }

    fn ms(pattern: &str, text: &str) -> bool {
        Glob::new(pattern, &['/']).unwrap().is_match(text)
    }

    #[test]
    fn without_separators_stars_cross_slashes() {
        assert!(m("*.yaml", "x.yaml"));
        assert!(m("*.yaml", "a/b/x.yaml"));
        assert!(m("**/tests/**", "a/tests/x.yaml"));
        assert!(
            !m("**/tests/**", "tests/x.yaml"),
            "`**/` is literal text `/` after any run: a top-level directory does not match"
        );
        assert!(!m("**/*.yaml", "x.yaml"));
        assert!(m("**/*.yaml", "sub/x.yaml"));
        assert!(m("tests/**", "tests/a/b.yaml"));
        assert!(!m("tests/**", "tests"));
        assert!(m("a*b", "a/x/b"));
        assert!(m("?", "/"));
        assert!(!m("*.yaml", "x.yml"));
        assert!(m("*", ""));
        assert!(!m("abc", "abcd"), "the whole text must match");
    }

    #[test]
    fn with_separators_single_star_stops() {
        assert!(!ms("*.yaml", "a/x.yaml"));
        assert!(ms("*/x.yaml", "a/x.yaml"));
        assert!(ms("**.yaml", "a/b/x.yaml"));
        assert!(!ms("?", "/"));
        assert!(ms("[!a]", "/"), "classes ignore separators");
        assert!(ms("a/**", "a/b/c"));
        let dots = Glob::new("{*.acme.*,acme.*}", &['.']).unwrap();
        assert!(dots.is_match("eu.acme.io") && dots.is_match("acme.io"));
        assert!(!dots.is_match("x.eu.acme.io"));
    }

    #[test]
    fn classes() {
        assert!(m("[abc]", "b"));
        assert!(!m("[abc]", "d"));
        assert!(m("[!abc]", "d"));
        assert!(m("[a-c]", "b"));
        assert!(m("[!a-c]", "x"));
        assert!(!m("[!a-c]", "a"));
        assert!(m("[^a]", "^"), "`^` does not negate");
        assert!(!m("[^a]", "b"));
        assert!(
            m("[ab-c]", "-"),
            "a dash after the second character is literal"
        );
        assert!(!m("[ab-c]", "b-"));
        assert!(m("[\\]]", "]"));
        assert!(m("x]", "x]"));
        for bad in ["[", "[a", "[]", "[!]", "[a-z0-9]", "[z-a]", "[a-"] {
            assert!(Glob::new(bad, &[]).is_err(), "{bad} must not compile");
        }
    }

    #[test]
    fn alternatives() {
        assert!(m("{a,b}.yaml", "b.yaml"));
        assert!(!m("{a,b}.yaml", "c.yaml"));
        assert!(m("{a,{b,c}x}", "cx"), "braces nest");
        assert!(
            m("{,x}y", "y"),
            "an empty alternative matches the empty text"
        );
        assert!(m("{a*,b}", "a/z"));
        assert!(m("{a,b", "b"), "an unclosed brace alternates to the end");
        assert!(m("{a,bc", "bc"));
        assert!(m("a,b}", "a,b}"), "outside braces `,` and `}}` are literal");
        assert!(m("{legacy/*,*-test.yaml}", "x/y-test.yaml"));
    }

    #[test]
    fn escapes() {
        assert!(m("\\*", "*"));
        assert!(!m("\\*", "x"));
        assert!(m("a\\", "a"), "a trailing backslash is dropped");
        assert!(m("{a\\,b}", "a,b"));
    }

    #[test]
    fn appproject_patterns() {
        // sourceRepos pass `/` as separator: `*` stays in one segment.
        let repo = |p: &str, t: &str| is_match(p, t, &['/']);
        assert!(!repo("https://github.com/*", "https://github.com/org/repo"));
        assert!(repo("https://github.com/**", "https://github.com/org/repo"));
        assert!(repo(
            "https://github.com/org/*",
            "https://github.com/org/repo"
        ));
        // destinations and namespaces pass none.
        assert!(m("https://github.com/*", "https://github.com/org/repo"));
        assert!(m("team-?", "team-a"));
        assert!(!m("team-?", "team-ab"));
        assert!(m("{dev,stage}-*", "stage-api"));
        assert!(!m("{dev,stage}-*", "prod-api"));
        assert!(m("ns-[a-c]", "ns-b"));
        assert!(!m("ns-[!a-c]", "ns-b"));
        assert!(!m("payments", "payments-v2"));
        assert!(m("", ""));
        assert!(!m("", "x"));
        // gobwas's parser ends an unclosed `{` at the end of the pattern
        // (parserMain returns on EOF without an error).
        assert!(m("{a,b", "a"));
        // A class is one range or one list, never both: refused, no match.
        assert!(!is_match("ns-[a-cx]", "ns-b", &[]));
        assert!(m("ns-[abx]", "ns-x"));
    }

    #[test]
    fn patterns_past_the_limits_are_refused_not_misread() {
        let long = "a".repeat(MAX_PATTERN_CHARS + 1);
        assert_eq!(Glob::new(&long, &[]).unwrap_err(), GlobError::TooLarge);
        let deep = "{".repeat(MAX_BRACE_DEPTH + 1);
        assert_eq!(Glob::new(&deep, &[]).unwrap_err(), GlobError::TooLarge);
        assert!(Glob::new(&"{".repeat(MAX_BRACE_DEPTH), &[]).is_ok());
    }

    #[test]
    fn hostile_patterns_stay_linear() {
        let p = "*a".repeat(200) + "b";
        let t = "a".repeat(5000);
        assert!(!m(&p, &t));
        let p = "{a,{a,{a,{a,{a,a}}}}}".repeat(50);
        assert!(m(&p, &"a".repeat(50)));
    }
}
