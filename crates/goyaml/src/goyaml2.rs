//! A reading of YAML as go-yaml v2 (v2.4.0, the copy sigs.k8s.io/yaml
//! vendors as `goyaml.v2`) reads it: its scanner (`scannerc.go`) and its
//! parser (`parserc.go`), written anew from their behaviour.
//!
//! saphyr-parser reads the stream first (it is fast and its events carry
//! what line lookups need). Only where it refuses a stream that a go-yaml
//! v2 reader reads does this run: it then either yields the events go-yaml
//! would (go-yaml is lenient where YAML 1.2 is not: a flow collection or a
//! quoted scalar continued at or left of its parent's indentation), or the
//! error go-yaml gives, worded and placed as go-yaml words and places it
//! (`yaml: line N: <problem>`).
//!
//! Bounded like the rest of the loader: the work is linear in the text,
//! the flow and indentation stacks stop at go-yaml's own 10,000 levels, and
//! the caller's limits apply to what is built from the events.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};

/// A position: 0-based line and column, `index` counting characters (a
/// CRLF counts two), as go-yaml's `yaml_mark_t`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Mark {
    pub(crate) index: usize,
    pub(crate) line: usize,
    pub(crate) column: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ErrorKind {
    Reader,
    Scanner,
    Parser,
}

/// go-yaml's failure: its problem and the marks `parser.fail` reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GoError {
    kind: ErrorKind,
    pub(crate) problem: String,
    problem_mark: Mark,
    context_mark: Mark,
    /// The line the text go-yaml read starts on.
    base_line: usize,
    /// go-yaml's context (`while scanning a quoted scalar`), which it does
    /// not print but says where the problem began; may be empty.
    context: &'static str,
}

impl GoError {
    /// The line go-yaml prints (`decode.go` `parser.fail`): a scanner
    /// error's problem line counted from 1, a parser error's counted from
    /// 0 (so one less than the line it means), falling back on the
    /// context's line; none when that is 0.
    pub(crate) fn printed_line(&self) -> Option<usize> {
        if self.kind == ErrorKind::Reader {
            // A reader error sets no mark (`yaml_parser_set_reader_error`).
            return None;
        }
        let problem = self.problem_mark.line.saturating_sub(self.base_line);
        let line = if problem != 0 {
            problem + usize::from(self.kind == ErrorKind::Scanner)
        } else {
            self.context_mark.line.saturating_sub(self.base_line)
        };
        (line != 0).then_some(line)
    }

    /// The text of go-yaml's error: `yaml: line N: problem`.
    pub(crate) fn text(&self) -> String {
        match self.printed_line() {
            Some(n) => format!("yaml: line {n}: {}", self.problem),
            None => format!("yaml: {}", self.problem),
        }
    }

    /// Our own wording: the problem, after go-yaml's context and where
    /// that began when it is elsewhere (`while scanning a quoted scalar at
    /// line 6 column 14: found unexpected end of stream`).
    pub(crate) fn message(&self) -> String {
        let c = self.context_mark;
        let here = (c.line, c.column) == (self.problem_mark.line, self.problem_mark.column);
        if self.context.is_empty() || here || self.kind == ErrorKind::Reader {
            return self.problem.clone();
        }
        format!(
            "{} at line {} column {}: {}",
            self.context,
            c.line + 1,
            c.column + 1,
            self.problem
        )
    }

    /// Where the problem is, 1-based line and column, for our own report.
    pub(crate) fn position(&self) -> (u32, u32) {
        let m = if self.kind == ErrorKind::Reader {
            self.context_mark
        } else {
            self.problem_mark
        };
        let l = u32::try_from(m.line + 1).unwrap_or(u32::MAX);
        let c = u32::try_from(m.column + 1).unwrap_or(u32::MAX);
        (l, c)
    }
}

type Res<T> = Result<T, GoError>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Plain,
    Single,
    Double,
    Literal,
    Folded,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    StreamStart,
    StreamEnd,
    Version(u8, u8),
    TagDirective(String, String),
    DocumentStart,
    DocumentEnd,
    BlockSequenceStart,
    BlockMappingStart,
    BlockEnd,
    FlowSequenceStart,
    FlowSequenceEnd,
    FlowMappingStart,
    FlowMappingEnd,
    BlockEntry,
    FlowEntry,
    Key,
    Value,
    Alias(String),
    Anchor(String),
    Tag(String, String),
    Scalar(String, Style),
}

#[derive(Debug, Clone)]
struct Token {
    kind: Tok,
    start: Mark,
    end: Mark,
}

#[derive(Debug, Clone, Copy, Default)]
struct SimpleKey {
    possible: bool,
    required: bool,
    token_number: usize,
    mark: Mark,
}

/// go-yaml's `max_flow_level` and `max_indents`.
const MAX_LEVELS: usize = 10_000;
/// go-yaml's reader decodes its input in chunks of this many bytes
/// (`input_raw_buffer_size`), and fails on a disallowed character as soon
/// as it decodes the chunk holding it.
const RAW_CHUNK: usize = 512;

#[allow(clippy::struct_excessive_bools)] // go-yaml's `yaml_parser_t` flags, one bool each
struct Scanner<'t> {
    text: &'t [u8],
    /// Bytes at or past `end` read as NUL, go-yaml's end of input.
    end: usize,
    /// Set when a byte past `end` was looked at while a disallowed
    /// character lies there: go-yaml's reader would have failed then.
    reader_failed: Cell<bool>,
    /// The reader's error position stand-in: where the bad character is.
    bad_mark: Option<usize>,
    /// The line the scanned text starts on: go-yaml counts from there.
    base_line: usize,
    pos: usize,
    mark: Mark,
    tokens: VecDeque<Token>,
    tokens_parsed: usize,
    token_available: bool,
    stream_start_produced: bool,
    stream_end_produced: bool,
    indent: isize,
    indents: Vec<isize>,
    simple_key_allowed: bool,
    simple_keys: Vec<SimpleKey>,
    simple_keys_by_tok: HashMap<usize, usize>,
    flow_level: usize,
}

fn width(b: u8) -> usize {
    if b & 0x80 == 0 {
        1
    } else if b & 0xE0 == 0xC0 {
        2
    } else if b & 0xF0 == 0xE0 {
        3
    } else if b & 0xF8 == 0xF0 {
        4
    } else {
        0
    }
}

