//! Helm's objects with Go methods, as template host objects:
//! `.Capabilities` (`chartutil.Capabilities`: `KubeVersion`, `APIVersions`
//! with `Has`, `HelmVersion`) and `.Files` (`engine.files`: `Get`,
//! `Lines`).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::gotemplate::{Host, HostObject, V};

/// `chartutil.DefaultVersionSet` of helm v3.17.1: the group/versions of
/// client-go v0.32's scheme with the apiextensions ones, in its order.
const DEFAULT_API_VERSIONS: &[&str] = &[
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

/// The helm version `.Capabilities.HelmVersion.Version` reports.
const HELM_VERSION: &str = "v3.17.1";

fn host(h: impl HostObject + 'static) -> V {
    V::Host(Host(Arc::new(h)))
}

/// `chartutil.KubeVersion`.
#[derive(Debug)]
struct KubeVersion {
    version: String,
    major: String,
    minor: String,
}

impl HostObject for KubeVersion {
    fn type_name(&self) -> &'static str {
        "chartutil.KubeVersion"
    }
    fn field(&self, name: &str) -> Option<V> {
        match name {
            "Version" | "GitVersion" | "String" => Some(V::Str(self.version.clone())),
            "Major" => Some(V::Str(self.major.clone())),
            "Minor" => Some(V::Str(self.minor.clone())),
            _ => None,
        }
    }
    fn call(&self, _: &str, _: &[V]) -> Option<Result<V, String>> {
        None
    }
    fn value(&self) -> V {
        V::Str(self.version.clone())
    }
}

/// `chartutil.VersionSet`.
#[derive(Debug)]
struct VersionSet(Vec<String>);

impl HostObject for VersionSet {
    fn type_name(&self) -> &'static str {
        "chartutil.VersionSet"
    }
    fn field(&self, _: &str) -> Option<V> {
        None
    }
    fn call(&self, name: &str, args: &[V]) -> Option<Result<V, String>> {
        match (name, args) {
            ("Has", [V::Str(a)]) => Some(Ok(V::Bool(self.0.contains(a)))),
            ("Has", [other]) => Some(Err(format!(
                "wrong type for value; expected string; got {}",
                other.type_name()
            ))),
            ("Has", _) => Some(Err(format!(
                "wrong number of args for Has: want 1 got {}",
                args.len()
            ))),
            _ => None,
        }
    }
    fn value(&self) -> V {
        V::List(self.0.iter().map(|s| V::Str(s.clone())).collect())
    }
}

/// `helmversion.BuildInfo` as far as it is known offline: its `Version`.
#[derive(Debug)]
struct HelmVersion;

impl HostObject for HelmVersion {
    fn type_name(&self) -> &'static str {
        "version.BuildInfo"
    }
    fn field(&self, name: &str) -> Option<V> {
        (name == "Version").then(|| V::Str(HELM_VERSION.to_string()))
    }
    fn call(&self, _: &str, _: &[V]) -> Option<Result<V, String>> {
        None
    }
    fn value(&self) -> V {
        V::Map([("Version".to_string(), V::Str(HELM_VERSION.to_string()))].into())
    }
}

/// `chartutil.Capabilities`.
#[derive(Debug)]
struct Capabilities {
    kube: V,
    api: V,
    helm: V,
}

impl HostObject for Capabilities {
    fn type_name(&self) -> &'static str {
        "chartutil.Capabilities"
    }
    fn field(&self, name: &str) -> Option<V> {
        match name {
            "KubeVersion" => Some(self.kube.clone()),
            "APIVersions" => Some(self.api.clone()),
            "HelmVersion" => Some(self.helm.clone()),
            _ => None,
        }
    }
    fn call(&self, _: &str, _: &[V]) -> Option<Result<V, String>> {
        None
    }
    fn value(&self) -> V {
        V::Map(
            [
                ("KubeVersion".to_string(), self.kube.clone()),
                ("APIVersions".to_string(), self.api.clone()),
                ("HelmVersion".to_string(), self.helm.clone()),
            ]
            .into(),
        )
    }
}

/// `.Capabilities` of `helm template`: the Kubernetes version given (as
/// `ParseKubeVersion` made it) and helm's API versions with `--api-versions`
/// appended (`pkg/action/install.go` `RunWithContext`, client-only).
pub(super) fn capabilities(kube_version: &str, extra_api_versions: &[String]) -> V {
    let mut parts = kube_version.trim_start_matches('v').split('.');
    let major = parts.next().unwrap_or_default().to_string();
    let minor = parts.next().unwrap_or_default().to_string();
    let mut api: Vec<String> = DEFAULT_API_VERSIONS
        .iter()
        .map(|s| (*s).to_string())
        .collect();
    api.extend(extra_api_versions.iter().cloned());
    host(Capabilities {
        kube: host(KubeVersion {
            version: kube_version.to_string(),
            major,
            minor,
        }),
        api: host(VersionSet(api)),
        helm: host(HelmVersion),
    })
}

/// `engine.files`: a chart's files by path.
#[derive(Debug)]
struct Files(BTreeMap<String, String>);

impl HostObject for Files {
    fn type_name(&self) -> &'static str {
        "engine.files"
    }
    fn field(&self, _: &str) -> Option<V> {
        None
    }
    fn call(&self, name: &str, args: &[V]) -> Option<Result<V, String>> {
        let arg = match args {
            [V::Str(a)] => a.clone(),
            [other] => {
                return Some(Err(format!(
                    "wrong type for value; expected string; got {}",
                    other.type_name()
                )))
            }
            _ => {
                return Some(Err(format!(
                    "wrong number of args for {name}: want 1 got {}",
                    args.len()
                )))
            }
        };
        match name {
            // `files.Get`: the content, or "" for a missing file.
            "Get" => Some(Ok(V::Str(self.0.get(&arg).cloned().unwrap_or_default()))),
            // `files.Lines`: split on "\n", one final newline dropped.
            "Lines" => {
                let lines = match self.0.get(&arg) {
                    None => Vec::new(),
                    Some(s) if s.is_empty() => vec![V::Str(String::new())],
                    Some(s) => s
                        .strip_suffix('\n')
                        .unwrap_or(s)
                        .split('\n')
                        .map(|l| V::Str(l.to_string()))
                        .collect(),
                };
                Some(Ok(V::List(lines)))
            }
            _ => None,
        }
    }
    fn value(&self) -> V {
        V::Map(
            self.0
                .iter()
                .map(|(k, v)| (k.clone(), V::Str(v.clone())))
                .collect(),
        )
    }
    fn is_map(&self) -> bool {
        true
    }
}

/// `.Files` of a chart.
pub(super) fn files(files: &[super::chart::ChartFile]) -> V {
    host(Files(
        files
            .iter()
            .map(|f| {
                (
                    f.name.clone(),
                    String::from_utf8_lossy(&f.data).into_owned(),
                )
            })
            .collect(),
    ))
}
