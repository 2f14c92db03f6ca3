//! A Go `text/template` engine with two function sets ([`FuncSet`]): the
//! one Argo CD's ApplicationSet controller registers (Go's builtins, Sprig
//! minus `env`, `expandenv` and `getHostByName`, plus `normalize`,
//! `slugify`, `toYaml`, `fromYaml` and `fromYamlArray`; AC
//! `applicationset/utils/utils.go` `init`), and Helm's.
//!
//! Two ways in: [`parse`] gives a [`Template`] for one ApplicationSet
//! string (no `define`/`template`/`block`); [`TemplateSet`] holds the many
//! named sources of a Helm chart, with `define`, `template`, `block`,
//! `include`, `tpl` and Go's error text. Values come in as [`V`]; objects
//! with methods (Helm's `.Files`, `.Capabilities`) as [`HostObject`]s:
//!
//! ```
//! use gotemplate::{FuncSet, MissingKey, TemplateSet, V};
//!
//! let mut set = TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero);
//! // In Helm's parse order (`sortTemplates`); a later `define` wins.
//! set.add("web/templates/_helpers.tpl", r#"{{ define "web.name" }}{{ .Release.Name }}-web{{ end }}"#)?;
//! set.add("web/templates/svc.yaml", "name: {{ include \"web.name\" . | trunc 63 }}\nv: {{ .Values.port }}")?;
//! let release = V::Map([("Name".to_string(), V::Str("rel".into()))].into());
//! let values = V::Map([("port".to_string(), V::Float(8080.0))].into());
//! let dot = V::Map([("Release".to_string(), release), ("Values".to_string(), values)].into());
//! let out = set.execute("web/templates/svc.yaml", &dot)?;
//! // Helm then removes `<no value>` and splits the documents.
//! assert_eq!(out.replace("<no value>", ""), "name: rel-web\nv: 8080");
//! # Ok::<(), String>(())
//! ```
//!
//! Semantics follow Go's `text/template/exec.go`: a missing map key is an
//! invalid value that prints `<no value>` (or fails with
//! `missingkey=error`), a JSON `null` prints `<nil>`, and a function given a
//! value of the wrong type fails as Go's reflection would. A Sprig function
//! this engine does not implement fails with its name: a template is never
//! rendered approximately.

mod args;
mod crypto;
mod encoding;
pub mod funcs;
mod generators;
pub mod go;
mod helm_values;
pub mod limits;
mod parse;
mod printf;
pub mod value;
pub mod yaml_out;

mod set;
mod toml_out;
mod url;

use std::borrow::Cow;

use crate::limits::BEYOND_LIMITS;

pub use funcs::{path_base, path_dir, sanitize_name};
pub use generators::{Generator, Variant};
pub use go::quote::go_quote;

/// The Helm functions whose result is random or the clock's.
#[must_use]
pub fn generator_names() -> &'static [&'static str] {
    generators::NAMES
}
use parse::{Arg, Cmd, List, Node, Pipe};
use set::SetCx;
pub use set::TemplateSet;
pub use value::{Host, HostObject, Json, SharedMap, V};

/// Which functions a template may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FuncSet {
    /// Argo CD's ApplicationSet controller (AC `applicationset/utils/utils.go`
    /// `init`): Go's builtins, Sprig minus `env`, `expandenv` and
    /// `getHostByName`, plus `normalize`, `slugify`, `toYaml`, `fromYaml`,
    /// `fromYamlArray`.
    #[default]
    ApplicationSet,
    /// Helm's engine (`pkg/engine/funcs.go` `funcMap`, `engine.go`
    /// `initFunMap`): Go's builtins, Sprig's `TxtFuncMap` minus `env` and
    /// `expandenv`, plus `toYaml`, `mustToYaml`, `fromYaml`, `fromYamlArray`,
    /// `toJson`, `mustToJson`, `fromJson`, `fromJsonArray`, `include`, `tpl`,
    /// `required`, `fail`, `lookup` (an empty map, as in `helm template`) and
    /// `getHostByName` (an empty string, DNS lookups being off).
    Helm,
}

/// Which Helm release a [`FuncSet::Helm`] set executes as, where their
/// template engines differ (`TemplateSet::with_helm_gen`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum HelmGen {
    /// Helm 3.17, built with Go 1.23: `range` takes no integer.
    #[default]
    Go123,
    /// Helm 3.18 and 3.19, built with Go 1.24 (`.github/env`
    /// `GOLANG_VERSION=1.24`): `range` over an integer (Go 1.24
    /// `text/template` `walkRange`).
    Go124,
    /// Helm 4 (Go 1.26): also `mustToYaml` and `mustToToml`
    /// (`pkg/engine/funcs.go` `funcMap` at v4.2.1).
    Helm4,
}

/// How a missing map key evaluates (`goTemplateOptions: ["missingkey=..."]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingKey {
    /// `default` / `invalid`: the invalid value, printed `<no value>`.
    #[default]
    Invalid,
    /// `zero`: the zero value of `any`, printed `<nil>`.
    Zero,
    /// `error`: execution fails.
    Error,
}

