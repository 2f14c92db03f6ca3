//! GL005 unknown-sync-option: sync options, hook types, delete policies and
//! waves that Argo CD does not recognise, and so silently ignores.

use super::analysis::{app_in_scope, at_resource, rendered_apps, scoped_resources};
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::config::edit_distance;
use crate::finding::Suppression;
use crate::finding::{Finding, Severity, Side};
use crate::manifest::{
    parse_go_atoi, HookType, Manifest, ANN_HELM_HOOK, ANN_HELM_HOOK_DELETE_POLICY,
    ANN_HELM_HOOK_WEIGHT, ANN_HOOK, ANN_HOOK_DELETE_POLICY, ANN_SYNC_OPTIONS, ANN_SYNC_WAVE,
};
use goyaml::json::Pointer as _;

/// See `rules/GL005-unknown-sync-option.md`.
pub(crate) struct UnknownSyncOption;

static META: RuleMeta = RuleMeta {
    code: "GL005",
    name: "unknown-sync-option",
    category: Category::Prune,
    default_severity: Severity::Warning,
    severity_note: "error for a misspelled `Prune=false`, `Prune=confirm`, `Delete=false` or `Delete=confirm`, which protect nothing as written",
    mode: Mode::Single,
    doc: include_str!("../../rules/GL005-unknown-sync-option.md"),
    suppression: Suppression::OBJECT,
};

/// Sync options and the values Argo CD acts on (gitops-engine
/// `pkg/sync/common/types.go`, Argo CD `sync-options.md`). The first value
/// is the one suggested when only the key is written.
const OPTIONS: &[(&str, &[&str])] = &[
    ("Prune", &["false", "confirm", "true"]),
    ("Delete", &["false", "confirm", "true"]),
    ("PruneLast", &["true", "false"]),
    ("Replace", &["true", "false"]),
    ("Force", &["true", "false"]),
    ("ServerSideApply", &["true", "false"]),
    ("Validate", &["false", "true"]),
    ("SkipDryRunOnMissingResource", &["true", "false"]),
    ("ApplyOutOfSyncOnly", &["true", "false"]),
    ("ClientSideApplyMigration", &["false", "true"]),
    ("CreateNamespace", &["true", "false"]),
    (
        "PrunePropagationPolicy",
        &["foreground", "background", "orphan"],
    ),
    ("RespectIgnoreDifferences", &["true", "false"]),
    ("FailOnSharedResource", &["true", "false"]),
];

const HOOK_TYPES: &[&str] = &[
    "PreSync",
    "Sync",
    "PostSync",
    "SyncFail",
    "Skip",
    "PreDelete",
    "PostDelete",
];
const DELETE_POLICIES: &[&str] = &["HookSucceeded", "HookFailed", "BeforeHookCreation", "Never"];
const HELM_HOOKS: &[&str] = &[
    "pre-install",
    "post-install",
    "pre-upgrade",
    "post-upgrade",
    "pre-delete",
    "post-delete",
    "pre-rollback",
    "post-rollback",
    "test",
    "test-success",
    "test-failure",
    "crd-install",
];
const HELM_DELETE_POLICIES: &[&str] = &["hook-succeeded", "hook-failed", "before-hook-creation"];
/// Annotation keys whose misspelling is worth pointing out.
const KEYS: &[&str] = &[
    ANN_SYNC_OPTIONS,
    ANN_SYNC_WAVE,
    ANN_HOOK,
    ANN_HOOK_DELETE_POLICY,
    "argocd.argoproj.io/compare-options",
    ANN_HELM_HOOK,
    ANN_HELM_HOOK_WEIGHT,
    ANN_HELM_HOOK_DELETE_POLICY,
    "helm.sh/resource-policy",
];
/// Other annotation keys Argo CD reads (never reported as misspellings).
const OTHER_KEYS: &[&str] = &[
    "argocd.argoproj.io/tracking-id",
    "argocd.argoproj.io/manifest-generate-paths",
    "argocd.argoproj.io/refresh",
    "argocd.argoproj.io/hydrate",
    "argocd.argoproj.io/skip-reconcile",
    "argocd.argoproj.io/deletion-approved",
    "argocd.argoproj.io/ignore-healthcheck",
    "argocd.argoproj.io/ignore-restart-policy",
    "argocd.argoproj.io/instance",
    "argocd.argoproj.io/managed-by",
    "argocd.argoproj.io/sync-options",
];

