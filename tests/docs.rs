//! The README's rule table is generated from the registry (code, name,
//! default severity, the summary from `rules/<CODE>-<name>.md`) and must
//! match it. `GITOPS_LINT_BLESS=1 cargo test --test docs` rewrites the table
//! between `<!-- rules:start -->` and `<!-- rules:end -->`.

use std::path::Path;

use gitops_lint::rules;

const START: &str = "<!-- rules:start -->";
const END: &str = "<!-- rules:end -->";

/// The summary up to its first full stop followed by a space (or all of it).
fn first_sentence(s: &str) -> &str {
    s.find(". ").map_or(s, |i| &s[..=i])
}

/// The table as the registry describes it.
fn generated_table() -> String {
    let mut s =
        String::from("| code | name | default severity | what it reports |\n|---|---|---|---|\n");
    for r in rules::ALL {
        let m = r.meta();
        s.push_str(&format!(
            "| {} | [{}](rules/{}-{}.md) | {} | {} |\n",
            m.code,
            m.name,
            m.code,
            m.name,
            m.default_severity,
            first_sentence(&m.summary()).replace('|', "\\|")
        ));
    }
    s
}

#[test]
fn readme_rule_table_matches_the_registry() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md exists");
    let (Some(start), Some(end)) = (readme.find(START), readme.find(END)) else {
        panic!("README.md lacks the {START} / {END} markers");
    };
    assert!(start < end, "the rules markers are out of order");
    let current = readme[start + START.len()..end].trim_matches('\n');
    let wanted = generated_table();
    if current == wanted.trim_end() {
        return;
    }
    if std::env::var_os("GITOPS_LINT_BLESS").is_some() {
        let updated = format!("{}{START}\n{wanted}{}", &readme[..start], &readme[end..]);
        std::fs::write(&path, updated).expect("README.md writable");
        return;
    }
    panic!(
        "README.md's rule table disagrees with rules/ (GITOPS_LINT_BLESS=1 cargo test --test docs to regenerate)\n--- README\n{current}\n--- registry\n{wanted}"
    );
}

#[test]
fn every_rule_links_to_an_existing_doc() {
    for r in rules::ALL {
        let m = r.meta();
        let doc = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("rules")
            .join(format!("{}-{}.md", m.code, m.name));
        assert_eq!(
            std::fs::read_to_string(&doc).ok().as_deref(),
            Some(m.doc),
            "{} is not the embedded doc of {}",
            doc.display(),
            m.code
        );
    }
}

/// The README shows the demo's real output: it must not drift from what
/// `gitops-lint demo` prints.
#[test]
fn readme_demo_output_is_the_real_output() {
    let out = assert_cmd::Command::cargo_bin("gitops-lint")
        .expect("binary builds")
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .args(["demo", "--color", "never"])
        .env("NO_COLOR", "1")
        .output()
        .expect("demo runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "the demo exits 0 after showing its findings, so `demo && cargo test` goes on"
    );
    let live = String::from_utf8(out.stdout).expect("utf-8 output");
    let wanted = format!("```text\n$ gitops-lint demo\n{}\n```\n", live.trim_end());
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md exists");
    let (start_marker, end_marker) = ("<!-- demo:start -->\n", "<!-- demo:end -->");
    let (Some(start), Some(end)) = (readme.find(start_marker), readme.find(end_marker)) else {
        panic!("README.md lacks the demo markers");
    };
    let current = &readme[start + start_marker.len()..end];
    if current == wanted {
        return;
    }
    if std::env::var_os("GITOPS_LINT_BLESS").is_some() {
        let updated = format!(
            "{}{start_marker}{wanted}{}",
            &readme[..start],
            &readme[end..]
        );
        std::fs::write(&path, updated).expect("README.md writable");
        return;
    }
    panic!("README.md's demo output is stale (GITOPS_LINT_BLESS=1 cargo test --test docs)\n--- README\n{current}\n--- live\n{wanted}");
}
