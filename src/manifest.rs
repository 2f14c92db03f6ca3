//! The resource model: identity, where a resource came from, and typed views
//! of the Argo CD annotations that decide pruning, hooks and ordering.
//!
//! Knows nothing of git or of how resources were rendered.

use goyaml::json::Pointer as _;
use goyaml::json::{LazyValue, View};
use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

/// `argocd.argoproj.io/sync-options`
pub(crate) const ANN_SYNC_OPTIONS: &str = "argocd.argoproj.io/sync-options";
/// `argocd.argoproj.io/sync-wave`
pub(crate) const ANN_SYNC_WAVE: &str = "argocd.argoproj.io/sync-wave";
/// `argocd.argoproj.io/hook`
pub(crate) const ANN_HOOK: &str = "argocd.argoproj.io/hook";
/// `argocd.argoproj.io/hook-delete-policy`
pub(crate) const ANN_HOOK_DELETE_POLICY: &str = "argocd.argoproj.io/hook-delete-policy";
/// `helm.sh/hook`
pub(crate) const ANN_HELM_HOOK: &str = "helm.sh/hook";
/// `helm.sh/hook-weight`
pub(crate) const ANN_HELM_HOOK_WEIGHT: &str = "helm.sh/hook-weight";
/// `helm.sh/hook-delete-policy`
pub(crate) const ANN_HELM_HOOK_DELETE_POLICY: &str = "helm.sh/hook-delete-policy";
/// `helm.sh/resource-policy`
pub(crate) const ANN_HELM_RESOURCE_POLICY: &str = "helm.sh/resource-policy";
/// `argocd.argoproj.io/tracking-id`
pub(crate) const ANN_TRACKING_ID: &str = "argocd.argoproj.io/tracking-id";
/// `app.kubernetes.io/instance` (label tracking)
pub(crate) const LABEL_INSTANCE: &str = "app.kubernetes.io/instance";

/// How Argo CD identifies a resource: the version is not part of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub(crate) struct ResourceId {
    /// API group (`""` for the core group).
    pub(crate) group: String,
    /// Kind.
    pub(crate) kind: String,
    /// Namespace (`""` for cluster-scoped resources).
    pub(crate) namespace: String,
    /// Name.
    pub(crate) name: String,
}

