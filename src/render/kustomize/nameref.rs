//! Name-reference fixing (Kustomize's `nameReferenceTransformer`): after
//! hashing, every referrer field whose value is a previous name of a
//! resource of the referenced kind is rewritten to that resource's current
//! name (and, for `{name, namespace}` references, namespace).

use std::collections::HashMap;

use serde_json::Value;

use super::fieldpath::{self, CreateKind};
use super::fieldspec::{FieldSpec, TransformerConfig};
use super::resource::{prefix_suffix_equals, Gvk, Res};
use super::{content, KResult};

/// Resources a referrer may point at (Kustomize's
/// `SubsetThatCouldBeReferencedByResource`).
fn candidates(res: &[Res], referrer: &Res) -> Vec<usize> {
    let rid = referrer.cur_id();
    if rid.gvk.is_cluster_scoped() {
        return (0..res.len()).collect();
    }
    let mut rb_ns: Vec<String> = Vec::new();
    if referrer.kind() == "RoleBinding" {
        for s in referrer
            .v
            .get("subjects")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if s.get("kind").and_then(Value::as_str) == Some("ServiceAccount") {
                if let Some(ns) = s.get("namespace").and_then(Value::as_str) {
                    rb_ns.push(ns.to_string());
                }
            }
        }
    }
    res.iter()
        .enumerate()
        .filter(|(_, t)| {
            let id = t.cur_id();
            id.gvk.is_cluster_scoped()
                || id.effective_ns() == rid.effective_ns()
                || rb_ns.iter().any(|n| n == t.namespace())
        })
        .map(|(i, _)| i)
        .collect()
}

struct Ctx<'a> {
    res: &'a [Res],
    /// Resources by every previous name (only renamed or moved resources
    /// can be referral candidates).
    by_prev_name: &'a HashMap<String, Vec<usize>>,
    referrer: &'a Res,
    spec: &'a FieldSpec,
    target: &'a Gvk,
    cands: &'a [usize],
}

