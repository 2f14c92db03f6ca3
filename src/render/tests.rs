use serde_json::json;

use super::{expand_lists, Footprint};

/// A kustomization names its files, which lie in the directories it
/// reads below: only the paths outside them are kept as entries.
#[test]
fn a_footprint_keeps_only_the_entries_outside_its_subtrees() {
    let strings = |v: &[&str]| v.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
    let fp = Footprint {
        subtrees: strings(&["apps/a/base", "apps/a/overlays/prod"]),
        entries: strings(&[
            "apps/a/base/deployment.yaml",
            "apps/a/overlays/prod/.argocd-source.yaml",
            "apps/a/base",
            "apps/a/basement.yaml",
            "shared/values.yaml",
        ]),
    }
    .without_entries_in_subtrees();
    assert_eq!(
        fp.entries,
        strings(&["apps/a/basement.yaml", "shared/values.yaml"])
    );
    assert_eq!(fp.subtrees.len(), 2);
    let whole = Footprint {
        subtrees: strings(&[""]),
        entries: strings(&["a.yaml"]),
    }
    .without_entries_in_subtrees();
    assert!(whole.entries.is_empty(), "the root holds every path");
}

fn expand(v: serde_json::Value) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    expand_lists(v, &mut out);
    out
}

#[test]
fn lists_are_recognised_by_items_not_by_kind() {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
    assert_eq!(
        expand(json!({"apiVersion": "v1", "kind": "List", "items": [cm.clone(), cm.clone()]}))
            .len(),
        2
    );
    assert_eq!(
        expand(json!({"apiVersion": "v1", "kind": "ConfigMapList", "items": [cm.clone()]})),
        vec![cm.clone()]
    );
    // Argo CD uses Unstructured.IsList: any `items` array makes a list.
    assert_eq!(
        expand(json!({"apiVersion": "x/v1", "kind": "Bundle", "items": [cm.clone()]})),
        vec![cm.clone()]
    );
    assert!(
        expand(json!({"apiVersion": "v1", "kind": "ConfigMapList", "items": null})).is_empty(),
        "a null list yields nothing"
    );
    let with_spec = json!({"apiVersion": "x/v1", "kind": "Thing", "items": null, "spec": {}});
    assert_eq!(expand(with_spec.clone()), vec![with_spec]);
    let nested = json!({"kind": "List", "items": [{"kind": "List", "items": [cm]}]});
    assert_eq!(expand(nested).len(), 1, "items are taken one level deep");
}

/// A source of more objects than are built one by one gives its
/// manifests in file order, each with its id and file, and when several
/// objects are not manifests, the error names the first of them.
#[test]
fn many_objects_become_manifests_in_order_and_the_first_bad_one_is_reported() {
    const FILES: usize = super::PARALLEL_MANIFESTS + 44;
    let files = super::test_files::configmaps(FILES);
    let render_files = |files: &[(String, Vec<u8>)]| {
        super::test_files::in_tree(files, |cx| {
            let spec = super::SourceSpec {
                path: "apps".into(),
                namespace: "team".into(),
                ..super::SourceSpec::default()
            };
            super::render(cx, &spec, &crate::manifest::Scopes::default())
        })
    };
    let rendered = render_files(&files).unwrap_or_else(|e| panic!("{}", e.message));
    let seen: Vec<(String, String, String)> = rendered
        .manifests
        .iter()
        .map(|m| {
            (
                m.id.name.clone(),
                m.id.namespace.clone(),
                m.origin.file.clone().unwrap_or_default(),
            )
        })
        .collect();
    let expected: Vec<(String, String, String)> = (0..FILES)
        .map(|i| {
            (
                format!("cm-{i:03}"),
                "team".into(),
                format!("apps/f{i:03}.yaml"),
            )
        })
        .collect();
    assert_eq!(seen, expected);

    // Objects read from the files, but not manifests: no name.
    let mut broken = files;
    let bad = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {team: a}\n";
    broken[97].1 = bad.as_bytes().to_vec();
    broken[FILES - 3].1 = bad.as_bytes().to_vec();
    let Err(e) = render_files(&broken) else {
        panic!("an object without a name fails the render");
    };
    assert!(
        e.message.contains("f097.yaml") && e.message.contains("metadata.name"),
        "{}",
        e.message
    );
}
