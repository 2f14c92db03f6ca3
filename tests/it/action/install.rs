//! How the Action gets its binary: a verified release asset at a release
//! tag or SHA pin, else a build cached for the next run, else one line
//! saying what to add.

use super::*;

/// The Rust target of the release asset this machine would download.
fn host_target() -> String {
    let os = match std::env::consts::OS {
        "linux" => "unknown-linux-gnu",
        "macos" => "apple-darwin",
        other => panic!("no release asset for {other}"),
    };
    format!("{}-{os}", std::env::consts::ARCH)
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A release of the binary these tests built, as the release workflow
/// packages it: `DIR/gitops-lint-TARGET` and its `.sha256`. Returns the
/// asset's path.
fn release_asset(dir: &Path) -> PathBuf {
    let out = Command::new("bash")
        .arg(crate_root().join("scripts/release-asset.sh"))
        .arg(host_target())
        .arg(env!("CARGO_BIN_EXE_gitops-lint"))
        .arg(dir)
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join(format!("gitops-lint-{}", host_target()))
}

/// Puts a `cargo` on the runner that writes each command line to the
/// returned log, and for `cargo install --root DIR` copies the binary these
/// tests built into DIR/bin: what is tested is whether and how the action
/// asks for a build, not cargo's build itself (the pre-commit test runs a
/// real `cargo install` of the crate).
fn recording_cargo(r: &mut Runner, dir: &Path) -> PathBuf {
    let bin = dir.join("tools");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let log = dir.join("cargo.log");
    let script = format!(
        r#"#!/usr/bin/env bash
printf '%s\n' "$*" >> '{log}'
[ "$1" = install ] || exit 101
root=""
while [ $# -gt 0 ]; do
  if [ "$1" = --root ]; then root="$2"; shift; fi
  shift
done
mkdir -p "$root/bin"
cp '{built}' "$root/bin/gitops-lint"
"#,
        log = log.display(),
        built = env!("CARGO_BIN_EXE_gitops-lint"),
    );
    let cargo = bin.join("cargo");
    std::fs::write(&cargo, script).expect("write cargo");
    let chmod = Command::new("chmod").arg("+x").arg(&cargo).status();
    assert!(chmod.expect("chmod runs").success());
    r.tools.push(bin);
    log
}

fn file_url(dir: &Path) -> String {
    format!("file://{}", dir.display())
}

/// A `pull_request` run on the mixed case in `dir`, with the action used at
/// `uses: example/gitops-lint@REF`.
fn run_at_ref(dir: &Path, action_ref: &str) -> Runner {
    let (case, message) = mixed_case();
    let (mut r, _, _) = runner(dir, &case, &message);
    r.action_ref = action_ref.to_string();
    r.action_repository = "example/gitops-lint".to_string();
    r
}

#[test]
fn at_a_release_tag_the_verified_release_binary_is_used_and_nothing_is_built() {
    let tmp = tempfile::tempdir().expect("tmp");
    let releases = tmp.path().join("releases");
    let asset = release_asset(&releases.join("v9.9.9"));
    let mut r = run_at_ref(tmp.path(), "v9.9.9");
    let cargo_log = recording_cargo(&mut r, tmp.path());
    let base = file_url(&releases);
    let runs = run_action(&mut r, &[("GITOPS_LINT_RELEASE_BASE_URL", &base)]);

    let install = step(&runs, "install");
    assert_eq!(install.status, 0, "{}{}", install.stdout, install.stderr);
    let sum = sha256_hex(&std::fs::read(&asset).expect("asset"));
    let url = format!("{base}/v9.9.9/gitops-lint-{}", host_target());
    assert!(
        install
            .stdout
            .contains(&format!("release binary {url} (sha256 {sum}, verified)")),
        "{}",
        install.stdout
    );
    assert!(
        install
            .stdout
            .contains(&format!("gitops-lint {}", env!("CARGO_PKG_VERSION"))),
        "{}",
        install.stdout
    );
    assert_eq!(r.outputs["install"]["installed"], "release");
    for id in ["restore", "build", "save"] {
        assert!(step(&runs, id).skipped, "{id} ran");
    }
    assert!(!cargo_log.exists(), "cargo was run");
    let installed = Path::new(&r.vars["RUNNER_TEMP"]).join("gitops-lint/bin/gitops-lint");
    assert!(
        std::fs::read(&installed).expect("installed") == std::fs::read(&asset).expect("asset"),
        "the installed binary is not the release asset"
    );
    // The downloaded binary is the one that lints.
    let lint = step(&runs, "lint");
    assert_eq!(lint.status, 1, "{}{}", lint.stdout, lint.stderr);
    assert!(
        lint.stdout.contains("GL001 stateful-prune"),
        "{}",
        lint.stdout
    );
}

#[test]
fn a_checksum_mismatch_stops_the_run_without_running_the_download_or_building() {
    let tmp = tempfile::tempdir().expect("tmp");
    let releases = tmp.path().join("releases");
    let asset = release_asset(&releases.join("v9.9.9"));
    // The asset replaced after its checksum was published: a program that
    // leaves a mark if anything runs it.
    let marker = tmp.path().join("tampered-binary-ran");
    let tampered = format!(
        "#!/bin/sh\ntouch '{}'\necho gitops-lint 9.9.9\n",
        marker.display()
    );
    std::fs::write(&asset, &tampered).expect("replace asset");
    let want = std::fs::read_to_string(
        asset
            .with_extension("")
            .with_file_name(format!("gitops-lint-{}.sha256", host_target())),
    )
    .expect("sha256 file");
    let want = want.split_whitespace().next().expect("a sum").to_string();
    let got = sha256_hex(tampered.as_bytes());

    let mut r = run_at_ref(tmp.path(), "v9.9.9");
    let cargo_log = recording_cargo(&mut r, tmp.path());
    let base = file_url(&releases);
    let runs = run_action(&mut r, &[("GITOPS_LINT_RELEASE_BASE_URL", &base)]);

    let install = step(&runs, "install");
    assert_eq!(install.status, 2, "{}{}", install.stdout, install.stderr);
    let url = format!("{base}/v9.9.9/gitops-lint-{}", host_target());
    assert!(
        install.stdout.contains(&format!(
            "::error title=gitops-lint::checksum mismatch for {url}: expected sha256 {want} (from gitops-lint-{}.sha256), got {got}; the downloaded binary was deleted without running it.",
            host_target()
        )),
        "{}",
        install.stdout
    );
    // Nothing ran the download, nothing was built, the job stopped there.
    assert!(!marker.exists(), "the tampered binary was run");
    assert!(!cargo_log.exists(), "cargo was run");
    assert!(
        runs.iter().skip(1).all(|s| s.skipped),
        "steps after the install ran"
    );
    let temp = Path::new(&r.vars["RUNNER_TEMP"]);
    assert!(!temp.join("gitops-lint/bin/gitops-lint").exists());
    assert!(!temp.join("gitops-lint/download").exists());
    assert_eq!(
        std::fs::read_to_string(&r.vars["GITHUB_PATH"]).expect("GITHUB_PATH"),
        ""
    );
}

#[test]
fn without_a_release_asset_the_first_run_builds_and_the_next_uses_the_cache() {
    let tmp = tempfile::tempdir().expect("tmp");
    let releases = tmp.path().join("releases");
    std::fs::create_dir_all(&releases).expect("mkdir");
    let base = file_url(&releases);
    let cache_store = tmp.path().join("actions-cache");
    let root = crate_root().display().to_string();

    // First run: no asset for the tag, so a build, saved to the cache.
    let mut first = run_at_ref(&tmp.path().join("first"), "v9.9.9");
    first.cache_store = cache_store.clone();
    let cargo_log = recording_cargo(&mut first, tmp.path());
    let runs = run_action(&mut first, &[("GITOPS_LINT_RELEASE_BASE_URL", &base)]);
    let install = step(&runs, "install");
    assert_eq!(install.status, 0, "{}{}", install.stdout, install.stderr);
    let url = format!("{base}/v9.9.9/gitops-lint-{}", host_target());
    assert!(
        install
            .stdout
            .contains(&format!("no release asset {url} ("))
            && install.stdout.contains("): building from source"),
        "{}",
        install.stdout
    );
    let key = first.outputs["install"]["cache-key"].clone();
    assert!(
        key.starts_with(&format!(
            "gitops-lint-{}-{}-v9.9.9-rustc_",
            runner_os(),
            runner_arch()
        )),
        "{key}"
    );
    assert_eq!(first.outputs["restore"]["cache-hit"], "false");
    let build = step(&runs, "build");
    assert_eq!(build.status, 0, "{}{}", build.stdout, build.stderr);
    assert!(build.stdout.contains(&format!(
        "building gitops-lint from {root} with cargo install --locked"
    )));
    let cache_dir = Path::new(&first.vars["RUNNER_TEMP"]).join("gitops-lint-cache");
    assert_eq!(
        std::fs::read_to_string(&cargo_log).expect("cargo ran"),
        format!(
            "install --path {root} --locked --root {} --quiet\n",
            cache_dir.display()
        )
    );
    assert!(!step(&runs, "save").skipped);
    assert!(cache_store.join(&key).join("bin/gitops-lint").is_file());
    assert_eq!(
        step(&runs, "lint").status,
        1,
        "{}",
        step(&runs, "lint").stderr
    );

    // Next run, on a fresh runner: the cached build, no cargo, nothing saved.
    let mut next = run_at_ref(&tmp.path().join("next"), "v9.9.9");
    next.cache_store = cache_store.clone();
    next.tools = first.tools.clone();
    let runs = run_action(&mut next, &[("GITOPS_LINT_RELEASE_BASE_URL", &base)]);
    assert_eq!(next.outputs["install"]["cache-key"], key);
    assert_eq!(next.outputs["restore"]["cache-hit"], "true");
    let build = step(&runs, "build");
    assert_eq!(build.status, 0, "{}{}", build.stdout, build.stderr);
    assert!(build.stdout.contains("cached build"), "{}", build.stdout);
    assert_eq!(
        std::fs::read_to_string(&cargo_log)
            .expect("log")
            .lines()
            .count(),
        1,
        "cargo ran again"
    );
    assert!(step(&runs, "save").skipped);
    let lint = step(&runs, "lint");
    assert_eq!(lint.status, 1, "{}{}", lint.stdout, lint.stderr);
    assert!(
        lint.stdout.contains("GL001 stateful-prune"),
        "{}",
        lint.stdout
    );
}

#[test]
fn a_branch_without_its_release_or_download_false_builds() {
    let tmp = tempfile::tempdir().expect("tmp");
    let releases = tmp.path().join("releases");
    release_asset(&releases.join("main"));
    release_asset(&releases.join("v9.9.9"));
    let base = file_url(&releases);
    // A branch downloads the release of its Cargo.toml's version, which
    // this mirror lacks: then it builds.
    let own = format!(
        "no release asset {base}/v{}/gitops-lint-{}",
        env!("CARGO_PKG_VERSION"),
        host_target()
    );
    for (name, action_ref, download, says) in [
        ("branch", "main", "true", own.as_str()),
        (
            "no-download",
            "v9.9.9",
            "false",
            "release download switched off (download: false): building from source",
        ),
    ] {
        let dir = tmp.path().join(name);
        let mut r = run_at_ref(&dir, action_ref);
        r.inputs.insert("download".into(), download.into());
        let cargo_log = recording_cargo(&mut r, &dir);
        let runs = run_action(&mut r, &[("GITOPS_LINT_RELEASE_BASE_URL", &base)]);
        let install = step(&runs, "install");
        assert_eq!(install.status, 0, "{}{}", install.stdout, install.stderr);
        assert!(install.stdout.contains(says), "{name}: {}", install.stdout);
        assert_eq!(r.outputs["install"]["installed"], "", "{name}");
        assert!(cargo_log.is_file(), "{name}: nothing was built");
        assert_eq!(step(&runs, "build").status, 0, "{name}");
        assert_eq!(step(&runs, "lint").status, 1, "{name}");
    }
}

#[test]
fn without_cargo_or_a_release_the_install_says_what_to_add() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut r = run_at_ref(tmp.path(), "main");
    // A PATH with the programs the scripts use and no cargo.
    let bin = tmp.path().join("no-cargo-bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    for tool in [
        "bash",
        "cat",
        "chmod",
        "cp",
        "curl",
        "cut",
        "find",
        "grep",
        "head",
        "ldd",
        "mkdir",
        "mv",
        "rm",
        "sha256sum",
        "sort",
        "tr",
        "uname",
        "dirname",
        "rustc",
    ] {
        if let Ok(p) = which(tool) {
            std::os::unix::fs::symlink(p, bin.join(tool)).expect("symlink");
        }
    }
    let path = bin.display().to_string();
    let runs = run_action(&mut r, &[("PATH", &path)]);
    let build = step(&runs, "build");
    assert_eq!(build.status, 2, "{}{}", build.stdout, build.stderr);
    assert!(
        build.stdout.contains("::error title=gitops-lint::cargo is not installed and no release binary was used; add a Rust toolchain step"),
        "{}",
        build.stdout
    );
    assert!(step(&runs, "lint").skipped, "the lint step ran");
}

fn which(tool: &str) -> Result<PathBuf, ()> {
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.is_file())
        .ok_or(())
}

