//! Times ApplicationSet expansion: every `appsets/*.yaml` of a repository's
//! HEAD tree, expanded three times.
//!
//! `cargo run --release --example appset_expand_bench -- REPO [shared]`:
//! with `shared`, one `TreeIndexCache` serves every expansion (as the
//! inventory does); without, each expansion walks the tree itself.

use std::path::Path;
use std::time::Instant;

use gitops_lint::argocd::appset::{expand, AppSetContext, AppSetSettings, TreeIndexCache};
use gitops_lint::source::{self, GitRepo};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .ok_or("usage: appset_expand_bench REPO [shared]")?;
    let shared = args.next().is_some();
    let repo = GitRepo::open(Path::new(&dir))?;
    let head = repo.head_commit().ok_or("no HEAD commit")?;
    let tree = repo.commit_tree(&head)?;
    let mut sets = Vec::new();
    for e in source::list(tree.as_ref(), "appsets")? {
        let bytes = source::read(tree.as_ref(), &format!("appsets/{}", e.name))?;
        for d in goyaml::load_all(&String::from_utf8_lossy(&bytes))? {
            sets.push(d.value);
        }
    }
    let settings = AppSetSettings::default();
    let any = |_: &str| true;
    let cache = TreeIndexCache::default();
    let cx = AppSetContext {
        tree: tree.as_ref(),
        is_this_repo: &any,
        is_this_revision: None,
        clusters: &[],
        settings: &settings,
        index_cache: shared.then_some(&cache),
        // Each round templates every Application again.
        templated: None,
    };
    for round in 0..3 {
        let t = Instant::now();
        let mut apps = 0;
        for s in &sets {
            apps += expand(s, &cx)?.apps.len();
        }
        let took = t.elapsed();
        let n = sets.len();
        // The one place this program reports.
        #[allow(clippy::print_stdout)]
        {
            println!("round {round}: {n} ApplicationSets, {apps} Applications in {took:?}");
        }
    }
    Ok(())
}
