//! Finding the line of a node by path: re-parses one document into a light
//! tree of positions (no values) and walks the path through it.
//!
//! Knows nothing of scalar values beyond the key text, which it computes
//! exactly as the loader does so that paths built from loaded values match.

use std::collections::HashMap;

use std::borrow::Cow;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError};

use super::resolve::{scalar_key, tag_kind, CoreTag, TagKind};
use super::{line, patch_tab_after_colon, scalar_line, Dialect, PathSeg};

/// Marks a mapping entry whose value has not started yet.
const PENDING: usize = usize::MAX;

enum Node {
    Leaf { line: u32 },
    Alias { line: u32, target: usize },
    Seq { line: u32, items: Vec<usize> },
    Map { line: u32, entries: Vec<Entry> },
}

struct Entry {
    /// The key's text in each dialect (they differ for `on`, `yes`...);
    /// `None` for a `<<` merge entry.
    key: Option<[String; 2]>,
    key_line: u32,
    value: usize,
}

impl Node {
    fn line(&self) -> u32 {
        match self {
            Node::Leaf { line }
            | Node::Alias { line, .. }
            | Node::Seq { line, .. }
            | Node::Map { line, .. } => *line,
        }
    }
}

/// How to search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// For callers: the stream must parse, and of repeated keys the last
    /// counts (it is the one [`Dialect::SigsYaml`] keeps).
    Found,
    /// For the loader's duplicate-key error: resolve in whatever parsed
    /// before an error, and take the first of repeated keys.
    FirstDuplicate,
}

