//! The field transformers: namespace, name prefix/suffix, labels,
//! annotations, images and replicas, each applied through field specs as
//! Kustomize's builtin plugins do.

use serde_json::{Map, Value};

use super::accumulator::Acc;
use super::fieldpath::{self, CreateKind};
use super::fieldspec::FieldSpec;
use super::image_name::ImageName;
use super::load::Kustomization;
use super::resource::{Gvk, Res};
use super::smp::scalar_text;
use super::{content, KResult};

/// Which RoleBinding subjects the namespace transformer rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Subjects {
    /// Only subjects named `default` (the default).
    DefaultOnly,
    /// Every ServiceAccount subject.
    AllServiceAccounts,
    /// None.
    None,
}

fn set_scalar(node: &mut Value, s: &str) {
    *node = Value::String(s.to_string());
}

/// Kustomize's `NamespaceTransformer`.
///
/// # Errors
/// Field-spec errors and id conflicts after the change.
pub(crate) fn namespace(
    res: &mut [Res],
    ns: &str,
    specs: &[FieldSpec],
    subjects: Subjects,
    unset_only: bool,
) -> KResult<()> {
    let setter = |node: &mut Value| -> KResult<()> {
        if unset_only && node.as_str().is_some_and(|s| !s.is_empty()) {
            return Ok(());
        }
        set_scalar(node, ns);
        Ok(())
    };
    for r in res.iter_mut() {
        if r.v.as_object().is_none_or(Map::is_empty) {
            continue;
        }
        r.store_prev_id();
        let api =
            r.v.get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
        let gvk = r.gvk();
        let mut fs: Vec<FieldSpec> = specs
            .iter()
            .filter(|f| {
                f.path != "metadata/namespace" && !(api != "v1" && f.path == "metadata/name")
            })
            .cloned()
            .collect();
        if !gvk.is_cluster_scoped() {
            let meta = FieldSpec {
                gvk: Gvk::default(),
                path: "metadata/namespace".into(),
                create: true,
            };
            fieldpath::apply(&mut r.v, &meta, CreateKind::Scalar, &mut { setter })?;
        }
        if gvk.kind == "RoleBinding" || gvk.kind == "ClusterRoleBinding" {
            fs.retain(|f| {
                !((f.gvk.kind == "RoleBinding" || f.gvk.kind == "ClusterRoleBinding")
                    && f.path == "subjects/namespace")
            });
            if subjects != Subjects::None {
                if let Some(Value::Array(subs)) = r.v.get_mut("subjects") {
                    for s in subs.iter_mut() {
                        let Some(m) = s.as_object_mut() else { continue };
                        let hit = match subjects {
                            Subjects::DefaultOnly => {
                                m.get("name").and_then(Value::as_str) == Some("default")
                            }
                            _ => m.get("kind").and_then(Value::as_str) == Some("ServiceAccount"),
                        };
                        if hit {
                            let cur = m.entry("namespace").or_insert(Value::String(String::new()));
                            setter(cur)?;
                        }
                    }
                }
            }
        }
        for f in &fs {
            fieldpath::apply(&mut r.v, f, CreateKind::Scalar, &mut { setter })?;
        }
    }
    for i in 0..res.len() {
        let id = res[i].cur_id();
        if res.iter().filter(|o| o.cur_id().same(&id)).count() != 1 {
            return Err(content(format!(
                "namespace transformation produces ID conflict: {}",
                id.display()
            )));
        }
    }
    Ok(())
}

/// The namespace filter with no field specs (metadata.namespace of
/// namespaced kinds and `default` binding subjects), as the
/// `ValueAddTransformer` applies it.
pub(crate) fn namespace_only_meta(r: &mut Res, ns: &str) {
    let gvk = r.gvk();
    if !gvk.is_cluster_scoped() {
        if let Some(m) = r.v.get_mut("metadata").and_then(Value::as_object_mut) {
            m.insert("namespace".into(), Value::String(ns.to_string()));
        }
    }
    if gvk.kind == "RoleBinding" || gvk.kind == "ClusterRoleBinding" {
        if let Some(Value::Array(subs)) = r.v.get_mut("subjects") {
            for s in subs.iter_mut().filter_map(Value::as_object_mut) {
                if s.get("name").and_then(Value::as_str) == Some("default") {
                    s.insert("namespace".into(), Value::String(ns.to_string()));
                }
            }
        }
    }
}

