//! The generators, evaluated offline: `list`, `git` (directories and files,
//! this repository only), `clusters` (from known cluster data), `matrix` and
//! `merge`, each followed by its `selector` post-filter
//! (AC `applicationset/generators/*.go`). The rest are unresolved.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::render::{Params, Renderer};
use super::selector::Selector;
use super::{AppSetContext, AppSetError, SECRET_TYPE_LABEL};
use crate::cache::{Facts, RecordKey};
use crate::source::{self, EntryKind};
use gotemplate::go::glob::go as glob;
use gotemplate::V;
use gotemplate::{path_base, path_dir, sanitize_name};

/// Generator kinds in the order Argo CD's `ApplicationSetGenerator` struct declares them.
const KINDS: [&str; 9] = [
    "list",
    "clusters",
    "git",
    "scmProvider",
    "clusterDecisionResource",
    "pullRequest",
    "plugin",
    "matrix",
    "merge",
];

const IN_CLUSTER_NAME: &str = "in-cluster";
const IN_CLUSTER_SERVER: &str = "https://kubernetes.default.svc";

/// One parameter set and where it came from.
#[derive(Debug, Clone)]
pub(crate) struct ParamSet {
    /// The parameters.
    pub(crate) params: Params,
    /// Human description of the source ("git directory `apps/web`").
    pub(crate) provenance: String,
}

/// What a generator yields.
#[derive(Debug, Clone)]
pub(crate) enum Outcome {
    /// Parameter sets (possibly none).
    Sets(Vec<ParamSet>),
    /// Cannot be evaluated offline; the reason.
    Unresolved(String),
}

/// All directories and files of the tree, walked once per expansion (or
/// once per revision with a [`TreeIndexCache`](super::TreeIndexCache)).
#[derive(Debug)]
pub(crate) struct TreeIndex {
    /// Directories, hidden ones (and their subtrees) left out, as the repo-server lists them.
    dirs: Vec<String>,
    /// Every file and symlink, as `git ls-files` lists them.
    files: Vec<String>,
}

/// Most entries walked in one tree, to keep hostile repositories finite.
const MAX_ENTRIES: usize = 2_000_000;

/// Most parameter sets a `matrix` may produce: two lists of a few thousand
/// aliased elements each would otherwise multiply into hundreds of millions.
const MAX_PARAM_SETS: usize = 100_000;

/// Most parameter sets all generator evaluations of one ApplicationSet may
/// produce, counted before selectors filter them and across every
/// re-evaluation of a `matrix`'s second generator: a matrix whose second
/// generator yields 100,000 sets that its selector then drops, once per
/// element of a 100,000-element first generator, is work the output never
/// shows.
const MAX_GENERATED: usize = 1_000_000;

/// Evaluates generators for one ApplicationSet.
pub(crate) struct Evaluator<'a> {
    cx: &'a AppSetContext<'a>,
    r: &'a Renderer,
    index: RefCell<Option<Arc<TreeIndex>>>,
    /// Parameter sets generated so far (see [`MAX_GENERATED`]).
    generated: std::cell::Cell<usize>,
}

type Res<T> = Result<T, AppSetError>;

fn err<T>(msg: impl Into<String>) -> Res<T> {
    Err(AppSetError(msg.into()))
}

