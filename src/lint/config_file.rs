//! Which configuration a run reads: an explicit `--config` file, else
//! `.gitops-lint.yaml` of the tree (the base revision's, for a diff).

use std::path::Path;

use crate::config::{Config, CONFIG_FILE};
use crate::rules;
use crate::source::{self, GitRepo, Tree};

use super::{repo_relative, short_rev, LintError};

/// Loads configuration: an explicit file, else `.gitops-lint.yaml` in `tree`.
///
/// # Errors
/// An unreadable or invalid file.
pub fn load_config(explicit: Option<&Path>, tree: &dyn Tree) -> Result<Config, LintError> {
    if let Some(p) = explicit {
        let text = std::fs::read_to_string(p)
            .map_err(|e| LintError::Usage(format!("cannot read config {}: {e}", p.display())))?;
        return Ok(Config::parse(
            &p.display().to_string(),
            &text,
            &rules::catalog(),
        )?);
    }
    match source::read(tree, CONFIG_FILE) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            Ok(Config::parse(CONFIG_FILE, &text, &rules::catalog())?)
        }
        Err(source::SourceError::NotFound(_)) => {
            // A configuration under another spelling would be silently
            // unused: the rules it switches and the URLs it names would not
            // apply, and nothing would say so.
            if let Some(other) = misnamed_config(tree) {
                return Err(LintError::Usage(format!(
                    "{other} is not read: gitops-lint reads its configuration from {CONFIG_FILE}; rename the file (or name it with --config)"
                )));
            }
            Ok(Config::default())
        }
        Err(e) => Err(LintError::Usage(format!("cannot read {CONFIG_FILE}: {e}"))),
    }
}

/// A configuration file of `tree` under a name gitops-lint does not read
/// (when `.gitops-lint.yaml` is absent).
pub(super) fn misnamed_config(tree: &dyn Tree) -> Option<&'static str> {
    [
        ".gitops-lint.yml",
        "gitops-lint.yaml",
        ".gitops-lint.yaml.yaml",
    ]
    .into_iter()
    .find(|other| source::read(tree, other).is_ok())
}

/// Loads the configuration a diff is judged by, from the base revision's
/// tree: `.gitops-lint.yaml`, or the file `--config` names, which must be a
/// repository path (relative to the current directory, or absolute inside
/// the working tree) reached without a symlink. A pull request controls its
/// checkout, so nothing is read from disk: the change cannot swap the file,
/// and no file outside the repository is read (or quoted in an error).
///
/// # Errors
/// A path outside the repository, through a symlink, missing at base, or invalid.
pub(super) fn load_base_config(
    repo: &GitRepo,
    explicit: Option<&Path>,
    base: &dyn Tree,
    base_label: &str,
) -> Result<(Config, String), LintError> {
    let Some(p) = explicit else {
        return Ok((load_config(None, base)?, CONFIG_FILE.to_string()));
    };
    let rel = repo_relative(repo, p).ok_or_else(|| {
        LintError::Usage(format!(
            "--config {}: not a file of this repository; in `diff` the configuration is read from the base revision, so name a file committed there",
            p.display()
        ))
    })?;
    let mut prefix = String::new();
    for part in rel.split('/') {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(part);
        let entry = base.entry(&prefix).map_err(|e| {
            LintError::Usage(format!(
                "--config {rel}: cannot read the base revision: {e}"
            ))
        })?;
        match entry.map(|e| e.kind) {
            None => {
                return Err(LintError::Usage(format!(
                    "--config {rel}: no such file in the base revision {}; in `diff` the configuration is read from the base revision, so commit it there first",
                    short_rev(base_label)
                )))
            }
            Some(source::EntryKind::Symlink) => {
                return Err(LintError::Usage(format!(
                    "--config {rel}: `{prefix}` is a symlink in the base revision; name the file itself"
                )))
            }
            Some(source::EntryKind::Submodule) => {
                return Err(LintError::Usage(format!(
                    "--config {rel}: `{prefix}` is a git submodule, whose content is not in this repository"
                )))
            }
            Some(source::EntryKind::Dir) if prefix == rel => {
                return Err(LintError::Usage(format!(
                    "--config {rel}: is a directory in the base revision; name a YAML file"
                )))
            }
            Some(source::EntryKind::Dir | source::EntryKind::File) => {}
        }
    }
    let bytes = base
        .read_raw(&rel)
        .map_err(|e| LintError::Usage(format!("--config {rel}: {e}")))?;
    let text = String::from_utf8_lossy(&bytes);
    Ok((Config::parse(&rel, &text, &rules::catalog())?, rel))
}
