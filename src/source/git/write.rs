//! Writing commits and remotes, for the demo and tests.

use super::RepoError;
use git2::Oid;
use git2::Repository;
use std::collections::HashMap;
use std::path::Path;

/// Writes a commit whose tree holds exactly `files` (path → bytes) onto
/// `branch` of the repository at `dir` (created with `git init` semantics if
/// absent), with a fixed author and time so ids are reproducible. The parent
/// is the branch tip, else `parent_branch`'s tip. Used by the demo and tests.
///
/// # Errors
/// Git failures.
pub fn write_commit(
    dir: &Path,
    branch: &str,
    parent_branch: Option<&str>,
    files: &[(String, Vec<u8>)],
    message: &str,
) -> Result<String, RepoError> {
    let g = |e: git2::Error| RepoError::Git(e.message().to_string());
    let repo = match Repository::open(dir) {
        Ok(r) => r,
        Err(_) => {
            let mut opts = git2::RepositoryInitOptions::new();
            opts.initial_head(branch);
            Repository::init_opts(dir, &opts).map_err(g)?
        }
    };
    // Build nested trees bottom-up from the flat file list.
    let mut dirs: std::collections::BTreeMap<String, Vec<(String, Oid, i32)>> =
        std::collections::BTreeMap::new();
    dirs.insert(String::new(), Vec::new());
    for (path, bytes) in files {
        let oid = repo.blob(bytes).map_err(g)?;
        let (parent, name) = match path.rfind('/') {
            Some(i) => (path[..i].to_string(), path[i + 1..].to_string()),
            None => (String::new(), path.clone()),
        };
        let mode = if name.ends_with(".symlink") {
            0o120_000
        } else {
            0o100_644
        };
        let name = name
            .strip_suffix(".symlink")
            .map(str::to_string)
            .unwrap_or(name);
        dirs.entry(parent.clone())
            .or_default()
            .push((name, oid, mode));
        let mut d = parent;
        while !d.is_empty() {
            let p = crate::source::path::parent(&d).to_string();
            dirs.entry(p.clone()).or_default();
            dirs.entry(d.clone()).or_default();
            d = p;
        }
    }
    let mut keys: Vec<String> = dirs.keys().cloned().collect();
    keys.sort_by_key(|k| {
        std::cmp::Reverse(if k.is_empty() {
            0
        } else {
            k.matches('/').count() + 1
        })
    });
    let mut tree_ids: HashMap<String, Oid> = HashMap::new();
    for k in keys {
        let mut b = repo.treebuilder(None).map_err(g)?;
        for (name, oid, mode) in &dirs[&k] {
            b.insert(name, *oid, *mode).map_err(g)?;
        }
        for (sub, oid) in &tree_ids {
            if crate::source::path::parent(sub) == k && !sub.is_empty() {
                b.insert(crate::source::path::file_name(sub), *oid, 0o040_000)
                    .map_err(g)?;
            }
        }
        let id = b.write().map_err(g)?;
        tree_ids.insert(k, id);
    }
    let tree = repo.find_tree(tree_ids[""]).map_err(g)?;
    let sig = git2::Signature::new(
        "gitops-lint",
        "gitops-lint@example.invalid",
        &git2::Time::new(1_700_000_000, 0),
    )
    .map_err(g)?;
    let refname = format!("refs/heads/{branch}");
    let parent = repo
        .find_reference(&refname)
        .ok()
        .or_else(|| {
            parent_branch.and_then(|p| repo.find_reference(&format!("refs/heads/{p}")).ok())
        })
        .and_then(|r| r.peel_to_commit().ok());
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    let oid = repo
        .commit(None, &sig, &sig, message, &tree, &parents)
        .map_err(g)?;
    repo.reference(&refname, oid, true, message).map_err(g)?;
    Ok(oid.to_string())
}

/// Adds a remote (fetch URL only; nothing is fetched). Used by the demo.
///
/// # Errors
/// Git failures.
pub fn add_remote(dir: &Path, name: &str, url: &str) -> Result<(), RepoError> {
    let g = |e: git2::Error| RepoError::Git(e.message().to_string());
    let repo = Repository::open(dir).map_err(g)?;
    repo.remote(name, url).map_err(g)?;
    Ok(())
}
