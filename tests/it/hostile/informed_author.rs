//! Second pass: a pull request's author who knows the code. Each test runs
//! the binary with a memory cap (`RLIMIT_AS` through prlimit) and a time
//! limit, so a break shows as a failure instead of a stuck or killed run.

use super::*;

/// Runs the binary under `mem` bytes of address space, killed after
/// `secs` seconds; the run must end by itself with an exit status
/// gitops-lint gives (0 to 4).
fn run_capped(dir: &Path, args: &[&str], mem: u64, secs: u64) -> Output {
    let bin = assert_cmd::cargo::cargo_bin("gitops-lint");
    let out = std::process::Command::new("timeout")
        .args(["--signal=KILL", &secs.to_string(), "prlimit"])
        .arg(format!("--as={mem}"))
        .arg("--")
        .arg(&bin)
        .args(args)
        .current_dir(dir)
        .env("PATH", "/usr/bin:/bin")
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .env("RAYON_NUM_THREADS", "2")
        .output()
        .expect("timeout and prlimit run");
    assert!(
        matches!(out.status.code(), Some(0..=4)),
        "the run ended with {:?} (killed after {secs} s, or aborted under {mem} bytes); stderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

const GIB: u64 = 1 << 30;

/// An ApplicationSet of `n` list elements, each an Application named
/// `a<i>` rendering the chart at `chart`; `go` switches Go templates on.
fn fleet_of_chart(n: usize, chart: &str, name: &str, go: bool, extra_element: &str) -> Vec<u8> {
    let elements: Vec<String> = (0..n)
        .map(|i| format!("{{name: a{i}{extra_element}}}"))
        .collect();
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: fleet
  namespace: argocd
spec:
  goTemplate: {go}
  generators:
  - list:
      elements: [{}]
  template:
    metadata:
      name: '{name}'
    spec:
      project: default
      source:
        repoURL: https://github.com/acme/gitops.git
        targetRevision: main
        path: {chart}
      destination:
        server: https://kubernetes.default.svc
        namespace: web
      syncPolicy:
        automated:
          prune: true
",
        elements.join(", ")
    )
    .into_bytes()
}

/// The attacked shape: a 200 KB value `tpl`-ed into itself in a chart
/// used by a 60-element ApplicationSet. Go's error quotes the text at each
/// level of the recursion; each message was ~16 MB and the run aborted at
/// 1.5 GiB. Now each message is cut to a bounded length, saying how much
/// was left out, and the run ends under 1 GiB with every app GL000.
#[test]
fn a_recursive_tpl_of_a_large_value_gives_bounded_error_text() {
    let filler = "A".repeat(200 << 10);
    let files = vec![
        file(
            "apps/fleet.yaml",
            fleet_of_chart(60, "chart", "{{ .name }}", true, ""),
        ),
        file("chart/Chart.yaml", CHART),
        file(
            "chart/values.yaml",
            format!("x: \"{{{{ tpl .Values.x . }}}}{filler}\"\n"),
        ),
        file("chart/templates/cm.yaml", "{{ tpl .Values.x . }}\n"),
    ];
    let tmp = repo(&files, &files);
    let out = run_capped(
        tmp.path(),
        &[
            "check",
            "main",
            "--format",
            "json",
            "--helm-renderer",
            "native",
        ],
        GIB,
        120,
    );
    let report = json(&out);
    assert_eq!(
        unrendered_apps(&report).len(),
        60,
        "{}",
        &report.to_string()[..2000]
    );
    let messages = gl000_messages(&report);
    assert!(!messages.is_empty(), "no GL000 finding");
    let longest = messages.iter().map(String::len).max().unwrap_or(0);
    assert!(longest <= 16 << 10, "a message of {longest} bytes");
    assert!(
        messages.iter().all(|m| m.contains("bytes more)")),
        "{:?}",
        &messages[0][..500.min(messages[0].len())]
    );
    assert!(
        out.stdout.len() < 4 << 20,
        "{} bytes of JSON",
        out.stdout.len()
    );
}

/// A chart and an ApplicationSet whose templates match a pattern of 3,000
/// capture groups over 3,000 characters (the attacked shape ran past 20 s
/// at 1.4 GiB): refused as beyond gitops-lint's regex bounds, GL000, in a
/// few seconds under 1 GiB. Ordinary patterns still match as Go's do.
#[test]
fn regular_expressions_with_thousands_of_groups_are_bounded() {
    let hostile = r#"{{ regexFind (repeat 3000 "(a)") (repeat 3000 "a") }}{{ regexMatch (repeat 3000 "(a)") (repeat 3000 "a") }}"#;
    let files = vec![
        // In a chart.
        file("argocd/chart.yaml", app_yaml("chart", "chart", "")),
        file("chart/Chart.yaml", CHART),
        file(
            "chart/templates/cm.yaml",
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  x: '{hostile}'\n"),
        ),
        // In an ApplicationSet's template.
        file(
            "apps/fleet.yaml",
            fleet_of_chart(1, "plain", &format!("{{{{ .name }}}}{hostile}"), true, ""),
        ),
        file("plain/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\n"),
        // Ordinary groups, both places.
        file("argocd/fine.yaml", app_yaml("fine", "fine", "")),
        file("fine/Chart.yaml", CHART),
        file(
            "fine/templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ regexReplaceAll \"(a)(b)\" \"ab\" \"${2}${1}\" }}\n",
        ),
    ];
    let tmp = repo(&files, &files);
    let started = std::time::Instant::now();
    let out = run_capped(
        tmp.path(),
        &[
            "check",
            "main",
            "--format",
            "json",
            "--helm-renderer",
            "native",
        ],
        GIB,
        60,
    );
    let report = json(&out);
    // The chart's app, and the ApplicationSet itself (what it generates is
    // unknown), each naming the bound.
    assert_eq!(gl000_apps(&report), ["chart"], "{report:#}");
    let messages = gl000_messages(&report);
    assert_eq!(messages.len(), 2, "{messages:#?}");
    for m in &messages {
        assert!(m.contains("capture groups"), "{m}");
    }
    assert!(
        messages
            .iter()
            .any(|m| m.contains("ApplicationSet `fleet`")),
        "{messages:#?}"
    );
    assert!(
        apps_with_status(&report, "rendered").contains(&"fine".to_string()),
        "{report:#}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

/// fasttemplate (no `goTemplate`): a 1 MiB parameter named by 500 tags in
/// one string, 500 MiB, within the ApplicationSet's 512 MiB budget; its
/// buffer doubled towards 1 GiB (held or aborted, by luck). One string is
/// now bounded as one Go template execution's output is: GL000, under
/// 1 GiB, quickly.
#[test]
fn a_fasttemplate_string_of_hundreds_of_megabytes_is_refused() {
    let big = "x".repeat(1 << 20);
    let tags = "{{big}}".repeat(500);
    let files = vec![
        file(
            "apps/fleet.yaml",
            fleet_of_chart(1, "plain", "{{name}}", false, &format!(", big: {big}"))
                .into_iter()
                .chain(
                    format!("      info:\n      - name: x\n        value: '{tags}'\n").into_bytes(),
                )
                .collect::<Vec<u8>>(),
        ),
        file(
            "plain/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\n",
        ),
    ];
    let tmp = repo(&files, &files);
    let out = run_capped(tmp.path(), &["check", "main", "--format", "json"], GIB, 60);
    let report = json(&out);
    let messages = gl000_messages(&report);
    assert!(
        messages.iter().any(|m| m.contains("ApplicationSet `fleet`")
            && m.contains("beyond what gitops-lint evaluates")),
        "{messages:#?}"
    );
    assert!(
        apps_with_status(&report, "rendered").is_empty(),
        "{report:#}"
    );
}

/// A one-app repository whose PVC the change deletes.
fn pvc_deletion_repo() -> tempfile::TempDir {
    let app = file("argocd/a.yaml", app_yaml("a", "a", ""));
    let cm = file("a/cm.yaml", CM);
    repo(
        &[app.clone(), cm.clone(), file("a/pvc.yaml", pvc("data"))],
        &[app, cm],
    )
}

/// `--cache-dir` spelled to pass a check on its text but land in the
/// repository: through a directory that does not exist and `..` (the
/// attacked shape), the same into `.git`, and through a symlink outside
/// the repository after a missing directory (variants). Each is refused
/// with exit 2 and one line, and nothing is written in the repository.
#[test]
fn the_cache_directory_cannot_be_steered_into_the_repository() {
    let tmp = pvc_deletion_repo();
    let root = tmp.path().canonicalize().expect("canonical");
    let repo_name = root
        .file_name()
        .expect("named")
        .to_string_lossy()
        .into_owned();
    let outside = tempfile::tempdir().expect("temp dir");
    let link = outside.path().join("link");
    std::os::unix::fs::symlink(root.join(".git"), &link).expect("symlink");
    let before = snapshot(&root);
    let up = root
        .parent()
        .expect("parent")
        .join("gitops-lint-no-such-dir/..");
    for dir in [
        up.join(&repo_name).join("cache"),
        up.join(&repo_name).join(".git/cache"),
        outside.path().join("no-such-dir/../link/cache"),
    ] {
        let dir = dir.to_string_lossy().into_owned();
        let out = run_capped(
            &root,
            &[
                "diff",
                "main..change",
                "--format",
                "json",
                "--cache-dir",
                &dir,
            ],
            GIB,
            60,
        );
        assert_eq!(
            out.status.code(),
            Some(2),
            "{dir}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{dir}: {lines:?}");
        assert!(lines[0].contains("is inside the repository"), "{lines:?}");
        assert_eq!(snapshot(&root), before, "{dir}");
    }
}

/// The store of facts (`facts-*.bin` in the cache directory) replaced by a
/// FIFO: the run used to wait on it for ever. It is now read as an empty
/// store, and the run gives the same answer as with a real store.
#[test]
fn a_fifo_at_the_facts_store_does_not_block_the_run() {
    let tmp = pvc_deletion_repo();
    let cache = tempfile::tempdir().expect("temp dir");
    let dir = cache.path().to_string_lossy().into_owned();
    let args = [
        "diff",
        "main..change",
        "--format",
        "json",
        "--cache-dir",
        &dir,
    ];
    let first = run_capped(tmp.path(), &args, GIB, 60);
    let stores: Vec<PathBuf> = std::fs::read_dir(cache.path())
        .expect("cache written")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".bin"))
        .collect();
    assert_eq!(stores.len(), 1, "{stores:?}");
    std::fs::remove_file(&stores[0]).expect("removed");
    let made = std::process::Command::new("mkfifo")
        .arg(&stores[0])
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let second = run_capped(tmp.path(), &args, GIB, 60);
    assert_eq!(second.status.code(), first.status.code());
    assert_eq!(json(&second)["findings"], json(&first)["findings"]);
}

/// `--format FORMAT=FILE` where FILE is a symlink (a pull request commits
/// the SARIF's file name as a link to a file the runner can write): the
/// link is not followed and its target is unchanged; the run exits 4
/// naming the file. A FIFO there is refused too, not waited on.
#[test]
fn outputs_are_never_written_through_a_symlink_or_into_a_fifo() {
    let tmp = pvc_deletion_repo();
    let outside = tempfile::tempdir().expect("temp dir");
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "precious\n").expect("write");
    let link = tmp.path().join("gitops-lint.sarif");
    std::os::unix::fs::symlink(&victim, &link).expect("symlink");
    let fifo = outside.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    for (target, why) in [(&link, "is a symlink"), (&fifo, "is not a regular file")] {
        let spec = format!("sarif={}", target.display());
        let out = run_capped(
            tmp.path(),
            &["diff", "main..change", "--format", &spec],
            GIB,
            60,
        );
        assert_eq!(out.status.code(), Some(4));
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains(why), "{lines:?}");
    }
    assert_eq!(
        std::fs::read_to_string(&victim).expect("read"),
        "precious\n"
    );
    // A regular file is still written.
    let plain = outside.path().join("out.sarif");
    let spec = format!("sarif={}", plain.display());
    let out = run_capped(
        tmp.path(),
        &["diff", "main..change", "--format", &spec],
        GIB,
        60,
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read_to_string(&plain)
        .expect("written")
        .contains("GL001"));
}