impl fmt::Display for ResourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{} {}", self.kind, self.name)
        } else {
            write!(f, "{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// Splits `apiVersion` into (group, version).
#[must_use]
pub(crate) fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

/// Where a rendered resource came from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub(crate) struct Origin {
    /// Repository-relative file, when the resource was read from one
    /// (generated resources have none).
    pub(crate) file: Option<String>,
    /// 1-based line of the document start in `file`.
    pub(crate) line: Option<u32>,
    /// Index of the document in `file` (for locating fields later).
    pub(crate) doc_index: Option<usize>,
}

/// One rendered resource.
#[derive(Debug, Clone)]
pub(crate) struct Manifest {
    /// Identity after namespace defaulting.
    pub(crate) id: ResourceId,
    /// The whole object.
    pub(crate) value: Arc<LazyValue>,
    /// Where it came from.
    pub(crate) origin: Origin,
    /// JSON pointers of the fields a chart fills with random values or the
    /// clock (`randAlphaNum`, `genCA`, `now`…): Helm draws them anew at
    /// every render, so they differ between any two renders and are left
    /// out of every comparison of revisions (see `render::generated`).
    pub(crate) generated: Arc<[String]>,
}

impl Manifest {
    /// The manifest of `value`, whose id is `id` ([`resource_id_of`]),
    /// sharing the value (the parse cache's, for a file read as it is).
    #[must_use]
    pub(crate) fn shared(id: ResourceId, value: Arc<LazyValue>, origin: Origin) -> Manifest {
        Manifest {
            id,
            value,
            origin,
            generated: Arc::from(Vec::new()),
        }
    }

    /// Whether `self` and `other` hold the same object apart from the
    /// fields generated in either.
    #[must_use]
    pub(crate) fn same_apart_from_generated(&self, other: &Manifest) -> bool {
        // One value blanked alike is equal to itself: an app-of-apps
        // rendered again shares its unchanged children's values with the
        // other revision's render (one parse per blob), thousands of them.
        if Arc::ptr_eq(&self.value, &other.value) {
            return true;
        }
        let (a, b) = without_generated(self, other);
        a == b
    }

    /// A string annotation.
    #[must_use]
    pub(crate) fn annotation(&self, key: &str) -> Option<&str> {
        annotation(&self.value, key)
    }

    /// A string label.
    #[must_use]
    pub(crate) fn label(&self, key: &str) -> Option<&str> {
        self.value
            .view()
            .get("metadata")?
            .get("labels")?
            .get(key)?
            .as_str()
    }

    /// The parsed `argocd.argoproj.io/sync-options`.
    #[must_use]
    pub(crate) fn sync_options(&self) -> SyncOptions {
        SyncOptions::parse(self.annotation(ANN_SYNC_OPTIONS).unwrap_or(""))
    }

    /// The hook types this resource declares (empty for a normal resource).
    #[must_use]
    pub(crate) fn hook(&self) -> HookSpec {
        HookSpec::of(&self.value)
    }

    /// The sync wave: `argocd.argoproj.io/sync-wave`, else the Helm hook
    /// weight, else 0 (values that are not integers are ignored, as `strconv.Atoi` fails).
    #[must_use]
    pub(crate) fn sync_wave(&self) -> i64 {
        sync_wave(&self.value)
    }

    /// Whether the object has a `metadata.generateName` and no name.
    #[must_use]
    pub(crate) fn uses_generate_name(&self) -> bool {
        self.value
            .at("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
            && self.value.at("/metadata/generateName").is_some()
    }

    /// Whether the object lists `ownerReferences` (never a prune candidate).
    #[must_use]
    pub(crate) fn has_owner_references(&self) -> bool {
        self.value
            .view()
            .get("metadata")
            .and_then(|m| m.get("ownerReferences"))
            .and_then(View::items)
            .is_some_and(|a| !a.is_empty())
    }
}

/// A key as a JSON pointer reference token (RFC 6901: `~` is `~0`, `/`
/// is `~1`).
pub(crate) fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// A string annotation of a Kubernetes object value.
#[must_use]
pub(crate) fn annotation<'a>(obj: impl Into<View<'a>>, key: &str) -> Option<&'a str> {
    annotations(obj.into())?.get(key)?.as_str()
}

/// `metadata.annotations`, looked up without a pointer to parse and
/// through a view, which decodes nothing: every resource of every app is
/// asked for several.
fn annotations(obj: View<'_>) -> Option<View<'_>> {
    obj.get("metadata")?.get("annotations")
}

/// See [`Manifest::sync_wave`].
#[must_use]
pub(crate) fn sync_wave<'a>(obj: impl Into<View<'a>>) -> i64 {
    let obj = obj.into();
    for key in [ANN_SYNC_WAVE, ANN_HELM_HOOK_WEIGHT] {
        if let Some(v) = annotation(obj, key) {
            if let Some(n) = parse_go_atoi(v) {
                return n;
            }
        }
    }
    0
}

/// Go's `strconv.Atoi`: optional sign, decimal digits, nothing else (no spaces).
///
/// `None` for anything `strconv.Atoi` rejects.
#[must_use]
pub(crate) fn parse_go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i64>().ok()
}

/// The parsed value of `argocd.argoproj.io/sync-options`: comma-separated,
/// each item trimmed, empty items dropped; matched exactly and case-sensitively
/// (GE `pkg/sync/resource/annotations.go`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SyncOptions {
    /// The items, in order, duplicates removed.
    pub(crate) items: Vec<String>,
}

impl SyncOptions {
    /// Parses an annotation value.
    #[must_use]
    pub(crate) fn parse(v: &str) -> SyncOptions {
        let mut items: Vec<String> = Vec::new();
        for it in v.split(',') {
            let it = it.trim();
            if !it.is_empty() && !items.iter().any(|x| x == it) {
                items.push(it.to_string());
            }
        }
        SyncOptions { items }
    }

