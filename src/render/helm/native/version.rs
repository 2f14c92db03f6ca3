//! Which helm the native renderer renders as: the one the configured Argo
//! CD release ships (`argocdVersion`; Argo CD's `hack/tool-versions.sh`),
//! and what differs between those helms in `helm template`'s output under
//! Argo CD's flags. Every difference is listed, with its source, in
//! docs/fidelity.md ("Helm version differences") and at the code that makes it.
//!
//! | Argo CD | helm | [`HelmLine`] |
//! |---|---|---|
//! | 3.0 (and older) | 3.17.1 | `V3_17` (the corpus reference) |
//! | 3.1, 3.2 | 3.18.4 | `V3_18` |
//! | 3.3, 3.4 | 3.19.4 | `V3_19` |
//! | 3.5 and later | 4.2.1 | `V4` |

use gotemplate::{go_quote, HelmGen};

/// The helm release line the native renderer follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum HelmLine {
    /// helm v3.17.1 (Argo CD 3.0).
    #[default]
    V3_17,
    /// helm v3.18.4 (Argo CD 3.1, 3.2).
    V3_18,
    /// helm v3.19.4 (Argo CD 3.3, 3.4).
    V3_19,
    /// helm v4.2.1 (Argo CD 3.5).
    V4,
}

impl HelmLine {
    /// The helm Argo CD `major.minor` ships.
    #[must_use]
    pub fn for_argocd(version: (u32, u32)) -> HelmLine {
        match version {
            v if v >= (3, 5) => HelmLine::V4,
            v if v >= (3, 3) => HelmLine::V3_19,
            v if v >= (3, 1) => HelmLine::V3_18,
            _ => HelmLine::V3_17,
        }
    }

    /// The Go text/template the release runs.
    pub(super) fn template_gen(self) -> HelmGen {
        match self {
            HelmLine::V3_17 => HelmGen::Go123,
            HelmLine::V3_18 | HelmLine::V3_19 => HelmGen::Go124,
            HelmLine::V4 => HelmGen::Helm4,
        }
    }

