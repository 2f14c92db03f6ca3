//! Template sets, as Go's `text/template` keeps them and Helm uses them
//! (`pkg/engine/engine.go` `render`): many named sources parsed into one
//! set, where `define`, `template` and `block` name templates across
//! sources, `include` executes a named template into a string and `tpl`
//! parses and executes a string in the set's context.
//!
//! Errors keep Go's text: parse errors `template: NAME:LINE: MSG`, execution
//! errors `template: NAME:LINE:COL: executing "TEMPLATE" at <NODE>: MSG`,
//! where NAME is the source the failing node was parsed from and TEMPLATE
//! the template being executed (`text/template` `state.errorf`,
//! `parse.Tree.ErrorContext`). Helm's `fail` and `required` messages are
//! wrapped in `HELM_ERR_START`/`HELM_ERR_END` as Helm's `warnWrap` does, so
//! a caller can reproduce Helm's `cleanupExecError`.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::generators::{Generator, Variant};
use super::parse::{self, List, Node, TemplateCall};
use super::{
    bounded_error, check_functions, quoted_text, Budget, Flow, FuncSet, HelmGen, MissingKey, State,
    MAX_STEPS, MAX_VALUE_BYTES, V,
};

pub(super) use crate::go::quote::go_quote;

/// Helm's `recursionMaxNums`: how many executions of one named template
/// `include` may have in progress (`pkg/engine/engine.go` `includeFun`).
const RECURSION_MAX_NUMS: usize = 1000;

/// One parsed template: its body and the source it was parsed from.
#[derive(Debug)]
pub(super) struct Tree {
    /// The name of the source (Go's `Tree.ParseName`).
    parse_name: Arc<str>,
    /// The whole source text, for line and column numbers.
    src: Arc<str>,
    body: List,
}

impl Tree {
    /// Go's `parse.IsEmptyTree`: nothing but white space.
    fn is_empty(&self) -> bool {
        self.body.iter().all(
            |n| matches!(n, Node::Text(t) if t.trim_matches([' ', '\t', '\r', '\n']).is_empty()),
        )
    }
}

type Trees = BTreeMap<String, Arc<Tree>>;

/// A set of named templates sharing one namespace, as Go's
/// `template.New(root).New(name).Parse(src)` builds it.
///
/// ```
/// use gotemplate::{FuncSet, MissingKey, TemplateSet, V};
///
/// let mut set = TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero);
/// set.add("c/templates/_helpers.tpl", r#"{{ define "c.name" }}{{ .Chart.Name }}{{ end }}"#)?;
/// set.add("c/templates/cm.yaml", r#"name: {{ include "c.name" . | upper }}"#)?;
/// let chart = V::Map([("Name".to_string(), V::Str("web".into()))].into());
/// let data = V::Map([("Chart".to_string(), chart)].into());
/// assert_eq!(set.execute("c/templates/cm.yaml", &data)?, "name: WEB");
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone)]
pub struct TemplateSet {
    root: String,
    funcs: FuncSet,
    gen: HelmGen,
    missing: MissingKey,
    trees: Arc<Trees>,
}

/// What an execution inside a set knows of the set.
#[derive(Debug)]
pub(super) struct SetCx {
    root: String,
    funcs: FuncSet,
    gen: HelmGen,
    trees: Arc<Trees>,
    /// The template executing (Go's `state.tmpl.Name()`).
    name: String,
    /// The tree its nodes come from.
    tree: Arc<Tree>,
    /// Executions of each name `include` has in progress.
    included: BTreeMap<String, usize>,
    /// Where random values and the clock come from (Helm's set only).
    generator: Option<Generator>,
}

impl SetCx {
    pub(super) fn funcs(&self) -> FuncSet {
        self.funcs
    }

    pub(super) fn gen(&self) -> HelmGen {
        self.gen
    }

    pub(super) fn generator(&self) -> Option<&Generator> {
        self.generator.as_ref()
    }

    /// Go's `ExecError` text for an error at byte `at` of the current tree.
    fn exec_error(&self, at: usize, node: &str, msg: &str) -> String {
        let src = &self.tree.src;
        let at = at.min(src.len());
        let before = src.get(..at).unwrap_or_default();
        let line = 1 + before.matches('\n').count();
        let col = match before.rfind('\n') {
            Some(i) => at - i - 1,
            None => at,
        };
        format!(
            "template: {}:{line}:{col}: executing {} at <{node}>: {msg}",
            self.tree.parse_name,
            go_quote(&self.name)
        )
    }
}

