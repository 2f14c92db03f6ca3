//! Differential test of the native Kustomize renderer against the corpus of
//! real `kubectl kustomize` (v5.5.0) outputs in `shared/corpus/kustomize`.
//!
//! Every case must render identically (same resources, same values, same
//! order), or be listed in `testdata/kustomize-corpus-unsupported.yaml`
//! and fail with an explicit `Unsupported` error.

mod kustomize_common;

use std::collections::BTreeMap;
use std::path::Path;

use gitops_lint::render::RenderErrorKind;
use gitops_lint::yaml;
use kustomize_common::{compare, corpus_dir, render_dir, Case};
use serde_json::Value;

fn case_list(file: &str) -> BTreeMap<String, String> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(file);
    let text = std::fs::read_to_string(&p).expect("read unsupported list");
    let docs = yaml::load_all(&text).expect("parse unsupported list");
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
fn corpus_renders_like_kubectl() {
    let dir = corpus_dir();
    let unsupported = case_list("kustomize-corpus-unsupported.yaml");
    let known = case_list("kustomize-corpus-known-divergences.yaml");
    let cases = Case::all(&dir);
    assert!(
        cases.len() >= 150,
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
            cases.iter().any(|c| &c.name == name),
            "unsupported list names unknown case {name}"
        );
    }
    let supported = cases.len() - unsupported.len();
    println!(
        "kustomize corpus: {identical} identical / {supported} supported / {} total ({order_only} differ only in order)",
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
