//! The document builder: go-yaml's composer and decoder over parser
//! events (anchors, merges, the node budget, the two dialects), one
//! event at a time on an explicit stack.

use super::*;

pub(crate) fn new_builder<'t>(text: &'t str, dialect: Dialect, limits: &Limits) -> Builder<'t> {
    Builder {
        text,
        cursor: (0, 0),
        ascii: text.is_ascii(),
        dialect,
        limits: *limits,
        docs: Vec::new(),
        stack: Vec::new(),
        anchors: HashMap::new(),
        budget: 0,
        doc: None,
        line_starts: std::cell::OnceCell::new(),
        exact_block_scalars: false,
        go_yaml_differs: false,
        deferred: None,
    }
}

/// A node's budget weight: one per node, strings one per started 256 bytes.
fn scalar_weight(value: &Value) -> usize {
    match value {
        Value::String(s) => 1 + s.len() / 256,
        _ => 1,
    }
}

/// A completed anchored node, kept for its aliases.
pub(crate) struct Anchored {
    value: Value,
    /// Budget weight of the subtree.
    weight: usize,
    /// Nesting height of the subtree (0 for a scalar).
    height: usize,
    /// The key text when the node is a scalar (an alias may be a key).
    key: Option<String>,
}

/// A collection being built.
struct Frame {
    kind: FrameKind,
    /// Written in flow style (`[...]`, `{...}`).
    flow: bool,
    anchor: usize,
    weight: usize,
    height: usize,
    span: Span,
}

enum FrameKind {
    Seq(Vec<Value>),
    Map(MapFrame),
}

struct MapFrame {
    map: Map<String, Value>,
    /// The key whose value is being read.
    key: Option<PendingKey>,
    /// The value of `<<` and the line of that key.
    merge: Option<(Value, Span)>,
}

struct PendingKey {
    text: String,
    merge: bool,
    span: Span,
}

struct DocState {
    index: usize,
    start: Span,
    root: Option<(Value, u32)>,
    first_line: Option<u32>,
}

pub(crate) struct Builder<'t> {
    text: &'t str,
    /// A (character index, byte offset) pair for [`Builder::byte_offset`].
    cursor: (usize, usize),
    /// Whether the text is ASCII, where character indices are byte offsets.
    ascii: bool,
    dialect: Dialect,
    limits: Limits,
    pub(crate) docs: Vec<Doc>,
    stack: Vec<Frame>,
    pub(crate) anchors: HashMap<usize, Anchored>,
    /// Alias budget spent so far in the stream.
    budget: usize,
    doc: Option<DocState>,
    /// Byte offset of each line's start, computed on first use: looking up
    /// a line must not scan the whole stream per scalar.
    line_starts: std::cell::OnceCell<Vec<usize>>,
    /// Block scalars arrive as go-yaml reads them (from [`goyaml2`]), with
    /// no end-of-stream fix to make.
    pub(crate) exact_block_scalars: bool,
    /// Something go-yaml v2 reads otherwise than saphyr-parser was seen.
    pub(crate) go_yaml_differs: bool,
    /// A decoding error kept for the document's end ([`Builder::decode_error`]).
    deferred: Option<YamlError>,
}

fn err_at(message: impl Into<String>, span: Span) -> YamlError {
    YamlError {
        message: message.into(),
        line: line(span).max(1),
        column: column(span),
        go_yaml: None,
    }
}