impl<'a> Evaluator<'a> {
    /// An evaluator over `cx` rendering with `r`.
    pub(crate) fn new(cx: &'a AppSetContext<'a>, r: &'a Renderer) -> Evaluator<'a> {
        Evaluator {
            cx,
            r,
            index: RefCell::new(None),
            generated: std::cell::Cell::new(0),
        }
    }

    /// Evaluates one entry of `spec.generators`: each generator kind present,
    /// with its outcome and its generator-level template.
    ///
    /// # Errors
    /// A generator error (the controller would stop).
    pub(crate) fn top_level(&self, g: &Value) -> Res<Vec<(String, Outcome, Option<Value>)>> {
        let Value::Object(obj) = g else {
            return err("a generator must be an object");
        };
        let mut out = Vec::new();
        for kind in KINDS {
            let Some(body) = obj.get(kind).filter(|b| !b.is_null()) else {
                continue;
            };
            let template = body.get("template").filter(|t| !t.is_null()).cloned();
            let outcome = self.transform(kind, g, body, 0)?;
            out.push((kind.to_string(), outcome, template));
        }
        for key in obj.keys() {
            if key != "selector" && !KINDS.contains(&key.as_str()) {
                out.push((
                    key.clone(),
                    Outcome::Unresolved(format!(
                        "unknown generator `{key}`; this Argo CD version may not support it, so what it generates is unknown"
                    )),
                    None,
                ));
            }
        }
        Ok(out)
    }

    /// Generates and applies the generator's `selector`.
    fn transform(&self, kind: &str, gen: &Value, body: &Value, depth: usize) -> Res<Outcome> {
        let selector = match gen.get("selector") {
            None | Some(Value::Null) => None,
            Some(s) => Some(
                Selector::parse(s)
                    .map_err(|e| AppSetError(format!("error parsing label selector: {e}")))?,
            ),
        };
        let outcome = self.generate(kind, body, depth)?;
        // One for the evaluation itself, so evaluations generating nothing count too.
        let produced = match &outcome {
            Outcome::Sets(sets) => sets.len(),
            Outcome::Unresolved(_) => 0,
        };
        let total = self
            .generated
            .get()
            .saturating_add(produced)
            .saturating_add(1);
        if total > MAX_GENERATED {
            return err(format!(
                "generators evaluated more than {MAX_GENERATED} parameter sets (counting every re-evaluation of a matrix's second generator) {}", super::BEYOND_LIMITS
            ));
        }
        self.generated.set(total);
        let Some(selector) = selector else {
            return Ok(outcome);
        };
        Ok(match outcome {
            Outcome::Sets(sets) => Outcome::Sets(
                sets.into_iter()
                    .filter(|s| selector.matches(&flatten_params(&s.params)))
                    .collect(),
            ),
            u @ Outcome::Unresolved(_) => u,
        })
    }

    fn generate(&self, kind: &str, body: &Value, depth: usize) -> Res<Outcome> {
        match kind {
            "list" => self.list(body),
            "git" => self.git(body),
            "clusters" => self.clusters(body),
            "matrix" => self.matrix(body, depth),
            "merge" => self.merge(body, depth),
            "scmProvider" => Ok(Outcome::Unresolved(
                "scmProvider generator lists repositories through an SCM API".into(),
            )),
            "pullRequest" => Ok(Outcome::Unresolved(
                "pullRequest generator lists open pull requests through an SCM API".into(),
            )),
            "clusterDecisionResource" => Ok(Outcome::Unresolved(
                "clusterDecisionResource generator reads a resource from the live cluster".into(),
            )),
            "plugin" => Ok(Outcome::Unresolved(
                "plugin generator calls an external plugin service".into(),
            )),
            other => err(format!("unknown generator `{other}`")),
        }
    }

    fn list(&self, body: &Value) -> Res<Outcome> {
        let mut sets = Vec::new();
        let elements = match body.get("elements") {
            None | Some(Value::Null) => &[][..],
            Some(Value::Array(a)) => a.as_slice(),
            Some(_) => return err("list generator: `elements` must be a list"),
        };
        for el in elements {
            let Value::Object(obj) = el else {
                return err(format!("list generator: element {el} is not an object"));
            };
            let params = if self.r.is_go() {
                obj.clone()
            } else {
                let mut p = Map::new();
                for (k, v) in obj {
                    if k == "values" {
                        let Value::Object(values) = v else {
                            return err("list generator: error parsing values map");
                        };
                        for (vk, vv) in values {
                            let Value::String(s) = vv else {
                                return err(format!(
                                    "list generator: value `values.{vk}` is not a string"
                                ));
                            };
                            p.insert(format!("values.{vk}"), Value::String(s.clone()));
                        }
                    } else {
                        let Value::String(s) = v else {
                            return err(format!(
                                "list generator: element key `{k}` is not a string (fasttemplate accepts only strings; use goTemplate)"
                            ));
                        };
                        p.insert(k.clone(), Value::String(s.clone()));
                    }
                }
                p
            };
            sets.push(ParamSet {
                params,
                provenance: format!("list element `{}`", short_json(el)),
            });
        }
        if let Some(Value::String(y)) = body.get("elementsYaml") {
            if !y.is_empty() {
                let parsed = goyaml::parse_first_doc(y).map_err(|e| {
                    AppSetError(format!(
                        "list generator: error unmarshling decoded ElementsYaml: {e}"
                    ))
                })?;
                match parsed {
                    Value::Null => {}
                    Value::Array(items) => {
                        for item in items {
                            let params = match &item {
                                Value::Object(o) => o.clone(),
                                Value::Null => Map::new(),
                                other => {
                                    return err(format!(
                                    "list generator: elementsYaml item {other} is not an object"
                                ))
                                }
                            };
                            sets.push(ParamSet {
                                params,
                                provenance: format!(
                                    "list elementsYaml item `{}`",
                                    short_json(&item)
                                ),
                            });
                        }
                    }
                    other => {
                        return err(format!(
                            "list generator: elementsYaml must be a list, found {}",
                            short_json(&other)
                        ))
                    }
                }
            }
        }
        Ok(Outcome::Sets(sets))
    }

    fn git(&self, body: &Value) -> Res<Outcome> {
        let repo = body.get("repoURL").and_then(Value::as_str).unwrap_or("");
        let revision = body.get("revision").and_then(Value::as_str).unwrap_or("");
        if !(self.cx.is_this_repo)(repo) {
            return Ok(Outcome::Unresolved(format!(
                "git generator reads another repository, `{repo}`"
            )));
        }
        if let Some(is_this) = self.cx.is_this_revision {
            if !is_this(revision) {
                return Ok(Outcome::Unresolved(format!(
                    "git generator reads revision `{revision}` of this repository, not the revision being linted"
                )));
            }
        }
        let prefix = body
            .get("pathParamPrefix")
            .and_then(Value::as_str)
            .unwrap_or("");
        let values = body.get("values");
        let items = |k: &str| -> Vec<(String, bool)> {
            body.get(k)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|i| {
                            (
                                i.get("path")
                                    .and_then(Value::as_str)
                                    .unwrap_or("")
                                    .to_string(),
                                i.get("exclude").and_then(Value::as_bool).unwrap_or(false),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let dirs = items("directories");
        let files = items("files");
        if !dirs.is_empty() {
            self.git_directories(&dirs, prefix, values)
        } else if !files.is_empty() {
            self.git_files(&files, prefix, values, repo)
        } else {
            err("git generator has neither `directories` nor `files`")
        }
    }

    fn index(&self) -> Res<Arc<TreeIndex>> {
        if let Some(i) = self.index.borrow().as_ref() {
            return Ok(Arc::clone(i));
        }
        let idx = match self.cx.index_cache {
            Some(cache) => {
                let mut slot = cache
                    .index
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                match slot.as_ref() {
                    Some(i) => Arc::clone(i),
                    None => {
                        let i = Arc::new(walk_tree(self.cx.tree)?);
                        *slot = Some(Arc::clone(&i));
                        i
                    }
                }
            }
            None => Arc::new(walk_tree(self.cx.tree)?),
        };
        *self.index.borrow_mut() = Some(Arc::clone(&idx));
        Ok(idx)
    }

    /// The directories [`Evaluator::git_directories`] tests against
    /// `items`. Argo CD tests each pattern with Go's `path.Match` against
    /// every directory the repo-server lists (AC
    /// `applicationset/generators/git.go` `filterApps`,
    /// `reposerver/repository/repository.go` `GetGitDirectories`). When
    /// every including pattern is made of literal segments, `*` and `?`,
    /// which match no `/`, a pattern of n segments matches only directories
    /// n deep, segment by segment: only the directories on the way to those
    /// need listing, not the whole tree. `None` (every directory of the
    /// tree, [`TreeIndex`]) for a pattern with a class or an escape, or
    /// once the whole tree is indexed.
    fn matching_dirs(&self, items: &[(String, bool)]) -> Res<Option<Arc<Vec<String>>>> {
        let includes: Vec<String> = items
            .iter()
            .filter(|(_, exclude)| !exclude)
            .map(|(p, _)| p.clone())
            .collect();
        let plain =
            |p: &String| !p.contains(['[', '\\']) && p.split('/').count() <= MAX_PATTERN_SEGMENTS;
        let indexed = self.index.borrow().is_some()
            || self.cx.index_cache.is_some_and(|c| {
                c.index
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .is_some()
            });
        if indexed || !includes.iter().all(plain) {
            return Ok(None);
        }
        let cached = |c: &super::TreeIndexCache| {
            c.matching
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .get(&includes)
                .cloned()
        };
        if let Some(found) = self.cx.index_cache.and_then(cached) {
            return Ok(Some(found));
        }
        let facts = self.cx.index_cache.and_then(|c| c.facts.as_deref());
        let found = Arc::new(walk_matching(self.cx.tree, &includes, facts)?);
        if let Some(c) = self.cx.index_cache {
            c.matching
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(includes, Arc::clone(&found));
        }
        Ok(Some(found))
    }

    fn git_directories(
        &self,
        items: &[(String, bool)],
        prefix: &str,
        values: Option<&Value>,
    ) -> Res<Outcome> {
        let (index, matching);
        let dirs: &[String] = match self.matching_dirs(items)? {
            Some(m) => {
                matching = m;
                &matching
            }
            None => {
                index = self.index()?;
                &index.dirs
            }
        };
        let mut sets = Vec::new();
        for dir in dirs {
            let mut include = false;
            let mut exclude = false;
            for (pattern, is_exclude) in items {
                // A malformed pattern is logged and skipped by Argo CD.
                if glob::go_path_match(pattern, dir) == Some(true) {
                    if *is_exclude {
                        exclude = true;
                    } else {
                        include = true;
                    }
                }
            }
            if !include || exclude {
                continue;
            }
            let mut params = Map::new();
            path_params(self.r.is_go(), prefix, dir, None, &mut params);
            self.r
                .append_values(values, &mut params)
                .map_err(AppSetError)?;
            sets.push(ParamSet {
                params,
                provenance: format!("git directory `{dir}`"),
            });
        }
        Ok(Outcome::Sets(sets))
    }

    fn git_files(
        &self,
        items: &[(String, bool)],
        prefix: &str,
        values: Option<&Value>,
        repo: &str,
    ) -> Res<Outcome> {
        let index = self.index()?;
        let strict = self.cx.settings.new_git_file_globbing;
        let matchers = items
            .iter()
            .map(|(pattern, _)| {
                if strict {
                    glob::Doublestar::new(pattern)
                        .map(Some)
                        .map_err(|e| AppSetError(format!("git generator: {e}")))
                } else {
                    Ok(None)
                }
            })
            .collect::<Res<Vec<_>>>()?;
        let matches = |i: usize, f: &str| match &matchers[i] {
            Some(d) => d.matches(f),
            None => glob::git_pathspec_match(&items[i].0, f),
        };
        let mut selected: BTreeSet<&str> = BTreeSet::new();
        for (i, (pattern, _)) in items.iter().enumerate().filter(|(_, (_, ex))| !ex) {
            let base = glob::literal_dir_prefix(pattern);
            for f in &index.files {
                if source::path::strip_dir(f, base).is_some() && matches(i, f) {
                    selected.insert(f);
                }
            }
        }
        for (i, _) in items.iter().enumerate().filter(|(_, (_, ex))| *ex) {
            selected.retain(|f| !matches(i, f));
        }
        let mut sets = Vec::new();
        for file in selected {
            let bytes = source::read(self.cx.tree, file)
                .map_err(|e| AppSetError(format!("git generator: unable to read `{file}`: {e}")))?;
            let text = String::from_utf8_lossy(&bytes);
            let objects = parse_param_file(&text).map_err(|e| {
                AppSetError(format!(
                    "unable to process file '{file}' from repository '{repo}': {e}"
                ))
            })?;
            let many = objects.len() > 1;
            for (i, obj) in objects.into_iter().enumerate() {
                let dir = path_dir(file);
                let filename = path_base(file);
                let mut params = Map::new();
                if self.r.is_go() {
                    params.extend(obj);
                } else {
                    for (k, v) in flatten_params(&obj) {
                        params.insert(k, Value::String(v));
                    }
                }
                path_params(self.r.is_go(), prefix, &dir, Some(&filename), &mut params);
                self.r
                    .append_values(values, &mut params)
                    .map_err(AppSetError)?;
                let provenance = if many {
                    format!("git file `{file}` (item {})", i + 1)
                } else {
                    format!("git file `{file}`")
                };
                sets.push(ParamSet { params, provenance });
            }
        }
        Ok(Outcome::Sets(sets))
    }

    fn clusters(&self, body: &Value) -> Res<Outcome> {
        if self.cx.clusters.is_empty() {
            return Ok(Outcome::Unresolved(
                "clusters generator needs Argo CD's cluster list; none is known (add cluster Secrets to the repository or clusters to the configuration)"
                    .into(),
            ));
        }
        let selector = match body.get("selector") {
            None | Some(Value::Null) => Selector::default(),
            Some(s) => {
                Selector::parse(s).map_err(|e| AppSetError(format!("clusters generator: {e}")))?
            }
        };
        let flat = body
            .get("flatList")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let values = body.get("values");
        // Secrets are keyed by cluster name, so a later duplicate replaces an earlier one.
        let mut by_name: BTreeMap<&str, (&super::Cluster, BTreeMap<String, String>)> =
            BTreeMap::new();
        for c in self.cx.clusters {
            let mut labels = c.labels.clone();
            labels
                .entry(SECRET_TYPE_LABEL.to_string())
                .or_insert_with(|| "cluster".to_string());
            if selector.matches(&labels) {
                by_name.insert(c.name.as_str(), (c, labels));
            }
        }
        let mut sets = Vec::new();
        for (c, labels) in by_name.values() {
            let mut params = Map::new();
            params.insert("name".into(), Value::from(c.name.as_str()));
            params.insert("nameNormalized".into(), Value::from(sanitize_name(&c.name)));
            params.insert("server".into(), Value::from(c.server.as_str()));
            params.insert(
                "project".into(),
                Value::from(c.project.clone().unwrap_or_default()),
            );
            if self.r.is_go() {
                let mut meta = Map::new();
                if !c.annotations.is_empty() {
                    meta.insert(
                        "annotations".into(),
                        serde_json::to_value(&c.annotations).unwrap_or_default(),
                    );
                }
                meta.insert(
                    "labels".into(),
                    serde_json::to_value(labels).unwrap_or_default(),
                );
                params.insert("metadata".into(), Value::Object(meta));
            } else {
                for (k, v) in &c.annotations {
                    params.insert(format!("metadata.annotations.{k}"), Value::from(v.as_str()));
                }
                for (k, v) in labels {
                    params.insert(format!("metadata.labels.{k}"), Value::from(v.as_str()));
                }
            }
            self.r
                .append_values(values, &mut params)
                .map_err(AppSetError)?;
            sets.push(ParamSet {
                params,
                provenance: format!("cluster `{}` ({})", c.name, c.server),
            });
        }
        let has_in_cluster = self
            .cx
            .clusters
            .iter()
            .any(|c| c.server == IN_CLUSTER_SERVER);
        if selector.is_empty() && !has_in_cluster {
            // Argo CD adds the local cluster when no Secret describes it.
            let mut params = Map::new();
            params.insert("name".into(), Value::from(IN_CLUSTER_NAME));
            params.insert("nameNormalized".into(), Value::from(IN_CLUSTER_NAME));
            params.insert("server".into(), Value::from(IN_CLUSTER_SERVER));
            params.insert("project".into(), Value::from(""));
            self.r
                .append_values(values, &mut params)
                .map_err(AppSetError)?;
            sets.push(ParamSet {
                params,
                provenance: format!("cluster `{IN_CLUSTER_NAME}` (implicit local cluster)"),
            });
        }
        if flat {
            let all: Vec<Value> = sets.into_iter().map(|s| Value::Object(s.params)).collect();
            let mut params = Map::new();
            params.insert("clusters".into(), Value::Array(all));
            return Ok(Outcome::Sets(vec![ParamSet {
                params,
                provenance: "clusters (flat list)".into(),
            }]));
        }
        Ok(Outcome::Sets(sets))
    }

    /// Evaluates one child of a `matrix` or `merge`, interpolated with `params` when given.
    fn child(
        &self,
        child: &Value,
        params: Option<&Params>,
        depth: usize,
        parent: &str,
    ) -> Res<Outcome> {
        let interpolated;
        let child = match params {
            Some(p) if !p.is_empty() => {
                interpolated = self.r.interpolate_generator(child, p).map_err(|e| {
                    AppSetError(format!("{parent}: interpolating the second generator: {e}"))
                })?;
                &interpolated
            }
            _ => child,
        };
        let Value::Object(obj) = child else {
            return err(format!("{parent}: a child generator must be an object"));
        };
        let kinds: Vec<&str> = KINDS
            .iter()
            .copied()
            .filter(|k| obj.get(*k).is_some_and(|v| !v.is_null()))
            .collect();
        match kinds.as_slice() {
            [] => {
                let keys: Vec<&String> = obj.keys().filter(|k| *k != "selector").collect();
                err(format!("{parent}: child generator generated no parameters (no known generator in {keys:?})"))
            }
            [kind] => {
                if depth >= 1 && (*kind == "matrix" || *kind == "merge") {
                    return err(format!(
                        "{parent}: `{kind}` nested more than one level deep is not supported by Argo CD"
                    ));
                }
                self.transform(kind, child, &obj[*kind], depth + 1)
            }
            _ => err(format!(
                "{parent}: found more than one generator in a child generator"
            )),
        }
    }

    fn matrix(&self, body: &Value, depth: usize) -> Res<Outcome> {
        let gens = body
            .get("generators")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        if gens.len() < 2 {
            return err(
                "matrix generator: found less than two generators, Matrix support only two",
            );
        }
        if gens.len() > 2 {
            return err(
                "matrix generator: found more than two generators, Matrix support only two",
            );
        }
        let first = match self.child(&gens[0], None, depth, "matrix generator")? {
            Outcome::Sets(s) => s,
            Outcome::Unresolved(why) => return Ok(Outcome::Unresolved(format!("matrix: {why}"))),
        };
        let mut out = Vec::new();
        for a in &first {
            let second = match self.child(&gens[1], Some(&a.params), depth, "matrix generator")? {
                Outcome::Sets(s) => s,
                Outcome::Unresolved(why) => {
                    return Ok(Outcome::Unresolved(format!("matrix: {why}")))
                }
            };
            if out.len().saturating_add(second.len()) > MAX_PARAM_SETS {
                return err(format!(
                    "matrix generator: more than {MAX_PARAM_SETS} parameter sets {}",
                    super::BEYOND_LIMITS
                ));
            }
            for b in second {
                let params = if self.r.is_go() {
                    let mut tmp = Map::new();
                    merge_override(&mut tmp, &b.params);
                    merge_override(&mut tmp, &a.params);
                    tmp
                } else {
                    combine_string_maps(&a.params, &b.params)?
                };
                out.push(ParamSet {
                    params,
                    provenance: format!("{} × {}", a.provenance, b.provenance),
                });
            }
        }
        Ok(Outcome::Sets(out))
    }

    fn merge(&self, body: &Value, depth: usize) -> Res<Outcome> {
        let gens = body
            .get("generators")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        if gens.len() < 2 {
            return err(
                "merge generator: found less than two generators, Merge requires two or more",
            );
        }
        let keys: BTreeSet<String> = crate::manifest::strings(body.get("mergeKeys"))
            .into_iter()
            .collect();
        if keys.is_empty() {
            return err(
                "merge generator: no merge keys were specified, Merge requires at least one",
            );
        }
        let mut all = Vec::new();
        for g in gens {
            match self.child(g, None, depth, "merge generator")? {
                Outcome::Sets(s) => all.push(s),
                Outcome::Unresolved(why) => {
                    return Ok(Outcome::Unresolved(format!("merge: {why}")))
                }
            }
        }
        let key_of = |p: &Params| -> String {
            let k: Map<String, Value> = keys
                .iter()
                .map(|k| (k.clone(), p.get(k).cloned().unwrap_or(Value::Null)))
                .collect();
            Value::Object(k).to_string()
        };
        let by_key = |sets: &[ParamSet]| -> Res<HashMap<String, usize>> {
            let mut m = HashMap::new();
            for (i, s) in sets.iter().enumerate() {
                let k = key_of(&s.params);
                if m.insert(k.clone(), i).is_some() {
                    return err(format!(
                        "merge generator: the parameters from a generator were not unique by the given mergeKeys, Merge requires all param sets to be unique. Duplicate key was {k}"
                    ));
                }
            }
            Ok(m)
        };
        let mut base = all.remove(0);
        let base_keys = by_key(&base)?;
        for other in &all {
            let other_keys = by_key(other)?;
            for (k, &bi) in &base_keys {
                if let Some(&oi) = other_keys.get(k) {
                    let o = &other[oi];
                    if self.r.is_go() {
                        merge_override(&mut base[bi].params, &o.params);
                    } else {
                        for (pk, pv) in &o.params {
                            base[bi].params.insert(pk.clone(), pv.clone());
                        }
                    }
                    base[bi].provenance =
                        format!("{} merged with {}", base[bi].provenance, o.provenance);
                }
            }
        }
        Ok(Outcome::Sets(base))
    }
}

/// Walks the whole tree once: directories as the repo-server lists them
/// (hidden ones and their subtrees left out) and files as `git ls-files` does.
fn walk_tree(tree: &dyn crate::source::Tree) -> Res<TreeIndex> {
    let mut walk = IndexWalk {
        index: TreeIndex {
            dirs: Vec::new(),
            files: Vec::new(),
        },
        seen: 0,
    };
    source::walk::walk(tree, "", &mut walk)?;
    let mut index = walk.index;
    index.dirs.sort();
    index.files.sort();
    Ok(index)
}

/// Patterns with more segments than this are matched against the whole
/// tree's index (deeper listings fail in the tree anyway).
const MAX_PATTERN_SEGMENTS: usize = 64;

/// The directories that `patterns` (literal segments, `*` and `?` only, see
/// [`Evaluator::matching_dirs`]) match, sorted, hidden ones left out as
/// [`walk_tree`] leaves them out: listed depth first, entering only the
/// directories whose segments so far match some pattern's. A listing that
/// fails and the bound on entries listed are [`walk_tree`]'s, over the
/// directories listed here.
///
/// With `facts`, what a subtree holds for the patterns' remaining segments
/// is kept under its tree id (its content): a later run takes it instead
/// of listing the subtree again, so an unchanged `apps/` costs one lookup.
fn walk_matching(
    tree: &dyn crate::source::Tree,
    patterns: &[String],
    facts: Option<&Facts>,
) -> Res<Vec<String>> {
    let patterns: Vec<Vec<&str>> = patterns.iter().map(|p| p.split('/').collect()).collect();
    let mut walk = MatchWalk {
        tree,
        patterns: &patterns,
        facts: facts.filter(|_| tree.content_addressed()),
        seen: 0,
    };
    let mut found = Vec::new();
    let all: Vec<usize> = (0..patterns.len()).collect();
    walk.below("", 0, &all, &mut found)?;
    found.sort();
    Ok(found)
}

/// The state of [`walk_matching`].
struct MatchWalk<'a> {
    tree: &'a dyn crate::source::Tree,
    /// Each pattern's segments.
    patterns: &'a [Vec<&'a str>],
    facts: Option<&'a Facts>,
    /// Entries listed so far (kept subtrees count what they listed),
    /// bounded by [`MAX_ENTRIES`].
    seen: usize,
}

impl MatchWalk<'_> {
    /// Adds to `found` the directories below `dir` (`depth` segments deep,
    /// each matching the patterns `alive` so far) that those patterns match.
    fn below(
        &mut self,
        dir: &str,
        depth: usize,
        alive: &[usize],
        found: &mut Vec<String>,
    ) -> Res<()> {
        let facts = self.facts;
        let key = facts.zip(self.kept_key(dir, depth, alive));
        if let Some((facts, key)) = key {
            if let Some((paths, seen)) = facts.record(key).as_deref().and_then(decode_matches) {
                count_listed(&mut self.seen, seen)?;
                found.extend(paths.into_iter().map(|p| source::path::child(dir, &p)));
                return Ok(());
            }
        }
        let (seen_before, found_before) = (self.seen, found.len());
        let entries = list_dir(self.tree, dir)?;
        count_listed(&mut self.seen, entries.len())?;
        for e in &entries {
            // A hidden directory and everything below it are left out.
            if !matches!(e.kind, EntryKind::Dir | EntryKind::Submodule) || e.name.starts_with('.') {
                continue;
            }
            let still: Vec<usize> = alive
                .iter()
                .copied()
                .filter(|&i| glob::go_path_match(self.patterns[i][depth], &e.name) == Some(true))
                .collect();
            let path = source::path::child(dir, &e.name);
            if still.iter().any(|&i| self.patterns[i].len() == depth + 1) {
                found.push(path.clone());
            }
            let deeper: Vec<usize> = still
                .into_iter()
                .filter(|&i| self.patterns[i].len() > depth + 1)
                .collect();
            // A submodule is listed as a directory but not entered.
            if e.kind == EntryKind::Dir && !deeper.is_empty() {
                self.below(&path, depth + 1, &deeper, found)?;
            }
        }
        if let Some((facts, key)) = key {
            let relative = found[found_before..]
                .iter()
                .map(|p| source::path::strip_dir(p, dir).unwrap_or(p));
            if let Some(bytes) = encode_matches(relative, self.seen - seen_before) {
                facts.put_record(key, bytes);
            }
        }
        Ok(())
    }

    /// The record key of what `dir` holds for the patterns `alive` from
    /// segment `depth` on: its tree id and those segments. `None` without
    /// facts, or when every pattern ends one level below (listing `dir`
    /// is then all the work, and a record would cost as much).
    fn kept_key(&self, dir: &str, depth: usize, alive: &[usize]) -> Option<crate::cache::Key> {
        self.facts?;
        if alive.iter().all(|&i| self.patterns[i].len() <= depth + 1) {
            return None;
        }
        let id = self.tree.entry(dir).ok().flatten()?.id;
        let mut key = RecordKey::new("appset-directories-1");
        key.part(&id.0);
        for &i in alive {
            key.part(self.patterns[i][depth..].join("/").as_bytes());
        }
        Some(key.finish())
    }
}

/// A kept [`MatchWalk::below`]: the count of entries listed, then each
/// directory found, relative to the subtree.
fn encode_matches<'p>(paths: impl Iterator<Item = &'p str>, seen: usize) -> Option<Vec<u8>> {
    let mut out = u64::try_from(seen).ok()?.to_le_bytes().to_vec();
    for p in paths {
        out.extend_from_slice(&u32::try_from(p.len()).ok()?.to_le_bytes());
        out.extend_from_slice(p.as_bytes());
    }
    Some(out)
}

