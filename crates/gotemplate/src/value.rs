//! Values as Go's `text/template` sees them when Argo CD executes a template
//! over `map[string]any` parameters, and how Go's `fmt` prints them.
//!
//! Parameters come from JSON/YAML decoding in Go, so every number in them is a
//! `float64`; integers appear only from template literals and functions such
//! as `add` or `len`. The distinction matters: `eq 3.0 3` is an error in Go.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

/// An object whose fields and methods the host program provides, as Helm's
/// `.Files` (`Get`, `GetBytes`, `Glob`, `Lines`, `AsConfig`, `AsSecrets`) and
/// `.Capabilities` (`APIVersions.Has`, `KubeVersion.Version`...) are Go
/// values with methods. Templates reach it as Go would: `.Files.Get "x"`
/// calls the method `Get` with `"x"` (a pipeline's value comes last, as
/// Go passes it: `"x" | .Files.Get`), `(.Files.Glob "*").AsConfig` and
/// `.Capabilities.KubeVersion.Major` read a field or call a method without
/// arguments.
pub trait HostObject: std::fmt::Debug + Send + Sync {
    /// Go's type name, for error messages (`chartutil.Capabilities`).
    fn type_name(&self) -> &'static str;
    /// A field, or a method without arguments; `None` when there is no such
    /// name (Go: "can't evaluate field NAME in type TYPE").
    fn field(&self, name: &str) -> Option<V>;
    /// Calls the method `name` with `args`; `None` when there is no such
    /// method. An `Err` is the method's error (Go: "error calling NAME: ...").
    fn call(&self, name: &str, args: &[V]) -> Option<Result<V, String>>;
    /// The plain value the object stands for where a template ranges over
    /// it, prints it or passes it to a function (Helm's `Files` is a map of
    /// paths to contents, `VersionSet` a list of strings, `KubeVersion`
    /// prints as its `String()`).
    fn value(&self) -> V;
    /// Whether Go sees a map here (Helm's `Files` is a
    /// `map[string][]byte`): an unknown field is then a missing key, and an
    /// unknown name given arguments fails as "NAME is not a method but has
    /// arguments", not "can't evaluate field".
    fn is_map(&self) -> bool {
        false
    }
    /// Go's `reflect.Kind` name (`kindOf`): `ptr` for a pointer to a
    /// struct, `struct`, `map`, `slice`. A map or slice is empty, and false,
    /// when [`HostObject::value`] is.
    fn kind(&self) -> &'static str {
        "ptr"
    }
    /// How `fmt` prints it with `%v`, at the top (`top`) or inside another
    /// value: Go prints a pointer to a struct as `&{…}` at the top and as
    /// its address inside.
    fn format(&self, top: bool) -> String {
        let _ = top;
        self.value().go_string()
    }
    /// How an action prints it (text/template `printableValue`: a pointer
    /// is followed, and an addressable value whose pointer has `String`
    /// prints with it).
    fn printed(&self) -> String {
        self.format(true)
    }
    /// What `encoding/json` writes for it.
    fn json(&self) -> Json {
        Json::Value(self.value())
    }
    /// What it becomes once passed to a function as an `interface{}`: a
    /// copy, which no longer reaches the methods of its pointer (`None`:
    /// itself).
    fn boxed(&self) -> Option<V> {
        None
    }
    /// What Sprig's `strval` (`toString`, `quote`) makes of it when that is
    /// not `%v`: a `[]byte` is its text. An `Err` when that text cannot be
    /// represented (bytes that are not UTF-8).
    fn as_text(&self) -> Option<Result<String, String>> {
        None
    }
    /// The object itself, for a function that takes only its own type
    /// (Sprig's date functions take a `time.Time`).
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
}

/// What `encoding/json` writes for a [`HostObject`].
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// Whatever it writes for this value.
    Value(V),
    /// A struct: an object with these members, in field order (`omitempty`
    /// already applied).
    Object(Vec<(String, V)>),
}

