//! Our YAML loader: saphyr-parser events into `serde_json::Value` documents,
//! with scalars resolved the way Kubernetes (go-yaml) resolves them.
//!
//! Knows nothing of Kubernetes resources. See docs/dependencies.md for why this exists
//! instead of `serde_yaml` (which resolves `0755` as a string where Kubernetes
//! reads 493).
//!
//! Two dialects ([`Dialect`]), because Kubernetes tooling reads YAML with two
//! different Go libraries. The default, [`Dialect::Kyaml`], follows go-yaml
//! v3 as Kustomize uses it for resources; each point was checked against
//! `kubectl kustomize` (`tests/it/yaml_kubectl.rs`):
//! - plain scalars resolve as go-yaml resolves them: `0755` is 493, `1_000`
//!   is 1000, `on`/`yes` stay strings, dates become RFC 3339 timestamps;
//!   integral floats become integers as Go's JSON round trip makes them
//!   (`1e3` is 1000); `.inf`/`.nan` have no JSON form and stay strings
//!   holding their text;
//! - quoted and block scalars are strings; core tags force a type (a value
//!   that does not fit is an error); custom tags (`!Ref 3`) leave the text a
//!   string, as go-yaml does;
//! - mapping keys become strings as sigs.k8s.io/yaml makes them (`1.0` is
//!   "1", `~` is "null"); a collection as a key is an error. (Kustomize
//!   itself rejects non-string keys in resources; we keep them as text.)
//! - `<<` merges apply (explicit keys win, earlier merged maps win);
//! - a duplicate key is an error naming both lines;
//! - an empty plain value inside a flow collection (`{a: }`) is `""`, as
//!   Kustomize's emitter round trip leaves it; in block style it is null;
//! - every document counts in `Doc::index`, empty ones as `Value::Null`; a
//!   stream of only comments has no documents (Kustomize and Argo CD both
//!   yield no resources for it, and skip empty documents: callers should
//!   too).
//!
//! [`Dialect::SigsYaml`] differs only where go-yaml v2 does: YAML 1.1
//! booleans (`yes`, `on`, `y`...), dates kept as text, a repeated key
//! replacing the earlier one, `<<` applied where it stands (so it overrides
//! keys written before it), `!` keeping the text a string, flow empties
//! staying null, and a null key (`~: x`) an error, as sigs.k8s.io/yaml
//! makes it.
//!
//! In [`Dialect::SigsYaml`], a stream saphyr-parser refuses, or one with an
//! anchor or a `%` directive line, is read again by `goyaml2`, go-yaml
//! v2's scanner and parser: what go-yaml reads beyond YAML 1.2 (a flow
//! collection or quoted scalar continued left of its key's indentation)
//! loads, and what it refuses fails with its wording and line
//! ([`YamlError::go_yaml`]), each `---` piece read on its own and only its
//! first document, as `yaml.Unmarshal` after helm's or apimachinery's
//! splitting.
//!
//! In [`Dialect::Kyaml`] too, a stream saphyr-parser refuses is read again
//! by `goyaml2` (go-yaml v3 kept go-yaml v2's scanner), its scalars
//! resolved as go-yaml v3 resolves them: Kustomize renders a resource whose
//! flow sequence closes at its key's column. What both refuse keeps our
//! error.
//!
//! Known differences from go-yaml, all rare in manifests: where saphyr-parser
//! accepts a stream, we accept the YAML 1.2 escape `\/` that go-yaml rejects;
//! go-yaml's emitter, through which
//! Kustomize round-trips resources, adds line breaks to `>+`/`|+` scalars
//! with more-indented lines, which we do not imitate.
//!
//! The builder is iterative (an explicit stack), so nesting depth costs heap,
//! not call stack; saphyr-parser itself is iterative too and stops flow
//! nesting deeper than 255 on its own.

mod builder;
pub mod emit;
mod goyaml2;
pub mod json;
mod locate;
mod resolve;

pub use resolve::timestamp_rfc3339;

use std::borrow::Cow;
use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span};
use serde_json::{Map, Value};