    /// Whether the exact `Key=Value` item is present.
    #[must_use]
    pub(crate) fn has(&self, item: &str) -> bool {
        self.items.iter().any(|x| x == item)
    }

    /// The value after `Key=` (case-sensitive key).
    #[must_use]
    pub(crate) fn value(&self, key: &str) -> Option<&str> {
        self.items
            .iter()
            .find_map(|x| x.strip_prefix(key)?.strip_prefix('='))
    }

    /// `Prune=false`: the prune is skipped.
    #[must_use]
    pub(crate) fn prune_disabled(&self) -> bool {
        self.value("Prune") == Some("false")
    }

    /// `Delete=false`: kept on cascade deletion of the Application.
    #[must_use]
    pub(crate) fn delete_disabled(&self) -> bool {
        self.value("Delete") == Some("false")
    }
}

/// Argo CD hook phases (plus the controller-handled delete hooks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub(crate) enum HookType {
    /// Runs before the Sync phase.
    PreSync,
    /// Runs in the Sync phase.
    Sync,
    /// Runs after a successful sync.
    PostSync,
    /// Runs when the sync fails.
    SyncFail,
    /// Not applied at all.
    Skip,
    /// Runs before Application deletion (Argo CD 3.3+).
    PreDelete,
    /// Runs after Application deletion.
    PostDelete,
}

impl HookType {
    /// Parses an Argo CD hook name (exact, case-sensitive).
    #[must_use]
    pub(crate) fn parse(s: &str) -> Option<HookType> {
        Some(match s {
            "PreSync" => HookType::PreSync,
            "Sync" => HookType::Sync,
            "PostSync" => HookType::PostSync,
            "SyncFail" => HookType::SyncFail,
            "Skip" => HookType::Skip,
            "PreDelete" => HookType::PreDelete,
            "PostDelete" => HookType::PostDelete,
            _ => return None,
        })
    }

    /// The Argo CD equivalent of a Helm hook (GE `hook/helm/type.go`).
    #[must_use]
    pub(crate) fn from_helm(s: &str) -> Option<HookType> {
        Some(match s {
            "pre-install" | "pre-upgrade" => HookType::PreSync,
            "post-install" | "post-upgrade" => HookType::PostSync,
            "pre-delete" => HookType::PreDelete,
            "post-delete" => HookType::PostDelete,
            _ => return None,
        })
    }
}

/// What the hook annotations of one object say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HookSpec {
    /// Whether any hook annotation is present (a hook with no valid type is
    /// still a hook: ignored entirely, never applied, never pruned).
    pub(crate) is_hook: bool,
    /// Valid hook types.
    pub(crate) types: Vec<HookType>,
    /// Delete policies (Argo CD and Helm merged), as Argo CD names them.
    pub(crate) delete_policies: Vec<String>,
}

impl HookSpec {
    /// Reads the hook annotations of `obj` (GE `pkg/sync/hook`).
    #[must_use]
    pub(crate) fn of<'a>(obj: impl Into<View<'a>>) -> HookSpec {
        // Every resource of every app is asked: the annotations are found once.
        let annotations = annotations(obj.into());
        let annotation = |key: &str| annotations?.get(key)?.as_str();
        let argo = annotation(ANN_HOOK);
        let helm = annotation(ANN_HELM_HOOK);
        let mut spec = HookSpec {
            // gitops-engine `hook/helm/hook.go` `IsHook`: Helm marks CRDs
            // `crd-install` too, and they are no hooks.
            is_hook: argo.is_some() || helm.is_some_and(|v| v != "crd-install"),
            ..HookSpec::default()
        };
        let argo_types: Vec<HookType> = argo
            .map(|v| {
                v.split(',')
                    .filter_map(|t| HookType::parse(t.trim()))
                    .collect()
            })
            .unwrap_or_default();
        // A valid Argo CD hook annotation makes the Helm hook types ignored (per object).
        spec.types = if argo_types.is_empty() {
            helm.map(|v| {
                v.split(',')
                    .filter_map(|t| HookType::from_helm(t.trim()))
                    .collect()
            })
            .unwrap_or_default()
        } else {
            argo_types
        };
        spec.types.sort();
        spec.types.dedup();
        if let Some(v) = annotation(ANN_HOOK_DELETE_POLICY) {
            spec.delete_policies.extend(
                v.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty()),
            );
        }
        if let Some(v) = annotation(ANN_HELM_HOOK_DELETE_POLICY) {
            for p in v.split(',') {
                let mapped = match p.trim() {
                    "hook-succeeded" => "HookSucceeded",
                    "hook-failed" => "HookFailed",
                    "before-hook-creation" => "BeforeHookCreation",
                    _ => continue,
                };
                spec.delete_policies.push(mapped.to_string());
            }
        }
        spec.delete_policies.dedup();
        spec
    }

    /// `Skip` alone: never applied and never pruned.
    #[must_use]
    pub(crate) fn is_skip(&self) -> bool {
        self.types == [HookType::Skip]
    }
}