/// Go's parse error text: `template: NAME:LINE: MSG`.
fn parse_error(name: &str, src: &str, at: usize, msg: &str) -> String {
    let before = src.get(..at.min(src.len())).unwrap_or(src);
    let line = 1 + before.matches('\n').count();
    format!("template: {name}:{line}: {msg}")
}

/// Parses `src` named `name` and adds its trees to `trees` as Go's
/// `Template.AddParseTree`/`associate` do: a later definition of a name
/// replaces an earlier one, except that an empty body never replaces an
/// existing template. Within one source, two non-empty definitions of one
/// name are an error (`parse.Tree.add`). Returns the tree of `src`'s own
/// body, which the template `Parse` returns executes even where the set
/// keeps an earlier one under its name.
fn add_source(
    trees: &mut Trees,
    name: &str,
    src: &str,
    funcs: FuncSet,
    gen: HelmGen,
) -> Result<Arc<Tree>, String> {
    let known = |f: &str| super::funcs::check_name_gen(f, funcs, gen);
    let parsed = parse::parse_set(src, name, Some(&known))
        .map_err(|(at, e)| parse_error(name, src, at, &e))?;
    let check =
        |l: &List| check_functions(l, funcs).map_err(|(at, e)| parse_error(name, src, at, &e));
    check(&parsed.root)?;
    for (_, body) in &parsed.defines {
        check(body)?;
    }
    let parse_name: Arc<str> = name.into();
    let text: Arc<str> = src.into();
    let mut local: Vec<(String, Tree)> = Vec::new();
    for (n, body) in std::iter::once((name.to_string(), parsed.root)).chain(parsed.defines) {
        let tree = Tree {
            parse_name: parse_name.clone(),
            src: text.clone(),
            body,
        };
        if let Some(i) = local.iter().position(|(m, _)| *m == n) {
            if local[i].1.is_empty() {
                local[i].1 = tree;
            } else if !tree.is_empty() {
                return Err(parse_error(
                    name,
                    src,
                    src.len(),
                    &format!("template: multiple definition of template {}", go_quote(&n)),
                ));
            }
            continue;
        }
        local.push((n, tree));
    }
    let mut own = None;
    for (n, tree) in local {
        let tree = Arc::new(tree);
        if n == name {
            own = Some(Arc::clone(&tree));
        }
        if tree.is_empty() && trees.contains_key(&n) {
            continue;
        }
        trees.insert(n, tree);
    }
    own.ok_or_else(|| format!("template: {name}: no body parsed"))
}

impl TemplateSet {
    /// An empty set named `root` (Helm names its set `gotpl`; the name
    /// appears in `include`'s "no template" error and names `tpl`'s inline
    /// template), calling `funcs`, with `missing` for missing map keys
    /// (Helm: [`MissingKey::Zero`], or [`MissingKey::Error`] with `--strict`).
    #[must_use]
    pub fn new(root: &str, funcs: FuncSet, missing: MissingKey) -> TemplateSet {
        TemplateSet {
            root: root.to_string(),
            funcs,
            gen: HelmGen::default(),
            missing,
            trees: Arc::new(BTreeMap::new()),
        }
    }

    /// The set executing as the Helm release `gen` (default: Helm 3.17).
    #[must_use]
    pub fn with_helm_gen(mut self, gen: HelmGen) -> TemplateSet {
        self.gen = gen;
        self
    }

    /// Parses `src` as the template `name` (Go's `t.New(name).Parse(src)`):
    /// its body becomes the template `name` and each `define`/`block` a
    /// template of its own. Add sources in the order Helm parses them
    /// (`sortTemplates`) so that the same definitions win.
    ///
    /// # Errors
    /// A syntax error or an unknown function, as Go reports it:
    /// `template: NAME:LINE: MSG` (Helm's `cleanupParseError` turns that into
    /// `parse error at (NAME:LINE): MSG`).
    pub fn add(&mut self, name: &str, src: &str) -> Result<(), String> {
        add_source(
            Arc::make_mut(&mut self.trees),
            name,
            src,
            self.funcs,
            self.gen,
        )
        .map(|_| ())
    }

