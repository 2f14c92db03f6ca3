//! Values as helm v3.17 computes them: the user's values merged from value
//! files and `--set` flags (`pkg/cli/values/options.go` `MergeValues`),
//! subcharts enabled or removed by `condition` and `tags`, aliases applied
//! and `import-values` imported (`pkg/chartutil/dependencies.go`
//! `ProcessDependenciesWithMerge`), then coalesced with every chart's
//! defaults, `global` copied down to subcharts (`pkg/chartutil/coalesce.go`).
//!
//! Go's maps are unordered, and so is every loop over one here: the
//! results do not depend on the order (helm's only order-dependent output
//! is a warning on its standard error).
//!
//! Tables are changed in place, as Go changes them, on fresh copies of the
//! user's values and of each chart's defaults (`copyValues`, and
//! `coalesceValues`' `copystructure.Copy`). So one sharing is helm's own:
//! `coalesceGlobals` copies only the top of each table of `global`
//! (`copyMap`), and a table nested in one is one map for the chart and its
//! subcharts, which every later merge into it changes for all of them (a
//! subchart's default `global.a.b.c` shows in its parent's values).

use std::collections::BTreeMap;

use super::chart::{Chart, Dependency};
use gotemplate::go::semver::{Constraint, Version};
use gotemplate::{SharedMap, V};

/// A values table (`map[string]interface{}`).
pub(in crate::render::helm) type Map = BTreeMap<String, V>;

/// How coalescing treats nulls, by helm release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(in crate::render::helm) enum Nulls {
    /// Helm 3: a null deletes the key under it, the chart's own included.
    #[default]
    Helm3,
    /// Helm v4.2 (`pkg/chart/common/util/coalesce.go` at v4.2.1): a
    /// chart default's null is dropped before it merges (`cleanNilValues`),
    /// and a null over a null default is kept (`coalesceTablesFullKey`'s
    /// `srcOriginalNonNil`).
    Helm4,
}

/// `IsCompatibleRange`: whether `version` satisfies `constraint` (both
/// must parse).
#[must_use]
pub(in crate::render::helm) fn is_compatible_range(constraint: &str, version: &str) -> bool {
    match (Constraint::parse(constraint), Version::parse(version)) {
        (Ok(c), Ok(v)) => c.check(&v),
        _ => false,
    }
}

/// `mergeMaps` of `pkg/cli/values/options.go`: `b` over `a`, tables
/// merged key by key, anything else replaced (a `null` kept).
pub(in crate::render::helm) fn merge_maps(a: &mut Map, b: Map) {
    for (k, v) in b {
        if let V::Map(bv) = v {
            if let Some(V::Map(av)) = a.get_mut(&k) {
                merge_maps(av.make_mut(), bv.into_entries());
                continue;
            }
            a.insert(k, V::Map(bv));
        } else {
            a.insert(k, v);
        }
    }
}

/// `CoalesceValues`: `vals` over the defaults of `chart` and of its
/// subcharts, `null` deleting a key.
///
/// # Errors
/// A subchart's key that holds something other than a table.
pub(in crate::render::helm) fn coalesce_values(
    chart: &Chart,
    vals: &Map,
    nulls: Nulls,
) -> Result<Map, String> {
    let mut dest = fresh_copy(vals)?;
    coalesce(chart, &mut dest, false, nulls)?;
    Ok(dest)
}

/// `MergeValues`: as [`coalesce_values`], `null` kept.
///
/// # Errors
/// As [`coalesce_values`].
pub(in crate::render::helm) fn merge_values(
    chart: &Chart,
    vals: &Map,
    nulls: Nulls,
) -> Result<Map, String> {
    let mut dest = fresh_copy(vals)?;
    coalesce(chart, &mut dest, true, nulls)?;
    Ok(dest)
}

/// `copystructure.Copy` of a values table: no map shared with `vals`, so
/// the in-place merges below change nothing of the caller's.
fn fresh_copy(vals: &Map) -> Result<Map, String> {
    /// Deeper than any values document may nest (YAML loading stops sooner).
    const DEPTH: usize = 10_000;
    vals.iter()
        .map(|(k, v)| Some((k.clone(), v.deep_copy(DEPTH)?)))
        .collect::<Option<Map>>()
        .ok_or_else(|| "values nest deeper than gitops-lint copies".to_string())
}