/// The line of the node at `path` in document `doc_index`.
pub(crate) fn line_of(
    text: &str,
    doc_index: usize,
    path: &[PathSeg<'_>],
    mode: Mode,
) -> Option<u32> {
    let mut text = Cow::Borrowed(text);
    let mut patches = 0;
    loop {
        let (nodes, failure) = build(&text, doc_index);
        match failure {
            None => return walk(&nodes, path, mode),
            Some(Stop::ParseError(e)) if patch_tab_after_colon(&mut text, &e, &mut patches) => {}
            Some(_) if mode == Mode::FirstDuplicate => return walk(&nodes, path, mode),
            Some(_) => return None,
        }
    }
}

/// Why building a position tree stopped early.
enum Stop {
    /// A parse error.
    ParseError(ScanError),
    /// A structure the loader rejects.
    Rejected,
}

/// Builds the position tree of one document, with why it stopped early.
fn build(text: &str, doc_index: usize) -> (Vec<Node>, Option<Stop>) {
    let mut nodes: Vec<Node> = Vec::new();
    // Open collections, by node index.
    let mut stack: Vec<usize> = Vec::new();
    let mut anchors: HashMap<usize, usize> = HashMap::new();
    let mut anchor_keys: HashMap<usize, [String; 2]> = HashMap::new();
    let mut doc: Option<usize> = None;
    let mut seen_docs = 0usize;
    let mut parser = Parser::new_from_str(text);
    while let Some(next) = parser.next_event() {
        let (event, span) = match next {
            Ok(ok) => ok,
            Err(e) => return (nodes, Some(Stop::ParseError(e))),
        };
        if let Event::DocumentStart(_) = event {
            doc = Some(seen_docs);
            seen_docs += 1;
            continue;
        }
        if doc != Some(doc_index) {
            if matches!(event, Event::StreamEnd) {
                break;
            }
            continue;
        }
        let line = line(span);
        // A scalar or alias arriving where a mapping waits for a key.
        let waiting_map = stack.last().copied().filter(|&top| {
            matches!(&nodes[top], Node::Map { entries, .. }
                if entries.last().is_none_or(|e| e.value != PENDING))
        });
        let new = match event {
            Event::DocumentEnd | Event::StreamEnd => return (nodes, None),
            Event::SequenceEnd | Event::MappingEnd => {
                stack.pop();
                continue;
            }
            Event::Scalar(value, style, anchor, tag) => {
                if let Some(map) = waiting_map {
                    let tag = tag_kind(tag.as_deref(), Dialect::Kyaml);
                    let merge = style == ScalarStyle::Plain
                        && value == "<<"
                        && matches!(tag, TagKind::None | TagKind::Core(CoreTag::Merge));
                    let key = key_texts(&value, style, tag);
                    if anchor != 0 {
                        anchor_keys.insert(anchor, key.clone());
                    }
                    push_entry(&mut nodes, map, (!merge).then_some(key), line);
                    continue;
                }
                if anchor != 0 {
                    anchors.insert(anchor, nodes.len());
                }
                Node::Leaf {
                    line: scalar_line(span, &value, style),
                }
            }
            Event::Alias(id) => {
                if let Some(map) = waiting_map {
                    let key = anchor_keys.get(&id).cloned().unwrap_or_default();
                    push_entry(&mut nodes, map, Some(key), line);
                    continue;
                }
                let Some(&target) = anchors.get(&id) else {
                    return (nodes, Some(Stop::Rejected));
                };
                Node::Alias { line, target }
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if waiting_map.is_some() {
                    // A collection as a key: the loader rejects it.
                    return (nodes, Some(Stop::Rejected));
                }
                if anchor != 0 {
                    anchors.insert(anchor, nodes.len());
                }
                if matches!(event, Event::SequenceStart(..)) {
                    Node::Seq {
                        line,
                        items: Vec::new(),
                    }
                } else {
                    Node::Map {
                        line,
                        entries: Vec::new(),
                    }
                }
            }
            Event::StreamStart | Event::Nothing | Event::DocumentStart(_) => continue,
        };
        let opens = matches!(new, Node::Seq { .. } | Node::Map { .. });
        let idx = nodes.len();
        nodes.push(new);
        if let Some(&parent) = stack.last() {
            match &mut nodes[parent] {
                Node::Seq { items, .. } => items.push(idx),
                Node::Map { entries, .. } => {
                    if let Some(e) = entries.last_mut().filter(|e| e.value == PENDING) {
                        e.value = idx;
                    }
                }
                Node::Leaf { .. } | Node::Alias { .. } => {}
            }
        }
        if opens {
            stack.push(idx);
        }
    }
    (nodes, None)
}

/// A key's text as each dialect reads it; unreadable keys keep their text.
fn key_texts(value: &str, style: ScalarStyle, tag: TagKind) -> [String; 2] {
    [Dialect::Kyaml, Dialect::SigsYaml]
        .map(|d| scalar_key(value, style, tag, d).unwrap_or_else(|_| value.to_owned()))
}

fn push_entry(nodes: &mut [Node], map: usize, key: Option<[String; 2]>, key_line: u32) {
    if let Node::Map { entries, .. } = &mut nodes[map] {
        entries.push(Entry {
            key,
            key_line,
            value: PENDING,
        });
    }
}

/// Follows aliases to the node they copy.
fn deref(nodes: &[Node], mut idx: usize) -> Option<usize> {
    for _ in 0..=nodes.len() {
        match nodes.get(idx)? {
            Node::Alias { target, .. } => idx = *target,
            _ => return Some(idx),
        }
    }
    None
}

fn walk(nodes: &[Node], path: &[PathSeg<'_>], mode: Mode) -> Option<u32> {
    // Node 0 is the document root.
    let mut cur = 0usize;
    let mut line = nodes.first()?.line();
    for seg in path {
        let here = deref(nodes, cur)?;
        match seg {
            PathSeg::Index(i) => {
                let Node::Seq { items, .. } = &nodes[here] else {
                    return None;
                };
                cur = *items.get(*i)?;
                line = nodes.get(cur)?.line();
            }
            PathSeg::Key(k) => {
                let (key_line, value) = find_key(nodes, here, k, mode)?;
                cur = value;
                line = key_line;
            }
        }
    }
    Some(line)
}

/// Looks a key up with merge semantics: the mapping's own keys, then each
/// `<<` source in order (a mapping, or a sequence of mappings), depth first.
fn find_key(nodes: &[Node], map: usize, key: &str, mode: Mode) -> Option<(u32, usize)> {
    let mut todo = vec![map];
    // Merge sources are finished nodes, so there are no cycles in a valid
    // document; the bound keeps a broken one finite.
    let mut steps = 0usize;
    while let Some(idx) = todo.pop() {
        steps += 1;
        if steps > nodes.len().saturating_mul(4) + 16 {
            return None;
        }
        let Node::Map { entries, .. } = &nodes[deref(nodes, idx)?] else {
            continue;
        };
        let matches = |e: &&Entry| {
            e.value != PENDING && e.key.as_ref().is_some_and(|k| k.iter().any(|t| t == key))
        };
        let found = match mode {
            Mode::Found => entries.iter().rev().find(matches),
            Mode::FirstDuplicate => entries.iter().find(matches),
        };
        if let Some(e) = found {
            return Some((e.key_line, e.value));
        }
        let mut sources = Vec::new();
        for e in entries
            .iter()
            .filter(|e| e.key.is_none() && e.value != PENDING)
        {
            match &nodes[deref(nodes, e.value)?] {
                Node::Seq { items, .. } => sources.extend(items.iter().copied()),
                _ => sources.push(e.value),
            }
        }
        // Earlier sources win, so they must be popped first.
        todo.extend(sources.into_iter().rev());
    }
    None
}