    /// Whether the set holds a template called `name`.
    #[cfg(test)]
    #[must_use]
    pub(crate) fn has(&self, name: &str) -> bool {
        self.trees.contains_key(name)
    }

    /// Executes the template `name` with `data` as dot and `$` (Go's
    /// `ExecuteTemplate`). The output is Go's: Helm's replacement of
    /// `<no value>` by the empty string is the caller's to make.
    ///
    /// # Errors
    /// See [`TemplateSet::execute_within`].
    pub fn execute(&self, name: &str, data: &V) -> Result<String, String> {
        self.execute_within(name, data, &mut Budget::PER_EXECUTION.clone())
    }

    /// Executes the template `name`, drawing its work (including every
    /// `include`, `template` and `tpl` it runs) from `budget`.
    ///
    /// # Errors
    /// `template: no template "NAME" associated with template "ROOT"`, or an
    /// execution error in Go's form `template: SOURCE:LINE:COL: executing
    /// "TEMPLATE" at <NODE>: MSG`, or an exhausted budget.
    pub(crate) fn execute_within(
        &self,
        name: &str,
        data: &V,
        budget: &mut Budget,
    ) -> Result<String, String> {
        let generator = Generator::new(name, Variant::First);
        self.execute_generating(name, data, budget, &generator)
    }

    /// [`TemplateSet::execute_within`] drawing random values and the clock
    /// from `generator` (in Helm's set; others do not offer them).
    ///
    /// # Errors
    /// See [`TemplateSet::execute_within`].
    pub fn execute_generating(
        &self,
        name: &str,
        data: &V,
        budget: &mut Budget,
        generator: &Generator,
    ) -> Result<String, String> {
        let Some(tree) = self.trees.get(name).cloned() else {
            return Err(format!(
                "template: no template {} associated with template {}",
                go_quote(name),
                go_quote(&self.root)
            ));
        };
        let steps = budget.steps.min(MAX_STEPS);
        let bytes = budget.bytes.min(MAX_VALUE_BYTES);
        let mut st = State {
            out: String::new(),
            vars: vec![("$".to_string(), data.clone())],
            missing: self.missing,
            depth: 0,
            steps_left: steps,
            bytes_left: bytes,
            set: Some(SetCx {
                root: self.root.clone(),
                funcs: self.funcs,
                gen: self.gen,
                trees: self.trees.clone(),
                name: name.to_string(),
                tree: tree.clone(),
                included: BTreeMap::new(),
                generator: (self.funcs == FuncSet::Helm).then(|| generator.clone()),
            }),
            paid: std::collections::HashMap::new(),
            measured: super::value::CostMemo::default(),
        };
        let r = st.walk(data, &tree.body);
        budget.steps -= steps - st.steps_left;
        budget.bytes -= bytes - st.bytes_left;
        match r {
            Ok(()) | Err(Flow::Break | Flow::Continue) => Ok(st.out),
            Err(Flow::Exec(e)) => Err(bounded_error(e)),
            Err(Flow::Error(e)) => Err(bounded_error(format!("template: {name}: {e}"))),
        }
    }
}

impl State {
    /// Gives an error its place: Go's `template: NAME:LINE:COL: executing
    /// ...` in a template set, unchanged otherwise (ApplicationSets).
    pub(super) fn locate(&self, at: usize, node: &str, f: Flow) -> Flow {
        match (f, &self.set) {
            (Flow::Error(e), Some(cx)) => Flow::Exec(bounded_error(cx.exec_error(at, node, &e))),
            (f, _) => f,
        }
    }

    /// `{{template "name" pipeline}}` (Go's `state.walkTemplate`).
    pub(super) fn template_node(&mut self, dot: &V, t: &TemplateCall) -> Result<(), Flow> {
        let Some(cx) = &self.set else {
            return Err(Flow::Error("template actions need a template set".into()));
        };
        let Some(tree) = cx.trees.get(&t.name).cloned() else {
            let e = Flow::Error(format!("template {} not defined", go_quote(&t.name)));
            return Err(self.locate(t.pos, &t.text, e));
        };
        let data = match &t.pipe {
            Some(p) => self.pipe(dot, p)?,
            None => V::Missing,
        };
        self.run_tree(&t.name, tree, data)
    }

