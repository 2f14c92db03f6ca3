//! Every output format on one shared case, `testdata/output/mixed`: a change
//! with errors, a warning, info, an acknowledged deletion (annotation and
//! commit trailer), an unused trailer, a protected prune, and a head
//! configuration that tries to switch off the rule judging it.
//!
//! One run of the real binary writes all five formats (`--format F=FILE`
//! repeated, GitHub annotations on stdout); each is compared with
//! `expected.<format>` beside the case. `GITOPS_LINT_BLESS=1` rewrites them.

use crate::common;

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

struct Outputs {
    human: String,
    json: String,
    sarif: String,
    github: String,
    markdown: String,
    status: i32,
}

fn run_mixed() -> Outputs {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/output/mixed");
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    let message =
        std::fs::read_to_string(case.join("commit-message.txt")).expect("commit-message.txt");
    let (base, head) = common::commit_case(&repo, &case, &message);
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).expect("out dir");
    let o = |name: &str| out.join(name);
    let assert = Command::cargo_bin("gitops-lint")
        .expect("binary")
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .current_dir(&repo)
        .env_remove("GITHUB_ACTIONS")
        .args(["diff", "main..change"])
        .arg(format!("--format=human={}", o("human").display()))
        .arg(format!("--format=json={}", o("json").display()))
        .arg(format!("--format=sarif={}", o("sarif").display()))
        .arg(format!("--format=markdown={}", o("markdown").display()))
        .arg("--format=github")
        .assert();
    let output = assert.get_output();
    let norm = |s: String| common::normalize(&s, &base, &head);
    let read = |n: &str| norm(std::fs::read_to_string(o(n)).expect("output written"));
    Outputs {
        human: read("human"),
        json: read("json"),
        sarif: read("sarif"),
        markdown: read("markdown"),
        github: norm(String::from_utf8_lossy(&output.stdout).into_owned()),
        status: output.status.code().unwrap_or(-1),
    }
}

