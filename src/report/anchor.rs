//! Where findings are shown: the files they point at, read for snippets,
//! and the file of the change a pull-request annotation lands on.

use std::sync::Arc;

use crate::argocd::Inventory;
use crate::finding::{Finding, Location, Side};
use crate::report::Report;
use crate::source::{self, Tree};

/// How many findings about one field are pointed at its line: each lookup
/// re-parses its file, so past this budget findings keep their document's
/// line.
const FIELD_LOOKUP_BUDGET: usize = 200;

/// Reads the files findings point at, for snippets.
pub(crate) fn attach_files(report: &mut Report, base: Option<&dyn Tree>, head: &dyn Tree) {
    let wanted: Vec<(Side, String)> = report
        .findings
        .iter()
        .filter_map(|f| f.location.as_ref().map(|l| (l.side, l.file.clone())))
        .collect();
    for (side, file) in wanted {
        let tree = match side {
            Side::Base => base,
            Side::Head => Some(head),
        };
        if let Some(Ok(bytes)) = tree.map(|t| source::read(t, &file)) {
            if let Ok(text) = std::str::from_utf8(&bytes) {
                report.files.insert((side, file), Arc::from(text));
            }
        }
    }
    // Findings about one field point at its line, now that the file is read.
    let mut budget = FIELD_LOOKUP_BUDGET;
    for f in &mut report.findings {
        let (Some(field), Some(loc)) = (&f.field, f.location.as_mut()) else {
            continue;
        };
        let Some(text) = report.files.get(&(loc.side, loc.file.clone())) else {
            continue;
        };
        if budget == 0 {
            break;
        }
        budget -= 1;
        let path: Vec<crate::yaml::PathSeg<'_>> = field
            .path
            .iter()
            .map(|k| crate::yaml::PathSeg::Key(k))
            .collect();
        if let Some(line) = crate::yaml::line_of(text, field.doc_index, &path) {
            loc.line = Some(line);
        }
    }
}

fn blob_id(tree: &dyn Tree, path: &str) -> Option<source::ObjectId> {
    match tree.entry(path) {
        Ok(Some(e)) if e.kind != source::EntryKind::Dir => Some(e.id),
        _ => None,
    }
}

/// Where in the head revision a pull-request tool should show a finding, so
/// it lands on a file of the change: the file itself when it still exists
/// (its line only when the file is unchanged), else the nearest changed
/// kustomization above it (the file that stopped including it), else the
/// Application's own file, else what manages a deleted Application.
pub(crate) fn anchor(
    f: &Finding,
    base: &dyn Tree,
    head: &dyn Tree,
    base_inv: &Inventory,
    head_inv: &Inventory,
) -> Option<Location> {
    let at = |file: &str, line: Option<u32>| {
        Some(Location {
            side: Side::Head,
            file: file.to_string(),
            line,
        })
    };
    if let Some(loc) = &f.location {
        let head_id = blob_id(head, &loc.file);
        match loc.side {
            Side::Head if head_id.is_some() => return Some(loc.clone()),
            Side::Base if head_id.is_some() => {
                let same = head_id == blob_id(base, &loc.file);
                return at(&loc.file, loc.line.filter(|_| same));
            }
            _ => {}
        }
        if loc.side == Side::Base {
            let mut dir = source::path::parent(&loc.file);
            loop {
                for name in ["kustomization.yaml", "kustomization.yml", "Kustomization"] {
                    let k = if dir.is_empty() {
                        name.to_string()
                    } else {
                        format!("{dir}/{name}")
                    };
                    let h = blob_id(head, &k);
                    if h.is_some() && h != blob_id(base, &k) {
                        return at(&k, None);
                    }
                }
                if dir.is_empty() {
                    break;
                }
                dir = source::path::parent(dir);
            }
        }
    }
    let app_name = f.app.as_deref()?;
    let in_head = |key: &str| {
        head_inv
            .apps
            .get(key)
            .and_then(|a| a.origin.file.as_deref().map(|f| (f, a.origin.line)))
            .or_else(|| {
                head_inv
                    .appsets
                    .get(key)
                    .and_then(|s| s.origin.file.as_deref().map(|f| (f, s.origin.line)))
            })
            .filter(|(f, _)| blob_id(head, f).is_some())
    };
    if let Some(app) = head_inv
        .apps
        .values()
        .find(|a| a.display_name() == app_name)
    {
        if let Some((file, line)) = in_head(&app.key) {
            return at(file, line);
        }
    }
    // A deleted Application: point at what deletes it.
    let app = base_inv
        .apps
        .values()
        .find(|a| a.display_name() == app_name)?;
    let manager = match app.manager.as_ref()? {
        crate::argocd::Manager::App(k) | crate::argocd::Manager::AppSet(k) => k,
    };
    in_head(manager).and_then(|(file, line)| at(file, line))
}