/// Kinds that are cluster-scoped in Kubernetes and the common add-ons
/// (Argo CD learns this from the API server; offline we need a table).
/// Only kinds whose scope is certain are listed: a namespaced kind listed
/// here would hide the prune a destination namespace change makes.
pub(crate) const CLUSTER_SCOPED_KINDS: &[(&str, &str)] = &[
    ("", "Namespace"),
    ("", "Node"),
    ("", "PersistentVolume"),
    ("", "ComponentStatus"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("storage.k8s.io", "VolumeAttributesClass"),
    ("scheduling.k8s.io", "PriorityClass"),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
    ),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "MutatingAdmissionPolicyBinding",
    ),
    ("networking.k8s.io", "IngressClass"),
    ("networking.k8s.io", "IPAddress"),
    ("networking.k8s.io", "ServiceCIDR"),
    ("node.k8s.io", "RuntimeClass"),
    ("policy", "PodSecurityPolicy"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
    ("certificates.k8s.io", "ClusterTrustBundle"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("resource.k8s.io", "DeviceClass"),
    ("resource.k8s.io", "ResourceSlice"),
    ("resource.k8s.io", "DeviceTaintRule"),
    ("internal.apiserver.k8s.io", "StorageVersion"),
    ("storagemigration.k8s.io", "StorageVersionMigration"),
    ("authentication.k8s.io", "TokenReview"),
    ("authentication.k8s.io", "SelfSubjectReview"),
    ("authorization.k8s.io", "SubjectAccessReview"),
    ("authorization.k8s.io", "SelfSubjectAccessReview"),
    ("authorization.k8s.io", "SelfSubjectRulesReview"),
    ("cert-manager.io", "ClusterIssuer"),
    ("argoproj.io", "ClusterWorkflowTemplate"),
    ("argoproj.io", "ClusterAnalysisTemplate"),
    ("snapshot.storage.k8s.io", "VolumeSnapshotClass"),
    ("snapshot.storage.k8s.io", "VolumeSnapshotContent"),
    ("gateway.networking.k8s.io", "GatewayClass"),
    ("external-secrets.io", "ClusterSecretStore"),
    ("external-secrets.io", "ClusterExternalSecret"),
    ("kyverno.io", "ClusterPolicy"),
    ("kyverno.io", "ClusterCleanupPolicy"),
    ("wgpolicyk8s.io", "ClusterPolicyReport"),
    ("constraints.gatekeeper.sh", "*"),
    ("templates.gatekeeper.sh", "ConstraintTemplate"),
    ("mutations.gatekeeper.sh", "Assign"),
    ("mutations.gatekeeper.sh", "AssignMetadata"),
    ("mutations.gatekeeper.sh", "ModifySet"),
    ("karpenter.sh", "NodePool"),
    ("karpenter.sh", "NodeClaim"),
    ("karpenter.k8s.aws", "EC2NodeClass"),
    ("keda.sh", "ClusterTriggerAuthentication"),
    ("cilium.io", "CiliumClusterwideNetworkPolicy"),
    ("cilium.io", "CiliumNode"),
    ("cilium.io", "CiliumIdentity"),
    ("crd.projectcalico.org", "GlobalNetworkPolicy"),
    ("crd.projectcalico.org", "GlobalNetworkSet"),
    ("crd.projectcalico.org", "IPPool"),
    ("projectcalico.org", "GlobalNetworkPolicy"),
    ("projectcalico.org", "GlobalNetworkSet"),
    ("projectcalico.org", "IPPool"),
    // Crossplane's package manager and composition machinery.
    ("pkg.crossplane.io", "Provider"),
    ("pkg.crossplane.io", "ProviderRevision"),
    ("pkg.crossplane.io", "Configuration"),
    ("pkg.crossplane.io", "ConfigurationRevision"),
    ("pkg.crossplane.io", "Function"),
    ("pkg.crossplane.io", "FunctionRevision"),
    ("pkg.crossplane.io", "DeploymentRuntimeConfig"),
    ("pkg.crossplane.io", "ControllerConfig"),
    ("apiextensions.crossplane.io", "CompositeResourceDefinition"),
    ("apiextensions.crossplane.io", "Composition"),
    ("apiextensions.crossplane.io", "CompositionRevision"),
    ("apiextensions.crossplane.io", "EnvironmentConfig"),
    ("aws.upbound.io", "ProviderConfig"),
    ("gcp.upbound.io", "ProviderConfig"),
    ("azure.upbound.io", "ProviderConfig"),
];

/// Crossplane managed resources of the Upbound providers: cluster-scoped in
/// the `<service>.<provider>.upbound.io` groups. Crossplane v2's namespaced
/// managed resources live in `.m.upbound.io` groups and are not matched.
const CROSSPLANE_PROVIDERS: &[&str] = &["aws", "gcp", "azure", "azuread"];

/// API groups served by Kubernetes itself: a kind of one of these that the
/// table does not list is namespaced.
const BUILTIN_GROUPS: &[&str] = &[
    "",
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "extensions",
    "networking.k8s.io",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "admissionregistration.k8s.io",
    "scheduling.k8s.io",
    "node.k8s.io",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "resource.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "internal.apiserver.k8s.io",
    "storagemigration.k8s.io",
];

/// Add-on API groups whose kinds are all namespaced but those the table
/// lists (Istio has no cluster-scoped kind).
const NAMESPACED_GROUPS: &[&str] = &[
    "argoproj.io",
    "monitoring.coreos.com",
    "networking.istio.io",
    "security.istio.io",
    "telemetry.istio.io",
    "extensions.istio.io",
    "cert-manager.io",
    "acme.cert-manager.io",
    "gateway.networking.k8s.io",
    "snapshot.storage.k8s.io",
    "bitnami.com",
    "velero.io",
    "source.toolkit.fluxcd.io",
    "kustomize.toolkit.fluxcd.io",
    "helm.toolkit.fluxcd.io",
    "notification.toolkit.fluxcd.io",
    "image.toolkit.fluxcd.io",
];

/// Whether a kind is cluster-scoped according to the built-in table.
#[must_use]
pub(crate) fn builtin_cluster_scoped(group: &str, kind: &str) -> bool {
    CLUSTER_SCOPED_KINDS
        .iter()
        .any(|(g, k)| *g == group && (*k == kind || *k == "*"))
        || group
            .strip_suffix(".upbound.io")
            .and_then(|g| g.rsplit_once('.'))
            .is_some_and(|(service, provider)| {
                !service.is_empty()
                    && service != "m"
                    && !service.ends_with(".m")
                    && CROSSPLANE_PROVIDERS.contains(&provider)
            })
}

/// What is known of a kind's scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Cluster-scoped: no namespace, whatever the manifest or the app says.
    Cluster,
    /// Namespaced.
    Namespaced,
    /// Neither a CRD in the repository, the configuration nor the built-in
    /// tables say: Argo CD would know from the API server.
    Unknown,
}

