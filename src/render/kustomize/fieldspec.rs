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
pub(crate) struct FieldSpec {
    /// Which objects it applies to (empty parts match anything).
    pub(crate) gvk: Gvk,
    /// `/`-separated path; `x[]` marks a list; `\/` escapes a slash.
    pub(crate) path: String,
    /// Whether missing fields are created.
    pub(crate) create: bool,
}

impl FieldSpec {
    /// Kustomize's `isMatchGVK` against an object.
    #[must_use]
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        Gvk::of(obj).selected_by(&self.gvk)
    }

    /// Parses a list of field specs (a `fieldSpecs:` value).
    #[must_use]
    pub(crate) fn list(v: &Value) -> Vec<FieldSpec> {
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
pub(crate) struct NameBackRef {
    /// The referenced gvk.
    pub(crate) gvk: Gvk,
    /// Where referrers hold the name.
    pub(crate) referrers: Vec<FieldSpec>,
}

/// Every field-spec table of a build.
///
/// Normalized wherever a [`TransformerConfig`] holds it: no list repeats a
/// spec and no two `nameReference` entries share a gvk, so merging it into
/// empty tables is a plain copy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tables {
    /// `namePrefix` specs.
    pub(crate) name_prefix: Vec<FieldSpec>,
    /// `nameSuffix` specs.
    pub(crate) name_suffix: Vec<FieldSpec>,
    /// `namespace` specs.
    pub(crate) namespace: Vec<FieldSpec>,
    /// `commonLabels` specs.
    pub(crate) common_labels: Vec<FieldSpec>,
    /// `templateLabels` specs.
    pub(crate) template_labels: Vec<FieldSpec>,
    /// `commonAnnotations` specs.
    pub(crate) common_annotations: Vec<FieldSpec>,
    /// `labels` specs (added to every `labels:` entry).
    pub(crate) labels: Vec<FieldSpec>,
    /// `varReference` specs.
    pub(crate) var_reference: Vec<FieldSpec>,
    /// `nameReference` entries.
    pub(crate) name_reference: Vec<NameBackRef>,
    /// `images` specs.
    pub(crate) images: Vec<FieldSpec>,
    /// `replicas` specs.
    pub(crate) replicas: Vec<FieldSpec>,
}

/// Kustomize's built-in field specs as `GetDefaultFieldSpecs` joins them
/// (`api/internal/konfig/builtinpluginconsts/defaultconfig.go`): the YAML of
/// that package's constants, copied into `builtinpluginconsts/` (where its
/// NOTICE says from which commit), `metadataLabelsFieldSpecs` appended to
/// the `commonLabels` and `templateLabels` tables as upstream appends it.
const BUILTIN_FIELD_SPECS: &str = concat!(
    include_str!("builtinpluginconsts/nameprefix.yaml"),
    "\n",
    include_str!("builtinpluginconsts/namesuffix.yaml"),
    "\n",
    include_str!("builtinpluginconsts/commonlabels.yaml"),
    include_str!("builtinpluginconsts/metadatalabels.yaml"),
    "\n",
    include_str!("builtinpluginconsts/templatelabels.yaml"),
    include_str!("builtinpluginconsts/metadatalabels.yaml"),
    "\n",
    include_str!("builtinpluginconsts/commonannotations.yaml"),
    "\n",
    include_str!("builtinpluginconsts/namespace.yaml"),
    "\n",
    include_str!("builtinpluginconsts/varreference.yaml"),
    "\n",
    include_str!("builtinpluginconsts/namereference.yaml"),
    "\n",
    include_str!("builtinpluginconsts/images.yaml"),
    "\n",
    include_str!("builtinpluginconsts/replicas.yaml"),
);

/// The built-in tables, parsed at first use (Kustomize's
/// `MakeDefaultConfig` parses them once too).
static BUILTIN: OnceLock<KResult<TransformerConfig>> = OnceLock::new();

