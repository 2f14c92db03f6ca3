//! What a kustomization accumulates (Kustomize's `ResAccumulator`,
//! `api/internal/accumulator/resaccumulator.go`): its resources, its
//! transformer configuration and its vars, shared by the build and the
//! generators and transformers that work on it.

use serde_json::Value;

use super::fieldspec::TransformerConfig;
use super::resource::{Gvk, Res, ResId};
use super::{content, KResult};

/// What a kustomization accumulates: resources, transformer config and vars.
#[derive(Debug, Default)]
pub(crate) struct Acc {
    /// Resources in accumulation order.
    pub(crate) res: Vec<Res>,
    /// Field-spec tables (built-ins plus `configurations:`).
    pub(crate) config: TransformerConfig,
    /// `vars` with the file declaring them.
    pub(crate) vars: Vec<(Value, String)>,
}

impl Acc {
    /// Appends a resource, refusing a second resource with the same id.
    ///
    /// # Errors
    /// Id conflicts.
    pub(crate) fn append(&mut self, r: Res) -> KResult<()> {
        let id = r.cur_id();
        if self.res.iter().any(|o| o.cur_id().same(&id)) {
            return Err(content(format!(
                "may not add resource with an already registered id: {}",
                id.display()
            )));
        }
        self.res.push(r);
        Ok(())
    }

    /// Appends many resources, refusing id conflicts as [`Acc::append`]
    /// does, with one index of the ids by name instead of a scan of every
    /// resource per append: a file of thousands of resources stays linear.
    ///
    /// # Errors
    /// Id conflicts.
    pub(crate) fn append_all(&mut self, rs: Vec<Res>) -> KResult<()> {
        let mut by_name: std::collections::HashMap<String, Vec<ResId>> =
            std::collections::HashMap::new();
        for o in &self.res {
            let id = o.cur_id();
            by_name.entry(id.name.clone()).or_default().push(id);
        }
        for r in rs {
            let id = r.cur_id();
            let same_name = by_name.entry(id.name.clone()).or_default();
            if same_name.iter().any(|o| o.same(&id)) {
                return Err(content(format!(
                    "may not add resource with an already registered id: {}",
                    id.display()
                )));
            }
            same_name.push(id);
            self.res.push(r);
        }
        Ok(())
    }

    /// Kustomize's `MergeVars`: each new var is bound to the one resource
    /// its `objref` names (by any id) at the layer declaring it.
    ///
    /// # Errors
    /// A var whose `objref` names more than one resource.
    pub(crate) fn bind_vars(&mut self, vars: &[(Value, String)]) -> KResult<()> {
        for (v, file) in vars {
            let name = var_name(v);
            let target = objref_id(v);
            let exact = !target.namespace.is_empty() || target.gvk.is_cluster_scoped();
            let hits: Vec<usize> = self
                .res
                .iter()
                .enumerate()
                .filter(|(_, r)| {
                    r.all_ids().iter().any(|id| {
                        if exact {
                            id.same(&target)
                        } else {
                            id.name == target.name && id.gvk == target.gvk
                        }
                    })
                })
                .map(|(i, _)| i)
                .collect();
            if hits.len() > 1 {
                return Err(content(format!(
                    "`{file}`: found {} resId matches for var `{name}` (unable to disambiguate)",
                    hits.len()
                ))
                .at(file.clone(), None));
            }
            if let Some(i) = hits.first() {
                self.res[*i].ref_vars.push(name);
            }
        }
        Ok(())
    }

    /// Appends vars (Kustomize's `VarSet.MergeSlice`), refusing a name
    /// already declared.
    ///
    /// # Errors
    /// A var name declared twice.
    pub(crate) fn merge_vars(&mut self, vars: Vec<(Value, String)>) -> KResult<()> {
        for (v, file) in vars {
            let name = var_name(&v);
            let name = name.as_str();
            if self.vars.iter().any(|(o, _)| var_name(o) == name) {
                return Err(
                    content(format!("`{file}`: var `{name}` already encountered")).at(file, None),
                );
            }
            self.vars.push((v, file));
        }
        Ok(())
    }
}

/// Finds the resources matching any id (current or previous) of `id`.
#[must_use]
pub(crate) fn matching_any_id(res: &[Res], id: &ResId) -> Vec<usize> {
    res.iter()
        .enumerate()
        .filter(|(_, r)| r.all_ids().iter().any(|i| i.same(id)))
        .map(|(i, _)| i)
        .collect()
}

/// A field by name, falling back to a case-insensitive match as Go's
/// `encoding/json` does when Kustomize decodes its types.
pub(crate) fn get_ci<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    let m = v.as_object()?;
    m.get(key).or_else(|| {
        m.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, x)| x)
    })
}

/// A var's name.
#[must_use]
pub(crate) fn var_name(v: &Value) -> String {
    get_ci(v, "name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// The id a var's `objref` names (apiVersion split into group/version).
#[must_use]
pub(crate) fn objref_id(v: &Value) -> ResId {
    let o = get_ci(v, "objref").cloned().unwrap_or(Value::Null);
    let s = |f: &str| {
        get_ci(&o, f)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let mut gvk = Gvk {
        group: s("group"),
        version: s("version"),
        kind: s("kind"),
    };
    let av = s("apiVersion");
    if !av.is_empty() {
        let g = Gvk::new(&av, "");
        gvk.group = g.group;
        gvk.version = g.version;
    }
    ResId {
        gvk,
        name: s("name"),
        namespace: s("namespace"),
    }
}
