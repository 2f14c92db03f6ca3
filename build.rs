//! Records the commit the binary is built from, for `--version`
//! (`GITOPS_LINT_COMMIT`): `git rev-parse` of the source tree, nothing
//! when it is not a git checkout (a crate tarball) or git is missing.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    println!("cargo:rerun-if-env-changed=GITOPS_LINT_COMMIT");
    // A build of a commit names it; a release job may set it instead.
    let commit = std::env::var("GITOPS_LINT_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]));
    if let Some(c) = &commit {
        println!("cargo:rustc-env=GITOPS_LINT_COMMIT={c}");
    }
    // Built again when HEAD moves (the files git keeps it in); outside a
    // checkout, only when the sources change.
    for path in ["HEAD", "packed-refs"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            // A path that does not exist would run this script on every build.
            if std::path::Path::new(&p).exists() {
                println!("cargo:rerun-if-changed={p}");
            }
        }
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(p) = git(&["rev-parse", "--git-path", &branch]) {
            if std::path::Path::new(&p).exists() {
                println!("cargo:rerun-if-changed={p}");
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