    /// The Kubernetes version helm assumes without `--kube-version`:
    /// `chartutil.DefaultCapabilities` (v3: `k8sVersionMajor/Minor` set by
    /// the Makefile from k8s.io/client-go's version, major + 1; v4:
    /// `pkg/chart/common/capabilities.go` `makeDefaultCapabilities`, the same
    /// rule read from the build info). client-go: v0.32.1, v0.33.2,
    /// v0.34.2, v0.36.1 (`go.mod` at each tag). v3.17.1 and v3.18.0 (same
    /// client-go minor as v3.18.4) print `v1.32.0` and `v1.33.0`.
    pub(super) fn default_kube_version(self) -> &'static str {
        match self {
            HelmLine::V3_17 => "v1.32.0",
            HelmLine::V3_18 => "v1.33.0",
            HelmLine::V3_19 => "v1.34.0",
            HelmLine::V4 => "v1.36.0",
        }
    }

    /// `version.BuildInfo` of the release binary Argo CD installs (from
    /// get.helm.sh: `hack/installers/install-helm-linux.sh`).
    pub(super) fn build_info(self) -> BuildInfo {
        match self {
            // Printed by the v3.17.1 binary.
            HelmLine::V3_17 => BuildInfo {
                version: "v3.17.1",
                git_commit: "980d8ac1939e39138101364400756af2bdee1da5",
                go_version: Some("go1.23.5"),
                kube_client_version: None,
            },
            // The tags' commits. The Go patch release the binaries were
            // built with (`check-latest: true` in `release.yml`) is not
            // known without the binary: `GoVersion` is refused.
            HelmLine::V3_18 => BuildInfo {
                version: "v3.18.4",
                git_commit: "d80839cf37d860c8aa9a0503fe463278f26cd5e2",
                go_version: None,
                kube_client_version: None,
            },
            HelmLine::V3_19 => BuildInfo {
                version: "v3.19.4",
                git_commit: "7cfb6e486dac026202556836bb910c37d847793e",
                go_version: None,
                kube_client_version: None,
            },
            // `internal/version/version.go` `Get` at v4: `KubeClientVersion`
            // is `v<client-go major + 1>.<minor>` (v4.1.4 prints `v1.35`
            // for client-go v0.35.1; v4.2.1 has v0.36.1).
            HelmLine::V4 => BuildInfo {
                version: "v4.2.1",
                git_commit: "d591a19b953bd9cfdf7d9ddd83c2f4ffdaeafb29",
                go_version: None,
                kube_client_version: Some("v1.36"),
            },
        }
    }

    /// `chartutil.DefaultVersionSet` (`allKnownVersions`: client-go's
    /// scheme, `PrioritizedVersionsAllGroups`, with the apiextensions
    /// groups). client-go never sets a version priority, so the order is
    /// the scheme's `observedVersions`: registration order, `v1` first
    /// (`metav1.AddToGroupVersion`'s unversioned types), then
    /// `kubernetes/scheme/register.go` `localSchemeBuilder`, then
    /// apiextensions (k8s.io/apimachinery `pkg/runtime/scheme.go`
    /// `addObservedVersion`). 3.17: printed by v3.17.1. 3.18: printed by
    /// v3.18.0 (client-go v0.33.0, whose `register.go` is v0.33.2's). 3.19:
    /// v4.1.4's list (client-go v0.35.1) with `storagemigration.k8s.io/v1beta1`
    /// back to `v1alpha1`, the only change to `register.go` from v0.34.2 to
    /// v0.35.1. 4.2.1 (client-go v0.36.1): v4.1.4's list without
    /// `autoscaling/v2beta1` and `v2beta2` and with `scheduling.k8s.io/v1alpha2`
    /// in `v1alpha1`'s place, the only changes to `register.go` from v0.35.1
    /// (k8s.io/api v0.36.1 adds types to no other group version).
    pub(super) fn default_api_versions(self) -> Vec<&'static str> {
        let base = DEFAULT_API_VERSIONS_3_17;
        match self {
            HelmLine::V3_17 => base.to_vec(),
            HelmLine::V3_18 => base
                .iter()
                .flat_map(|v| match *v {
                    "resource.k8s.io/v1beta1" => {
                        vec!["resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1"]
                    }
                    v => vec![v],
                })
                .collect(),
            HelmLine::V3_19 => v4_1_4()
                .into_iter()
                .map(|v| match v {
                    "storagemigration.k8s.io/v1beta1" => "storagemigration.k8s.io/v1alpha1",
                    v => v,
                })
                .collect(),
            HelmLine::V4 => v4_1_4()
                .into_iter()
                .filter(|v| !matches!(*v, "autoscaling/v2beta1" | "autoscaling/v2beta2"))
                .map(|v| match v {
                    "scheduling.k8s.io/v1alpha1" => "scheduling.k8s.io/v1alpha2",
                    v => v,
                })
                .collect(),
        }
    }
}

/// `DefaultVersionSet` printed by helm v4.1.4 (client-go v0.35.1): v3.18's
/// without `networking.k8s.io/v1alpha1`, with `resource.k8s.io/v1` and
/// `storagemigration.k8s.io/v1beta1` for `v1alpha1`.
fn v4_1_4() -> Vec<&'static str> {
    HelmLine::V3_18
        .default_api_versions()
        .into_iter()
        .filter(|v| *v != "networking.k8s.io/v1alpha1")
        .flat_map(|v| match v {
            "resource.k8s.io/v1beta2" => vec!["resource.k8s.io/v1", "resource.k8s.io/v1beta2"],
            "storagemigration.k8s.io/v1alpha1" => vec!["storagemigration.k8s.io/v1beta1"],
            v => vec![v],
        })
        .collect()
}

/// `version.BuildInfo` fields (`internal/version/version.go`).
#[derive(Debug, Clone, Copy)]
pub(super) struct BuildInfo {
    pub(super) version: &'static str,
    pub(super) git_commit: &'static str,
    /// `None`: not known, refused where read.
    pub(super) go_version: Option<&'static str>,
    /// Helm 4's `KubeClientVersion` (no such field before).
    pub(super) kube_client_version: Option<&'static str>,
}