#[test]
fn the_release_workflow_builds_every_asset_the_action_looks_for() {
    let text = std::fs::read_to_string(crate_root().join(".github/workflows/release.yml"))
        .expect("release.yml");
    let wf = goyaml::load_all(&text)
        .expect("release.yml parses")
        .into_iter()
        .next()
        .expect("one document")
        .value;
    // `on` is a boolean to a YAML 1.1 reader.
    let on = if wf["on"].is_null() {
        &wf["true"]
    } else {
        &wf["on"]
    };
    assert_eq!(on["push"]["tags"], json!(["v*"]), "{on}");
    let build = &wf["jobs"]["build"];
    let targets: Vec<&str> = build["strategy"]["matrix"]["include"]
        .as_array()
        .expect("matrix")
        .iter()
        .map(|t| t["target"].as_str().expect("target"))
        .collect();
    for t in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "aarch64-apple-darwin",
        "x86_64-apple-darwin",
    ] {
        assert!(targets.contains(&t), "{t} is not built: {targets:?}");
    }
    assert!(targets.contains(&host_target().as_str()));
    let runs: Vec<&str> = build["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    assert!(runs
        .iter()
        .any(|r| r.contains("cargo build --release --locked --target \"$TARGET\"")));
    // Packaged by the same script whose output the tests above download.
    assert!(runs
        .iter()
        .any(|r| r.contains("scripts/release-asset.sh \"$TARGET\"")));
    let publish = &wf["jobs"]["publish"];
    assert_eq!(publish["permissions"]["contents"], "write");
    let publish_runs: String = publish["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    assert!(publish_runs.contains("sha256sum -c"));
    assert!(publish_runs.contains(&format!("-eq {}", targets.len())));
    assert!(publish_runs.contains("gh release create \"$GITHUB_REF_NAME\" dist/*"));
}

