//! The performance model, checked by counting work rather than timing it:
//! an app whose inputs are unchanged is not rendered again at head (nor at
//! base, when nothing else needs its render), and every blob is read and parsed at most once per run, across both revisions.

use std::collections::BTreeSet;
use std::process::Command;
use std::sync::{Arc, Mutex};

use gitops_lint::lint::{self, Options, RunStats};
use gitops_lint::source::{add_remote, write_commit};

const URL: &str = "https://git.example.com/platform/fleet.git";

fn application(name: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: argocd
spec:
  project: default
  source:
    repoURL: {URL}
    targetRevision: main
    path: {name}
  destination:
    server: https://kubernetes.default.svc
    namespace: {name}
  syncPolicy:
    automated:
      prune: true
"
    )
}

fn configmap(name: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  key: \"{value}\"\n"
    )
}

/// An app-of-apps `root` rendering `argocd/`, which declares apps `a` and
/// `b`, each a directory with its own ConfigMap and a symlink to one shared
/// file (so both read `shared/common.yaml`). The symlinks and `root`'s
/// Applications keep every app from being left unrendered, so the counts
/// below are of renders and reuses.
fn fleet(a_value: &str, b_value: &str, common_value: &str) -> Vec<(String, Vec<u8>)> {
    let mut files = vec![(
        "bootstrap/root.yaml".to_string(),
        application("root")
            .replace("path: root", "path: argocd")
            .into_bytes(),
    )];
    for (app, value) in [("a", a_value), ("b", b_value)] {
        files.push((format!("argocd/{app}.yaml"), application(app).into_bytes()));
        files.push((
            format!("{app}/cm.yaml"),
            configmap(&format!("{app}-cm"), value).into_bytes(),
        ));
        files.push((
            format!("{app}/common.yaml.symlink"),
            b"../shared/common.yaml".to_vec(),
        ));
    }
    files.push((
        "shared/common.yaml".into(),
        configmap("common", common_value).into_bytes(),
    ));
    files
}

/// Commits `base` on `main` and `head` on `change`, runs `diff main..change`
/// and returns the counts of work done; every app must render.
fn run(base: &[(String, Vec<u8>)], head: &[(String, Vec<u8>)]) -> (RunStats, tempfile::TempDir) {
    let (s, statuses, tmp) = run_statuses(base, head);
    let rendered = statuses.iter().filter(|(_, st)| st == "rendered").count();
    assert_eq!(rendered, 3, "every app renders: {statuses:?}");
    (s, tmp)
}

/// [`run`] without the check: also returns each app's name and status.
fn run_statuses(
    base: &[(String, Vec<u8>)],
    head: &[(String, Vec<u8>)],
) -> (RunStats, Vec<(String, String)>, tempfile::TempDir) {
    let tmp = tempfile::tempdir().expect("temp dir");
    write_commit(tmp.path(), "main", None, base, "base").expect("base commit");
    write_commit(tmp.path(), "change", Some("main"), head, "head").expect("head commit");
    add_remote(tmp.path(), "origin", URL).expect("remote");
    let stats = Arc::new(Mutex::new(RunStats::default()));
    let opts = Options {
        repo: Some(tmp.path().to_path_buf()),
        stats: Some(Arc::clone(&stats)),
        ..Options::default()
    };
    let report = lint::diff(Some("main..change"), &opts).expect("diff runs");
    let statuses = report
        .apps
        .iter()
        .map(|a| (a.name.clone(), a.status.to_string()))
        .collect();
    let s = stats.lock().expect("stats").clone();
    (s, statuses, tmp)
}

/// Distinct blob ids in the trees of `main` and `change`, from the git CLI.
fn distinct_blobs(dir: &std::path::Path) -> usize {
    let mut ids = BTreeSet::new();
    for rev in ["main", "change"] {
        let out = Command::new("git")
            .args(["ls-tree", "-r", rev])
            .current_dir(dir)
            .output()
            .expect("git ls-tree");
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            if let Some(id) = line.split_whitespace().nth(2) {
                ids.insert(id.to_string());
            }
        }
    }
    ids.len()
}

