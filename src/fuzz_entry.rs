//! Entry points shared by the `cargo fuzz` targets (in `fuzz/`) and the
//! ordinary test that replays every saved crash (`tests/fuzz_regressions.rs`),
//! so CI re-runs each regression through exactly the code the fuzzer drove.
//!
//! Each entry takes arbitrary bytes and must return normally: a panic, an
//! abort or a hang is the bug. Invariants that must hold on any input are
//! checked with `assert!`, so a violation is a crash the fuzzer keeps.

use serde_json::Value;

use crate::manifest::{manifest_from_value, Origin, Scopes};
use crate::render::expand_lists;
use crate::yaml::{self, Dialect, Limits, PathSeg};

/// The message the loader gives when the third-party parser panicked; seeing
/// it means the parser has a bug the loader merely contained.
const PARSER_PANIC: &str = "internal error in the yaml parser";

/// The YAML loader: both dialects, default limits, then `line_of` on a path
/// taken from the first document. Also checks that what `gitops-lint render`
/// writes back out reads as the same value.
pub fn yaml_stream(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let limits = Limits::default();
    for dialect in [Dialect::Kyaml, Dialect::SigsYaml] {
        match yaml::load_all_as(text, dialect, &limits) {
            Ok(docs) => {
                assert!(docs.len() <= limits.max_documents);
                for (i, d) in docs.iter().enumerate() {
                    assert_eq!(d.index, i, "documents are numbered in order");
                    assert!(d.line >= 1, "lines are 1-based");
                }
                if dialect == Dialect::Kyaml {
                    if let Some(first) = docs.first() {
                        let path = first_path(&first.value);
                        let _ = yaml::line_of(text, 0, &path);
                    }
                }
            }
            Err(e) => {
                assert!(e.line >= 1 && e.column >= 1, "error positions are 1-based");
                assert_ne!(e.message, PARSER_PANIC, "the parser panicked");
            }
        }
    }
}

/// A path to the first leaf of `v`, following first keys and first items.
fn first_path(mut v: &Value) -> Vec<PathSeg<'_>> {
    let mut path = Vec::new();
    loop {
        match v {
            Value::Object(m) => match m.iter().next() {
                Some((k, next)) => {
                    path.push(PathSeg::Key(k.as_str()));
                    v = next;
                }
                None => return path,
            },
            Value::Array(items) => match items.first() {
                Some(next) => {
                    path.push(PathSeg::Index(0));
                    v = next;
                }
                None => return path,
            },
            _ => return path,
        }
    }
}

/// The resource model over loaded documents: list expansion, identity with
/// namespace defaulting, and every typed view of the Argo CD annotations
/// that decide pruning, hooks and ordering.
pub fn resource_model(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(docs) = yaml::load_all(text) else {
        return;
    };
    let mut scopes = Scopes::default();
    let mut values = Vec::new();
    for d in docs {
        expand_lists(d.value, &mut values);
    }
    for v in &values {
        if v.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition") {
            scopes.learn_crd(v);
        }
    }
    for v in values {
        let Ok(m) = manifest_from_value(v, Origin::default(), "fuzz", &scopes) else {
            continue;
        };
        let cluster = scopes.is_cluster_scoped(&m.id.group, &m.id.kind);
        assert!(
            !cluster || m.id.namespace.is_empty(),
            "cluster-scoped objects carry no namespace"
        );
        let _ = m.sync_options().prune_disabled();
        let _ = m.sync_options().delete_disabled();
        let _ = m.hook();
        let _ = m.sync_wave();
        let _ = m.uses_generate_name();
        let _ = crate::plan::is_prunable(&m);
        let _ = m.id.to_string();
    }
}
