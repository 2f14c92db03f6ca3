//! Field specs (a gvk filter plus a `/`-separated path) and the built-in
//! tables Kustomize uses to know where names, labels, namespaces, images and
//! references live; `configurations:` files extend them.

use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::resource::Gvk;
use super::{content, KResult};

/// One field spec.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldSpec {
    /// Which objects it applies to (empty parts match anything).
    pub gvk: Gvk,
    /// `/`-separated path; `x[]` marks a list; `\/` escapes a slash.
    pub path: String,
    /// Whether missing fields are created.
    pub create: bool,
}

impl FieldSpec {
    fn new(group: &str, version: &str, kind: &str, path: &str, create: bool) -> FieldSpec {
        FieldSpec {
            gvk: Gvk {
                group: group.into(),
                version: version.into(),
                kind: kind.into(),
            },
            path: path.into(),
            create,
        }
    }

    /// Kustomize's `isMatchGVK` against an object.
    #[must_use]
    pub fn matches(&self, obj: &Value) -> bool {
        Gvk::of(obj).selected_by(&self.gvk)
    }

    /// Parses a list of field specs (a `fieldSpecs:` value).
    #[must_use]
    pub fn list(v: &Value) -> Vec<FieldSpec> {
        v.as_array()
            .map(|a| a.iter().map(FieldSpec::parse).collect())
            .unwrap_or_default()
    }

    /// Parses one entry of a `configurations:` list.
    fn parse(v: &Value) -> FieldSpec {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        FieldSpec {
            gvk: Gvk {
                group: s("group"),
                version: s("version"),
                kind: s("kind"),
            },
            path: s("path"),
            create: v.get("create").and_then(Value::as_bool).unwrap_or(false),
        }
    }
}

/// A name-reference entry: the referenced kind and the fields referring to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameBackRef {
    /// The referenced gvk.
    pub gvk: Gvk,
    /// Where referrers hold the name.
    pub referrers: Vec<FieldSpec>,
}

/// Every field-spec table of a build.
///
/// Normalized wherever a [`TransformerConfig`] holds it: no list repeats a
/// spec and no two `nameReference` entries share a gvk, so merging it into
/// empty tables is a plain copy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tables {
    /// `namePrefix` specs.
    pub name_prefix: Vec<FieldSpec>,
    /// `nameSuffix` specs.
    pub name_suffix: Vec<FieldSpec>,
    /// `namespace` specs.
    pub namespace: Vec<FieldSpec>,
    /// `commonLabels` specs.
    pub common_labels: Vec<FieldSpec>,
    /// `templateLabels` specs.
    pub template_labels: Vec<FieldSpec>,
    /// `commonAnnotations` specs.
    pub common_annotations: Vec<FieldSpec>,
    /// `labels` specs (added to every `labels:` entry).
    pub labels: Vec<FieldSpec>,
    /// `varReference` specs.
    pub var_reference: Vec<FieldSpec>,
    /// `nameReference` entries.
    pub name_reference: Vec<NameBackRef>,
    /// `images` specs.
    pub images: Vec<FieldSpec>,
    /// `replicas` specs.
    pub replicas: Vec<FieldSpec>,
}

const POD_KINDS: &[(&str, &str, &str)] = &[
    // (version, kind, pod spec prefix)
    ("v1", "Pod", "spec"),
    ("", "PodTemplate", "template/spec"),
    ("", "Deployment", "spec/template/spec"),
    ("", "ReplicaSet", "spec/template/spec"),
    ("", "DaemonSet", "spec/template/spec"),
    ("", "StatefulSet", "spec/template/spec"),
    ("", "Job", "spec/template/spec"),
    ("", "CronJob", "spec/jobTemplate/spec/template/spec"),
];

fn metadata_labels() -> Vec<FieldSpec> {
    let f = FieldSpec::new;
    vec![
        f("", "", "", "metadata/labels", true),
        f(
            "",
            "v1",
            "ReplicationController",
            "spec/template/metadata/labels",
            true,
        ),
        f("", "", "Deployment", "spec/template/metadata/labels", true),
        f("", "", "ReplicaSet", "spec/template/metadata/labels", true),
        f("", "", "DaemonSet", "spec/template/metadata/labels", true),
        f(
            "apps",
            "",
            "StatefulSet",
            "spec/template/metadata/labels",
            true,
        ),
        f(
            "apps",
            "",
            "StatefulSet",
            "spec/volumeClaimTemplates[]/metadata/labels",
            true,
        ),
        f("batch", "", "Job", "spec/template/metadata/labels", true),
        f(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/metadata/labels",
            true,
        ),
        f(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/spec/template/metadata/labels",
            true,
        ),
    ]
}