#[test]
fn an_unchanged_app_is_not_rendered_again_at_head() {
    let (s, _tmp) = run(&fleet("1", "1", "1"), &fleet("1", "2", "1"));
    assert_eq!(s.base_renders, 3, "{s}");
    // Only `b` changed; `a` (which reads a symlinked shared file) is reused.
    assert_eq!((s.head_renders, s.head_reuses), (1, 2), "root and a: {s}");
    assert_eq!(s.changed_apps, 1, "{s}");
}

#[test]
fn a_shared_input_changing_renders_every_app_that_reads_it() {
    let (s, _tmp) = run(&fleet("1", "1", "1"), &fleet("1", "1", "2"));
    // `a` and `b` read shared/common.yaml through their symlinks.
    assert_eq!((s.head_renders, s.head_reuses), (2, 1), "{s}");
    assert_eq!(
        s.changed_apps, 2,
        "the shared ConfigMap changed in both apps: {s}"
    );
}

#[test]
fn each_blob_is_read_and_parsed_at_most_once_across_both_revisions() {
    let (s, tmp) = run(&fleet("1", "1", "1"), &fleet("1", "2", "1"));
    let blobs = distinct_blobs(tmp.path());
    assert!(
        s.blob_reads <= blobs,
        "{} reads of {blobs} distinct blobs",
        s.blob_reads
    );
    // Parsed: 3 Applications (the scan and the app-of-apps share the parse
    // of `argocd/*.yaml`), 2 app ConfigMaps, the shared file (once for both
    // apps and both revisions), and the one ConfigMap new at head.
    assert_eq!(s.parses, 7, "{s}");
}

#[test]
fn apps_of_a_set_declared_and_rendered_by_an_app_of_apps_render_once() {
    let set = format!(
        "apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: fleet
  namespace: argocd
spec:
  generators:
    - list:
        elements:
          - name: a
          - name: b
  template:
    metadata:
      name: '{{{{name}}}}'
    spec:
      project: default
      source:
        repoURL: {URL}
        targetRevision: main
        path: '{{{{name}}}}'
      destination:
        server: https://kubernetes.default.svc
        namespace: '{{{{name}}}}'
"
    );
    let files = |value: &str| -> Vec<(String, Vec<u8>)> {
        fleet("1", value, "1")
            .into_iter()
            .filter(|(p, _)| p != "argocd/a.yaml" && p != "argocd/b.yaml")
            .chain([("argocd/set.yaml".to_string(), set.clone().into_bytes())])
            .collect()
    };
    let (s, _tmp) = run(&files("1"), &files("2"));
    // The set is found by the scan and again in `root`'s render; its apps
    // are generated twice but rendered once: root, a, b.
    assert_eq!(s.base_renders, 3, "{s}");
    assert_eq!((s.head_renders, s.head_reuses), (1, 2), "{s}");
}

#[test]
fn an_app_with_identical_plain_inputs_is_rendered_at_neither_revision() {
    // `c` is a plain directory (no symlink, no Application or StorageClass
    // in its files) that no revision changes; only `b` changes.
    let with_c = |b_value: &str| -> Vec<(String, Vec<u8>)> {
        let mut files = fleet("1", b_value, "1");
        files.push(("argocd/c.yaml".into(), application("c").into_bytes()));
        files.push(("c/cm.yaml".into(), configmap("c-cm", "1").into_bytes()));
        files
    };
    let (s, statuses, _tmp) = run_statuses(&with_c("1"), &with_c("2"));
    let status = |name: &str| {
        statuses
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, st)| st.as_str())
    };
    assert_eq!(status("c"), Some("unchanged"), "{statuses:?}");
    assert_eq!(status("b"), Some("rendered"), "{statuses:?}");
    // root, a and b at base; b at head (root's and a's renders are reused).
    assert_eq!(s.base_renders, 3, "{s}");
    assert_eq!((s.head_renders, s.head_reuses), (1, 2), "{s}");
    assert_eq!(s.unchanged, 1, "{s}");
}