/// `chartutil.DefaultVersionSet` of helm v3.17.1: the group/versions of
/// client-go v0.32's scheme with the apiextensions ones, in its order.
pub(super) const DEFAULT_API_VERSIONS_3_17: &[&str] = &[
    "v1",
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1alpha1",
    "admissionregistration.k8s.io/v1beta1",
    "internal.apiserver.k8s.io/v1alpha1",
    "apps/v1",
    "apps/v1beta1",
    "apps/v1beta2",
    "authentication.k8s.io/v1",
    "authentication.k8s.io/v1alpha1",
    "authentication.k8s.io/v1beta1",
    "authorization.k8s.io/v1",
    "authorization.k8s.io/v1beta1",
    "autoscaling/v1",
    "autoscaling/v2",
    "autoscaling/v2beta1",
    "autoscaling/v2beta2",
    "batch/v1",
    "batch/v1beta1",
    "certificates.k8s.io/v1",
    "certificates.k8s.io/v1beta1",
    "certificates.k8s.io/v1alpha1",
    "coordination.k8s.io/v1alpha2",
    "coordination.k8s.io/v1beta1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "discovery.k8s.io/v1beta1",
    "events.k8s.io/v1",
    "events.k8s.io/v1beta1",
    "extensions/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1",
    "flowcontrol.apiserver.k8s.io/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1beta2",
    "flowcontrol.apiserver.k8s.io/v1beta3",
    "networking.k8s.io/v1",
    "networking.k8s.io/v1alpha1",
    "networking.k8s.io/v1beta1",
    "node.k8s.io/v1",
    "node.k8s.io/v1alpha1",
    "node.k8s.io/v1beta1",
    "policy/v1",
    "policy/v1beta1",
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1beta1",
    "rbac.authorization.k8s.io/v1alpha1",
    "resource.k8s.io/v1beta1",
    "resource.k8s.io/v1alpha3",
    "scheduling.k8s.io/v1alpha1",
    "scheduling.k8s.io/v1beta1",
    "scheduling.k8s.io/v1",
    "storage.k8s.io/v1beta1",
    "storage.k8s.io/v1",
    "storage.k8s.io/v1alpha1",
    "storagemigration.k8s.io/v1alpha1",
    "apiextensions.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1",
];

/// `chartutil.ParseKubeVersion` of the release: v3.17/v3.18 parse with
/// Masterminds/semver and print `"v" + String()` (`1.29` → `v1.29.0`, build
/// metadata kept); v3.19 and v4 parse with k8s.io/apimachinery
/// `version.ParseGeneric` (`pkg/chartutil/capabilities.go` at v3.19.4,
/// `pkg/chart/common/capabilities.go` at v4.2.1), which keeps as many
/// numeric components as given and drops everything after them (`1.29` →
/// `v1.29`, `v1.28+` → `v1.28`, `1.30.7-gke.1000` → `v1.30.7`; helm v4.1.4
/// prints `v1.29`, `v1.31`, `v1.26` for the corpus's `1.29`, `1.31`,
/// `1.26`). Helm 4 also keeps the input, prefixed with `v`, as `Version`.
///
/// Returns (`Version`, the normalized version used for constraints and
/// `String()`).
pub(super) fn parse_kube_version(line: HelmLine, v: &str) -> Result<(String, String), String> {
    if line < HelmLine::V3_19 {
        let s = format!("v{}", gotemplate::go::semver::Version::parse(v)?);
        return Ok((s.clone(), s));
    }
    let normalized = format!("v{}", parse_generic(v)?);
    let version = if line >= HelmLine::V4 {
        if v.starts_with('v') {
            v.to_string()
        } else {
            format!("v{v}")
        }
    } else {
        normalized.clone()
    };
    Ok((version, normalized))
}