/// A shared [`HostObject`] inside a [`V`]; two are equal when they are the
/// same object.
#[derive(Debug, Clone)]
pub struct Host(pub Arc<dyn HostObject>);

impl Host {
    /// [`V::json_view`] of the object.
    fn json_view(&self) -> V {
        match self.0.json() {
            Json::Value(v) => v.json_view(),
            Json::Object(members) => V::Map(
                members
                    .into_iter()
                    .map(|(k, v)| (k, v.json_view()))
                    .collect(),
            ),
        }
    }
}

impl PartialEq for Host {
    fn eq(&self, other: &Host) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The fixed part of [`V::measure`]'s cost: what one node takes beside its text.
pub(crate) const NODE_COST: usize = 32;

/// Changes made to maps in place ([`SharedMap::update`]), in any thread:
/// a measure taken before one may no longer hold (a map may have grown, or
/// come to contain itself).
static MAP_CHANGES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The maps [`V::measure`] has walked whole, with their cost and height,
/// valid while no map changes; each kept alive, so that its address names
/// it while it is here.
#[derive(Default)]
pub(crate) struct CostMemo {
    changes: u64,
    costs: std::collections::HashMap<usize, (usize, usize, SharedMap)>,
}

impl CostMemo {
    /// Forgets every measure if a map has changed since they were taken.
    fn refresh(&mut self) {
        let now = MAP_CHANGES.load(std::sync::atomic::Ordering::Relaxed);
        if now != self.changes {
            self.costs.clear();
            self.changes = now;
        }
    }
}

/// What [`V::measure`] found.
pub(crate) struct Measured {
    /// The value's whole cost (maps in the memo counted at their cost).
    pub(crate) cost: usize,
    /// What this walk visited itself: the work it did.
    pub(crate) walked: usize,
}

/// Said when a template changes a map of ApplicationSet parameters.
pub(crate) const FROZEN_MAP: &str = "changes a map of the template parameters in place: Argo CD shares the parameters between the fields it renders, which gitops-lint does not model";

/// A Go `map[string]any`, which is a reference: a clone is the same map,
/// and a change made through one clone (Sprig's `set`, `unset`, `merge`)
/// shows through every other, as it does through every Go value holding
/// the map. `dict`, `deepCopy`, decoding and [`SharedMap::new`] make new maps.
///
/// Readers take a snapshot of the entries (an `Arc`) and hold no lock while
/// they walk it, so walking a map that contains itself, or merging a map
/// into itself, cannot deadlock; a writer copies the entries only while a
/// snapshot is alive.
#[derive(Clone)]
pub struct SharedMap(Arc<MapCell>);

struct MapCell {
    entries: Mutex<Arc<BTreeMap<String, V>>>,
    /// Why templates must not change this map, if they must not: it is
    /// shared in Go where this crate's copy is not (the message says how).
    frozen: Option<&'static str>,
    /// Whether Go sees Helm's `chartutil.Values` here (a chart's `.Values`,
    /// a `Table` of it) rather than a plain `map[string]interface{}`: its
    /// methods (`YAML`, `AsMap`, `Table`, `PathValue`) then answer before
    /// its keys, as text/template's `evalField` tries methods first.
    values_table: std::sync::atomic::AtomicBool,
}

impl SharedMap {
    /// A new map holding `entries`.
    #[must_use]
    pub fn new(entries: BTreeMap<String, V>) -> SharedMap {
        SharedMap::with(entries, None)
    }

    fn with(entries: BTreeMap<String, V>, frozen: Option<&'static str>) -> SharedMap {
        SharedMap(Arc::new(MapCell {
            entries: Mutex::new(Arc::new(entries)),
            frozen,
            values_table: std::sync::atomic::AtomicBool::new(false),
        }))
    }