/// `n` plain directory apps of five ConfigMaps each, declared in
/// `argocd/`; `changed` names an app whose first ConfigMap differs.
fn plain_fleet(n: usize, changed: Option<usize>) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for i in 0..n {
        let app = format!("app{i:03}");
        files.push((format!("argocd/{app}.yaml"), application(&app).into_bytes()));
        for j in 0..5 {
            let value = if changed == Some(i) && j == 0 {
                "2"
            } else {
                "1"
            };
            files.push((
                format!("{app}/cm{j}.yaml"),
                configmap(&format!("{app}-cm{j}"), value).into_bytes(),
            ));
        }
    }
    files
}

/// Runs `diff main..change` in `repo` keeping facts in `cache`.
fn diff_cached(repo: &std::path::Path, cache: Option<&std::path::Path>) -> (RunStats, String) {
    let stats = Arc::new(Mutex::new(RunStats::default()));
    let opts = Options {
        repo: Some(repo.to_path_buf()),
        stats: Some(Arc::clone(&stats)),
        cache_dir: cache.map(std::path::Path::to_path_buf),
        // The two trees as committed: some tests move both branches on
        // apart, to compare kept facts with trees that changed.
        judge: lint::Judge::AsIs,
        ..Options::default()
    };
    let report = lint::diff(Some("main..change"), &opts).expect("diff runs");
    let apps: Vec<String> = report
        .apps
        .iter()
        .map(|a| format!("{} {}", a.name, a.status))
        .collect();
    let s = stats.lock().expect("stats").clone();
    (s, format!("{apps:?} {:?}", report.findings.len()))
}

/// The head takes the base's scan whole only when no file the scan parsed
/// changed and no changed file may declare anything. In both changes here
/// every path is at both revisions (the shape that allows taking it), and
/// the head still sees each change: an Application written into a file
/// that held a ConfigMap, one renamed in its file, one emptied out.
#[test]
fn applications_written_renamed_or_emptied_in_files_at_both_revisions_are_seen() {
    let mut base = plain_fleet(3, None);
    base.push((
        "argocd/extra.yaml".into(),
        configmap("extra", "1").into_bytes(),
    ));
    // A directory no app reads yet, for the written Application to sync.
    base.push(("spare/cm.yaml".into(), configmap("spare", "1").into_bytes()));
    let with = |path: &str, text: String| -> Vec<(String, Vec<u8>)> {
        base.iter()
            .map(|(p, b)| {
                let bytes = if p == path {
                    text.clone().into_bytes()
                } else {
                    b.clone()
                };
                (p.clone(), bytes)
            })
            .collect()
    };
    let written = with("argocd/extra.yaml", application("spare"));
    let renamed = with(
        "argocd/app001.yaml",
        application("app001").replace("name: app001", "name: app901"),
    );
    // An Application file that no longer declares one: the app is gone at
    // head, so it is listed as the base rendered it, not as unchanged.
    let emptied = with("argocd/app002.yaml", configmap("app002", "1"));
    for (head, app) in [(written, "spare"), (renamed, "app901"), (emptied, "app002")] {
        let (_, statuses, _tmp) = run_statuses(&base, &head);
        let status = statuses
            .iter()
            .find(|(n, _)| n == app)
            .map(|(_, s)| s.as_str());
        assert_eq!(status, Some("rendered"), "{statuses:?}");
    }
}

fn plain_repo(n: usize) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("temp dir");
    write_commit(tmp.path(), "main", None, &plain_fleet(n, None), "base").expect("base");
    write_commit(
        tmp.path(),
        "change",
        Some("main"),
        &plain_fleet(n, Some(0)),
        "head",
    )
    .expect("head");
    add_remote(tmp.path(), "origin", URL).expect("remote");
    tmp
}

