//! Inputs shaped to be too deep, too large or too many (trees, git bombs,
//! lines, configurations, multiplying sources) end in one line or a render
//! failure, never a crash or a hang.

use super::*;

/// Builds a commit with git2 from a tree built by `make` and points `main` at it.
fn commit_tree(dir: &Path, make: impl FnOnce(&git2::Repository) -> git2::Oid) {
    let repo = git2::Repository::init(dir).expect("init");
    let tree = make(&repo);
    let tree = repo.find_tree(tree).expect("tree");
    let sig =
        git2::Signature::new("t", "t@example.invalid", &git2::Time::new(0, 0)).expect("signature");
    repo.commit(Some("refs/heads/main"), &sig, &sig, "t", &tree, &[])
        .expect("commit");
    repo.set_head("refs/heads/main").expect("head");
}

fn tree_of(repo: &git2::Repository, entries: &[(&str, git2::Oid, i32)]) -> git2::Oid {
    let mut b = repo.treebuilder(None).expect("builder");
    for (name, oid, mode) in entries {
        b.insert(name, *oid, *mode).expect("insert");
    }
    b.write().expect("write tree")
}

/// A directory tree 30,000 levels deep is a render failure of the app
/// that reads it, not a stack overflow.
#[test]
fn a_directory_tree_thirty_thousand_levels_deep_is_a_render_failure() {
    let tmp = tempfile::tempdir().expect("temp dir");
    commit_tree(tmp.path(), |repo| {
        let cm = repo
            .blob(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
            .expect("blob");
        let mut t = tree_of(repo, &[("cm.yaml", cm, 0o100_644)]);
        for _ in 0..30_000 {
            t = tree_of(repo, &[("d", t, 0o040_000)]);
        }
        let app = repo
            .blob(&app_yaml(
                "deep",
                "d",
                "    directory:\n      recurse: true\n",
            ))
            .expect("blob");
        tree_of(repo, &[("app.yaml", app, 0o100_644), ("d", t, 0o040_000)])
    });
    let out = run(tmp.path(), &["check", "main", "--format", "json"]);
    let report = json(&out);
    assert_eq!(gl000_apps(&report), ["deep"], "{report:#}");
    let msg = report["findings"][0]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        msg.contains("nested more than 256 directories deep"),
        "{msg}"
    );
}

/// A "git bomb" (directories that all point at the same subtree, ten
/// levels of ten: 10^10 paths from a few kilobytes of objects) is refused
/// with one line and exit status 4 (the run failed) instead of being expanded.
#[test]
fn a_git_bomb_is_refused_with_one_line() {
    let tmp = tempfile::tempdir().expect("temp dir");
    commit_tree(tmp.path(), |repo| {
        let cm = repo.blob(b"kind: ConfigMap\n").expect("blob");
        let names: Vec<String> = (0..10).map(|i| format!("f{i}.yaml")).collect();
        let files: Vec<(&str, git2::Oid, i32)> =
            names.iter().map(|n| (n.as_str(), cm, 0o100_644)).collect();
        let mut t = tree_of(repo, &files);
        let dirs: Vec<String> = (0..10).map(|i| format!("d{i}")).collect();
        for _ in 0..10 {
            let entries: Vec<(&str, git2::Oid, i32)> =
                dirs.iter().map(|n| (n.as_str(), t, 0o040_000)).collect();
            t = tree_of(repo, &entries);
        }
        t
    });
    let out = run(tmp.path(), &["check", "main"]);
    assert_eq!(out.status.code(), Some(4));
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("more than 1000000 files and directories"),
        "{lines:?}"
    );
}

