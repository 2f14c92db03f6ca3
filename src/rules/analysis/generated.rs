//! Objects that a controller creates from a custom resource, so they exist
//! in the cluster without a manifest in git: a SealedSecret becomes a
//! Secret, a cert-manager Certificate a Secret, a CloudNativePG Cluster its
//! Secrets. A workload needing one waits for the custom resource that makes
//! it, which GL008 must see as it sees a manifest of the object itself.

use serde_json::Value;

use crate::manifest::Manifest;

/// "A controller creates a `creates` object from each `group/kind`
/// resource, in its namespace, named by the string at `name_from`"
/// (`generatedObjects` of `.gitops-lint.yaml`, read by GL008).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GeneratedObject {
    /// API group of the custom resource.
    pub(crate) group: String,
    /// Kind of the custom resource.
    pub(crate) kind: String,
    /// Core kind created: Secret, ConfigMap, Service, PersistentVolumeClaim or ServiceAccount.
    pub(crate) creates: String,
    /// Dotted path of the created object's name (default `metadata.name`).
    pub(crate) name_from: String,
}

/// One "kind X creates an object of kind Y" relation.
#[derive(Debug, Clone, Copy)]
struct Builtin {
    group: &'static str,
    kind: &'static str,
    creates: &'static str,
    /// Dotted paths tried in order for the created object's name; the last
    /// entry is usually `metadata.name`.
    name_from: &'static [&'static str],
    /// Suffixes appended to the name (`{name}-app`); empty means none.
    suffixes: &'static [&'static str],
}

/// Controllers whose documented behaviour is to create the object named
/// here in the custom resource's namespace.
const BUILTIN: &[Builtin] = &[
    // bitnami-labs/sealed-secrets: the Secret takes `spec.template.metadata.name`
    // when set, else the SealedSecret's name.
    Builtin {
        group: "bitnami.com",
        kind: "SealedSecret",
        creates: "Secret",
        name_from: &["spec.template.metadata.name", "metadata.name"],
        suffixes: &[],
    },
    // external-secrets: `spec.target.name`, defaulting to the ExternalSecret's name.
    Builtin {
        group: "external-secrets.io",
        kind: "ExternalSecret",
        creates: "Secret",
        name_from: &["spec.target.name", "metadata.name"],
        suffixes: &[],
    },
    // cert-manager: the Certificate's `spec.secretName` (required).
    Builtin {
        group: "cert-manager.io",
        kind: "Certificate",
        creates: "Secret",
        name_from: &["spec.secretName"],
        suffixes: &[],
    },
    // CloudNativePG: `<cluster>-app` and `<cluster>-superuser` Secrets, and
    // the `-rw`, `-ro`, `-r` Services.
    Builtin {
        group: "postgresql.cnpg.io",
        kind: "Cluster",
        creates: "Secret",
        name_from: &["metadata.name"],
        suffixes: &["-app", "-superuser"],
    },
    Builtin {
        group: "postgresql.cnpg.io",
        kind: "Cluster",
        creates: "Service",
        name_from: &["metadata.name"],
        suffixes: &["-rw", "-ro", "-r"],
    },
    // Strimzi: a KafkaUser's credentials Secret has the user's name.
    Builtin {
        group: "kafka.strimzi.io",
        kind: "KafkaUser",
        creates: "Secret",
        name_from: &["metadata.name"],
        suffixes: &[],
    },
    // 1Password operator: the Secret has the OnePasswordItem's name.
    Builtin {
        group: "onepassword.com",
        kind: "OnePasswordItem",
        creates: "Secret",
        name_from: &["metadata.name"],
        suffixes: &[],
    },
    // HashiCorp Vault Secrets Operator: `spec.destination.name`.
    Builtin {
        group: "secrets.hashicorp.com",
        kind: "VaultStaticSecret",
        creates: "Secret",
        name_from: &["spec.destination.name"],
        suffixes: &[],
    },
    Builtin {
        group: "secrets.hashicorp.com",
        kind: "VaultDynamicSecret",
        creates: "Secret",
        name_from: &["spec.destination.name"],
        suffixes: &[],
    },
];

