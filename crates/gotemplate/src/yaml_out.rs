//! `toYaml`: values emitted the way `sigs.k8s.io/yaml.Marshal` does, with
//! the go-yaml v2 fork it carries (`goyaml.v2` of sigs.k8s.io/yaml v1.4.0,
//! as helm v3.17.1 vendors it). The block part of go-yaml's `emitterc.go`
//! is followed function by function: keys in go-yaml's natural order,
//! sequences not indented under their key, strings quoted only when they
//! would otherwise read as another type or break the syntax
//! (`yaml_emitter_analyze_scalar`, `yaml_emitter_select_scalar_style`),
//! multi-line strings as literal blocks, keys longer than 128 bytes or
//! with a line break written `? key`.
//!
//! Plain and quoted scalars are folded at a space once the line is past
//! column 80 (`best_width`; go-yaml counts one column per character), the
//! text going on at the scalar's indentation: two more than the keys of its
//! mapping or the `- ` of its sequence, 2 at the top level. Literal blocks
//! and simple keys are not folded.
//!
//! Not modelled: the JSON round trip before the emitter (`json.Marshal`,
//! then go-yaml's parser). It folds a U+0085 line break into a space, and a
//! character go-yaml's reader refuses (U+007F, the other C1 controls,
//! U+FFFE, U+FFFF) makes Helm's `toYaml` print nothing.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::value::V;

/// Serialises `v` as YAML, ending in a newline.
#[must_use]
pub(crate) fn to_yaml(v: &V) -> String {
    // `yaml_emitter_emit_stream_start`, the root node, then
    // `yaml_emitter_emit_document_end`'s closing `yaml_emitter_write_indent`.
    let mut e = Emitter {
        out: String::new(),
        column: 0,
        indent: -1,
        whitespace: true,
        indention: true,
    };
    e.node(v, false, false);
    e.write_indent();
    e.out
}

/// Helm's `toYAML`: [`to_yaml`] less one final newline
/// (`strings.TrimSuffix`), so a `|+` block keeps the others.
#[must_use]
pub fn helm_to_yaml(v: &V) -> String {
    let mut out = to_yaml(v);
    if out.ends_with('\n') {
        out.pop();
    }
    out
}

/// An upper bound on the length of [`to_yaml`]'s text: [`V::printed_bound`],
/// and one more indented line for each space (folding may break there) and
/// two for each key written `? key`.
#[must_use]
pub(crate) fn printed_bound(v: &V) -> usize {
    fn line(depth: usize) -> usize {
        depth.saturating_mul(2).saturating_add(4)
    }
    fn spaces(s: &str, depth: usize) -> usize {
        s.bytes()
            .filter(|b| *b == b' ')
            .count()
            .saturating_mul(line(depth))
    }
    fn walk(v: &V, depth: usize) -> usize {
        match v {
            V::Str(s) => spaces(s, depth),
            V::List(l) => l
                .iter()
                .fold(0, |n, e| n.saturating_add(walk(e, depth + 1))),
            V::Map(m) => m.entries().iter().fold(0, |n, (k, e)| {
                let complex = k.len() > SIMPLE_KEY_MAX || k.chars().any(is_break);
                n.saturating_add(spaces(k, depth))
                    .saturating_add(if complex {
                        line(depth).saturating_mul(2)
                    } else {
                        0
                    })
                    .saturating_add(walk(e, depth + 1))
            }),
            _ => 0,
        }
    }
    v.printed_bound().saturating_add(walk(v, 0))
}