/// Whether `line`, as a GitHub runner reads a log line, is a command.
fn is_runner_command(line: &str) -> bool {
    line.trim_start().starts_with("::") || line.contains("##[")
}

/// A run that exits 2 quotes the pull request's repoURLs on stderr: one
/// with a line break followed by `::warning`, `##[add-mask]` and a
/// right-to-left override. stderr stays one line, with no workflow command
/// and the override escaped.
#[test]
fn an_error_quoting_repository_text_cannot_command_the_runner() {
    let app = |url: &str| {
        String::from_utf8(app_yaml("a", "a", ""))
            .expect("utf-8")
            .replace(
                "repoURL: https://github.com/acme/gitops.git",
                &format!("repoURL: \"{url}\""),
            )
    };
    let evil = r"https://evil.example/x.git\n::warning title=pwned::owned ##[add-mask]secret \u202Egnp.exe";
    let files = vec![file("argocd/a.yaml", app(evil)), file("a/cm.yaml", CM)];
    let tmp = repo(&files, &files);
    let out = run_capped(tmp.path(), &["diff", "main..change"], GIB, 60);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("evil.example"), "{stderr}");
    assert!(!stderr.lines().any(is_runner_command), "{stderr}");
    assert!(!stderr.contains('\u{202e}'), "{stderr}");
}