    /// Executes `tree` as the template `name` with `data` as dot and `$`,
    /// writing to the current output. Variables are not inherited.
    fn run_tree(&mut self, name: &str, tree: Arc<Tree>, data: V) -> Result<(), Flow> {
        let Some(cx) = self.set.as_mut() else {
            return Err(Flow::Error("template actions need a template set".into()));
        };
        let saved_name = std::mem::replace(&mut cx.name, name.to_string());
        let saved_tree = std::mem::replace(&mut cx.tree, tree.clone());
        let saved_vars = std::mem::replace(&mut self.vars, vec![("$".to_string(), data.clone())]);
        let r = self.walk(&data, &tree.body);
        self.vars = saved_vars;
        if let Some(cx) = self.set.as_mut() {
            cx.name = saved_name;
            cx.tree = saved_tree;
        }
        match r {
            Ok(()) | Err(Flow::Break | Flow::Continue) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Runs `tree` into a string of its own.
    fn run_to_string(&mut self, name: &str, tree: Arc<Tree>, data: V) -> Result<String, String> {
        let saved_out = std::mem::take(&mut self.out);
        let r = self.run_tree(name, tree, data);
        let out = std::mem::replace(&mut self.out, saved_out);
        match r {
            Err(Flow::Error(e) | Flow::Exec(e)) => Err(e),
            Ok(()) | Err(Flow::Break | Flow::Continue) => Ok(out),
        }
    }

    /// Helm's `include` and `tpl` (`pkg/engine/engine.go` `includeFun`,
    /// `tplFun`).
    pub(super) fn set_call(&mut self, name: &str, args: Vec<V>) -> Result<V, String> {
        if args.len() != 2 {
            return Err(format!("wrong number of args: want 2 got {}", args.len()));
        }
        let V::Str(first) = &args[0] else {
            return Err(format!(
                "wrong type for value; expected string; got {}",
                args[0].type_name()
            ));
        };
        let data = if args[1] == V::Missing {
            V::Nil
        } else {
            args[1].clone()
        };
        if name == "include" {
            self.include(first, data)
        } else {
            self.tpl(first, data)
        }
    }

    fn include(&mut self, tname: &str, data: V) -> Result<V, String> {
        let Some(cx) = self.set.as_mut() else {
            return Err("include needs a template set".into());
        };
        let count = cx.included.entry(tname.to_string()).or_insert(0);
        if *count > RECURSION_MAX_NUMS {
            return Err(format!(
                "rendering template has a nested reference name: {tname}: unable to execute template"
            ));
        }
        *count += 1;
        let tree = cx.trees.get(tname).cloned();
        let root = cx.root.clone();
        let r = match tree {
            Some(tree) => self.run_to_string(tname, tree, data),
            None => Err(format!(
                "template: no template {} associated with template {}",
                go_quote(tname),
                go_quote(&root)
            )),
        };
        if let Some(c) = self.set.as_mut().and_then(|cx| cx.included.get_mut(tname)) {
            *c -= 1;
        }
        r.map(V::Str)
    }

    fn tpl(&mut self, text: &str, data: V) -> Result<V, String> {
        let Some(cx) = self.set.as_mut() else {
            return Err("tpl needs a template set".into());
        };
        // Helm clones the set and parses the string as a new template named
        // after the set (`t.New(parent.Name()).Parse(tpl)`): its `define`s
        // are seen only by this execution.
        // The string's own body is executed, even when it is empty and the
        // set keeps the template already under that name (`associate`
        // never replaces one with an empty tree, but `AddParseTree` gives
        // the new template its tree): an empty or blank `tpl` renders
        // itself, never the enclosing `tpl` string again.
        let root = cx.root.clone();
        let mut trees = (*cx.trees).clone();
        let tree = add_source(&mut trees, &root, text, cx.funcs, cx.gen).map_err(|e| {
            bounded_error(format!("cannot parse template {}: {e}", quoted_text(text)))
        })?;
        let saved = std::mem::replace(&mut cx.trees, Arc::new(trees));
        let r = self.run_to_string(&root, tree, data);
        if let Some(cx) = self.set.as_mut() {
            cx.trees = saved;
        }
        match r {
            Ok(out) => Ok(V::Str(out.replace("<no value>", ""))),
            Err(e) => Err(bounded_error(format!(
                "error during tpl function execution for {}: {e}",
                quoted_text(text)
            ))),
        }
    }
}