impl MissingKey {
    /// Reads `goTemplateOptions`.
    ///
    /// # Errors
    /// An option Go's `Template.Option` would reject (it panics there).
    pub fn from_options(options: &[String]) -> Result<MissingKey, String> {
        let mut mk = MissingKey::Invalid;
        for o in options {
            mk = match o.as_str() {
                "missingkey=default" | "missingkey=invalid" => MissingKey::Invalid,
                "missingkey=zero" => MissingKey::Zero,
                "missingkey=error" => MissingKey::Error,
                other => return Err(format!("unrecognized goTemplateOptions entry `{other}`")),
            };
        }
        Ok(mk)
    }
}

/// A parsed template, ready to execute many times.
#[derive(Debug, Clone)]
pub struct Template {
    root: List,
}

/// Parses `src`.
///
/// # Errors
/// A syntax error or an action this engine does not support.
pub fn parse(src: &str) -> Result<Template, String> {
    let root = parse::parse(src)?;
    check_functions(&root, FuncSet::ApplicationSet).map_err(|(_, e)| e)?;
    Ok(Template { root })
}

/// Go resolves function names at parse time, so an unknown one is a parse
/// error; the error comes with the byte offset of the command naming it.
fn check_functions(list: &List, set: FuncSet) -> Result<(), (usize, String)> {
    fn pipe(p: &Pipe, set: FuncSet) -> Result<(), (usize, String)> {
        for c in &p.cmds {
            for (i, a) in c.args.iter().enumerate() {
                let at = c.pos.get(i).copied().unwrap_or(0);
                match a {
                    Arg::Ident(name) => funcs::check_name(name, set).map_err(|e| (at, e))?,
                    Arg::Sub(inner, _) => pipe(inner, set)?,
                    _ => {}
                }
            }
        }
        Ok(())
    }
    for n in list {
        match n {
            Node::Action(p) => pipe(p, set)?,
            Node::If(p, a, b) | Node::Range(p, a, b) | Node::With(p, a, b) => {
                pipe(p, set)?;
                check_functions(a, set)?;
                check_functions(b, set)?;
            }
            Node::Template(t) => {
                if let Some(p) = &t.pipe {
                    pipe(p, set)?;
                }
            }
            Node::Text(_) | Node::Break | Node::Continue => {}
        }
    }
    Ok(())
}

/// The work left to an expansion that executes many templates (one
/// ApplicationSet): every execution draws its steps and value bytes from it,
/// so a hostile expansion is bounded as a whole, not only per string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Template nodes still allowed.
    pub steps: usize,
    /// Bytes of values (see [`V::measure`]) still allowed.
    pub bytes: usize,
}

impl Budget {
    /// What one execution may use at most.
    pub const PER_EXECUTION: Budget = Budget {
        steps: MAX_STEPS,
        bytes: MAX_VALUE_BYTES,
    };

    /// What is left of this budget after drawing `drawn`, when it covers it.
    #[must_use]
    pub fn checked_sub(self, drawn: Budget) -> Option<Budget> {
        Some(Budget {
            steps: self.steps.checked_sub(drawn.steps)?,
            bytes: self.bytes.checked_sub(drawn.bytes)?,
        })
    }
}

impl Template {
    /// Executes the template with `data` as dot.
    ///
    /// # Errors
    /// An execution error as Go would report it (missing key with
    /// `missingkey=error`, wrong argument types, unsupported functions...).
    pub(crate) fn execute(&self, data: &V, missing: MissingKey) -> Result<String, String> {
        self.execute_within(data, missing, &mut Budget::PER_EXECUTION.clone())
    }

    /// Executes the template, drawing its work from `budget` (and never more
    /// than [`Budget::PER_EXECUTION`]).
    ///
    /// # Errors
    /// See [`Template::execute`]; also a budget exhausted.
    pub fn execute_within(
        &self,
        data: &V,
        missing: MissingKey,
        budget: &mut Budget,
    ) -> Result<String, String> {
        let steps = budget.steps.min(MAX_STEPS);
        let bytes = budget.bytes.min(MAX_VALUE_BYTES);
        let mut st = State {
            out: String::new(),
            // `$` is the caller's data, read in place: not charged.
            vars: vec![("$".to_string(), data.clone())],
            missing,
            depth: 0,
            steps_left: steps,
            bytes_left: bytes,
            set: None,
            paid: std::collections::HashMap::new(),
            measured: value::CostMemo::default(),
        };
        let r = st.walk(data, &self.root);
        budget.steps -= steps - st.steps_left;
        budget.bytes -= bytes - st.bytes_left;
        match r {
            Ok(()) | Err(Flow::Break | Flow::Continue) => Ok(st.out),
            Err(Flow::Error(e) | Flow::Exec(e)) => Err(bounded_error(e)),
        }
    }
}

/// Parses and executes in one go.
///
/// # Errors
/// See [`parse`] and [`Template::execute`].
pub fn render(src: &str, data: &V, missing: MissingKey) -> Result<String, String> {
    parse(src)?.execute(data, missing)
}

enum Flow {
    Break,
    Continue,
    /// An error not yet given its place in the template.
    Error(String),
    /// An error in Go's `template: NAME:LINE:COL: executing ...` form.
    Exec(String),
}

impl From<String> for Flow {
    fn from(s: String) -> Flow {
        Flow::Error(s)
    }
}