#[test]
fn with_facts_kept_a_one_app_change_reads_what_it_touches() {
    let mut warm_reads = Vec::new();
    for n in [20, 40] {
        let repo = plain_repo(n);
        let cache = tempfile::tempdir().expect("cache dir");
        let (none, none_out) = diff_cached(repo.path(), None);
        let (cold, cold_out) = diff_cached(repo.path(), Some(cache.path()));
        let (warm, warm_out) = diff_cached(repo.path(), Some(cache.path()));
        // The same answer every time, and only the changed app rendered.
        assert_eq!(cold_out, none_out);
        assert_eq!(warm_out, none_out);
        assert_eq!(warm.unchanged, n - 1, "{warm}");
        // Without facts and with none yet, every blob is read once.
        assert_eq!(none.blob_reads, distinct_blobs(repo.path()), "{none}");
        assert_eq!(cold.blob_reads, none.blob_reads, "{cold}");
        assert_eq!(
            (cold.facts_loaded, warm.facts_learned),
            (0, 0),
            "{cold} / {warm}"
        );
        assert!(warm.facts_loaded > 0, "{warm}");
        warm_reads.push((warm.blob_reads, warm.trees_decoded));
        // Subtrees indexed and scanned before are counted and scanned from
        // what was kept by tree id: the changed app's directory and the
        // ones on the way to it, not one per app.
        assert!(none.trees_decoded > n, "{none}");
        assert!(warm.trees_decoded < 8, "{warm}");
        // The changed app's six files: the Application files' parses are
        // kept by blob id, and so are the answers that spare the others.
        assert_eq!(warm.blob_reads, 6, "{warm}");
        assert_eq!(warm.kept_parses, n, "{warm}");
    }
    // Twenty more unchanged apps cost no read at all.
    assert_eq!(warm_reads[1], warm_reads[0]);
}

/// The scan keeps, by tree id, which files of a directory may declare an
/// Application: a directory that changed has another id, so an Application
/// added or removed anywhere below one scanned before is found.
#[test]
fn an_application_added_or_removed_below_a_kept_directory_is_seen() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let repo = tmp.path();
    let nested = |mut files: Vec<(String, Vec<u8>)>| {
        for (p, _) in &mut files {
            if let Some(rest) = p.strip_prefix("argocd/") {
                *p = format!("argocd/team/{rest}");
            }
        }
        files
    };
    let base = nested(plain_fleet(4, None));
    write_commit(repo, "main", None, &base, "base").expect("base");
    write_commit(
        repo,
        "change",
        Some("main"),
        &nested(plain_fleet(4, Some(0))),
        "head",
    )
    .expect("head");
    add_remote(repo, "origin", URL).expect("remote");
    let cache = tempfile::tempdir().expect("cache dir");
    diff_cached(repo, Some(cache.path()));
    // Head now adds app900 in the kept directory's subdirectory and drops
    // app003's Application.
    let mut head = nested(plain_fleet(4, Some(0)));
    head.retain(|(p, _)| p != "argocd/team/app003.yaml");
    head.push((
        "argocd/team/new/app900.yaml".into(),
        application("app900").into_bytes(),
    ));
    head.push((
        "app900/cm.yaml".into(),
        configmap("app900-cm", "1").into_bytes(),
    ));
    write_commit(repo, "change", None, &head, "head moved").expect("head moved");
    let (_, none_out) = diff_cached(repo, None);
    let (kept, kept_out) = diff_cached(repo, Some(cache.path()));
    assert_eq!(kept_out, none_out);
    assert!(kept_out.contains("app900 "), "{kept_out}");
    assert!(kept_out.contains("app003 "), "{kept_out}");
    assert!(kept.facts_loaded > 0, "{kept}");
}

#[test]
fn a_damaged_cache_file_is_not_trusted_and_is_written_anew() {
    let repo = plain_repo(20);
    let cache = tempfile::tempdir().expect("cache dir");
    let (cold, cold_out) = diff_cached(repo.path(), Some(cache.path()));
    let files: Vec<std::path::PathBuf> = std::fs::read_dir(cache.path())
        .expect("cache written")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    // Flip one bit in the middle of the facts.
    let mut bytes = std::fs::read(&files[0]).expect("facts");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x10;
    std::fs::write(&files[0], &bytes).expect("damage");
    let (again, again_out) = diff_cached(repo.path(), Some(cache.path()));
    assert_eq!(again_out, cold_out);
    assert_eq!(again.facts_loaded, 0, "{again}");
    assert_eq!(again.blob_reads, cold.blob_reads, "{again}");
    // Recomputed and kept: the next run is warm again.
    let (warm, _) = diff_cached(repo.path(), Some(cache.path()));
    assert!(
        warm.facts_loaded > 0 && warm.blob_reads < cold.blob_reads,
        "{warm}"
    );
}