    /// Marks the map as Helm's `chartutil.Values` (see [`MapCell`]).
    pub fn mark_values_table(&self) {
        self.0
            .values_table
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether the map is Helm's `chartutil.Values`.
    #[must_use]
    pub fn is_values_table(&self) -> bool {
        self.0
            .values_table
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The entries as they are now; later changes to the map do not show in it.
    #[must_use]
    pub fn entries(&self) -> Arc<BTreeMap<String, V>> {
        let guard = self
            .0
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Arc::clone(&guard)
    }

    /// The value at `key` (a map in it is shared, as Go's `m[key]` is).
    #[must_use]
    pub fn get(&self, key: &str) -> Option<V> {
        self.entries().get(key).cloned()
    }

    /// How many entries the map has.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether the map has no entries.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }

    /// Whether the map has an entry at `key`.
    #[must_use]
    pub fn contains_key(&self, key: &str) -> bool {
        self.entries().contains_key(key)
    }

    /// Whether `self` and `other` are one map.
    #[must_use]
    pub fn same(&self, other: &SharedMap) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The map's identity, for finding a map among its own entries.
    fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// The entries to change in Rust code that builds a value: when the map
    /// is shared, `self` first becomes a copy of its own, so the change does
    /// not show through the other holders (value semantics, as Rust code
    /// building values expects). Templates change maps with
    /// [`SharedMap::update`] instead.
    pub fn make_mut(&mut self) -> &mut BTreeMap<String, V> {
        let cell = Arc::make_mut(&mut self.0);
        let entries = cell
            .entries
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        Arc::make_mut(entries)
    }

    /// The entries, taken out of the map (copied when the map is shared).
    #[must_use]
    pub fn into_entries(self) -> BTreeMap<String, V> {
        let entries = self.entries();
        drop(self);
        Arc::try_unwrap(entries).unwrap_or_else(|shared| (*shared).clone())
    }

    /// Changes the map in place, for every holder (Go's `m[k] = v`).
    /// `change` runs with the map's lock held: it must not read this map.
    ///
    /// # Errors
    /// The reason a frozen map gives ([`V::frozen_copy`]).
    pub fn update<R>(
        &self,
        change: impl FnOnce(&mut BTreeMap<String, V>) -> R,
    ) -> Result<R, String> {
        if let Some(why) = self.0.frozen {
            return Err(why.to_string());
        }
        let mut guard = self
            .0
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        MAP_CHANGES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(change(Arc::make_mut(&mut guard)))
    }
}

/// A copy of the cell holding the same entries: what [`SharedMap::make_mut`]
/// gives a map that is shared.
impl Clone for MapCell {
    fn clone(&self) -> MapCell {
        let guard = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        MapCell {
            entries: Mutex::new(Arc::clone(&guard)),
            frozen: self.frozen,
            values_table: std::sync::atomic::AtomicBool::new(
                self.values_table.load(std::sync::atomic::Ordering::Relaxed),
            ),
        }
    }
}

impl Default for SharedMap {
    fn default() -> SharedMap {
        SharedMap::new(BTreeMap::new())
    }
}

impl From<BTreeMap<String, V>> for SharedMap {
    fn from(entries: BTreeMap<String, V>) -> SharedMap {
        SharedMap::new(entries)
    }
}

impl<const N: usize> From<[(String, V); N]> for SharedMap {
    fn from(entries: [(String, V); N]) -> SharedMap {
        SharedMap::new(entries.into())
    }
}

impl FromIterator<(String, V)> for SharedMap {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(iter: I) -> SharedMap {
        SharedMap::new(iter.into_iter().collect())
    }
}

/// Equal entries, as Go's `reflect.DeepEqual` compares maps; one map is
/// equal to itself without a look at its entries (so a map that contains
/// itself compares equal to itself, as `DeepEqual`'s visited set makes it).
impl PartialEq for SharedMap {
    fn eq(&self, other: &SharedMap) -> bool {
        self.same(other) || *self.entries() == *other.entries()
    }
}

impl std::fmt::Debug for SharedMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `%v`, which stops at a map inside itself, not the derived form.
        write!(f, "{}", V::Map(self.clone()).go_string())
    }
}

/// A template value.
#[derive(Debug, Clone, PartialEq)]
pub enum V {
    /// Go's invalid `reflect.Value`: a missing map key. Prints `<no value>`.
    Missing,
    /// A nil interface (JSON `null`). Prints `<nil>`.
    Nil,
    /// `bool`.
    Bool(bool),
    /// `int`: template literals, `len`, `atoi`, `int`, `until`.
    Int(i64),
    /// `int64`: Sprig's integer arithmetic (`add`, `sub`, `max`…, `int64`),
    /// Helm's `--set` integers. Prints as `int` does and compares equal to
    /// one in `eq`/`lt` (text/template `basicKind`), but not in `deepEqual`,
    /// and `kindOf`/`typeOf` tell them apart.
    Int64(i64),
    /// `float64`.
    Float(f64),
    /// `string`.
    Str(String),
    /// `[]any`.
    List(Vec<V>),
    /// `map[string]any` (Go prints and ranges maps in key order), shared
    /// as Go shares maps.
    Map(SharedMap),
    /// An object with host-provided fields and methods.
    Host(Host),
}

/// Why [`V::measure`] could not measure a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unmeasurable {
    /// It nests deeper than allowed.
    TooDeep,
    /// A map contains itself (`set $d "self" $d`): Go would recurse until
    /// its stack overflows wherever the value is printed or copied.
    ContainsItself,
}