use builder::new_builder;
use resolve::{scalar_key, scalar_value, tag_kind, value_key, CoreTag, TagKind};

/// Bounds that keep hostile input finite.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Deepest nesting of collections accepted.
    pub max_depth: usize,
    /// Most nodes that anchors and aliases may copy in one stream: each
    /// alias counts the nodes it copies, each anchor the nodes it records,
    /// and a scalar counts one node per started 256 bytes, so a long string
    /// repeated by aliases cannot exhaust memory either.
    pub max_alias_nodes: usize,
    /// Most documents in one stream.
    pub max_documents: usize,
    /// Largest stream read, in bytes: parsing costs memory in proportion,
    /// and no real manifest file comes near it.
    pub max_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 256,
            max_alias_nodes: 100_000,
            max_documents: 100_000,
            max_bytes: 64 * 1024 * 1024,
        }
    }
}

/// One document of a YAML stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    /// The document's value (`Value::Null` for an empty document), shared:
    /// readers that keep a document (the inventory scan, the directory
    /// renderer) hold this very value instead of a copy.
    pub value: std::sync::Arc<crate::json::LazyValue>,
    /// Position of the document in its stream, counting from 0 (empty documents included).
    pub index: usize,
    /// 1-based line where the document's content starts.
    pub line: u32,
}

impl Doc {
    /// The document's value, copied only when another reader shares it.
    #[must_use]
    pub fn into_value(self) -> Value {
        std::sync::Arc::try_unwrap(self.value)
            .map_or_else(|v| Value::clone(&v), crate::json::LazyValue::into_value)
    }
}

/// Why a stream could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at line {line} column {column}")]
pub struct YamlError {
    /// What went wrong, lower-case, no trailing period.
    pub message: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The error as go-yaml v2 words it (`yaml: line 3: mapping values are
    /// not allowed in this context`), where the stream was read as go-yaml
    /// v2 reads it ([`Dialect::SigsYaml`]) and go-yaml refuses it too.
    pub go_yaml: Option<String>,
}

impl YamlError {
    /// The error as sigs.k8s.io/yaml's go-yaml v2 prints it, after
    /// `error converting YAML to JSON: `: go-yaml's own text where known,
    /// else ours in its form (`yaml: line N: message`).
    #[must_use]
    pub fn go_yaml_text(&self) -> String {
        match &self.go_yaml {
            Some(t) => t.clone(),
            None => format!("yaml: line {}: {}", self.line, self.message),
        }
    }
}

/// One step of a path into a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSeg<'a> {
    /// A mapping key.
    Key(&'a str),
    /// A sequence index.
    Index(usize),
}

/// Which Go YAML library's reading to reproduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Dialect {
    /// go-yaml v3 through kyaml: how Kustomize reads resources, patches and
    /// everything it outputs (`on` is a string, `2001-12-14` becomes
    /// `"2001-12-14T00:00:00Z"`, a repeated key is an error).
    #[default]
    Kyaml,
    /// sigs.k8s.io/yaml (go-yaml v2, YAML 1.1): how Kustomize reads
    /// `kustomization.yaml`, and how Argo CD (gitops-engine `SplitYAML`) and
    /// kubectl read plain manifests (`on` is `true`, dates stay text, a
    /// repeated key silently replaces the earlier one).
    SigsYaml,
}

/// Loads every document of a stream with the default limits.
///
/// # Errors
/// Syntax errors, duplicate keys, and exceeded limits.
pub fn load_all(text: &str) -> Result<Vec<Doc>, YamlError> {
    load_all_with(text, &Limits::default())
}

/// Loads every document of a stream.
///
/// # Errors
/// Syntax errors, duplicate keys, and exceeded limits.
pub fn load_all_with(text: &str, limits: &Limits) -> Result<Vec<Doc>, YamlError> {
    load_all_as(text, Dialect::Kyaml, limits)
}