/// Cluster scope knowledge: CRDs found in the repository, then
/// `clusterScopedKinds` of the configuration, then the built-in tables.
#[derive(Debug, Clone, Default)]
pub struct Scopes {
    /// (group, kind) → cluster-scoped?, from CRD `spec.scope`.
    pub(crate) crds: std::collections::HashMap<(String, String), bool>,
    /// `clusterScopedKinds` patterns (`Kind` or `group/Kind`, `*` wildcards).
    pub(crate) configured: Vec<String>,
}

impl Scopes {
    /// Records the scope declared by a CRD object.
    pub(crate) fn learn_crd(&mut self, crd: &Value) {
        let group = crd.at("/spec/group").and_then(Value::as_str);
        let kind = crd.at("/spec/names/kind").and_then(Value::as_str);
        let scope = crd.at("/spec/scope").and_then(Value::as_str);
        if let (Some(g), Some(k)) = (group, kind) {
            self.crds
                .insert((g.to_string(), k.to_string()), scope == Some("Cluster"));
        }
    }

    /// What is known of (group, kind)'s scope.
    #[must_use]
    pub(crate) fn scope(&self, group: &str, kind: &str) -> Scope {
        if let Some(c) = self.crds.get(&(group.to_string(), kind.to_string())) {
            return if *c {
                Scope::Cluster
            } else {
                Scope::Namespaced
            };
        }
        if kind_matches(&self.configured, group, kind) || builtin_cluster_scoped(group, kind) {
            return Scope::Cluster;
        }
        if BUILTIN_GROUPS.contains(&group) || NAMESPACED_GROUPS.contains(&group) {
            return Scope::Namespaced;
        }
        Scope::Unknown
    }