impl V {
    /// Converts decoded JSON the way Go's `encoding/json` would (numbers
    /// become `float64`); every object becomes a new map.
    #[must_use]
    pub fn from_json(v: &serde_json::Value) -> V {
        V::from_json_as(v, None)
    }

    /// [`V::from_json`] for ApplicationSet parameters: templates may read
    /// the maps but not change them (see [`FROZEN_MAP`]).
    #[must_use]
    pub(crate) fn from_json_frozen(v: &serde_json::Value) -> V {
        V::from_json_as(v, Some(FROZEN_MAP))
    }

    fn from_json_as(v: &serde_json::Value, frozen: Option<&'static str>) -> V {
        match v {
            serde_json::Value::Null => V::Nil,
            serde_json::Value::Bool(b) => V::Bool(*b),
            serde_json::Value::Number(n) => V::Float(n.as_f64().unwrap_or(0.0)),
            serde_json::Value::String(s) => V::Str(s.clone()),
            serde_json::Value::Array(a) => {
                V::List(a.iter().map(|e| V::from_json_as(e, frozen)).collect())
            }
            serde_json::Value::Object(o) => V::Map(SharedMap::with(
                o.iter()
                    .map(|(k, e)| (k.clone(), V::from_json_as(e, frozen)))
                    .collect(),
                frozen,
            )),
        }
    }

    /// A map holding `entries`.
    #[must_use]
    pub fn map(entries: BTreeMap<String, V>) -> V {
        V::Map(SharedMap::new(entries))
    }

    /// A copy sharing no map with `self` (Sprig's `deepCopy`,
    /// `copystructure.Copy`). `None` when it nests deeper than `max_depth`
    /// (a map containing itself does), where Go would overflow its stack.
    #[must_use]
    pub fn deep_copy(&self, max_depth: usize) -> Option<V> {
        self.copy_as(max_depth)
    }

    /// A copy sharing no map with `self`, in which maps that are one map in
    /// `self` are one map too: Go's sharing between the values a template
    /// set holds, kept for templates that change them. `None` when it nests
    /// deeper than `max_depth`.
    #[must_use]
    pub fn copy_keeping_sharing(&self, max_depth: usize) -> Option<V> {
        self.copy_shared(max_depth, &mut std::collections::HashMap::new())
    }

