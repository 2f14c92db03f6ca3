//! GitHub Actions workflow commands (`::error file=…,line=…,title=…::…`):
//! each finding becomes an annotation shown inline on the pull request.
//!
//! Findings are attached to a file that exists at head (the report's
//! anchors), because GitHub shows annotations only on files of the change.

use std::io::Write;

use super::Report;
use crate::finding::{Acknowledgement, Severity};

/// Escapes a command's message (`%`, `\r`, `\n`), as the runner decodes it,
/// with `##[` and `::` broken so the data cannot read as another command.
#[must_use]
pub(crate) fn escape_data(s: &str) -> String {
    super::without_runner_commands(s)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value: the message escapes plus `:` and `,`, which
/// would otherwise end the property.
#[must_use]
pub(crate) fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn command(sev: Severity, ack: Option<&Acknowledgement>) -> &'static str {
    // A deletion acknowledged only by the change's own commit trailer stays
    // a warning, so reviewers see it on the pull request.
    match ack {
        Some(a) if a.by_author() => return "warning",
        Some(_) => return "notice",
        None => {}
    }
    match sev {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    }
}

/// Writes one workflow command per finding and note.
///
/// # Errors
/// Write failures.
pub(crate) fn emit(r: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    for n in &r.notes {
        writeln!(
            out,
            "::notice title={}::{}",
            escape_property("gitops-lint"),
            escape_data(n)
        )?;
    }
    for (i, f) in r.findings.iter().enumerate() {
        let mut props = Vec::new();
        if let Some(loc) = r.anchor(i) {
            props.push(format!("file={}", escape_property(&loc.file)));
            // Without a line the annotation applies to the whole file.
            if let Some(line) = loc.line.filter(|l| *l > 0) {
                props.push(format!("line={line}"));
            }
        }
        let mut title = format!("{} {}", f.rule.code, f.rule.name);
        if let Some(a) = &f.acknowledged {
            title.push_str(&format!(" ({})", a.label()));
        }
        props.push(format!("title={}", escape_property(&title)));
        let mut msg = f.message.clone();
        if let Some(a) = &f.acknowledged {
            msg.push_str(&format!("\nacknowledged: {a}"));
        } else if let Some(h) = &f.help {
            msg.push_str(&format!("\nhelp: {h}"));
        }
        if let Some(line) = r.acknowledge_line(f) {
            msg.push_str(&format!("\n{line}"));
        }
        writeln!(
            out,
            "::{} {}::{}",
            command(f.severity, f.acknowledged.as_ref()),
            props.join(","),
            escape_data(&msg)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample;

    #[test]
    fn escapes_follow_the_runner_rules() {
        assert_eq!(escape_data("100%\r\nok"), "100%25%0D%0Aok");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
    }

    #[test]
    fn one_command_per_finding_on_the_anchor() {
        let mut buf = Vec::new();
        emit(&sample(), &mut buf).expect("writes");
        let text = String::from_utf8(buf).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines[0].starts_with("::notice title=gitops-lint::.gitops-lint.yaml differs"));
        assert_eq!(
            lines[1],
            "::error file=apps/payments/kustomization.yaml,title=GL001 stateful-prune::automated sync of `payments` would delete `PersistentVolumeClaim payments/data`%0Ahelp: restore the manifest"
        );
        assert!(
            lines[2].starts_with(
                "::notice file=apps/web/svc.yaml,line=1,title=GL001 stateful-prune (acknowledged)::"
            ),
            "{}",
            lines[2]
        );
        // No anchor: no file property at all; `,` and `%` in the message are
        // data, escaped only where the runner requires it.
        assert_eq!(
            lines[3],
            "::notice title=GL002 app-cascade-delete::Application `old` is removed from git but nothing manages it, 100%25 sure: a,b"
        );
    }
}