/// Loads every document of a stream, read as `dialect` reads it.
///
/// # Errors
/// Syntax errors, duplicate keys (in [`Dialect::Kyaml`]), and exceeded limits.
pub fn load_all_as(text: &str, dialect: Dialect, limits: &Limits) -> Result<Vec<Doc>, YamlError> {
    // The parser is third-party code fed hostile input; a panic in it must
    // become an error, never a crash of the whole run.
    std::panic::catch_unwind(|| load_inner(text, dialect, limits)).unwrap_or_else(|_| {
        Err(YamlError {
            message: "internal error in the yaml parser".to_owned(),
            line: 1,
            column: 1,
            go_yaml: None,
        })
    })
}

/// The 1-based line of the node at `path` in document `doc_index` of `text`,
/// or `None` when the stream does not parse or the path does not exist.
/// Used only when a finding needs a precise line, so it re-parses.
///
/// For a key the line is the key's; through an alias the path follows the
/// anchored node; a key brought in by `<<` is found where it is written.
#[must_use]
pub fn line_of(text: &str, doc_index: usize, path: &[PathSeg<'_>]) -> Option<u32> {
    std::panic::catch_unwind(|| locate::line_of(text, doc_index, path, locate::Mode::Found))
        .ok()
        .flatten()
}

fn load_inner(text: &str, dialect: Dialect, limits: &Limits) -> Result<Vec<Doc>, YamlError> {
    if text.len() > limits.max_bytes {
        return Err(YamlError {
            message: format!(
                "the file is larger than {} bytes, more than gitops-lint reads",
                limits.max_bytes
            ),
            line: 1,
            column: 1,
            go_yaml: None,
        });
    }
    let original = text;
    let sigs = dialect == Dialect::SigsYaml;
    // A directive line: the readers that use go-yaml v2 cut the stream at
    // `---` first, which leaves a directive in a piece of its own, and
    // saphyr-parser knows nothing of that. Rare: read all as go-yaml does.
    if sigs && (text.starts_with('%') || memchr::memmem::find(text.as_bytes(), b"\n%").is_some()) {
        return load_goyaml2(original, dialect, limits, false);
    }
    let mut text = Cow::Borrowed(text);
    let mut patches = 0;
    loop {
        match load_once(&text, dialect, limits) {
            Err(Failure::Scan(e)) if patch_tab_after_colon(&mut text, &e, &mut patches) => {}
            // Where go-yaml v2 is the real reader, a stream is read again as
            // it reads it when saphyr-parser (YAML 1.2) refuses it, for
            // go-yaml reads some it refuses (a flow collection or quoted
            // scalar continued left of its key's indentation) and words its
            // errors otherwise; and when it has an anchor or alias, for
            // go-yaml allows fewer characters in an anchor's name
            // (`scannerc.go` `yaml_parser_scan_anchor`: letters, digits, `_`
            // and `-`). Anchors are rare in manifests.
            // A stream saphyr-parser reads but the loader refuses (a
            // collection as a key, say) may be one go-yaml refuses as a
            // syntax error: it judges that too.
            Err(Failure::Scan(_) | Failure::Load(_)) | Ok((_, true)) if sigs => {
                return load_goyaml2(original, dialect, limits, false)
            }
            // go-yaml v3 (kyaml's `ByteReader`, which cuts the stream at
            // `---` lines and decodes the first document of each piece)
            // has go-yaml v2's scanner: it too reads a flow collection or
            // quoted scalar continued left of its key's indentation, which
            // YAML 1.2 refuses (`kubectl kustomize` renders a StatefulSet
            // whose `command: [` closes at the key's column). Such a stream
            // is read again that way, its scalars and repeated keys still
            // judged as go-yaml v3 judges them; when go-yaml refuses it
            // too, the error stays ours.
            Err(Failure::Scan(e)) => {
                return load_goyaml2(original, dialect, limits, false).map_err(|_| scan_error(&e))
            }
            Err(Failure::Load(e)) => return Err(e),
            Ok((docs, _)) => return Ok(docs),
        }
    }
}

enum Failure {
    Scan(ScanError),
    Load(YamlError),
}

impl From<YamlError> for Failure {
    fn from(e: YamlError) -> Self {
        Failure::Load(e)
    }
}

/// saphyr-parser rejects a tab between `:` and a value on the same line
/// (`key:<TAB>value`), which go-yaml and kubectl accept. When that is the
/// error, the tabs it points at are separation, not content, so turning
/// them into spaces (same length: every position stays put) and parsing
/// again reads the text as go-yaml does. Each patch costs a re-parse, so
/// patching stops after a fixed amount of re-parsed text.
pub fn patch_tab_after_colon(text: &mut Cow<'_, str>, e: &ScanError, patches: &mut usize) -> bool {
    const REPARSE_BUDGET: usize = 64 << 20;
    if e.info() != "':' must be followed by a valid YAML whitespace"
        || patches.saturating_add(1).saturating_mul(text.len()) > REPARSE_BUDGET
    {
        return false;
    }
    // The marker is a character index, just past the tabs.
    let Some(end) = text
        .char_indices()
        .nth(e.marker().index())
        .map(|(at, _)| at)
    else {
        return false;
    };
    let head = &text[..end];
    let tabs = head.len() - head.trim_end_matches('\t').len();
    if tabs == 0 || !head[..end - tabs].ends_with(':') {
        return false;
    }
    let start = end - tabs;
    text.to_mut().replace_range(start..end, &" ".repeat(tabs));
    *patches += 1;
    true
}

/// The first document of `text` as sigs.k8s.io/yaml's `Unmarshal` reads
/// it (Helm's `fromYaml`, a values file): go-yaml v2 reads that document
/// and nothing after it, so a later document's error does not count.
/// `Value::Null` when there is none.
///
/// # Errors
/// The first document's syntax error (go-yaml's, in
/// [`YamlError::go_yaml`]), or an exceeded limit.
pub fn load_first_sigs(text: &str, limits: &Limits) -> Result<Value, YamlError> {
    let docs = match load_all_as(text, Dialect::SigsYaml, limits) {
        Ok(docs) => docs,
        Err(e) if text.len() > limits.max_bytes => return Err(e),
        Err(_) => std::panic::catch_unwind(|| load_goyaml2(text, Dialect::SigsYaml, limits, true))
            .unwrap_or_else(|_| {
                Err(YamlError {
                    message: "internal error in the yaml parser".to_owned(),
                    line: 1,
                    column: 1,
                    go_yaml: None,
                })
            })?,
    };
    Ok(docs.into_iter().next().map_or(Value::Null, Doc::into_value))
}

/// Loads `text` through [`goyaml2`], go-yaml's scanner and parser, its
/// events built as saphyr-parser's are and its scalars resolved as
/// `dialect` resolves them; with `first_only`, only the first document, as
/// `yaml.Unmarshal` reads it.
fn load_goyaml2(
    text: &str,
    dialect: Dialect,
    limits: &Limits,
    first_only: bool,
) -> Result<Vec<Doc>, YamlError> {
    let mut builder = new_builder(text, dialect, limits);
    // go-yaml's block scalars need no end-of-stream fix.
    builder.exact_block_scalars = true;
    // Anchor names to ids, per document as go-yaml scopes them
    // (`decode.go` `parser.anchor`): a redefined name names the new node.
    let mut anchors: HashMap<String, usize> = HashMap::new();
    let mut next_id = 0usize;
    let mut anchor_id = |name: Option<String>, anchors: &mut HashMap<String, usize>| {
        name.map_or(0, |n| {
            next_id += 1;
            anchors.insert(n, next_id);
            next_id
        })
    };
    let mut contains_itself: Option<YamlError> = None;
    let mut pieces = goyaml2::pieces(text);
    if first_only {
        // The first piece with a document in it: the pieces before it hold
        // only blanks and comments (`---` starts the next piece).
        let (mut first, mut n) = (0, 0);
        for (i, &(start, _)) in pieces.iter().enumerate() {
            let end = pieces.get(i + 1).map_or(text.len(), |p| p.0);
            first = i;
            n = i + 1;
            if has_content(&text[start..end]) {
                break;
            }
        }
        pieces = pieces.drain(first..n).collect();
    }
    let zero = Span::new(
        saphyr_parser::Marker::new(0, 1, 0),
        saphyr_parser::Marker::new(0, 1, 0),
    );
    builder.event(Event::StreamStart, zero)?;
    for (i, &(start, mark)) in pieces.iter().enumerate() {
        let end = pieces.get(i + 1).map_or(text.len(), |p| p.0);
        let mut parser = goyaml2::Parser::new(text, start, end, mark);
        loop {
            let (event, start, end) = match parser.next_event() {
                Ok(Some(e)) => e,
                Ok(None) => break,
                Err(e) => {
                    let (line, column) = e.position();
                    return Err(YamlError {
                        message: e.message(),
                        line,
                        column,
                        go_yaml: Some(e.text()),
                    });
                }
            };
            let last = matches!(event, goyaml2::Event::DocumentEnd);
            if matches!(
                event,
                goyaml2::Event::StreamStart | goyaml2::Event::StreamEnd
            ) {
                continue;
            }
            let marker =
                |m: goyaml2::Mark| saphyr_parser::Marker::new(m.index, m.line + 1, m.column);
            let mut span = Span::new(marker(start), marker(end));
            let tag = |t: Option<String>| t.map(|t| Cow::Owned(go_tag(&t)));
            let event = match event {
                goyaml2::Event::StreamStart | goyaml2::Event::StreamEnd => continue,
                goyaml2::Event::DocumentStart => {
                    anchors.clear();
                    Event::DocumentStart(false)
                }
                goyaml2::Event::DocumentEnd => Event::DocumentEnd,
                goyaml2::Event::Alias(name) => match anchors.get(&name) {
                    // An alias inside its own anchor's node: go-yaml fails
                    // when decoding (`decode.go` `decoder.alias`), after the
                    // whole document parsed; read on with a null there.
                    Some(&id) if !builder.anchors.contains_key(&id) => {
                        if contains_itself.is_none() {
                            contains_itself = Some(YamlError {
                                message: format!("anchor '{name}' value contains itself"),
                                line: line(span),
                                column: column(span),
                                go_yaml: Some(format!(
                                    "yaml: anchor '{name}' value contains itself"
                                )),
                            });
                        }
                        Event::Scalar(Cow::Borrowed("~"), ScalarStyle::Plain, 0, None)
                    }
                    Some(&id) => Event::Alias(id),
                    None => {
                        return Err(YamlError {
                            message: format!("unknown anchor '{name}' referenced"),
                            line: line(span),
                            column: column(span),
                            go_yaml: Some(format!("yaml: unknown anchor '{name}' referenced")),
                        })
                    }
                },
                goyaml2::Event::Scalar(anchor, t, value, style) => {
                    let style = match style {
                        goyaml2::Style::Plain => ScalarStyle::Plain,
                        goyaml2::Style::Single => ScalarStyle::SingleQuoted,
                        goyaml2::Style::Double => ScalarStyle::DoubleQuoted,
                        goyaml2::Style::Literal => ScalarStyle::Literal,
                        goyaml2::Style::Folded => ScalarStyle::Folded,
                    };
                    if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) {
                        // Placed as saphyr-parser places a block scalar: at its
                        // first content line, which `scalar_line` reads back.
                        let breaks = value.bytes().take_while(|&b| b == b'\n').count();
                        span.start =
                            saphyr_parser::Marker::new(start.index, start.line + 2 + breaks, 0);
                    }
                    let id = anchor_id(anchor, &mut anchors);
                    Event::Scalar(Cow::Owned(value), style, id, tag(t))
                }
                goyaml2::Event::SequenceStart(anchor, t, _) => {
                    Event::SequenceStart(anchor_id(anchor, &mut anchors), tag(t))
                }
                goyaml2::Event::MappingStart(anchor, t, _) => {
                    Event::MappingStart(anchor_id(anchor, &mut anchors), tag(t))
                }
                goyaml2::Event::SequenceEnd => Event::SequenceEnd,
                goyaml2::Event::MappingEnd => Event::MappingEnd,
            };
            builder.event(event, span)?;
            if last {
                if let Some(e) = contains_itself.take() {
                    return Err(e);
                }
                // `yaml.Unmarshal` reads one document of the piece.
                break;
            }
        }
    }
    builder.event(Event::StreamEnd, zero)?;
    Ok(builder.docs)
}

