//! Resource tracking: which live objects Argo CD counts as an app's own, and
//! so which ones a sync of that app may prune.
//!
//! Argo CD reads the method from `argocd-cm` (`application.resourceTrackingMethod`,
//! AC `util/settings/settings.go` `GetTrackingMethod`: `annotation` when unset,
//! since 3.0; `label` before). The repo-server stamps every rendered object
//! with the app's tracking metadata except CRDs (AC `reposerver/repository/repository.go`
//! `GenerateManifests`: `!kube.IsCRD(target)`), and the controller stamps any
//! object whose namespace it had to set or clear (AC `controller/state.go`
//! `NormalizeTargetObjects`). So an ordinary object is always tracked by the
//! app that renders it, whatever tracking metadata its manifest carries,
//! while a CRD keeps the metadata written in git: only a CRD whose metadata
//! names this app is this app's, and only that one is pruned.

use goyaml::json::Pointer as _;
use serde_json::Value;

use crate::config::Config;
use crate::manifest::{Manifest, ANN_TRACKING_ID, LABEL_INSTANCE};

use super::AppSpec;
use crate::manifest::TrackingMethod;

/// What an `argocd-cm` ConfigMap in the repository says about tracking and
/// Kustomize builds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LearnedTracking {
    /// `application.resourceTrackingMethod`, as written.
    pub(crate) method: Option<String>,
    /// `application.instanceLabelKey`.
    pub(crate) label_key: Option<String>,
    /// `kustomize.buildOptions` (AC `settings.go` `kustomizeBuildOptionsKey`).
    pub(crate) kustomize_build_options: Option<String>,
    /// `globalProjects` (AC `settings.go` `globalProjectsKey`), as written:
    /// YAML listing `projectName` and `labelSelector`.
    pub(crate) global_projects: Option<String>,
    /// `resource.exclusions` (AC `settings.go` `resourceExclusionsKey`), as
    /// written: YAML listing `apiGroups`, `kinds` and `clusters`.
    pub(crate) resource_exclusions: Option<String>,
    /// `resource.inclusions` (AC `settings.go` `resourceInclusionsKey`).
    pub(crate) resource_inclusions: Option<String>,
    /// Where it was found.
    pub(crate) file: Option<String>,
}

