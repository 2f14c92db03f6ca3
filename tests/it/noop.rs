//! A pull request that changes nothing is green on every repository: for
//! every golden case, `diff` from its head commit to an empty commit on top
//! of it reports no finding and would exit 0, whatever the case's tree
//! holds (broken apps, remote bases, unsafe ApplicationSets, pre-existing
//! hazards of every rule), except a tree whose configuration does not load
//! (`headConfigDoesNotLoad: true` in case.yaml), which stops every run.

use crate::common;

use common::golden::cases;
use gitops_lint::finding::Severity;
use gitops_lint::lint;
use gitops_lint::source::write_commit;

#[test]
fn an_empty_commit_is_green_on_every_golden_case() {
    let all = cases();
    assert!(!all.is_empty(), "no golden cases found");
    let mut failures = Vec::new();
    for case in &all {
        // A tree whose configuration does not load stops every run with
        // exit status 2 by design: GL022 reports the change that makes it.
        if case.meta["headConfigDoesNotLoad"] == true {
            continue;
        }
        let tmp = tempfile::tempdir().expect("tmp");
        let committed = match case.commit(tmp.path()) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{}: cannot commit: {e}", case.name));
                continue;
            }
        };
        let head_branch = if case.command() == "check" {
            "main"
        } else {
            "change"
        };
        let repo = git2::Repository::open(tmp.path()).expect("repo");
        let head = repo
            .find_commit(git2::Oid::from_str(&committed.head).expect("oid"))
            .expect("head commit");
        let sig = git2::Signature::new(
            "gitops-lint",
            "gitops-lint@example.invalid",
            &git2::Time::new(1_700_000_100, 0),
        )
        .expect("signature");
        repo.commit(
            Some("refs/heads/noop"),
            &sig,
            &sig,
            "an empty commit",
            &head.tree().expect("tree"),
            &[&head],
        )
        .expect("empty commit");
        let _ = write_commit; // the case's own commits come from `Case::commit`
        let opts = lint::Options {
            repo: Some(tmp.path().to_path_buf()),
            ..lint::Options::default()
        };
        match lint::diff(Some(&format!("{head_branch}..noop")), &opts) {
            Ok(report) => {
                if !report.findings.is_empty() {
                    let lines: Vec<String> = report
                        .findings
                        .iter()
                        .map(|f| format!("  {} {}: {}", f.rule.code, f.severity, f.message))
                        .collect();
                    failures.push(format!("{}:\n{}", case.name, lines.join("\n")));
                }
                assert!(
                    !report.fails_at(Some(Severity::Warning)) || !report.findings.is_empty(),
                    "a report without findings cannot fail"
                );
            }
            Err(e) => failures.push(format!("{}: the diff failed: {e}", case.name)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} golden cases report findings on an empty commit:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}
