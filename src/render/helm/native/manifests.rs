//! What `helm template` prints once templates are rendered, as helm v3.17
//! assembles it: `pkg/releaseutil` `SortManifests` (files in path order,
//! `_` files and blank output skipped, each split on `---` lines by
//! `SplitManifests`, hooks told by their `helm.sh/hook` annotation and an
//! unknown hook dropped, both sorted stably by `InstallOrder` of kinds),
//! then `pkg/action` `renderResources` (CRDs of `crds/` first when included,
//! then the manifests) and `cmd/helm/template.go` (the hooks last, test
//! hooks left out under `--skip-tests`), each document under a
//! `# Source:` comment.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

/// `releaseutil.InstallOrder`.
const INSTALL_ORDER: &[&str] = &[
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
];

/// The hook events helm knows (`releaseutil` `events`).
const HOOK_EVENTS: &[&str] = &[
    "pre-install",
    "post-install",
    "pre-delete",
    "post-delete",
    "pre-upgrade",
    "post-upgrade",
    "pre-rollback",
    "post-rollback",
    "test",
    "test-success",
];

/// One document of a rendered template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::render::helm) struct Manifest {
    /// The template's path (`chart/templates/x.yaml`).
    pub(crate) path: String,
    /// The document, trimmed.
    pub(crate) content: String,
    /// Its `kind`.
    pub(crate) kind: String,
    /// A test hook (`helm.sh/hook: test`).
    pub(crate) test: bool,
}

/// `SplitManifests`: the documents of `big`, trimmed, empty ones dropped.
#[must_use]
pub(in crate::render::helm) fn split_manifests(big: &str) -> Vec<String> {
    static SEP: OnceLock<Option<Regex>> = OnceLock::new();
    // Go's `\s` is `[\t\n\f\r ]`.
    let sep = SEP.get_or_init(|| Regex::new(r"(?:^|[\t\n\f\r ]*\n)---[\t\n\f\r ]*").ok());
    let trimmed = big.trim();
    let Some(sep) = sep else {
        return vec![trimmed.to_string()];
    };
    sep.split(trimmed)
        .filter(|d| !d.is_empty())
        .map(|d| d.trim().to_string())
        .collect()
}