/// Repository text in the machine formats: a directory `file:` at the
/// root and a file name holding `##[add-mask]` and a right-to-left
/// override. JSON and SARIF printed to a log carry no `##[` and no bidi
/// control, yet decode to the same path; every SARIF `uri` is relative
/// to the repository (no scheme, not absolute, no `..`); human, GitHub and
/// Markdown output escape the override.
#[test]
fn machine_formats_carry_no_runner_commands_and_relative_uris() {
    let name = "file:/etc/##[add-mask]\u{202e}lmay.yaml";
    let app = file("argocd/a.yaml", app_yaml("a", "\"file:/etc\"", ""));
    let base = vec![app.clone(), file(name, pvc("data"))];
    let head = vec![app, file(name, pvc("data2"))];
    let tmp = repo(&base, &head);
    let outside = tempfile::tempdir().expect("temp dir");
    let o = |f: &str| outside.path().join(f).to_string_lossy().into_owned();
    let (j, s, m, h) = (o("r.json"), o("r.sarif"), o("r.md"), o("r.txt"));
    let out = run_capped(
        tmp.path(),
        &[
            "diff",
            "main..change",
            "--format",
            &format!("json={j}"),
            "--format",
            &format!("sarif={s}"),
            "--format",
            &format!("markdown={m}"),
            "--format",
            &format!("human={h}"),
            "--format",
            "github",
        ],
        GIB,
        60,
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |p: &str| std::fs::read_to_string(p).expect("written");
    for (what, text) in [("json", read(&j)), ("sarif", read(&s))] {
        assert!(!text.contains("##["), "{what}: {text}");
        assert!(!text.contains('\u{202e}'), "{what}");
        // The escapes are JSON's own: the decoded values are unchanged.
        let value: Value = serde_json::from_str(&text).expect("valid JSON");
        let decoded = value.to_string();
        assert!(
            decoded.contains("##[add-mask]\u{202e}") || what == "sarif",
            "{what}: the value changed"
        );
        assert!(decoded.contains("add-mask"), "{what}");
    }
    let sarif: Value = serde_json::from_str(&read(&s)).expect("sarif");
    let mut uris = Vec::new();
    collect_uris(&sarif, &mut uris);
    assert!(!uris.is_empty());
    for u in &uris {
        let scheme = u
            .split_once(':')
            .is_some_and(|(head, _)| !head.contains('/'));
        assert!(!scheme && !u.starts_with('/'), "{u}");
        assert!(!u.split('/').any(|seg| seg == ".." || seg == "."), "{u}");
    }
    assert!(
        uris.iter().any(|u| u.starts_with("file%3A/etc/")),
        "{uris:?}"
    );
    let github = String::from_utf8_lossy(&out.stdout).into_owned();
    for (what, text) in [
        ("human", read(&h)),
        ("github", github),
        ("markdown", read(&m)),
    ] {
        assert!(!text.contains('\u{202e}'), "{what}: {text}");
        assert!(!text.contains("##["), "{what}: {text}");
        // GitHub output is workflow commands: gitops-lint's own, one a line.
        let own = |l: &str| {
            ["::error ", "::warning ", "::notice "]
                .iter()
                .any(|c| l.starts_with(c))
        };
        assert!(
            text.lines()
                .all(|l| !is_runner_command(l) || (what == "github" && own(l))),
            "{what}: {text}"
        );
    }
}

fn collect_uris(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("uri", Value::String(u)) => out.push(u.clone()),
                    _ => collect_uris(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_uris(x, out)),
        _ => {}
    }
}