/// Whether a piece holds more than blanks and comments.
fn has_content(piece: &str) -> bool {
    piece.lines().any(|l| {
        let t = l.trim_start_matches([' ', '\t', '\r', '\u{feff}']);
        !t.is_empty() && !t.starts_with('#')
    })
}

/// A tag go-yaml resolved (`tag:yaml.org,2002:str`, `!local`, a verbatim
/// URI) as saphyr-parser hands tags over: handle and suffix.
fn go_tag(t: &str) -> saphyr_parser::Tag {
    const CORE: &str = "tag:yaml.org,2002:";
    let (handle, suffix) = if let Some(s) = t.strip_prefix(CORE) {
        (CORE, s)
    } else if let Some(s) = t.strip_prefix('!') {
        ("!", s)
    } else {
        ("", t)
    };
    saphyr_parser::Tag {
        handle: handle.to_owned(),
        suffix: suffix.to_owned(),
    }
}

/// The documents, and whether any anchor or alias, or anything else
/// go-yaml v2 may read otherwise, was seen.
fn load_once(text: &str, dialect: Dialect, limits: &Limits) -> Result<(Vec<Doc>, bool), Failure> {
    let mut builder = new_builder(text, dialect, limits);
    let mut parser = Parser::new_from_str(text);
    let mut anchors = false;
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(Failure::Scan)?;
        anchors |= matches!(
            event,
            Event::Alias(_)
                | Event::Scalar(_, _, 1.., _)
                | Event::SequenceStart(1.., _)
                | Event::MappingStart(1.., _)
        );
        if builder.event(event, span)? {
            break;
        }
    }
    Ok((builder.docs, anchors || builder.go_yaml_differs))
}