struct State {
    /// The template set being executed, if any (not for ApplicationSets).
    set: Option<SetCx>,
    out: String,
    vars: Vec<(String, V)>,
    missing: MissingKey,
    depth: usize,
    /// Nodes this execution may still walk (see [`MAX_STEPS`]).
    steps_left: usize,
    /// Bytes of values this execution may still materialise (see
    /// [`MAX_VALUE_BYTES`]).
    bytes_left: usize,
    /// The maps whose contents have been charged, by identity: handing one
    /// out again hands out a reference (see [`State::charge`]).
    paid: std::collections::HashMap<usize, SharedMap>,
    /// The maps measured whole (see [`State::charge`]).
    measured: value::CostMemo,
}

const MAX_DEPTH: usize = 100;
/// Bounds the output of one template so a hostile `range`/`repeat` cannot exhaust memory.
const MAX_OUTPUT: usize = 10 << 20;
/// Bounds the work of one template: nested `range`s that print nothing
/// (`{{range until 1000000}}{{range until 1000000}}{{end}}{{end}}`) never
/// reach [`MAX_OUTPUT`] but would run for hours.
const MAX_STEPS: usize = 1_000_000;
/// Bounds the values one execution materialises, intermediate ones
/// included: every value a function returns, a variable or field hands out,
/// or the template prints is charged its [`V::measure`]. Functions whose result
/// can outgrow their arguments (`repeat`, `indent`, `replace`, `join`,
/// `regexReplaceAll`, `toPrettyJson`...) refuse before allocating a result
/// larger than what is left, so no chain of them (`$x = list $x $x`, nested
/// `dict` reassignment) can exhaust memory or spend unbounded time copying.
const MAX_VALUE_BYTES: usize = 16 << 20;
/// The bytes of value cost one step pays for when a handed-out value is
/// measured ([`State::charge`]): walking values is bounded with the rest
/// of an execution's work.
const WALK_BYTES_PER_STEP: usize = 256;
/// The bytes of a regular expression's pattern one step pays for when it
/// is compiled (see [`State::call`]).
const REGEX_PATTERN_BYTES_PER_STEP: usize = 16;
/// Bounds how deep a value may nest, so printing, copying and dropping it
/// cannot overflow the stack (`fromYaml` alone may nest 256 levels).
const MAX_VALUE_DEPTH: usize = 300;
/// The longest error text an execution keeps. Go's messages quote
/// template text and wrap each inner error (`tpl` quotes the whole string
/// it parses at every level of a recursion), so a 200 KB value `tpl`-ed
/// into itself made each message of a chart megabytes long; past this,
/// the middle of the message is left out, keeping its context (the head)
/// and its cause (the tail).
pub const MAX_ERROR_BYTES: usize = 8 << 10;
/// The longest piece of template text quoted in an error.
const MAX_QUOTED_BYTES: usize = 1 << 10;

pub use crate::limits::bounded_text;

/// An error message within [`MAX_ERROR_BYTES`].
fn bounded_error(s: String) -> String {
    match bounded_text(&s, MAX_ERROR_BYTES) {
        Cow::Borrowed(_) => s,
        Cow::Owned(o) => o,
    }
}

/// Template text quoted as Go quotes it (`%q`), at most
/// [`MAX_QUOTED_BYTES`] of it, saying how much was left out.
fn quoted_text(text: &str) -> String {
    if text.len() <= MAX_QUOTED_BYTES {
        return go::quote::go_quote(text);
    }
    let mut end = MAX_QUOTED_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}… ({} bytes more)",
        go::quote::go_quote(&text[..end]),
        text.len() - end
    )
}