/// The field-spec tables of a build, shared copy-on-write.
///
/// Every kustomization layer merges the built-in tables and each parent
/// merges its children's, so nearly every merge is "built-ins into built-ins"
/// or "built-ins into nothing". Sharing the tables and remembering whether the
/// built-ins are already in makes those merges free, without changing what
/// any merge produces.
#[derive(Debug, Clone, Default)]
pub(crate) struct TransformerConfig {
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
    ///
    /// # Errors
    /// Built-in tables that do not parse (a defect of this program, which
    /// its tests rule out).
    pub(crate) fn builtin() -> KResult<&'static TransformerConfig> {
        // Built once: every kustomization layer merges it.
        BUILTIN
            .get_or_init(|| {
                Ok(TransformerConfig {
                    tables: Arc::new(Tables::builtin_as_written()?.normalized()),
                    has_builtin: true,
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Merges another config in: appends each spec not already present,
    /// keeping first occurrences and their order.
    pub(crate) fn merge(&mut self, o: &TransformerConfig) {
        // Before the built-in tables are built, no `o` can be them.
        let builtin = BUILTIN.get().and_then(|b| b.as_ref().ok());
        // Each shortcut gives exactly what the full merge would: nothing new
        // to add, or (both sides normalized) a copy of `o`.
        if o.tables.is_empty()
            || Arc::ptr_eq(&self.tables, &o.tables)
            || (self.has_builtin && builtin.is_some_and(|b| Arc::ptr_eq(&o.tables, &b.tables)))
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
    pub(crate) fn parse(v: &Value, file: &str) -> KResult<TransformerConfig> {
        Ok(TransformerConfig {
            tables: Arc::new(Tables::parse(v, file)?.normalized()),
            has_builtin: false,
        })
    }
}

impl Tables {
    /// Kustomize's built-in tables as written ([`BUILTIN_FIELD_SPECS`]),
    /// parsed as a `configurations:` file is.
    fn builtin_as_written() -> KResult<Tables> {
        const FILE: &str = "builtinpluginconsts";
        let docs = goyaml::load_all(BUILTIN_FIELD_SPECS).map_err(|e| {
            content(format!(
                "Kustomize's built-in field specs do not parse: {}",
                e.message
            ))
        })?;
        let [d] = docs.as_slice() else {
            return Err(content(
                "Kustomize's built-in field specs are not one YAML document",
            ));
        };
        let mut t = Tables::parse(&d.value, FILE)?;
        // Upstream lists Ingress `spec/tls/secretName` twice among the
        // referrers of Secret. These tables have always held it once: a
        // merge keeps a repeat inside a `nameReference` kind it adds, and a
        // referrer listed twice is applied twice.
        for nb in &mut t.name_reference {
            let mut seen = std::collections::HashSet::new();
            nb.referrers.retain(|f| seen.insert(f.clone()));
        }
        Ok(t)
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
                Step::Builtin => Tables::builtin_as_written().expect("built-in tables"),
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
                Step::Builtin => c.merge(TransformerConfig::builtin().expect("built-in tables")),
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
        let builtin = TransformerConfig::builtin().expect("built-in tables");
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

    #[test]
    fn builtin_tables_are_the_upstream_yaml_whole() {
        let b = TransformerConfig::builtin().expect("built-in tables");
        let sizes = [
            ("namePrefix", b.name_prefix.len(), 1),
            ("nameSuffix", b.name_suffix.len(), 1),
            ("commonLabels", b.common_labels.len(), 32),
            ("templateLabels", b.template_labels.len(), 10),
            ("commonAnnotations", b.common_annotations.len(), 9),
            ("namespace", b.namespace.len(), 3),
            ("varReference", b.var_reference.len(), 72),
            ("nameReference", b.name_reference.len(), 16),
            ("images", b.images.len(), 4),
            ("replicas", b.replicas.len(), 4),
            ("labels", b.labels.len(), 0),
        ];
        for (table, got, want) in sizes {
            assert_eq!(got, want, "{table}");
        }
        // Both metadata-label fragments were appended, the last spec of
        // the fragment included.
        for t in [&b.common_labels, &b.template_labels] {
            assert_eq!(
                t.last().map(|f| f.path.as_str()),
                Some("spec/jobTemplate/spec/template/metadata/labels")
            );
        }
        let referrers = |kind: &str| {
            b.name_reference
                .iter()
                .find(|n| n.gvk.kind == kind)
                .map(|n| n.referrers.clone())
                .unwrap_or_default()
        };
        // Upstream lists Ingress `spec/tls/secretName` twice for Secret.
        let secret = referrers("Secret");
        assert_eq!(secret.len(), 69);
        let tls = secret
            .iter()
            .filter(|f| f.path == "spec/tls/secretName")
            .count();
        assert_eq!(tls, 1);
        assert_eq!(referrers("ConfigMap").len(), 52);
        // An escaped slash stays escaped for the path splitter.
        assert!(secret.iter().any(
            |f| f.path == r"metadata/annotations/nginx.ingress.kubernetes.io\/auth-tls-secret"
        ));
    }
}
