//! Output order (kubectl's legacy sort unless the root kustomization has
//! `sortOptions`) and turning the build into rendered objects.

use std::cmp::Ordering;
use std::collections::HashMap;

use serde_json::Value;

use super::resource::{Gvk, Res, ResId};
use super::{content, KResult};
use crate::render::RenderedObject;

const ORDER_FIRST: &[&str] = &[
    "Namespace",
    "ResourceQuota",
    "StorageClass",
    "CustomResourceDefinition",
    "ServiceAccount",
    "PodSecurityPolicy",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "ConfigMap",
    "Secret",
    "Endpoints",
    "Service",
    "LimitRange",
    "PriorityClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "PodDisruptionBudget",
];

const ORDER_LAST: &[&str] = &[
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

fn type_orders(first: &[String], last: &[String]) -> HashMap<String, i64> {
    let mut m = HashMap::new();
    let n = i64::try_from(first.len()).unwrap_or(0);
    for (i, k) in first.iter().enumerate() {
        m.insert(k.clone(), -n + i64::try_from(i).unwrap_or(0));
    }
    for (i, k) in last.iter().enumerate() {
        m.insert(k.clone(), 1 + i64::try_from(i).unwrap_or(0));
    }
    m
}

fn legacy_id_string(id: &ResId) -> String {
    let ns = if id.namespace.is_empty() {
        "~X"
    } else {
        &id.namespace
    };
    let nm = if id.name.is_empty() { "~N" } else { &id.name };
    format!("{}|{ns}|{nm}", id.gvk.id_string())
}

fn gvk_less(a: &Gvk, b: &Gvk, orders: &HashMap<String, i64>) -> Ordering {
    let ia = orders.get(&a.kind).copied().unwrap_or(0);
    let ib = orders.get(&b.kind).copied().unwrap_or(0);
    if ia != ib {
        return ia.cmp(&ib);
    }
    if a.kind == "Namespace" && b.kind == "Namespace" && (a.group.is_empty() || b.group.is_empty())
    {
        return b.sort_string().cmp(&a.sort_string());
    }
    a.sort_string().cmp(&b.sort_string())
}

/// Sorts the build as kubectl does.
///
/// # Errors
/// Invalid `sortOptions`.
pub(crate) fn sort(res: &mut [Res], opts: Option<&Value>, file: &str) -> KResult<()> {
    let strs = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (first, last) = match opts.filter(|o| !o.is_null()) {
        None => (
            ORDER_FIRST.iter().map(|s| (*s).to_string()).collect(),
            ORDER_LAST.iter().map(|s| (*s).to_string()).collect(),
        ),
        Some(o) => match o.get("order").and_then(Value::as_str).unwrap_or("") {
            "fifo" => {
                if o.get("legacySortOptions").is_some() {
                    return Err(content(format!(
                        "`{file}`: legacySortOptions may only be set with order: legacy"
                    ))
                    .at(file, None));
                }
                return Ok(());
            }
            "legacy" => {
                let l = o.get("legacySortOptions");
                match l {
                    Some(l) if !l.is_null() => {
                        (strs(l.get("orderFirst")), strs(l.get("orderLast")))
                    }
                    _ => (
                        ORDER_FIRST.iter().map(|s| (*s).to_string()).collect(),
                        ORDER_LAST.iter().map(|s| (*s).to_string()).collect(),
                    ),
                }
            }
            other => {
                return Err(
                    content(format!("`{file}`: unknown sortOptions.order `{other}`"))
                        .at(file, None),
                )
            }
        },
    };
    let orders = type_orders(&first, &last);
    res.sort_by(|a, b| {
        let (ia, ib) = (a.cur_id(), b.cur_id());
        if ia.gvk != ib.gvk {
            return gvk_less(&ia.gvk, &ib.gvk, &orders);
        }
        legacy_id_string(&ia).cmp(&legacy_id_string(&ib))
    });
    Ok(())
}

/// The rendered objects, in order.
#[must_use]
pub(crate) fn finish(res: Vec<Res>) -> Vec<RenderedObject> {
    res.into_iter()
        .map(|r| RenderedObject {
            value: r.v,
            origin: r.origin,
        })
        .collect()
}
