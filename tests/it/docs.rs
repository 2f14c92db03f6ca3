//! The documentation is checked against what it describes:
//!
//! - `docs/rules.md`'s rule table is generated from the registry (code,
//!   name, severity as findings carry it, the summary from
//!   `rules/<CODE>-<name>.md`) and must match it;
//!   `GITOPS_LINT_BLESS=1 cargo test --test it docs::` rewrites the table between
//!   `<!-- rules:start -->` and `<!-- rules:end -->`, and the README's demo.
//! - Every relative link and `#anchor` of README.md, CONTRIBUTING.md,
//!   docs/*.md and rules/*.md resolves.
//! - Every `gitops-lint ...` command line in a shell block parses with the
//!   real command line (the arguments, then `--help`: clap rejects an
//!   unknown subcommand, flag or value before it reaches `--help`).
//! - The repository is named as `Cargo.toml` names it, everywhere.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use gitops_lint::rules;

const START: &str = "<!-- rules:start -->";
const END: &str = "<!-- rules:end -->";

/// The summary up to its first full stop followed by a space (or all of it).
fn first_sentence(s: &str) -> &str {
    s.find(". ").map_or(s, |i| &s[..=i])
}

/// The table as the registry describes it.
fn generated_table() -> String {
    let mut s = String::from("| code | name | severity | what it reports |\n|---|---|---|---|\n");
    for r in rules::ALL {
        let m = r.meta();
        s.push_str(&format!(
            "| {} | [{}](../rules/{}-{}.md) | {} | {} |\n",
            m.code,
            m.name,
            m.code,
            m.name,
            m.severity_text().replace('|', "\\|"),
            first_sentence(&m.summary()).replace('|', "\\|")
        ));
    }
    s
}

#[test]
fn rule_table_matches_the_registry() {
    let path = root().join("docs/rules.md");
    let readme = std::fs::read_to_string(&path).expect("docs/rules.md exists");
    let (Some(start), Some(end)) = (readme.find(START), readme.find(END)) else {
        panic!("docs/rules.md lacks the {START} / {END} markers");
    };
    assert!(start < end, "the rules markers are out of order");
    let current = readme[start + START.len()..end].trim_matches('\n');
    let wanted = generated_table();
    if current == wanted.trim_end() {
        return;
    }
    if std::env::var_os("GITOPS_LINT_BLESS").is_some() {
        let updated = format!("{}{START}\n{wanted}{}", &readme[..start], &readme[end..]);
        std::fs::write(&path, updated).expect("docs/rules.md writable");
        return;
    }
    panic!(
        "docs/rules.md's rule table disagrees with rules/ (GITOPS_LINT_BLESS=1 cargo test --test it docs:: to regenerate)\n--- docs/rules.md\n{current}\n--- registry\n{wanted}"
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
    panic!("README.md's demo output is stale (GITOPS_LINT_BLESS=1 cargo test --test it docs::)\n--- README\n{current}\n--- live\n{wanted}");
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The README stays a page one reads to the end; the rest is in docs/.
#[test]
fn readme_is_at_most_300_lines() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines; move detail to docs/"
    );
    assert!(
        !readme.contains("DESIGN.md"),
        "README.md cites DESIGN.md, which is not in the repository"
    );
}

/// Every Markdown file the checks cover, relative to the repository.
fn doc_files() -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("README.md"), PathBuf::from("CONTRIBUTING.md")];
    for dir in ["docs", "rules"] {
        let mut md: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .expect("directory exists")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .map(|p| Path::new(dir).join(p.file_name().expect("a file name")))
            .collect();
        md.sort();
        files.extend(md);
    }
    files
}

/// A fenced block: its info string and its lines.
struct Fence<'a> {
    info: &'a str,
    lines: Vec<&'a str>,
}