/// The 1-based line of a span's start.
#[must_use]
pub fn line(span: Span) -> u32 {
    u32::try_from(span.start.line()).unwrap_or(u32::MAX)
}

/// The 1-based line of a scalar. A block scalar's event starts at its first
/// non-empty content line; its `|` or `>` header is above that, by one line
/// plus each leading empty line (which the value holds as leading breaks).
#[must_use]
pub fn scalar_line(span: Span, text: &str, style: ScalarStyle) -> u32 {
    let at = line(span);
    if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) {
        let breaks = text.bytes().take_while(|&b| b == b'\n').count();
        let above = u32::try_from(breaks).unwrap_or(u32::MAX).saturating_add(1);
        at.saturating_sub(above).max(1)
    } else {
        at
    }
}

fn column(span: Span) -> u32 {
    u32::try_from(span.start.col() + 1).unwrap_or(u32::MAX)
}

fn scan_error(e: &ScanError) -> YamlError {
    let mut message = e.info().trim_end_matches('.').to_owned();
    if let Some(first) = message.get(..1) {
        let lower = first.to_lowercase();
        message.replace_range(..1, &lower);
    }
    YamlError {
        message,
        line: u32::try_from(e.marker().line()).unwrap_or(u32::MAX).max(1),
        column: u32::try_from(e.marker().col() + 1).unwrap_or(u32::MAX),
        go_yaml: None,
    }
}

/// Decodes YAML or JSON text the way Argo CD's `sigs.k8s.io/yaml.Unmarshal`
/// does: only the first document of a stream is read, and an empty stream
/// is `null`.
///
/// # Errors
/// A syntax error, as one line.
pub fn parse_first_doc(text: &str) -> Result<Value, String> {
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        return Ok(Value::Null);
    }
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        // Argo CD converts only text starting with `{` as JSON directly; JSON
        // is YAML, so either path gives the same value for valid input.
        if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
            return Ok(v);
        }
    }
    let docs = load_all(text).map_err(|e| e.to_string())?;
    Ok(docs.into_iter().next().map_or(Value::Null, Doc::into_value))
}

#[cfg(test)]
mod tests;