fn common_labels() -> Vec<FieldSpec> {
    let f = FieldSpec::new;
    let mut v = vec![
        f("", "v1", "Service", "spec/selector", true),
        f("", "v1", "ReplicationController", "spec/selector", true),
        f("", "", "Deployment", "spec/selector/matchLabels", true),
    ];
    let affinity = |kind: &str| {
        let base = "spec/template/spec/affinity";
        vec![
            f("apps", "", kind, &format!("{base}/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels"), false),
            f("apps", "", kind, &format!("{base}/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels"), false),
            f("apps", "", kind, &format!("{base}/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels"), false),
            f("apps", "", kind, &format!("{base}/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels"), false),
            f("apps", "", kind, "spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels", false),
        ]
    };
    v.extend(affinity("Deployment"));
    v.push(f("", "", "ReplicaSet", "spec/selector/matchLabels", true));
    v.push(f("", "", "DaemonSet", "spec/selector/matchLabels", true));
    v.push(f(
        "apps",
        "",
        "StatefulSet",
        "spec/selector/matchLabels",
        true,
    ));
    v.extend(affinity("StatefulSet"));
    v.extend([
        f("batch", "", "Job", "spec/selector/matchLabels", false),
        f(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/spec/selector/matchLabels",
            false,
        ),
        f(
            "policy",
            "",
            "PodDisruptionBudget",
            "spec/selector/matchLabels",
            false,
        ),
        f(
            "networking.k8s.io",
            "",
            "NetworkPolicy",
            "spec/podSelector/matchLabels",
            false,
        ),
        f(
            "networking.k8s.io",
            "",
            "NetworkPolicy",
            "spec/ingress/from/podSelector/matchLabels",
            false,
        ),
        f(
            "networking.k8s.io",
            "",
            "NetworkPolicy",
            "spec/egress/to/podSelector/matchLabels",
            false,
        ),
    ]);
    v.extend(metadata_labels());
    v
}

fn common_annotations() -> Vec<FieldSpec> {
    let f = FieldSpec::new;
    vec![
        f("", "", "", "metadata/annotations", true),
        f(
            "",
            "v1",
            "ReplicationController",
            "spec/template/metadata/annotations",
            true,
        ),
        f(
            "",
            "",
            "Deployment",
            "spec/template/metadata/annotations",
            true,
        ),
        f(
            "",
            "",
            "ReplicaSet",
            "spec/template/metadata/annotations",
            true,
        ),
        f(
            "",
            "",
            "DaemonSet",
            "spec/template/metadata/annotations",
            true,
        ),
        f(
            "",
            "",
            "StatefulSet",
            "spec/template/metadata/annotations",
            true,
        ),
        f(
            "batch",
            "",
            "Job",
            "spec/template/metadata/annotations",
            true,
        ),
        f(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/metadata/annotations",
            true,
        ),
        f(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/spec/template/metadata/annotations",
            true,
        ),
    ]
}