/// The text outside fenced blocks, and the fenced blocks. A fence is three
/// or more backticks or tildes, possibly indented (inside a list item).
fn split_fences(text: &str) -> (Vec<&str>, Vec<Fence<'_>>) {
    let mut prose = Vec::new();
    let mut fences = Vec::new();
    let mut open: Option<(String, Fence<'_>)> = None;
    for line in text.lines() {
        let t = line.trim_start();
        let marker: String = t.chars().take_while(|c| *c == '`' || *c == '~').collect();
        match &mut open {
            Some((m, fence)) => {
                if marker.len() >= m.len()
                    && t[marker.len()..].trim().is_empty()
                    && marker.starts_with(&m[..1])
                {
                    let (_, done) = open.take().expect("open");
                    fences.push(done);
                } else {
                    fence.lines.push(line);
                }
            }
            None if marker.len() >= 3 => {
                open = Some((
                    marker.clone(),
                    Fence {
                        info: t[marker.len()..].trim(),
                        lines: Vec::new(),
                    },
                ));
            }
            None => prose.push(line),
        }
    }
    assert!(open.is_none(), "a fenced block is not closed");
    (prose, fences)
}

/// A line without its inline code spans.
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find('`') {
        out.push_str(&rest[..i]);
        let ticks = rest[i..].chars().take_while(|c| *c == '`').count();
        let after = &rest[i + ticks..];
        let close = "`".repeat(ticks);
        match after.find(&close) {
            Some(j) => rest = &after[j + ticks..],
            None => {
                out.push_str(&rest[i..]);
                return out;
            }
        }
    }
    out.push_str(rest);
    out
}

/// GitHub's anchor of a heading: lower case, punctuation but `-` and `_`
/// dropped, spaces turned into `-`; a repeated one gets `-1`, `-2`...
fn anchors(text: &str) -> BTreeSet<String> {
    let (prose, _) = split_fences(text);
    let mut seen = BTreeSet::new();
    for line in prose {
        let Some(title) = line
            .strip_prefix('#')
            .map(|l| l.trim_start_matches('#'))
            .filter(|l| l.starts_with(' '))
        else {
            continue;
        };
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut unique = slug.clone();
        let mut n = 0;
        while seen.contains(&unique) {
            n += 1;
            unique = format!("{slug}-{n}");
        }
        seen.insert(unique);
    }
    seen
}

/// Every `[text](target)` link target outside code.
fn link_targets(text: &str) -> Vec<String> {
    let (prose, _) = split_fences(text);
    let mut out = Vec::new();
    for line in prose {
        let line = without_code_spans(line);
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let end = after.find(')').unwrap_or(after.len());
            let target = after[..end].split_whitespace().next().unwrap_or("");
            out.push(target.to_string());
            rest = &after[end..];
        }
    }
    out
}

