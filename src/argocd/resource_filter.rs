//! The kinds Argo CD manages at all: `resource.exclusions` and
//! `resource.inclusions` of `argocd-cm`, after its built-in core exclusions.
//!
//! An excluded kind is left out twice. The controller drops excluded
//! targets from the comparison (AC `controller/state.go` `CompareAppState`:
//! `resFilter.IsExcludedResource(gvk.Group, gvk.Kind, destCluster.Server)`,
//! an `ExcludedResourceWarning` condition), so it never applies them; and
//! the cluster cache never watches the kind (GE `pkg/utils/kube/ctl.go`
//! `GetServerResources` skips excluded API resources), so no live object of
//! it is ever the app's to prune or to delete with the Application.

use serde_json::Value;

use gotemplate::go::glob::{Glob, GlobError};

use super::tracking::LearnedTracking;

/// Why a kind is not managed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Exclusion {
    /// Argo CD's own list (AC `resources_filter.go` `coreExcludedResources`).
    Core,
    /// `resource.exclusions` lists it.
    Excluded,
    /// `resource.inclusions` has rules for the cluster and none lists it.
    NotIncluded,
}

impl Exclusion {
    /// Where the exclusion comes from, for messages.
    #[must_use]
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Exclusion::Core => "Argo CD's built-in exclusions (events.k8s.io, metrics.k8s.io, `Event`, coordination.k8s.io `Lease`)",
            Exclusion::Excluded => "`resource.exclusions` in `argocd-cm`",
            Exclusion::NotIncluded => "`resource.inclusions` in `argocd-cm`, which does not list it",
        }
    }
}

/// One entry of either list (AC `util/settings/filtered_resource.go`
/// `FilteredResource`): every list given must match, an empty one matches
/// all.
#[derive(Debug, Clone, Default)]
struct FilteredResource {
    api_groups: Vec<String>,
    kinds: Vec<String>,
    clusters: Vec<String>,
}

/// How a pattern that cannot be decided offline is taken: an unknown
/// destination server, or a glob past gitops-lint's limits. The filter
/// leans to "managed", so a prune is reported rather than hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unknown {
    Matches,
    Misses,
}

/// AC `util/glob` `Match` with no separators: a pattern that does not
/// compile matches nothing.
fn glob_matches(pattern: &str, text: &str, unknown: Unknown) -> bool {
    match Glob::new(pattern, &[]) {
        Ok(g) => g.is_match(text),
        Err(GlobError::Invalid(_)) => false,
        Err(GlobError::TooLarge) => unknown == Unknown::Matches,
    }
}

impl FilteredResource {
    fn from_value(v: &Value) -> FilteredResource {
        let list = |k: &str| {
            v.get(k)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        FilteredResource {
            api_groups: list("apiGroups"),
            kinds: list("kinds"),
            clusters: list("clusters"),
        }
    }

    /// `matchGroup`: globs.
    fn matches_group(&self, group: &str, unknown: Unknown) -> bool {
        self.api_groups.is_empty()
            || self
                .api_groups
                .iter()
                .any(|p| glob_matches(p, group, unknown))
    }

    /// `matchKind`: `*` or the exact kind.
    fn matches_kind(&self, kind: &str) -> bool {
        self.kinds.is_empty() || self.kinds.iter().any(|k| k == "*" || k == kind)
    }

    /// `MatchCluster`: globs over the destination's server URL.
    fn matches_cluster(&self, cluster: Option<&str>, unknown: Unknown) -> bool {
        if self.clusters.is_empty() {
            return true;
        }
        let Some(cluster) = cluster else {
            return unknown == Unknown::Matches;
        };
        self.clusters
            .iter()
            .any(|p| glob_matches(p, cluster, unknown))
    }

    /// `Match`.
    fn matches(&self, group: &str, kind: &str, cluster: Option<&str>, unknown: Unknown) -> bool {
        self.matches_group(group, unknown)
            && self.matches_kind(kind)
            && self.matches_cluster(cluster, unknown)
    }
}

/// AC `resources_filter.go` `coreExcludedResources`.
fn core_excluded(group: &str, kind: &str) -> bool {
    matches!(group, "events.k8s.io" | "metrics.k8s.io")
        || (group.is_empty() && kind == "Event")
        || (group == "coordination.k8s.io" && kind == "Lease")
}

/// The settings of one `argocd-cm` (AC `settings.go` `GetResourcesFilter`).
#[derive(Debug, Clone, Default)]
pub(crate) struct ResourcesFilter {
    exclusions: Vec<FilteredResource>,
    inclusions: Vec<FilteredResource>,
}

impl ResourcesFilter {
    /// Reads both lists of an `argocd-cm` in the repository; without one,
    /// only the core exclusions apply. A list that is not a YAML sequence
    /// makes Argo CD fail every comparison (`GetResourcesFilter` returns
    /// the error); it is read as empty here, so prunes stay reported.
    #[must_use]
    pub(crate) fn from_settings(settings: Option<&LearnedTracking>) -> ResourcesFilter {
        let read = |text: Option<&String>| -> Vec<FilteredResource> {
            let Some(text) = text else { return Vec::new() };
            match goyaml::load_first_sigs(text, &goyaml::Limits::default()) {
                Ok(Value::Array(items)) => items.iter().map(FilteredResource::from_value).collect(),
                _ => Vec::new(),
            }
        };
        ResourcesFilter {
            exclusions: read(settings.and_then(|s| s.resource_exclusions.as_ref())),
            inclusions: read(settings.and_then(|s| s.resource_inclusions.as_ref())),
        }
    }