/// Pinned by commit SHA, the action downloads the release of its own
/// version (its Cargo.toml), checksum verified, and builds nothing; the
/// `version` input chooses another release whatever the ref.
#[test]
fn at_a_sha_pin_the_release_is_downloaded_by_version() {
    let tmp = tempfile::tempdir().expect("tmp");
    let releases = tmp.path().join("releases");
    let own = format!("v{}", env!("CARGO_PKG_VERSION"));
    release_asset(&releases.join(&own));
    release_asset(&releases.join("v9.9.9"));
    let base = file_url(&releases);
    let sha = "0123456789abcdef0123456789abcdef01234567";
    for (version, tag) in [("", own.as_str()), ("9.9.9", "v9.9.9")] {
        let mut r = run_at_ref(&tmp.path().join(tag), sha);
        let cargo_log = recording_cargo(&mut r, tmp.path());
        r.inputs.insert("version".into(), version.into());
        let runs = run_action(&mut r, &[("GITOPS_LINT_RELEASE_BASE_URL", &base)]);
        let install = step(&runs, "install");
        assert_eq!(install.status, 0, "{}{}", install.stdout, install.stderr);
        let url = format!("{base}/{tag}/gitops-lint-{}", host_target());
        assert!(
            install
                .stdout
                .contains(&format!("release binary {url} (sha256 "))
                && install.stdout.contains(", verified)"),
            "{version:?}: {}",
            install.stdout
        );
        assert_eq!(r.outputs["install"]["installed"], "release");
        assert!(step(&runs, "build").skipped);
        assert!(!cargo_log.exists(), "cargo was run");
        assert_eq!(step(&runs, "lint").status, 1);
    }
}