#[test]
fn a_cache_directory_inside_the_repository_is_refused() {
    let repo = plain_repo(2);
    for inside in [
        repo.path().join("cache"),
        repo.path().join(".git/gitops-lint"),
    ] {
        let opts = Options {
            repo: Some(repo.path().to_path_buf()),
            cache_dir: Some(inside.clone()),
            ..Options::default()
        };
        let err = lint::diff(Some("main..change"), &opts).expect_err("refused");
        assert!(err.to_string().contains("inside the repository"), "{err}");
        assert!(!inside.exists());
    }
}

/// `n` Kustomize apps, each an overlay over its own base holding one
/// ConfigMap; `changed` names an app whose ConfigMap differs.
fn kustomize_fleet(n: usize, changed: Option<usize>) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for i in 0..n {
        let app = format!("app{i:03}");
        let value = if changed == Some(i) { "2" } else { "1" };
        files.push((
            format!("argocd/{app}.yaml"),
            application(&app)
                .replace(&format!("path: {app}"), &format!("path: {app}/overlay"))
                .into_bytes(),
        ));
        files.push((
            format!("{app}/overlay/kustomization.yaml"),
            format!("resources: [../base]\nnamePrefix: {app}-\n").into_bytes(),
        ));
        files.push((
            format!("{app}/base/kustomization.yaml"),
            format!("resources: [cm.yaml]\ncommonLabels: {{app: {app}}}\n").into_bytes(),
        ));
        files.push((
            format!("{app}/base/cm.yaml"),
            configmap("cm", value).into_bytes(),
        ));
    }
    files
}

#[test]
fn with_footprints_kept_an_unchanged_kustomization_is_neither_read_nor_parsed() {
    let mut warm_reads = Vec::new();
    for n in [20, 40] {
        let tmp = tempfile::tempdir().expect("temp dir");
        let repo = tmp.path();
        write_commit(repo, "main", None, &kustomize_fleet(n, None), "base").expect("base");
        write_commit(
            repo,
            "change",
            Some("main"),
            &kustomize_fleet(n, Some(0)),
            "head",
        )
        .expect("head");
        add_remote(repo, "origin", URL).expect("remote");
        let cache = tempfile::tempdir().expect("cache dir");
        let (none, none_out) = diff_cached(repo, None);
        let (_, cold_out) = diff_cached(repo, Some(cache.path()));
        let (warm, warm_out) = diff_cached(repo, Some(cache.path()));
        assert_eq!(cold_out, none_out);
        assert_eq!(warm_out, none_out);
        assert_eq!(warm.unchanged, n - 1, "{warm}");
        assert_eq!(warm.facts_learned, 0, "{warm}");
        // Without kept footprints, each unchanged app's two kustomizations
        // are read and parsed; with them (and the Application files' parses
        // kept), only the changed app's files: its two kustomizations, and
        // its ConfigMap at both revisions.
        assert!(none.parses >= 3 * n, "{none}");
        assert_eq!(warm.blob_reads, 4, "{warm}");
        assert_eq!(warm.parses, 4, "{warm}");
        assert!(none.trees_decoded > 2 * n, "{none}");
        assert!(warm.trees_decoded < 10, "{warm}");
        warm_reads.push((warm.blob_reads, warm.trees_decoded));
    }
    assert_eq!(warm_reads[1], warm_reads[0]);
}

