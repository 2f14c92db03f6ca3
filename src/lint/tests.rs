use super::*;
use crate::finding::{Finding, Location, Side};
use crate::report::anchor::Anchors;
use crate::source::write_commit;

fn files(list: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
    list.iter()
        .map(|(p, t)| ((*p).to_string(), t.as_bytes().to_vec()))
        .collect()
}

/// `ignorePaths` drops hygiene findings located there, never a prune
/// or an app that cannot be judged.
#[test]
fn ignored_paths_drop_only_what_a_change_does_not_do() {
    let config = Config::parse(
        ".gitops-lint.yaml",
        "ignorePaths: ['vendor/**']\n",
        &rules::catalog(),
    )
    .expect("valid");
    let at = |code: &str, file: &str| {
        let rule = rules::find(code).expect("rule").meta();
        Finding::new(rule, "m").at(crate::finding::Side::Head, Some(file), Some(1))
    };
    let mut findings = vec![
        at("GL005", "vendor/a.yaml"),
        at("GL005", "apps/a.yaml"),
        at("GL001", "vendor/pvc.yaml"),
        at("GL000", "vendor/kustomization.yaml"),
    ];
    suppress::drop_ignored_paths(&mut findings, &config);
    let kept: Vec<(&str, &str)> = findings
        .iter()
        .map(|f| {
            let file = f.location.as_ref().map_or("", |l| l.file.as_str());
            (f.rule.code, file)
        })
        .collect();
    assert_eq!(
        kept,
        vec![
            ("GL005", "apps/a.yaml"),
            ("GL001", "vendor/pvc.yaml"),
            ("GL000", "vendor/kustomization.yaml")
        ]
    );
}

/// A removed manifest is shown on the kustomization that stopped
/// including it; a changed file keeps its place but loses its base line.
#[test]
fn anchors_land_on_files_of_the_change() {
    let tmp = tempfile::tempdir().expect("tmp");
    let base = write_commit(
        tmp.path(),
        "main",
        None,
        &files(&[
            (
                "apps/p/kustomization.yaml",
                "resources: [pvc.yaml, cm.yaml]\n",
            ),
            ("apps/p/pvc.yaml", "kind: PersistentVolumeClaim\n"),
            ("apps/p/cm.yaml", "kind: ConfigMap\n"),
            ("apps/p/same.yaml", "kind: Secret\n"),
            ("kustomization.yaml", "resources: [apps/p]\n"),
        ]),
        "base",
    )
    .expect("base");
    let head = write_commit(
        tmp.path(),
        "change",
        Some("main"),
        &files(&[
            ("apps/p/kustomization.yaml", "resources: [cm.yaml]\n"),
            ("apps/p/cm.yaml", "kind: ConfigMap\ndata: {}\n"),
            ("apps/p/same.yaml", "kind: Secret\n"),
            ("kustomization.yaml", "resources: [apps/p]\n"),
        ]),
        "head",
    )
    .expect("head");
    let repo = GitRepo::open(tmp.path()).expect("repo");
    let (b, h) = (
        repo.commit_tree(&base).expect("tree"),
        repo.commit_tree(&head).expect("tree"),
    );
    let meta = crate::rules::find("GL001").expect("rule").meta();
    let at = |file: &str, line: u32| Finding::new(meta, "m").at(Side::Base, Some(file), Some(line));
    let inv = Inventory::default();
    let anchors = Anchors::new(b.as_ref(), h.as_ref(), &inv, &inv);
    let anchor_of = |f: &Finding| anchors.of(f);
    let loc = |file: &str, line: Option<u32>| {
        Some(Location {
            side: Side::Head,
            file: file.into(),
            line,
        })
    };
    assert_eq!(
        anchor_of(&at("apps/p/pvc.yaml", 1)),
        loc("apps/p/kustomization.yaml", None)
    );
    assert_eq!(
        anchor_of(&at("apps/p/cm.yaml", 1)),
        loc("apps/p/cm.yaml", None)
    );
    assert_eq!(
        anchor_of(&at("apps/p/same.yaml", 1)),
        loc("apps/p/same.yaml", Some(1))
    );
    // Nothing in the change to attach it to, and no app: no anchor.
    let unchanged_parent = write_commit(
        tmp.path(),
        "other",
        Some("main"),
        &files(&[
            (
                "apps/p/kustomization.yaml",
                "resources: [pvc.yaml, cm.yaml]\n",
            ),
            ("kustomization.yaml", "resources: [apps/p]\n"),
        ]),
        "other",
    )
    .expect("other");
    let o = repo.commit_tree(&unchanged_parent).expect("tree");
    assert_eq!(
        Anchors::new(b.as_ref(), o.as_ref(), &inv, &inv).of(&at("apps/p/pvc.yaml", 1)),
        None
    );
}