/// Helm 4's `InstallOrder` (`pkg/release/v1/util/kind_sorter.go` at
/// v4.2.1) ends with the two webhook configurations, which Helm 3 sorts as
/// unknown kinds (helm v4.1.4 prints them before a kind-less document,
/// where v3.17.1 prints them after).
const HELM4_INSTALL_ORDER_TAIL: &[&str] = &[
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// `lessByKind` over `InstallOrder`: known kinds by their rank, before
/// unknown ones, which go by name.
fn kind_rank(a: &str, b: &str, helm4: bool) -> std::cmp::Ordering {
    let rank = |k: &str| {
        INSTALL_ORDER.iter().position(|x| *x == k).or_else(|| {
            helm4
                .then(|| HELM4_INSTALL_ORDER_TAIL.iter().position(|x| *x == k))
                .flatten()
                .map(|i| INSTALL_ORDER.len() + i)
        })
    };
    match (rank(a), rank(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// The parts of a document `SimpleHead` reads: `kind` and the
/// annotations, as `yaml.Unmarshal` into it would fail or read them.
fn head(doc: &str, path: &str, helm4: bool) -> Result<(String, BTreeMap<String, String>), String> {
    let docs = goyaml::load_all_as(doc, goyaml::Dialect::SigsYaml, &goyaml::Limits::default())
        .map_err(|e| {
            format!(
                "YAML parse error on {path}: error converting YAML to JSON: {}",
                e.go_yaml_text()
            )
        })?;
    let v = docs
        .into_iter()
        .next()
        .map(goyaml::Doc::into_value)
        .unwrap_or_default();
    let bad = |what: &str, field: &str, ty: &str| {
        format!(
            "YAML parse error on {path}: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {what} into Go {field} of type {ty}"
        )
    };
    let kind_of = super::chart::json_kind;
    let obj = match &v {
        Value::Object(o) => o,
        Value::Null => return Ok((String::new(), BTreeMap::new())),
        // Helm 4's package is `util` (`pkg/release/v1/util`; helm v4.1.4
        // prints `util.SimpleHead`).
        other => {
            let ty = if helm4 {
                "util.SimpleHead"
            } else {
                "releaseutil.SimpleHead"
            };
            return Err(bad(kind_of(other), "value", ty));
        }
    };
    let kind = match obj.get("kind") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(bad(
                kind_of(other),
                "struct field SimpleHead.kind",
                "string",
            ))
        }
    };
    if let Some(x) = obj.get("apiVersion") {
        if !matches!(x, Value::String(_) | Value::Null) {
            return Err(bad(
                kind_of(x),
                "struct field SimpleHead.apiVersion",
                "string",
            ));
        }
    }
    let mut annotations = BTreeMap::new();
    match obj.get("metadata") {
        None | Some(Value::Null) => {}
        Some(Value::Object(md)) => {
            if let Some(n) = md.get("name") {
                if !matches!(n, Value::String(_) | Value::Null) {
                    return Err(bad(kind_of(n), "struct field .metadata.name", "string"));
                }
            }
            match md.get("annotations") {
                None | Some(Value::Null) => {}
                Some(Value::Object(a)) => {
                    for (k, x) in a {
                        match x {
                            Value::String(s) => {
                                annotations.insert(k.clone(), s.clone());
                            }
                            Value::Null => {
                                annotations.insert(k.clone(), String::new());
                            }
                            other => {
                                return Err(bad(
                                    kind_of(other),
                                    "struct field .metadata.annotations",
                                    "string",
                                ))
                            }
                        }
                    }
                }
                Some(other) => {
                    return Err(bad(
                        kind_of(other),
                        "struct field .metadata.annotations",
                        "map[string]string",
                    ))
                }
            }
        }
        Some(other) => {
            return Err(bad(kind_of(other), "struct field SimpleHead.metadata", "struct { Name string \"json:\\\"name\\\"\"; Annotations map[string]string \"json:\\\"annotations\\\"\" }"))
        }
    }
    Ok((kind, annotations))
}

/// `SortManifests`: the rendered `files` (template path → output) as
/// manifests and hooks, each sorted by kind.
///
/// # Errors
/// A document that is not valid YAML (helm's "YAML parse error on …").
pub(in crate::render::helm) fn sort_manifests(
    files: &BTreeMap<String, String>,
    line: super::HelmLine,
) -> Result<(Vec<Manifest>, Vec<Manifest>), String> {
    let helm4 = line >= super::HelmLine::V4;
    let mut generic = Vec::new();
    let mut hooks = Vec::new();
    for (path, content) in files {
        let base = path.rsplit('/').next().unwrap_or(path);
        if base.starts_with('_') || content.trim().is_empty() {
            continue;
        }
        let docs = if helm4 {
            split_manifests_v4(content)
        } else {
            split_manifests(content)
        };
        for doc in docs {
            let (kind, annotations) = head(&doc, path, helm4)?;
            let m = Manifest {
                path: path.clone(),
                content: doc,
                kind,
                test: false,
            };
            let Some(hook) = annotations.get("helm.sh/hook") else {
                generic.push(m);
                continue;
            };
            let events: Vec<String> = hook
                .split(',')
                .map(|h| h.trim().to_ascii_lowercase())
                .collect();
            if events.iter().any(|e| !HOOK_EVENTS.contains(&e.as_str())) {
                // "info: skipping unknown hook"
                continue;
            }
            let test = events.iter().any(|e| e == "test" || e == "test-success");
            hooks.push(Manifest { test, ..m });
        }
    }
    generic.sort_by(|a, b| kind_rank(&a.kind, &b.kind, helm4));
    hooks.sort_by(|a, b| kind_rank(&a.kind, &b.kind, helm4));
    Ok((generic, hooks))
}

/// Helm 4's `SplitManifests` (`pkg/release/v1/util/manifest.go` at
/// v4.2.1): leading space trimmed, trailing space kept, documents of
/// space alone dropped.
fn split_manifests_v4(big: &str) -> Vec<String> {
    static SEP: OnceLock<Option<Regex>> = OnceLock::new();
    let sep = SEP.get_or_init(|| Regex::new(r"(?:^|[\t\n\f\r ]*\n)---[\t\n\f\r ]*").ok());
    let trimmed = big.trim_start();
    let Some(sep) = sep else {
        return vec![trimmed.to_string()];
    };
    sep.split(trimmed)
        .filter(|d| !d.trim().is_empty())
        .map(|d| d.trim_start().to_string())
        .collect()
}

/// The text `helm template` prints: `crds` (path, content) first, then the
/// manifests, then the hooks (test hooks only without `skip_tests`).
#[must_use]
pub(in crate::render::helm) fn assemble(
    crds: &[(String, std::sync::Arc<[u8]>)],
    manifests: &[Manifest],
    hooks: &[Manifest],
    skip_tests: bool,
) -> String {
    let mut rel = String::new();
    for (name, data) in crds {
        rel.push_str(&format!(
            "---\n# Source: {name}\n{}\n",
            String::from_utf8_lossy(data)
        ));
    }
    for m in manifests {
        rel.push_str(&format!("---\n# Source: {}\n{}\n", m.path, m.content));
    }
    let mut out = format!("{}\n", rel.trim());
    for h in hooks {
        if skip_tests && h.test {
            continue;
        }
        out.push_str(&format!("---\n# Source: {}\n{}\n", h.path, h.content));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_split_on_dash_lines_only() {
        assert_eq!(
            split_manifests("\n---\na: 1\n---  \nb: 2\n--- #x\n\n---\n"),
            ["a: 1", "b: 2", "#x"]
        );
        assert_eq!(
            split_manifests("a: '---'\nb: c---d"),
            ["a: '---'\nb: c---d"]
        );
    }

    #[test]
    fn manifests_sort_by_install_order_then_hooks_apart() {
        let mut files = BTreeMap::new();
        files.insert(
            "c/templates/b.yaml".to_string(),
            "kind: Deployment\nmetadata:\n  name: d\n---\nkind: Zeta\n---\nkind: Alpha\n"
                .to_string(),
        );
        files.insert(
            "c/templates/a.yaml".to_string(),
            "kind: Service\n---\nkind: Job\nmetadata:\n  annotations:\n    helm.sh/hook: pre-install\n---\nkind: Pod\nmetadata:\n  annotations:\n    helm.sh/hook: test\n---\nkind: Pod\nmetadata:\n  annotations:\n    helm.sh/hook: bogus\n"
                .to_string(),
        );
        files.insert("c/templates/_h.tpl".to_string(), "kind: Secret".to_string());
        files.insert("c/templates/blank.yaml".to_string(), "  \n".to_string());
        files.insert(
            "c/templates/ns.yaml".to_string(),
            "kind: Namespace\n".to_string(),
        );
        let (generic, hooks) =
            sort_manifests(&files, super::super::HelmLine::V3_17).expect("sorts");
        let kinds: Vec<&str> = generic.iter().map(|m| m.kind.as_str()).collect();
        assert_eq!(
            kinds,
            ["Namespace", "Service", "Deployment", "Alpha", "Zeta"]
        );
        let hook_kinds: Vec<(&str, bool)> =
            hooks.iter().map(|m| (m.kind.as_str(), m.test)).collect();
        assert_eq!(
            hook_kinds,
            [("Pod", true), ("Job", false)],
            "unknown hook dropped"
        );
        let text = assemble(&[], &generic, &hooks, true);
        assert!(text.starts_with("---\n# Source: c/templates/ns.yaml\nkind: Namespace\n---\n"));
        assert!(!text.contains("helm.sh/hook: test"), "test hooks skipped");
        assert!(text.ends_with("# Source: c/templates/a.yaml\nkind: Job\nmetadata:\n  annotations:\n    helm.sh/hook: pre-install\n"));
    }

    #[test]
    fn a_bad_document_fails_as_helm_fails() {
        let mut files = BTreeMap::new();
        files.insert("c/templates/x.yaml".to_string(), "a: [\n".to_string());
        assert!(sort_manifests(&files, super::super::HelmLine::V3_17)
            .err()
            .is_some_and(|e| e.starts_with("YAML parse error on c/templates/x.yaml")));
        files.insert(
            "c/templates/x.yaml".to_string(),
            "metadata:\n  annotations:\n    a: 1\n".to_string(),
        );
        assert!(sort_manifests(&files, super::super::HelmLine::V3_17)
            .err()
            .is_some_and(|e| e.contains("cannot unmarshal number")));
    }
}

#[cfg(test)]
mod line_tests {
    use super::super::HelmLine;
    use super::*;

    #[test]
    fn helm4_ranks_webhook_configurations_and_names_util_simple_head() {
        // ingress-nginx__defaults under helm v4.1.4: the kind-less document
        // moves after the ValidatingWebhookConfiguration.
        let files: BTreeMap<String, String> = [(
            "c/templates/a.yaml".to_string(),
            "# only a comment\n---\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: w\n"
                .to_string(),
        )]
        .into();
        let kinds = |line| {
            sort_manifests(&files, line)
                .expect("sorts")
                .0
                .iter()
                .map(|m| m.kind.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            kinds(HelmLine::V3_19),
            ["", "ValidatingWebhookConfiguration"]
        );
        assert_eq!(kinds(HelmLine::V4), ["ValidatingWebhookConfiguration", ""]);
        let bad: BTreeMap<String, String> =
            [("c/templates/a.yaml".to_string(), "just text\n".to_string())].into();
        let e = sort_manifests(&bad, HelmLine::V4).unwrap_err();
        assert!(e.ends_with("of type util.SimpleHead"), "{e}");
    }
}