/// With a cache, a subtree indexed before is counted from its kept size
/// instead of being decoded: a head that repeats it a thousand times is
/// refused as the same tree without a cache is.
#[test]
fn a_git_bomb_of_a_subtree_indexed_before_is_refused_with_a_cache() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let repo = git2::Repository::init(tmp.path()).expect("init");
    let cm = repo.blob(b"kind: ConfigMap\n").expect("blob");
    let names: Vec<String> = (0..1000).map(|i| format!("f{i}.yaml")).collect();
    let files: Vec<(&str, git2::Oid, i32)> =
        names.iter().map(|n| (n.as_str(), cm, 0o100_644)).collect();
    let s = tree_of(&repo, &files);
    let sig =
        git2::Signature::new("t", "t@example.invalid", &git2::Time::new(0, 0)).expect("signature");
    let commit = |refname: &str, tree: git2::Oid, parents: &[&git2::Commit<'_>]| {
        let tree = repo.find_tree(tree).expect("tree");
        repo.commit(Some(refname), &sig, &sig, "t", &tree, parents)
            .expect("commit")
    };
    let base = commit(
        "refs/heads/main",
        tree_of(&repo, &[("s", s, 0o040_000)]),
        &[],
    );
    let base = repo.find_commit(base).expect("base");
    let small = tree_of(&repo, &[("s", s, 0o040_000), ("t", s, 0o040_000)]);
    commit("refs/heads/change", small, &[&base]);
    let cache = tempfile::tempdir().expect("cache dir");
    let cache_dir = cache.path().to_string_lossy().to_string();
    let diff = |extra: &[&str]| {
        let mut args = vec!["diff", "main..change"];
        args.extend_from_slice(extra);
        run(tmp.path(), &args)
    };
    let first = diff(&["--cache-dir", &cache_dir]);
    assert_ne!(
        first.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let dirs: Vec<String> = (0..1001).map(|i| format!("d{i}")).collect();
    let mut entries: Vec<(&str, git2::Oid, i32)> =
        dirs.iter().map(|n| (n.as_str(), s, 0o040_000)).collect();
    entries.push(("s", s, 0o040_000));
    let bomb = tree_of(&repo, &entries);
    repo.reference(
        "refs/heads/change",
        commit("refs/heads/bomb", bomb, &[&base]),
        true,
        "t",
    )
    .expect("move change");
    for extra in [
        &["--cache-dir", cache_dir.as_str()][..],
        &["--no-cache"][..],
    ] {
        let out = diff(extra);
        assert_eq!(out.status.code(), Some(4), "{extra:?}");
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("more than 1000000 files and directories"),
            "{extra:?}: {lines:?}"
        );
    }
}

/// A 4 MiB line and a stream of 100,000 tiny documents are read (they are
/// within the limits) in bounded time, and the app is analysed.
#[test]
fn a_multi_megabyte_line_is_read() {
    let long = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: long\ndata:\n  blob: \"{}\"\n",
        "x".repeat(4 * 1024 * 1024)
    );
    let base = vec![
        file("argocd/a.yaml", app_yaml("a", "a", "")),
        file("a/data-pvc.yaml", pvc("data")),
    ];
    let mut head = vec![file("argocd/a.yaml", app_yaml("a", "a", ""))];
    head.push(file("a/long.yaml", long));
    let tmp = repo(&base, &head);
    let out = run(tmp.path(), &["diff", "main..change", "--format", "json"]);
    let report = json(&out);
    assert_eq!(apps_with_status(&report, "rendered"), ["a"], "{report:#}");
    assert_eq!(pruned_apps(&report), ["a"], "the PVC removal is still seen");
}