/// go-yaml v2's key order: letters after other characters, digit runs compared as numbers.
fn key_less(a: &str, b: &str) -> Ordering {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return if bl {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (mut an, mut bn) = (0i128, 0i128);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an
                .saturating_mul(10)
                .saturating_add(i128::from(ar[ai] as u8 - b'0'));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn
                .saturating_mul(10)
                .saturating_add(i128::from(br[bi] as u8 - b'0'));
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

/// go-yaml's `best_width`: a plain or quoted scalar is folded at a space
/// once its line has gone past this column.
const BEST_WIDTH: usize = 80;

/// go-yaml's `best_indent`.
const BEST_INDENT: isize = 2;

/// go-yaml's `yaml_emitter_check_simple_key`: a key of more bytes is written `? key`.
const SIMPLE_KEY_MAX: usize = 128;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

/// What `yaml_emitter_analyze_scalar` learns of a scalar's text.
#[allow(clippy::struct_excessive_bools)] // go-yaml's `scalar_data` flags, one bool each
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

/// go-yaml's `is_printable`, for one character (what it allows of UTF-8:
/// nothing beyond U+FFFF, so emoji are escaped).
fn is_printable(c: char) -> bool {
    matches!(c, '\n' | ' '..='~' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
        && c != '\u{FEFF}'
}

/// go-yaml's `is_break`.
fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// go-yaml's `is_blankz`: blank, break or NUL.
fn is_blankz(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\0') || is_break(c)
}

/// `yaml_emitter_analyze_scalar`.
fn analyze(s: &[char]) -> Analysis {
    if s.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = s.starts_with(&['-', '-', '-']) || s.starts_with(&['.', '.', '.']);
    let (mut line_breaks, mut special) = (false, false);
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;
    for (i, &c) in s.iter().enumerate() {
        let last = i + 1 == s.len();
        let followed_by_whitespace = s.get(i + 1).is_none_or(|&n| n == ' ' || n == '\t');
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' | '-' if followed_by_whitespace => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_whitespace => block_indicators = true,
                '#' if preceded_by_whitespace => block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(c) {
            special = true;
        }
        if c == ' ' {
            leading_space |= i == 0;
            trailing_space |= last;
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            leading_break |= i == 0;
            trailing_break |= last;
            space_break |= previous_space;
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = is_blankz(c);
    }
    Analysis {
        multiline: line_breaks,
        block_plain_allowed: !(leading_space
            || leading_break
            || trailing_space
            || trailing_break
            || break_space
            || space_break
            || special
            || line_breaks
            || block_indicators),
        single_quoted_allowed: !(break_space || space_break || special),
        block_allowed: !(trailing_space || space_break || special),
    }
}

/// The style go-yaml v2's encoder asks for a string (`encoder.stringv`).
fn requested_style(s: &str) -> Style {
    if s.contains('\n') {
        Style::Literal
    } else if resolves_non_string(s) {
        Style::DoubleQuoted
    } else {
        Style::Plain
    }
}

/// `yaml_emitter_select_scalar_style` (block context, no tags).
fn select_style(requested: Style, a: &Analysis, empty: bool, simple_key: bool) -> Style {
    let mut style = requested;
    if simple_key && a.multiline {
        style = Style::DoubleQuoted;
    }
    if style == Style::Plain && (!a.block_plain_allowed || (empty && simple_key)) {
        style = Style::SingleQuoted;
    }
    if style == Style::SingleQuoted && !a.single_quoted_allowed {
        style = Style::DoubleQuoted;
    }
    if style == Style::Literal && (!a.block_allowed || simple_key) {
        style = Style::DoubleQuoted;
    }
    style
}

/// The text of a non-string scalar, written plain.
fn scalar_text(v: &V) -> String {
    match v {
        V::Bool(b) => b.to_string(),
        V::Int(i) | V::Int64(i) => i.to_string(),
        // sigs.k8s.io/yaml's `Marshal` writes JSON first (`encoding/json`:
        // a whole float below 1e21 as its shortest digits, no exponent) and
        // reads it back with go-yaml v2, which takes those digits as an
        // int or a uint64 where one fits (`resolve`), else as a float it
        // writes with `%g` (`encode.go` `floatv`): helm prints 1.2345678901234567e19
        // as 12345678901234567000 and 2e20 as 2e+20.
        V::Float(f) if f.fract() == 0.0 && f.abs() < 1e21 => {
            let digits = format!("{f}");
            match (digits.parse::<i64>(), digits.parse::<u64>()) {
                (Ok(i), _) => i.to_string(),
                (_, Ok(u)) => u.to_string(),
                _ => super::value::format_float_g(*f),
            }
        }
        V::Float(f) => super::value::format_float_g(*f),
        _ => "null".into(),
    }
}

/// The part of go-yaml's `yaml_emitter_t` that block output reads.
/// `column` counts characters, as go-yaml's `put` and `write` do.
struct Emitter {
    out: String,
    column: usize,
    indent: isize,
    whitespace: bool,
    indention: bool,
}

impl Emitter {
    /// `put`, and `write` of one character.
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    /// `put_break`.
    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    /// `write_break`: a line break of the value itself.
    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }

    /// `yaml_emitter_write_indent`.
    fn write_indent(&mut self) {
        let indent = usize::try_from(self.indent).unwrap_or(0);
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    /// `yaml_emitter_write_indicator`.
    fn write_indicator(
        &mut self,
        s: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        for c in s.chars() {
            self.put(c);
        }
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    /// `yaml_emitter_increase_indent`.
    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT;
        }
    }

    /// `yaml_emitter_emit_node`: `mapping` is go-yaml's `mapping_context`.
    fn node(&mut self, v: &V, mapping: bool, simple_key: bool) {
        match v {
            V::Host(h) => self.node(&h.0.value(), mapping, simple_key),
            V::Map(m) if !m.is_empty() => self.block_mapping(&m.entries()),
            V::List(l) if !l.is_empty() => self.block_sequence(l, mapping),
            // An empty collection is a flow one: `yaml_emitter_emit_flow_mapping_key`.
            V::Map(_) => self.empty_flow("{", "}"),
            V::List(_) => self.empty_flow("[", "]"),
            V::Str(s) => self.scalar(s, requested_style(s), simple_key),
            V::Missing | V::Nil | V::Bool(_) | V::Int(_) | V::Int64(_) | V::Float(_) => {
                self.scalar(&scalar_text(v), Style::Plain, simple_key);
            }
        }
    }

    /// `yaml_emitter_emit_flow_sequence_item` (or `_mapping_key`) of an
    /// empty collection: `[]`, `{}`.
    fn empty_flow(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        self.write_indicator(close, false, false, false);
    }

    /// `yaml_emitter_emit_block_mapping_key` and `_value`.
    fn block_mapping(&mut self, m: &BTreeMap<String, V>) {
        let saved = self.indent;
        self.increase_indent(false, false);
        let mut entries: Vec<(&String, &V)> = m.iter().collect();
        entries.sort_by(|a, b| key_less(a.0, b.0));
        for (k, v) in entries {
            self.write_indent();
            let chars: Vec<char> = k.chars().collect();
            if k.len() <= SIMPLE_KEY_MAX && !analyze(&chars).multiline {
                self.scalar(k, requested_style(k), true);
                self.write_indicator(":", false, false, false);
            } else {
                self.write_indicator("?", true, false, true);
                self.scalar(k, requested_style(k), false);
                self.write_indent();
                self.write_indicator(":", true, false, true);
            }
            self.node(v, true, false);
        }
        self.indent = saved;
    }

    /// `yaml_emitter_emit_block_sequence_item`: a sequence that is a mapping
    /// value is not indented under its key.
    fn block_sequence(&mut self, l: &[V], mapping: bool) {
        let saved = self.indent;
        let indentless = mapping && !self.indention;
        self.increase_indent(false, indentless);
        for item in l {
            self.write_indent();
            self.write_indicator("-", true, false, true);
            self.node(item, false, false);
        }
        self.indent = saved;
    }

    /// `yaml_emitter_emit_scalar` and `yaml_emitter_process_scalar`: a
    /// simple key is never folded (`allow_breaks` is false).
    fn scalar(&mut self, s: &str, requested: Style, simple_key: bool) {
        let chars: Vec<char> = s.chars().collect();
        let style = select_style(requested, &analyze(&chars), chars.is_empty(), simple_key);
        let saved = self.indent;
        self.increase_indent(true, false);
        let allow_breaks = !simple_key;
        match style {
            Style::Plain => self.plain(&chars, allow_breaks),
            Style::SingleQuoted => self.single_quoted(&chars, allow_breaks),
            Style::DoubleQuoted => self.double_quoted(&chars, allow_breaks),
            Style::Literal => self.literal(&chars),
        }
        self.indent = saved;
    }

    /// `yaml_emitter_write_plain_scalar`: breaks at a single space once past
    /// `BEST_WIDTH`, never at the first of two spaces.
    fn plain(&mut self, s: &[char], allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        let (mut spaces, mut breaks) = (false, false);
        for (i, &c) in s.iter().enumerate() {
            if c == ' ' {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && s.get(i + 1) != Some(&' ')
                {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                self.scalar_break(c, breaks);
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    /// A line break inside a plain or single-quoted scalar: the first `\n`
    /// of a run is written as two breaks, as one alone would read back as a
    /// space.
    fn scalar_break(&mut self, c: char, after_break: bool) {
        if !after_break && c == '\n' {
            self.put_break();
        }
        self.write_break(c);
        self.indention = true;
    }

    /// `yaml_emitter_write_single_quoted_scalar`: as plain, but not at the
    /// first or last character.
    fn single_quoted(&mut self, s: &[char], allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let (mut spaces, mut breaks) = (false, false);
        for (i, &c) in s.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i != 0
                    && i + 1 != s.len()
                    && s.get(i + 1) != Some(&' ')
                {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                self.scalar_break(c, breaks);
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    /// `yaml_emitter_write_double_quoted_scalar`: breaks at the first of
    /// several spaces too, escaping the next one (`\ `) so it is kept.
    fn double_quoted(&mut self, s: &[char], allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        // go-yaml's `is_bom(value, i)` reads the value's start, not `i`: a
        // value that starts with U+FEFF is escaped character by character.
        let bom = s.first() == Some(&'\u{FEFF}');
        let mut spaces = false;
        for (i, &c) in s.iter().enumerate() {
            if !is_printable(c) || bom || is_break(c) || c == '"' || c == '\\' {
                self.escape(c);
                spaces = false;
            } else if c == ' ' {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && i != 0 && i + 1 != s.len()
                {
                    self.write_indent();
                    if s.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    /// One escape of `yaml_emitter_write_double_quoted_scalar`.
    fn escape(&mut self, c: char) {
        self.put('\\');
        let short = match c {
            '\0' => Some('0'),
            '\x07' => Some('a'),
            '\x08' => Some('b'),
            '\t' => Some('t'),
            '\n' => Some('n'),
            '\x0b' => Some('v'),
            '\x0c' => Some('f'),
            '\r' => Some('r'),
            '\x1b' => Some('e'),
            '"' => Some('"'),
            '\\' => Some('\\'),
            '\u{85}' => Some('N'),
            '\u{A0}' => Some('_'),
            '\u{2028}' => Some('L'),
            '\u{2029}' => Some('P'),
            _ => None,
        };
        if let Some(e) = short {
            self.put(e);
            return;
        }
        let v = u32::from(c);
        let hex = if v <= 0xFF {
            format!("x{v:02X}")
        } else if v <= 0xFFFF {
            format!("u{v:04X}")
        } else {
            format!("U{v:08X}")
        };
        for h in hex.chars() {
            self.put(h);
        }
    }

    /// `yaml_emitter_write_literal_scalar` with
    /// `yaml_emitter_write_block_scalar_hints`; never folded.
    fn literal(&mut self, s: &[char]) {
        self.write_indicator("|", true, false, false);
        if s.first().is_some_and(|&c| c == ' ' || is_break(c)) {
            self.write_indicator("2", false, false, false);
        }
        let chomp = match s {
            [.., last] if is_break(*last) => match s {
                [_] => Some("+"),
                [.., prev, _] if is_break(*prev) => Some("+"),
                _ => None,
            },
            _ => Some("-"),
        };
        if let Some(h) = chomp {
            self.write_indicator(h, false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for &c in s {
            if is_break(c) {
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }
}

/// Would a plain scalar with this text resolve to something other than a string?
fn resolves_non_string(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "", "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
        "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF",
        ".inf", ".Inf", ".INF", "-.inf", "-.Inf", "-.INF", "+.inf", ".nan", ".NaN", ".NAN", "<<",
    ];
    if WORDS.contains(&s) {
        return true;
    }
    // go-yaml v2's encoder quotes what its resolver reads as a timestamp.
    if goyaml::timestamp_rfc3339(s).is_some() {
        return true;
    }
    let t = s.trim_start_matches(['-', '+']).replace('_', "");
    let lower = t.to_ascii_lowercase();
    if lower.starts_with("0x") || lower.starts_with("0b") || lower.starts_with("0o") {
        return lower.len() > 2;
    }
    !t.is_empty()
        && t.chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == '.')
        && t.parse::<f64>().is_ok()
        || (t.contains(':')
            && t.split(':')
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())))
}

#[cfg(test)]
#[path = "yaml_out_tests.rs"]
mod tests;