/// What [`encode_matches`] wrote; `None` for anything else.
fn decode_matches(bytes: &[u8]) -> Option<(Vec<String>, usize)> {
    let (seen, mut rest) = bytes.split_at_checked(8)?;
    let seen = usize::try_from(u64::from_le_bytes(seen.try_into().ok()?)).ok()?;
    let mut paths = Vec::new();
    while !rest.is_empty() {
        let (len, tail) = rest.split_at_checked(4)?;
        let len = u32::from_le_bytes(len.try_into().ok()?) as usize;
        let (path, tail) = tail.split_at_checked(len)?;
        let path = std::str::from_utf8(path).ok()?;
        // A directory below this one, named by plain segments.
        if path.is_empty() || path.starts_with('/') || path.split('/').any(str::is_empty) {
            return None;
        }
        paths.push(path.to_string());
        rest = tail;
    }
    Some((paths, seen))
}

/// `dir`'s entries, as the git generators list them.
fn list_dir(tree: &dyn crate::source::Tree, dir: &str) -> Res<Vec<source::Entry>> {
    source::list(tree, dir).map_err(|e| AppSetError(format!("cannot list `{dir}`: {e}")))
}

/// Adds `entries` to `seen`, the entries a git generator's walk listed:
/// past [`MAX_ENTRIES`], the expansion is beyond gitops-lint's limits.
fn count_listed(seen: &mut usize, entries: usize) -> Res<()> {
    *seen = seen.saturating_add(entries);
    if *seen > MAX_ENTRIES {
        return err(format!(
            "repository has too many files to expand git generators {}",
            super::BEYOND_LIMITS
        ));
    }
    Ok(())
}

