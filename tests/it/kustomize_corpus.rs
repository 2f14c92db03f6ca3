//! Differential test of the native Kustomize renderer against the corpus of
//! real `kubectl kustomize` (v5.5.0) outputs: the subset vendored in
//! `testdata/kustomize-corpus` always, and the full corpus
//! (`GITOPS_LINT_CORPUS=DIR`, default `../shared/corpus`) when asked for
//! with `--ignored`, as `.ci/run` does.
//!
//! Every case must render identically (same resources, same values, same
//! order), or be listed in `testdata/kustomize-corpus-unsupported.yaml`
//! and fail with an explicit `Unsupported` error.

use crate::kustomize_common;

use std::collections::BTreeMap;
use std::path::Path;

use gitops_lint::render::RenderErrorKind;
use kustomize_common::{compare, corpus_dir, crate_root, render_dir, vendored_corpus, Case};
use serde_json::Value;

fn case_list(file: &str) -> BTreeMap<String, String> {
    let p = crate_root().join("testdata").join(file);
    let text = std::fs::read_to_string(&p).expect("read unsupported list");
    let docs = goyaml::load_all(&text).expect("parse unsupported list");
    let mut out = BTreeMap::new();
    for d in docs {
        for e in d.value.as_array().cloned().unwrap_or_default() {
            let case = e
                .get("case")
                .and_then(Value::as_str)
                .expect("case")
                .to_string();
            let reason = e
                .get("reason")
                .and_then(Value::as_str)
                .expect("reason")
                .to_string();
            assert!(!reason.trim().is_empty(), "{case}: empty reason");
            out.insert(case, reason);
        }
    }
    out
}

#[test]
fn vendored_corpus_subset_renders_like_kubectl() {
    let dir = vendored_corpus();
    let index = std::fs::read_to_string(dir.join("index.tsv")).expect("index.tsv");
    let listed: Vec<&str> = index
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next())
        .collect();
    let present: Vec<String> = Case::all(&dir).into_iter().map(|c| c.name).collect();
    assert_eq!(
        listed, present,
        "index.tsv lists exactly the vendored cases"
    );
    check_corpus(&dir, 30, false);
}

#[test]
#[ignore = "the full corpus (GITOPS_LINT_CORPUS=DIR or ../shared/corpus); .ci/run runs it"]
fn full_corpus_renders_like_kubectl() {
    let dir = corpus_dir();
    // The vendored cases are copies of the full corpus's.
    for case in Case::all(&vendored_corpus()) {
        let full = dir.join(&case.name).join("expected.yaml");
        assert_eq!(
            std::fs::read(&full).ok(),
            std::fs::read(case.dir.join("expected.yaml")).ok(),
            "{}: the vendored expected.yaml differs from {}",
            case.name,
            full.display()
        );
    }
    check_corpus(&dir, 150, true);
}

/// Renders every case of the corpus at `dir` (at least `min_cases`). In a
/// subset, cases the lists name may be absent.
fn check_corpus(dir: &Path, min_cases: usize, full: bool) {
    let unsupported = case_list("kustomize-corpus-unsupported.yaml");
    let known = case_list("kustomize-corpus-known-divergences.yaml");
    let cases = Case::all(dir);
    assert!(
        cases.len() >= min_cases,
        "corpus at {} has only {} cases",
        dir.display(),
        cases.len()
    );
    let only = std::env::var("KUSTOMIZE_CASE").ok();
    let mut identical = 0;
    let mut order_only = 0;
    let mut failures: Vec<String> = Vec::new();
    let mut known_seen = Vec::new();
    for case in &cases {
        if only.as_deref().is_some_and(|o| !case.name.contains(o)) {
            continue;
        }
        let listed = unsupported.get(&case.name);
        match (render_dir(&case.dir, &case.entry), listed) {
            (Ok(objs), None) => {
                let diff = compare(&objs, &case.expected());
                if let Some(reason) = known.get(&case.name) {
                    if diff.is_identical() {
                        failures.push(format!(
                            "{}: listed as a known divergence but renders identically now; remove it from testdata/kustomize-corpus-known-divergences.yaml",
                            case.name
                        ));
                    } else {
                        known_seen.push(format!("{} ({reason})", case.name));
                    }
                } else if diff.is_identical() {
                    identical += 1;
                } else {
                    if diff.only_order() {
                        order_only += 1;
                    }
                    failures.push(format!("{}:\n{}", case.name, diff.report()));
                }
            }
            (Err(e), None) => failures.push(format!("{}: render failed ({:?}): {}", case.name, e.kind, e.message)),
            (Ok(_), Some(_)) => failures.push(format!(
                "{}: listed as unsupported but renders now; compare it and remove it from testdata/kustomize-corpus-unsupported.yaml",
                case.name
            )),
            (Err(e), Some(_)) if e.kind == RenderErrorKind::Unsupported => {}
            (Err(e), Some(_)) => failures.push(format!(
                "{}: listed as unsupported but failed with a {:?} error instead: {}",
                case.name, e.kind, e.message
            )),
        }
    }
    for name in unsupported.keys().chain(known.keys()) {
        assert!(
            !full || cases.iter().any(|c| &c.name == name),
            "unsupported list names unknown case {name}"
        );
    }
    let refused = cases
        .iter()
        .filter(|c| unsupported.contains_key(&c.name))
        .count();
    let supported = cases.len() - refused;
    println!(
        "kustomize corpus at {}: {identical} identical / {supported} supported / {} total ({order_only} differ only in order)",
        dir.display(),
        cases.len()
    );
    for k in &known_seen {
        println!("known divergence, not counted as identical: {k}");
    }
    assert!(
        failures.is_empty(),
        "{} cases differ from kubectl kustomize:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
