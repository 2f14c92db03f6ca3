//! The native Kustomize renderer reads only through the source tree: a
//! commit renders like the directory on disk, and whatever is out of reach
//! (network, helm, plugins, paths outside the repository or the
//! kustomization root) is an explicit error, never a partial render.

use crate::kustomize_common;

use std::path::Path;
use std::process::Command;

use gitops_lint::render::RenderErrorKind;
use gitops_lint::source::GitRepo;
use kustomize_common::{compare, render_dir, render_tree};

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).expect("read") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            std::fs::create_dir_all(&dest).expect("mkdir");
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).expect("copy");
        }
    }
}

#[test]
fn a_commit_renders_like_the_working_directory() {
    let tmp = tempfile::tempdir().expect("tmp");
    let src = kustomize_common::crate_root().join("testdata/kustomize");
    copy_tree(&src, tmp.path());
    git(tmp.path(), &["init", "-q"]);
    git(tmp.path(), &["add", "-A"]);
    git(tmp.path(), &["commit", "-q", "-m", "x"]);
    let repo = GitRepo::open(tmp.path()).expect("open");
    let head = repo.resolve_commit("HEAD").expect("HEAD");
    let tree = repo.commit_tree(&head).expect("tree");
    for case in [
        "generator-merge-replace/overlay",
        "patch-targets/overlay",
        "hash-and-references",
    ] {
        let from_git = render_tree(tree.as_ref(), case)
            .unwrap_or_else(|e| panic!("{case} from git: {}", e.message));
        let from_disk = render_dir(tmp.path(), case)
            .unwrap_or_else(|e| panic!("{case} from disk: {}", e.message));
        assert!(!from_git.is_empty());
        let diff = compare(&from_git, &from_disk);
        assert!(
            diff.is_identical(),
            "{case}: git and disk renders differ:\n{}",
            diff.report()
        );
    }
}

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (p, text) in files {
        let f = dir.join(p);
        std::fs::create_dir_all(f.parent().expect("parent")).expect("mkdir");
        std::fs::write(f, text).expect("write");
    }
}

fn render_err(files: &[(&str, &str)], entry: &str) -> gitops_lint::render::RenderError {
    let tmp = tempfile::tempdir().expect("tmp");
    write(tmp.path(), files);
    match render_dir(tmp.path(), entry) {
        Ok(v) => panic!("expected an error, rendered {} objects", v.len()),
        Err(e) => e,
    }
}

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";

#[test]
fn remote_bases_and_plugins_are_unsupported_not_partial() {
    for (k, what) in [
        ("resources:\n- cm.yaml\n- https://github.com/example/repo//base?ref=v1\n", "remote"),
        ("resources:\n- cm.yaml\n- github.com/example/repo/base?ref=main\n", "remote"),
        ("resources:\n- cm.yaml\ntransformers:\n- |-\n  apiVersion: example.com/v1\n  kind: Fn\n  metadata:\n    name: f\n    annotations:\n      config.kubernetes.io/function: |\n        exec:\n          path: ./fn\n", "plugin"),
        ("resources:\n- cm.yaml\ngenerators:\n- |-\n  apiVersion: someteam.example.com/v1\n  kind: SecretsFromVault\n  metadata:\n    name: s\n", "plugin"),
        ("resources:\n- cm.yaml\nfrobnicate: true\n", "unknown kustomization field"),
    ] {
        let e = render_err(&[("app/kustomization.yaml", k), ("app/cm.yaml", CM)], "app");
        assert_eq!(e.kind, RenderErrorKind::Unsupported, "{what}: {}", e.message);
        assert!(e.message.contains(what), "{what}: message `{}`", e.message);
    }
}