fn var_reference() -> Vec<FieldSpec> {
    let f = FieldSpec::new;
    let mut v = Vec::new();
    let pod = |kind: &str, p: &str, v: &mut Vec<FieldSpec>, nfs: &str| {
        for c in ["containers", "initContainers"] {
            for leaf in ["args", "command", "env/value", "volumeMounts/mountPath"] {
                v.push(f("", "", kind, &format!("{p}/{c}/{leaf}"), false));
            }
        }
        v.push(f("", "", kind, nfs, false));
    };
    pod(
        "CronJob",
        "spec/jobTemplate/spec/template/spec",
        &mut v,
        "spec/jobTemplate/spec/template/volumes/nfs/server",
    );
    pod(
        "DaemonSet",
        "spec/template/spec",
        &mut v,
        "spec/template/spec/volumes/nfs/server",
    );
    pod(
        "Deployment",
        "spec/template/spec",
        &mut v,
        "spec/template/spec/volumes/nfs/server",
    );
    v.push(f(
        "",
        "",
        "Deployment",
        "spec/template/metadata/annotations",
        false,
    ));
    v.push(f("", "", "Ingress", "spec/rules/host", false));
    v.push(f("", "", "Ingress", "spec/tls/hosts", false));
    v.push(f("", "", "Ingress", "spec/tls/secretName", false));
    pod(
        "Job",
        "spec/template/spec",
        &mut v,
        "spec/template/spec/volumes/nfs/server",
    );
    pod("Pod", "spec", &mut v, "spec/volumes/nfs/server");
    pod(
        "ReplicaSet",
        "spec/template/spec",
        &mut v,
        "spec/template/spec/volumes/nfs/server",
    );
    v.push(f("", "", "Service", "spec/ports/port", false));
    v.push(f("", "", "Service", "spec/ports/targetPort", false));
    pod(
        "StatefulSet",
        "spec/template/spec",
        &mut v,
        "spec/volumeClaimTemplates/spec/nfs/server",
    );
    v.push(f("", "", "PersistentVolume", "spec/nfs/server", false));
    v.push(f("", "", "", "metadata/labels", false));
    v.push(f("", "", "", "metadata/annotations", false));
    v
}