/// Requests that cannot be carried out exit 2 with one clear line on
/// stderr and nothing on stdout.
#[test]
fn unusable_configuration_exits_2_with_one_line() {
    let files = vec![
        file("argocd/a.yaml", app_yaml("a", "a", "")),
        file("a/data-pvc.yaml", pvc("data")),
    ];
    let tmp = repo(&files, &files);
    let dir = tmp.path().to_string_lossy().into_owned();
    let missing = format!("{dir}/no-such-config.yaml");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["diff", "main..change", "--config", &missing],
            "no such file in the base revision",
        ),
        (
            vec!["diff", "main..change", "--config", "a"],
            "is a directory",
        ),
        (
            vec!["diff", "main..change", "--config", &dir],
            "not a file of this repository",
        ),
    ];
    for (args, expect) in cases {
        let out = run(tmp.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{args:?}: {lines:?}");
        assert!(lines[0].contains(expect), "{args:?}: {lines:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// A configuration at the base revision that is a symlink out of the
/// repository, or an alias bomb, is refused (exit 2, one line), not
/// followed and not expanded.
#[test]
fn a_hostile_configuration_in_the_repository_exits_2() {
    let app = vec![
        file("argocd/a.yaml", app_yaml("a", "a", "")),
        file("a/data-pvc.yaml", pvc("data")),
    ];
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (i, prev) in ('b'..='k').zip('a'..='j') {
        bomb.push_str(&format!(
            "{i}: &{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
        ));
    }
    for (config, expect) in [
        (
            file(".gitops-lint.yaml.symlink", "/etc/passwd"),
            "outside the repository",
        ),
        (
            file(".gitops-lint.yaml", bomb),
            "anchors and aliases expand",
        ),
    ] {
        let mut files = app.clone();
        files.push(config);
        let tmp = repo(&files, &files);
        let out = run(tmp.path(), &["diff", "main..change"]);
        assert_eq!(out.status.code(), Some(2), "{expect}");
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains(expect), "{lines:?}");
    }
}

/// A bad flag value is a usage error: exit 2 and one line naming the flag
/// and the value.
#[test]
fn a_bad_flag_value_exits_2_naming_it() {
    let files = vec![file("argocd/a.yaml", app_yaml("a", "a", ""))];
    let tmp = repo(&files, &files);
    for (args, needle) in [
        (vec!["diff", "--format", "xml"], "xml"),
        (vec!["diff", "--fail-on", "sometimes"], "sometimes"),
        (vec!["check", "--color", "purple"], "purple"),
    ] {
        let out = run(tmp.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{args:?}: {lines:?}");
        assert!(lines[0].contains(needle), "{args:?}: {lines:?}");
        assert!(out.stdout.is_empty());
    }
}

/// A `List` that aliases one object 15,000 times (within the alias budget).
fn aliased_list() -> Vec<u8> {
    let items = vec!["*c"; 15_000].join(",");
    format!("apiVersion: v1\nkind: List\nx: &c {{apiVersion: v1, kind: ConfigMap, metadata: {{name: a}}}}\nitems: [{items}]\n").into_bytes()
}

/// One blob at `copies` paths of directory `d`: git stores it once.
fn amplifying_repo(copies: usize, apps: usize) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("temp dir");
    commit_tree(tmp.path(), |repo| {
        let blob = repo.blob(&aliased_list()).expect("blob");
        let names: Vec<String> = (0..copies).map(|i| format!("f{i:05}.yaml")).collect();
        let entries: Vec<(&str, git2::Oid, i32)> = names
            .iter()
            .map(|n| (n.as_str(), blob, 0o100_644))
            .collect();
        let d = tree_of(repo, &entries);
        let apps: Vec<u8> = (0..apps)
            .flat_map(|i| {
                let mut a = b"---\n".to_vec();
                a.extend(app_yaml(&format!("amp{i}"), "d", ""));
                a
            })
            .collect();
        let apps = repo.blob(&apps).expect("blob");
        tree_of(repo, &[("apps.yaml", apps, 0o100_644), ("d", d, 0o040_000)])
    });
    tmp
}

/// A 200 KiB repository whose one directory names the same aliased `List`
/// 2,000 times (30 million objects) is a render failure of that app: it
/// used to take more than 18 GB of memory.
#[test]
fn one_source_that_multiplies_into_millions_of_objects_is_a_render_failure() {
    let tmp = amplifying_repo(2_000, 1);
    let out = run(tmp.path(), &["check", "main", "--format", "json"]);
    let report = json(&out);
    assert_eq!(gl000_apps(&report), ["amp0"], "{report:#}");
    let msg = report["findings"][0]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(msg.contains("renders more than 100000 resources"), "{msg}");
}

/// Fifty Applications rendering the same 90,000-object directory exceed the
/// run's render budget: exit 4 with one line, whichever thread got there first.
#[test]
fn many_apps_multiplying_one_directory_stop_the_run_with_one_line() {
    let tmp = amplifying_repo(6, 50);
    for threads in ["1", "2"] {
        let out = bin()
            .current_dir(tmp.path())
            .env("RAYON_NUM_THREADS", threads)
            .args(["check", "main"])
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(4));
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("render more than 500000 objects"),
            "{lines:?}"
        );
    }
}

