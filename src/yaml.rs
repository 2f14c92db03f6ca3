//! Our YAML loader: saphyr-parser events into `serde_json::Value` documents,
//! with scalars resolved the way Kubernetes (go-yaml) resolves them.
//!
//! Knows nothing of Kubernetes resources. See the README for why this exists
//! instead of serde_yaml (which resolves `0755` as a string where Kubernetes
//! reads 493).

use serde_json::Value;

/// Bounds that keep hostile input finite.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Deepest nesting of collections accepted.
    pub max_depth: usize,
    /// Most nodes that alias expansion may produce in one stream.
    pub max_alias_nodes: usize,
    /// Most documents in one stream.
    pub max_documents: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 256,
            max_alias_nodes: 100_000,
            max_documents: 100_000,
        }
    }
}

/// One document of a YAML stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    /// The document's value (`Value::Null` for an empty document).
    pub value: Value,
    /// Position of the document in its stream, counting from 0 (empty documents included).
    pub index: usize,
    /// 1-based line where the document's content starts.
    pub line: u32,
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
}

/// One step of a path into a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSeg<'a> {
    /// A mapping key.
    Key(&'a str),
    /// A sequence index.
    Index(usize),
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
pub fn load_all_with(_text: &str, _limits: &Limits) -> Result<Vec<Doc>, YamlError> {
    unimplemented!("yaml loader")
}

/// The 1-based line of the node at `path` in document `doc_index` of `text`,
/// or `None` when the stream does not parse or the path does not exist.
/// Used only when a finding needs a precise line, so it re-parses.
#[must_use]
pub fn line_of(_text: &str, _doc_index: usize, _path: &[PathSeg<'_>]) -> Option<u32> {
    unimplemented!("yaml locate")
}