#[test]
fn load_restrictor_escapes_and_cycles_are_errors() {
    // A patch file outside the kustomization root (kubectl's default restrictor).
    let e = render_err(
        &[
            (
                "app/kustomization.yaml",
                "resources:\n- cm.yaml\npatches:\n- path: ../common/p.yaml\n",
            ),
            ("app/cm.yaml", CM),
            (
                "common/p.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: y\n",
            ),
        ],
        "app",
    );
    assert_eq!(e.kind, RenderErrorKind::Content);
    assert!(e.message.contains("is not in or below"), "{}", e.message);
    // A base above the repository root.
    let e = render_err(
        &[("app/kustomization.yaml", "resources:\n- ../../outside\n")],
        "app",
    );
    assert_eq!(e.kind, RenderErrorKind::OutsideRepo, "{}", e.message);
    // Two kustomizations that include each other.
    let e = render_err(
        &[
            ("a/kustomization.yaml", "resources:\n- ../b\n"),
            ("b/kustomization.yaml", "resources:\n- ../a\n"),
        ],
        "a",
    );
    assert!(e.message.contains("cycle"), "{}", e.message);
    // A directory base is fine anywhere in the repository.
    let tmp = tempfile::tempdir().expect("tmp");
    write(
        tmp.path(),
        &[
            (
                "envs/prod/kustomization.yaml",
                "resources:\n- ../../base\nnamePrefix: prod-\n",
            ),
            ("base/kustomization.yaml", "resources:\n- cm.yaml\n"),
            ("base/cm.yaml", CM),
        ],
    );
    let objs = render_dir(tmp.path(), "envs/prod").expect("render");
    assert_eq!(
        objs[0].pointer("/metadata/name").and_then(|v| v.as_str()),
        Some("prod-a")
    );
}

#[test]
fn argo_cd_kustomize_options_act_as_kustomize_edit() {
    use gitops_lint::render::{kustomize, ParseCache, RenderContext, RenderOptions, SourceSpec};
    use gitops_lint::source::DirTree;
    let tmp = tempfile::tempdir().expect("tmp");
    write(
        tmp.path(),
        &[
            ("app/kustomization.yaml", "resources:\n- d.yaml\ncommonLabels:\n  team: a\n"),
            (
                "app/d.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.25\n",
            ),
        ],
    );
    let tree = DirTree::new(tmp.path().to_path_buf(), Vec::new());
    let cache = ParseCache::default();
    let options = RenderOptions::default();
    let cx = RenderContext::new(&tree, &cache, &options);
    let opts = serde_json::json!({
        "namePrefix": "p-",
        "namespace": "ns",
        "images": ["nginx=mirror.example.com/nginx:1.27"],
        "replicas": [{"name": "web", "count": 3}],
        "commonLabels": {"team": "b"},
        "forceCommonLabels": true,
        "commonAnnotations": {"note": "x"},
    });
    let spec = SourceSpec {
        path: "app".into(),
        kustomize: Some(opts.clone()),
        ..SourceSpec::default()
    };
    let out = kustomize::render(&cx, &spec).expect("render");
    let d = &out[0].value;
    assert_eq!(
        d.pointer("/metadata/name").and_then(|v| v.as_str()),
        Some("p-web")
    );
    assert_eq!(
        d.pointer("/metadata/namespace").and_then(|v| v.as_str()),
        Some("ns")
    );
    assert_eq!(
        d.pointer("/spec/replicas")
            .and_then(serde_json::Value::as_i64),
        Some(3)
    );
    assert_eq!(
        d.pointer("/spec/selector/matchLabels/team")
            .and_then(|v| v.as_str()),
        Some("b")
    );
    assert_eq!(
        d.pointer("/metadata/annotations/note")
            .and_then(|v| v.as_str()),
        Some("x")
    );
    assert_eq!(
        d.pointer("/spec/template/spec/containers/0/image")
            .and_then(|v| v.as_str()),
        Some("mirror.example.com/nginx:1.27")
    );
    // Without the force flag an existing label is refused, as `kustomize edit add label` does.
    let mut o2 = opts;
    o2["forceCommonLabels"] = serde_json::json!(false);
    let spec = SourceSpec {
        path: "app".into(),
        kustomize: Some(o2),
        ..SourceSpec::default()
    };
    assert!(kustomize::render(&cx, &spec).is_err());
}

