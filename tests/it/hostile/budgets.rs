//! Budgets: work is charged as it is done, so a few kilobytes cannot ask for
//! gigabytes or hours. Each class has the attacked shape and a variant that
//! reaches the same root cause another way; the binary runs under a 1 GiB
//! address-space limit and must end with a report, never an abort.

use super::*;

/// Runs the binary under a 1 GiB address-space limit and returns its output;
/// the run must end with an exit status gitops-lint gives (0 to 4), not
/// with a signal (an allocation failure aborts, status 134).
fn run_limited(dir: &Path, args: &[&str]) -> Output {
    let bin = assert_cmd::cargo::cargo_bin("gitops-lint");
    let out = std::process::Command::new("prlimit")
        .arg(format!("--as={}", 1u64 << 30))
        .arg("--")
        .arg(&bin)
        .args(args)
        .current_dir(dir)
        .env("PATH", "/usr/bin:/bin")
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .env("RAYON_NUM_THREADS", "2")
        .output()
        .expect("prlimit runs");
    assert!(
        matches!(out.status.code(), Some(0..=4)),
        "the run ended with {:?} under a 1 GiB limit; stderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn appset_yaml(template_name: &str, elements: &str, extra_spec: &str) -> Vec<u8> {
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: fleet
  namespace: argocd
spec:
  goTemplate: true
  generators:
  - list:
      elements: {elements}
{extra_spec}  template:
    metadata:
      name: '{template_name}'
    spec:
      project: default
      source:
        repoURL: https://github.com/acme/gitops.git
        targetRevision: main
        path: apps/web
      destination:
        server: https://kubernetes.default.svc
        namespace: web
      syncPolicy:
        automated:
          prune: true
"
    )
    .into_bytes()
}