/// Whether go-yaml's reader allows the character (`readerc.go`
/// `yaml_parser_update_buffer`).
fn allowed(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{7E}' | '\u{85}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

impl<'t> Scanner<'t> {
    /// A scanner of `text[start..end]`, which starts at `mark`.
    fn new(text: &'t str, start: usize, end: usize, mark: Mark) -> Self {
        let bytes = text.as_bytes();
        let first = start;
        // A leading BOM is dropped before scanning (`yaml_parser_determine_encoding`).
        let start = if bytes[start..end].starts_with(b"\xEF\xBB\xBF") {
            start + 3
        } else {
            start
        };
        let bad = text[start..end]
            .char_indices()
            .find(|&(_, c)| !allowed(c))
            .map(|(i, _)| i + start);
        let end = bad.map_or(end, |b| b - (b - first) % RAW_CHUNK);
        Scanner {
            text: bytes,
            end: end.max(start),
            reader_failed: Cell::new(false),
            bad_mark: bad,
            base_line: mark.line,
            pos: start,
            mark,
            tokens: VecDeque::new(),
            tokens_parsed: 0,
            token_available: false,
            stream_start_produced: false,
            stream_end_produced: false,
            indent: -1,
            indents: Vec::new(),
            simple_key_allowed: false,
            simple_keys: Vec::new(),
            simple_keys_by_tok: HashMap::new(),
            flow_level: 0,
        }
    }

    #[inline]
    fn at(&self, k: usize) -> u8 {
        let i = self.pos + k;
        if i < self.end {
            self.text[i]
        } else {
            if self.bad_mark.is_some() {
                self.reader_failed.set(true);
            }
            0
        }
    }

    fn reader_error(&self) -> GoError {
        GoError {
            kind: ErrorKind::Reader,
            problem: "control characters are not allowed".into(),
            problem_mark: Mark::default(),
            context_mark: self.bad_position(),
            base_line: self.base_line,
            context: "",
        }
    }

    /// The mark of the disallowed character, for our own report only.
    fn bad_position(&self) -> Mark {
        let Some(b) = self.bad_mark else {
            return Mark::default();
        };
        let head = &self.text[..b];
        let line = memchr::memchr_iter(b'\n', head).count();
        let line_start = memchr::memrchr(b'\n', head).map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&head[line_start..]).chars().count();
        Mark {
            index: 0,
            line,
            column,
        }
    }

    fn is_z(&self, k: usize) -> bool {
        self.at(k) == 0
    }
    fn is_break(&self, k: usize) -> bool {
        match self.at(k) {
            b'\r' | b'\n' => true,
            0xC2 => self.at(k + 1) == 0x85,
            0xE2 => self.at(k + 1) == 0x80 && matches!(self.at(k + 2), 0xA8 | 0xA9),
            _ => false,
        }
    }
    fn is_crlf(&self, k: usize) -> bool {
        self.at(k) == b'\r' && self.at(k + 1) == b'\n'
    }
    fn is_breakz(&self, k: usize) -> bool {
        self.is_break(k) || self.is_z(k)
    }
    fn is_blank(&self, k: usize) -> bool {
        matches!(self.at(k), b' ' | b'\t')
    }
    fn is_blankz(&self, k: usize) -> bool {
        self.is_blank(k) || self.is_breakz(k)
    }
    fn is_alpha(&self, k: usize) -> bool {
        let b = self.at(k);
        b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
    }
    fn is_hex(&self, k: usize) -> bool {
        self.at(k).is_ascii_hexdigit()
    }
    fn as_hex(&self, k: usize) -> u32 {
        char::from(self.at(k)).to_digit(16).unwrap_or(0)
    }
    fn cur(&self) -> u8 {
        self.at(0)
    }

    fn skip(&mut self) {
        let w = width(self.cur()).max(1);
        self.mark.index += 1;
        self.mark.column += 1;
        self.pos += w;
    }

    fn skip_line(&mut self) {
        if self.is_crlf(0) {
            self.mark.index += 2;
            self.mark.column = 0;
            self.mark.line += 1;
            self.pos += 2;
        } else if self.is_break(0) {
            self.mark.index += 1;
            self.mark.column = 0;
            self.mark.line += 1;
            self.pos += width(self.cur()).max(1);
        }
    }

    fn read(&mut self, s: &mut Vec<u8>) {
        let w = width(self.cur()).max(1);
        let end = (self.pos + w).min(self.end);
        s.extend_from_slice(&self.text[self.pos.min(end)..end]);
        self.pos += w;
        self.mark.index += 1;
        self.mark.column += 1;
    }

    fn read_line(&mut self, s: &mut Vec<u8>) {
        if self.is_crlf(0) {
            s.push(b'\n');
            self.pos += 2;
            self.mark.index += 1;
        } else if matches!(self.cur(), b'\r' | b'\n') {
            s.push(b'\n');
            self.pos += 1;
        } else if self.cur() == 0xC2 && self.at(1) == 0x85 {
            s.push(b'\n');
            self.pos += 2;
        } else if self.cur() == 0xE2 && self.at(1) == 0x80 && matches!(self.at(2), 0xA8 | 0xA9) {
            s.extend_from_slice(&self.text[self.pos..self.pos + 3]);
            self.pos += 3;
        } else {
            return;
        }
        self.mark.index += 1;
        self.mark.column = 0;
        self.mark.line += 1;
    }

    fn error(&self, context_mark: Mark, problem: &str) -> GoError {
        self.error_in(scanner_context(problem), context_mark, problem)
    }

    fn error_in(&self, context: &'static str, context_mark: Mark, problem: &str) -> GoError {
        if self.reader_failed.get() {
            return self.reader_error();
        }
        GoError {
            kind: ErrorKind::Scanner,
            problem: problem.to_owned(),
            problem_mark: self.mark,
            context_mark,
            base_line: self.base_line,
            context,
        }
    }

    fn column(&self) -> isize {
        isize::try_from(self.mark.column).unwrap_or(isize::MAX)
    }

    /// The next token, or `None` past the stream's end (`yaml_parser_scan`
    /// split into peek and skip, as the parser uses it).
    fn peek(&mut self) -> Res<&Token> {
        if !self.token_available {
            self.fetch_more_tokens()?;
        }
        self.tokens
            .front()
            .ok_or_else(|| self.error(self.mark, "internal error: no token"))
    }

    fn skip_token(&mut self) {
        self.token_available = false;
        self.tokens_parsed += 1;
        if let Some(t) = self.tokens.pop_front() {
            self.stream_end_produced = t.kind == Tok::StreamEnd;
        }
    }

    fn insert_token(&mut self, pos: Option<usize>, token: Token) {
        match pos {
            None => self.tokens.push_back(token),
            Some(p) => self.tokens.insert(p.min(self.tokens.len()), token),
        }
    }

    fn fetch_more_tokens(&mut self) -> Res<()> {
        loop {
            if !self.tokens.is_empty() {
                let Some(&i) = self.simple_keys_by_tok.get(&self.tokens_parsed) else {
                    break;
                };
                if !self.simple_key_is_valid(i)? {
                    break;
                }
            }
            self.fetch_next_token()?;
            if self.reader_failed.get() {
                return Err(self.reader_error());
            }
        }
        self.token_available = true;
        Ok(())
    }

    /// `yaml_simple_key_is_valid`: a simple key stays possible on its own
    /// line and within 1024 characters.
    fn simple_key_is_valid(&mut self, i: usize) -> Res<bool> {
        let mark = self.mark;
        let key = &mut self.simple_keys[i];
        if !key.possible {
            return Ok(false);
        }
        if key.mark.line < mark.line || key.mark.index + 1024 < mark.index {
            if key.required {
                let m = key.mark;
                return Err(self.error(m, "could not find expected ':'"));
            }
            key.possible = false;
            return Ok(false);
        }
        Ok(true)
    }

    fn fetch_next_token(&mut self) -> Res<()> {
        if !self.stream_start_produced {
            self.indent = -1;
            self.simple_keys.push(SimpleKey::default());
            self.simple_key_allowed = true;
            self.stream_start_produced = true;
            let m = self.mark;
            self.insert_token(
                None,
                Token {
                    kind: Tok::StreamStart,
                    start: m,
                    end: m,
                },
            );
            return Ok(());
        }
        self.scan_to_next_token();
        self.unroll_indent(self.column());
        if self.is_z(0) {
            return self.fetch_stream_end();
        }
        let c = self.cur();
        if self.mark.column == 0 && c == b'%' {
            return self.fetch_directive();
        }
        if self.mark.column == 0
            && c == b'-'
            && self.at(1) == b'-'
            && self.at(2) == b'-'
            && self.is_blankz(3)
        {
            return self.fetch_document_indicator(Tok::DocumentStart);
        }
        if self.mark.column == 0
            && c == b'.'
            && self.at(1) == b'.'
            && self.at(2) == b'.'
            && self.is_blankz(3)
        {
            return self.fetch_document_indicator(Tok::DocumentEnd);
        }
        match c {
            b'[' => return self.fetch_flow_collection_start(Tok::FlowSequenceStart),
            b'{' => return self.fetch_flow_collection_start(Tok::FlowMappingStart),
            b']' => return self.fetch_flow_collection_end(Tok::FlowSequenceEnd),
            b'}' => return self.fetch_flow_collection_end(Tok::FlowMappingEnd),
            b',' => return self.fetch_flow_entry(),
            _ => {}
        }
        if c == b'-' && self.is_blankz(1) {
            return self.fetch_block_entry();
        }
        if c == b'?' && (self.flow_level > 0 || self.is_blankz(1)) {
            return self.fetch_key();
        }
        if c == b':' && (self.flow_level > 0 || self.is_blankz(1)) {
            return self.fetch_value();
        }
        match c {
            b'*' => return self.fetch_anchor(true),
            b'&' => return self.fetch_anchor(false),
            b'!' => return self.fetch_tag(),
            b'|' if self.flow_level == 0 => return self.fetch_block_scalar(true),
            b'>' if self.flow_level == 0 => return self.fetch_block_scalar(false),
            b'\'' => return self.fetch_flow_scalar(true),
            b'"' => return self.fetch_flow_scalar(false),
            _ => {}
        }
        let indicator = self.is_blankz(0)
            || matches!(
                c,
                b'-' | b'?'
                    | b':'
                    | b','
                    | b'['
                    | b']'
                    | b'{'
                    | b'}'
                    | b'#'
                    | b'&'
                    | b'*'
                    | b'!'
                    | b'|'
                    | b'>'
                    | b'\''
                    | b'"'
                    | b'%'
                    | b'@'
                    | b'`'
            );
        if !indicator
            || (c == b'-' && !self.is_blank(1))
            || (self.flow_level == 0 && (c == b'?' || c == b':') && !self.is_blankz(1))
        {
            return self.fetch_plain_scalar();
        }
        Err(self.error(self.mark, "found character that cannot start any token"))
    }

    fn save_simple_key(&mut self) -> Res<()> {
        let required = self.flow_level == 0 && self.indent == self.column();
        if self.simple_key_allowed {
            let key = SimpleKey {
                possible: true,
                required,
                token_number: self.tokens_parsed + self.tokens.len(),
                mark: self.mark,
            };
            self.remove_simple_key()?;
            let last = self.simple_keys.len() - 1;
            self.simple_keys[last] = key;
            self.simple_keys_by_tok.insert(key.token_number, last);
        }
        Ok(())
    }

    fn remove_simple_key(&mut self) -> Res<()> {
        let i = self.simple_keys.len() - 1;
        let key = self.simple_keys[i];
        if key.possible {
            if key.required {
                return Err(self.error(key.mark, "could not find expected ':'"));
            }
            self.simple_keys[i].possible = false;
            self.simple_keys_by_tok.remove(&key.token_number);
        }
        Ok(())
    }

    fn increase_flow_level(&mut self) -> Res<()> {
        self.simple_keys.push(SimpleKey {
            possible: false,
            required: false,
            token_number: self.tokens_parsed + self.tokens.len(),
            mark: self.mark,
        });
        self.flow_level += 1;
        if self.flow_level > MAX_LEVELS {
            let m = self.mark;
            return Err(self.error(m, "exceeded max depth of 10000"));
        }
        Ok(())
    }

    fn decrease_flow_level(&mut self) {
        if self.flow_level > 0 {
            self.flow_level -= 1;
            if let Some(k) = self.simple_keys.pop() {
                self.simple_keys_by_tok.remove(&k.token_number);
            }
        }
    }

    /// `yaml_parser_roll_indent`; `number` is an absolute token number.
    fn roll_indent(
        &mut self,
        column: isize,
        number: Option<usize>,
        kind: Tok,
        mark: Mark,
    ) -> Res<()> {
        if self.flow_level > 0 {
            return Ok(());
        }
        if self.indent < column {
            self.indents.push(self.indent);
            self.indent = column;
            if self.indents.len() > MAX_LEVELS {
                let m = self.simple_keys.last().map_or(self.mark, |k| k.mark);
                return Err(self.error(m, "exceeded max depth of 10000"));
            }
            let at = number.map(|n| n.saturating_sub(self.tokens_parsed));
            self.insert_token(
                at,
                Token {
                    kind,
                    start: mark,
                    end: mark,
                },
            );
        }
        Ok(())
    }

    fn unroll_indent(&mut self, column: isize) {
        if self.flow_level > 0 {
            return;
        }
        while self.indent > column {
            let m = self.mark;
            self.insert_token(
                None,
                Token {
                    kind: Tok::BlockEnd,
                    start: m,
                    end: m,
                },
            );
            self.indent = self.indents.pop().unwrap_or(-1);
        }
    }

    fn push_simple(&mut self, kind: Tok, start: Mark) {
        let end = self.mark;
        self.insert_token(None, Token { kind, start, end });
    }

    fn fetch_stream_end(&mut self) -> Res<()> {
        if self.mark.column != 0 {
            self.mark.column = 0;
            self.mark.line += 1;
        }
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        let m = self.mark;
        self.push_simple(Tok::StreamEnd, m);
        Ok(())
    }

    fn fetch_directive(&mut self) -> Res<()> {
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        let t = self.scan_directive()?;
        self.insert_token(None, t);
        Ok(())
    }

    fn fetch_document_indicator(&mut self, kind: Tok) -> Res<()> {
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        let start = self.mark;
        self.skip();
        self.skip();
        self.skip();
        self.push_simple(kind, start);
        Ok(())
    }

    fn fetch_flow_collection_start(&mut self, kind: Tok) -> Res<()> {
        self.save_simple_key()?;
        self.increase_flow_level()?;
        self.simple_key_allowed = true;
        let start = self.mark;
        self.skip();
        self.push_simple(kind, start);
        Ok(())
    }

    fn fetch_flow_collection_end(&mut self, kind: Tok) -> Res<()> {
        self.remove_simple_key()?;
        self.decrease_flow_level();
        self.simple_key_allowed = false;
        let start = self.mark;
        self.skip();
        self.push_simple(kind, start);
        Ok(())
    }

    fn fetch_flow_entry(&mut self) -> Res<()> {
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let start = self.mark;
        self.skip();
        self.push_simple(Tok::FlowEntry, start);
        Ok(())
    }

    fn fetch_block_entry(&mut self) -> Res<()> {
        if self.flow_level == 0 {
            if !self.simple_key_allowed {
                return Err(self.error(
                    self.mark,
                    "block sequence entries are not allowed in this context",
                ));
            }
            let m = self.mark;
            self.roll_indent(self.column(), None, Tok::BlockSequenceStart, m)?;
        }
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let start = self.mark;
        self.skip();
        self.push_simple(Tok::BlockEntry, start);
        Ok(())
    }

    fn fetch_key(&mut self) -> Res<()> {
        if self.flow_level == 0 {
            if !self.simple_key_allowed {
                return Err(self.error(self.mark, "mapping keys are not allowed in this context"));
            }
            let m = self.mark;
            self.roll_indent(self.column(), None, Tok::BlockMappingStart, m)?;
        }
        self.remove_simple_key()?;
        self.simple_key_allowed = self.flow_level == 0;
        let start = self.mark;
        self.skip();
        self.push_simple(Tok::Key, start);
        Ok(())
    }

    fn fetch_value(&mut self) -> Res<()> {
        let i = self.simple_keys.len() - 1;
        if self.simple_key_is_valid(i)? {
            let key = self.simple_keys[i];
            self.insert_token(
                Some(key.token_number.saturating_sub(self.tokens_parsed)),
                Token {
                    kind: Tok::Key,
                    start: key.mark,
                    end: key.mark,
                },
            );
            let col = isize::try_from(key.mark.column).unwrap_or(isize::MAX);
            self.roll_indent(
                col,
                Some(key.token_number),
                Tok::BlockMappingStart,
                key.mark,
            )?;
            self.simple_keys[i].possible = false;
            self.simple_keys_by_tok.remove(&key.token_number);
            self.simple_key_allowed = false;
        } else {
            if self.flow_level == 0 {
                if !self.simple_key_allowed {
                    return Err(
                        self.error(self.mark, "mapping values are not allowed in this context")
                    );
                }
                let m = self.mark;
                self.roll_indent(self.column(), None, Tok::BlockMappingStart, m)?;
            }
            self.simple_key_allowed = self.flow_level == 0;
        }
        let start = self.mark;
        self.skip();
        self.push_simple(Tok::Value, start);
        Ok(())
    }

    fn fetch_anchor(&mut self, alias: bool) -> Res<()> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let t = self.scan_anchor(alias)?;
        self.insert_token(None, t);
        Ok(())
    }

    fn fetch_tag(&mut self) -> Res<()> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let t = self.scan_tag()?;
        self.insert_token(None, t);
        Ok(())
    }

    fn fetch_block_scalar(&mut self, literal: bool) -> Res<()> {
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let t = self.scan_block_scalar(literal)?;
        self.insert_token(None, t);
        Ok(())
    }

    fn fetch_flow_scalar(&mut self, single: bool) -> Res<()> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let t = self.scan_flow_scalar(single)?;
        self.insert_token(None, t);
        Ok(())
    }

    fn fetch_plain_scalar(&mut self) -> Res<()> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let t = self.scan_plain_scalar()?;
        self.insert_token(None, t);
        Ok(())
    }

    fn scan_to_next_token(&mut self) {
        loop {
            if self.mark.column == 0
                && self.cur() == 0xEF
                && self.at(1) == 0xBB
                && self.at(2) == 0xBF
            {
                self.skip();
            }
            while self.cur() == b' '
                || ((self.flow_level > 0 || !self.simple_key_allowed) && self.cur() == b'\t')
            {
                self.skip();
            }
            if self.cur() == b'#' {
                while !self.is_breakz(0) {
                    self.skip();
                }
            }
            if self.is_break(0) {
                self.skip_line();
                if self.flow_level == 0 {
                    self.simple_key_allowed = true;
                }
            } else {
                break;
            }
        }
    }

    fn skip_blanks_and_comment(&mut self) {
        while self.is_blank(0) {
            self.skip();
        }
        if self.cur() == b'#' {
            while !self.is_breakz(0) {
                self.skip();
            }
        }
    }

    fn scan_directive(&mut self) -> Res<Token> {
        const CX: &str = "while scanning a directive";
        let start = self.mark;
        self.skip();
        let mut name = Vec::new();
        while self.is_alpha(0) {
            self.read(&mut name);
        }
        if name.is_empty() {
            return Err(self.error(start, "could not find expected directive name"));
        }
        if !self.is_blankz(0) {
            return Err(self.error(start, "found unexpected non-alphabetical character"));
        }
        let _ = CX;
        let kind = if name == b"YAML" {
            while self.is_blank(0) {
                self.skip();
            }
            let major = self.scan_version_number(start)?;
            if self.cur() != b'.' {
                return Err(self.error(start, "did not find expected digit or '.' character"));
            }
            self.skip();
            let minor = self.scan_version_number(start)?;
            Tok::Version(major, minor)
        } else if name == b"TAG" {
            while self.is_blank(0) {
                self.skip();
            }
            let handle = self.scan_tag_handle(true, start)?;
            if !self.is_blank(0) {
                return Err(self.error(start, "did not find expected whitespace"));
            }
            while self.is_blank(0) {
                self.skip();
            }
            let prefix = self.scan_tag_uri(true, b"", start)?;
            if !self.is_blankz(0) {
                return Err(self.error(start, "did not find expected whitespace or line break"));
            }
            Tok::TagDirective(lossy(handle), lossy(prefix))
        } else {
            return Err(self.error(start, "found unknown directive name"));
        };
        let end = self.mark;
        self.skip_blanks_and_comment();
        if !self.is_breakz(0) {
            return Err(self.error(start, "did not find expected comment or line break"));
        }
        if self.is_break(0) {
            self.skip_line();
        }
        Ok(Token { kind, start, end })
    }

    fn scan_version_number(&mut self, start: Mark) -> Res<u8> {
        let mut value: u8 = 0;
        let mut length = 0;
        while self.cur().is_ascii_digit() {
            length += 1;
            if length > 2 {
                return Err(self.error(start, "found extremely long version number"));
            }
            value = value * 10 + (self.cur() - b'0');
            self.skip();
        }
        if length == 0 {
            return Err(self.error(start, "did not find expected version number"));
        }
        Ok(value)
    }

    fn scan_anchor(&mut self, alias: bool) -> Res<Token> {
        let start = self.mark;
        self.skip();
        let mut s = Vec::new();
        while self.is_alpha(0) {
            self.read(&mut s);
        }
        let end = self.mark;
        let c = self.cur();
        if s.is_empty()
            || !(self.is_blankz(0)
                || matches!(c, b'?' | b':' | b',' | b']' | b'}' | b'%' | b'@' | b'`'))
        {
            return Err(self.error(
                start,
                "did not find expected alphabetic or numeric character",
            ));
        }
        let name = lossy(s);
        let kind = if alias {
            Tok::Alias(name)
        } else {
            Tok::Anchor(name)
        };
        Ok(Token { kind, start, end })
    }

    fn scan_tag(&mut self) -> Res<Token> {
        let start = self.mark;
        let (handle, suffix);
        if self.at(1) == b'<' {
            self.skip();
            self.skip();
            suffix = self.scan_tag_uri(false, b"", start)?;
            if self.cur() != b'>' {
                return Err(self.error(start, "did not find the expected '>'"));
            }
            self.skip();
            handle = Vec::new();
        } else {
            let h = self.scan_tag_handle(false, start)?;
            if h.len() > 1 && h[0] == b'!' && h[h.len() - 1] == b'!' {
                suffix = self.scan_tag_uri(false, b"", start)?;
                handle = h;
            } else {
                let s = self.scan_tag_uri(false, &h, start)?;
                if s.is_empty() {
                    handle = Vec::new();
                    suffix = b"!".to_vec();
                } else {
                    handle = b"!".to_vec();
                    suffix = s;
                }
            }
        }
        if !self.is_blankz(0) {
            return Err(self.error(start, "did not find expected whitespace or line break"));
        }
        let end = self.mark;
        Ok(Token {
            kind: Tok::Tag(lossy(handle), lossy(suffix)),
            start,
            end,
        })
    }

    fn scan_tag_handle(&mut self, directive: bool, start: Mark) -> Res<Vec<u8>> {
        if self.cur() != b'!' {
            return Err(self.error(start, "did not find expected '!'"));
        }
        let mut s = Vec::new();
        self.read(&mut s);
        while self.is_alpha(0) {
            self.read(&mut s);
        }
        if self.cur() == b'!' {
            self.read(&mut s);
        } else if directive && s != b"!" {
            return Err(self.error(start, "did not find expected '!'"));
        }
        Ok(s)
    }

    /// `yaml_parser_scan_tag_uri`; `head` is a handle read before (its
    /// `!` dropped) that is part of the tag.
    fn scan_tag_uri(&mut self, directive: bool, head: &[u8], start: Mark) -> Res<Vec<u8>> {
        let mut has_tag = !head.is_empty();
        let mut s = Vec::new();
        if head.len() > 1 {
            s.extend_from_slice(&head[1..]);
        }
        loop {
            let c = self.cur();
            let uri_char = self.is_alpha(0)
                || matches!(
                    c,
                    b';' | b'/'
                        | b'?'
                        | b':'
                        | b'@'
                        | b'&'
                        | b'='
                        | b'+'
                        | b'$'
                        | b','
                        | b'.'
                        | b'!'
                        | b'~'
                        | b'*'
                        | b'\''
                        | b'('
                        | b')'
                        | b'['
                        | b']'
                        | b'%'
                );
            if !uri_char {
                break;
            }
            if c == b'%' {
                self.scan_uri_escapes(directive, start, &mut s)?;
            } else {
                self.read(&mut s);
            }
            has_tag = true;
        }
        if !has_tag {
            return Err(self.error(start, "did not find expected tag URI"));
        }
        Ok(s)
    }

    fn scan_uri_escapes(&mut self, _directive: bool, start: Mark, s: &mut Vec<u8>) -> Res<()> {
        let mut w = usize::MAX;
        while w > 0 {
            if !(self.cur() == b'%' && self.is_hex(1) && self.is_hex(2)) {
                return Err(self.error(start, "did not find URI escaped octet"));
            }
            let octet = u8::try_from((self.as_hex(1) << 4) + self.as_hex(2)).unwrap_or(0);
            if w == usize::MAX {
                w = width(octet);
                if w == 0 {
                    return Err(self.error(start, "found an incorrect leading UTF-8 octet"));
                }
            } else if octet & 0xC0 != 0x80 {
                return Err(self.error(start, "found an incorrect trailing UTF-8 octet"));
            }
            s.push(octet);
            self.skip();
            self.skip();
            self.skip();
            w -= 1;
        }
        Ok(())
    }

    fn scan_block_scalar(&mut self, literal: bool) -> Res<Token> {
        const CX: &str = "found an indentation indicator equal to 0";
        let start = self.mark;
        self.skip();
        let mut chomping = 0i8;
        let mut increment = 0isize;
        if matches!(self.cur(), b'+' | b'-') {
            chomping = if self.cur() == b'+' { 1 } else { -1 };
            self.skip();
            if self.cur().is_ascii_digit() {
                if self.cur() == b'0' {
                    return Err(self.error(start, CX));
                }
                increment = isize::from(self.cur() - b'0');
                self.skip();
            }
        } else if self.cur().is_ascii_digit() {
            if self.cur() == b'0' {
                return Err(self.error(start, CX));
            }
            increment = isize::from(self.cur() - b'0');
            self.skip();
            if matches!(self.cur(), b'+' | b'-') {
                chomping = if self.cur() == b'+' { 1 } else { -1 };
                self.skip();
            }
        }
        self.skip_blanks_and_comment();
        if !self.is_breakz(0) {
            return Err(self.error_in(
                "while scanning a block scalar",
                start,
                "did not find expected comment or line break",
            ));
        }
        if self.is_break(0) {
            self.skip_line();
        }
        let mut end = self.mark;
        let mut indent: isize = 0;
        if increment > 0 {
            indent = if self.indent >= 0 {
                self.indent + increment
            } else {
                increment
            };
        }
        let mut s = Vec::new();
        let mut leading_break = Vec::new();
        let mut trailing_breaks = Vec::new();
        self.block_scalar_breaks(&mut indent, &mut trailing_breaks, start, &mut end)?;
        let mut leading_blank = false;
        while self.column() == indent && !self.is_z(0) {
            let trailing_blank = self.is_blank(0);
            if !literal
                && !leading_blank
                && !trailing_blank
                && leading_break.first() == Some(&b'\n')
            {
                if trailing_breaks.is_empty() {
                    s.push(b' ');
                }
            } else {
                s.extend_from_slice(&leading_break);
            }
            leading_break.clear();
            s.append(&mut trailing_breaks);
            leading_blank = self.is_blank(0);
            while !self.is_breakz(0) {
                self.read(&mut s);
            }
            self.read_line(&mut leading_break);
            self.block_scalar_breaks(&mut indent, &mut trailing_breaks, start, &mut end)?;
        }
        if chomping != -1 {
            s.extend_from_slice(&leading_break);
        }
        if chomping == 1 {
            s.extend_from_slice(&trailing_breaks);
        }
        let style = if literal {
            Style::Literal
        } else {
            Style::Folded
        };
        Ok(Token {
            kind: Tok::Scalar(lossy(s), style),
            start,
            end,
        })
    }

    fn block_scalar_breaks(
        &mut self,
        indent: &mut isize,
        breaks: &mut Vec<u8>,
        start: Mark,
        end: &mut Mark,
    ) -> Res<()> {
        *end = self.mark;
        let mut max_indent: isize = 0;
        loop {
            while (*indent == 0 || self.column() < *indent) && self.cur() == b' ' {
                self.skip();
            }
            max_indent = max_indent.max(self.column());
            if (*indent == 0 || self.column() < *indent) && self.cur() == b'\t' {
                return Err(self.error(
                    start,
                    "found a tab character where an indentation space is expected",
                ));
            }
            if !self.is_break(0) {
                break;
            }
            self.read_line(breaks);
            *end = self.mark;
        }
        if *indent == 0 {
            *indent = max_indent.max(self.indent + 1).max(1);
        }
        Ok(())
    }

    fn scan_flow_scalar(&mut self, single: bool) -> Res<Token> {
        let start = self.mark;
        self.skip();
        let mut s = Vec::new();
        let mut leading_break = Vec::new();
        let mut trailing_breaks = Vec::new();
        let mut whitespaces = Vec::new();
        loop {
            if self.mark.column == 0
                && ((self.cur() == b'-' && self.at(1) == b'-' && self.at(2) == b'-')
                    || (self.cur() == b'.' && self.at(1) == b'.' && self.at(2) == b'.'))
                && self.is_blankz(3)
            {
                return Err(self.error(start, "found unexpected document indicator"));
            }
            if self.is_z(0) {
                return Err(self.error(start, "found unexpected end of stream"));
            }
            let mut leading_blanks = false;
            while !self.is_blankz(0) {
                let c = self.cur();
                if single && c == b'\'' && self.at(1) == b'\'' {
                    s.push(b'\'');
                    self.skip();
                    self.skip();
                } else if (single && c == b'\'') || (!single && c == b'"') {
                    break;
                } else if !single && c == b'\\' && self.is_break(1) {
                    self.skip();
                    self.skip_line();
                    leading_blanks = true;
                    break;
                } else if !single && c == b'\\' {
                    self.scan_escape(start, &mut s)?;
                } else {
                    self.read(&mut s);
                }
            }
            let quote = if single { b'\'' } else { b'"' };
            if self.cur() == quote {
                break;
            }
            while self.is_blank(0) || self.is_break(0) {
                if self.is_blank(0) {
                    if leading_blanks {
                        self.skip();
                    } else {
                        self.read(&mut whitespaces);
                    }
                } else if leading_blanks {
                    self.read_line(&mut trailing_breaks);
                } else {
                    whitespaces.clear();
                    self.read_line(&mut leading_break);
                    leading_blanks = true;
                }
            }
            if leading_blanks {
                if leading_break.first() == Some(&b'\n') {
                    if trailing_breaks.is_empty() {
                        s.push(b' ');
                    } else {
                        s.extend_from_slice(&trailing_breaks);
                    }
                } else {
                    s.extend_from_slice(&leading_break);
                    s.extend_from_slice(&trailing_breaks);
                }
                trailing_breaks.clear();
                leading_break.clear();
            } else {
                s.append(&mut whitespaces);
            }
        }
        self.skip();
        let end = self.mark;
        let style = if single { Style::Single } else { Style::Double };
        Ok(Token {
            kind: Tok::Scalar(lossy(s), style),
            start,
            end,
        })
    }

    /// One escape in a double-quoted scalar, the `\` at the cursor.
    fn scan_escape(&mut self, start: Mark, s: &mut Vec<u8>) -> Res<()> {
        let mut code_length = 0;
        let simple: &[u8] = match self.at(1) {
            b'0' => b"\0",
            b'a' => b"\x07",
            b'b' => b"\x08",
            b't' | b'\t' => b"\t",
            b'n' => b"\n",
            b'v' => b"\x0B",
            b'f' => b"\x0C",
            b'r' => b"\r",
            b'e' => b"\x1B",
            b' ' => b" ",
            b'"' => b"\"",
            b'\'' => b"'",
            b'\\' => b"\\",
            b'N' => "\u{85}".as_bytes(),
            b'_' => "\u{A0}".as_bytes(),
            b'L' => "\u{2028}".as_bytes(),
            b'P' => "\u{2029}".as_bytes(),
            b'x' => {
                code_length = 2;
                b""
            }
            b'u' => {
                code_length = 4;
                b""
            }
            b'U' => {
                code_length = 8;
                b""
            }
            // go-yaml v2 rejects `\/`, which YAML 1.2 allows.
            _ => return Err(self.error(start, "found unknown escape character")),
        };
        s.extend_from_slice(simple);
        self.skip();
        self.skip();
        if code_length > 0 {
            let mut value: u32 = 0;
            for k in 0..code_length {
                if !self.is_hex(k) {
                    return Err(self.error(start, "did not find expected hexdecimal number"));
                }
                value = (value << 4) + self.as_hex(k);
            }
            let Some(c) = char::from_u32(value) else {
                return Err(self.error(start, "found invalid Unicode character escape code"));
            };
            let mut buf = [0u8; 4];
            s.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            for _ in 0..code_length {
                self.skip();
            }
        }
        Ok(())
    }

    fn scan_plain_scalar(&mut self) -> Res<Token> {
        let mut s = Vec::new();
        let mut leading_break = Vec::new();
        let mut trailing_breaks = Vec::new();
        let mut whitespaces = Vec::new();
        let mut leading_blanks = false;
        let indent = self.indent + 1;
        let start = self.mark;
        let mut end = self.mark;
        loop {
            if self.mark.column == 0
                && ((self.cur() == b'-' && self.at(1) == b'-' && self.at(2) == b'-')
                    || (self.cur() == b'.' && self.at(1) == b'.' && self.at(2) == b'.'))
                && self.is_blankz(3)
            {
                break;
            }
            if self.cur() == b'#' {
                break;
            }
            while !self.is_blankz(0) {
                let c = self.cur();
                if (c == b':' && self.is_blankz(1))
                    || (self.flow_level > 0 && matches!(c, b',' | b'?' | b'[' | b']' | b'{' | b'}'))
                {
                    break;
                }
                if leading_blanks || !whitespaces.is_empty() {
                    if leading_blanks {
                        if leading_break.first() == Some(&b'\n') {
                            if trailing_breaks.is_empty() {
                                s.push(b' ');
                            } else {
                                s.extend_from_slice(&trailing_breaks);
                            }
                        } else {
                            s.extend_from_slice(&leading_break);
                            s.extend_from_slice(&trailing_breaks);
                        }
                        trailing_breaks.clear();
                        leading_break.clear();
                        leading_blanks = false;
                    } else {
                        s.append(&mut whitespaces);
                    }
                }
                self.read(&mut s);
                end = self.mark;
            }
            if !(self.is_blank(0) || self.is_break(0)) {
                break;
            }
            while self.is_blank(0) || self.is_break(0) {
                if self.is_blank(0) {
                    if leading_blanks && self.column() < indent && self.cur() == b'\t' {
                        return Err(
                            self.error(start, "found a tab character that violates indentation")
                        );
                    }
                    if leading_blanks {
                        self.skip();
                    } else {
                        self.read(&mut whitespaces);
                    }
                } else if leading_blanks {
                    self.read_line(&mut trailing_breaks);
                } else {
                    whitespaces.clear();
                    self.read_line(&mut leading_break);
                    leading_blanks = true;
                }
            }
            if self.flow_level == 0 && self.column() < indent {
                break;
            }
        }
        if leading_blanks {
            self.simple_key_allowed = true;
        }
        Ok(Token {
            kind: Tok::Scalar(lossy(s), Style::Plain),
            start,
            end,
        })
    }
}