const PREFIX_SKIP: &[(&str, &str)] = &[
    ("", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("", "Namespace"),
];

/// Kustomize's `PrefixTransformer` / `SuffixTransformer` (one of `prefix`,
/// `suffix` is empty).
///
/// # Errors
/// Field-spec errors.
pub(crate) fn prefix_suffix(
    res: &mut [Res],
    prefix: &str,
    suffix: &str,
    specs: &[FieldSpec],
) -> KResult<()> {
    for r in res.iter_mut() {
        let org = r.org_id();
        if PREFIX_SKIP.iter().any(|(g, k)| {
            org.gvk.selected_by(&Gvk {
                group: (*g).into(),
                version: String::new(),
                kind: (*k).into(),
            })
        }) {
            continue;
        }
        for fs in specs {
            if !org.gvk.selected_by(&fs.gvk) {
                continue;
            }
            if fs.path == "metadata/name" {
                if !prefix.is_empty() {
                    r.prefixes.push(prefix.to_string());
                    r.store_prev_id();
                }
                if !suffix.is_empty() {
                    r.suffixes.push(suffix.to_string());
                    r.store_prev_id();
                }
            }
            fieldpath::apply(&mut r.v, fs, CreateKind::None, &mut |node: &mut Value| {
                let cur = scalar_text(node);
                set_scalar(node, &format!("{prefix}{cur}{suffix}"));
                Ok(())
            })?;
        }
    }
    Ok(())
}

fn set_entries(res: &mut [Res], pairs: &[(String, String)], specs: &[FieldSpec]) -> KResult<()> {
    let mut sorted = pairs.to_vec();
    sorted.sort();
    for r in res.iter_mut() {
        for (k, v) in &sorted {
            for fs in specs {
                fieldpath::apply(
                    &mut r.v,
                    fs,
                    CreateKind::Map,
                    &mut |node: &mut Value| match node {
                        Value::Object(m) => {
                            m.insert(k.clone(), Value::String(v.clone()));
                            Ok(())
                        }
                        Value::Null => {
                            let mut m = Map::new();
                            m.insert(k.clone(), Value::String(v.clone()));
                            *node = Value::Object(m);
                            Ok(())
                        }
                        _ => Err(content("expected a map to set labels or annotations in")),
                    },
                )?;
            }
        }
    }
    Ok(())
}

/// Kustomize's `LabelTransformer`.
///
/// # Errors
/// Field-spec errors.
pub(crate) fn labels(
    res: &mut [Res],
    pairs: &[(String, String)],
    specs: &[FieldSpec],
) -> KResult<()> {
    if pairs.is_empty() {
        return Ok(());
    }
    set_entries(res, pairs, specs)
}

/// Kustomize's `AnnotationsTransformer`.
///
/// # Errors
/// Field-spec errors.
pub(crate) fn annotations(
    res: &mut [Res],
    pairs: &[(String, String)],
    specs: &[FieldSpec],
) -> KResult<()> {
    if pairs.is_empty() {
        return Ok(());
    }
    set_entries(res, pairs, specs)
}

fn merge_specs(a: &mut Vec<FieldSpec>, b: &[FieldSpec]) {
    for fs in b {
        if !a.iter().any(|x| x.gvk == fs.gvk && x.path == fs.path) {
            a.push(fs.clone());
        }
    }
}

/// The `labels:` entries, then `commonLabels`.
///
/// # Errors
/// Non-string values, field-spec errors.
pub(crate) fn labels_field(k: &Kustomization, acc: &mut Acc) -> KResult<()> {
    for entry in k.list("labels").to_vec() {
        let pairs = super::load::string_map(entry.get("pairs"), "labels.pairs", &k.file)?;
        let mut fss = entry.get("fields").map(FieldSpec::list).unwrap_or_default();
        merge_specs(&mut fss, &acc.config.labels);
        let flag = |f: &str| entry.get(f).and_then(Value::as_bool).unwrap_or(false);
        if flag("includeSelectors") {
            merge_specs(&mut fss, &acc.config.common_labels);
        } else {
            if flag("includeTemplates") {
                merge_specs(&mut fss, &acc.config.template_labels);
            }
            merge_specs(
                &mut fss,
                &[FieldSpec {
                    gvk: Gvk::default(),
                    path: "metadata/labels".into(),
                    create: true,
                }],
            );
        }
        labels(&mut acc.res, &pairs, &fss)?;
    }
    let common = k.string_map("commonLabels")?;
    labels(&mut acc.res, &common, &acc.config.common_labels)
}

/// Kustomize's `image.Split`: name, tag and digest of an image reference.
#[must_use]
pub(crate) fn split_image(image: &str) -> (String, String, String) {
    let (search, off) = match image.find('/') {
        Some(i) if i > 0 => (&image[i..], i),
        _ => (image, 0),
    };
    let id = search.find('@');
    let ic = search.find(':');
    if let Some(d) = id {
        if ic.is_none_or(|c| d < c) {
            let d = d + off;
            return (
                image[..d].to_string(),
                String::new(),
                image[d + 1..].to_string(),
            );
        }
        if let Some(c) = ic {
            let (d, c) = (d + off, c + off);
            return (
                image[..c].to_string(),
                image[c + 1..d].to_string(),
                image[d + 1..].to_string(),
            );
        }
    }
    match ic {
        Some(c) => {
            let c = c + off;
            (
                image[..c].to_string(),
                image[c + 1..].to_string(),
                String::new(),
            )
        }
        None => (image.to_string(), String::new(), String::new()),
    }
}

struct ImageRule {
    matcher: ImageName,
    new_name: String,
    new_tag: String,
    digest: String,
    tag_suffix: String,
}

impl ImageRule {
    fn update(&self, node: &mut Value) -> KResult<()> {
        let Some(cur) = node.as_str() else {
            if node.is_null() {
                return Ok(());
            }
            return Err(content("an image field must be a string"));
        };
        if !self.matcher.matches(cur) {
            return Ok(());
        }
        let (mut name, mut tag, mut digest) = split_image(cur);
        if !self.new_name.is_empty() {
            name.clone_from(&self.new_name);
        }
        if !self.new_tag.is_empty() && !self.digest.is_empty() {
            tag.clone_from(&self.new_tag);
            digest.clone_from(&self.digest);
        } else if !self.new_tag.is_empty() {
            tag.clone_from(&self.new_tag);
            digest.clear();
        } else if !self.digest.is_empty() {
            tag.clear();
            digest.clone_from(&self.digest);
        } else if !self.tag_suffix.is_empty() {
            tag.push_str(&self.tag_suffix);
            digest.clear();
        }
        if !tag.is_empty() {
            name = format!("{name}:{tag}");
        }
        if !digest.is_empty() {
            name = format!("{name}@{digest}");
        }
        *node = Value::String(name);
        Ok(())
    }
}

fn legacy_images(v: &mut Value, rule: &ImageRule) -> KResult<()> {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                legacy_images(child, rule)?;
                if k == "containers" || k == "initContainers" {
                    if let Value::Array(items) = child {
                        for it in items.iter_mut() {
                            if let Some(img) = it.as_object_mut().and_then(|o| o.get_mut("image")) {
                                rule.update(img)?;
                            }
                        }
                    }
                }
            }
            Ok(())
        }
        Value::Array(a) => {
            for x in a.iter_mut() {
                legacy_images(x, rule)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Kustomize's `ImageTagTransformer` for one `images:` entry.
///
/// # Errors
/// An invalid image name pattern, non-string image fields.
pub(crate) fn image(res: &mut [Res], img: &Value, specs: &[FieldSpec]) -> KResult<()> {
    let s = |f: &str| img.get(f).map(scalar_text).unwrap_or_default();
    let name = s("name");
    let matcher = ImageName::new(&name).map_err(|e| {
        content(format!(
            "images: `{name}` is not a valid image name pattern: {e}"
        ))
    })?;
    let rule = ImageRule {
        matcher,
        new_name: s("newName"),
        new_tag: s("newTag"),
        digest: s("digest"),
        tag_suffix: s("tagSuffix"),
    };
    for r in res.iter_mut() {
        if r.kind() == "CustomResourceDefinition" {
            continue;
        }
        legacy_images(&mut r.v, &rule)?;
        for fs in specs {
            fieldpath::apply(&mut r.v, fs, CreateKind::None, &mut |node: &mut Value| {
                rule.update(node)
            })?;
        }
    }
    Ok(())
}

/// Kustomize's `ReplicaCountTransformer` for one `replicas:` entry.
///
/// # Errors
/// No resource of a replica-bearing kind with that name.
pub(crate) fn replicas(res: &mut [Res], rep: &Value, specs: &[FieldSpec]) -> KResult<()> {
    let name = rep
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let count = rep.get("count").cloned().unwrap_or(Value::from(0));
    let mut found = false;
    for fs in specs {
        let hits: Vec<usize> = res
            .iter()
            .enumerate()
            .filter(|(_, r)| {
                r.all_ids()
                    .iter()
                    .any(|id| id.name == name && id.gvk.selected_by(&fs.gvk))
            })
            .map(|(i, _)| i)
            .collect();
        if !hits.is_empty() {
            found = true;
        }
        for i in hits {
            let c = count.clone();
            fieldpath::apply(
                &mut res[i].v,
                fs,
                CreateKind::Scalar,
                &mut |node: &mut Value| {
                    *node = c.clone();
                    Ok(())
                },
            )?;
        }
    }
    if !found {
        return Err(content(format!(
            "replicas: resource with name `{name}` does not match a config with a replicas field"
        )));
    }
    Ok(())
}