/// Go-template functions with size arguments, and chains that grow a value
/// without any: each stops at the value budget, having charged its work,
/// with an error naming the budget; the same functions at ordinary sizes
/// render as Go does.
#[test]
fn template_functions_and_chains_are_bounded_by_one_value_budget() {
    use gotemplate::{data_from_params, parse, render, Budget, MissingKey};
    let dot = data_from_params(&serde_json::Map::new());
    let hostile = [
        // The attacked shape: one call with a size argument.
        r#"{{ indent 2000000000 "x" }}"#,
        r#"{{ nindent 2000000000 "x" }}"#,
        r#"{{ replace "a" (repeat 4000 "b") (repeat 100000 "a") }}"#,
        r#"{{ join (repeat 100000 "x") (until 100000) }}"#,
        r#"{{ regexReplaceAll "" (repeat 200000 "a") (repeat 400 "b") }}"#,
        // Found by fuzzing: the output is the input (`$0` of an empty match
        // is empty), but each of the 200,001 matches expands the replacement.
        r#"{{ regexReplaceAll "" (repeat 200000 "a") (repeat 1800 "$0") }}"#,
        r#"{{ regexReplaceAll "(.+)" (repeat 100000 "a") "$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1" }}"#,
        // Variants: no single call is large; intermediate values double.
        r#"{{ $x := "ab" }}{{ range until 64 }}{{ $x = cat $x $x }}{{ end }}{{ len $x }}"#,
        r#"{{ $d := dict }}{{ range until 64 }}{{ $d = dict "a" $d "b" $d }}{{ end }}{{ len $d }}"#,
        r"{{ $l := list 1 }}{{ range until 64 }}{{ $l = list $l $l }}{{ end }}{{ toPrettyJson $l }}",
        r#"{{ $d := dict }}{{ range until 100000 }}{{ $d = dict "a" $d }}{{ end }}{{ toJson $d }}"#,
        r#"{{ $s := repeat 1000 "x" }}{{ range until 1000000 }}{{ $t := $s }}{{ end }}"#,
        r"{{ $l := untilStep 0 1000000 1 }}{{ range until 1000 }}{{ $m := $l }}{{ end }}",
        r#"{{ splitList "" (repeat 1000000 "a") }}"#,
    ];
    for src in hostile {
        let t = parse(src).expect("parses");
        let mut budget = Budget::PER_EXECUTION;
        let err = t
            .execute_within(&dot, MissingKey::Invalid, &mut budget)
            .expect_err(&format!("{src} is refused"));
        assert!(
            err.contains("bytes") || err.contains("MiB") || err.contains("levels"),
            "{src}: {err}"
        );
        // Work was counted, and stopped within the budget.
        let spent = Budget::PER_EXECUTION.bytes - budget.bytes;
        assert!(
            spent <= Budget::PER_EXECUTION.bytes,
            "{src}: {spent} bytes charged"
        );
        assert!(budget.steps <= Budget::PER_EXECUTION.steps, "{src}");
    }
    // A budget shared by many executions runs out across them.
    let t = parse(r#"{{ repeat 1000000 "x" }}"#).expect("parses");
    let mut shared = Budget {
        steps: 1_000_000,
        bytes: 20 << 20,
    };
    let mut rendered = 0;
    while t
        .execute_within(&dot, MissingKey::Invalid, &mut shared)
        .is_ok()
    {
        rendered += 1;
        assert!(rendered < 100, "the shared budget never ran out");
    }
    assert!((5..=20).contains(&rendered), "{rendered} renders");
    // Ordinary sizes render as Go renders them.
    for (src, want) in [
        (r#"{{ indent 2 "a\nb" }}"#, "  a\n  b"),
        (r#"{{ nindent 2 "a" }}"#, "\n  a"),
        (r#"{{ replace "a" "bb" "aXa" }}"#, "bbXbb"),
        (r#"{{ join "-" (list "a" "b" "c") }}"#, "a-b-c"),
        (
            r#"{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "${1}W" }}"#,
            "-W-xxW-",
        ),
        (r#"{{ regexReplaceAllLiteral "a" "aa" "$1" }}"#, "$1$1"),
        (
            r#"{{ $d := dict "k" "v" }}{{ $d = dict "a" $d }}{{ toJson $d }}"#,
            r#"{"a":{"k":"v"}}"#,
        ),
        (r#"{{ len (splitList "," "a,b,c") }}"#, "3"),
    ] {
        assert_eq!(
            render(src, &dot, MissingKey::Invalid).as_deref(),
            Ok(want),
            "{src}"
        );
    }
}

/// fasttemplate substitution: a megabyte parameter named by thousands of
/// tags is refused before it is built.
#[test]
fn fasttemplate_substitution_is_bounded() {
    use gitops_lint::argocd::appset::fasttemplate::replace;
    let mut params = serde_json::Map::new();
    params.insert("big".into(), Value::String("x".repeat(1 << 20)));
    params.insert("small".into(), Value::String("ok".into()));
    let tmpl = "{{big}}".repeat(100_000);
    let e = replace(&tmpl, &params, 64 << 20).expect_err("refused");
    assert!(e.contains("longer than"), "{e}");
    assert_eq!(
        replace("a-{{small}}-{{ missing }}", &params, 64 << 20).as_deref(),
        Ok("a-ok-{{ missing }}")
    );
}

/// An ApplicationSet whose template asks for gigabytes, at head: the run
/// ends under a 1 GiB limit and the ApplicationSet is reported as not
/// expandable, not as generating nothing.
#[test]
fn a_hostile_applicationset_template_is_reported_under_a_memory_limit() {
    for (name, extra) in [
        // The attacked shape: a size argument.
        (r"{{ indent 2000000000 .name }}", ""),
        // A variant: nested dict reassignment in the name.
        (
            r#"{{ $d := dict }}{{ range until 60 }}{{ $d = dict "a" $d "b" $d }}{{ end }}{{ .name }}{{ len $d }}"#,
            "",
        ),
    ] {
        let base = vec![
            file(
                "apps/fleet.yaml",
                appset_yaml("{{ .name }}", "[{name: web}]", ""),
            ),
            file("apps/web/pvc.yaml", pvc("data")),
        ];
        let head = vec![
            file("apps/fleet.yaml", appset_yaml(name, "[{name: web}]", extra)),
            file("apps/web/pvc.yaml", pvc("data")),
        ];
        let tmp = repo(&base, &head);
        let out = run_limited(tmp.path(), &["diff", "main..change", "--format", "json"]);
        let report = json(&out);
        // The generated app cannot be judged, and says why; nothing is
        // reported as kept or deleted in its place.
        assert_eq!(gl000_apps(&report), ["web"], "{name}: {report:#}");
        assert!(
            gl000_messages(&report)
                .iter()
                .any(|m| m.contains("beyond what gitops-lint evaluates")),
            "{name}: {report:#}"
        );
        assert!(pruned_apps(&report).is_empty(), "{name}: {report:#}");
    }
}

fn kustomize_app(name: &str) -> Vec<u8> {
    app_yaml(name, &format!("apps/{name}"), "")
}

fn configmaps(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  k: v\n"
            )
        })
        .collect()
}

/// Kustomize patches and replacements that double a resource: a JSON patch
/// `copy` forty times (the attacked shape), a replacement copying a map
/// into itself forty times, and a strategic-merge patch with a large
/// aliased body applied to every resource (variants). Each stops at the
/// node budget, under a 1 GiB limit, as GL000 naming it, with nothing
/// pruned; an ordinary copy still renders.
#[test]
fn kustomize_patches_that_double_a_resource_stop_at_the_node_budget() {
    let copies: String = (0..40)
        .map(|i| format!("  - op: copy\n    from: /data\n    path: /data/m{i}\n"))
        .collect::<String>();
    let json_copy = format!(
        "resources: [cm.yaml]\npatches:\n- target: {{kind: ConfigMap}}\n  patch: |-\n{}",
        copies
            .lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    );
    let replacements: String = (0..40)
        .map(|i| {
            format!("- source: {{kind: ConfigMap, name: cm-0, fieldPath: data}}\n  targets:\n  - select: {{kind: ConfigMap, name: cm-0}}\n    fieldPaths: [data.m{i}]\n    options: {{create: true}}\n")
        })
        .collect();
    let replacement = format!("resources: [cm.yaml]\nreplacements:\n{replacements}");
    // Ten alias levels of doubling stay under the YAML loader's alias
    // budget; applied to 3,000 ConfigMaps they would add twelve million nodes.
    let mut smp = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: any\nl0: &l0 [a, b, c, d, e, f, g, h]\n");
    for i in 1..10 {
        smp.push_str(&format!("l{i}: &l{i} [*l{}, *l{}]\n", i - 1, i - 1));
    }
    smp.push_str("data:\n  big: *l9\n");
    let smp_all = format!(
        "resources: [cm.yaml]\npatches:\n- target: {{kind: ConfigMap}}\n  patch: |-\n{}",
        smp.lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    );
    for (what, kustomization, resources) in [
        ("json-copy", json_copy, configmaps(1)),
        ("replacement", replacement, configmaps(1)),
        ("smp-everywhere", smp_all, configmaps(3000)),
    ] {
        let base = vec![
            file("apps/web.yaml", kustomize_app("web")),
            file(
                "apps/web/kustomization.yaml",
                "resources: [cm.yaml, pvc.yaml]\n",
            ),
            file("apps/web/cm.yaml", resources.clone()),
            file("apps/web/pvc.yaml", pvc("data")),
        ];
        let head = vec![
            file("apps/web.yaml", kustomize_app("web")),
            file("apps/web/kustomization.yaml", kustomization),
            file("apps/web/cm.yaml", resources),
        ];
        let tmp = repo(&base, &head);
        let out = run_limited(tmp.path(), &["diff", "main..change", "--format", "json"]);
        let report = json(&out);
        assert_eq!(gl000_apps(&report), ["web"], "{what}: {report:#}");
        assert!(
            gl000_messages(&report)
                .iter()
                .any(|m| m.contains("nodes; gitops-lint stops there")),
            "{what}: {report:#}"
        );
        // The PVC removed at head is not reported as kept or pruned: the
        // app cannot be judged.
        assert!(pruned_apps(&report).is_empty(), "{what}: {report:#}");
    }
    // An ordinary copy renders as Kustomize renders it.
    let ok = "resources: [cm.yaml]\npatches:\n- target: {kind: ConfigMap}\n  patch: |-\n    - op: copy\n      from: /data/k\n      path: /data/k2\n";
    let tmp = repo(
        &[],
        &[
            file("apps/web.yaml", kustomize_app("web")),
            file("apps/web/kustomization.yaml", ok),
            file("apps/web/cm.yaml", configmaps(1)),
        ],
    );
    let report = json(&run_limited(
        tmp.path(),
        &["diff", "main..change", "--format", "json"],
    ));
    assert!(gl000_apps(&report).is_empty(), "{report:#}");
    let rendered = bin()
        .current_dir(tmp.path())
        .args(["render", "apps/web"])
        .output()
        .expect("renders");
    let text = String::from_utf8_lossy(&rendered.stdout);
    assert!(text.contains("k2: v"), "{text}");
}

/// Thousands of strategic-merge patches over thousands of resources: each
/// patch finds its target through an index, so the build is linear; every
/// patch is applied.
#[test]
fn many_strategic_merge_patches_over_many_resources_are_applied() {
    let n = 4000;
    let patches: String = (0..n)
        .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  patched: \"{i}\"\n"))
        .collect();
    let tmp = repo(
        &[
            file("apps/web.yaml", kustomize_app("web")),
            file("apps/web/kustomization.yaml", "resources: [cm.yaml]\n"),
            file("apps/web/cm.yaml", configmaps(n)),
        ],
        &[
            file("apps/web.yaml", kustomize_app("web")),
            file(
                "apps/web/kustomization.yaml",
                "resources: [cm.yaml]\npatchesStrategicMerge: [patches.yaml]\n",
            ),
            file("apps/web/cm.yaml", configmaps(n)),
            file("apps/web/patches.yaml", patches),
        ],
    );
    let out = run_limited(tmp.path(), &["diff", "main..change", "--format", "json"]);
    let report = json(&out);
    assert!(gl000_apps(&report).is_empty(), "{report:#}");
    let rendered = apps_with_status(&report, "rendered");
    assert_eq!(rendered, ["web"], "{report:#}");
    // Every patch was applied: the last ConfigMap carries its patch.
    let rendered = bin()
        .current_dir(tmp.path())
        .args(["render", "apps/web"])
        .output()
        .expect("renders");
    let text = String::from_utf8_lossy(&rendered.stdout);
    assert_eq!(
        text.matches("patched:").count(),
        n,
        "{}",
        &text[..text.len().min(2000)]
    );
}

/// A blob whose object header says 512 MiB (a few hundred kilobytes
/// compressed) is refused from its header, before anything is inflated:
/// read as a manifest (the attacked shape) or as a Kustomize generator's
/// file (a variant), under a 1 GiB limit, it is GL000 naming the size.
#[test]
fn a_blob_larger_than_the_limit_is_refused_from_its_header() {
    for (what, files) in [
        (
            "manifest",
            vec![file("apps/web.yaml", app_yaml("web", "apps/web", ""))],
        ),
        (
            "configMapGenerator",
            vec![
                file("apps/web.yaml", app_yaml("web", "apps/web", "")),
                file(
                    "apps/web/kustomization.yaml",
                    "configMapGenerator:\n- name: big\n  files: [big.yaml]\n",
                ),
            ],
        ),
    ] {
        let tmp = repo(
            &[
                file("apps/web.yaml", app_yaml("web", "apps/web", "")),
                file("apps/web/pvc.yaml", pvc("data")),
            ],
            &files,
        );
        let dir = tmp.path();
        // 512 MiB of zeros through `git hash-object`, staged and committed.
        let mut child = std::process::Command::new("git")
            .current_dir(dir)
            .args(["hash-object", "-w", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("git runs");
        {
            use std::io::Write as _;
            let mut stdin = child.stdin.take().expect("stdin");
            let chunk = vec![b' '; 1 << 20];
            for _ in 0..512 {
                stdin.write_all(&chunk).expect("write");
            }
        }
        let out = child.wait_with_output().expect("hashed");
        let oid = String::from_utf8_lossy(&out.stdout).trim().to_string();
        git(
            dir,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("100644,{oid},apps/web/big.yaml"),
            ],
        );
        git(dir, &["commit", "-q", "-m", "big"]);
        let out = run_limited(dir, &["diff", "main..change", "--format", "json"]);
        let report = json(&out);
        assert_eq!(gl000_apps(&report), ["web"], "{what}: {report:#}");
        assert!(
            gl000_messages(&report)
                .iter()
                .any(|m| m.contains("536870912 bytes, larger than")),
            "{what}: {report:#}"
        );
        assert!(pruned_apps(&report).is_empty(), "{what}: {report:#}");
    }
}

/// A repository's files for one revision.
type Files = Vec<(String, Vec<u8>)>;

/// A git submodule inside a `recurse: true` directory app: Argo CD checks
/// it out and reads its manifests; gitops-lint cannot, so the app is GL000
/// rather than smaller. The variant: a Kustomize base that is a submodule.
/// Without `recurse`, a submodule is not read by Argo CD either, and the
/// app renders.
#[test]
fn a_submodule_inside_an_app_makes_it_unanalysable_not_smaller() {
    let recurse = "    directory:\n      recurse: true\n";
    let cases: Vec<(&str, Files, &str, bool)> = vec![
        (
            "recurse",
            vec![
                file("apps/web.yaml", app_yaml("web", "apps/web", recurse)),
                file("apps/web/pvc.yaml", pvc("data")),
            ],
            "apps/web",
            true,
        ),
        (
            "kustomize-base",
            vec![
                file("apps/web.yaml", app_yaml("web", "apps/web", "")),
                file(
                    "apps/web/kustomization.yaml",
                    "resources: [vendor, pvc.yaml]\n",
                ),
                file("apps/web/pvc.yaml", pvc("data")),
            ],
            "apps/web",
            true,
        ),
        (
            "no-recurse",
            vec![
                file("apps/web.yaml", app_yaml("web", "apps/web", "")),
                file("apps/web/pvc.yaml", pvc("data")),
            ],
            "apps/web",
            false,
        ),
    ];
    for (what, files, dir, unanalysable) in cases {
        let tmp = tempfile::tempdir().expect("tempdir");
        // Base: the same app without the submodule, with one more PVC.
        let mut base: Vec<(String, Vec<u8>)> = files
            .iter()
            .filter(|(p, _)| p != "apps/web/kustomization.yaml")
            .cloned()
            .collect();
        base.push(file("apps/web/old.yaml", pvc("old")));
        if what == "kustomize-base" {
            base.push(file(
                "apps/web/kustomization.yaml",
                "resources: [pvc.yaml, old.yaml]\n",
            ));
        }
        commit_with_raw_entries(
            tmp.path(),
            &base,
            &files,
            &[(dir, b"vendor", 0o160_000, None)],
        );
        let out = run_limited(tmp.path(), &["diff", "main..change", "--format", "json"]);
        let report = json(&out);
        if unanalysable {
            assert_eq!(gl000_apps(&report), ["web"], "{what}: {report:#}");
            assert!(
                gl000_messages(&report)
                    .iter()
                    .any(|m| m.contains("submodule")),
                "{what}: {report:#}"
            );
            assert!(pruned_apps(&report).is_empty(), "{what}: {report:#}");
        } else {
            assert!(gl000_apps(&report).is_empty(), "{what}: {report:#}");
            assert_eq!(pruned_apps(&report), ["web"], "{what}: {report:#}");
        }
    }
}

/// A manifest whose file name is not UTF-8 is read, as Argo CD reads it:
/// unchanged, it is not a prune; removed at head (the variant), its PVC is.
#[test]
fn a_file_whose_name_is_not_utf8_is_read_not_dropped() {
    let app = file("apps/web.yaml", app_yaml("web", "apps/web", ""));
    let name: &[u8] = b"data-\xff\xfe.yaml";
    let bytes = pvc("data");
    for (what, keep) in [("unchanged", true), ("removed", false)] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        git(
            dir,
            &[
                "remote",
                "add",
                "origin",
                "https://github.com/acme/gitops.git",
            ],
        );
        // Base: the app and the odd-named manifest; head: a new file, and
        // the manifest kept or removed.
        let repo = git2::Repository::open(dir).expect("opens");
        let sig = git2::Signature::now("t", "t@example.invalid").expect("sig");
        let build = |odd: bool, extra: bool| {
            let mut web = repo.treebuilder(None).expect("tb");
            if odd {
                web.insert(name, repo.blob(&bytes).expect("blob"), 0o100_644)
                    .expect("insert");
            }
            if extra {
                web.insert(
                    "cm.yaml",
                    repo.blob(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
                        .expect("blob"),
                    0o100_644,
                )
                .expect("insert");
            }
            let web = web.write().expect("tree");
            let mut apps = repo.treebuilder(None).expect("tb");
            apps.insert("web", web, 0o040_000).expect("insert");
            apps.insert("web.yaml", repo.blob(&app.1).expect("blob"), 0o100_644)
                .expect("insert");
            let apps = apps.write().expect("tree");
            let mut root = repo.treebuilder(None).expect("tb");
            root.insert("apps", apps, 0o040_000).expect("insert");
            root.write().expect("tree")
        };
        let base_tree = repo.find_tree(build(true, false)).expect("tree");
        let base = repo
            .commit(Some("refs/heads/main"), &sig, &sig, "base", &base_tree, &[])
            .expect("commit");
        let base = repo.find_commit(base).expect("commit");
        let head_tree = repo.find_tree(build(keep, true)).expect("tree");
        repo.commit(
            Some("refs/heads/change"),
            &sig,
            &sig,
            "head",
            &head_tree,
            &[&base],
        )
        .expect("commit");
        let out = run_limited(dir, &["diff", "main..change", "--format", "json"]);
        let report = json(&out);
        assert!(gl000_apps(&report).is_empty(), "{what}: {report:#}");
        if keep {
            assert!(pruned_apps(&report).is_empty(), "{what}: {report:#}");
        } else {
            assert_eq!(pruned_apps(&report), ["web"], "{what}: {report:#}");
        }
    }
}

/// Repository text in every format: a backtick in a file name cannot close
/// a Markdown code span and let `<!--` hide the rest of the summary (the
/// attacked shape), an annotation value cannot close `</details>` (a
/// variant), and neither can carry a workflow command (`##[add-mask]`,
/// `::error`) into human or GitHub output, at a line start or inside one.
#[test]
fn repository_text_cannot_break_markdown_or_carry_runner_commands() {
    let odd_file = "apps/web/x`<!--y.yaml";
    let name = "d`<!--x</details>##[add-mask]secret ::warning::forged";
    let hostile_pvc = format!(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: \"{name}\"\nspec:\n  accessModes: [ReadWriteOnce]\n"
    );
    let base = vec![
        file("apps/web.yaml", app_yaml("web", "apps/web", "")),
        file("apps/web/pvc.yaml", pvc("kept")),
        file(odd_file, hostile_pvc.into_bytes()),
    ];
    let head = vec![
        file("apps/web.yaml", app_yaml("web", "apps/web", "")),
        file("apps/web/pvc.yaml", pvc("kept")),
    ];
    let tmp = repo(&base, &head);
    let run_format = |format: &str| {
        let out = bin()
            .current_dir(tmp.path())
            .args([
                "diff",
                "main..change",
                "--format",
                format,
                "--color",
                "never",
            ])
            .output()
            .expect("runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let md = run_format("markdown");
    assert!(md.contains("x`<!--y.yaml"), "the file is named:\n{md}");
    assert!(!md.contains("`x`"), "{md}");
    // Outside code spans no HTML comment opens, and every <details> closes
    // exactly once.
    let outside_code: String = md
        .split("``")
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, s)| s)
        .collect();
    assert!(!outside_code.contains("<!--"), "{md}");
    // The rendered diff quotes the object in fenced blocks, whose content
    // is literal text (CommonMark): there a `</details>` closes nothing.
    // Each fence is longer than any run of backticks inside it.
    let mut fence: Option<&str> = None;
    let outside_fences: Vec<&str> = md
        .lines()
        .filter(|l| {
            let ticks = &l[..l.len() - l.trim_start_matches('`').len()];
            match fence {
                Some(f) if *l == f => {
                    fence = None;
                    false
                }
                Some(_) => false,
                None if ticks.len() >= 3 => {
                    fence = Some(ticks);
                    false
                }
                None => true,
            }
        })
        .collect();
    assert!(fence.is_none(), "every fence is closed:\n{md}");
    let outside_fences = outside_fences.join("\n");
    assert_eq!(
        outside_fences.matches("<details>").count(),
        outside_fences.matches("</details>").count(),
        "{md}"
    );
    assert!(md.contains("&lt;/details&gt;"), "{md}");
    for format in ["human", "github", "markdown"] {
        let text = run_format(format);
        for line in text.lines() {
            assert!(!line.contains("##["), "{format}: {line}");
            if format != "github" {
                assert!(!line.trim_start().starts_with("::"), "{format}: {line}");
            }
        }
        if format == "github" {
            assert!(
                text.lines()
                    .all(|l| l.starts_with("::") && !l[2..].contains("::warning::")),
                "{format}:\n{text}"
            );
        }
        assert!(
            text.contains("add-mask"),
            "{format}: the value is shown:\n{text}"
        );
    }
}

/// In the working tree (`check`, pre-commit), a file's size is read from
/// its metadata before it is read: a 2 GiB sparse file is GL000 under a
/// 1 GiB limit, not read whole.
#[test]
fn a_large_file_in_the_working_tree_is_refused_from_its_size() {
    let tmp = repo(
        &[],
        &[
            file("apps/web.yaml", app_yaml("web", "apps/web", "")),
            file("apps/web/pvc.yaml", pvc("data")),
        ],
    );
    let big = std::fs::File::create(tmp.path().join("apps/web/big.yaml")).expect("create");
    big.set_len(2 << 30).expect("sparse");
    let out = run_limited(tmp.path(), &["check", "--format", "json"]);
    let report = json(&out);
    assert_eq!(gl000_apps(&report), ["web"], "{report:#}");
    assert!(
        gl000_messages(&report)
            .iter()
            .any(|m| m.contains("2147483648 bytes, larger than")),
        "{report:#}"
    );
}