fn name_reference() -> Vec<NameBackRef> {
    let f = FieldSpec::new;
    let g = |group: &str, version: &str, kind: &str| Gvk {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
    };
    let mut out = Vec::new();
    let hpa = |kind: &str| NameBackRef {
        gvk: g("", "", kind),
        referrers: vec![f(
            "",
            "",
            "HorizontalPodAutoscaler",
            "spec/scaleTargetRef/name",
            false,
        )],
    };
    for k in [
        "Deployment",
        "ReplicationController",
        "ReplicaSet",
        "StatefulSet",
    ] {
        out.push(hpa(k));
    }
    // ConfigMap
    let mut cm = Vec::new();
    for (ver, kind, p) in POD_KINDS {
        for leaf in [
            "volumes/configMap/name",
            "containers/env/valueFrom/configMapKeyRef/name",
            "initContainers/env/valueFrom/configMapKeyRef/name",
            "containers/envFrom/configMapRef/name",
            "initContainers/envFrom/configMapRef/name",
            "volumes/projected/sources/configMap/name",
        ] {
            cm.push(f("", ver, kind, &format!("{p}/{leaf}"), false));
        }
    }
    cm.push(f("", "", "Node", "spec/configSource/configMap", false));
    cm.push(f("", "", "Role", "rules/resourceNames", false));
    cm.push(f("", "", "ClusterRole", "rules/resourceNames", false));
    cm.push(f(
        "",
        "",
        "Ingress",
        "metadata/annotations/nginx.ingress.kubernetes.io\\/fastcgi-params-configmap",
        false,
    ));
    out.push(NameBackRef {
        gvk: g("", "v1", "ConfigMap"),
        referrers: cm,
    });
    // Secret
    let mut sec = Vec::new();
    for (ver, kind, p) in POD_KINDS {
        for leaf in [
            "volumes/secret/secretName",
            "containers/env/valueFrom/secretKeyRef/name",
            "initContainers/env/valueFrom/secretKeyRef/name",
            "containers/envFrom/secretRef/name",
            "initContainers/envFrom/secretRef/name",
            "imagePullSecrets/name",
            "volumes/projected/sources/secret/name",
        ] {
            sec.push(f("", ver, kind, &format!("{p}/{leaf}"), false));
        }
    }
    sec.extend([
        f("", "", "Ingress", "spec/tls/secretName", false),
        f(
            "",
            "",
            "Ingress",
            "metadata/annotations/ingress.kubernetes.io\\/auth-secret",
            false,
        ),
        f(
            "",
            "",
            "Ingress",
            "metadata/annotations/nginx.ingress.kubernetes.io\\/auth-secret",
            false,
        ),
        f(
            "",
            "",
            "Ingress",
            "metadata/annotations/nginx.ingress.kubernetes.io\\/auth-tls-secret",
            false,
        ),
        f("", "", "ServiceAccount", "imagePullSecrets/name", false),
        f("", "", "StorageClass", "parameters/secretName", false),
        f("", "", "StorageClass", "parameters/adminSecretName", false),
        f("", "", "StorageClass", "parameters/userSecretName", false),
        f("", "", "StorageClass", "parameters/secretRef", false),
        f("", "", "Role", "rules/resourceNames", false),
        f("", "", "ClusterRole", "rules/resourceNames", false),
        f(
            "serving.knative.dev",
            "v1",
            "Service",
            "spec/template/spec/containers/env/valueFrom/secretKeyRef/name",
            false,
        ),
        f(
            "",
            "",
            "PersistentVolume",
            "spec/azureFile/secretName",
            false,
        ),
    ]);
    out.push(NameBackRef {
        gvk: g("", "v1", "Secret"),
        referrers: sec,
    });
    out.push(NameBackRef {
        gvk: g("", "v1", "Service"),
        referrers: vec![
            f("apps", "", "StatefulSet", "spec/serviceName", false),
            f(
                "",
                "",
                "Ingress",
                "spec/rules/http/paths/backend/serviceName",
                false,
            ),
            f("", "", "Ingress", "spec/backend/serviceName", false),
            f(
                "",
                "",
                "Ingress",
                "spec/rules/http/paths/backend/service/name",
                false,
            ),
            f("", "", "Ingress", "spec/defaultBackend/service/name", false),
            f(
                "apiregistration.k8s.io",
                "",
                "APIService",
                "spec/service/name",
                false,
            ),
            f(
                "admissionregistration.k8s.io",
                "",
                "ValidatingWebhookConfiguration",
                "webhooks/clientConfig/service",
                false,
            ),
            f(
                "admissionregistration.k8s.io",
                "",
                "MutatingWebhookConfiguration",
                "webhooks/clientConfig/service",
                false,
            ),
        ],
    });
    out.push(NameBackRef {
        gvk: g("rbac.authorization.k8s.io", "", "Role"),
        referrers: vec![f(
            "rbac.authorization.k8s.io",
            "",
            "RoleBinding",
            "roleRef/name",
            false,
        )],
    });
    out.push(NameBackRef {
        gvk: g("rbac.authorization.k8s.io", "", "ClusterRole"),
        referrers: vec![
            f(
                "rbac.authorization.k8s.io",
                "",
                "RoleBinding",
                "roleRef/name",
                false,
            ),
            f(
                "rbac.authorization.k8s.io",
                "",
                "ClusterRoleBinding",
                "roleRef/name",
                false,
            ),
        ],
    });
    let workloads = |leaf: &str, pod_path: &str| {
        vec![
            f("", "", "Pod", pod_path, false),
            f(
                "",
                "",
                "StatefulSet",
                &format!("spec/template/spec/{leaf}"),
                false,
            ),
            f(
                "",
                "",
                "Deployment",
                &format!("spec/template/spec/{leaf}"),
                false,
            ),
            f(
                "",
                "",
                "ReplicationController",
                &format!("spec/template/spec/{leaf}"),
                false,
            ),
            f(
                "",
                "",
                "CronJob",
                &format!("spec/jobTemplate/spec/template/spec/{leaf}"),
                false,
            ),
            f("", "", "Job", &format!("spec/template/spec/{leaf}"), false),
            f(
                "",
                "",
                "DaemonSet",
                &format!("spec/template/spec/{leaf}"),
                false,
            ),
        ]
    };
    let mut sa = vec![
        f(
            "rbac.authorization.k8s.io",
            "",
            "RoleBinding",
            "subjects",
            false,
        ),
        f(
            "rbac.authorization.k8s.io",
            "",
            "ClusterRoleBinding",
            "subjects",
            false,
        ),
    ];
    sa.extend(workloads("serviceAccountName", "spec/serviceAccountName"));
    out.push(NameBackRef {
        gvk: g("", "v1", "ServiceAccount"),
        referrers: sa,
    });
    out.push(NameBackRef {
        gvk: g("", "v1", "PersistentVolumeClaim"),
        referrers: workloads(
            "volumes/persistentVolumeClaim/claimName",
            "spec/volumes/persistentVolumeClaim/claimName",
        ),
    });
    out.push(NameBackRef {
        gvk: g("", "v1", "PersistentVolume"),
        referrers: vec![
            f("", "", "PersistentVolumeClaim", "spec/volumeName", false),
            f("", "", "ClusterRole", "rules/resourceNames", false),
        ],
    });
    out.push(NameBackRef {
        gvk: g("storage.k8s.io", "v1", "StorageClass"),
        referrers: vec![
            f("", "", "PersistentVolume", "spec/storageClassName", false),
            f(
                "",
                "",
                "PersistentVolumeClaim",
                "spec/storageClassName",
                false,
            ),
            f(
                "",
                "",
                "StatefulSet",
                "spec/volumeClaimTemplates/spec/storageClassName",
                false,
            ),
        ],
    });
    out.push(NameBackRef {
        gvk: g("scheduling.k8s.io", "v1", "PriorityClass"),
        referrers: workloads("priorityClassName", "spec/priorityClassName"),
    });
    // The group below is what Kustomize's table says; it never matches.
    out.push(NameBackRef {
        gvk: g("networking.k8s.io/v1", "v1", "IngressClass"),
        referrers: vec![f("", "", "Ingress", "spec/ingressClassName", false)],
    });
    out.push(NameBackRef {
        gvk: g(
            "admissionregistration.k8s.io",
            "",
            "ValidatingAdmissionPolicy",
        ),
        referrers: vec![f(
            "admissionregistration.k8s.io",
            "",
            "ValidatingAdmissionPolicyBinding",
            "spec/policyName",
            false,
        )],
    });
    out
}

