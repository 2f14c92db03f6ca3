//! First-run guidance: a repository with no Application file whose
//! Applications a chart or a kustomization renders is linted as an implicit
//! app, which analyses nothing of them. Which directories render
//! Applications, and the configuration that makes them roots, is said.

use super::*;
use source::walk::{self, Flow, Visitor};

/// Directories with a chart or a kustomization looked at, at most: a first
/// run must stay quick on a large repository.
const MAX_CANDIDATES: usize = 32;

/// Collects directories holding a `Chart.yaml` or a kustomization.
struct Candidates {
    dirs: Vec<String>,
}

impl Visitor for Candidates {
    type Error = std::convert::Infallible;

    fn entry(&mut self, dir: &str, _: &str, e: &source::Entry) -> Result<Flow, Self::Error> {
        let typed = e.kind == EntryKind::File
            && (e.name == "Chart.yaml"
                || crate::render::KUSTOMIZATION_NAMES.contains(&e.name.as_str()));
        // Hidden directories (`.github/`) are tooling; the root is the
        // implicit app itself.
        if typed
            && !dir.is_empty()
            && !dir.split('/').any(|p| p.starts_with('.'))
            && self.dirs.last().map(String::as_str) != Some(dir)
        {
            self.dirs.push(dir.to_string());
        }
        Ok(if self.dirs.len() >= MAX_CANDIDATES {
            Flow::Stop
        } else {
            Flow::Continue
        })
    }
}

/// The directories (a chart or a kustomization, below the root) whose render
/// holds an `Application` or `ApplicationSet`, and the note saying which
/// `apps:` lines make them analysed as Argo CD applies them. `None` when
/// there is none.
pub(super) fn rendered_applications(input: &InventoryInput<'_>, inv: &Inventory) -> Option<String> {
    let mut found = Candidates { dirs: Vec::new() };
    // The visitor never fails; a directory that cannot be listed is left out.
    let _ = walk::walk(input.tree.as_ref(), "", &mut found);
    let dirs: Vec<String> = found
        .dirs
        .into_iter()
        .filter(|dir| {
            let app = render_fresh(
                input,
                &inv.scopes,
                (&inv.kustomize_build_options, &inv.plugins),
                None,
                implicit_root(input, dir),
            );
            app.resources
                .iter()
                .any(|m| is_application(&m.value) || is_application_set(&m.value))
        })
        .collect();
    if dirs.is_empty() {
        return None;
    }
    let listed: Vec<String> = dirs.iter().map(|d| format!("`{d}`")).collect();
    Some(format!(
        "no Application file was found, but {} render(s) `kind: Application` or `ApplicationSet`, which the implicit app does not analyse: add `apps: [{}]` to {} to lint each as a root, its Applications as Argo CD applies them",
        listed.join(", "),
        dirs.join(", "),
        crate::config::CONFIG_FILE
    ))
}