/// The context go-yaml names with a scanner problem (`scannerc.go`).
fn scanner_context(problem: &str) -> &'static str {
    match problem {
        "could not find expected ':'" => "while scanning a simple key",
        "found character that cannot start any token" => "while scanning for the next token",
        "could not find expected directive name"
        | "found unexpected non-alphabetical character"
        | "found unknown directive name"
        | "did not find expected comment or line break" => "while scanning a directive",
        "did not find expected digit or '.' character"
        | "found extremely long version number"
        | "did not find expected version number" => "while scanning a %YAML directive",
        "did not find expected whitespace" => "while scanning a %TAG directive",
        "did not find expected alphabetic or numeric character" => {
            "while scanning an anchor or alias"
        }
        "did not find the expected '>'"
        | "did not find expected whitespace or line break"
        | "did not find expected '!'"
        | "did not find expected tag URI"
        | "did not find URI escaped octet"
        | "found an incorrect leading UTF-8 octet"
        | "found an incorrect trailing UTF-8 octet" => "while scanning a tag",
        "found an indentation indicator equal to 0"
        | "found a tab character where an indentation space is expected" => {
            "while scanning a block scalar"
        }
        "found unexpected document indicator" | "found unexpected end of stream" => {
            "while scanning a quoted scalar"
        }
        "found unknown escape character"
        | "did not find expected hexdecimal number"
        | "found invalid Unicode character escape code" => "while parsing a quoted scalar",
        "found a tab character that violates indentation" => "while scanning a plain scalar",
        _ => "",
    }
}

