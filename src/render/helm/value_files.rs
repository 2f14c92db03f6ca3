//! Value files of a Helm source resolved as argo-cd's
//! `getResolvedValueFiles` does: `$ref/` paths, relative and absolute
//! paths, URLs refused, glob patterns expanded.

use std::collections::BTreeSet;

use super::options::{envsubst, Options};
use crate::render::{RefTarget, RenderContext, RenderError, RenderErrorKind, SourceSpec};
use crate::source::{path, EntryKind};
use gotemplate::go::glob::go::Doublestar;

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

/// The files matching a glob, as argo-cd's `getResolvedValueFiles` expands
/// it with `doublestar.FilepathGlob` (bmatcuk/doublestar v4): each path
/// matched as `doublestar.Match` matches it, by the crate's one doublestar
/// matcher ([`Doublestar`]), and the matches in the order doublestar's walk
/// yields them. That walk (`glob.go` `doGlob`, `globwalk.go` `doGlobWalk`)
/// lists the directories the pattern's directory part matches, each before
/// its subdirectories and in lexical order, and a directory's matching
/// files in lexical order: so a directory's files come before those of its
/// subdirectories. Helm merges later value files over earlier ones, so the
/// order decides the values.
///
/// Two corners of doublestar are not followed: matches of a pattern with
/// `{…}` alternatives, which doublestar sorts as whole strings
/// (`globAltsWalk`), and a pattern ending in `**`, whose matches include
/// directories (which helm then fails to read).
fn expand_glob(cx: &RenderContext<'_>, pattern: &str) -> Result<Vec<String>, RenderError> {
    if !valid_pattern(pattern) {
        // `FilepathGlob` returns `ErrBadPattern`, and the render fails.
        return Err(RenderError::content(format!(
            "value file glob `{pattern}` is not a valid pattern (an unclosed `[` or `{{`, an empty `[]`, or a trailing `\\`)"
        )));
    }
    let matcher = Doublestar::new(pattern)
        .map_err(|e| RenderError::content(format!("value file glob: {e}")))?;
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
                EntryKind::File if matcher.matches(&full) => {
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
    // By directory (segment by segment, so `a/` before `a-b/`), then name.
    out.sort_by(|a, b| {
        let (da, na) = a.rsplit_once('/').unwrap_or(("", a));
        let (db, nb) = b.rsplit_once('/').unwrap_or(("", b));
        da.split('/').cmp(db.split('/')).then_with(|| na.cmp(nb))
    });
    Ok(out)
}

/// Whether doublestar accepts `pattern` (`validate.go` `ValidatePattern`):
/// every `[` class closed and not empty, every `{` closed, no `}` without
/// its `{`, no trailing `\`.
fn valid_pattern(pattern: &str) -> bool {
    let s = pattern.as_bytes();
    let mut alt_depth = 0usize;
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'\\' => {
                if i + 1 >= s.len() {
                    return false;
                }
                i += 2;
                continue;
            }
            b'[' => {
                i += 1;
                if i < s.len() && (s[i] == b'^' || s[i] == b'!') {
                    i += 1;
                }
                if i >= s.len() || s[i] == b']' {
                    return false;
                }
                loop {
                    match s.get(i) {
                        None => return false,
                        Some(b'\\') => i += 2,
                        Some(b']') => break,
                        Some(_) => i += 1,
                    }
                }
            }
            b'{' => alt_depth += 1,
            b'}' => {
                if alt_depth == 0 {
                    return false;
                }
                alt_depth -= 1;
            }
            _ => {}
        }
        i += 1;
    }
    alt_depth == 0
}