impl LearnedTracking {
    /// Reads an object if it is Argo CD's `argocd-cm` ConfigMap, or an
    /// `ArgoCD` resource of the Argo CD operator (OpenShift GitOps), which
    /// writes `argocd-cm` from it.
    #[must_use]
    pub(crate) fn from_object(v: &Value, file: Option<&str>) -> Option<LearnedTracking> {
        if let Some(t) = Self::from_operator(v, file) {
            return Some(t);
        }
        let is_cm = v.get("kind").and_then(Value::as_str) == Some("ConfigMap")
            && v.get("apiVersion").and_then(Value::as_str) == Some("v1")
            && v.at("/metadata/name").and_then(Value::as_str) == Some("argocd-cm");
        if !is_cm {
            return None;
        }
        let data = |k: &str| {
            v.get("data")
                .and_then(|d| d.get(k))
                .and_then(Value::as_str)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        Some(LearnedTracking {
            method: data("application.resourceTrackingMethod"),
            label_key: data("application.instanceLabelKey"),
            kustomize_build_options: data("kustomize.buildOptions"),
            global_projects: data("globalProjects"),
            resource_exclusions: data("resource.exclusions"),
            resource_inclusions: data("resource.inclusions"),
            file: file.map(str::to_string),
        })
    }
}

impl LearnedTracking {
    /// argocd-operator `controllers/argocd/configmap.go`
    /// `reconcileArgoConfigMap`: `application.resourceTrackingMethod` is
    /// always written (`getResourceTrackingMethod`: the spec's value, else
    /// or when invalid `annotation`), `kustomize.buildOptions` and
    /// `application.instanceLabelKey` from the spec, and every
    /// `spec.extraConfig` entry last, over them.
    fn from_operator(v: &Value, file: Option<&str>) -> Option<LearnedTracking> {
        let api = v.get("apiVersion").and_then(Value::as_str)?;
        if v.get("kind").and_then(Value::as_str) != Some("ArgoCD")
            || !api.starts_with("argoproj.io/")
        {
            return None;
        }
        let spec = |k: &str| {
            v.at(&format!("/spec/{k}"))
                .and_then(Value::as_str)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let extra = |k: &str| {
            v.at("/spec/extraConfig")
                .and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let method = spec("resourceTrackingMethod")
            .filter(|m| TrackingMethod::NAMES.contains(&m.as_str()))
            .unwrap_or_else(|| "annotation".to_string());
        Some(LearnedTracking {
            method: Some(extra("application.resourceTrackingMethod").unwrap_or(method)),
            label_key: extra("application.instanceLabelKey")
                .or_else(|| spec("applicationInstanceLabelKey")),
            kustomize_build_options: extra("kustomize.buildOptions")
                .or_else(|| spec("kustomizeBuildOptions")),
            global_projects: extra("globalProjects"),
            resource_exclusions: extra("resource.exclusions"),
            resource_inclusions: extra("resource.inclusions"),
            file: file.map(str::to_string),
        })
    }
}

/// The tracking settings in effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tracking {
    /// The method.
    pub(crate) method: TrackingMethod,
    /// The instance label key (`application.instanceLabelKey`).
    pub(crate) label_key: String,
    /// Where the method was learned, for messages.
    pub(crate) source: String,
}

impl Default for Tracking {
    fn default() -> Self {
        Tracking {
            method: TrackingMethod::Annotation,
            label_key: LABEL_INSTANCE.to_string(),
            source: "the default".into(),
        }
    }
}

/// The namespace Argo CD runs in, as the tests and docs assume (`argocd`).
const CONTROLLER_NAMESPACE: &str = "argocd";

impl Tracking {
    /// `trackingMethod:` in the configuration wins, then `argocd-cm` in the
    /// repository, then the default of the configured Argo CD version.
    #[must_use]
    pub(crate) fn resolve(config: &Config, learned: Option<&LearnedTracking>) -> Tracking {
        let label_key = learned
            .and_then(|l| l.label_key.clone())
            .unwrap_or_else(|| LABEL_INSTANCE.to_string());
        if let Some(m) = config.tracking_method {
            return Tracking {
                method: m,
                label_key,
                source: format!("`trackingMethod: {}` in .gitops-lint.yaml", m.as_str()),
            };
        }
        if let Some((m, l)) = learned.and_then(|l| {
            l.method
                .as_deref()
                .and_then(TrackingMethod::parse)
                .map(|m| (m, l))
        }) {
            return Tracking {
                method: m,
                label_key,
                source: format!(
                    "`application.resourceTrackingMethod: {}` in {}",
                    m.as_str(),
                    l.file.as_deref().unwrap_or("argocd-cm")
                ),
            };
        }
        // AC 3.0 made annotation tracking the default (settings.go `GetTrackingMethod`).
        if config.argocd_at_least(3, 0) {
            Tracking {
                label_key,
                ..Tracking::default()
            }
        } else {
            Tracking {
                method: TrackingMethod::Label,
                label_key,
                source: "the default before Argo CD 3.0".into(),
            }
        }
    }

    /// The app name Argo CD writes into tracking metadata (AC `types.go`
    /// `Application.InstanceName`): `<namespace>_<name>` for an app outside
    /// the controller's namespace.
    #[must_use]
    pub(crate) fn instance_name(app: &AppSpec) -> String {
        if app.namespace.is_empty() || app.namespace == CONTROLLER_NAMESPACE {
            app.name.clone()
        } else {
            format!("{}_{}", app.namespace, app.name)
        }
    }

    /// The app an object's own metadata names (AC `resource_tracking.go`
    /// `GetAppName`): the instance label under `label`, the tracking-id
    /// annotation's app otherwise (a malformed annotation names none).
    #[must_use]
    pub(crate) fn app_named_by<'a>(&self, m: &'a Manifest) -> Option<&'a str> {
        match self.method {
            TrackingMethod::Label => m.label(&self.label_key),
            TrackingMethod::Annotation | TrackingMethod::AnnotationAndLabel => {
                parse_tracking_id(m.annotation(ANN_TRACKING_ID)?).map(|t| t.app)
            }
        }
    }