/// The field-spec tables of a build, shared copy-on-write.
///
/// Every kustomization layer merges the built-in tables and each parent
/// merges its children's, so nearly every merge is "built-ins into built-ins"
/// or "built-ins into nothing". Sharing the tables and remembering whether the
/// built-ins are already in makes those merges free, without changing what
/// any merge produces.
#[derive(Debug, Clone, Default)]
pub struct TransformerConfig {
    tables: Arc<Tables>,
    /// Whether `tables` holds every built-in spec.
    has_builtin: bool,
}

impl Deref for TransformerConfig {
    type Target = Tables;

    fn deref(&self) -> &Tables {
        &self.tables
    }
}

impl TransformerConfig {
    /// Kustomize's built-in tables.
    #[must_use]
    pub fn builtin() -> &'static TransformerConfig {
        // Built once: every kustomization layer merges it.
        static BUILTIN: OnceLock<TransformerConfig> = OnceLock::new();
        BUILTIN.get_or_init(|| TransformerConfig {
            tables: Arc::new(Tables::make_builtin().normalized()),
            has_builtin: true,
        })
    }

    /// Merges another config in: appends each spec not already present,
    /// keeping first occurrences and their order.
    pub fn merge(&mut self, o: &TransformerConfig) {
        let builtin = TransformerConfig::builtin();
        // Each shortcut gives exactly what the full merge would: nothing new
        // to add, or (both sides normalized) a copy of `o`.
        if o.tables.is_empty()
            || Arc::ptr_eq(&self.tables, &o.tables)
            || (self.has_builtin && Arc::ptr_eq(&o.tables, &builtin.tables))
        {
            return;
        }
        if self.tables.is_empty() {
            *self = o.clone();
            return;
        }
        Arc::make_mut(&mut self.tables).merge(&o.tables);
        self.has_builtin |= o.has_builtin;
    }

    /// Parses a `configurations:` file.
    ///
    /// # Errors
    /// Unknown sections.
    pub fn parse(v: &Value, file: &str) -> KResult<TransformerConfig> {
        Ok(TransformerConfig {
            tables: Arc::new(Tables::parse(v, file)?.normalized()),
            has_builtin: false,
        })
    }
}