/// The loader refuses a stream larger than its byte limit before parsing
/// it, with an error at line 1 (the default limit is 64 MiB).
#[test]
fn a_stream_over_the_byte_limit_is_refused_before_parsing() {
    use goyaml::{load_all_with, Limits};
    let limits = Limits {
        max_bytes: 1024,
        ..Limits::default()
    };
    let text = format!("a: \"{}\"\n", "x".repeat(2000));
    let e = load_all_with(&text, &limits).expect_err("over the limit");
    assert!(e.message.contains("larger than 1024 bytes"), "{e}");
    assert_eq!((e.line, e.column), (1, 1));
    assert!(load_all_with("a: 1\n", &limits).is_ok());
    assert_eq!(Limits::default().max_bytes, 64 * 1024 * 1024);
}

/// A `matrix` of two 400-element lists (160,000 combinations; with aliases
/// a few kilobytes could ask for hundreds of millions) is not expanded,
/// and its result is unknown rather than empty.
#[test]
fn a_matrix_generator_that_multiplies_without_bound_is_an_error() {
    use gitops_lint::argocd::appset::{expand, AppSetContext, AppSetSettings};
    use gitops_lint::source::MemTree;
    let list = |key: &str| {
        let elements: Vec<Value> = (0..400)
            .map(|i| serde_json::json!({ key: i.to_string() }))
            .collect();
        serde_json::json!({"list": {"elements": elements}})
    };
    let set = serde_json::json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ApplicationSet",
        "metadata": {"name": "product", "namespace": "argocd"},
        "spec": {
            "generators": [{"matrix": {"generators": [list("a"), list("b")]}}],
            "template": {
                "metadata": {"name": "app-{{a}}-{{b}}"},
                "spec": {"project": "default", "source": {"repoURL": "https://github.com/acme/gitops.git", "path": "apps"},
                         "destination": {"server": "https://kubernetes.default.svc", "namespace": "x"}}
            }
        }
    });
    let tree = MemTree::new(&[]);
    let is_this_repo = |_: &str| true;
    let settings = AppSetSettings::default();
    let cx = AppSetContext {
        tree: &tree,
        is_this_repo: &is_this_repo,
        is_this_revision: None,
        clusters: &[],
        settings: &settings,
        index_cache: None,
        templated: None,
    };
    // Argo CD has no such cap: past it, what the set generates is unknown
    // (its apps are GL000), never "the controller stops".
    let e = expand(&set, &cx).expect("expands to an unknown");
    assert!(e.apps.is_empty());
    assert!(
        e.unresolved
            .iter()
            .any(|u| u.contains("more than 100000 parameter sets")),
        "{e:?}"
    );
}

/// `printf` widths follow Go: past 1e6 the number swallows the rest of
/// the format (`%!(NOVERB)`), so a template cannot ask for a 888 MB pad.
#[test]
fn a_printf_width_in_the_hundreds_of_millions_is_not_allocated() {
    use gotemplate::{data_from_params, render, MissingKey};
    let dot = data_from_params(&serde_json::Map::new());
    let out = render(
        r#"{{ printf "a%0888888888dz" 1 }}"#,
        &dot,
        MissingKey::Invalid,
    )
    .expect("renders");
    // As Go prints it: the unused argument is reported after.
    assert_eq!(out, "a%!(NOVERB)%!(EXTRA int=1)");
    let out = render(r#"{{ printf "%5d|" 7 }}"#, &dot, MissingKey::Invalid).expect("renders");
    assert_eq!(out, "    7|");
}
