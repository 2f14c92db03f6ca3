//! Roots and Argo CD instances.
//!
//! A root is a file whose Applications and ApplicationSets no app renders:
//! something outside Argo CD applies it (an operator by hand, bootstrap
//! tooling), and everything its apps render is its tree. A repository often
//! holds several roots that different Argo CD instances apply, one per
//! cluster (`envs/dev/root.yaml`, `envs/prod/root.yaml`), whose trees hold
//! Applications of the same names. Argo CD keys an Application by its
//! namespace and name within one instance (the controller's informer,
//! `argo-cd` `controller/appcontroller.go`), so within one instance two
//! trees rendering one name differently fight over one object; across
//! instances they are two objects and each can be deleted on its own.
//!
//! Apps are therefore keyed by instance as well as `namespace/name`. Roots
//! named by `instances:` in the configuration belong to that instance.
//! Other roots share the default instance, unless their trees render one
//! Application (or ApplicationSet) name differently from another root's:
//! such a root is an instance of its own, named by its file, so neither
//! tree can hide the other's deletions.

use super::{App, AppSetEntry, Manager};
use crate::config::Config;
use std::collections::{BTreeMap, BTreeSet};

/// The separator between `namespace/name` and the instance in a key. Not a
/// character of Kubernetes names or namespaces (DNS labels and subdomains).
pub(crate) const SEPARATOR: char = '@';

/// The key of `namespace/name` in `instance` (`None`: the default instance).
#[must_use]
pub(crate) fn qualify(key: String, instance: Option<&str>) -> String {
    match instance {
        Some(i) => format!("{key}{SEPARATOR}{i}"),
        None => key,
    }
}

/// `namespace/name` of a key, without its instance.
#[must_use]
pub(crate) fn unqualified(key: &str) -> &str {
    key.split_once(SEPARATOR).map_or(key, |(k, _)| k)
}

/// A key as findings and reports name it: without the `argocd/` namespace
/// of Argo CD's own Applications and ApplicationSets, which most keys
/// share (`argocd/web@prod` reads `web@prod`).
#[must_use]
pub(crate) fn short_key(key: &str) -> &str {
    key.strip_prefix("argocd/").unwrap_or(key)
}

/// The instance of a key (`None`: the default instance).
#[must_use]
pub(crate) fn instance_of_key(key: &str) -> Option<&str> {
    key.split_once(SEPARATOR).map(|(_, i)| i)
}

/// The instance of a root declared in `file`: the configured instance whose
/// `roots` match it, else the file itself when it was split off because
/// its tree collides with another root's (`split`), else the default.
#[must_use]
pub(crate) fn instance_of(
    config: &Config,
    split: &BTreeSet<String>,
    file: Option<&str>,
) -> Option<String> {
    let file = file?;
    if let Some(i) = config.instances.iter().find(|i| i.roots.matches(file)) {
        return Some(i.name.clone());
    }
    split.contains(file).then(|| file.to_string())
}

/// Whether a declaration in `file` may be a root: with `roots:` configured,
/// only files it matches are applied outside Argo CD.
#[must_use]
pub(crate) fn may_be_root(config: &Config, file: Option<&str>) -> bool {
    config.roots.patterns().is_empty() || file.is_some_and(|f| config.roots.matches(f))
}

/// The root file of the tree `key` belongs to: its managers followed up to
/// an app or ApplicationSet nothing manages (for an implicit app of `apps:`,
/// its directory).
#[must_use]
pub(crate) fn root_file(
    apps: &BTreeMap<String, App>,
    appsets: &BTreeMap<String, AppSetEntry>,
    key: &str,
) -> Option<String> {
    let mut manager = Manager::App(key.to_string());
    let mut seen = BTreeSet::new();
    loop {
        if !seen.insert(manager.clone()) {
            return None; // a loop of managers has no root
        }
        let (next, file) = match &manager {
            Manager::App(k) => {
                let a = apps.get(k)?;
                // An implicit app (`apps:`) is rooted at its directory.
                let file = match &a.origin.file {
                    Some(f) => Some(f.clone()),
                    None => a.implicit.then(|| a.source_path()),
                };
                (a.manager.clone(), file)
            }
            Manager::AppSet(k) => {
                let s = appsets.get(k)?;
                (s.manager.clone(), s.origin.file.clone())
            }
        };
        match next {
            Some(m) => manager = m,
            None => return file,
        }
    }
}

/// One Application name that two trees of one instance render differently.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Clash {
    /// The Application's key.
    pub(crate) key: String,
    /// The root file of the tree whose object is analysed.
    pub(crate) kept: String,
    /// The root file of the tree whose object is not.
    pub(crate) other: String,
}

/// Splits clashes between different roots of the default instance (those
/// roots become instances of their own, `colliding`) from the rest, which
/// are said as notes: two roots that `instances:` puts in one instance, or
/// one tree that renders a name twice, are what Argo CD itself sees.
pub(crate) fn settle_clashes(
    config: &Config,
    clashes: &[Clash],
    colliding: &mut BTreeSet<String>,
    notes: &mut Vec<String>,
) {
    let configured = |f: &str| config.instances.iter().any(|i| i.roots.matches(f));
    let mut said = BTreeSet::new();
    for c in clashes {
        if c.kept != c.other && !configured(&c.kept) && !configured(&c.other) {
            colliding.insert(c.kept.clone());
            colliding.insert(c.other.clone());
            continue;
        }
        if !said.insert(c) {
            continue;
        }
        let what = unqualified(&c.key);
        notes.push(if c.kept == c.other {
            format!(
                "Application `{what}` is rendered twice, differently, in the tree of `{}`: Argo CD applies whichever syncs last; the first is analysed",
                c.kept
            )
        } else {
            format!(
                "Application `{what}` is rendered differently by the trees of `{}` and `{}`, which `instances:` puts in one Argo CD instance: Argo CD applies whichever syncs last; the first is analysed",
                c.kept, c.other
            )
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_carry_the_instance_after_the_name() {
        let k = qualify("argocd/payments".into(), Some("envs/prod/root.yaml"));
        assert_eq!(k, "argocd/payments@envs/prod/root.yaml");
        assert_eq!(unqualified(&k), "argocd/payments");
        assert_eq!(qualify("argocd/payments".into(), None), "argocd/payments");
    }

    #[test]
    fn configured_instances_win_over_split_roots() {
        let config = Config::parse(
            ".gitops-lint.yaml",
            "instances:\n  - name: prod\n    roots: ['envs/prod/**']\n",
            &crate::rules::catalog(),
        )
        .expect("valid configuration");
        let split: BTreeSet<String> = ["envs/prod/root.yaml", "envs/dev/root.yaml"]
            .map(String::from)
            .into();
        assert_eq!(
            instance_of(&config, &split, Some("envs/prod/root.yaml")).as_deref(),
            Some("prod")
        );
        assert_eq!(
            instance_of(&config, &split, Some("envs/dev/root.yaml")).as_deref(),
            Some("envs/dev/root.yaml")
        );
        assert_eq!(instance_of(&config, &split, Some("other.yaml")), None);
    }
}