/// The context go-yaml names with a parser problem (`parserc.go`).
fn parser_context(problem: &str) -> &'static str {
    match problem {
        "found undefined tag handle" | "did not find expected node content" => {
            "while parsing a node"
        }
        "did not find expected '-' indicator" => "while parsing a block collection",
        "did not find expected key" => "while parsing a block mapping",
        "did not find expected ',' or ']'" => "while parsing a flow sequence",
        "did not find expected ',' or '}'" => "while parsing a flow mapping",
        _ => "",
    }
}

fn lossy(v: Vec<u8>) -> String {
    String::from_utf8(v).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// One event of go-yaml's parser.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Event {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    Alias(String),
    /// Anchor, resolved tag, value, style.
    Scalar(Option<String>, Option<String>, String, Style),
    /// Anchor, resolved tag, whether in flow style.
    SequenceStart(Option<String>, Option<String>, bool),
    SequenceEnd,
    MappingStart(Option<String>, Option<String>, bool),
    MappingEnd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    StreamStart,
    ImplicitDocumentStart,
    DocumentStart,
    DocumentContent,
    DocumentEnd,
    BlockNode,
    BlockSequenceFirstEntry,
    BlockSequenceEntry,
    IndentlessSequenceEntry,
    BlockMappingFirstKey,
    BlockMappingKey,
    BlockMappingValue,
    FlowSequenceFirstEntry,
    FlowSequenceEntry,
    FlowSequenceEntryMappingKey,
    FlowSequenceEntryMappingValue,
    FlowSequenceEntryMappingEnd,
    FlowMappingFirstKey,
    FlowMappingKey,
    FlowMappingValue,
    FlowMappingEmptyValue,
    End,
}