#[test]
fn every_format_matches_its_snapshot() {
    let out = run_mixed();
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/output/mixed");
    let mut failures = Vec::new();
    let sarif = sarif_without_docs(&out.sarif);
    for (file, text) in [
        ("expected.human.txt", &out.human),
        ("expected.json", &out.json),
        ("expected.sarif", &sarif),
        ("expected.github.txt", &out.github),
        ("expected.md", &out.markdown),
    ] {
        if let Err(e) = common::compare_or_bless(&case.join(file), text) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Unacknowledged errors fail the run.
    assert_eq!(out.status, 1);
}

/// The SARIF log with each rule's documentation replaced by its file name,
/// after checking it is exactly that file's text: the snapshot then changes
/// with the format, not with every edit of a rule's prose.
fn sarif_without_docs(text: &str) -> String {
    let mut log: Value = serde_json::from_str(text).expect("SARIF is JSON");
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array_mut()
        .expect("rules");
    assert_eq!(rules.len(), gitops_lint::rules::ALL.len());
    for (d, r) in rules.iter_mut().zip(gitops_lint::rules::ALL) {
        let m = r.meta();
        assert_eq!(d["id"], m.code);
        assert_eq!(d["help"]["markdown"], m.doc);
        assert_eq!(d["help"]["text"], m.doc);
        assert_eq!(d["shortDescription"]["text"], m.summary());
        assert_eq!(d["fullDescription"]["text"], m.summary());
        let file = format!("<rules/{}-{}.md>", m.code, m.name);
        d["help"]["markdown"] = file.clone().into();
        d["help"]["text"] = file.clone().into();
        d["shortDescription"]["text"] = format!("<summary of {file}>").into();
        d["fullDescription"]["text"] = format!("<summary of {file}>").into();
    }
    serde_json::to_string_pretty(&log).expect("serialises") + "\n"
}

#[test]
fn sarif_output_validates_against_the_oasis_schema() {
    let out = run_mixed();
    let log: Value = serde_json::from_str(&out.sarif).expect("SARIF is JSON");
    assert_eq!(common::sarif_schema_errors(&log), Vec::<String>::new());
    let results = log["runs"][0]["results"].as_array().expect("results");
    assert!(!results.is_empty());
    for r in results {
        assert!(r["partialFingerprints"]["gitopsLint/v1"].is_string(), "{r}");
        // GitHub rejects a whole upload if one result has no physical location.
        let loc = &r["locations"][0];
        assert!(
            loc["physicalLocation"]["artifactLocation"]["uri"].is_string(),
            "no physical location: {r}"
        );
    }
    // A prune whose file is gone at head is shown on the Application that
    // prunes it, a file of the change, with the base file as related location.
    let ledger = results
        .iter()
        .find(|r| {
            r["message"]["text"]
                .as_str()
                .is_some_and(|m| m.contains("PersistentVolumeClaim payments/ledger`"))
        })
        .expect("ledger finding");
    assert_eq!(
        ledger["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "apps/payments.yaml"
    );
    assert_eq!(
        ledger["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "workloads/payments/ledger-pvc.yaml"
    );
    assert_eq!(ledger["level"], "error");
    // The one acknowledged by an annotation (merged before) is suppressed;
    // the one acknowledged only by the change's own trailer stays visible
    // as a warning.
    let suppressed = results
        .iter()
        .filter(|r| r["suppressions"].is_array())
        .count();
    assert_eq!(suppressed, 1);
    let by_trailer: Vec<&Value> = results
        .iter()
        .filter(|r| r["properties"]["acknowledgement"]["source"] == "trailer")
        .collect();
    assert_eq!(by_trailer.len(), 1);
    assert_eq!(by_trailer[0]["level"], "warning");
}

#[test]
fn base_configuration_wins_and_every_format_with_room_says_so() {
    let out = run_mixed();
    let json: Value = serde_json::from_str(&out.json).expect("json");
    // Head's `.gitops-lint.yaml` ignores GL001; the base's does not, and wins.
    assert!(json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|f| f["code"] == "GL001"));
    let note = ".gitops-lint.yaml differs at head; the base revision's configuration was used";
    assert!(out.human.contains(note));
    assert!(out.markdown.contains(note));
    assert!(out.sarif.contains(note));
    assert!(out.github.contains(note));
}

#[test]
fn acknowledged_findings_are_shown_but_do_not_count() {
    let out = run_mixed();
    // The trailer and the annotation each acknowledge one deletion.
    assert!(out
        .github
        .contains("::warning file=apps/web.yaml,line=1,title=GL001 stateful-prune (acknowledged by commit trailer)::syncing `web` with prune would delete `Service web/public-lb`"));
    let note = "1 deletion(s) acknowledged only by `Gitops-Lint-Allow` commit trailers of this change, written by its author: `Service web/public-lb` (GL001)";
    for text in [&out.human, &out.github, &out.sarif, &out.json] {
        assert!(text.contains(note), "{text}");
    }
    // Markdown escapes the backticks of message text (it may carry repository text).
    assert!(
        out.markdown.contains(&note.replace('`', "\\`")),
        "{}",
        out.markdown
    );
    assert!(out.human.contains(
        "acknowledged: gitops-lint.io/allow-prune: archive exported to object storage (OPS-1234)"
    ));
    // The misspelt trailer is reported.
    assert!(out.github.contains("::warning title=GL014 unused-acknowledgement::commit trailer `Gitops-Lint-Allow: PersistentVolumeClaim/payment/ledger` matches no deletion"));
    let json: Value = serde_json::from_str(&out.json).expect("json");
    let errors = json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["severity"] == "error")
        .count() as u64;
    // Acknowledged findings are listed but left out of the summary counts.
    let acked_errors = 1;
    let acked: Vec<&str> = json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["acknowledged"] == true)
        .filter_map(|f| f["acknowledgement"]["source"].as_str())
        .collect();
    assert_eq!(acked, ["annotation", "trailer"]);
    assert_eq!(
        json["summary"]["error"].as_u64(),
        Some(errors - acked_errors)
    );
}

/// Two roots (one Argo CD per cluster) render Applications of the same
/// names; a child deleted under the prod root is annotated on files of the
/// prod topology that the change touches, never on the dev one's.
#[test]
fn annotations_of_one_topology_never_land_on_another() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "testdata/cases/GL002-app-cascade-delete/two-roots-of-one-name-child-deleted-under-second",
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    common::commit_case(&repo, &case, "drop prod payments");
    let output = Command::cargo_bin("gitops-lint")
        .expect("binary")
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .current_dir(&repo)
        .env_remove("GITHUB_ACTIONS")
        .args(["diff", "main..change", "--format=github"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1), "a deletion fails the check");
    let text = String::from_utf8_lossy(&output.stdout);
    let files: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("::error") || l.starts_with("::warning"))
        .filter_map(|l| l.split("file=").nth(1))
        .filter_map(|rest| rest.split([',', ':']).next())
        .collect();
    assert!(!files.is_empty(), "annotations carry files:\n{text}");
    for f in &files {
        assert!(f.starts_with("envs/prod/"), "annotation on `{f}`:\n{text}");
    }
    assert!(
        text.contains("payments@envs/prod/root.yaml"),
        "the app is named with its instance:\n{text}"
    );
}