    /// Whether the live copy of `m`, applied by `app`, is tracked as `app`'s
    /// own, so that `app` prunes it once it is no longer rendered.
    #[must_use]
    pub(crate) fn owns(&self, m: &Manifest, app: &AppSpec) -> bool {
        if !kept_as_written(m) {
            return true;
        }
        let instance = Tracking::instance_name(app);
        if self.app_named_by(m) != Some(instance.as_str()) {
            return false;
        }
        match self.method {
            // Labels carry no object identity (AC state.go `isSelfReferencedObj`).
            TrackingMethod::Label => true,
            // The tracking id must name this very object, as a copied
            // annotation would not (AC state.go `isSelfReferencedObj`).
            TrackingMethod::Annotation | TrackingMethod::AnnotationAndLabel => m
                .annotation(ANN_TRACKING_ID)
                .and_then(parse_tracking_id)
                .is_some_and(|t| {
                    t.group == m.id.group
                        && t.kind == m.id.kind
                        && t.name == m.id.name
                        && (m.id.namespace.is_empty() || t.namespace == m.id.namespace)
                }),
        }
    }
}

/// Whether Argo CD applies the object with the tracking metadata of its
/// manifest rather than stamping the app's: a CRD, unless the controller had
/// to clear a stray `metadata.namespace` (which stamps it, AC state.go
/// `NormalizeTargetObjects`).
fn kept_as_written(m: &Manifest) -> bool {
    if !(m.id.kind == "CustomResourceDefinition" && m.id.group == "apiextensions.k8s.io") {
        return false;
    }
    let stray_namespace = m
        .value
        .at("/metadata/namespace")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    !stray_namespace
}

/// A parsed `argocd.argoproj.io/tracking-id`.
struct TrackingId<'a> {
    app: &'a str,
    group: &'a str,
    kind: &'a str,
    namespace: &'a str,
    name: &'a str,
}

/// `<app>:<group>/<kind>:<namespace>/<name>` (AC `resource_tracking.go`
/// `ParseAppInstanceValue`: split on the first two `:`, then each part on `/`
/// into exactly two).
fn parse_tracking_id(v: &str) -> Option<TrackingId<'_>> {
    let mut parts = v.splitn(3, ':');
    let (app, gk, nn) = (parts.next()?, parts.next()?, parts.next()?);
    let ((group, kind), (namespace, name)) = (split_two(gk)?, split_two(nn)?);
    Some(TrackingId {
        app,
        group,
        kind,
        namespace,
        name,
    })
}