/// go-yaml v2's event parser over its scanner.
pub(crate) struct Parser<'t> {
    scanner: Scanner<'t>,
    state: State,
    states: Vec<State>,
    marks: Vec<Mark>,
    tag_directives: Vec<(String, String)>,
}

impl<'t> Parser<'t> {
    /// A parser of `text[start..end]`, which starts at `mark`.
    pub(crate) fn new(text: &'t str, start: usize, end: usize, mark: Mark) -> Self {
        Parser {
            scanner: Scanner::new(text, start, end, mark),
            state: State::StreamStart,
            states: Vec::new(),
            marks: Vec::new(),
            tag_directives: Vec::new(),
        }
    }

    fn parser_error(&self, problem: &str, mark: Mark) -> GoError {
        self.parser_error_context(Mark::default(), problem, mark)
    }

    fn parser_error_context(&self, context_mark: Mark, problem: &str, mark: Mark) -> GoError {
        if self.scanner.reader_failed.get() {
            return self.scanner.reader_error();
        }
        GoError {
            kind: ErrorKind::Parser,
            problem: problem.to_owned(),
            problem_mark: mark,
            context_mark,
            base_line: self.scanner.base_line,
            context: parser_context(problem),
        }
    }

    fn pop_state(&mut self) {
        self.state = self.states.pop().unwrap_or(State::End);
    }