    fn copy_shared(
        &self,
        max_depth: usize,
        copies: &mut std::collections::HashMap<usize, SharedMap>,
    ) -> Option<V> {
        let nested = max_depth.checked_sub(1);
        Some(match self {
            V::List(l) => {
                let d = nested?;
                V::List(
                    l.iter()
                        .map(|e| e.copy_shared(d, copies))
                        .collect::<Option<_>>()?,
                )
            }
            V::Map(m) => {
                if let Some(copy) = copies.get(&m.id()) {
                    return Some(V::Map(copy.clone()));
                }
                let d = nested?;
                let copy = SharedMap::default();
                copies.insert(m.id(), copy.clone());
                let entries = m
                    .entries()
                    .iter()
                    .map(|(k, e)| Some((k.clone(), e.copy_shared(d, copies)?)))
                    .collect::<Option<BTreeMap<_, _>>>()?;
                copy.update(|t| *t = entries).ok()?;
                V::Map(copy)
            }
            other => other.clone(),
        })
    }

    fn copy_as(&self, max_depth: usize) -> Option<V> {
        let nested = max_depth.checked_sub(1);
        Some(match self {
            V::List(l) => {
                let d = nested?;
                V::List(l.iter().map(|e| e.copy_as(d)).collect::<Option<_>>()?)
            }
            V::Map(m) => {
                let d = nested?;
                V::Map(SharedMap::new(
                    m.entries()
                        .iter()
                        .map(|(k, e)| Some((k.clone(), e.copy_as(d)?)))
                        .collect::<Option<_>>()?,
                ))
            }
            other => other.clone(),
        })
    }