    /// Whether (group, kind) is cluster-scoped. Unknown kinds count as
    /// namespaced for their identity, as Argo CD's `IsNamespacedOrUnknown`
    /// does; what a prune of one means is decided by the plan.
    #[must_use]
    pub(crate) fn is_cluster_scoped(&self, group: &str, kind: &str) -> bool {
        self.scope(group, kind) == Scope::Cluster
    }
}

/// Why a document is not a Kubernetes object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ObjectError {
    /// Not a mapping.
    #[error("document is not a mapping")]
    NotAMapping,
    /// A required field is missing.
    #[error("object has no `{0}`")]
    Missing(&'static str),
}

/// Builds a manifest from an object value, defaulting the namespace of
/// namespaced kinds to `default_namespace` and clearing it for cluster-scoped
/// kinds (AC `controller/state.go` `NormalizeTargetObjects`).
///
/// # Errors
/// A value that is not a mapping or lacks `apiVersion`/`kind`/a name.
#[cfg(any(test, feature = "fuzz"))]
pub(crate) fn manifest_from_value(
    value: Value,
    origin: Origin,
    default_namespace: &str,
    scopes: &Scopes,
) -> Result<Manifest, ObjectError> {
    let id = resource_id_of(&value, default_namespace, scopes)?;
    Ok(Manifest::shared(id, Arc::new(value.into()), origin))
}

/// The id of the manifest of object `value`: the namespace of a namespaced
/// kind defaulted to `default_namespace`, a cluster-scoped kind's cleared
/// (AC `controller/state.go` `NormalizeTargetObjects`).
///
/// # Errors
/// A value that is not a mapping or lacks `apiVersion`/`kind`/a name.
pub(crate) fn resource_id_of<'a>(
    value: impl Into<View<'a>>,
    default_namespace: &str,
    scopes: &Scopes,
) -> Result<ResourceId, ObjectError> {
    // Read through a view: an app-of-apps' Application files, taken from
    // the records of an earlier run, are not decoded for their ids.
    let value = value.into();
    if !value.is_object() {
        return Err(ObjectError::NotAMapping);
    }
    let api_version = value
        .get("apiVersion")
        .and_then(View::as_str)
        .ok_or(ObjectError::Missing("apiVersion"))?
        .to_string();
    let kind = value
        .get("kind")
        .and_then(View::as_str)
        .ok_or(ObjectError::Missing("kind"))?
        .to_string();
    let meta = value.get("metadata");
    let name = meta
        .and_then(|m| m.get("name"))
        .and_then(View::as_str)
        .unwrap_or("");
    let generate_name = meta
        .and_then(|m| m.get("generateName"))
        .and_then(View::as_str)
        .unwrap_or("");
    if name.is_empty() && generate_name.is_empty() {
        return Err(ObjectError::Missing("metadata.name"));
    }
    let name = if name.is_empty() {
        generate_name.to_string()
    } else {
        name.to_string()
    };
    let (group, _) = split_api_version(&api_version);
    let group = group.to_string();
    let ns = meta
        .and_then(|m| m.get("namespace"))
        .and_then(View::as_str)
        .unwrap_or("");
    let namespace = if scopes.is_cluster_scoped(&group, &kind) {
        String::new()
    } else if ns.is_empty() {
        default_namespace.to_string()
    } else {
        ns.to_string()
    };
    Ok(ResourceId {
        group,
        kind,
        namespace,
        name,
    })
}