impl State {
    fn walk(&mut self, dot: &V, list: &List) -> Result<(), Flow> {
        // Counted per list walked and per node, so empty `range` bodies count too.
        self.charge_steps(1 + list.len())?;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Flow::Error(format!(
                "templates nest more than {MAX_DEPTH} levels deep {BEYOND_LIMITS}"
            )));
        }
        let r = self.walk_inner(dot, list);
        self.depth -= 1;
        r
    }

    fn charge_steps(&mut self, n: usize) -> Result<(), Flow> {
        if n > self.steps_left {
            self.steps_left = 0;
            return Err(Flow::Error(format!(
                "template execution exceeds {MAX_STEPS} steps, or the steps left to what it is part of (an ApplicationSet's expansion, a chart's render) {BEYOND_LIMITS}"
            )));
        }
        self.steps_left -= n;
        Ok(())
    }

    fn charge_bytes(&mut self, n: usize) -> Result<(), Flow> {
        if n > self.bytes_left {
            self.bytes_left = 0;
            return Err(Flow::Error(format!(
                "template values exceed {} MiB (every value a function returns, a variable hands out or the template prints counts), or the bytes left to what it is part of (an ApplicationSet's expansion, a chart's render) {BEYOND_LIMITS}",
                MAX_VALUE_BYTES >> 20
            )));
        }
        self.bytes_left -= n;
        Ok(())
    }

    /// Charges a value about to be handed out or stored. The whole value
    /// must be within [`MAX_VALUE_BYTES`] on its own, since printing or
    /// copying it walks all of it (a map holding one map under many keys,
    /// nested, is small in memory but exponential to print), and that walk
    /// is charged as steps; the bytes charged are only what the maps
    /// already charged do not hold. A Go map is a reference: a chart's
    /// helpers pass the root context in a `dict` at every level of a
    /// recursion over `.Values` (nats' `tplYamlItr`), which copies nothing.
    fn charge(&mut self, v: &V) -> Result<(), Flow> {
        match v.measure(MAX_VALUE_DEPTH, MAX_VALUE_BYTES, &mut self.measured) {
            Ok(m) => {
                if m.cost > MAX_VALUE_BYTES {
                    return self.charge_bytes(usize::MAX);
                }
                self.charge_steps(m.walked / WALK_BYTES_PER_STEP)?;
                let fresh = v.fresh_cost(&mut self.paid, self.bytes_left);
                self.charge_bytes(fresh)
            }
            Err(value::Unmeasurable::TooDeep) => Err(Flow::Error(format!(
                "a template value nests deeper than {MAX_VALUE_DEPTH} levels {BEYOND_LIMITS}"
            ))),
            Err(value::Unmeasurable::ContainsItself) => {
                v.break_cycles();
                Err(Flow::Error(
                    "a map that contains itself is not supported by gitops-lint (Go recurses without end where it prints or copies one)".into(),
                ))
            }
        }
    }

    fn walk_inner(&mut self, dot: &V, list: &List) -> Result<(), Flow> {
        for node in list {
            if self.out.len() > MAX_OUTPUT {
                return Err(Flow::Error(format!(
                    "template output exceeds 10 MiB {BEYOND_LIMITS}"
                )));
            }

            match node {
                Node::Text(t) => {
                    self.charge_bytes(t.len())?;
                    self.out.push_str(t);
                }
                Node::Action(p) => {
                    let v = self.pipe(dot, p)?;
                    if p.vars.is_empty() {
                        self.print(&v, p)?;
                    }
                }
                Node::If(p, then, els) => {
                    let mark = self.vars.len();
                    let v = self.pipe(dot, p)?;
                    let r = if v.truth() {
                        self.walk(dot, then)
                    } else {
                        self.walk(dot, els)
                    };
                    self.vars.truncate(mark);
                    r?;
                }
                Node::With(p, body, els) => {
                    let mark = self.vars.len();
                    let v = self.pipe(dot, p)?;
                    let r = if v.truth() {
                        self.walk(&v, body)
                    } else {
                        self.walk(dot, els)
                    };
                    self.vars.truncate(mark);
                    r?;
                }
                Node::Range(p, body, els) => {
                    let mark = self.vars.len();
                    let r = self.range(dot, p, body, els);
                    self.vars.truncate(mark);
                    r?;
                }
                Node::Break => return Err(Flow::Break),
                Node::Continue => return Err(Flow::Continue),
                Node::Template(t) => {
                    let mark = self.vars.len();
                    let r = self.template_node(dot, t);
                    self.vars.truncate(mark);
                    r?;
                }
            }
        }
        Ok(())
    }

    fn range(&mut self, dot: &V, p: &Pipe, body: &List, els: &List) -> Result<(), Flow> {
        // Go reports a range error at the last node it evaluated: the last
        // operand of the pipeline.
        let (at, text) = p
            .cmds
            .last()
            .and_then(|c| Some((*c.pos.last()?, c.texts.last()?.clone())))
            .unwrap_or_default();
        self.range_inner(dot, p, body, els)
            .map_err(|f| self.locate(at, &text, f))
    }

    fn range_inner(&mut self, dot: &V, p: &Pipe, body: &List, els: &List) -> Result<(), Flow> {
        // The declared variables are bound per element, not to the whole value.
        let decl = Pipe {
            vars: Vec::new(),
            assign: false,
            cmds: p.cmds.clone(),
            text: p.text.clone(),
        };
        let v = match self.pipe(dot, &decl)? {
            V::Host(h) => h.0.value(),
            v => v,
        };
        let items: Vec<(V, V)> = match v {
            V::Missing => Vec::new(),
            // Go's `evalPipeline` makes a nil interface the invalid value,
            // which `walkRange` treats as empty; in a template set, as Helm
            // executes them.
            V::Nil if self.set.is_some() => Vec::new(),
            V::List(l) => l
                .into_iter()
                .enumerate()
                .map(|(i, e)| (V::Int(i64::try_from(i).unwrap_or(0)), e))
                .collect(),
            // Go's `walkRange` takes the keys and values before the first
            // iteration (`fmtsort.Sort`): a change made to the map inside
            // the body does not change what is ranged over.
            V::Map(m) => m
                .entries()
                .iter()
                .map(|(k, e)| (V::Str(k.clone()), e.clone()))
                .collect(),
            // Helm 3.17 is built with Go 1.23, whose `range` takes no integer
            // (text/template `walkRange`; integers came with Go 1.24).
            V::Int(n) | V::Int64(n)
                if self
                    .set
                    .as_ref()
                    .is_some_and(|c| c.funcs() == FuncSet::Helm && c.gen() < HelmGen::Go124) =>
            {
                return Err(format!("range can't iterate over {n}").into())
            }
            // Go 1.24's `walkRange` binds one variable at most to an integer
            // (verified with helm v3.18.0, built with go1.24.3).
            V::Int(n) | V::Int64(n)
                if p.vars.len() > 1
                    && self
                        .set
                        .as_ref()
                        .is_some_and(|c| c.funcs() == FuncSet::Helm) =>
            {
                return Err(format!("can't use {n} to iterate over more than one variable").into())
            }
            // Go ranges over an int lazily; a bound keeps a hostile count finite.
            V::Int(n) | V::Int64(n) if n > 1_000_000 => {
                return Err(format!(
                    "range over {n} iterations exceeds the limit of 1000000 {BEYOND_LIMITS}"
                )
                .into())
            }
            // Go 1.24's `walkRange` yields values of the integer's own type
            // (`reflect.Value.Seq`).
            V::Int(n) | V::Int64(n) => {
                let wide = matches!(v, V::Int64(_));
                let n = usize::try_from(n).unwrap_or(0);
                self.charge_bytes(n.saturating_mul(2 * value::NODE_COST))?;
                (0..n)
                    .map(|i| {
                        let i = i64::try_from(i).unwrap_or(i64::MAX);
                        let i = if wide { V::Int64(i) } else { V::Int(i) };
                        (i.clone(), i)
                    })
                    .collect()
            }
            other => return Err(format!("range can't iterate over {}", other.go_string()).into()),
        };
        if items.is_empty() {
            return self.walk(dot, els);
        }
        let mark = self.vars.len();
        for (k, e) in items {
            self.vars.truncate(mark);
            match p.vars.len() {
                0 => {}
                1 => {
                    self.charge(&e)?;
                    self.vars.push((p.vars[0].clone(), e.clone()));
                }
                _ => {
                    self.charge(&e)?;
                    self.vars.push((p.vars[0].clone(), k));
                    self.vars.push((p.vars[1].clone(), e.clone()));
                }
            }
            match self.walk(&e, body) {
                Ok(()) | Err(Flow::Continue) => {}
                Err(Flow::Break) => break,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn print(&mut self, v: &V, p: &Pipe) -> Result<(), Flow> {
        let _ = p;
        // Go's `evalPipeline` turns a nil interface into the invalid value,
        // printed `<no value>`; in a template set, as Helm executes them.
        let text = if self.set.is_some() && *v == V::Nil {
            "<no value>".to_string()
        } else if let V::Host(h) = v {
            h.0.printed()
        } else {
            v.go_string()
        };
        self.charge_bytes(text.len())?;
        self.out.push_str(&text);
        Ok(())
    }

    fn pipe(&mut self, dot: &V, p: &Pipe) -> Result<V, Flow> {
        let mut final_val: Option<V> = None;
        for c in &p.cmds {
            let v = self.cmd(dot, c, final_val.take())?;
            // `evalPipeline` digs into an `interface{}` after each command:
            // a nil one becomes the invalid value, so a variable or
            // parenthesised pipeline holding it reads fields as empty
            // (`$m := .Values.missing` then `$m.type`) and is the nil map
            // a map parameter accepts (`keys (index .Values "cni")`).
            let v = if self.set.is_some() && v == V::Nil {
                V::Missing
            } else {
                v
            };
            final_val = Some(v);
        }
        let v = final_val.unwrap_or(V::Missing);
        if !p.vars.is_empty() {
            self.charge(&v)?;
            if p.assign {
                let name = &p.vars[0];
                let slot = self.vars.iter_mut().rev().find(|(n, _)| n == name);
                match slot {
                    Some(s) => s.1 = v.clone(),
                    None => return Err(format!("undefined variable: {name}").into()),
                }
            } else {
                for name in &p.vars {
                    self.charge(&v)?;
                    self.vars.push((name.clone(), v.clone()));
                }
            }
        }
        Ok(v)
    }

    fn cmd(&mut self, dot: &V, c: &Cmd, final_val: Option<V>) -> Result<V, Flow> {
        let r = self.cmd_inner(dot, c, final_val);
        r.map_err(|f| self.locate(c.pos.first().copied().unwrap_or(0), &c.text(), f))
    }

    fn cmd_inner(&mut self, dot: &V, c: &Cmd, final_val: Option<V>) -> Result<V, Flow> {
        let first = &c.args[0];
        if let Arg::Ident(name) = first {
            return self.call(dot, name, &c.args[1..], final_val, Some(c));
        }
        if c.args.len() > 1 || final_val.is_some() {
            // Go places these errors at the field node, not the command.
            let at = c.pos.first().copied().unwrap_or(0);
            let text = c.texts.first().cloned().unwrap_or_default();
            if let Some(r) = self.method_call(dot, c, final_val.clone()) {
                return r.map_err(|f| self.locate(at, &text, f));
            }
            let e = Flow::Error(match first {
                Arg::Field(f) | Arg::Var(_, f) if !f.is_empty() => {
                    format!("{} is not a method but has arguments", f[f.len() - 1])
                }
                _ => format!("can't give argument to non-function {}", arg_text(first)),
            });
            return Err(self.locate(at, &text, e));
        }
        self.arg(dot, first)
    }

    fn arg(&mut self, dot: &V, a: &Arg) -> Result<V, Flow> {
        // Fields are looked up in place and only the value reached is
        // copied, and charged: reading `$.a.b` never copies all of `$`.
        let v = match a {
            Arg::Dot => dot.clone(),
            Arg::Field(f) => self.fields(dot, f)?,
            Arg::Var(name, f) => {
                let Some((_, v)) = self.vars.iter().rev().find(|(n, _)| n == name) else {
                    return Err(format!("undefined variable: {name}").into());
                };
                self.fields(v, f)?
            }
            Arg::Ident(name) => return self.call(dot, name, &[], None, None),
            Arg::Str(s) => V::Str(s.clone()),
            Arg::Int(i) => V::Int(*i),
            Arg::Float(f) => V::Float(*f),
            Arg::Bool(b) => V::Bool(*b),
            Arg::Nil => return Err(Flow::Error("nil is not a command".into())),
            Arg::Sub(p, f) => {
                let mark = self.vars.len();
                let v = self.pipe(dot, p);
                self.vars.truncate(mark);
                let v = v?;
                if f.is_empty() {
                    // Already charged as the pipeline's result.
                    return Ok(v);
                }
                // `evalChainNode` walks the fields from `evalPipeline`'s
                // value, which digs into an `interface{}`: a nil one becomes
                // the invalid value, whose fields are zero, not the "nil
                // pointer evaluating" error a field of nil is
                // (`(.Values.resources.limits).memory` with no `limits`).
                let v = if v == V::Nil { V::Missing } else { v };
                self.fields(&v, f)?
            }
        };
        self.charge(&v)?;
        Ok(v)
    }

    fn fields(&self, v: &V, names: &[String]) -> Result<V, Flow> {
        let mut cur = Cow::Borrowed(v);
        for name in names {
            cur = match cur {
                Cow::Borrowed(b) => self.field(b, name)?,
                Cow::Owned(o) => Cow::Owned(self.field(&o, name)?.into_owned()),
            };
        }
        Ok(cur.into_owned())
    }

    /// One step of a field chain: a map entry, or a host object's field.
    fn field<'v>(&self, v: &'v V, name: &str) -> Result<Cow<'v, V>, Flow> {
        static MISSING: V = V::Missing;
        static NIL: V = V::Nil;
        Ok(Cow::Borrowed({
            match v {
                V::Host(h) => {
                    return match h.0.field(name) {
                        Some(x) => Ok(Cow::Owned(x)),
                        None if h.0.is_map() => Ok(Cow::Borrowed(&MISSING)),
                        None => Err(format!(
                            "can't evaluate field {name} in type {}",
                            h.0.type_name()
                        )
                        .into()),
                    }
                }
                V::Missing => {
                    if self.missing == MissingKey::Error {
                        return Err(format!("nil data; no entry for key {name:?}").into());
                    }
                    &MISSING
                }
                V::Nil => {
                    return Err(format!("nil pointer evaluating interface {{}}.{name}").into())
                }
                V::Map(m) if m.is_values_table() && helm_values::is_method(name) => {
                    return helm_values::call(m, name, &[], self.bytes_left)
                        .unwrap_or_else(|| Ok(V::Missing))
                        .map(Cow::Owned)
                        .map_err(Flow::Error);
                }
                V::Map(m) => match m.get(name) {
                    Some(x) => return Ok(Cow::Owned(x)),
                    None => match self.missing {
                        MissingKey::Invalid => &MISSING,
                        MissingKey::Zero => &NIL,
                        MissingKey::Error => {
                            return Err(format!("map has no entry for key {name:?}").into())
                        }
                    },
                },
                // Values read out of parameter maps have Go type `interface {}`.
                _ => {
                    return Err(
                        format!("can't evaluate field {name} in type interface {{}}").into(),
                    )
                }
            }
        }))
    }

    /// A method call's arguments, evaluated in order, the pipeline's value
    /// last (Go's `evalCall`).
    fn method_args(&mut self, dot: &V, c: &Cmd, final_val: Option<V>) -> Result<Vec<V>, Flow> {
        let mut vals = Vec::with_capacity(c.args.len());
        for (i, a) in c.args.iter().enumerate().skip(1) {
            vals.push(self.arg_at(dot, a, Some(c), i)?);
        }
        vals.extend(final_val);
        Ok(vals)
    }

    /// `.a.Method arg...` / `$x.Method arg...`: a method of a host object
    /// called with arguments, the pipeline's value last (Go's `evalField`
    /// with `args` and `final`).
    fn method_call(&mut self, dot: &V, c: &Cmd, final_val: Option<V>) -> Option<Result<V, Flow>> {
        let (base, path) = match &c.args[0] {
            Arg::Field(f) if !f.is_empty() => (dot.clone(), f),
            Arg::Var(name, f) if !f.is_empty() => {
                let v = self.vars.iter().rev().find(|(n, _)| n == name)?.1.clone();
                (v, f)
            }
            _ => return None,
        };
        let (method, recv_path) = path.split_last()?;
        let recv = match self.fields(&base, recv_path) {
            Ok(V::Host(h)) => h,
            Ok(V::Map(m)) if m.is_values_table() && helm_values::is_method(method) => {
                let vals = match self.method_args(dot, c, final_val) {
                    Ok(vals) => vals,
                    Err(e) => return Some(Err(e)),
                };
                let r = helm_values::call(&m, method, &vals, self.bytes_left)?;
                return Some(match r {
                    Ok(v) => self.charge(&v).map(|()| v),
                    Err(e) => Err(Flow::Error(e)),
                });
            }
            Ok(_) => return None,
            Err(e) => return Some(Err(e)),
        };
        let vals = match self.method_args(dot, c, final_val) {
            Ok(vals) => vals,
            Err(e) => return Some(Err(e)),
        };
        Some(match recv.0.call(method, &vals) {
            None if recv.0.is_map() => {
                Err(format!("{method} is not a method but has arguments").into())
            }
            None => Err(format!(
                "can't evaluate field {method} in type {}",
                recv.0.type_name()
            )
            .into()),
            Some(Err(e)) => Err(format!("error calling {method}: {e}").into()),
            Some(Ok(v)) => self.charge(&v).map(|()| v),
        })
    }

    /// Evaluates operand `i` of `c` (when known), placing its error there.
    fn arg_at(&mut self, dot: &V, a: &Arg, c: Option<&Cmd>, i: usize) -> Result<V, Flow> {
        let r = self.arg(dot, a);
        match (r, c) {
            (Err(f), Some(c)) => {
                let at = c.pos.get(i).copied().unwrap_or(0);
                let text = c.texts.get(i).cloned().unwrap_or_default();
                Err(self.locate(at, &text, f))
            }
            (r, _) => r,
        }
    }

    fn call(
        &mut self,
        dot: &V,
        name: &str,
        args: &[Arg],
        final_val: Option<V>,
        c: Option<&Cmd>,
    ) -> Result<V, Flow> {
        // `and` and `or` evaluate their arguments lazily (Go 1.18+).
        if name == "and" || name == "or" {
            let total = args.len() + usize::from(final_val.is_some());
            if total == 0 {
                return Err(
                    format!("wrong number of args for {name}: want at least 1 got 0").into(),
                );
            }
            let mut last = V::Missing;
            for (i, a) in args.iter().enumerate() {
                last = self.arg_at(dot, a, c, i + 1)?;
                if (name == "and") != last.truth() {
                    return Ok(last);
                }
            }
            if let Some(f) = final_val {
                last = f;
            }
            return Ok(last);
        }
        let mut vals = Vec::with_capacity(args.len() + 1);
        for (i, a) in args.iter().enumerate() {
            if matches!(a, Arg::Nil) {
                vals.push(V::Nil);
            } else {
                vals.push(self.arg_at(dot, a, c, i + 1)?);
            }
        }
        if let Some(f) = final_val {
            vals.push(f);
        }
        // Go passes every argument as a copy in an `interface{}`
        // (`reflect.Value.Call`), so a struct reached through a pointer
        // loses its pointer's methods (`String`): the function sees, and
        // returns, the copy.
        for v in &mut vals {
            if let V::Host(h) = v {
                if let Some(b) = h.0.boxed() {
                    *v = b;
                }
            }
        }
        if self.set.is_some() && matches!(name, "include" | "tpl") {
            let out = self
                .set_call(name, vals)
                .map_err(|e| Flow::Error(bounded_error(format!("error calling {name}: {e}"))))?;
            self.charge(&out)?;
            return Ok(out);
        }
        // The functions are handed the arguments where they lie now (a
        // `Vec` moves without moving its elements).
        let at = args::ArgsAt::of(&vals);
        args::forget_refused();
        if let Some(generator) = self.set.as_ref().and_then(SetCx::generator) {
            if let Some(r) = generator.call(name, &vals, self.bytes_left) {
                let out = r.map_err(|e| self.function_error(name, args, c, at, &e))?;
                self.charge(&out)?;
                return Ok(out);
            }
        }
        if name.starts_with("regex") || name.starts_with("mustRegex") {
            // Compiling a pattern and running it over the input are work
            // in proportion to their lengths: charged as steps, so a loop
            // cannot compile a long pattern a million times.
            let len = |v: Option<&V>| match v {
                Some(V::Str(s)) => s.len(),
                _ => 0,
            };
            self.charge_steps(
                1 + len(vals.first()) / REGEX_PATTERN_BYTES_PER_STEP
                    + len(vals.get(1)) / WALK_BYTES_PER_STEP,
            )?;
        }
        let funcs = self
            .set
            .as_ref()
            .map_or(FuncSet::ApplicationSet, SetCx::funcs);
        // Helm 4 encodes TOML with BurntSushi/toml v1.6.0, whose floats
        // differ from v1.4.0's (helm v4.1.4 prints `6.02e+23` where v3.17.1
        // prints `602000000000000000000000.0`).
        let helm4_toml = matches!(name, "toToml" | "mustToToml")
            && self.set.as_ref().is_some_and(|c| c.gen() >= HelmGen::Helm4);
        let out = if helm4_toml {
            funcs::to_toml(&vals, self.bytes_left, toml_out::Floats::Shortest)
        } else {
            funcs::call(name, vals, self.bytes_left, funcs)
        }
        .map_err(|e| self.function_error(name, args, c, at, &e))?;
        self.charge(&out)?;
        Ok(out)
    }

    /// Function `name`'s error `e`: `error calling NAME: …`, unless it
    /// refused the type of one of the arguments at `at`, which
    /// text/template reports before the call ([`State::argument_error`]).
    fn function_error(
        &self,
        name: &str,
        args: &[Arg],
        c: Option<&Cmd>,
        at: args::ArgsAt,
        e: &str,
    ) -> Flow {
        args::refused_arg(at)
            .and_then(|i| self.argument_error(args, c, i, e))
            .unwrap_or_else(|| Flow::Error(bounded_error(format!("error calling {name}: {e}"))))
    }

    /// A function's refusal of argument `i`'s type (`i == args.len()`: the
    /// value piped in) as text/template gives it before the call
    /// (`evalArg`, exec.go): a constant as `expected integer; found "a"`
    /// at the constant, any other value as `validateType`'s message at
    /// the node evaluated last, which for a parenthesized pipeline is the
    /// last operand inside it. `None` where that node is not plain (a
    /// field of a pipeline's result, a method call), or where Go would
    /// take the constant: the function's own message is kept.
    fn argument_error(&self, args: &[Arg], c: Option<&Cmd>, i: usize, e: &str) -> Option<Flow> {
        self.set.as_ref()?;
        let c = c?;
        let expected = e
            .strip_prefix("wrong type for value; expected ")
            .or_else(|| e.strip_prefix("invalid value; expected "))?;
        let expected = expected.split("; got ").next().unwrap_or(expected);
        // A pipeline's value held in an empty interface is taken out of it
        // (`evalPipeline`: "dig down one level"): a nil one is no value.
        let piped = || {
            if e.ends_with("; got interface {}") {
                format!("invalid value; expected {expected}")
            } else {
                e.to_string()
            }
        };
        let (at, text, msg) = match args.get(i) {
            // The piped value is checked after every operand.
            None => {
                let (at, text) = match args.len() {
                    0 => (*c.pos.first()?, c.texts.first()?.clone()),
                    n => last_evaluated(c, n)?,
                };
                (at, text, piped())
            }
            Some(Arg::Sub(..)) => {
                let (at, text) = last_evaluated(c, i + 1)?;
                (at, text, piped())
            }
            Some(a @ (Arg::Str(_) | Arg::Int(_) | Arg::Float(_) | Arg::Bool(_) | Arg::Nil)) => {
                let text = c.texts.get(i + 1)?.clone();
                let accepted = match a {
                    Arg::Str(_) => expected == "string",
                    Arg::Int(n) if expected.starts_with("uint") => *n >= 0,
                    Arg::Int(_) => expected.starts_with("int") || expected.starts_with("float"),
                    Arg::Float(_) => expected.starts_with("float"),
                    Arg::Bool(_) => expected == "bool",
                    _ => false,
                };
                if accepted {
                    return None;
                }
                let msg = match (a, expected) {
                    (Arg::Nil, t) => format!("cannot assign nil to {t}"),
                    (_, "bool") => format!("expected bool; found {text}"),
                    (_, "string") => format!("expected string; found {text}"),
                    (_, t) if t.starts_with("uint") => {
                        format!("expected unsigned integer; found {text}")
                    }
                    (_, t) if t.starts_with("int") => format!("expected integer; found {text}"),
                    (_, t) if t.starts_with("float") => format!("expected float; found {text}"),
                    (_, t) => format!("can't handle {text} for arg of type {t}"),
                };
                (*c.pos.get(i + 1)?, text, msg)
            }
            Some(_) => {
                let (at, text) = last_evaluated(c, i + 1)?;
                (at, text, e.to_string())
            }
        };
        Some(self.locate(at, &text, Flow::Error(msg)))
    }
}

