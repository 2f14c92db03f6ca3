//! Value files of a Helm source resolved as argo-cd's
//! `getResolvedValueFiles` does: `$ref/` paths, relative and absolute
//! paths, URLs refused, glob patterns expanded.

use std::collections::BTreeSet;

use super::options::{envsubst, Options};
use crate::render::{RefTarget, RenderContext, RenderError, RenderErrorKind, SourceSpec};
use crate::source::{path, EntryKind};

/// Most value files one glob may expand to.
const MAX_GLOB_MATCHES: usize = 1_000;

/// A value or parameter file: which tree, and where in it.
#[derive(Debug, Clone)]
pub(super) struct Located {
    /// As the Application names it (for messages).
    pub(super) shown: String,
    /// The `ref` it comes from (`None`: the app's own repository).
    pub(super) ref_name: Option<String>,
    pub(super) target: RefTarget,
    /// Repository-relative path (may hold glob characters).
    pub(super) path: String,
}

/// Resolves one value-file entry the way `getResolvedValueFiles` does.
pub(super) fn locate(spec: &SourceSpec, raw: &str) -> Result<Located, RenderError> {
    let outside = |what: &str| RenderError {
        kind: RenderErrorKind::OutsideRepo,
        message: format!("value file `{raw}` leads outside {what}"),
        file: None,
        line: None,
    };
    // `$<ref>/path`: only when a source of that name exists
    // (`getReferencedSource`); the rest is substituted after.
    if let Some((head, rest)) = raw
        .strip_prefix('$')
        .map(|r| r.split_once('/').unwrap_or((r, "")))
    {
        if let Some(r) = spec.refs.iter().find(|r| r.name == head) {
            let p = envsubst(rest, &spec.env);
            let path = path::normalize(p.trim_start_matches('/'))
                .ok_or_else(|| outside("the referenced repository"))?;
            if let RefTarget::External(why) = &r.target {
                return Err(RenderError::unsupported(format!(
                    "value file `{raw}` comes from the `ref: {head}` source, {why}, which gitops-lint does not fetch"
                )));
            }
            return Ok(Located {
                shown: raw.to_string(),
                ref_name: Some(head.to_string()),
                target: r.target.clone(),
                path,
            });
        }
    }
    let v = envsubst(raw, &spec.env);
    if let Some(scheme) = url_scheme(&v) {
        return Err(if scheme == "http" || scheme == "https" {
            RenderError::unsupported(format!(
                "value file `{v}` is fetched from the network, which gitops-lint never does"
            ))
        } else {
            RenderError::content(format!(
                "value file `{v}`: the URL scheme `{scheme}` is not allowed"
            ))
        });
    }
    let path = match v.strip_prefix('/') {
        // An absolute path is relative to the repository root.
        Some(abs) => path::normalize(abs),
        None => path::join(&spec.path, &v),
    }
    .ok_or_else(|| outside("the repository"))?;
    Ok(Located {
        shown: raw.to_string(),
        ref_name: None,
        target: RefTarget::Same,
        path,
    })
}

/// The scheme of `v` if Go's `url.Parse` would find one.
fn url_scheme(v: &str) -> Option<&str> {
    let (scheme, _) = v.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

pub(super) fn is_glob(p: &str) -> bool {
    p.contains(['*', '?', '['])
}

/// The directory part of a glob before its first pattern segment.
pub(super) fn glob_base(p: &str) -> String {
    p.split('/')
        .take_while(|s| !is_glob(s))
        .collect::<Vec<_>>()
        .join("/")
}

/// The value files of the command line, in order: globs expanded, missing
/// files dropped under `ignoreMissingValueFiles`, duplicates removed.
pub(super) fn resolve_value_files(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
    opts: &Options,
) -> Result<Vec<Located>, RenderError> {
    let located = opts
        .value_files
        .iter()
        .map(|f| locate(spec, f))
        .collect::<Result<Vec<_>, _>>()?;
    let key = |l: &Located| (l.ref_name.clone(), l.path.clone());
    let explicit: BTreeSet<_> = located
        .iter()
        .filter(|l| !is_glob(&l.path))
        .map(key)
        .collect();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for l in located {
        let tree = match &l.target {
            RefTarget::Tree(t) => Some(std::sync::Arc::clone(t)),
            _ => None,
        };
        let tree_cx = tree.as_ref().map(|t| cx.on_tree(t.as_ref()));
        let rcx = tree_cx.as_ref().unwrap_or(cx);
        if is_glob(&l.path) {
            let matches = expand_glob(rcx, &l.path)?;
            if matches.is_empty() && !opts.ignore_missing_value_files {
                return Err(RenderError::content(format!(
                    "values file glob `{}` matched no files",
                    l.shown
                )));
            }
            for m in matches {
                let one = Located {
                    path: m,
                    ..l.clone()
                };
                if !explicit.contains(&key(&one)) && seen.insert(key(&one)) {
                    out.push(one);
                }
            }
        } else {
            match rcx.kind_of(&l.path)? {
                Some(EntryKind::File) => {}
                _ if opts.ignore_missing_value_files => continue,
                _ => {
                    let e =
                        RenderError::content(format!("value file `{}` does not exist", l.shown));
                    return Err(if l.ref_name.is_none() {
                        e.at(l.path.clone(), None)
                    } else {
                        e
                    });
                }
            }
            if seen.insert(key(&l)) {
                out.push(l);
            }
        }
        if let Some(t) = &tree_cx {
            cx.absorb(t);
        }
    }
    Ok(out)
}

/// The files matching a glob (`*`, `?`, `[…]` within a segment, `**`
/// across), in lexical order, as `doublestar.FilepathGlob` gives them.
fn expand_glob(cx: &RenderContext<'_>, pattern: &str) -> Result<Vec<String>, RenderError> {
    let matcher = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| RenderError::content(format!("value file glob `{pattern}`: {e}")))?
        .compile_matcher();
    let base = glob_base(pattern);
    let deep = pattern.contains("**");
    let depth = pattern.split('/').count();
    let mut out = Vec::new();
    let mut stack = vec![base.clone()];
    if cx.kind_of(&base)? != Some(EntryKind::Dir) {
        return Ok(out);
    }
    while let Some(dir) = stack.pop() {
        for e in cx.list(&dir)? {
            let full = path::join(&dir, &e.name).unwrap_or_default();
            let kind = match e.kind {
                EntryKind::Symlink => cx.kind_of(&full)?.unwrap_or(EntryKind::File),
                k => k,
            };
            match kind {
                EntryKind::Dir if deep || full.split('/').count() < depth => stack.push(full),
                EntryKind::File if matcher.is_match(&full) => {
                    out.push(full);
                    if out.len() > MAX_GLOB_MATCHES {
                        return Err(RenderError::content(format!(
                            "value file glob `{pattern}` matches more than {MAX_GLOB_MATCHES} files"
                        )));
                    }
                }
                _ => {}
            }
        }
    }
    out.sort();
    Ok(out)
}