/// The objects of `a` and `b` with every field generated in either set to
/// null, for comparing two revisions of one resource: a random value or
/// the clock's differs between any two renders, and is no change a pull
/// request makes.
#[must_use]
pub(crate) fn without_generated<'a>(
    a: &'a Manifest,
    b: &'a Manifest,
) -> (std::borrow::Cow<'a, Value>, std::borrow::Cow<'a, Value>) {
    use std::borrow::Cow;
    if a.generated.is_empty() && b.generated.is_empty() {
        return (Cow::Borrowed(&a.value), Cow::Borrowed(&b.value));
    }
    let blank = |m: &Manifest| {
        let mut v = Value::clone(&m.value);
        for p in a.generated.iter().chain(b.generated.iter()) {
            if let Some(field) = v.pointer_mut(p) {
                *field = Value::Null;
            }
        }
        v
    };
    (Cow::Owned(blank(a)), Cow::Owned(blank(b)))
}

/// The strings of a JSON array (other items skipped), or none when `v` is
/// absent or not an array: how Argo CD's and Kubernetes' string lists read.
#[must_use]
pub(crate) fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Whether one of `patterns` (`Kind` or `group/Kind`, `*` wildcards) names (group, kind).
#[must_use]
pub(crate) fn kind_matches(patterns: &[String], group: &str, kind: &str) -> bool {
    patterns.iter().any(|s| match s.rsplit_once('/') {
        Some((g, k)) => wildcard(g, group) && wildcard(k, kind),
        None => wildcard(s, kind),
    })
}

/// Matches `text` against `pattern`, where `*` stands for any run of characters.
fn wildcard(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

/// `application.resourceTrackingMethod` (AC `v1alpha1.TrackingMethod`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TrackingMethod {
    /// `annotation`: `argocd.argoproj.io/tracking-id` names app and object.
    Annotation,
    /// `label`: the instance label holds the app name.
    Label,
    /// `annotation+label`: ownership is read from the annotation; the label is informative.
    AnnotationAndLabel,
}

impl TrackingMethod {
    /// Parses the `argocd-cm` / configuration value.
    #[must_use]
    pub(crate) fn parse(s: &str) -> Option<TrackingMethod> {
        match s {
            "annotation" => Some(TrackingMethod::Annotation),
            "label" => Some(TrackingMethod::Label),
            "annotation+label" => Some(TrackingMethod::AnnotationAndLabel),
            _ => None,
        }
    }