    /// Converts to JSON (as `json.Marshal` would see it; `Missing` becomes `null`).
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            V::Missing | V::Nil => serde_json::Value::Null,
            V::Bool(b) => serde_json::Value::Bool(*b),
            V::Int(i) | V::Int64(i) => serde_json::Value::from(*i),
            V::Float(f) => {
                if f.fract() == 0.0 && f.abs() < 9.0e15 {
                    // Whole floats print without a fraction in Go's JSON too.
                    #[allow(clippy::cast_possible_truncation)]
                    serde_json::Value::from(*f as i64)
                } else {
                    serde_json::Number::from_f64(*f)
                        .map_or(serde_json::Value::Null, serde_json::Value::Number)
                }
            }
            V::Str(s) => serde_json::Value::String(s.clone()),
            V::List(l) => serde_json::Value::Array(l.iter().map(V::to_json).collect()),
            V::Map(m) => serde_json::Value::Object(
                m.entries()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
            V::Host(h) => h.json_view().to_json(),
        }
    }

    /// The value as `encoding/json` sees it, host objects replaced by what
    /// it writes for them (a struct's members become a map), as
    /// sigs.k8s.io/yaml sees it through JSON.
    #[must_use]
    pub fn json_view(&self) -> V {
        match self {
            V::Host(h) => h.json_view(),
            V::List(l) => V::List(l.iter().map(V::json_view).collect()),
            V::Map(m) => V::Map(SharedMap::new(
                m.entries()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.json_view()))
                    .collect(),
            )),
            other => other.clone(),
        }
    }

    /// Go's `template.IsTrue`.
    #[must_use]
    pub fn truth(&self) -> bool {
        match self {
            V::Missing | V::Nil => false,
            V::Bool(b) => *b,
            V::Int(i) | V::Int64(i) => *i != 0,
            V::Float(f) => *f != 0.0,
            V::Str(s) => !s.is_empty(),
            V::List(l) => !l.is_empty(),
            V::Map(m) => !m.is_empty(),
            V::Host(h) => !matches!(h.0.kind(), "map" | "slice") || h.0.value().truth(),
        }
    }

    /// Go's type name, as `%T` prints it.
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        match self {
            V::Missing | V::Nil => "<nil>",
            V::Bool(_) => "bool",
            V::Int(_) => "int",
            V::Int64(_) => "int64",
            V::Float(_) => "float64",
            V::Str(_) => "string",
            V::List(_) => "[]interface {}",
            V::Map(_) => "map[string]interface {}",
            V::Host(h) => h.0.type_name(),
        }
    }

    /// Go's `reflect.Kind` name, as Sprig's `kindOf` prints it.
    #[must_use]
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            V::Missing | V::Nil => "invalid",
            V::Bool(_) => "bool",
            V::Int(_) => "int",
            V::Int64(_) => "int64",
            V::Float(_) => "float64",
            V::Str(_) => "string",
            V::List(_) => "slice",
            V::Map(_) => "map",
            V::Host(h) => h.0.kind(),
        }
    }

    /// What holding this value costs, in bytes: its text plus a fixed charge
    /// per node, so that a budget of cost bounds both the memory a template
    /// holds and the time spent walking it. A map met twice counts twice, as
    /// printing it prints it twice. The walk stops as soon as the cost passes
    /// `limit` (a map holding one map under many keys, nested, is small in
    /// memory but exponential to print). A map `memo` measured whole since
    /// the last change to any map ([`SharedMap::update`]) is not walked
    /// again: its cost and height are taken from there, and every map
    /// walked whole is recorded in it.
    ///
    /// # Errors
    /// A value nesting deeper than `max_depth` (deeper values would
    /// overflow the recursive printers), or a map containing itself.
    pub(crate) fn measure(
        &self,
        max_depth: usize,
        limit: usize,
        memo: &mut CostMemo,
    ) -> Result<Measured, Unmeasurable> {
        struct Walk<'m> {
            ancestors: Vec<usize>,
            total: usize,
            walked: usize,
            limit: usize,
            memo: &'m mut CostMemo,
        }
        /// How many lists and maps nest in `v`, itself included.
        fn walk(v: &V, depth_left: usize, w: &mut Walk<'_>) -> Result<usize, Unmeasurable> {
            w.total = w.total.saturating_add(NODE_COST);
            w.walked = w.walked.saturating_add(NODE_COST);
            match v {
                V::Str(s) => {
                    w.total = w.total.saturating_add(s.len());
                    w.walked = w.walked.saturating_add(s.len());
                    Ok(0)
                }
                V::List(l) => {
                    let d = depth_left.checked_sub(1).ok_or(Unmeasurable::TooDeep)?;
                    let mut below = 0;
                    for e in l {
                        if w.total > w.limit {
                            break;
                        }
                        below = below.max(walk(e, d, w)?);
                    }
                    Ok(below + 1)
                }
                V::Map(m) => {
                    let d = depth_left.checked_sub(1).ok_or(Unmeasurable::TooDeep)?;
                    if let Some(&(cost, height, _)) = w.memo.costs.get(&m.id()) {
                        if height > depth_left {
                            return Err(Unmeasurable::TooDeep);
                        }
                        // The node itself was counted above.
                        w.total = w.total.saturating_add(cost - NODE_COST);
                        return Ok(height);
                    }
                    if w.ancestors.contains(&m.id()) {
                        return Err(Unmeasurable::ContainsItself);
                    }
                    w.ancestors.push(m.id());
                    let before = w.total - NODE_COST;
                    let mut below = 0;
                    let mut whole = true;
                    for (k, e) in m.entries().iter() {
                        if w.total > w.limit {
                            whole = false;
                            break;
                        }
                        w.total = w.total.saturating_add(k.len());
                        below = below.max(walk(e, d, w)?);
                    }
                    w.ancestors.pop();
                    if whole && w.total <= w.limit {
                        w.memo
                            .costs
                            .insert(m.id(), (w.total - before, below + 1, m.clone()));
                    }
                    Ok(below + 1)
                }
                _ => Ok(0),
            }
        }
        memo.refresh();
        let mut w = Walk {
            ancestors: Vec::new(),
            total: 0,
            walked: 0,
            limit,
            memo,
        };
        walk(self, max_depth, &mut w)?;
        Ok(Measured {
            cost: w.total,
            walked: w.walked,
        })
    }

    /// What holding this value adds to what the maps in `paid` hold: a map
    /// found there is a reference (a node, as a Go map value is a pointer);
    /// every other map met is added to `paid` as it is counted, and kept
    /// alive there, so that its address names it while it is counted. The
    /// walk stops once the cost passes `limit`. Only for a value
    /// [`V::measure`] has measured (no cycle, not too deep).
    pub(crate) fn fresh_cost(
        &self,
        paid: &mut std::collections::HashMap<usize, SharedMap>,
        limit: usize,
    ) -> usize {
        fn walk(
            v: &V,
            paid: &mut std::collections::HashMap<usize, SharedMap>,
            total: &mut usize,
            limit: usize,
        ) {
            *total = total.saturating_add(NODE_COST);
            match v {
                V::Str(s) => *total = total.saturating_add(s.len()),
                V::List(l) => {
                    for e in l {
                        if *total > limit {
                            return;
                        }
                        walk(e, paid, total, limit);
                    }
                }
                V::Map(m) => {
                    if paid.insert(m.id(), m.clone()).is_some() {
                        return;
                    }
                    for (k, e) in m.entries().iter() {
                        if *total > limit {
                            return;
                        }
                        *total = total.saturating_add(k.len());
                        walk(e, paid, total, limit);
                    }
                }
                _ => {}
            }
        }
        let mut total = 0;
        walk(self, paid, &mut total, limit);
        total
    }

    /// Empties the maps of `self` that contain themselves, so that the
    /// cycles [`V::measure`] refused do not keep their memory alive once the
    /// failed execution drops them (the change is never seen: the
    /// execution stops with an error). Each map is walked once.
    pub(crate) fn break_cycles(&self) {
        fn walk(
            v: &V,
            depth_left: usize,
            ancestors: &mut Vec<SharedMap>,
            done: &mut std::collections::HashSet<usize>,
        ) {
            let Some(d) = depth_left.checked_sub(1) else {
                return;
            };
            match v {
                V::List(l) => l.iter().for_each(|e| walk(e, d, ancestors, done)),
                V::Map(m) => {
                    if ancestors.iter().any(|a| a.same(m)) {
                        // A frozen map refuses, but never contains itself.
                        let _ = m.update(BTreeMap::clear);
                        return;
                    }
                    if !done.insert(m.id()) {
                        return;
                    }
                    ancestors.push(m.clone());
                    for e in m.entries().values() {
                        walk(e, d, ancestors, done);
                    }
                    ancestors.pop();
                }
                _ => {}
            }
        }
        walk(
            self,
            PRINT_DEPTH,
            &mut Vec::new(),
            &mut std::collections::HashSet::new(),
        );
    }

    /// An upper bound on the length of this value printed as JSON or YAML,
    /// indented or not: every byte of text may be escaped as `\u00XX`, and
    /// every line may be indented two spaces per level.
    #[must_use]
    pub(crate) fn printed_bound(&self) -> usize {
        fn text(s: &str, depth: usize) -> usize {
            let lines = s.bytes().filter(|b| *b == b'\n').count();
            s.len()
                .saturating_mul(6)
                .saturating_add(lines.saturating_mul(depth.saturating_mul(2).saturating_add(4)))
        }
        fn walk(v: &V, depth: usize) -> usize {
            let frame = depth.saturating_mul(2).saturating_add(16);
            match v {
                V::Str(s) => frame.saturating_add(text(s, depth)),
                V::List(l) => l
                    .iter()
                    .fold(frame, |n, e| n.saturating_add(walk(e, depth + 1))),
                V::Map(m) => m.entries().iter().fold(frame, |n, (k, e)| {
                    n.saturating_add(text(k, depth))
                        .saturating_add(walk(e, depth + 1))
                }),
                _ => frame.saturating_add(32),
            }
        }
        walk(self, 0)
    }

    /// `fmt.Sprint(v)`, i.e. `%v`.
    #[must_use]
    pub fn go_string(&self) -> String {
        let mut s = String::new();
        write_v(&mut s, self, true, PRINT_DEPTH, &mut PRINT_NODES.clone());
        s
    }
}