impl Ctx<'_> {
    fn select(&self, old: &str, cands: &[usize], same_ns_too: bool) -> KResult<Option<usize>> {
        let res = self.res;
        let Some(named) = self.by_prev_name.get(old) else {
            return Ok(None);
        };
        let mut c: Vec<usize> = named
            .iter()
            .copied()
            .filter(|i| cands.binary_search(i).is_ok())
            .filter(|i| {
                res[*i]
                    .prev_ids()
                    .iter()
                    .any(|id| id.gvk.selected_by(self.target))
            })
            .collect();
        if self.spec.path.ends_with("roleRef/name") {
            if let Some(rr) = self.referrer.v.get("roleRef") {
                let g = rr.get("apiGroup").and_then(Value::as_str);
                let k = rr.get("kind").and_then(Value::as_str);
                if let (Some(g), Some(k)) = (g, k) {
                    let gvk = Gvk {
                        group: g.to_string(),
                        version: String::new(),
                        kind: k.to_string(),
                    };
                    c.retain(|i| res[*i].prev_ids().iter().any(|id| id.gvk.selected_by(&gvk)));
                }
            }
        }
        let rid = self.referrer.cur_id();
        if !rid.gvk.is_cluster_scoped() {
            c.retain(|i| {
                let t = res[*i].cur_id();
                t.gvk.is_cluster_scoped()
                    || res[*i].kind() == "ServiceAccount"
                    || t.effective_ns() == rid.effective_ns()
            });
        }
        if c.len() == 1 {
            return Ok(Some(c[0]));
        }
        c.retain(|i| prefix_suffix_equals(&res[*i], self.referrer, true));
        if c.len() > 1 {
            c.retain(|i| prefix_suffix_equals(&res[*i], self.referrer, false));
        }
        match c.len() {
            0 => Ok(None),
            1 => Ok(Some(c[0])),
            _ => {
                let first = &res[c[0]];
                let same = c.iter().all(|i| {
                    res[*i].name() == first.name()
                        && (!same_ns_too || res[*i].namespace() == first.namespace())
                });
                if same {
                    Ok(Some(c[0]))
                } else {
                    let ids: Vec<String> = c.iter().map(|i| res[*i].cur_id().display()).collect();
                    Err(content(format!(
                        "found multiple possible referrals for `{old}` in {}: {}",
                        self.referrer.cur_id().display(),
                        ids.join(", ")
                    )))
                }
            }
        }
    }

    fn set_scalar(&self, node: &mut Value) -> KResult<()> {
        let Some(old) = node.as_str().map(str::to_string) else {
            return Ok(());
        };
        if let Some(i) = self.select(&old, self.cands, false)? {
            let new = self.res[i].name();
            if new != old {
                *node = Value::String(new.to_string());
            }
        }
        Ok(())
    }

    fn set_mapping(&self, node: &mut Value) -> KResult<()> {
        let Some(m) = node.as_object_mut() else {
            return Ok(());
        };
        let Some(name) = m.get("name") else {
            return Err(content("path config error; no `name` field in node"));
        };
        let old = super::smp::scalar_text(name);
        let cands: Vec<usize> = match m.get("namespace") {
            None => self.cands.to_vec(),
            Some(nsv) => {
                let ns = super::smp::scalar_text(nsv);
                let by_org: Vec<usize> = self
                    .cands
                    .iter()
                    .copied()
                    .filter(|i| {
                        let e = self.res[*i].org_id().effective_ns();
                        e != "_non_namespaceable_" && e == ns
                    })
                    .collect();
                if by_org.is_empty() {
                    self.cands
                        .iter()
                        .copied()
                        .filter(|i| {
                            let e = self.res[*i].cur_id().effective_ns();
                            e != "_non_namespaceable_" && e == ns
                        })
                        .collect()
                } else {
                    by_org
                }
            }
        };
        let Some(i) = self.select(&old, &cands, true)? else {
            return Ok(());
        };
        let r = &self.res[i];
        if r.name() == old && r.namespace().is_empty() {
            return Ok(());
        }
        m.insert("name".into(), Value::String(r.name().to_string()));
        if !r.namespace().is_empty() {
            m.insert("namespace".into(), Value::String(r.namespace().to_string()));
        }
        Ok(())
    }

    fn set(&self, node: &mut Value) -> KResult<()> {
        match node {
            Value::Null => Ok(()),
            Value::Object(_) => self.set_mapping(node),
            Value::Array(items) => {
                for it in items.iter_mut() {
                    match it {
                        Value::Object(_) => self.set_mapping(it)?,
                        Value::Array(_) | Value::Null => {}
                        _ => self.set_scalar(it)?,
                    }
                }
                Ok(())
            }
            _ => self.set_scalar(node),
        }
    }
}

/// Rewrites every name reference to the referenced resource's final name.
///
/// # Errors
/// Ambiguous references and malformed referrer fields.
pub(crate) fn fix(res: &mut [Res], config: &TransformerConfig) -> KResult<()> {
    let mut by_prev_name: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, r) in res.iter().enumerate() {
        for p in &r.prev {
            let e = by_prev_name.entry(p.name.clone()).or_default();
            if e.last() != Some(&i) {
                e.push(i);
            }
        }
    }
    if by_prev_name.is_empty() {
        return Ok(());
    }
    for ri in 0..res.len() {
        let org = res[ri].org_id();
        let mut filters: Vec<(FieldSpec, Gvk)> = Vec::new();
        for br in &config.name_reference {
            for spec in &br.referrers {
                if org.gvk.selected_by(&spec.gvk) {
                    filters.push((spec.clone(), br.gvk.clone()));
                }
            }
        }
        if filters.is_empty() {
            continue;
        }
        let cands = candidates(res, &res[ri]);
        let mut v = res[ri].v.clone();
        for (spec, target) in filters {
            {
                let ctx = Ctx {
                    res,
                    by_prev_name: &by_prev_name,
                    referrer: &res[ri],
                    spec: &spec,
                    target: &target,
                    cands: &cands,
                };
                // The referrer's own gvk, as Kustomize sets it on the spec.
                let fs = FieldSpec {
                    gvk: Gvk::default(),
                    path: spec.path.clone(),
                    create: false,
                };
                fieldpath::apply(&mut v, &fs, CreateKind::None, &mut |n: &mut Value| {
                    ctx.set(n)
                })
                .map_err(|mut e| {
                    e.message = format!(
                        "updating name reference in {}: {}",
                        res[ri].cur_id().display(),
                        e.message
                    );
                    e
                })?;
            }
        }
        res[ri].v = v;
    }
    Ok(())
}
