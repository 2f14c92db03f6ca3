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

mod scanner;

use scanner::{Scanner, Tok};

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
mod tests;