/// Why `target`, linked from `file` (relative to the repository), does not
/// resolve; `None` when it does. Links to other sites are not followed.
fn broken(file: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    let resolved = if path.is_empty() {
        file.to_path_buf()
    } else {
        file.parent().unwrap_or(Path::new("")).join(path)
    };
    let on_disk = root().join(&resolved);
    if !on_disk.exists() {
        return Some(format!("{} does not exist", resolved.display()));
    }
    let anchor = anchor?;
    if on_disk.is_dir() || on_disk.extension().is_none_or(|x| x != "md") {
        return Some(format!("#{anchor} points into a file that is not Markdown"));
    }
    let text = std::fs::read_to_string(&on_disk).ok()?;
    (!anchors(&text).contains(anchor))
        .then(|| format!("{} has no heading #{anchor}", resolved.display()))
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in doc_files() {
        let text = std::fs::read_to_string(root().join(&file)).expect("readable");
        for target in link_targets(&text) {
            checked += 1;
            if let Some(why) = broken(&file, &target) {
                problems.push(format!("{}: ({target}): {why}", file.display()));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: the parser is broken"
    );
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

/// The checker itself catches what it is for.
#[test]
fn the_link_checker_rejects_broken_links() {
    let readme = Path::new("README.md");
    assert_eq!(broken(readme, "docs/usage.md"), None);
    assert_eq!(broken(readme, "docs/usage.md#what-a-diff-reports"), None);
    assert_eq!(broken(readme, "#try-it"), None);
    assert_eq!(broken(readme, "https://example.com/missing"), None);
    assert!(broken(readme, "docs/nothing.md").is_some());
    assert!(broken(readme, "#no-such-heading").is_some());
    assert!(broken(readme, "docs/usage.md#no-such-heading").is_some());
    assert!(broken(Path::new("docs/rules.md"), "rules/GL001-stateful-prune.md").is_some());
    assert_eq!(
        anchors("# Configuration: `.gitops-lint.yaml`\n## How Argo CD's behaviour is modelled\n## A\n## A\n```\n# not a heading\n```\n"),
        ["a", "a-1", "configuration-gitops-lintyaml", "how-argo-cds-behaviour-is-modelled"]
            .into_iter()
            .map(String::from)
            .collect()
    );
    assert_eq!(
        link_targets("[a](x.md) `[b](y.md)` [c](z.md#q \"t\")\n```\n[d](w.md)\n```\n"),
        vec!["x.md", "z.md#q"]
    );
}

/// Every `gitops-lint` invocation in a shell block (or a `$ ` line of a
/// text block), with `cargo run [--release] --` counted as one: the words
/// after the program, continuation lines joined, `&&`, `|` and `;`
/// separating commands, `NAME=value` prefixes skipped.
fn commands(text: &str) -> Vec<Vec<String>> {
    let (_, fences) = split_fences(text);
    let mut out = Vec::new();
    for fence in fences {
        let shell = matches!(fence.info, "sh" | "bash" | "shell" | "console");
        let mut logical = Vec::new();
        let mut current = String::new();
        for line in &fence.lines {
            let line = line.trim();
            if let Some(head) = line.strip_suffix('\\') {
                current.push_str(head);
                current.push(' ');
                continue;
            }
            current.push_str(line);
            logical.push(std::mem::take(&mut current));
        }
        for line in logical {
            let line = match line.strip_prefix("$ ") {
                Some(l) => l.to_string(),
                None if shell => line,
                None => continue,
            };
            let Some(words) = shlex::split(&line) else {
                panic!("cannot split `{line}` as a shell would");
            };
            for command in words.split(|w| matches!(w.as_str(), "&&" | "||" | "|" | ";")) {
                // A redirection and what follows it are the shell's, not
                // arguments (`gitops-lint man > gitops-lint.1`).
                let redirect = |w: &String| w.starts_with('>') || w.starts_with('<') || w == "2>";
                let command = match command.iter().position(redirect) {
                    Some(i) => &command[..i],
                    None => command,
                };
                let mut words = command
                    .iter()
                    .skip_while(|w| w.contains('=') && !w.starts_with('-'));
                match words.next().map(String::as_str) {
                    Some("gitops-lint") => out.push(words.cloned().collect()),
                    Some("cargo") => {
                        let rest: Vec<String> = words.cloned().collect();
                        if rest.first().map(String::as_str) == Some("run") {
                            if let Some(i) = rest.iter().position(|w| w == "--") {
                                out.push(rest[i + 1..].to_vec());
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

#[test]
fn every_command_shown_parses() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in doc_files() {
        let text = std::fs::read_to_string(root().join(&file)).expect("readable");
        for args in commands(&text) {
            checked += 1;
            let out = assert_cmd::Command::cargo_bin("gitops-lint")
                .expect("binary builds")
                .args(&args)
                .arg("--help")
                .env("NO_COLOR", "1")
                .output()
                .expect("runs");
            if out.status.code() != Some(0) || !out.stderr.is_empty() {
                problems.push(format!(
                    "{}: `gitops-lint {}`: {}",
                    file.display(),
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
    }
    assert!(
        checked >= 5,
        "only {checked} commands found: the parser is broken"
    );
    assert!(
        problems.is_empty(),
        "commands that do not parse:\n{}",
        problems.join("\n")
    );
}

/// The checker finds commands where they are, and the binary does reject
/// a misspelt flag under `--help`, so the check above means something.
#[test]
fn the_command_checker_finds_commands_and_rejects_bad_ones() {
    let text = "```sh\nSKIP=x gitops-lint diff main..HEAD \\\n  --format json # c\ncd x && gitops-lint check\ngit commit\n```\n```text\n$ gitops-lint demo\nnot a command\n```\n```yaml\nentry: gitops-lint pre-commit\n```\n```sh\ncargo run --release -- demo && cargo test\n```\n";
    assert_eq!(
        commands(text),
        vec![
            vec!["diff", "main..HEAD", "--format", "json"],
            vec!["check"],
            vec!["demo"],
            vec!["demo"],
        ]
    );
    let out = assert_cmd::Command::cargo_bin("gitops-lint")
        .expect("binary builds")
        .args(["diff", "--formt", "json", "--help"])
        .output()
        .expect("runs");
    assert_ne!(out.status.code(), Some(0));
}

/// One repository name everywhere: the one `Cargo.toml` gives, which SARIF
/// rules link their docs under.
#[test]
fn the_repository_is_named_as_cargo_toml_names_it() {
    let repo = env!("CARGO_PKG_REPOSITORY");
    let slug = repo
        .strip_prefix("https://github.com/")
        .expect("a GitHub URL");
    let mut files = doc_files();
    files.extend([
        PathBuf::from("action.yml"),
        PathBuf::from(".pre-commit-hooks.yaml"),
    ]);
    let mut problems = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(root().join(&file)).expect("readable");
        for (n, line) in text.lines().enumerate() {
            if line.contains("OWNER/") {
                problems.push(format!(
                    "{}:{}: a placeholder: {line}",
                    file.display(),
                    n + 1
                ));
            }
            for (i, _) in line.match_indices("/gitops-lint") {
                let before = &line[..i];
                let owner_start = before
                    .rfind(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_' || c == '.'))
                    .map_or(0, |j| j + 1);
                let owner = &before[owner_start..];
                let full = format!("{owner}/gitops-lint");
                let named = before[..owner_start].ends_with("github.com/")
                    || before[..owner_start].trim_end().ends_with("uses:");
                if named && full != slug {
                    problems.push(format!("{}:{}: {full}, not {slug}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `docs/schema/report.schema.json` describes the JSON report exactly:
/// every golden case's and output snapshot's JSON validates, and a report
/// with a key or value the contract lacks does not.
#[test]
fn every_golden_json_report_validates_against_the_schema() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("docs/schema/report.schema.json")).expect("schema"),
    )
    .expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let mut reports = Vec::new();
    for dir in ["testdata/cases", "testdata/output"] {
        let mut stack = vec![root().join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("readable").flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.file_name().is_some_and(|n| n == "expected.json") {
                    reports.push(p);
                }
            }
        }
    }
    assert!(reports.len() > 100, "only {} golden reports", reports.len());
    let mut problems = Vec::new();
    let mut first = None;
    for p in &reports {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p).expect("readable")).expect("JSON");
        for e in validator.iter_errors(&v) {
            problems.push(format!("{}: {}: {e}", p.display(), e.instance_path()));
        }
        if first.is_none() && v["findings"].as_array().is_some_and(|f| !f.is_empty()) {
            first = Some(v);
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let good = first.expect("a report with findings");
    for (pointer, value) in [
        ("/findings/0/severity", serde_json::json!("fatal")),
        ("/version", serde_json::json!(2)),
        ("/summary/error", serde_json::json!(-1)),
    ] {
        let mut bad = good.clone();
        *bad.pointer_mut(pointer).expect("present") = value;
        assert!(
            !validator.is_valid(&bad),
            "{pointer} altered still validates"
        );
    }
    let mut bad = good;
    bad["findings"][0]["undocumented"] = true.into();
    assert!(!validator.is_valid(&bad), "an undocumented key validates");
}

/// The YAML blocks that show `.gitops-lint.yaml`: every block of
/// docs/configuration.md, and every block anywhere that starts with the
/// comment `# .gitops-lint.yaml`, as JSON values.
fn documented_configurations() -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    for file in doc_files() {
        let text = std::fs::read_to_string(root().join(&file)).expect("readable");
        let (_, fences) = split_fences(&text);
        let whole = file == Path::new("docs/configuration.md");
        for fence in fences.iter().filter(|f| f.info == "yaml") {
            let body = fence.lines.join("\n");
            if !(whole || body.trim_start().starts_with("# .gitops-lint.yaml")) {
                continue;
            }
            let docs = goyaml::load_all(&body).expect("documented YAML loads");
            for d in docs {
                out.push((file.display().to_string(), d.into_value()));
            }
        }
    }
    out
}

/// `docs/schema/config.schema.json`, for editors, accepts every documented
/// configuration and rejects what the command line rejects.
#[test]
fn the_configuration_schema_accepts_the_documented_examples() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("docs/schema/config.schema.json")).expect("schema"),
    )
    .expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let examples = documented_configurations();
    assert!(
        examples.len() >= 3,
        "only {} documented configurations",
        examples.len()
    );
    let mut problems = Vec::new();
    for (file, v) in &examples {
        for e in validator.iter_errors(v) {
            problems.push(format!("{file}: {}: {e}", e.instance_path()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for bad in [
        "rule: {ignore: [GL014]}\n",
        "helmRenderer: fast\n",
        "massPrune: {ratio: 2}\n",
        "applicationSet: {policy: delete-all}\n",
        "rules: {severity: {GL001: fatal}}\n",
        "acknowledge: {trailer: false}\n",
    ] {
        let v = goyaml::load_all(bad).expect("YAML")[0].clone().into_value();
        assert!(!validator.is_valid(&v), "the schema accepts {bad:?}");
    }
}