/// Where text/template's state stands once operand `j` of `c` is
/// evaluated (`state.at`): the operand itself, or, inside a parenthesized
/// pipeline, the node its last command evaluated last.
fn last_evaluated(c: &Cmd, j: usize) -> Option<(usize, String)> {
    match c.args.get(j)? {
        Arg::Sub(pipe, fields) => {
            let last = pipe.cmds.last()?;
            if !fields.is_empty() || !pipe.vars.is_empty() {
                return None;
            }
            // A function's last operand; a lone operand itself. A field or
            // variable with operands is a method call, not followed here.
            match &last.args[..] {
                [Arg::Ident(_), _, ..] => last_evaluated(last, last.args.len() - 1),
                [Arg::Sub(..)] => last_evaluated(last, 0),
                [_] => Some((*last.pos.first()?, last.texts.first()?.clone())),
                _ => None,
            }
        }
        _ => Some((*c.pos.get(j)?, c.texts.get(j)?.clone())),
    }
}

fn arg_text(a: &Arg) -> String {
    match a {
        Arg::Dot => ".".into(),
        Arg::Field(f) => format!(".{}", f.join(".")),
        Arg::Var(n, f) if f.is_empty() => n.clone(),
        Arg::Var(n, f) => format!("{n}.{}", f.join(".")),
        Arg::Ident(i) => i.clone(),
        Arg::Str(s) => format!("{s:?}"),
        Arg::Int(i) => i.to_string(),
        Arg::Float(f) => f.to_string(),
        Arg::Bool(b) => b.to_string(),
        Arg::Nil => "nil".into(),
        Arg::Sub(p, _) => format!("({})", p.text),
    }
}

/// Builds template data from a JSON parameter map.
#[must_use]
pub fn data_from_params(params: &serde_json::Map<String, serde_json::Value>) -> V {
    // Argo CD renders every field of an Application from the one parameter
    // map, in an order this crate does not follow, so a template changing
    // it in place is refused (see [`value::FROZEN_MAP`]).
    V::from_json_frozen(&serde_json::Value::Object(params.clone()))
}

#[cfg(test)]
mod set_tests;
#[cfg(test)]
mod set_value_tests;
#[cfg(test)]
mod tests;
