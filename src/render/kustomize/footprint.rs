//! What a build reads: the kustomization directories a tree reaches and
//! the other paths its entries name, for deciding which changes can change
//! a render.

use super::helm_charts;
use super::load::{self, Kustomization};
use super::KResult;
use crate::render::{Footprint, FootprintMemo, RenderContext, RenderError};
use crate::source::{path, EntryKind};

/// What a build of `k` reads (`memo` holds what each kustomization
/// directory of this tree reaches): the kustomization directories it reaches,
/// itself first (every entry of `resources`, `components`, `generators` and
/// `transformers` that is a directory, followed recursively), and the other
/// paths those entries name, whose kind decides what the build does. Under
/// Kustomize's load restrictor every file a kustomization reads lies inside
/// its own directory, so nothing outside these is read. A directory without
/// a kustomization file counts as reached (the build fails on it, and
/// adding one changes the build).
///
/// # Errors
/// Remote entries and kustomizations that fail to load.
pub(crate) fn footprint(
    cx: &RenderContext<'_>,
    k: &Kustomization,
    memo: &FootprintMemo,
) -> KResult<Footprint> {
    let mut stack = vec![k.dir.clone()];
    collect(cx, k, memo, &mut stack)
}

fn collect(
    cx: &RenderContext<'_>,
    k: &Kustomization,
    memo: &FootprintMemo,
    stack: &mut Vec<String>,
) -> KResult<Footprint> {
    let mut fp = Footprint::default();
    fp.subtrees.push(k.dir.clone());
    // helm reads the charts from the chart home, which may lie outside
    // the kustomization (only values files are under the load restrictor).
    if helm_charts::has_charts(k) {
        let home = helm_charts::chart_home(k)?;
        if cx.kind_of(&home)? == Some(EntryKind::Dir) {
            fp.subtrees.push(home);
        } else {
            fp.entries.push(home);
        }
    }
    for f in ["resources", "components", "generators", "transformers"] {
        for e in k.list(f) {
            let Some(s) = e.as_str() else { continue };
            if load::is_remote(s) {
                return Err(RenderError::unsupported(format!(
                    "`{}`: remote resource `{s}` cannot be fetched (no network access)",
                    k.file
                )));
            }
            // Inline plugin configurations and paths leaving the repository
            // name no directory.
            let Some(p) = path::join(&k.dir, s) else {
                continue;
            };
            if cx.kind_of(&p)? != Some(EntryKind::Dir) {
                fp.entries.push(p);
            } else if load::find_file(cx, &p).is_err() {
                fp.subtrees.push(p);
            } else if let Some(known) = memo.get(&p) {
                fp.extend(&known);
            } else {
                // A cycle fails the build; the footprint need not go round it.
                if stack.contains(&p) {
                    return Err(k.err(format!(
                        "cycle detected: `{s}` contains a kustomization already being built"
                    )));
                }
                let child = load::load(cx, &p)?;
                stack.push(p.clone());
                let sub = collect(cx, &child, memo, stack);
                stack.pop();
                let sub = sub?;
                fp.extend(&sub);
                memo.put(p, sub);
            }
        }
    }
    fp.subtrees.sort();
    fp.subtrees.dedup();
    fp.entries.sort();
    fp.entries.dedup();
    Ok(fp)
}