    /// Whether Argo CD leaves objects of `group`/`kind` on `cluster` (the
    /// destination's server URL, `None` when it cannot be resolved offline)
    /// unmanaged, and why (AC `resources_filter.go` `IsExcludedResource`):
    /// excluded first, then included, then excluded when any inclusion rule
    /// names the cluster. What cannot be decided counts as managed.
    #[must_use]
    pub(crate) fn excludes(
        &self,
        group: &str,
        kind: &str,
        cluster: Option<&str>,
    ) -> Option<Exclusion> {
        if core_excluded(group, kind) {
            return Some(Exclusion::Core);
        }
        if self
            .exclusions
            .iter()
            .any(|r| r.matches(group, kind, cluster, Unknown::Misses))
        {
            return Some(Exclusion::Excluded);
        }
        if self
            .inclusions
            .iter()
            .any(|r| r.matches(group, kind, cluster, Unknown::Matches))
        {
            return None;
        }
        self.inclusions
            .iter()
            .any(|r| r.matches_cluster(cluster, Unknown::Misses))
            .then_some(Exclusion::NotIncluded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(exclusions: Option<&str>, inclusions: Option<&str>) -> ResourcesFilter {
        ResourcesFilter::from_settings(Some(&LearnedTracking {
            resource_exclusions: exclusions.map(str::to_owned),
            resource_inclusions: inclusions.map(str::to_owned),
            ..LearnedTracking::default()
        }))
    }

    const IN_CLUSTER: Option<&str> = Some("https://kubernetes.default.svc");

    #[test]
    fn core_exclusions_apply_without_settings() {
        let f = ResourcesFilter::from_settings(None);
        assert_eq!(f.excludes("", "Event", None), Some(Exclusion::Core));
        assert_eq!(
            f.excludes("coordination.k8s.io", "Lease", None),
            Some(Exclusion::Core)
        );
        assert_eq!(
            f.excludes("metrics.k8s.io", "PodMetrics", None),
            Some(Exclusion::Core)
        );
        assert_eq!(f.excludes("", "PersistentVolumeClaim", None), None);
        assert_eq!(f.excludes("apps", "Event", None), None);
    }

    #[test]
    fn exclusions_match_group_globs_kinds_and_clusters() {
        let f = filter(
            Some("- apiGroups: ['*.example.com']\n  kinds: ['*']\n- apiGroups: ['']\n  kinds: [Secret]\n  clusters: ['https://prod.*']\n"),
            None,
        );
        assert_eq!(
            f.excludes("db.example.com", "Backup", IN_CLUSTER),
            Some(Exclusion::Excluded)
        );
        assert_eq!(f.excludes("", "Secret", IN_CLUSTER), None);
        assert_eq!(
            f.excludes("", "Secret", Some("https://prod.example.com")),
            Some(Exclusion::Excluded)
        );
        // An unresolved destination is taken as managed.
        assert_eq!(f.excludes("", "Secret", None), None);
    }

    #[test]
    fn inclusions_exclude_the_rest_on_their_clusters_only() {
        let f = filter(
            None,
            Some("- apiGroups: ['', apps]\n  kinds: ['*']\n  clusters: ['https://kubernetes.default.svc']\n"),
        );
        assert_eq!(f.excludes("apps", "Deployment", IN_CLUSTER), None);
        assert_eq!(
            f.excludes("batch", "Job", IN_CLUSTER),
            Some(Exclusion::NotIncluded)
        );
        assert_eq!(f.excludes("batch", "Job", Some("https://other")), None);
        assert_eq!(f.excludes("batch", "Job", None), None);
    }

    #[test]
    fn exclusion_wins_over_inclusion() {
        let f = filter(Some("- kinds: [ConfigMap]\n"), Some("- apiGroups: ['']\n"));
        assert_eq!(
            f.excludes("", "ConfigMap", IN_CLUSTER),
            Some(Exclusion::Excluded)
        );
        assert_eq!(f.excludes("", "Secret", IN_CLUSTER), None);
    }

    #[test]
    fn a_list_that_is_not_a_sequence_excludes_nothing_more() {
        let f = filter(Some("kinds: [Secret]"), Some("{{"));
        assert_eq!(f.excludes("", "Secret", IN_CLUSTER), None);
    }
}