/// How deep `%v` prints: beyond what a template may hold (values are
/// measured by [`V::measure`] before they are printed), so only a value that
/// escaped measuring, such as a map containing itself printed in a Rust
/// error message, is cut short (Go would overflow its stack).
const PRINT_DEPTH: usize = 1000;
/// How many nodes `%v` prints, for the same reason as [`PRINT_DEPTH`].
const PRINT_NODES: usize = 1 << 24;

fn write_v(out: &mut String, v: &V, top: bool, depth_left: usize, nodes_left: &mut usize) {
    let (Some(depth_left), Some(n)) = (depth_left.checked_sub(1), nodes_left.checked_sub(1)) else {
        out.push_str("...");
        return;
    };
    *nodes_left = n;
    match v {
        V::Missing => out.push_str(if top { "<no value>" } else { "<nil>" }),
        V::Nil => out.push_str("<nil>"),
        V::Host(h) => out.push_str(&h.0.format(top)),
        V::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        V::Int(i) | V::Int64(i) => {
            let _ = write!(out, "{i}");
        }
        V::Float(f) => out.push_str(&format_float_g(*f)),
        V::Str(s) => out.push_str(s),
        V::List(l) => {
            out.push('[');
            for (i, e) in l.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_v(out, e, false, depth_left, nodes_left);
            }
            out.push(']');
        }
        V::Map(m) => {
            out.push_str("map[");
            for (i, (k, e)) in m.entries().iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_v(out, e, false, depth_left, nodes_left);
            }
            out.push(']');
        }
    }
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`, which is what `%v` prints for a
/// `float64`: the shortest digits, with an exponent when the decimal exponent
/// is below -4 or at least 6 (Go uses precision 6 for that decision when the
/// precision is "shortest"), so `1e6` prints `1e+06`.
#[must_use]
pub fn format_float_g(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // Rust's `{:e}` gives the shortest round-tripping digits, like Go's.
    g_from_exp(&format!("{f:e}"))
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)`: the shortest digits that
/// read back as the same `float32` (sigs.k8s.io/yaml writes a number into
/// a string field so: `appVersion: 1.10` is `"1.1"`).
#[must_use]
pub fn format_float32_g(f: f64) -> String {
    #[allow(clippy::cast_possible_truncation)]
    let x = f as f32;
    if !x.is_finite() || x == 0.0 {
        return format_float_g(f64::from(x));
    }
    g_from_exp(&format!("{x:e}"))
}