#[test]
fn a_kept_footprint_that_no_longer_holds_is_computed_again() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let repo = tmp.path();
    let base = kustomize_fleet(3, None);
    write_commit(repo, "main", None, &base, "base").expect("base");
    write_commit(
        repo,
        "change",
        Some("main"),
        &kustomize_fleet(3, Some(0)),
        "head",
    )
    .expect("head");
    add_remote(repo, "origin", URL).expect("remote");
    let cache = tempfile::tempdir().expect("cache dir");
    diff_cached(repo, Some(cache.path()));
    // Move `main` on: app001's overlay now also reads a second base, and
    // that base changes in `change`. The footprint kept for app001 names
    // neither; were it trusted, app001 would be left unrendered.
    let mut moved = base.clone();
    moved.retain(|(p, _)| p != "app001/overlay/kustomization.yaml");
    moved.push((
        "app001/overlay/kustomization.yaml".into(),
        b"resources: [../base, ../extra]\nnamePrefix: app001-\n".to_vec(),
    ));
    moved.push((
        "app001/extra/kustomization.yaml".into(),
        b"resources: [cm.yaml]\n".to_vec(),
    ));
    moved.push((
        "app001/extra/cm.yaml".into(),
        configmap("extra", "1").into_bytes(),
    ));
    let mut changed = moved.clone();
    changed.retain(|(p, _)| p != "app001/extra/cm.yaml");
    changed.push((
        "app001/extra/cm.yaml".into(),
        configmap("extra", "2").into_bytes(),
    ));
    write_commit(repo, "main", None, &moved, "base moved").expect("base moved");
    write_commit(repo, "change", None, &changed, "head moved").expect("head moved");
    let (none, none_out) = diff_cached(repo, None);
    let (kept, kept_out) = diff_cached(repo, Some(cache.path()));
    assert_eq!(kept_out, none_out);
    assert!(kept_out.contains("app001 rendered"), "{kept_out}");
    assert_eq!(kept.unchanged, none.unchanged, "{kept} / {none}");
}

/// [`plain_fleet`] with an app-of-apps: `bootstrap/root.yaml` renders
/// `argocd/`, where the Applications are.
fn app_of_apps_repo(n: usize) -> tempfile::TempDir {
    let with_root = |changed| {
        let mut files = plain_fleet(n, changed);
        files.push((
            "bootstrap/root.yaml".to_string(),
            application("root")
                .replace("path: root", "path: argocd")
                .into_bytes(),
        ));
        files
    };
    let tmp = tempfile::tempdir().expect("temp dir");
    write_commit(tmp.path(), "main", None, &with_root(None), "base").expect("base");
    write_commit(
        tmp.path(),
        "change",
        Some("main"),
        &with_root(Some(0)),
        "head",
    )
    .expect("head");
    add_remote(tmp.path(), "origin", URL).expect("remote");
    tmp
}

#[test]
fn with_facts_kept_an_app_of_apps_one_app_change_reads_o_of_the_change() {
    let mut warm_counts = Vec::new();
    for n in [20, 40] {
        let repo = app_of_apps_repo(n);
        let cache = tempfile::tempdir().expect("cache dir");
        let (none, none_out) = diff_cached(repo.path(), None);
        let (_, cold_out) = diff_cached(repo.path(), Some(cache.path()));
        let (warm, warm_out) = diff_cached(repo.path(), Some(cache.path()));
        assert_eq!(cold_out, none_out);
        assert_eq!(warm_out, none_out);
        assert_eq!(warm.unchanged, n - 1, "{warm}");
        assert_eq!(warm.facts_learned, 0, "{warm}");
        // The scan and the root's render both take the Application files'
        // parses (the root's own among them) from the cache: what is read
        // and parsed is the changed app's six files.
        assert!(none.blob_reads > n, "{none}");
        assert_eq!(warm.kept_parses, n + 1, "{warm}");
        assert_eq!((warm.blob_reads, warm.parses), (6, 6), "{warm}");
        warm_counts.push((warm.blob_reads, warm.parses));
    }
    assert_eq!(warm_counts[0], warm_counts[1]);
}