    fn peek(&mut self) -> Res<(Tok, Mark, Mark)> {
        let t = self.scanner.peek()?;
        Ok((t.kind.clone(), t.start, t.end))
    }

    /// The next event with its start and end marks, `None` after the
    /// stream's end.
    pub(crate) fn next_event(&mut self) -> Res<Option<(Event, Mark, Mark)>> {
        if self.scanner.stream_end_produced || self.state == State::End {
            return Ok(None);
        }
        self.state_machine().map(Some)
    }

    fn state_machine(&mut self) -> Res<(Event, Mark, Mark)> {
        match self.state {
            State::StreamStart => {
                let (kind, start, end) = self.peek()?;
                if kind != Tok::StreamStart {
                    return Err(self.parser_error("did not find expected <stream-start>", start));
                }
                self.state = State::ImplicitDocumentStart;
                self.scanner.skip_token();
                Ok((Event::StreamStart, start, end))
            }
            State::ImplicitDocumentStart => self.document_start(true),
            State::DocumentStart => self.document_start(false),
            State::DocumentContent => {
                let (kind, start, _) = self.peek()?;
                if matches!(
                    kind,
                    Tok::Version(..)
                        | Tok::TagDirective(..)
                        | Tok::DocumentStart
                        | Tok::DocumentEnd
                        | Tok::StreamEnd
                ) {
                    self.pop_state();
                    return Ok(empty_scalar(start));
                }
                self.parse_node(true, false)
            }
            State::DocumentEnd => {
                let (kind, start, mut end) = self.peek()?;
                end = if kind == Tok::DocumentEnd {
                    self.scanner.skip_token();
                    end
                } else {
                    start
                };
                self.tag_directives.clear();
                self.state = State::DocumentStart;
                Ok((Event::DocumentEnd, start, end))
            }
            State::BlockNode => self.parse_node(true, false),
            State::BlockSequenceFirstEntry => self.block_sequence_entry(true),
            State::BlockSequenceEntry => self.block_sequence_entry(false),
            State::IndentlessSequenceEntry => self.indentless_sequence_entry(),
            State::BlockMappingFirstKey => self.block_mapping_key(true),
            State::BlockMappingKey => self.block_mapping_key(false),
            State::BlockMappingValue => self.block_mapping_value(),
            State::FlowSequenceFirstEntry => self.flow_sequence_entry(true),
            State::FlowSequenceEntry => self.flow_sequence_entry(false),
            State::FlowSequenceEntryMappingKey => {
                let (kind, start, end) = self.peek()?;
                if !matches!(kind, Tok::Value | Tok::FlowEntry | Tok::FlowSequenceEnd) {
                    self.states.push(State::FlowSequenceEntryMappingValue);
                    return self.parse_node(false, false);
                }
                let _ = start;
                self.scanner.skip_token();
                self.state = State::FlowSequenceEntryMappingValue;
                Ok(empty_scalar(end))
            }
            State::FlowSequenceEntryMappingValue => {
                let (kind, mut start, _) = self.peek()?;
                if kind == Tok::Value {
                    self.scanner.skip_token();
                    let (kind, s, _) = self.peek()?;
                    start = s;
                    if !matches!(kind, Tok::FlowEntry | Tok::FlowSequenceEnd) {
                        self.states.push(State::FlowSequenceEntryMappingEnd);
                        return self.parse_node(false, false);
                    }
                }
                self.state = State::FlowSequenceEntryMappingEnd;
                Ok(empty_scalar(start))
            }
            State::FlowSequenceEntryMappingEnd => {
                let (_, start, _) = self.peek()?;
                self.state = State::FlowSequenceEntry;
                Ok((Event::MappingEnd, start, start))
            }
            State::FlowMappingFirstKey => self.flow_mapping_key(true),
            State::FlowMappingKey => self.flow_mapping_key(false),
            State::FlowMappingValue => self.flow_mapping_value(false),
            State::FlowMappingEmptyValue => self.flow_mapping_value(true),
            State::End => {
                Err(self.parser_error("internal error: parse past the end", Mark::default()))
            }
        }
    }