/// The visitor of [`walk_tree`].
struct IndexWalk {
    index: TreeIndex,
    /// Entries listed so far, bounded by [`MAX_ENTRIES`].
    seen: usize,
}

/// Whether a segment of `path` is hidden (starts with `.`).
fn hidden(path: &str) -> bool {
    path.split('/').any(|s| s.starts_with('.'))
}

impl source::walk::Visitor for IndexWalk {
    type Error = AppSetError;

    fn list(
        &mut self,
        tree: &dyn crate::source::Tree,
        dir: &str,
    ) -> Res<Option<Vec<source::Entry>>> {
        list_dir(tree, dir).map(Some)
    }

    fn enter(&mut self, dir: &str, entries: &[source::Entry]) -> Res<source::walk::Flow> {
        count_listed(&mut self.seen, entries.len())?;
        if !dir.is_empty() && !hidden(dir) {
            self.index.dirs.push(dir.to_string());
        }
        Ok(source::walk::Flow::Continue)
    }

    fn entry(&mut self, _: &str, path: &str, e: &source::Entry) -> Res<source::walk::Flow> {
        match e.kind {
            EntryKind::Dir => {}
            EntryKind::Submodule => {
                if !hidden(path) {
                    self.index.dirs.push(path.to_string());
                }
            }
            EntryKind::File | EntryKind::Symlink => self.index.files.push(path.to_string()),
        }
        Ok(source::walk::Flow::Continue)
    }
}