impl Tables {
    fn make_builtin() -> Tables {
        let f = FieldSpec::new;
        let mut images = Vec::new();
        for p in ["spec", "spec/template/spec"] {
            images.push(f("", "", "", &format!("{p}/containers[]/image"), true));
            images.push(f("", "", "", &format!("{p}/initContainers[]/image"), true));
        }
        Tables {
            name_prefix: vec![f("", "", "", "metadata/name", false)],
            name_suffix: vec![f("", "", "", "metadata/name", false)],
            namespace: vec![
                f("", "", "Namespace", "metadata/name", true),
                f(
                    "apiregistration.k8s.io",
                    "",
                    "APIService",
                    "spec/service/namespace",
                    true,
                ),
                f(
                    "apiextensions.k8s.io",
                    "",
                    "CustomResourceDefinition",
                    "spec/conversion/webhook/clientConfig/service/namespace",
                    false,
                ),
            ],
            common_labels: common_labels(),
            template_labels: metadata_labels(),
            common_annotations: common_annotations(),
            labels: Vec::new(),
            var_reference: var_reference(),
            name_reference: name_reference(),
            images,
            replicas: [
                "Deployment",
                "ReplicationController",
                "ReplicaSet",
                "StatefulSet",
            ]
            .iter()
            .map(|k| f("", "", k, "spec/replicas", true))
            .collect(),
        }
    }

    /// Whether every table is empty.
    fn is_empty(&self) -> bool {
        *self == Tables::default()
    }

    /// These tables merged into empty ones: repeats dropped, `nameReference`
    /// entries of one gvk joined.
    fn normalized(self) -> Tables {
        let mut out = Tables::default();
        out.merge(&self);
        out
    }

    /// Merges other tables in (dedup, keeping first occurrences).
    fn merge(&mut self, o: &Tables) {
        // A set, not `Vec::contains`: every kustomization layer merges the
        // built-in config (hundreds of specs), which made this quadratic.
        fn add(a: &mut Vec<FieldSpec>, b: &[FieldSpec]) {
            let mut seen: std::collections::HashSet<&FieldSpec> = a.iter().collect();
            let fresh: Vec<usize> = (0..b.len()).filter(|&i| seen.insert(&b[i])).collect();
            a.extend(fresh.into_iter().map(|i| b[i].clone()));
        }
        add(&mut self.name_prefix, &o.name_prefix);
        add(&mut self.name_suffix, &o.name_suffix);
        add(&mut self.namespace, &o.namespace);
        add(&mut self.common_labels, &o.common_labels);
        add(&mut self.template_labels, &o.template_labels);
        add(&mut self.common_annotations, &o.common_annotations);
        add(&mut self.labels, &o.labels);
        add(&mut self.var_reference, &o.var_reference);
        add(&mut self.images, &o.images);
        add(&mut self.replicas, &o.replicas);
        for nb in &o.name_reference {
            if let Some(e) = self.name_reference.iter_mut().find(|e| e.gvk == nb.gvk) {
                add(&mut e.referrers, &nb.referrers);
            } else {
                self.name_reference.push(nb.clone());
            }
        }
    }