    fn document_start(&mut self, implicit: bool) -> Res<(Event, Mark, Mark)> {
        let (mut kind, mut start, mut end) = self.peek()?;
        if !implicit {
            while kind == Tok::DocumentEnd {
                self.scanner.skip_token();
                (kind, start, end) = self.peek()?;
            }
        }
        if implicit
            && !matches!(
                kind,
                Tok::Version(..) | Tok::TagDirective(..) | Tok::DocumentStart | Tok::StreamEnd
            )
        {
            self.process_directives()?;
            self.states.push(State::DocumentEnd);
            self.state = State::BlockNode;
            return Ok((Event::DocumentStart, start, end));
        }
        if kind == Tok::StreamEnd {
            self.state = State::End;
            self.scanner.skip_token();
            return Ok((Event::StreamEnd, start, end));
        }
        let doc_start = start;
        self.process_directives()?;
        let (kind, start, end) = self.peek()?;
        if kind != Tok::DocumentStart {
            return Err(self.parser_error("did not find expected <document start>", start));
        }
        self.states.push(State::DocumentEnd);
        self.state = State::DocumentContent;
        self.scanner.skip_token();
        Ok((Event::DocumentStart, doc_start, end))
    }

    fn process_directives(&mut self) -> Res<()> {
        let mut version = false;
        loop {
            let (kind, start, _) = self.peek()?;
            match kind {
                Tok::Version(major, minor) => {
                    if version {
                        return Err(self.parser_error("found duplicate %YAML directive", start));
                    }
                    if major != 1 || minor != 1 {
                        return Err(self.parser_error("found incompatible YAML document", start));
                    }
                    version = true;
                }
                Tok::TagDirective(handle, prefix) => {
                    if self.tag_directives.iter().any(|(h, _)| *h == handle) {
                        return Err(self.parser_error("found duplicate %TAG directive", start));
                    }
                    self.tag_directives.push((handle, prefix));
                }
                _ => break,
            }
            self.scanner.skip_token();
        }
        for (h, p) in [("!", "!"), ("!!", "tag:yaml.org,2002:")] {
            if !self.tag_directives.iter().any(|(x, _)| x == h) {
                self.tag_directives.push((h.to_owned(), p.to_owned()));
            }
        }
        Ok(())
    }

    fn parse_node(&mut self, block: bool, indentless: bool) -> Res<(Event, Mark, Mark)> {
        let (mut kind, mut start, mut end) = self.peek()?;
        if let Tok::Alias(name) = kind {
            self.pop_state();
            self.scanner.skip_token();
            return Ok((Event::Alias(name), start, end));
        }
        let node_start = start;
        let mut event_end = start;
        let mut anchor = None;
        let mut tag_pair: Option<(String, String)> = None;
        let mut tag_mark = Mark::default();
        if let Tok::Anchor(name) = &kind {
            anchor = Some(name.clone());
            event_end = end;
            self.scanner.skip_token();
            (kind, start, end) = self.peek()?;
            if let Tok::Tag(h, s) = &kind {
                tag_pair = Some((h.clone(), s.clone()));
                tag_mark = start;
                event_end = end;
                self.scanner.skip_token();
                (kind, start, end) = self.peek()?;
            }
        } else if let Tok::Tag(h, s) = &kind {
            tag_pair = Some((h.clone(), s.clone()));
            tag_mark = start;
            event_end = end;
            self.scanner.skip_token();
            (kind, start, end) = self.peek()?;
            if let Tok::Anchor(name) = &kind {
                anchor = Some(name.clone());
                event_end = end;
                self.scanner.skip_token();
                (kind, start, end) = self.peek()?;
            }
        }
        let tag = match tag_pair {
            None => None,
            Some((h, s)) if h.is_empty() => Some(s),
            Some((h, s)) => match self.tag_directives.iter().find(|(x, _)| *x == h) {
                Some((_, prefix)) => Some(format!("{prefix}{s}")),
                None => {
                    return Err(self.parser_error_context(
                        node_start,
                        "found undefined tag handle",
                        tag_mark,
                    ))
                }
            },
        };
        // go-yaml treats an empty resolved tag as no tag.
        let tag = tag.filter(|t| !t.is_empty());
        if indentless && kind == Tok::BlockEntry {
            self.state = State::IndentlessSequenceEntry;
            return Ok((Event::SequenceStart(anchor, tag, false), node_start, end));
        }
        match kind {
            Tok::Scalar(value, style) => {
                self.pop_state();
                self.scanner.skip_token();
                Ok((Event::Scalar(anchor, tag, value, style), node_start, end))
            }
            Tok::FlowSequenceStart => {
                self.state = State::FlowSequenceFirstEntry;
                Ok((Event::SequenceStart(anchor, tag, true), node_start, end))
            }
            Tok::FlowMappingStart => {
                self.state = State::FlowMappingFirstKey;
                Ok((Event::MappingStart(anchor, tag, true), node_start, end))
            }
            Tok::BlockSequenceStart if block => {
                self.state = State::BlockSequenceFirstEntry;
                Ok((Event::SequenceStart(anchor, tag, false), node_start, end))
            }
            Tok::BlockMappingStart if block => {
                self.state = State::BlockMappingFirstKey;
                Ok((Event::MappingStart(anchor, tag, false), node_start, end))
            }
            _ if anchor.is_some() || tag.is_some() => {
                self.pop_state();
                Ok((
                    Event::Scalar(anchor, tag, String::new(), Style::Plain),
                    node_start,
                    event_end,
                ))
            }
            _ => Err(self.parser_error_context(
                node_start,
                "did not find expected node content",
                start,
            )),
        }
    }