/// `mergo.Merge(dst, src, mergo.WithOverride)` on parameter maps: nested
/// maps merge, anything else from `src` replaces.
fn merge_override(dst: &mut Params, src: &Params) {
    for (k, v) in src {
        match (dst.get_mut(k), v) {
            (Some(Value::Object(d)), Value::Object(s)) => merge_override(d, s),
            _ => {
                dst.insert(k.clone(), v.clone());
            }
        }
    }
}

/// `utils.CombineStringMaps`: both sides as `%v` strings; a key with two different values is an error.
fn combine_string_maps(a: &Params, b: &Params) -> Res<Params> {
    let s = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => V::from_json(other).go_string(),
    };
    let mut out: Params = a
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(s(v))))
        .collect();
    for (k, v) in b {
        let v = s(v);
        if let Some(Value::String(cur)) = out.get(k) {
            if *cur != v {
                return err(format!("matrix generator: found duplicate key {k} with different value, a: {cur} ,b: {v}"));
            }
        }
        out.insert(k.clone(), Value::String(v));
    }
    Ok(out)
}

/// `flatten.Flatten(params, "", DotStyle)` with values printed by `%v`: the
/// view selectors and fasttemplate git files see.
pub(crate) fn flatten_params(params: &Params) -> BTreeMap<String, String> {
    fn walk(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
        let key = |k: &str| {
            if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            }
        };
        match v {
            Value::Object(o) => {
                for (k, e) in o {
                    walk(&key(k), e, out);
                }
            }
            Value::Array(a) => {
                for (i, e) in a.iter().enumerate() {
                    walk(&key(&i.to_string()), e, out);
                }
            }
            Value::String(s) => {
                out.insert(prefix.to_string(), s.clone());
            }
            other => {
                out.insert(prefix.to_string(), V::from_json(other).go_string());
            }
        }
    }
    let mut out = BTreeMap::new();
    for (k, v) in params {
        walk(k, v, &mut out);
    }
    out
}