/// `'g'` formatting of the shortest digits Rust's `{:e}` gave (`e`).
fn g_from_exp(e: &str) -> String {
    let (mant, exp) = e.split_once('e').unwrap_or((e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mant) = mant.strip_prefix('-').map_or((false, mant), |m| (true, m));
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if !(-4..6).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let _ = write!(out, "{:02}", exp.abs());
    } else if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let point = usize::try_from(exp + 1).unwrap_or(0);
        if digits.len() <= point {
            out.push_str(&digits);
            for _ in digits.len()..point {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..point]);
            out.push('.');
            out.push_str(&digits[point..]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_go_v() {
        assert_eq!(format_float_g(3.0), "3");
        assert_eq!(format_float_g(8080.0), "8080");
        assert_eq!(format_float_g(1.5), "1.5");
        assert_eq!(format_float_g(0.0001), "0.0001");
        assert_eq!(format_float_g(0.00001), "1e-05");
        assert_eq!(format_float_g(123_456.0), "123456");
        assert_eq!(format_float_g(1e6), "1e+06");
        assert_eq!(format_float_g(-2.25), "-2.25");
        assert_eq!(format_float_g(1_234_567.0), "1.234567e+06");
    }

    #[test]
    fn collections_print_like_go() {
        let v = V::Map(
            [
                (
                    "b".to_string(),
                    V::List(vec![V::Str("x".into()), V::Float(2.0)]),
                ),
                ("a".to_string(), V::Nil),
            ]
            .into_iter()
            .collect(),
        );
        assert_eq!(v.go_string(), "map[a:<nil> b:[x 2]]");
        assert_eq!(V::Missing.go_string(), "<no value>");
    }
}