    fn block_sequence_entry(&mut self, first: bool) -> Res<(Event, Mark, Mark)> {
        if first {
            let (_, start, _) = self.peek()?;
            self.marks.push(start);
            self.scanner.skip_token();
        }
        let (kind, start, end) = self.peek()?;
        if kind == Tok::BlockEntry {
            self.scanner.skip_token();
            let (kind, _, _) = self.peek()?;
            if kind != Tok::BlockEntry && kind != Tok::BlockEnd {
                self.states.push(State::BlockSequenceEntry);
                return self.parse_node(true, false);
            }
            self.state = State::BlockSequenceEntry;
            return Ok(empty_scalar(end));
        }
        if kind == Tok::BlockEnd {
            self.pop_state();
            self.marks.pop();
            self.scanner.skip_token();
            return Ok((Event::SequenceEnd, start, end));
        }
        let context = self.marks.pop().unwrap_or_default();
        Err(self.parser_error_context(context, "did not find expected '-' indicator", start))
    }

    fn indentless_sequence_entry(&mut self) -> Res<(Event, Mark, Mark)> {
        let (kind, start, end) = self.peek()?;
        if kind == Tok::BlockEntry {
            self.scanner.skip_token();
            let (kind, _, _) = self.peek()?;
            if !matches!(
                kind,
                Tok::BlockEntry | Tok::Key | Tok::Value | Tok::BlockEnd
            ) {
                self.states.push(State::IndentlessSequenceEntry);
                return self.parse_node(true, false);
            }
            self.state = State::IndentlessSequenceEntry;
            return Ok(empty_scalar(end));
        }
        self.pop_state();
        Ok((Event::SequenceEnd, start, start))
    }

    fn block_mapping_key(&mut self, first: bool) -> Res<(Event, Mark, Mark)> {
        if first {
            let (_, start, _) = self.peek()?;
            self.marks.push(start);
            self.scanner.skip_token();
        }
        let (kind, start, end) = self.peek()?;
        if kind == Tok::Key {
            self.scanner.skip_token();
            let (kind, _, _) = self.peek()?;
            if !matches!(kind, Tok::Key | Tok::Value | Tok::BlockEnd) {
                self.states.push(State::BlockMappingValue);
                return self.parse_node(true, true);
            }
            self.state = State::BlockMappingValue;
            return Ok(empty_scalar(end));
        }
        if kind == Tok::BlockEnd {
            self.pop_state();
            self.marks.pop();
            self.scanner.skip_token();
            return Ok((Event::MappingEnd, start, end));
        }
        let context = self.marks.pop().unwrap_or_default();
        Err(self.parser_error_context(context, "did not find expected key", start))
    }

    fn block_mapping_value(&mut self) -> Res<(Event, Mark, Mark)> {
        let (kind, start, end) = self.peek()?;
        if kind == Tok::Value {
            self.scanner.skip_token();
            let (kind, _, _) = self.peek()?;
            if !matches!(kind, Tok::Key | Tok::Value | Tok::BlockEnd) {
                self.states.push(State::BlockMappingKey);
                return self.parse_node(true, true);
            }
            self.state = State::BlockMappingKey;
            return Ok(empty_scalar(end));
        }
        self.state = State::BlockMappingKey;
        Ok(empty_scalar(start))
    }

    fn flow_sequence_entry(&mut self, first: bool) -> Res<(Event, Mark, Mark)> {
        if first {
            let (_, start, _) = self.peek()?;
            self.marks.push(start);
            self.scanner.skip_token();
        }
        let (mut kind, mut start, mut end) = self.peek()?;
        if kind != Tok::FlowSequenceEnd {
            if !first {
                if kind == Tok::FlowEntry {
                    self.scanner.skip_token();
                    (kind, start, end) = self.peek()?;
                } else {
                    let context = self.marks.pop().unwrap_or_default();
                    return Err(self.parser_error_context(
                        context,
                        "did not find expected ',' or ']'",
                        start,
                    ));
                }
            }
            if kind == Tok::Key {
                self.state = State::FlowSequenceEntryMappingKey;
                self.scanner.skip_token();
                return Ok((Event::MappingStart(None, None, true), start, end));
            }
            if kind != Tok::FlowSequenceEnd {
                self.states.push(State::FlowSequenceEntry);
                return self.parse_node(false, false);
            }
        }
        self.pop_state();
        self.marks.pop();
        self.scanner.skip_token();
        Ok((Event::SequenceEnd, start, end))
    }

    fn flow_mapping_key(&mut self, first: bool) -> Res<(Event, Mark, Mark)> {
        if first {
            let (_, start, _) = self.peek()?;
            self.marks.push(start);
            self.scanner.skip_token();
        }
        let (mut kind, mut start, mut end) = self.peek()?;
        if kind != Tok::FlowMappingEnd {
            if !first {
                if kind == Tok::FlowEntry {
                    self.scanner.skip_token();
                    (kind, start, end) = self.peek()?;
                } else {
                    let context = self.marks.pop().unwrap_or_default();
                    return Err(self.parser_error_context(
                        context,
                        "did not find expected ',' or '}'",
                        start,
                    ));
                }
            }
            if kind == Tok::Key {
                self.scanner.skip_token();
                let (kind, start, _) = self.peek()?;
                if !matches!(kind, Tok::Value | Tok::FlowEntry | Tok::FlowMappingEnd) {
                    self.states.push(State::FlowMappingValue);
                    return self.parse_node(false, false);
                }
                self.state = State::FlowMappingValue;
                return Ok(empty_scalar(start));
            }
            if kind != Tok::FlowMappingEnd {
                self.states.push(State::FlowMappingEmptyValue);
                return self.parse_node(false, false);
            }
        }
        self.pop_state();
        self.marks.pop();
        self.scanner.skip_token();
        Ok((Event::MappingEnd, start, end))
    }

    fn flow_mapping_value(&mut self, empty: bool) -> Res<(Event, Mark, Mark)> {
        let (kind, start, _) = self.peek()?;
        if empty {
            self.state = State::FlowMappingKey;
            return Ok(empty_scalar(start));
        }
        if kind == Tok::Value {
            self.scanner.skip_token();
            let (kind, start, _) = self.peek()?;
            if !matches!(kind, Tok::FlowEntry | Tok::FlowMappingEnd) {
                self.states.push(State::FlowMappingKey);
                return self.parse_node(false, false);
            }
            self.state = State::FlowMappingKey;
            return Ok(empty_scalar(start));
        }
        self.state = State::FlowMappingKey;
        Ok(empty_scalar(start))
    }
}

fn empty_scalar(mark: Mark) -> (Event, Mark, Mark) {
    (
        Event::Scalar(None, None, String::new(), Style::Plain),
        mark,
        mark,
    )
}

/// The documents of a stream as the readers that use go-yaml v2 cut it
/// (helm's `releaseutil.SplitManifests`, apimachinery's `YAMLReader` behind
/// gitops-engine's `SplitYAML`): at each line starting with `---` and a
/// blank. Each piece starts at its `---`; the first at the stream's start.
/// go-yaml then reads only the first document of each piece
/// (`yaml.Unmarshal`), so text after an implicit document end is not read.
pub(crate) fn pieces(text: &str) -> Vec<(usize, Mark)> {
    let bytes = text.as_bytes();
    let mut out = vec![(0, Mark::default())];
    let mut mark = Mark::default();
    let mut at = 0;
    let mut counted = 0;
    for nl in memchr::memchr_iter(b'\n', bytes) {
        let next = nl + 1;
        let rest = &bytes[next..];
        if rest.starts_with(b"---")
            && matches!(rest.get(3), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
        {
            // Characters and lines up to `next`, from the last piece.
            mark.index += text[counted..next].chars().count();
            mark.line += memchr::memchr_iter(b'\n', &bytes[counted..next]).count();
            mark.column = 0;
            counted = next;
            at = next;
            out.push((at, mark));
        }
    }
    let _ = at;
    out
}

#[cfg(test)]
#[path = "goyaml2_tests.rs"]
mod tests;