/// 800 trailer-acknowledged PVC deletions with long names in one app, and
/// one unacknowledged PVC deletion in another: the Markdown report used
/// to spend its budget on the acknowledged app's table and show "0 of …
/// finding(s)" on a red check. The budget goes first to what fails the
/// run, and the header names it.
#[test]
fn the_markdown_budget_goes_first_to_what_fails_the_run() {
    let long = |i: usize| format!("bulk-{i:04}-{}", "x".repeat(200));
    let bulk: Vec<u8> = (0..800)
        .flat_map(|i| {
            let mut doc = b"---\n".to_vec();
            doc.extend(pvc(&long(i)));
            doc
        })
        .collect();
    let apps = vec![
        file("argocd/bulk.yaml", app_yaml("bulk", "bulk", "")),
        file("argocd/db.yaml", app_yaml("db", "db", "")),
        file("bulk/cm.yaml", CM),
        file("db/cm.yaml", CM),
    ];
    let mut base = apps.clone();
    base.push(file("bulk/pvcs.yaml", bulk));
    base.push(file("db/ledger.yaml", pvc("ledger")));
    let trailers: String = (0..800)
        .map(|i| {
            format!(
                "Gitops-Lint-Allow: PersistentVolumeClaim/bulk/{} retired\n",
                long(i)
            )
        })
        .collect();
    let tmp = repo_with_message(&base, &apps, &format!("Retire volumes\n\n{trailers}"));
    let outside = tempfile::tempdir().expect("temp dir");
    let md = outside.path().join("r.md");
    let spec = format!("markdown={}", md.display());
    let out = run_capped(
        tmp.path(),
        &[
            "diff",
            "main..change",
            "--format",
            &spec,
            "--format",
            "json",
        ],
        GIB,
        120,
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    // The PVC, and the mass prune of the acknowledged ones (GL013).
    assert_eq!(report["summary"]["error"], 2, "{}", report["summary"]);
    let md = std::fs::read_to_string(&md).expect("written");
    assert!(md.len() <= 65_000, "{}", md.len());
    let head = &md[..md.find("###").unwrap_or(md.len())];
    assert!(head.contains("**Fails the run** (2)"), "{head}");
    assert!(head.contains("PersistentVolumeClaim db/ledger"), "{head}");
    assert!(
        md.split("<details>")
            .any(|d| d.contains("(error)") && d.contains("db/ledger")),
        "the failing finding is not shown: {}",
        &md[..3000.min(md.len())]
    );
    assert!(md.contains("too large for one comment"));
}

/// The loose object file of `rev:path` in the repository at `dir`.
fn loose_object(dir: &Path, spec: &str) -> PathBuf {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(["rev-parse", spec])
        .output()
        .expect("git runs");
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    dir.join(".git/objects").join(&id[..2]).join(&id[2..])
}

/// A clone whose head lacks one object and holds another that does not
/// inflate (the attacked shape: both in one revision). Argo CD could not
/// read that revision either: the run stops with exit 4 and one line that
/// says the object database is damaged and what to do, in `diff` and in
/// `check`, instead of a render failure per app.
#[test]
fn missing_and_corrupt_objects_stop_the_run_with_one_line() {
    let app = file("argocd/a.yaml", app_yaml("a", "a", ""));
    let base = vec![app.clone(), file("a/cm.yaml", CM)];
    let mut head = base.clone();
    head.push(file("a/one.yaml", pvc("one")));
    head.push(file("a/two.yaml", pvc("two")));
    let tmp = repo(&base, &head);
    let missing = loose_object(tmp.path(), "change:a/one.yaml");
    let corrupt = loose_object(tmp.path(), "change:a/two.yaml");
    std::fs::remove_file(&missing).expect("removed");
    let mut perms = std::fs::metadata(&corrupt).expect("exists").permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&corrupt, perms).expect("writable");
    std::fs::write(&corrupt, b"not zlib at all").expect("written");
    for args in [
        &["diff", "main..change", "--format", "json"][..],
        &["check", "change", "--format", "json"],
    ] {
        let out = run_capped(tmp.path(), args, GIB, 60);
        assert_eq!(
            out.status.code(),
            Some(4),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(out.stdout.is_empty(), "{args:?}");
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{args:?}: {lines:?}");
        assert!(lines[0].contains("object database is damaged"), "{lines:?}");
        assert!(lines[0].contains("git fsck"), "{lines:?}");
    }
}

/// Through `pre-commit` (HEAD against the staged index): a staged symlink
/// to `/etc/passwd`, one climbing out with `..`, a directory app whose
/// path became a symlink to `/etc`, and a chain through a second link,
/// while a PVC is deleted. No content of `/etc/passwd` is printed; each
/// app reading a link is GL000; nothing is listed as pruned.
#[test]
fn symlinks_out_of_the_repository_through_pre_commit_are_never_followed() {
    let b_app = String::from_utf8(app_yaml("b", "b", ""))
        .expect("utf-8")
        .into_bytes();
    let base = vec![
        file("argocd/a.yaml", app_yaml("a", "a", "")),
        file("argocd/b.yaml", b_app),
        file("a/cm.yaml", CM),
        file("a/data-pvc.yaml", pvc("data")),
        file("b/pvc.yaml", pvc("b")),
    ];
    let tmp = repo(&base, &base);
    let dir = tmp.path();
    std::fs::remove_file(dir.join("a/data-pvc.yaml")).expect("removed");
    std::fs::remove_dir_all(dir.join("b")).expect("removed");
    std::os::unix::fs::symlink("/etc/passwd", dir.join("a/passwd.yaml")).expect("symlink");
    std::os::unix::fs::symlink("../../../../../../etc/passwd", dir.join("a/up.yaml"))
        .expect("symlink");
    std::os::unix::fs::symlink("/etc", dir.join("b")).expect("symlink");
    std::os::unix::fs::symlink("/etc/passwd", dir.join("link")).expect("symlink");
    std::os::unix::fs::symlink("../link", dir.join("a/chain.yaml")).expect("symlink");
    git(dir, &["add", "-A"]);
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let secret = passwd.lines().next().unwrap_or("root:x:0:0").to_string();
    for format in ["json", "human", "github"] {
        let out = run_capped(dir, &["pre-commit", "--format", format], GIB, 60);
        let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
        assert!(
            !String::from_utf8_lossy(&all).contains(&secret),
            "{format} printed /etc/passwd"
        );
        if format == "json" {
            let report = json(&out);
            let mut gl000 = unrendered_apps(&report);
            gl000.sort();
            assert_eq!(gl000, ["a", "b"], "{report:#}");
            assert!(!gl000_messages(&report).is_empty(), "{report:#}");
            assert!(pruned_apps(&report).is_empty(), "{report:#}");
        }
    }
}

/// A submodule removed by the change from a `recurse: true` directory app:
/// at base Argo CD checked it out and rendered its manifests
/// (`reposerver/repository/repository.go` `checkoutRevision` runs
/// `nativeGitClient.Submodule`), so the sync after the change prunes them,
/// and which they are is unknown: the app is GL000 at base, nothing is
/// listed as pruned, and it is not reported as rendered and smaller.
#[test]
fn a_submodule_removed_from_a_recursive_app_makes_its_prunes_unknown() {
    let recurse = "    directory:\n      recurse: true\n";
    let files = vec![
        file("apps/web.yaml", app_yaml("web", "apps/web", recurse)),
        file("apps/web/pvc.yaml", pvc("data")),
    ];
    let tmp = tempfile::tempdir().expect("tempdir");
    commit_with_raw_entries_on_both(
        tmp.path(),
        (&files, &[("apps/web", b"vendor", 0o160_000, None)]),
        (&files, &[]),
    );
    let out = run_capped(
        tmp.path(),
        &["diff", "main..change", "--format", "json"],
        GIB,
        60,
    );
    let report = json(&out);
    assert_eq!(gl000_apps(&report), ["web"], "{report:#}");
    assert!(
        gl000_messages(&report)
            .iter()
            .any(|m| m.contains("at base") && m.contains("submodule")),
        "{report:#}"
    );
    assert!(pruned_apps(&report).is_empty(), "{report:#}");
}

/// Twenty-four JSON patch `copy`s (or replacements) each copying a
/// ConfigMap's `data` into a new key of itself double the document at
/// every step. The build refuses the doubling that would pass the
/// per-resource limit before making it, so the largest document held is
/// under the limit, not twice it: the run ends with a render failure in
/// 256 MiB of address space beyond the binary's own.
#[test]
fn a_chain_of_copies_doubling_a_document_stops_before_the_last_doubling() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n";
    let copies: String = (0..24)
        .map(|i| format!("- op: copy\n  from: /data\n  path: /data/m{i}\n"))
        .collect();
    let replacements: String = (0..24)
        .map(|i| {
            format!(
                "- source: {{kind: ConfigMap, name: cm, fieldPath: data}}\n  targets:\n  - select: {{kind: ConfigMap, name: cm}}\n    fieldPaths: [data.m{i}]\n    options: {{create: true}}\n"
            )
        })
        .collect();
    let files = vec![
        file("argocd/p.yaml", app_yaml("p", "p", "")),
        file("p/cm.yaml", cm),
        file(
            "p/kustomization.yaml",
            "resources: [cm.yaml]\npatches:\n- path: copies.yaml\n  target: {kind: ConfigMap}\n",
        ),
        file("p/copies.yaml", copies),
        file("argocd/r.yaml", app_yaml("r", "r", "")),
        file("r/cm.yaml", cm),
        file(
            "r/kustomization.yaml",
            "resources: [cm.yaml]\nreplacements:\n- path: repl.yaml\n",
        ),
        file("r/repl.yaml", replacements),
    ];
    let tmp = repo(&files, &files);
    let out = run_capped(
        tmp.path(),
        &["check", "main", "--format", "json"],
        GIB + (256 << 20),
        120,
    );
    let report = json(&out);
    let messages = gl000_messages(&report);
    for what in ["patch", "a replacement"] {
        assert!(
            messages
                .iter()
                .any(|m| m.contains(&format!("{what} ")) && m.contains("grows a resource past")),
            "{what}: {messages:#?}"
        );
    }
}
