//! go-yaml v2's scanner (`scannerc.go`, `readerc.go`): the reader, the
//! token queue with its simple keys and indentation, and the `fetch_*`
//! steps; the token scanners themselves are in [`tokens`].

use super::*;

mod tokens;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
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
pub(super) struct Token {
    pub(super) kind: Tok,
    pub(super) start: Mark,
    pub(super) end: Mark,
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
pub(super) struct Scanner<'t> {
    text: &'t [u8],
    /// Bytes at or past `end` read as NUL, go-yaml's end of input.
    end: usize,
    /// Set when a byte past `end` was looked at while a disallowed
    /// character lies there: go-yaml's reader would have failed then.
    pub(super) reader_failed: Cell<bool>,
    /// The reader's error position stand-in: where the bad character is.
    bad_mark: Option<usize>,
    /// The line the scanned text starts on: go-yaml counts from there.
    pub(super) base_line: usize,
    pos: usize,
    mark: Mark,
    tokens: VecDeque<Token>,
    tokens_parsed: usize,
    token_available: bool,
    stream_start_produced: bool,
    pub(super) stream_end_produced: bool,
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
    pub(super) fn new(text: &'t str, start: usize, end: usize, mark: Mark) -> Self {
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

    pub(super) fn reader_error(&self) -> GoError {
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
    pub(super) fn peek(&mut self) -> Res<&Token> {
        if !self.token_available {
            self.fetch_more_tokens()?;
        }
        self.tokens
            .front()
            .ok_or_else(|| self.error(self.mark, "internal error: no token"))
    }

    pub(super) fn skip_token(&mut self) {
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
}