impl Builder<'_> {
    /// Handles one event; `Ok(true)` at the end of the stream.
    pub(crate) fn event(&mut self, event: Event<'_>, span: Span) -> Result<bool, YamlError> {
        match event {
            Event::StreamStart | Event::Nothing => {}
            Event::StreamEnd => return Ok(true),
            Event::DocumentStart(_) => {
                if self.docs.len() >= self.limits.max_documents {
                    return Err(err_at(
                        format!(
                            "more than {} documents in one stream",
                            self.limits.max_documents
                        ),
                        span,
                    ));
                }
                // Anchors are scoped to their document, as in go-yaml.
                self.anchors.clear();
                self.stack.clear();
                self.doc = Some(DocState {
                    index: self.docs.len(),
                    start: span,
                    root: None,
                    first_line: None,
                });
            }
            Event::DocumentEnd => {
                if let Some(e) = self.deferred.take() {
                    return Err(e);
                }
                if let Some(doc) = self.doc.take() {
                    let (value, line) = match doc.root {
                        Some((value, line)) => (value, line),
                        None => (Value::Null, line(doc.start)),
                    };
                    self.docs.push(Doc {
                        value: std::sync::Arc::new(value.into()),
                        index: doc.index,
                        line: line.max(1),
                    });
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                let text = self.clip_at_eof(text, style, span);
                self.note_first_line(span, Some((&text, style)));
                if self.dialect == Dialect::SigsYaml
                    && style == ScalarStyle::Plain
                    && self.stack.last().is_some_and(|f| f.flow)
                    && (text.contains('?') || (text.is_empty() && self.waits_for_key()))
                {
                    // go-yaml v2 ends a plain scalar in a flow collection at
                    // `?` (`scannerc.go` `yaml_parser_scan_plain_scalar`) and
                    // has no empty key there: let it judge.
                    self.go_yaml_differs = true;
                }
                let tag = tag_kind(tag.as_deref(), self.dialect);
                if self.waits_for_key() {
                    let null_key = || match tag {
                        TagKind::None => {
                            style == ScalarStyle::Plain
                                && matches!(&*text, "" | "~" | "null" | "Null" | "NULL")
                        }
                        TagKind::Core(CoreTag::Null) => true,
                        _ => false,
                    };
                    if self.dialect == Dialect::SigsYaml && null_key() {
                        // sigs.k8s.io/yaml `convertToJSONableObject`:
                        // "unsupported map key of type: %!s(<nil>), …",
                        // Go's %#v of the value, not reproduced.
                        self.decode_error(err_at(
                            "a null mapping key, which sigs.k8s.io/yaml refuses (unsupported map key)",
                            span,
                        ))?;
                    }
                    let key =
                        scalar_key(&text, style, tag, self.dialect).map_err(|m| err_at(m, span))?;
                    let merge = style == ScalarStyle::Plain
                        && text == "<<"
                        && matches!(tag, TagKind::None | TagKind::Core(CoreTag::Merge));
                    if anchor != 0 {
                        let value = scalar_value(&text, style, tag, self.dialect)
                            .map_err(|m| err_at(m, span))?;
                        let weight = scalar_weight(&value);
                        self.record_anchor(anchor, value, weight, 0, Some(key.clone()), span)?;
                    }
                    self.start_key(key, merge, span)?;
                } else if self.kustomize_empty_in_flow(&text, style, tag) {
                    self.complete(Value::String(String::new()), 1, 0, span)?;
                } else {
                    let value = scalar_value(&text, style, tag, self.dialect)
                        .map_err(|m| err_at(m, span))?;
                    let weight = scalar_weight(&value);
                    if anchor != 0 {
                        let key = match &value {
                            Value::Array(_) | Value::Object(_) => None,
                            v => Some(value_key(v, &text)),
                        };
                        self.record_anchor(anchor, value.clone(), weight, 0, key, span)?;
                    }
                    self.complete(value, weight, 0, span)?;
                }
            }
            Event::Alias(id) => {
                self.note_first_line(span, None);
                let Some(anchored) = self.anchors.get(&id) else {
                    return Err(err_at("alias refers to a node that contains it", span));
                };
                let (key, weight, height) =
                    (anchored.key.clone(), anchored.weight, anchored.height);
                if self.waits_for_key() {
                    let Some(key) = key else {
                        return Err(err_at(
                            "a mapping or sequence cannot be a mapping key",
                            span,
                        ));
                    };
                    self.start_key(key, false, span)?;
                } else {
                    self.spend(weight, span)?;
                    if self.stack.len() + height > self.limits.max_depth {
                        return Err(self.too_deep(span));
                    }
                    let value = self
                        .anchors
                        .get(&id)
                        .map_or(Value::Null, |a| a.value.clone());
                    // go-yaml takes a sequence of maps after `<<` only when
                    // written in place; an alias must name a mapping.
                    if value.is_array() && self.merge_pending() {
                        return Err(err_at(MERGE_WANTS_MAP, span));
                    }
                    self.complete(value, weight, height, span)?;
                }
            }
            Event::SequenceStart(anchor, _) => {
                self.open(FrameKind::Seq(Vec::new()), anchor, span)?;
            }
            Event::MappingStart(anchor, _) => {
                let map = MapFrame {
                    map: Map::new(),
                    key: None,
                    merge: None,
                };
                self.open(FrameKind::Map(map), anchor, span)?;
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(span)?,
        }
        Ok(false)
    }

    fn note_first_line(&mut self, span: Span, scalar: Option<(&str, ScalarStyle)>) {
        if !self.stack.is_empty() {
            return;
        }
        if let Some(doc) = self.doc.as_mut() {
            if doc.first_line.is_none() {
                // An empty document is an empty plain scalar placed at the
                // next marker; its line is the document's own start.
                doc.first_line = Some(match scalar {
                    Some(("", ScalarStyle::Plain)) => line(doc.start),
                    Some((text, style)) => scalar_line(span, text, style),
                    None => line(span),
                });
            }
        }
    }

    /// Kustomize round-trips resources through go-yaml's emitter, which may
    /// not write an empty plain scalar in flow style and quotes it (`''`):
    /// so `{a: }` comes out of `kubectl kustomize` as `{a: ""}`, where the
    /// block form `a:` stays null. Checked with a JSON-patch `test` op.
    fn kustomize_empty_in_flow(&self, text: &str, style: ScalarStyle, tag: TagKind) -> bool {
        self.dialect == Dialect::Kyaml
            && text.is_empty()
            && style == ScalarStyle::Plain
            && tag == TagKind::None
            && self.stack.last().is_some_and(|f| f.flow)
    }

    /// Whether the mapping on top of the stack waits for the value of `<<`.
    fn merge_pending(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Frame {
                kind: FrameKind::Map(MapFrame {
                    key: Some(PendingKey { merge: true, .. }),
                    ..
                }),
                ..
            })
        )
    }

    /// Whether the mapping on top of the stack waits for a key.
    fn waits_for_key(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Frame {
                kind: FrameKind::Map(MapFrame { key: None, .. }),
                ..
            })
        )
    }

    fn start_key(&mut self, text: String, merge: bool, span: Span) -> Result<(), YamlError> {
        let lenient = self.dialect == Dialect::SigsYaml;
        let Some(Frame {
            kind: FrameKind::Map(map),
            ..
        }) = self.stack.last_mut()
        else {
            return Ok(());
        };
        let first = if lenient {
            None
        } else if merge {
            map.merge.as_ref().map(|(_, s)| line(*s))
        } else if map.map.contains_key(&text) {
            Some(0)
        } else {
            None
        };
        map.key = Some(PendingKey { text, merge, span });
        if let Some(first) = first {
            return Err(self.duplicate(first, span));
        }
        Ok(())
    }

    /// The error for a key seen twice in one mapping. Finding the first
    /// occurrence re-parses the document (errors are rare; keeping a line per
    /// key would cost every load).
    fn duplicate(&self, first_line: u32, span: Span) -> YamlError {
        let mut path = Vec::with_capacity(self.stack.len());
        let mut key_text = String::new();
        for frame in &self.stack {
            match &frame.kind {
                FrameKind::Seq(items) => path.push(PathSeg::Index(items.len())),
                FrameKind::Map(m) => {
                    if let Some(k) = &m.key {
                        path.push(PathSeg::Key(&k.text));
                        key_text.clone_from(&k.text);
                    }
                }
            }
        }
        let first_line = if first_line > 0 {
            Some(first_line)
        } else {
            self.doc.as_ref().and_then(|d| {
                locate::line_of(self.text, d.index, &path, locate::Mode::FirstDuplicate)
            })
        };
        let what = if key_text == "<<" { "merge key" } else { "key" };
        let message = match first_line {
            Some(l) => format!("duplicate {what} `{key_text}` (first at line {l})"),
            None => format!("duplicate {what} `{key_text}`"),
        };
        err_at(message, span)
    }

    /// An error go-yaml v2 raises only once the document is parsed (when
    /// decoding it): at once from saphyr-parser's events, whose stream is
    /// then read again by [`goyaml2`]; there kept until the document's
    /// end, for a syntax error further on comes first.
    fn decode_error(&mut self, e: YamlError) -> Result<(), YamlError> {
        if !self.exact_block_scalars {
            return Err(e);
        }
        self.deferred.get_or_insert(e);
        Ok(())
    }

    fn open(&mut self, kind: FrameKind, anchor: usize, span: Span) -> Result<(), YamlError> {
        self.note_first_line(span, None);
        if self.waits_for_key() {
            // go-yaml: "invalid map key: %#v" when decoding, not reproduced.
            self.decode_error(err_at(
                "a mapping or sequence cannot be a mapping key",
                span,
            ))?;
        }
        if self.stack.len() >= self.limits.max_depth {
            return Err(self.too_deep(span));
        }
        // Nothing nested in a flow collection can be in block style.
        let flow = self.stack.last().is_some_and(|f| f.flow) || self.opens_flow(span);
        self.stack.push(Frame {
            kind,
            flow,
            anchor,
            weight: 1,
            height: 1,
            span,
        });
        Ok(())
    }

    /// Whether a collection starting at `span` is in flow style: its start
    /// event ends just after the `[` or `{` (after any anchor or tag), where
    /// a block collection's ends at its first entry, after `:`, `-` or an
    /// anchor or tag, none of which can end in a bracket.
    fn opens_flow(&mut self, span: Span) -> bool {
        let end = self.byte_offset(span.end.index());
        self.text
            .get(..end)
            .map(str::trim_end)
            .is_some_and(|t| t.ends_with(['[', '{']))
    }

    /// The byte offset of a character index (saphyr-parser's markers count
    /// characters). Events arrive in text order, so a cursor moving forward
    /// makes this linear over the whole stream.
    /// Clip chomping (a `|` or `>` header with no `-` or `+`) keeps at most
    /// one final line break, and none when the content ends the stream
    /// without one (go-yaml). saphyr-parser adds a `\n` in both cases: fix it.
    fn clip_at_eof<'a>(&self, text: Cow<'a, str>, style: ScalarStyle, span: Span) -> Cow<'a, str> {
        let block = matches!(style, ScalarStyle::Literal | ScalarStyle::Folded);
        if !block || !text.ends_with('\n') || self.exact_block_scalars {
            return text;
        }
        let header_line = scalar_line(span, &text, style) as usize;
        let header = self.line_text(header_line.saturating_sub(1));
        let indicators = header.rfind(['|', '>']).map_or("", |i| {
            header[i + 1..]
                .split(|c: char| c.is_whitespace() || c == '#')
                .next()
                .unwrap_or("")
        });
        if indicators.contains(['+', '-']) {
            return text;
        }
        let body = text.trim_end_matches('\n');
        let last_line = self.line_starts().len();
        let last_has_content = self
            .text
            .rsplit('\n')
            .next()
            .is_some_and(|l| !l.trim().is_empty());
        // The scalar reaches the end of the stream when nothing but blanks
        // follows where it ends on the last line (a key after it, `j: 1`,
        // starts the last line instead, and the break before it is kept).
        let rest_blank = span.end.line() >= last_line
            && self
                .line_text(last_line.saturating_sub(1))
                .chars()
                .skip(span.end.col())
                .all(char::is_whitespace);
        let ends_stream_without_break = last_has_content && rest_blank;
        if ends_stream_without_break || body.is_empty() {
            return Cow::Owned(body.to_string());
        }
        if body.len() + 1 == text.len() {
            return text;
        }
        Cow::Owned(format!("{body}\n"))
    }

    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(memchr::memchr_iter(b'\n', self.text.as_bytes()).map(|i| i + 1))
                .collect()
        })
    }

    /// Line `n` (0-based) as `str::lines` yields it (no line break, no
    /// final `\r`), or `""` past the end.
    fn line_text(&self, n: usize) -> &str {
        let starts = self.line_starts();
        let Some(&start) = starts.get(n) else {
            return "";
        };
        let end = starts.get(n + 1).map_or(self.text.len(), |&next| next - 1);
        let line = self.text.get(start..end).unwrap_or("");
        line.strip_suffix('\r').unwrap_or(line)
    }

    fn byte_offset(&mut self, char_index: usize) -> usize {
        if self.ascii {
            return char_index.min(self.text.len());
        }
        let (mut chars, mut bytes) = self.cursor;
        if char_index < chars {
            (chars, bytes) = (0, 0);
        }
        let rest = self.text.get(bytes..).unwrap_or_default();
        let mut it = rest.char_indices();
        while chars < char_index {
            match it.next() {
                Some(_) => chars += 1,
                None => break,
            }
        }
        let at = it.next().map_or(self.text.len(), |(i, _)| bytes + i);
        bytes = at;
        self.cursor = (chars, bytes);
        at
    }

    fn too_deep(&self, span: Span) -> YamlError {
        err_at(
            format!("nesting deeper than {} levels", self.limits.max_depth),
            span,
        )
    }

    fn close(&mut self, span: Span) -> Result<(), YamlError> {
        let Some(frame) = self.stack.pop() else {
            return Err(err_at("unbalanced end of collection", span));
        };
        let value = match frame.kind {
            FrameKind::Seq(items) => Value::Array(items),
            FrameKind::Map(m) => Value::Object(apply_merge(m.map, m.merge)?),
        };
        if frame.anchor != 0 {
            self.record_anchor(
                frame.anchor,
                value.clone(),
                frame.weight,
                frame.height,
                None,
                frame.span,
            )?;
        }
        self.complete(value, frame.weight, frame.height, frame.span)
    }

    fn spend(&mut self, weight: usize, span: Span) -> Result<(), YamlError> {
        self.budget = self.budget.saturating_add(weight);
        if self.budget > self.limits.max_alias_nodes {
            return Err(err_at(
                format!(
                    "anchors and aliases expand to more than {} nodes",
                    self.limits.max_alias_nodes
                ),
                span,
            ));
        }
        Ok(())
    }

    fn record_anchor(
        &mut self,
        id: usize,
        value: Value,
        weight: usize,
        height: usize,
        key: Option<String>,
        span: Span,
    ) -> Result<(), YamlError> {
        // Recording copies the subtree, so it is charged like an alias.
        self.spend(weight, span)?;
        self.anchors.insert(
            id,
            Anchored {
                value,
                weight,
                height,
                key,
            },
        );
        Ok(())
    }

    /// Places a finished node in its parent (or as the document root).
    fn complete(
        &mut self,
        value: Value,
        weight: usize,
        height: usize,
        span: Span,
    ) -> Result<(), YamlError> {
        let Some(parent) = self.stack.last_mut() else {
            if let Some(doc) = self.doc.as_mut() {
                let first = doc.first_line.unwrap_or_else(|| line(span));
                doc.root = Some((value, first));
            }
            return Ok(());
        };
        parent.weight = parent.weight.saturating_add(weight);
        parent.height = parent.height.max(height + 1);
        match &mut parent.kind {
            FrameKind::Seq(items) => items.push(value),
            FrameKind::Map(m) if m.key.is_none() && self.deferred.is_some() => {
                // A collection as a key, already an error kept for the
                // document's end: a placeholder key reads on.
                m.key = Some(PendingKey {
                    text: String::new(),
                    merge: false,
                    span,
                });
            }
            FrameKind::Map(m) => {
                let Some(key) = m.key.take() else {
                    return Err(err_at("mapping value without a key", span));
                };
                if key.merge && self.dialect == Dialect::SigsYaml {
                    // go-yaml v2 merges where `<<` stands: over the keys
                    // before it, under the keys after it.
                    let merged = apply_merge(Map::new(), Some((value, key.span)))?;
                    m.map.extend(merged);
                } else if key.merge {
                    m.merge = Some((value, key.span));
                } else {
                    m.map.insert(key.text, value);
                }
            }
        }
        Ok(())
    }
}

/// go-yaml's message for a `<<` value that is not a mapping.
const MERGE_WANTS_MAP: &str = "map merge requires map or sequence of maps as the value";

/// Applies a `<<` value under go-yaml's rules: a mapping, or a sequence of
/// mappings where earlier ones win; explicit keys always win.
fn apply_merge(
    mut map: Map<String, Value>,
    merge: Option<(Value, Span)>,
) -> Result<Map<String, Value>, YamlError> {
    let Some((source, span)) = merge else {
        return Ok(map);
    };
    let bad = || err_at(MERGE_WANTS_MAP, span);
    let sources = match source {
        Value::Object(m) => vec![m],
        Value::Array(items) => items
            .into_iter()
            .map(|item| match item {
                Value::Object(m) => Ok(m),
                _ => Err(bad()),
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => return Err(bad()),
    };
    for source in sources {
        for (k, v) in source {
            map.entry(k).or_insert(v);
        }
    }
    Ok(map)
}