fn coalesce(ch: &Chart, dest: &mut Map, merge: bool, nulls: Nulls) -> Result<(), String> {
    coalesce_into(ch, dest, merge, nulls)?;
    coalesce_deps(ch, dest, merge, nulls)
}

/// Go's `%t` of a value that is not a bool, as `errors.Errorf` prints it.
fn go_percent_t(v: &V) -> String {
    match v {
        V::Bool(b) => b.to_string(),
        V::Nil | V::Missing => "%!t(<nil>)".into(),
        V::Int(i) => format!("%!t(int={i})"),
        V::Int64(i) => format!("%!t(int64={i})"),
        V::Float(f) => format!("%!t(float64={})", gotemplate::value::format_float_g(*f)),
        V::Str(s) => format!("%!t(string={s})"),
        V::List(l) => format!(
            "[{}]",
            l.iter().map(go_percent_t).collect::<Vec<_>>().join(" ")
        ),
        V::Host(h) => go_percent_t(&h.0.value()),
        V::Map(m) => format!(
            "map[{}]",
            m.entries()
                .iter()
                .map(|(k, v)| format!("{k}:{}", go_percent_t(v)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// `coalesceDeps`.
fn coalesce_deps(ch: &Chart, dest: &mut Map, merge: bool, nulls: Nulls) -> Result<(), String> {
    for sub in &ch.dependencies {
        let name = sub.name().to_string();
        let mut dv = match dest.remove(&name) {
            None => Map::new(),
            Some(V::Map(m)) => m.into_entries(),
            Some(other) => {
                let msg = format!("type mismatch on {name}: {}", go_percent_t(&other));
                dest.insert(name, other);
                return Err(msg);
            }
        };
        coalesce_globals(&mut dv, dest)?;
        coalesce(sub, &mut dv, merge, nulls)?;
        dest.insert(name, V::map(dv));
    }
    Ok(())
}

/// `coalesceGlobals`: the parent's `global` over the subchart's. Each
/// table of the parent's is copied one level deep (`copyMap`): the tables
/// inside it stay the parent's, and merging into them changes them for
/// the parent and every chart holding them.
fn coalesce_globals(dest: &mut Map, src: &Map) -> Result<(), String> {
    let dg = match dest.get("global") {
        None => SharedMap::default(),
        Some(V::Map(m)) => m.clone(),
        // "skipping globals because destination global is not a table"
        Some(_) => return Ok(()),
    };
    let sg = match src.get("global") {
        None => Map::new(),
        Some(V::Map(m)) => m.entries().as_ref().clone(),
        Some(_) => return Ok(()),
    };
    for (key, val) in sg {
        match val {
            V::Map(vm) => {
                let vv = SharedMap::new(vm.entries().as_ref().clone());
                match dg.get(&key) {
                    None => {}
                    Some(V::Map(destv)) => {
                        // Top-down: the parent's tables win, nulls kept
                        // (the coalesce that follows removes them).
                        // With `merge`, Helm 4's nulls change nothing here.
                        coalesce_shared(&vv, &destv.entries(), true, Nulls::Helm3)?;
                    }
                    // "cannot merge map onto non-map"
                    Some(_) => continue,
                }
                dg.update(|m| m.insert(key, V::Map(vv)))?;
            }
            // "key is table. Skipping"
            _ if matches!(dg.get(&key), Some(V::Map(_))) => {}
            other => {
                dg.update(|m| m.insert(key, other))?;
            }
        }
    }
    dest.insert("global".into(), V::Map(dg));
    Ok(())
}

/// `coalesceValues`: the chart's defaults under `v`.
fn coalesce_into(c: &Chart, v: &mut Map, merge: bool, nulls: Nulls) -> Result<(), String> {
    let helm4 = nulls == Nulls::Helm4;
    for (key, val) in fresh_copy(&c.values)? {
        match v.get(&key) {
            None => {
                // Helm 4: "skip chart default nils and clean nils from
                // nested maps so they don't shadow globals".
                if helm4 && !merge {
                    match &val {
                        V::Nil => continue,
                        V::Map(sub) => clean_nil_values(sub)?,
                        _ => {}
                    }
                }
                v.insert(key, val);
            }
            Some(V::Nil) if !merge => {
                v.remove(&key);
            }
            Some(V::Map(dest)) => {
                // "skipped value: Not a table" otherwise.
                if let V::Map(src) = val {
                    let merge = merge || c.dependencies.iter().any(|s| s.name() == key);
                    if helm4 && !merge {
                        clean_nil_values(&src)?;
                    }
                    coalesce_shared(dest, &src.entries(), merge, nulls)?;
                }
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// `cleanNilValues` (Helm 4): the nulls of `m` and of its tables removed,
/// in place.
fn clean_nil_values(m: &SharedMap) -> Result<(), String> {
    for (key, val) in m.entries().iter() {
        match val {
            V::Nil => {
                m.update(|t| t.remove(key))?;
            }
            V::Map(sub) => clean_nil_values(sub)?,
            _ => {}
        }
    }
    Ok(())
}

/// `coalesceTablesFullKey`: `src` under `dst` (`dst` wins), `dst`'s
/// tables changed in place.
pub(in crate::render::helm) fn coalesce_tables(
    dst: &mut Map,
    src: Map,
    merge: bool,
    nulls: Nulls,
) -> Result<(), String> {
    for (key, val) in src {
        match dst.get(&key) {
            Some(V::Nil) if !merge && nulls_delete(nulls, &val) => {
                dst.remove(&key);
            }
            None => {
                dst.insert(key, val);
            }
            Some(V::Map(dm)) => {
                if let V::Map(sv) = val {
                    coalesce_shared(dm, &sv.entries(), merge, nulls)?;
                }
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Whether a null over `src` deletes its key: always in Helm 3; in Helm 4
/// only over a value that is not null (`srcOriginalNonNil`).
fn nulls_delete(nulls: Nulls, src: &V) -> bool {
    nulls == Nulls::Helm3 || !matches!(src, V::Nil)
}

/// [`coalesce_tables`] into a table held in other tables: changed in
/// place, for every holder, as Go's map is.
fn coalesce_shared(dst: &SharedMap, src: &Map, merge: bool, nulls: Nulls) -> Result<(), String> {
    for (key, val) in src {
        match dst.get(key) {
            Some(V::Nil) if !merge && nulls_delete(nulls, val) => {
                dst.update(|m| m.remove(key))?;
            }
            None => {
                dst.update(|m| m.insert(key.clone(), val.clone()))?;
            }
            Some(V::Map(dm)) => {
                if let V::Map(sv) = val {
                    coalesce_shared(&dm, &sv.entries(), merge, nulls)?;
                }
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// `Values.Table`: the table at the dotted path `name`.
#[must_use]
pub(in crate::render::helm) fn table(v: &Map, name: &str) -> Option<Map> {
    let mut cur = v.clone();
    for part in name.split('.') {
        let next = match cur.get(part) {
            Some(V::Map(m)) => m.entries().as_ref().clone(),
            _ => return None,
        };
        cur = next;
    }
    Some(cur)
}

/// `Values.PathValue`: the value (not a table) at the dotted path.
#[must_use]
pub(in crate::render::helm) fn path_value(v: &Map, path: &str) -> Option<V> {
    if path.is_empty() {
        return None;
    }
    let (head, key) = match path.rsplit_once('.') {
        Some((h, k)) => (Some(h), k),
        None => (None, path),
    };
    let t = match head {
        Some(h) => table(v, h)?,
        None => v.clone(),
    };
    t.get(key).filter(|x| !matches!(x, V::Map(_))).cloned()
}

/// `ProcessDependenciesWithMerge`: subcharts enabled or removed, aliases
/// applied, then `import-values` imported, on `c` in place.
///
/// # Errors
/// A coalesce error (a subchart key that is not a table).
pub(in crate::render::helm) fn process_dependencies(
    c: &mut Chart,
    vals: &Map,
    nulls: Nulls,
) -> Result<(), String> {
    process_enabled(c, vals, "", nulls)?;
    process_import_values_tree(c, nulls)
}

/// `getAliasDependency`: a copy of the subchart `dep` names, renamed to
/// its alias.
fn alias_dependency(charts: &[Chart], dep: &Dependency) -> Option<Chart> {
    let c = charts
        .iter()
        .find(|c| c.name() == dep.name && is_compatible_range(&dep.version, &c.metadata.version))?;
    let mut out = c.clone();
    if !dep.alias.is_empty() {
        out.metadata.name.clone_from(&dep.alias);
    }
    Some(out)
}

/// `processDependencyEnabled`.
fn process_enabled(c: &mut Chart, v: &Map, path: &str, nulls: Nulls) -> Result<(), String> {
    let Some(mut reqs) = c.metadata.dependencies.take() else {
        return Ok(());
    };
    let existing = std::mem::take(&mut c.dependencies);
    let mut chart_deps: Vec<Chart> = existing
        .iter()
        .filter(|e| {
            !reqs
                .iter()
                .any(|r| e.name() == r.name && is_compatible_range(&r.version, &e.metadata.version))
        })
        .cloned()
        .collect();
    for req in &mut reqs {
        if let Some(d) = alias_dependency(&existing, req) {
            chart_deps.push(d);
        }
        if !req.alias.is_empty() {
            req.name.clone_from(&req.alias);
        }
    }
    for r in &mut reqs {
        r.enabled = true;
    }
    c.dependencies = chart_deps;
    c.metadata.dependencies = Some(reqs);
    let cvals = coalesce_values(c, v, nulls)?;
    let reqs = c
        .metadata
        .dependencies
        .as_mut()
        .map_or(&mut [][..], |r| &mut r[..]);
    process_tags(reqs, &cvals);
    process_conditions(reqs, &cvals, path);
    let removed: Vec<String> = reqs
        .iter()
        .filter(|r| !r.enabled)
        .map(|r| r.name.clone())
        .collect();
    c.dependencies
        .retain(|d| !removed.iter().any(|n| n == d.name()));
    if let Some(r) = c.metadata.dependencies.as_mut() {
        r.retain(|d| !removed.contains(&d.name));
    }
    for t in &mut c.dependencies {
        let sub = format!("{path}{}.", t.name());
        process_enabled(t, &cvals, &sub, nulls)?;
    }
    Ok(())
}

/// `processDependencyTags`: a dependency with a `false` tag and no `true`
/// one is disabled; any other is enabled.
fn process_tags(reqs: &mut [Dependency], cvals: &Map) {
    let Some(tags) = table(cvals, "tags") else {
        return;
    };
    for r in reqs {
        let (mut has_true, mut has_false) = (false, false);
        for k in &r.tags {
            if let Some(V::Bool(b)) = tags.get(k) {
                if *b {
                    has_true = true;
                } else {
                    has_false = true;
                }
            }
        }
        r.enabled = has_true || !has_false;
    }
}

/// `processDependencyConditions`: the first condition path holding a bool
/// decides.
fn process_conditions(reqs: &mut [Dependency], cvals: &Map, path: &str) {
    for r in reqs {
        for cond in r.condition.trim().split(',') {
            if cond.is_empty() {
                continue;
            }
            if let Some(V::Bool(b)) = path_value(cvals, &format!("{path}{cond}")) {
                r.enabled = b;
                break;
            }
        }
    }
}

/// `processDependencyImportValues`: subcharts first, then the chart.
fn process_import_values_tree(c: &mut Chart, nulls: Nulls) -> Result<(), String> {
    for d in &mut c.dependencies {
        process_import_values_tree(d, nulls)?;
    }
    process_import_values(c, nulls)
}

/// `Values.Table` as `processImportValues` uses it: the table at the
/// dotted path `name` itself, shared with `v` (`tableLookup` returns the
/// map it finds), so what is merged into the copy later changes it in `v`.
fn shared_table(v: &Map, name: &str) -> Option<SharedMap> {
    let mut parts = name.split('.');
    let Some(V::Map(mut cur)) = parts.next().and_then(|p| v.get(p)).cloned() else {
        return None;
    };
    for part in parts {
        let Some(V::Map(next)) = cur.get(part) else {
            return None;
        };
        cur = next;
    }
    Some(cur)
}

/// `pathToMap`: `data` placed at the dotted path (`.` is the top, which
/// merging then copies entry by entry); below the top it is the very
/// table.
fn path_to_map(path: &str, data: SharedMap) -> Map {
    if path == "." {
        return data.entries().as_ref().clone();
    }
    let mut cur = V::Map(data);
    for part in path.split('.').rev() {
        cur = V::map([(part.to_string(), cur)].into());
    }
    match cur {
        V::Map(m) => m.into_entries(),
        _ => Map::new(),
    }
}

/// `processImportValues` with merge: the chart's values become its
/// defaults merged with every subchart's (nulls kept), the imported
/// tables beneath them.
fn process_import_values(c: &mut Chart, nulls: Nulls) -> Result<(), String> {
    let Some(reqs) = c.metadata.dependencies.clone() else {
        return Ok(());
    };
    let cvals = merge_values(c, &Map::new(), nulls)?;
    let mut b = Map::new();
    let mut rewritten = Vec::new();
    for r in &reqs {
        let mut out = Vec::new();
        for iv in &r.import_values {
            let (child, parent) = match iv {
                serde_json::Value::Object(m) => (
                    m.get("child").and_then(serde_json::Value::as_str),
                    m.get("parent").and_then(serde_json::Value::as_str),
                ),
                serde_json::Value::String(s) => {
                    let child = format!("exports.{s}");
                    out.push(serde_json::json!({"child": child, "parent": "."}));
                    if let Some(t) = shared_table(&cvals, &format!("{}.{child}", r.name)) {
                        coalesce_tables(&mut b, path_to_map(".", t), true, nulls)?;
                    }
                    continue;
                }
                _ => continue,
            };
            let (Some(child), Some(parent)) = (child, parent) else {
                return Err(format!(
                    "import-values of dependency {:?} needs a `child` and a `parent` string",
                    r.name
                ));
            };
            out.push(serde_json::json!({"child": child, "parent": parent}));
            if let Some(t) = shared_table(&cvals, &format!("{}.{child}", r.name)) {
                coalesce_tables(&mut b, path_to_map(parent, t), true, nulls)?;
            }
        }
        rewritten.push(out);
    }
    if let Some(deps) = c.metadata.dependencies.as_mut() {
        for (d, iv) in deps.iter_mut().zip(rewritten) {
            d.import_values = iv;
        }
    }
    let mut values = cvals;
    coalesce_tables(&mut values, b, true, nulls)?;
    c.values = values;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::chart::Metadata;
    use super::*;

    fn map(json: serde_json::Value) -> Map {
        match V::from_json(&json) {
            V::Map(m) => m.into_entries(),
            _ => Map::new(),
        }
    }

    fn chart(name: &str, values: serde_json::Value, deps: Vec<Chart>) -> Chart {
        Chart {
            metadata: Metadata {
                name: name.into(),
                version: "1.0.0".into(),
                api_version: "v2".into(),
                ..Metadata::default()
            },
            values: map(values),
            dependencies: deps,
            ..Chart::default()
        }
    }

    fn dep(name: &str, extra: impl FnOnce(&mut Dependency)) -> Dependency {
        let mut d = Dependency {
            name: name.into(),
            version: "1.0.0".into(),
            ..Dependency::default()
        };
        extra(&mut d);
        d
    }

    fn json(m: &Map) -> serde_json::Value {
        V::map(m.clone()).to_json()
    }

    // Expectations below were taken from helm v3.17.1 (`toYaml .Values`).

    #[test]
    fn null_deletes_a_default_and_tables_merge() {
        let c = chart(
            "app",
            serde_json::json!({"a": {"b": 1, "c": 2}, "d": 3, "e": [1, 2]}),
            Vec::new(),
        );
        let user = map(serde_json::json!({"a": {"b": null, "x": 9}, "d": null, "e": [3]}));
        let v = coalesce_values(&c, &user, Nulls::Helm3).expect("coalesces");
        assert_eq!(
            json(&v),
            serde_json::json!({"a": {"c": 2, "x": 9}, "e": [3]})
        );
        let m = merge_values(&c, &user, Nulls::Helm3).expect("merges");
        assert_eq!(
            json(&m),
            serde_json::json!({"a": {"b": null, "c": 2, "x": 9}, "d": null, "e": [3]})
        );
    }

    #[test]
    fn globals_flow_down_and_the_parent_wins() {
        let sub = chart(
            "db",
            serde_json::json!({"global": {"region": "eu", "tier": {"a": 1, "b": 2}}, "port": 5432}),
            Vec::new(),
        );
        let c = chart(
            "app",
            serde_json::json!({"global": {"region": "us", "tier": {"a": 9}}, "db": {"port": 1}}),
            vec![sub],
        );
        let v = coalesce_values(&c, &Map::new(), Nulls::Helm3).expect("coalesces");
        assert_eq!(
            json(&v)["db"],
            serde_json::json!({"global": {"region": "us", "tier": {"a": 9, "b": 2}}, "port": 1})
        );
        let bad = map(serde_json::json!({"db": "off"}));
        assert_eq!(
            coalesce_values(&c, &bad, Nulls::Helm3).err().as_deref(),
            Some("type mismatch on db: %!t(string=off)")
        );
    }

    #[test]
    fn a_table_nested_in_a_global_table_is_shared_by_every_chart() {
        // helm v3.17.1 on this chart (testdata/kustomize-helm/global-tables
        // is the same shape): the subcharts' defaults two levels into
        // `global` show in the parent and in each other; one level in, a
        // subchart's own copy keeps them.
        let s1 = chart(
            "s1",
            serde_json::json!({"global": {"x": {"tls": {"b": 2}, "z": 3}}}),
            Vec::new(),
        );
        let s2 = chart(
            "s2",
            serde_json::json!({"global": {"x": {"tls": {"c": 4}}}}),
            Vec::new(),
        );
        let p = chart(
            "p",
            serde_json::json!({"global": {"x": {"tls": {"a": 1}}}}),
            vec![s1, s2],
        );
        let v = json(&coalesce_values(&p, &Map::new(), Nulls::Helm3).expect("coalesces"));
        let all = serde_json::json!({"a": 1, "b": 2, "c": 4});
        assert_eq!(v["global"], serde_json::json!({"x": {"tls": all}}));
        assert_eq!(
            v["s1"]["global"],
            serde_json::json!({"x": {"tls": all, "z": 3}})
        );
        assert_eq!(v["s2"]["global"], serde_json::json!({"x": {"tls": all}}));
        // Each coalesce starts from copies: the charts' defaults are not
        // changed.
        assert_eq!(
            json(&p.values)["global"],
            serde_json::json!({"x": {"tls": {"a": 1}}})
        );
    }

    #[test]
    fn conditions_tags_and_aliases_decide_the_subcharts() {
        let mut c = chart(
            "app",
            serde_json::json!({"tags": {"backend": false}, "cache": {"enabled": true}}),
            vec![
                chart("redis", serde_json::json!({}), Vec::new()),
                chart("db", serde_json::json!({}), Vec::new()),
            ],
        );
        c.metadata.dependencies = Some(vec![
            dep("redis", |d| {
                d.alias = "cache".into();
                d.condition = "cache.enabled".into();
            }),
            dep("redis", |d| {
                d.alias = "queue".into();
                d.condition = "queue.enabled,cache.enabled".into();
            }),
            dep("db", |d| d.tags = vec!["backend".into()]),
        ]);
        process_dependencies(&mut c, &Map::new(), Nulls::Helm3).expect("processes");
        let names: Vec<&str> = c.dependencies.iter().map(Chart::name).collect();
        assert_eq!(names, ["cache", "queue"], "db is off by its tag");
        let user = map(serde_json::json!({"cache": {"enabled": false}, "tags": {"backend": true}}));
        let mut c2 = chart(
            "app",
            serde_json::json!({"cache": {"enabled": true}}),
            vec![
                chart("redis", serde_json::json!({}), Vec::new()),
                chart("db", serde_json::json!({}), Vec::new()),
            ],
        );
        c2.metadata.dependencies = Some(vec![
            dep("redis", |d| {
                d.alias = "cache".into();
                d.condition = "cache.enabled".into();
            }),
            dep("db", |d| d.tags = vec!["backend".into()]),
        ]);
        process_dependencies(&mut c2, &user, Nulls::Helm3).expect("processes");
        let names: Vec<&str> = c2.dependencies.iter().map(Chart::name).collect();
        assert_eq!(names, ["db"]);
    }

    #[test]
    fn import_values_sit_beneath_the_parents_own() {
        let sub = chart(
            "db",
            serde_json::json!({"exports": {"conn": {"host": "db", "port": 5432}}, "cfg": {"a": 1}}),
            Vec::new(),
        );
        let mut c = chart(
            "app",
            serde_json::json!({"port": 1, "imported": {"a": 2}}),
            vec![sub],
        );
        c.metadata.dependencies = Some(vec![dep("db", |d| {
            d.import_values = vec![
                serde_json::json!("conn"),
                serde_json::json!({"child": "cfg", "parent": "imported"}),
            ];
        })]);
        process_dependencies(&mut c, &Map::new(), Nulls::Helm3).expect("processes");
        let v = coalesce_values(&c, &Map::new(), Nulls::Helm3).expect("coalesces");
        let j = json(&v);
        assert_eq!(j["host"], serde_json::json!("db"));
        assert_eq!(j["port"], serde_json::json!(1), "the parent's value wins");
        assert_eq!(j["imported"], serde_json::json!({"a": 2}));
        assert_eq!(j["db"]["cfg"], serde_json::json!({"a": 1}));
    }

    #[test]
    fn nulls_coalesce_as_each_helm_release_coalesces_them() {
        // From `coalesceValues`, `cleanNilValues` and
        // `coalesceTablesFullKey` in `pkg/chartutil/coalesce.go` at v3.17.1
        // and `pkg/chart/common/util/coalesce.go` at v4.2.1 (no 4.2 binary
        // was at hand; v3.17.1's results are its binary's).
        let c = chart(
            "app",
            serde_json::json!({
                "gone": null,
                "t": {"x": null, "y": 1},
                "u": {"x": null},
                "w": {"x": 1},
                "top": null
            }),
            Vec::new(),
        );
        let user = map(serde_json::json!({"u": {"x": null}, "w": {"x": null}, "top": null}));
        let helm3 = json(&coalesce_values(&c, &user, Nulls::Helm3).expect("coalesces"));
        assert_eq!(
            helm3,
            serde_json::json!({"gone": null, "t": {"x": null, "y": 1}, "u": {}, "w": {}})
        );
        let helm4 = json(&coalesce_values(&c, &user, Nulls::Helm4).expect("coalesces"));
        assert_eq!(
            helm4,
            serde_json::json!({"t": {"y": 1}, "u": {"x": null}, "w": {}})
        );
        // The chart's defaults are not changed by the cleaning.
        assert_eq!(json(&c.values)["t"], serde_json::json!({"x": null, "y": 1}));
    }

    #[test]
    fn tables_imported_to_one_path_are_one_map_with_the_first_childs() {
        // helm v3.17.1: `pathToMap` places the child's table itself, so the
        // second import merged into it changes the first child's values.
        let s1 = chart("s1", serde_json::json!({"data": {"a": 1}}), Vec::new());
        let s2 = chart("s2", serde_json::json!({"data": {"b": 2}}), Vec::new());
        let mut c = chart("iv", serde_json::json!({}), vec![s1, s2]);
        let import = |d: &mut Dependency| {
            d.import_values = vec![serde_json::json!({"child": "data", "parent": "shared"})];
        };
        c.metadata.dependencies = Some(vec![dep("s1", import), dep("s2", import)]);
        process_dependencies(&mut c, &Map::new(), Nulls::Helm3).expect("processes");
        let j = json(&coalesce_values(&c, &Map::new(), Nulls::Helm3).expect("coalesces"));
        let both = serde_json::json!({"a": 1, "b": 2});
        assert_eq!(j["shared"], both);
        assert_eq!(j["s1"]["data"], both);
        assert_eq!(j["s2"]["data"], serde_json::json!({"b": 2}));
    }

    #[test]
    fn path_value_is_a_leaf_only() {
        let v = map(serde_json::json!({"a": {"b": true, "t": {}}, "top": false}));
        assert_eq!(path_value(&v, "a.b"), Some(V::Bool(true)));
        assert_eq!(path_value(&v, "top"), Some(V::Bool(false)));
        assert_eq!(path_value(&v, "a.t"), None);
        assert_eq!(path_value(&v, "a.x.y"), None);
    }

    #[test]
    fn value_files_merge_as_the_command_line_merges_them() {
        let mut a = map(serde_json::json!({"a": {"b": 1}, "l": [1]}));
        merge_maps(
            &mut a,
            map(serde_json::json!({"a": {"c": null}, "l": {"x": 1}})),
        );
        assert_eq!(
            json(&a),
            serde_json::json!({"a": {"b": 1, "c": null}, "l": {"x": 1}})
        );
    }
}