    /// The value as written in `argocd-cm`.
    #[must_use]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TrackingMethod::Annotation => "annotation",
            TrackingMethod::Label => "label",
            TrackingMethod::AnnotationAndLabel => "annotation+label",
        }
    }

    /// The names accepted, for error messages.
    pub(crate) const NAMES: &'static [&'static str] = &["annotation", "label", "annotation+label"];
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scope_comes_from_crds_then_configuration_then_tables() {
        let mut s = Scopes {
            configured: vec!["acme.example.com/*".into()],
            ..Scopes::default()
        };
        assert_eq!(s.scope("acme.example.com", "Vault"), Scope::Cluster);
        s.learn_crd(&json!({"spec": {"group": "acme.example.com", "scope": "Namespaced", "names": {"kind": "Vault"}}}));
        assert_eq!(
            s.scope("acme.example.com", "Vault"),
            Scope::Namespaced,
            "a CRD in the repository wins over the configuration"
        );
        assert_eq!(s.scope("other.example.com", "Vault"), Scope::Unknown);
        assert_eq!(s.scope("apps", "Deployment"), Scope::Namespaced);
        assert_eq!(s.scope("", "PersistentVolume"), Scope::Cluster);
        assert_eq!(s.scope("cert-manager.io", "ClusterIssuer"), Scope::Cluster);
        assert_eq!(s.scope("cert-manager.io", "Certificate"), Scope::Namespaced);
        assert_eq!(s.scope("networking.istio.io", "Gateway"), Scope::Namespaced);
        assert_eq!(s.scope("kyverno.io", "ClusterPolicy"), Scope::Cluster);
        assert_eq!(s.scope("kyverno.io", "Policy"), Scope::Unknown);
        assert_eq!(
            s.scope("templates.gatekeeper.sh", "ConstraintTemplate"),
            Scope::Cluster
        );
        assert_eq!(
            s.scope("constraints.gatekeeper.sh", "K8sRequiredLabels"),
            Scope::Cluster
        );
        assert_eq!(s.scope("s3.aws.upbound.io", "Bucket"), Scope::Cluster);
        assert_eq!(
            s.scope("s3.aws.m.upbound.io", "Bucket"),
            Scope::Unknown,
            "Crossplane v2 managed resources may be namespaced"
        );
        assert_eq!(s.scope("spaces.upbound.io", "ControlPlane"), Scope::Unknown);
    }

    #[test]
    fn sync_options_are_trimmed_and_case_sensitive() {
        let o = SyncOptions::parse(" Prune=false , ,Replace=true");
        assert!(o.prune_disabled());
        assert!(o.has("Replace=true"));
        assert!(!SyncOptions::parse("prune=false").prune_disabled());
        assert!(!SyncOptions::parse("Prune=False").prune_disabled());
        assert_eq!(
            SyncOptions::parse("Prune=confirm").value("Prune"),
            Some("confirm")
        );
        assert!(SyncOptions::parse("Delete=false").delete_disabled());
    }

    #[test]
    fn wave_falls_back_to_helm_weight_then_zero() {
        let v = json!({"metadata": {"annotations": {"argocd.argoproj.io/sync-wave": "x", "helm.sh/hook-weight": "-3"}}});
        assert_eq!(sync_wave(&v), -3);
        let v = json!({"metadata": {"annotations": {"argocd.argoproj.io/sync-wave": " 2"}}});
        assert_eq!(sync_wave(&v), 0, "Atoi rejects spaces");
        let v = json!({"metadata": {"annotations": {"argocd.argoproj.io/sync-wave": "+5"}}});
        assert_eq!(sync_wave(&v), 5);
    }

    #[test]
    fn argo_hook_overrides_helm_types_but_policies_merge() {
        let v = json!({"metadata": {"annotations": {
            "argocd.argoproj.io/hook": "PreSync",
            "helm.sh/hook": "post-install",
            "helm.sh/hook-delete-policy": "hook-succeeded"}}});
        let h = HookSpec::of(&v);
        assert_eq!(h.types, vec![HookType::PreSync]);
        assert_eq!(h.delete_policies, vec!["HookSucceeded"]);
        let v = json!({"metadata": {"annotations": {"helm.sh/hook": "test-success"}}});
        let h = HookSpec::of(&v);
        assert!(
            h.is_hook && h.types.is_empty(),
            "an unmapped helm hook is a hook with no phase"
        );
    }

    #[test]
    fn namespace_defaults_only_for_namespaced_kinds() {
        let scopes = Scopes::default();
        let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"}});
        let m = manifest_from_value(pvc, Origin::default(), "payments", &scopes).unwrap();
        assert_eq!(m.id.namespace, "payments");
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x", "namespace": "stray"}});
        let m = manifest_from_value(ns, Origin::default(), "payments", &scopes).unwrap();
        assert_eq!(m.id.namespace, "");
        let dep = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "own"}});
        let m = manifest_from_value(dep, Origin::default(), "payments", &scopes).unwrap();
        assert_eq!(
            (m.id.group.as_str(), m.id.namespace.as_str()),
            ("apps", "own")
        );
    }
}
