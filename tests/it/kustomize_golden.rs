//! Golden cases for subtle Kustomize rules (hash suffix incl. HTML escaping,
//! name references in envFrom/volumes/projected/imagePullSecrets, prefix and
//! namespace on cluster-scoped kinds and binding subjects, patch targets,
//! generator merge/replace, components, images, labels), each checked
//! against the real `kubectl kustomize` run on the same directory (its
//! recorded output when the pinned kubectl is not on PATH).

use crate::kustomize_common;

use kustomize_common::{compare, crate_root, kubectl, render_dir};

fn check(case: &str) {
    let dir = crate_root().join("testdata/kustomize").join(case);
    let entry = if dir.join("overlay").is_dir() {
        "overlay"
    } else {
        ""
    };
    let want =
        kubectl(&dir, entry).unwrap_or_else(|e| panic!("{case}: kubectl kustomize failed: {e}"));
    assert!(!want.is_empty(), "{case}: kubectl rendered nothing");
    let got = render_dir(&dir, entry)
        .unwrap_or_else(|e| panic!("{case}: native render failed: {}", e.message));
    let diff = compare(&got, &want);
    assert!(
        diff.is_identical(),
        "{case} differs from kubectl kustomize:\n{}",
        diff.report()
    );
}

#[test]
fn hash_suffix_and_generated_name_references() {
    check("hash-and-references");
}

#[test]
fn prefix_and_namespace_on_cluster_scoped_kinds_and_subjects() {
    check("prefix-namespace-cluster-scoped");
}

#[test]
fn patch_targets_by_regex_selector_and_original_name() {
    check("patch-targets");
}

#[test]
fn generator_merge_and_replace_across_layers() {
    check("generator-merge-replace");
}

#[test]
fn components_images_labels_annotations_replicas() {
    check("components-images-labels");
}