#[test]
fn a_damaged_kept_parse_is_not_trusted_and_is_computed_again() {
    let repo = app_of_apps_repo(20);
    let cache = tempfile::tempdir().expect("cache dir");
    let (cold, cold_out) = diff_cached(repo.path(), Some(cache.path()));
    let file = std::fs::read_dir(cache.path())
        .expect("cache written")
        .map(|e| e.expect("entry").path())
        .next()
        .expect("one file");
    let bytes = std::fs::read(&file).expect("facts");
    // One byte of a kept document (the string `app007` in app007's
    // Application, as a record holds it: a tag, its length, its bytes),
    // anywhere it occurs: the store is refused, and every parse is
    // computed again from the blobs, with the same answer.
    let needle = b"\x06\x06\x00\x00\x00app007";
    let at: Vec<usize> = bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i + 8)
        .collect();
    assert!(!at.is_empty(), "the parse of app007.yaml is kept");
    for i in at {
        let mut bad = bytes.clone();
        bad[i] = b'8';
        std::fs::write(&file, &bad).expect("damage");
        let (again, again_out) = diff_cached(repo.path(), Some(cache.path()));
        assert_eq!(again_out, cold_out);
        assert_eq!(again.kept_parses, 0, "{again}");
        assert_eq!(again.blob_reads, cold.blob_reads, "{again}");
    }
    let (warm, warm_out) = diff_cached(repo.path(), Some(cache.path()));
    assert_eq!(warm_out, cold_out);
    assert_eq!(warm.kept_parses, 21, "{warm}");
}

/// What a run with `GITOPS_LINT_STATS` says of the values it read whole
/// out of the parses kept between runs.
fn values_read_whole(stderr: &str) -> usize {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("stats: "))
        .unwrap_or_else(|| panic!("no stats line in {stderr}"));
    line.find(" values of them read whole")
        .and_then(|end| line[..end].rsplit('(').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no count of values read whole in {line}"))
}

/// With parses kept, the Applications of unchanged apps are read through
/// their records' bytes (kind, name, spec, annotations), never decoded
/// whole: a one-app change decodes as many values at 40 apps as at 20.
/// (Counted in a process of its own: the count is the process's.)
#[test]
fn with_parses_kept_an_app_of_apps_one_app_change_decodes_o_of_the_change() {
    let mut decoded = Vec::new();
    for n in [20, 40] {
        let repo = app_of_apps_repo(n);
        let cache = tempfile::tempdir().expect("cache dir");
        let diff = || {
            let out = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
                .args(["diff", "main..change", "--format", "json", "--cache-dir"])
                .arg(cache.path())
                .current_dir(repo.path())
                .env("GITOPS_LINT_STATS", "1")
                .env_remove("GITHUB_ACTIONS")
                .output()
                .expect("gitops-lint runs");
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            (out.status.code(), out.stdout, stderr)
        };
        let cold = diff();
        let warm = diff();
        assert_eq!((warm.0, &warm.1), (cold.0, &cold.1), "{}", warm.2);
        assert!(
            warm.2.contains(&format!("{} parses from the cache", n + 1)),
            "{}",
            warm.2
        );
        decoded.push(values_read_whole(&warm.2));
    }
    assert_eq!(decoded[0], decoded[1], "{decoded:?}");
    assert!(decoded[0] <= 2, "{decoded:?}");
}

/// The shapes a fleet's Applications take (`bench/gen.py --shape`).
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// Application files side by side in `argocd/`, each a root.
    Flat,
    /// The same files rendered by an app-of-apps `bootstrap/root.yaml`.
    AppOfApps,
    /// One ApplicationSet whose git directory generator finds the overlays.
    AppSet,
    /// Apps three directories down, their Application files likewise,
    /// rendered by an app-of-apps with `directory.recurse`.
    Deep,
}

