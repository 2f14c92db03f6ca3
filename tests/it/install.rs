//! `scripts/install.sh` against a local directory laid out as a release
//! (`scripts/release-asset.sh`'s assets under `v<version>/`, reached by a
//! `file://` URL): it installs the binary it verified and runs it, and it
//! refuses an asset whose checksum does not match.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TARGET: &str = "x86_64-unknown-linux-gnu";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A release directory holding the built binary as the asset of
/// `v<version>` for [`TARGET`].
fn release(dir: &Path) -> PathBuf {
    let version_dir = dir.join(format!("v{}", env!("CARGO_PKG_VERSION")));
    let made = Command::new("bash")
        .arg(root().join("scripts/release-asset.sh"))
        .arg(TARGET)
        .arg(assert_cmd::cargo::cargo_bin("gitops-lint"))
        .arg(&version_dir)
        .output()
        .expect("release-asset.sh runs");
    assert!(made.status.success(), "{made:?}");
    version_dir
}

fn install(base: &Path, version: &str, into: &Path) -> Output {
    Command::new("sh")
        .arg(root().join("scripts/install.sh"))
        .arg(version)
        .arg(into)
        .env(
            "GITOPS_LINT_RELEASE_BASE_URL",
            format!("file://{}", base.display()),
        )
        .env("GITOPS_LINT_TARGET", TARGET)
        .env_remove("GITOPS_LINT_REPOSITORY")
        .output()
        .expect("install.sh runs")
}

#[test]
fn the_install_script_installs_a_verified_release_and_runs_it() {
    let base = tempfile::tempdir().expect("temp dir");
    release(base.path());
    let into = tempfile::tempdir().expect("temp dir");
    let bin_dir = into.path().join("bin");
    // `v` or not, the version names the same release.
    for version in [
        env!("CARGO_PKG_VERSION").to_string(),
        format!("v{}", env!("CARGO_PKG_VERSION")),
    ] {
        let out = install(base.path(), &version, &bin_dir);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{out:?}");
        assert!(text.contains("verified"), "{text}");
        let installed = bin_dir.join("gitops-lint");
        let run = Command::new(&installed)
            .arg("--version")
            .output()
            .expect("the installed binary runs");
        assert!(run.status.success());
        let version = String::from_utf8_lossy(&run.stdout);
        assert!(
            version.starts_with(&format!("gitops-lint {}", env!("CARGO_PKG_VERSION"))),
            "{version}"
        );
        assert!(text.contains(version.trim_end()), "{text}");
    }
}

#[test]
fn the_install_script_refuses_a_corrupted_checksum() {
    let base = tempfile::tempdir().expect("temp dir");
    let version_dir = release(base.path());
    let sums = version_dir.join(format!("gitops-lint-{TARGET}.sha256"));
    let line = std::fs::read_to_string(&sums).expect("checksum file");
    let flipped = if line.starts_with('0') { "1" } else { "0" };
    std::fs::write(&sums, format!("{flipped}{}", &line[1..])).expect("written");
    let into = tempfile::tempdir().expect("temp dir");
    let out = install(base.path(), env!("CARGO_PKG_VERSION"), into.path());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("checksum mismatch"), "{err}");
    assert!(err.contains("nothing was installed"), "{err}");
    assert!(!into.path().join("gitops-lint").exists());
    // A checksum file that holds none is refused too.
    std::fs::write(&sums, "not a checksum\n").expect("written");
    let out = install(base.path(), env!("CARGO_PKG_VERSION"), into.path());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(!into.path().join("gitops-lint").exists());
    // A release that does not exist says what it tried.
    let out = install(base.path(), "9.9.9", into.path());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot download"),
        "{out:?}"
    );
}
