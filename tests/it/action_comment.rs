//! The Action's sticky pull-request comment (`scripts/action-comment.sh`)
//! against a GitHub API stand-in this test serves on 127.0.0.1: a first
//! run posts the comment, a later run updates the one with the marker in
//! place, and a token that cannot write (a fork's: 403) sends the report
//! to the job summary.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

/// A request the stand-in received: method, path and body.
type Seen = Arc<Mutex<Vec<(String, String, String)>>>;

/// Serves on a free loopback port, answering each request with `answer`
/// (status and JSON body) until the test ends; returns the base URL and
/// what it received.
fn serve(answer: fn(&str, &str) -> (u16, String)) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let seen: Seen = Arc::default();
    let record = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let mut parts = line.split_whitespace();
            let method = parts.next().unwrap_or_default().to_string();
            let path = parts.next().unwrap_or_default().to_string();
            let mut length = 0usize;
            let mut authorized = false;
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                    break;
                }
                let lower = header.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                if lower.starts_with("authorization: bearer test-token") {
                    authorized = true;
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let body = String::from_utf8_lossy(&body).into_owned();
            let (status, text) = if authorized {
                answer(&method, &path)
            } else {
                (401, "{}".to_string())
            };
            record.lock().expect("lock").push((method, path, body));
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    });
    (url, seen)
}

/// Runs the script with the report `text`; returns its stdout and the job
/// summary it left.
fn run(api: &str, dir: &Path, summary_written: bool) -> (String, String) {
    let report = dir.join("report.md");
    std::fs::write(&report, "## gitops-lint\n\nNo findings.\n").expect("report");
    let summary = dir.join("summary.md");
    let _ = std::fs::remove_file(&summary);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/action-comment.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(&report)
        .env("GITHUB_API_URL", api)
        .env("GITHUB_REPOSITORY", "acme/gitops")
        .env("GITOPS_LINT_PR", "7")
        .env("GITOPS_LINT_TOKEN", "test-token")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env(
            "GITOPS_LINT_SUMMARY_WRITTEN",
            if summary_written { "true" } else { "false" },
        )
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        std::fs::read_to_string(&summary).unwrap_or_default(),
    )
}

const MARKER: &str = "<!-- gitops-lint: sticky comment, updated in place -->";

#[test]
fn a_first_run_posts_the_comment_with_its_marker() {
    let (api, seen) = serve(|method, _| match method {
        "GET" => (200, r#"[{"id": 1, "body": "looks good"}]"#.to_string()),
        _ => (201, r#"{"id": 2}"#.to_string()),
    });
    let tmp = tempfile::tempdir().expect("tempdir");
    let (out, summary) = run(&api, tmp.path(), false);
    assert!(out.contains("comment posted"), "{out}");
    assert_eq!(summary, "");
    let seen = seen.lock().expect("lock");
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(
        seen[0].1,
        "/repos/acme/gitops/issues/7/comments?per_page=100&page=1"
    );
    assert_eq!(
        (seen[1].0.as_str(), seen[1].1.as_str()),
        ("POST", "/repos/acme/gitops/issues/7/comments")
    );
    let body: serde_json::Value = serde_json::from_str(&seen[1].2).expect("json body");
    assert_eq!(
        body["body"],
        format!("{MARKER}\n## gitops-lint\n\nNo findings.\n")
    );
}

#[test]
fn a_later_run_updates_the_comment_in_place() {
    let (api, seen) = serve(|method, _| match method {
        "GET" => (
            200,
            format!(
                r#"[{{"id": 1, "body": "looks good"}}, {{"id": 42, "body": "{MARKER}\nold report"}}]"#
            ),
        ),
        _ => (200, r#"{"id": 42}"#.to_string()),
    });
    let tmp = tempfile::tempdir().expect("tempdir");
    let (out, _) = run(&api, tmp.path(), true);
    assert!(out.contains("comment updated"), "{out}");
    let seen = seen.lock().expect("lock");
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(
        (seen[1].0.as_str(), seen[1].1.as_str()),
        ("PATCH", "/repos/acme/gitops/issues/comments/42")
    );
}

#[test]
fn a_token_that_cannot_write_falls_back_to_the_job_summary() {
    let (api, seen) = serve(|method, _| match method {
        "GET" => (200, "[]".to_string()),
        _ => (
            403,
            r#"{"message": "Resource not accessible by integration"}"#.to_string(),
        ),
    });
    let tmp = tempfile::tempdir().expect("tempdir");
    let (out, summary) = run(&api, tmp.path(), false);
    assert!(out.contains("HTTP 403"), "{out}");
    assert_eq!(summary, "## gitops-lint\n\nNo findings.\n");
    // Already in the summary (`step-summary: true`): not written twice.
    let (_, summary) = run(&api, tmp.path(), true);
    assert_eq!(summary, "");
    assert_eq!(seen.lock().expect("lock").len(), 4);
}