/// The external-binary path: the kustomization is copied out of the tree
/// and the binary run on the copy. With the pinned kubectl on PATH it is
/// that kubectl; without it, a script that prints kubectl's recorded output
/// for this input after checking it was called as `kubectl kustomize DIR`,
/// so the copying, running and reading are still exercised.
#[test]
fn external_binary_mode_matches_native() {
    use gitops_lint::render::{kustomize, ParseCache, RenderContext, RenderOptions, SourceSpec};
    use gitops_lint::source::DirTree;
    let dir = kustomize_common::crate_root().join("testdata/kustomize");
    let scratch = tempfile::tempdir().expect("temp dir");
    let kubectl = match kustomize_common::live_kubectl() {
        Some(k) => k.to_path_buf(),
        None => {
            let recorded = kustomize_common::kubectl_kustomize_at(
                &dir.join("generator-merge-replace"),
                "overlay",
            );
            assert!(recorded.ok, "{}", recorded.stderr);
            let out = scratch.path().join("recorded.yaml");
            std::fs::write(&out, &recorded.stdout).expect("write");
            let script = scratch.path().join("kubectl");
            std::fs::write(
                &script,
                format!(
                    "#!/bin/sh\n[ \"$1\" = kustomize ] && [ -d \"$2\" ] || {{ echo \"unexpected call: $*\" >&2; exit 2; }}\nexec cat '{}'\n",
                    out.display()
                ),
            )
            .expect("write");
            let mut perm = std::fs::metadata(&script).expect("meta").permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
            std::fs::set_permissions(&script, perm).expect("chmod");
            script
        }
    };
    let tree = DirTree::new(dir.clone(), Vec::new());
    let cache = ParseCache::default();
    let options = RenderOptions {
        external_kustomize: Some(kubectl),
        ..RenderOptions::default()
    };
    let cx = RenderContext::new(&tree, &cache, &options);
    let spec = SourceSpec {
        path: "generator-merge-replace/overlay".into(),
        ..SourceSpec::default()
    };
    let ext: Vec<serde_json::Value> = kustomize::render(&cx, &spec)
        .expect("external")
        .into_iter()
        .map(|o| o.value)
        .collect();
    assert!(!ext.is_empty(), "the external render has resources");
    let native = render_dir(&dir, "generator-merge-replace/overlay").expect("native");
    let diff = compare(&ext, &native);
    assert!(diff.is_identical(), "{}", diff.report());
}

/// `helmCharts` without `--enable-helm` in Argo CD's build options fails as
/// Kustomize fails (a content error, not "unsupported"); with it, a chart
/// from a Helm repository that is not already under the chart home is "not
/// analysed", naming chart and repository, and helm is never needed to
/// say so.
#[test]
fn helm_charts_need_enable_helm_and_a_local_chart() {
    use gitops_lint::render::{kustomize, ParseCache, RenderContext, RenderOptions, SourceSpec};
    let tmp = tempfile::tempdir().expect("tmp");
    write(
        tmp.path(),
        &[
            (
                "app/kustomization.yaml",
                "resources:\n- cm.yaml\nhelmCharts:\n- name: redis\n  repo: https://charts.example.com\n  version: 1.2.3\n",
            ),
            ("app/cm.yaml", CM),
        ],
    );
    let tree = gitops_lint::source::DirTree::new(tmp.path().to_path_buf(), Vec::new());
    let cache = ParseCache::default();
    let options = RenderOptions::default();
    let cx = RenderContext::new(&tree, &cache, &options);
    let mut spec = SourceSpec {
        path: "app".into(),
        ..SourceSpec::default()
    };
    let e = kustomize::render(&cx, &spec).expect_err("no --enable-helm");
    assert_eq!(e.kind, RenderErrorKind::Content, "{}", e.message);
    assert!(
        e.message.contains("must specify --enable-helm"),
        "{}",
        e.message
    );
    spec.kustomize_build_options = "--enable-helm".into();
    let e = kustomize::render(&cx, &spec).expect_err("remote chart");
    assert_eq!(e.kind, RenderErrorKind::Unsupported, "{}", e.message);
    for part in [
        "`redis`",
        "https://charts.example.com",
        "app/charts/redis-1.2.3/redis",
    ] {
        assert!(e.message.contains(part), "{part}: {}", e.message);
    }
}