/// `a/b` into exactly two parts.
fn split_two(s: &str) -> Option<(&str, &str)> {
    let mut it = s.split('/');
    let r = (it.next()?, it.next()?);
    it.next().is_none().then_some(r)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::manifest::{manifest_from_value, Origin, Scopes};

    fn crd(annotations: Value, labels: Value) -> Manifest {
        let v = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com", "annotations": annotations, "labels": labels}});
        manifest_from_value(v, Origin::default(), "ns", &Scopes::default()).expect("object")
    }

    fn spec(name: &str, namespace: &str) -> AppSpec {
        AppSpec::parse(
            &json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": namespace}}),
        )
        .expect("app")
    }

    fn tracking(method: TrackingMethod) -> Tracking {
        Tracking {
            method,
            ..Tracking::default()
        }
    }

    #[test]
    fn the_operator_argocd_resource_is_read_as_the_argocd_cm_it_writes() {
        let cr = json!({"apiVersion": "argoproj.io/v1beta1", "kind": "ArgoCD",
            "metadata": {"name": "openshift-gitops", "namespace": "openshift-gitops"},
            "spec": {"kustomizeBuildOptions": "--enable-helm"}});
        let t = LearnedTracking::from_object(&cr, Some("gitops.yaml")).expect("read");
        assert_eq!(t.kustomize_build_options.as_deref(), Some("--enable-helm"));
        // The operator always writes a method: annotation unless set.
        assert_eq!(t.method.as_deref(), Some("annotation"));
        let labelled = json!({"apiVersion": "argoproj.io/v1beta1", "kind": "ArgoCD",
            "metadata": {"name": "a"},
            "spec": {"resourceTrackingMethod": "label",
                     "extraConfig": {"kustomize.buildOptions": "--load-restrictor LoadRestrictionsNone"}}});
        let t = LearnedTracking::from_object(&labelled, None).expect("read");
        assert_eq!(t.method.as_deref(), Some("label"));
        assert_eq!(
            t.kustomize_build_options.as_deref(),
            Some("--load-restrictor LoadRestrictionsNone")
        );
        let other =
            json!({"apiVersion": "example.com/v1", "kind": "ArgoCD", "metadata": {"name": "a"}});
        assert!(LearnedTracking::from_object(&other, None).is_none());
    }

    #[test]
    fn a_crd_is_owned_only_by_the_app_its_metadata_names() {
        let own = crd(
            json!({"argocd.argoproj.io/tracking-id": "crds:apiextensions.k8s.io/CustomResourceDefinition:/widgets.example.com"}),
            json!({"app.kubernetes.io/instance": "other"}),
        );
        let a = tracking(TrackingMethod::Annotation);
        assert!(a.owns(&own, &spec("crds", "argocd")));
        assert!(!a.owns(&own, &spec("other", "argocd")));
        assert!(
            !a.owns(&own, &spec("crds", "team")),
            "outside the controller namespace the instance is team_crds"
        );
        let l = tracking(TrackingMethod::Label);
        assert!(l.owns(&own, &spec("other", "argocd")));
        assert!(!l.owns(&own, &spec("crds", "argocd")));
    }

    #[test]
    fn a_copied_tracking_id_names_another_object() {
        let copied = crd(
            json!({"argocd.argoproj.io/tracking-id": "crds:apiextensions.k8s.io/CustomResourceDefinition:/gadgets.example.com"}),
            json!({}),
        );
        assert!(!tracking(TrackingMethod::Annotation).owns(&copied, &spec("crds", "argocd")));
        let malformed = crd(
            json!({"argocd.argoproj.io/tracking-id": "crds:CustomResourceDefinition:/widgets.example.com"}),
            json!({}),
        );
        assert!(
            !tracking(TrackingMethod::AnnotationAndLabel).owns(&malformed, &spec("crds", "argocd"))
        );
    }

    #[test]
    fn ordinary_objects_are_stamped_by_the_app_that_renders_them() {
        let v = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c",
            "annotations": {"argocd.argoproj.io/tracking-id": "elsewhere:/ConfigMap:ns/c"}}});
        let m =
            manifest_from_value(v, Origin::default(), "ns", &Scopes::default()).expect("object");
        assert!(tracking(TrackingMethod::Annotation).owns(&m, &spec("mine", "argocd")));
    }

    #[test]
    fn the_default_follows_the_argocd_version() {
        let c = Config::default();
        assert_eq!(
            Tracking::resolve(&c, None).method,
            TrackingMethod::Annotation
        );
        let old = Config {
            argocd_version: (2, 14),
            ..Config::default()
        };
        assert_eq!(Tracking::resolve(&old, None).method, TrackingMethod::Label);
        let learned = LearnedTracking {
            method: Some("annotation+label".into()),
            label_key: Some("example.com/app".into()),
            file: Some("argocd/cm.yaml".into()),
            kustomize_build_options: None,
            global_projects: None,
            resource_exclusions: None,
            resource_inclusions: None,
        };
        let t = Tracking::resolve(&old, Some(&learned));
        assert_eq!(t.method, TrackingMethod::AnnotationAndLabel);
        assert_eq!(t.label_key, "example.com/app");
        let configured = Config {
            tracking_method: Some(TrackingMethod::Label),
            ..Config::default()
        };
        assert_eq!(
            Tracking::resolve(&configured, Some(&learned)).method,
            TrackingMethod::Label
        );
    }
}