/// The known word closest to `w`: same letters ignoring case, `-`/`_`, or
/// within two edits.
fn closest<'k>(w: &str, known: &[&'k str]) -> Option<&'k str> {
    let norm = |s: &str| s.to_ascii_lowercase().replace(['-', '_', ' '], "");
    if let Some(k) = known.iter().find(|k| norm(k) == norm(w)) {
        return Some(k);
    }
    known
        .iter()
        .map(|k| {
            (
                edit_distance(&w.to_ascii_lowercase(), &k.to_ascii_lowercase()),
                *k,
            )
        })
        .filter(|(d, k)| *d <= 2 && *d <= k.len() / 2)
        .min()
        .map(|(_, k)| k)
}

/// What is wrong with one sync-option item, and the spelling Argo CD knows.
fn check_option(item: &str) -> Option<(String, Option<String>)> {
    let compact: String = item.split('=').map(str::trim).collect::<Vec<_>>().join("=");
    let (key, value) = match compact.split_once('=') {
        Some((k, v)) => (k, Some(v)),
        None => (compact.as_str(), None),
    };
    if let Some((k, vals)) = OPTIONS.iter().find(|(k, _)| *k == key) {
        if let Some(v) = value {
            if vals.contains(&v) && compact == item {
                return None;
            }
            if vals.contains(&v) {
                return Some((
                    "has spaces inside, so it matches no option".into(),
                    Some(compact.clone()),
                ));
            }
            if let Some(v2) = vals.iter().find(|x| x.eq_ignore_ascii_case(v)) {
                return Some((
                    "has a value Argo CD does not recognise (values are case-sensitive)".into(),
                    Some(format!("{k}={v2}")),
                ));
            }
            // `Prune=false Delete=false` or `Prune=false;Delete=false`.
            if v.contains([' ', ';']) {
                let fixed = item
                    .replace(';', ",")
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(",");
                return Some((
                    "is several options run together; only commas separate options".into(),
                    Some(fixed),
                ));
            }
            return Some((
                format!(
                    "has a value Argo CD does not recognise (`{k}` takes {})",
                    vals.iter()
                        .map(|v| format!("`{v}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            ));
        }
        return Some((
            "has no value, so it matches no option".into(),
            Some(format!("{k}={}", vals[0])),
        ));
    }
    let keys: Vec<&str> = OPTIONS.iter().map(|(k, _)| *k).collect();
    let k = closest(key, &keys)?;
    let vals = OPTIONS
        .iter()
        .find(|(x, _)| *x == k)
        .map_or(&[][..], |(_, v)| *v);
    let v = value
        .and_then(|v| vals.iter().find(|x| x.eq_ignore_ascii_case(v)))
        .or(vals.first())
        .copied()
        .unwrap_or("true");
    Some((
        "is not an option Argo CD knows (options are case-sensitive)".into(),
        Some(format!("{k}={v}")),
    ))
}

fn option_severity(suggestion: Option<&str>) -> Severity {
    match suggestion {
        Some(s)
            if [
                "Prune=false",
                "Prune=confirm",
                "Delete=false",
                "Delete=confirm",
            ]
            .iter()
            .any(|p| s.split(',').any(|x| x == *p)) =>
        {
            Severity::Error
        }
        _ => Severity::Warning,
    }
}

fn option_findings(items: &[String], whose: &str, out: &mut Vec<Finding>) {
    for item in items {
        let Some((problem, suggestion)) = check_option(item) else {
            continue;
        };
        let mut f = Finding::new(
            &META,
            format!("`{item}` in {whose} {problem}: Argo CD ignores it"),
        )
        .severity(option_severity(suggestion.as_deref()));
        if let Some(s) = suggestion {
            f = f.help(format!("write `{s}`"));
        }
        out.push(f);
    }
}

fn split_csv(v: &str) -> Vec<String> {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The annotation `key` of `m`, as a field to point at.
fn ann_field(m: &Manifest, key: &str) -> Option<crate::finding::FieldRef> {
    m.origin
        .doc_index
        .map(|doc_index| crate::finding::FieldRef {
            doc_index,
            path: vec!["metadata".into(), "annotations".into(), key.to_string()],
        })
}

/// Every problem in the annotations of one resource.
fn resource_findings(m: &Manifest, cx: &RuleContext<'_>) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    if let Some(v) = m.annotation(ANN_SYNC_OPTIONS) {
        let start = out.len();
        option_findings(&split_csv(v), "`argocd.argoproj.io/sync-options`", &mut out);
        for f in &mut out[start..] {
            f.field = ann_field(m, ANN_SYNC_OPTIONS);
        }
    }
    let mut push = |msg: String, help: Option<String>, key: &str| {
        let mut f = Finding::new(&META, msg);
        f.field = ann_field(m, key);
        if let Some(h) = help {
            f = f.help(h);
        }
        out.push(f);
    };
    if let Some(v) = m.annotation(ANN_HOOK) {
        for t in split_csv(v) {
            match HookType::parse(&t) {
                Some(HookType::PreDelete) if !cx.config.argocd_at_least(3, 3) => push(
                    format!("hook type `PreDelete` needs Argo CD 3.3 (target is {}.{}): the hook is ignored", cx.config.argocd_version.0, cx.config.argocd_version.1),
                    Some("set `argocdVersion` in `.gitops-lint.yaml` if the target is newer".into()),
                    ANN_HOOK,
                ),
                Some(_) => {}
                None => {
                    let helm = HookType::from_helm(&t).map(|h| format!("{h:?}"));
                    let s = helm.or_else(|| closest(&t, HOOK_TYPES).map(str::to_string));
                    push(
                        format!("`{t}` in `argocd.argoproj.io/hook` is not a hook type: Argo CD ignores it, and a hook with no valid type is never applied"),
                        s.map(|s| format!("write `{s}`")),
                        ANN_HOOK,
                    );
                }
            }
        }
    }
    if let Some(v) = m.annotation(ANN_HELM_HOOK) {
        for t in split_csv(v) {
            if !HELM_HOOKS.contains(&t.as_str()) {
                let s = closest(&t, HELM_HOOKS);
                push(
                    format!("`{t}` in `helm.sh/hook` is not a Helm hook: Argo CD ignores it"),
                    s.map(|s| format!("write `{s}`")),
                    ANN_HELM_HOOK,
                );
            }
        }
    }
    if let Some(v) = m.annotation(ANN_HOOK_DELETE_POLICY) {
        for p in split_csv(v) {
            if !DELETE_POLICIES.contains(&p.as_str()) {
                let s = closest(&p, DELETE_POLICIES);
                push(
                    format!("`{p}` in `argocd.argoproj.io/hook-delete-policy` is not a delete policy: Argo CD ignores it"),
                    s.map(|s| format!("write `{s}`")),
                    ANN_HOOK_DELETE_POLICY,
                );
            }
        }
    }
    if let Some(v) = m.annotation(ANN_HELM_HOOK_DELETE_POLICY) {
        for p in split_csv(v) {
            if !HELM_DELETE_POLICIES.contains(&p.as_str()) {
                let s = closest(&p, HELM_DELETE_POLICIES);
                push(
                    format!("`{p}` in `helm.sh/hook-delete-policy` is not a Helm delete policy: Argo CD ignores it"),
                    s.map(|s| format!("write `{s}`")),
                    ANN_HELM_HOOK_DELETE_POLICY,
                );
            }
        }
    }
    for key in [ANN_SYNC_WAVE, ANN_HELM_HOOK_WEIGHT] {
        let Some(v) = m.annotation(key) else { continue };
        if parse_go_atoi(v).is_none() {
            let fixed = parse_go_atoi(v.trim()).map(|n| n.to_string());
            push(
                format!("`{key}: \"{v}\"` is not an integer: Argo CD ignores it and `{}` lands in wave {}", m.id, m.sync_wave()),
                Some(match fixed {
                    Some(n) => format!("write `\"{n}\"`"),
                    None => "use a whole number (waves may be negative)".into(),
                }),
                key,
            );
        }
    }
    if let Some(anns) = m
        .value
        .at("/metadata/annotations")
        .and_then(|a| a.as_object())
    {
        for k in anns.keys() {
            if KEYS.contains(&k.as_str()) || OTHER_KEYS.contains(&k.as_str()) {
                continue;
            }
            let is_candidate = k.starts_with("argocd.argoproj.io/")
                || k.starts_with("helm.sh/")
                || k.contains("argoproj");
            if !is_candidate {
                continue;
            }
            if let Some(s) = closest(k, KEYS) {
                push(
                    format!(
                        "annotation `{k}` is not one Argo CD reads: whatever it sets is ignored"
                    ),
                    Some(format!("write `{s}`")),
                    k,
                );
            }
        }
    }
    out
}

impl Rule for UnknownSyncOption {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        for (app, m) in scoped_resources(cx) {
            for f in resource_findings(m, cx) {
                out.push(at_resource(f, app, m));
            }
        }
        for app in rendered_apps(cx) {
            if app.implicit || !app_in_scope(cx, app) {
                continue;
            }
            let items: Vec<String> = app
                .object
                .at("/spec/syncPolicy/syncOptions")
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let mut found = Vec::new();
            let whose = format!(
                "`syncPolicy.syncOptions` of Application `{}`",
                app.display_name()
            );
            option_findings(&items, &whose, &mut found);
            for f in found {
                let f = f.field(app.origin.doc_index, &["spec", "syncPolicy", "syncOptions"]);
                out.push(f.app(app.display_name()).at(
                    Side::Head,
                    app.origin.file.as_deref(),
                    app.origin.line,
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelled_options_get_the_right_spelling() {
        let s = |i: &str| check_option(i).and_then(|(_, s)| s);
        assert_eq!(check_option("Prune=false"), None);
        assert_eq!(s("prune=false").as_deref(), Some("Prune=false"));
        assert_eq!(s("Prune=False").as_deref(), Some("Prune=false"));
        assert_eq!(s("Prune = false").as_deref(), Some("Prune=false"));
        assert_eq!(s("PruneLast=True").as_deref(), Some("PruneLast=true"));
        assert_eq!(
            s("ServerSideApply").as_deref(),
            Some("ServerSideApply=true")
        );
        assert_eq!(
            s("Prune=false Delete=false").as_deref(),
            Some("Prune=false,Delete=false")
        );
        assert_eq!(s("Purne=false").as_deref(), Some("Prune=false"));
        assert_eq!(s("CreateNamespace=true"), None);
        assert!(
            check_option("Frobnicate=yes").is_none(),
            "nothing close: not reported"
        );
        assert_eq!(option_severity(Some("Prune=false")), Severity::Error);
        assert_eq!(option_severity(Some("PruneLast=true")), Severity::Warning);
    }

    #[test]
    fn closest_matches_case_and_small_typos_only() {
        assert_eq!(closest("presync", HOOK_TYPES), Some("PreSync"));
        assert_eq!(
            closest("HookSucceded", DELETE_POLICIES),
            Some("HookSucceeded")
        );
        assert_eq!(
            closest("hook-succeeded", DELETE_POLICIES),
            Some("HookSucceeded")
        );
        assert_eq!(
            closest("argocd.argoproj.io/sync-option", KEYS),
            Some(ANN_SYNC_OPTIONS)
        );
        assert_eq!(
            closest("argocd.argoproj.io/sync-waves", KEYS),
            Some(ANN_SYNC_WAVE)
        );
        assert_eq!(closest("Skip", DELETE_POLICIES), None);
    }
}