/// [`kustomize_fleet`] laid out and declared as `shape` says.
fn shaped_fleet(shape: Shape, n: usize, changed: Option<usize>) -> Vec<(String, Vec<u8>)> {
    let root = |path: &str, recurse: bool| {
        let mut text = application("root").replace("path: root", &format!("path: {path}"));
        if recurse {
            text = text.replace(
                &format!("path: {path}\n"),
                &format!("path: {path}\n    directory:\n      recurse: true\n"),
            );
        }
        ("bootstrap/root.yaml".to_string(), text.into_bytes())
    };
    let mut files = kustomize_fleet(n, changed);
    match shape {
        Shape::Flat => {}
        Shape::AppOfApps => files.push(root("argocd", false)),
        Shape::AppSet => {
            files.retain(|(p, _)| !p.starts_with("argocd/"));
            let set = format!(
                "apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: fleet
  namespace: argocd
spec:
  generators:
    - git:
        repoURL: {URL}
        revision: main
        directories:
          - path: 'apps/*/overlay'
  template:
    metadata:
      name: '{{{{path[1]}}}}'
    spec:
      project: default
      source:
        repoURL: {URL}
        targetRevision: main
        path: '{{{{path}}}}'
      destination:
        server: https://kubernetes.default.svc
        namespace: '{{{{path[1]}}}}'
"
            );
            for (p, _) in &mut files {
                *p = format!("apps/{p}");
            }
            files.push(("argocd/set.yaml".into(), set.into_bytes()));
        }
        Shape::Deep => {
            // app007 lives in r1/t1/app007/ and is declared in
            // argocd/r1/t1/app007.yaml.
            let nest = |app: &str| {
                let i: usize = app[3..].parse().expect("app number");
                format!("r{}/t{}/{app}", i % 2, i % 3)
            };
            for (p, bytes) in &mut files {
                if let Some(file) = p.strip_prefix("argocd/") {
                    let app = file.trim_end_matches(".yaml").to_string();
                    let text = String::from_utf8_lossy(bytes).replace(
                        &format!("path: {app}/overlay"),
                        &format!("path: {}/overlay", nest(&app)),
                    );
                    *p = format!("argocd/{}.yaml", nest(&app));
                    *bytes = text.into_bytes();
                } else if let Some((app, rest)) = p.split_once('/') {
                    *p = format!("{}/{rest}", nest(app));
                }
            }
            files.push(root("argocd", true));
        }
    }
    files
}

/// A warm one-app change reads, parses and decodes as many blobs and trees
/// at 40 apps as at 20, whatever the shape of the fleet, and answers what
/// a run without a cache answers. (What it still looks up in the store
/// grows with the fleet: a kept fact per unchanged app's directories and
/// a kept parse per Application file; bench/README.md.)
#[test]
fn on_every_fleet_shape_a_warm_one_app_change_reads_o_of_the_change() {
    for shape in [Shape::Flat, Shape::AppOfApps, Shape::AppSet, Shape::Deep] {
        let mut warm_counts = Vec::new();
        for n in [20, 40] {
            let tmp = tempfile::tempdir().expect("temp dir");
            let repo = tmp.path();
            write_commit(repo, "main", None, &shaped_fleet(shape, n, None), "base").expect("base");
            let head = shaped_fleet(shape, n, Some(n / 2));
            write_commit(repo, "change", Some("main"), &head, "head").expect("head");
            add_remote(repo, "origin", URL).expect("remote");
            let cache = tempfile::tempdir().expect("cache dir");
            let (none, none_out) = diff_cached(repo, None);
            let (_, cold_out) = diff_cached(repo, Some(cache.path()));
            let (warm, warm_out) = diff_cached(repo, Some(cache.path()));
            assert_eq!(cold_out, none_out, "{shape:?}");
            assert_eq!(warm_out, none_out, "{shape:?}");
            assert!(
                none_out.contains(&format!("app{:03} rendered", n / 2)),
                "{shape:?}: {none_out}"
            );
            assert_eq!(warm.unchanged, n - 1, "{shape:?}: {warm}");
            assert_eq!(warm.facts_learned, 0, "{shape:?}: {warm}");
            // Without a cache every app's kustomizations are read.
            assert!(none.blob_reads > 2 * n, "{shape:?}: {none}");
            warm_counts.push((warm.blob_reads, warm.parses, warm.trees_decoded));
        }
        assert_eq!(warm_counts[0], warm_counts[1], "{shape:?}");
    }
}