/// k8s.io/apimachinery `pkg/util/version` `ParseGeneric` (v0.34.2, v0.36.1:
/// `parse(str, false)`) and `String()`: the numeric components.
fn parse_generic(s: &str) -> Result<String, String> {
    // versionMatchRE `^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)*$`
    let t = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let t = t.strip_prefix('v').unwrap_or(t);
    let mut end = 0;
    let b = t.as_bytes();
    let mut components: Vec<&str> = Vec::new();
    loop {
        let start = end;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
        if end == start {
            // A component must have a digit; a dot with none after it ends
            // the numbers (the dot goes to the "extra" part).
            if components.is_empty() {
                return Err(format!("could not parse {} as version", go_quote(s)));
            }
            end = start - 1;
            break;
        }
        components.push(&t[start..end]);
        if end < b.len() && b[end] == b'.' {
            end += 1;
        } else {
            break;
        }
    }
    let _ = end;
    if components.len() < 2 {
        return Err(format!("illegal version string {}", go_quote(s)));
    }
    let mut out = Vec::new();
    for (i, comp) in components.iter().enumerate() {
        if i == 0 && comp.starts_with('0') && *comp != "0" {
            return Err(format!(
                "illegal zero-prefixed version component {} in {}",
                go_quote(comp),
                go_quote(s)
            ));
        }
        let n: u64 = comp.parse().map_err(|_| {
            format!(
                "illegal non-numeric version component {} in {}: strconv.ParseUint: parsing {}: value out of range",
                go_quote(comp),
                go_quote(s),
                go_quote(comp)
            )
        })?;
        out.push(n.to_string());
    }
    Ok(out.join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argocd_releases_map_to_the_helm_they_ship() {
        // ARGOCD-HELM.md §1 (`hack/tool-versions.sh`).
        assert_eq!(HelmLine::for_argocd((2, 14)), HelmLine::V3_17);
        assert_eq!(HelmLine::for_argocd((3, 0)), HelmLine::V3_17);
        assert_eq!(HelmLine::for_argocd((3, 1)), HelmLine::V3_18);
        assert_eq!(HelmLine::for_argocd((3, 2)), HelmLine::V3_18);
        assert_eq!(HelmLine::for_argocd((3, 3)), HelmLine::V3_19);
        assert_eq!(HelmLine::for_argocd((3, 4)), HelmLine::V3_19);
        assert_eq!(HelmLine::for_argocd((3, 5)), HelmLine::V4);
        assert_eq!(HelmLine::for_argocd((3, 10)), HelmLine::V4);
    }

    #[test]
    fn kube_versions_parse_as_each_release_parses_them() {
        let p = |l, v| parse_kube_version(l, v);
        // v3.17.1 (corpus), Masterminds/semver.
        assert_eq!(
            p(HelmLine::V3_17, "1.29"),
            Ok(("v1.29.0".into(), "v1.29.0".into()))
        );
        assert_eq!(
            p(HelmLine::V3_18, "1.29.3+k3s1"),
            Ok(("v1.29.3+k3s1".into(), "v1.29.3+k3s1".into()))
        );
        // helm v4.1.4 printed `v1.29` for `--kube-version 1.29`; v3.19.4's
        // TestParseKubeVersionSuffix: `v1.28+` → `v1.28`.
        assert_eq!(
            p(HelmLine::V3_19, "1.29"),
            Ok(("v1.29".into(), "v1.29".into()))
        );
        assert_eq!(
            p(HelmLine::V3_19, "v1.28+"),
            Ok(("v1.28".into(), "v1.28".into()))
        );
        assert_eq!(
            p(HelmLine::V3_19, "1.30.7-gke.1000"),
            Ok(("v1.30.7".into(), "v1.30.7".into()))
        );
        // v4: the input kept as `Version` (`v1.33.4-gke.1245000` in the
        // source's comment), the normalized one for constraints.
        assert_eq!(
            p(HelmLine::V4, "1.30.7-gke.1000"),
            Ok(("v1.30.7-gke.1000".into(), "v1.30.7".into()))
        );
        assert_eq!(
            p(HelmLine::V4, "v1.29"),
            Ok(("v1.29".into(), "v1.29".into()))
        );
        assert_eq!(
            p(HelmLine::V3_19, "1"),
            Err("illegal version string \"1\"".into())
        );
        assert_eq!(
            p(HelmLine::V3_19, "x1.2"),
            Err("could not parse \"x1.2\" as version".into())
        );
        assert_eq!(
            p(HelmLine::V3_19, "1.2.x"),
            Ok(("v1.2".into(), "v1.2".into()))
        );
    }

    #[test]
    fn default_api_versions_follow_client_go() {
        let l17 = HelmLine::V3_17.default_api_versions();
        let l18 = HelmLine::V3_18.default_api_versions();
        let l19 = HelmLine::V3_19.default_api_versions();
        assert_eq!(l17.len(), 56);
        // v3.18.0 printed resource.k8s.io v1beta2 before v1beta1.
        let i = l18
            .iter()
            .position(|v| *v == "resource.k8s.io/v1beta2")
            .unwrap();
        assert_eq!(l18[i + 1], "resource.k8s.io/v1beta1");
        assert!(
            l19.contains(&"resource.k8s.io/v1") && !l19.contains(&"networking.k8s.io/v1alpha1")
        );
        assert!(l19.contains(&"storagemigration.k8s.io/v1alpha1"));
        // `{{ range .Capabilities.APIVersions }}` printed by helm v4.1.4
        // (client-go v0.35.1).
        let printed_by_4_1_4 = "v1 admissionregistration.k8s.io/v1 admissionregistration.k8s.io/v1alpha1 admissionregistration.k8s.io/v1beta1 internal.apiserver.k8s.io/v1alpha1 apps/v1 apps/v1beta1 apps/v1beta2 authentication.k8s.io/v1 authentication.k8s.io/v1alpha1 authentication.k8s.io/v1beta1 authorization.k8s.io/v1 authorization.k8s.io/v1beta1 autoscaling/v1 autoscaling/v2 autoscaling/v2beta1 autoscaling/v2beta2 batch/v1 batch/v1beta1 certificates.k8s.io/v1 certificates.k8s.io/v1beta1 certificates.k8s.io/v1alpha1 coordination.k8s.io/v1alpha2 coordination.k8s.io/v1beta1 coordination.k8s.io/v1 discovery.k8s.io/v1 discovery.k8s.io/v1beta1 events.k8s.io/v1 events.k8s.io/v1beta1 extensions/v1beta1 flowcontrol.apiserver.k8s.io/v1 flowcontrol.apiserver.k8s.io/v1beta1 flowcontrol.apiserver.k8s.io/v1beta2 flowcontrol.apiserver.k8s.io/v1beta3 networking.k8s.io/v1 networking.k8s.io/v1beta1 node.k8s.io/v1 node.k8s.io/v1alpha1 node.k8s.io/v1beta1 policy/v1 policy/v1beta1 rbac.authorization.k8s.io/v1 rbac.authorization.k8s.io/v1beta1 rbac.authorization.k8s.io/v1alpha1 resource.k8s.io/v1 resource.k8s.io/v1beta2 resource.k8s.io/v1beta1 resource.k8s.io/v1alpha3 scheduling.k8s.io/v1alpha1 scheduling.k8s.io/v1beta1 scheduling.k8s.io/v1 storage.k8s.io/v1beta1 storage.k8s.io/v1 storage.k8s.io/v1alpha1 storagemigration.k8s.io/v1beta1 apiextensions.k8s.io/v1beta1 apiextensions.k8s.io/v1";
        assert_eq!(v4_1_4().join(" "), printed_by_4_1_4);
        // helm v4.2.1: client-go v0.36.1 `kubernetes/scheme/register.go`
        // `localSchemeBuilder` (no autoscaling v2beta1/v2beta2; scheduling
        // v1alpha2, beta1, v1), `v1` first, apiextensions last.
        let v4_2_1 = "v1 admissionregistration.k8s.io/v1 admissionregistration.k8s.io/v1alpha1 admissionregistration.k8s.io/v1beta1 internal.apiserver.k8s.io/v1alpha1 apps/v1 apps/v1beta1 apps/v1beta2 authentication.k8s.io/v1 authentication.k8s.io/v1alpha1 authentication.k8s.io/v1beta1 authorization.k8s.io/v1 authorization.k8s.io/v1beta1 autoscaling/v1 autoscaling/v2 batch/v1 batch/v1beta1 certificates.k8s.io/v1 certificates.k8s.io/v1beta1 certificates.k8s.io/v1alpha1 coordination.k8s.io/v1alpha2 coordination.k8s.io/v1beta1 coordination.k8s.io/v1 discovery.k8s.io/v1 discovery.k8s.io/v1beta1 events.k8s.io/v1 events.k8s.io/v1beta1 extensions/v1beta1 flowcontrol.apiserver.k8s.io/v1 flowcontrol.apiserver.k8s.io/v1beta1 flowcontrol.apiserver.k8s.io/v1beta2 flowcontrol.apiserver.k8s.io/v1beta3 networking.k8s.io/v1 networking.k8s.io/v1beta1 node.k8s.io/v1 node.k8s.io/v1alpha1 node.k8s.io/v1beta1 policy/v1 policy/v1beta1 rbac.authorization.k8s.io/v1 rbac.authorization.k8s.io/v1beta1 rbac.authorization.k8s.io/v1alpha1 resource.k8s.io/v1 resource.k8s.io/v1beta2 resource.k8s.io/v1beta1 resource.k8s.io/v1alpha3 scheduling.k8s.io/v1alpha2 scheduling.k8s.io/v1beta1 scheduling.k8s.io/v1 storage.k8s.io/v1beta1 storage.k8s.io/v1 storage.k8s.io/v1alpha1 storagemigration.k8s.io/v1beta1 apiextensions.k8s.io/v1beta1 apiextensions.k8s.io/v1";
        assert_eq!(HelmLine::V4.default_api_versions().join(" "), v4_2_1);
    }
}