/// Decodes a git generator file: one object, or a list of objects (first
/// YAML document only, as `sigs.k8s.io/yaml.Unmarshal` reads it). An empty
/// file is one empty object.
fn parse_param_file(text: &str) -> Result<Vec<Params>, String> {
    let v = goyaml::parse_first_doc(text).map_err(|e| format!("unable to parse file: {e}"))?;
    match v {
        Value::Null => Ok(vec![Map::new()]),
        Value::Object(o) => Ok(vec![o]),
        Value::Array(items) => items
            .into_iter()
            .map(|i| match i {
                Value::Object(o) => Ok(o),
                Value::Null => Ok(Map::new()),
                other => Err(format!(
                    "unable to parse file: list item {other} is not an object"
                )),
            })
            .collect(),
        other => Err(format!(
            "unable to parse file: expected an object or a list, found {other}"
        )),
    }
}

fn short_json(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        let cut: String = s.chars().take(77).collect();
        format!("{cut}...")
    } else {
        s
    }
}

/// The `path` parameters of the git generators (`git.go` ≈l.249-356): nested
/// under `path` (or `<prefix>.path`) for goTemplate, flattened with dots and
/// `path[N]` segments for fasttemplate. Files add `filename`.
fn path_params(
    go: bool,
    prefix: &str,
    dir: &str,
    filename: Option<&str>,
    params: &mut Map<String, Value>,
) {
    let base = path_base(dir);
    if go {
        let mut path = serde_json::json!({
            "path": dir,
            "basename": base,
            "basenameNormalized": sanitize_name(&base),
            "segments": dir.split('/').collect::<Vec<_>>(),
        });
        if let (Some(f), Some(m)) = (filename, path.as_object_mut()) {
            m.insert("filename".into(), Value::from(f));
            m.insert("filenameNormalized".into(), Value::from(sanitize_name(f)));
        }
        if prefix.is_empty() {
            params.insert("path".into(), path);
        } else {
            params.insert(prefix.to_string(), serde_json::json!({ "path": path }));
        }
        return;
    }
    let name = if prefix.is_empty() {
        "path".to_string()
    } else {
        format!("{prefix}.path")
    };
    params.insert(name.clone(), Value::from(dir));
    params.insert(format!("{name}.basename"), Value::from(base.as_str()));
    params.insert(
        format!("{name}.basenameNormalized"),
        Value::from(sanitize_name(&base)),
    );
    if let Some(f) = filename {
        params.insert(format!("{name}.filename"), Value::from(f));
        params.insert(
            format!("{name}.filenameNormalized"),
            Value::from(sanitize_name(f)),
        );
    }
    for (k, seg) in dir.split('/').enumerate() {
        if !seg.is_empty() {
            params.insert(format!("{name}[{k}]"), Value::from(seg));
        }
    }
}