fn at_path<'a>(v: &'a Value, dotted: &str) -> Option<&'a str> {
    dotted
        .split('.')
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// Whether `m` makes a controller create the core object `kind/name` in
/// its own namespace, by the built-in table or the configured
/// `generatedObjects`.
#[must_use]
pub(crate) fn creates(
    m: &Manifest,
    configured: &[GeneratedObject],
    kind: &str,
    name: &str,
) -> bool {
    let names = |name_from: &[&str], suffixes: &[&str]| -> Vec<String> {
        let Some(base) = name_from.iter().find_map(|p| at_path(&m.value, p)) else {
            return Vec::new();
        };
        if suffixes.is_empty() {
            vec![base.to_string()]
        } else {
            suffixes.iter().map(|s| format!("{base}{s}")).collect()
        }
    };
    let builtin = BUILTIN.iter().any(|b| {
        b.group == m.id.group
            && b.kind == m.id.kind
            && b.creates == kind
            && names(b.name_from, b.suffixes).iter().any(|n| n == name)
    });
    builtin
        || configured.iter().any(|g| {
            g.group == m.id.group
                && g.kind == m.id.kind
                && g.creates == kind
                && names(&[g.name_from.as_str()], &[])
                    .iter()
                    .any(|n| n == name)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn manifest(v: Value) -> Manifest {
        crate::manifest::manifest_from_value(
            v,
            crate::manifest::Origin::default(),
            "ns",
            &crate::manifest::Scopes::default(),
        )
        .expect("a manifest")
    }

    #[test]
    fn builtin_generators_name_what_they_create() {
        let sealed = manifest(
            json!({"apiVersion": "bitnami.com/v1alpha1", "kind": "SealedSecret",
            "metadata": {"name": "db", "namespace": "ns"}}),
        );
        assert!(creates(&sealed, &[], "Secret", "db"));
        assert!(!creates(&sealed, &[], "Secret", "other"));
        assert!(!creates(&sealed, &[], "ConfigMap", "db"));
        let renamed = manifest(
            json!({"apiVersion": "bitnami.com/v1alpha1", "kind": "SealedSecret",
            "metadata": {"name": "db", "namespace": "ns"},
            "spec": {"template": {"metadata": {"name": "db-creds"}}}}),
        );
        assert!(creates(&renamed, &[], "Secret", "db-creds"));
        assert!(!creates(&renamed, &[], "Secret", "db"));
        let cnpg = manifest(
            json!({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster",
            "metadata": {"name": "pg", "namespace": "ns"}}),
        );
        assert!(creates(&cnpg, &[], "Secret", "pg-app"));
        assert!(creates(&cnpg, &[], "Service", "pg-rw"));
        assert!(!creates(&cnpg, &[], "Secret", "pg"));
        let cert = manifest(
            json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
            "metadata": {"name": "web", "namespace": "ns"}, "spec": {"secretName": "web-tls"}}),
        );
        assert!(creates(&cert, &[], "Secret", "web-tls"));
        assert!(!creates(&cert, &[], "Secret", "web"));
    }

    #[test]
    fn configured_generators_extend_the_table() {
        let creds = manifest(
            json!({"apiVersion": "example.com/v1", "kind": "Credentials",
            "metadata": {"name": "c", "namespace": "ns"}, "spec": {"output": {"name": "c-secret"}}}),
        );
        assert!(!creates(&creds, &[], "Secret", "c-secret"));
        let g = GeneratedObject {
            group: "example.com".into(),
            kind: "Credentials".into(),
            creates: "Secret".into(),
            name_from: "spec.output.name".into(),
        };
        assert!(creates(&creds, &[g], "Secret", "c-secret"));
    }
}