    /// Parses a `configurations:` file as written (repeats kept).
    fn parse(v: &Value, file: &str) -> KResult<Tables> {
        let mut c = Tables::default();
        let Some(m) = v.as_object() else { return Ok(c) };
        let specs = |v: &Value| -> Vec<FieldSpec> {
            v.as_array()
                .map(|a| a.iter().map(FieldSpec::parse).collect())
                .unwrap_or_default()
        };
        for (k, val) in m {
            match k.as_str() {
                "namePrefix" => c.name_prefix = specs(val),
                "nameSuffix" => c.name_suffix = specs(val),
                "namespace" => c.namespace = specs(val),
                "commonLabels" => c.common_labels = specs(val),
                "templateLabels" => c.template_labels = specs(val),
                "commonAnnotations" => c.common_annotations = specs(val),
                "labels" => c.labels = specs(val),
                "varReference" => c.var_reference = specs(val),
                "images" => c.images = specs(val),
                "replicas" => c.replicas = specs(val),
                "nameReference" => {
                    for e in val.as_array().into_iter().flatten() {
                        let s =
                            |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                        c.name_reference.push(NameBackRef {
                            gvk: Gvk {
                                group: s("group"),
                                version: s("version"),
                                kind: s("kind"),
                            },
                            referrers: e.get("fieldSpecs").map(specs).unwrap_or_default(),
                        });
                    }
                }
                other => {
                    return Err(content(format!(
                        "`{file}`: unknown transformer configuration field `{other}`"
                    ))
                    .at(file, None));
                }
            }
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// One merge in a build: the built-ins, a `configurations:` file, or a
    /// sub-kustomization's config built from its own merges.
    enum Step {
        Builtin,
        File(Value),
        Sub(Vec<Step>),
    }

    /// What the merges produce with the full set-based merge only, starting
    /// from the tables as written (repeats and all).
    fn full(steps: &[Step]) -> Tables {
        let mut t = Tables::default();
        for s in steps {
            let o = match s {
                Step::Builtin => Tables::make_builtin(),
                Step::File(v) => Tables::parse(v, "cfg.yaml").expect("parse"),
                Step::Sub(inner) => full(inner),
            };
            t.merge(&o);
        }
        t
    }

    fn fast(steps: &[Step]) -> TransformerConfig {
        let mut c = TransformerConfig::default();
        for s in steps {
            match s {
                Step::Builtin => c.merge(TransformerConfig::builtin()),
                Step::File(v) => c.merge(&TransformerConfig::parse(v, "cfg.yaml").expect("parse")),
                Step::Sub(inner) => c.merge(&fast(inner)),
            }
        }
        c
    }

    /// Adds a referrer to a built-in `nameReference` kind, repeats a spec and
    /// repeats a built-in `commonLabels` spec.
    fn custom_a() -> Value {
        json!({
            "nameReference": [{
                "kind": "ConfigMap", "version": "v1",
                "fieldSpecs": [
                    {"kind": "MyApp", "path": "spec/configRef"},
                    {"kind": "MyApp", "path": "spec/configRef"},
                ],
            }],
            "commonLabels": [
                {"kind": "MyApp", "path": "spec/selector", "create": true},
                {"path": "metadata/labels", "create": true},
                {"kind": "MyApp", "path": "spec/selector", "create": true},
            ],
        })
    }

    /// A new `nameReference` kind listed twice, and image specs.
    fn custom_b() -> Value {
        json!({
            "nameReference": [
                {"kind": "Widget", "group": "example.com",
                 "fieldSpecs": [{"kind": "Gadget", "path": "spec/widget"}]},
                {"kind": "Widget", "group": "example.com",
                 "fieldSpecs": [
                    {"kind": "Gizmo", "path": "spec/widget"},
                    {"kind": "Gadget", "path": "spec/widget"},
                 ]},
            ],
            "images": [
                {"kind": "MyApp", "path": "spec/image"},
                {"path": "spec/containers[]/image", "create": true},
            ],
        })
    }

    #[test]
    fn shortcut_merges_give_what_the_full_merge_gives() {
        use Step::{Builtin, File, Sub};
        let base = || Sub(vec![Builtin]);
        let custom_base = || Sub(vec![Builtin, File(custom_a())]);
        let builds: Vec<(&str, Vec<Step>)> = vec![
            ("one layer", vec![Builtin]),
            ("builtins twice", vec![Builtin, Builtin]),
            ("overlay of a base", vec![base(), Builtin]),
            ("two bases", vec![base(), base(), Builtin]),
            ("custom base first", vec![custom_base(), base(), Builtin]),
            ("custom base second", vec![base(), custom_base(), Builtin]),
            (
                "custom files in the overlay",
                vec![base(), Builtin, File(custom_b()), File(custom_a())],
            ),
            (
                "nested custom bases",
                vec![
                    Sub(vec![custom_base(), Builtin, File(custom_b())]),
                    custom_base(),
                    Builtin,
                    File(json!({})),
                ],
            ),
            ("files only", vec![File(custom_b()), File(custom_b())]),
            (
                "file before builtins",
                vec![Sub(vec![File(custom_a())]), Builtin],
            ),
        ];
        for (name, steps) in builds {
            assert_eq!(*fast(&steps), full(&steps), "{name}");
        }
    }

    #[test]
    fn merging_builtins_again_copies_nothing() {
        let builtin = TransformerConfig::builtin();
        let mut base = TransformerConfig::default();
        base.merge(builtin);
        let mut overlay = TransformerConfig::default();
        overlay.merge(&base);
        overlay.merge(builtin);
        assert!(Arc::ptr_eq(&overlay.tables, &builtin.tables));

        overlay.merge(&TransformerConfig::parse(&custom_b(), "cfg.yaml").expect("parse"));
        let custom = Arc::clone(&overlay.tables);
        overlay.merge(builtin);
        overlay.merge(&base);
        assert!(Arc::ptr_eq(&overlay.tables, &custom));
    }
}
