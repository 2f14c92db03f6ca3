//! What is kept between runs, and where: one cache directory
//! (`--cache-dir`, else [`default_dir`]; none with `--no-cache`), opened
//! here ([`open`]) and never inside the repository it describes.
//!
//! It holds two stores, each invalidated its own way:
//!
//! - **Facts** ([`Facts`], `facts-<binary>.bin`): answers and records that
//!   depend only on content (git object ids) and on the binary that
//!   computed them. The file is named after the binary, so another build's
//!   file is never read; it is checked whole (header, length, checksum,
//!   order, offsets) and anything wrong is an empty store; it is written
//!   anew through a temporary file renamed into place, so a run that stops
//!   or races another leaves a whole file; it is bounded, and what a run did
//!   not use is dropped first. A record also holds the ids it was computed
//!   from, and its reader checks them against the tree at hand: a stale
//!   record is computed again, never trusted. The readers, each in the stage
//!   whose types it keeps:
//!   - `source::git`: the size of each subtree a commit's index decoded,
//!     keyed by tree id (`subtree-size`);
//!   - `argocd::scan`: whether a blob may declare an Argo CD object
//!     ([`Question::MayDeclare`]) and what each directory walked whole
//!     holds (`scan`);
//!   - `argocd::unchanged`: whether a subtree is plain
//!     ([`Question::PlainSubtree`]);
//!   - `argocd::appset::generators`: the directories a git directory
//!     generator's patterns match below a tree (`appset-directories`);
//!   - `render::kept_footprint`: what a Kustomize or directory source reads,
//!     with the entry found at each path (`footprint`);
//!   - `render::kept_parse`: the sigs.k8s.io/yaml parse of a file that may
//!     declare an Argo CD object, keyed by blob id (`sigs-yaml-parse`).
//!
//!   A reader that changes what it keeps changes its record's name
//!   (`footprint-3`), so a record of the old shape is never decoded.
//! - **Fetched charts** ([`charts_dir`], `charts/`): archives by sha256
//!   and the versions and ranges that name them, written by
//!   `render::chart_fetch`. They are kept by the chart's identity, not by
//!   this binary: any build may reuse an archive (each is verified again
//!   whenever read), a pinned version is fetched once, a range is resolved
//!   again after 24 hours. It shares the directory, so one `--cache-dir`
//!   (and one CI cache step) carries both, and one `--no-cache` turns both
//!   off.
//!
//! This module knows nothing of git or Argo CD: a key is any 20 bytes that
//! name their content ([`Key`]).

mod store;

pub(crate) use store::*;

use std::path::{Path, PathBuf};

/// `$XDG_CACHE_HOME/gitops-lint`, else `$HOME/.cache/gitops-lint` (the XDG
/// base directory default); `None` without either (no cache is kept).
#[must_use]
pub(crate) fn default_dir() -> Option<PathBuf> {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    std::env::var_os("XDG_CACHE_HOME")
        .and_then(absolute)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(absolute)
                .map(|h| h.join(".cache"))
        })
        .map(|d| d.join("gitops-lint"))
}

/// Where fetched charts are kept in the cache directory `dir`.
#[must_use]
pub(crate) fn charts_dir(dir: &Path) -> PathBuf {
    dir.join("charts")
}

/// A cache directory inside the repository it would describe.
#[derive(Debug)]
pub(crate) struct InsideRepository;

/// The facts kept in `dir`, refused when `dir` is inside one of
/// `repository` (the work tree and the git directory: the cache would then
/// be content of the repository it describes, or be removed with it). Both
/// sides are compared as the system reaches them
/// ([`crate::local_files::resolved`]): a `missing/../repo/cache` or a
/// symlink into `.git` names the repository.
///
/// # Errors
/// `dir` is inside the repository.
pub(crate) fn open(dir: &Path, repository: &[&Path]) -> Result<Facts, InsideRepository> {
    let abs = crate::local_files::resolved(dir);
    if repository
        .iter()
        .any(|root| abs.starts_with(crate::local_files::resolved(root)))
    {
        return Err(InsideRepository);
    }
    Ok(Facts::open(&abs))
}
