//! `diff:` of the configuration: whether and how the changes of rendered
//! manifests are shown (docs/rendered-diff.md).

use std::collections::BTreeMap;

use serde_json::Value;

use super::check::Checker;

/// `diff:` of the configuration: whether and how the changes of rendered
/// manifests are shown (docs/rendered-diff.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DiffConfig {
    /// `show`: whether a diff shows it (the command line's `--diff` and
    /// `--no-diff` decide over it).
    pub(crate) show: bool,
    /// `context`: lines of context around each change.
    pub(crate) context: usize,
    /// `hideDeleted`: an app the change deletes is listed with its
    /// resources, without their bodies.
    pub(crate) hide_deleted: bool,
    /// `mask`: values shown masked besides a `Secret`'s.
    pub(crate) mask: Vec<MaskRule>,
    /// `ignoreLines`: a changed line matching one of these is no change; a
    /// hunk of such lines only is left out, and a resource of such hunks only.
    pub(crate) ignore_lines: Vec<LinePattern>,
    /// `ignoreResources`: resources never diffed.
    pub(crate) ignore_resources: Vec<ResourceMatch>,
    /// `apps`: only apps whose name matches one of these globs are diffed
    /// (empty: every app).
    pub(crate) apps: Vec<String>,
    /// `appLabels`: only apps whose Application has every one of these
    /// labels are diffed (empty: every app).
    pub(crate) app_labels: BTreeMap<String, String>,
}

/// A regular expression of `diff.ignoreLines` or `--diff-ignore`, compiled
/// within the bounds of every pattern gitops-lint compiles.
#[derive(Debug, Clone)]
pub(crate) struct LinePattern(pub(crate) regex::Regex);

impl PartialEq for LinePattern {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

impl Eq for LinePattern {}

impl LinePattern {
    /// Compiles `pattern` (the regex crate's syntax, as RE2's), bounded in
    /// length and compiled size.
    ///
    /// # Errors
    /// A pattern too long, too large once compiled, or invalid.
    pub(crate) fn new(pattern: &str) -> Result<LinePattern, String> {
        use gotemplate::funcs::{MAX_REGEX_PATTERN, REGEX_DFA_LIMIT, REGEX_SIZE_LIMIT};
        if pattern.len() > MAX_REGEX_PATTERN {
            return Err(format!(
                "the pattern is {} bytes long, longer than the {MAX_REGEX_PATTERN} gitops-lint compiles",
                pattern.len()
            ));
        }
        regex::RegexBuilder::new(pattern)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_DFA_LIMIT)
            .build()
            .map(LinePattern)
            .map_err(|e| match e {
                regex::Error::CompiledTooBig(n) => {
                    format!("`{pattern}` compiles to more than {n} bytes")
                }
                e => format!("`{pattern}` is not a regular expression: {e}"),
            })
    }
}

/// An entry of `diff.ignoreResources`: each field given must be equal, `*`
/// or absent matches anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourceMatch {
    /// API group (`""`: the core group).
    pub(crate) group: Option<String>,
    /// Kind.
    pub(crate) kind: Option<String>,
    /// Name.
    pub(crate) name: Option<String>,
    /// Namespace.
    pub(crate) namespace: Option<String>,
}

impl ResourceMatch {
    /// Whether `id` is matched.
    #[must_use]
    pub(crate) fn matches(&self, id: &crate::manifest::ResourceId) -> bool {
        let eq = |want: &Option<String>, have: &str| {
            want.as_deref().is_none_or(|w| w == "*" || w == have)
        };
        eq(&self.group, &id.group)
            && eq(&self.kind, &id.kind)
            && eq(&self.name, &id.name)
            && eq(&self.namespace, &id.namespace)
    }
}

impl Default for DiffConfig {
    fn default() -> Self {
        DiffConfig {
            show: true,
            context: DEFAULT_DIFF_CONTEXT,
            hide_deleted: false,
            mask: Vec::new(),
            ignore_lines: Vec::new(),
            ignore_resources: Vec::new(),
            apps: Vec::new(),
            app_labels: BTreeMap::new(),
        }
    }
}

/// Lines of context of a unified diff when nothing says otherwise (as
/// `diff -u` and `git diff`).
pub(crate) const DEFAULT_DIFF_CONTEXT: usize = 3;
/// The most lines of context a diff asks for: enough for any reader,
/// small enough that a typo cannot ask for the whole of every object.
pub(crate) const MAX_DIFF_CONTEXT: usize = 1000;

/// One entry of `diff.mask`: resources it names have values masked as a
/// `Secret`'s data is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MaskRule {
    /// API group (`None`: any; `""` is the core group).
    pub(crate) group: Option<String>,
    /// Kind.
    pub(crate) kind: String,
    /// Name (`None`: any).
    pub(crate) name: Option<String>,
    /// Namespace (`None`: any).
    pub(crate) namespace: Option<String>,
    /// Keys of `data`, `stringData` and `binaryData`.
    pub(crate) keys: Vec<String>,
    /// JSON pointers (`/spec/password`) of other values.
    pub(crate) pointers: Vec<String>,
}

const DIFF_KEYS: &[&str] = &[
    "show",
    "context",
    "hideDeleted",
    "mask",
    "ignoreLines",
    "ignoreResources",
    "apps",
    "appLabels",
];
const RESOURCE_MATCH_KEYS: &[&str] = &["group", "kind", "name", "namespace"];
const MASK_KEYS: &[&str] = &["group", "kind", "name", "namespace", "keys", "pointers"];

/// `diff:` read, each problem reported.
pub(super) fn diff_config(c: &mut Checker<'_>, d: &Value) -> DiffConfig {
    let mut out = DiffConfig::default();
    c.keys(&["diff"], d, DIFF_KEYS);
    if let Some(b) = c.boolean(&["diff", "show"], d.get("show")) {
        out.show = b;
    }
    if let Some(b) = c.boolean(&["diff", "hideDeleted"], d.get("hideDeleted")) {
        out.hide_deleted = b;
    }
    match d.get("context") {
        None | Some(Value::Null) => {}
        Some(n) => match n.as_u64().and_then(|n| usize::try_from(n).ok()) {
            Some(n) if n <= MAX_DIFF_CONTEXT => out.context = n,
            _ => c.at(
                &["diff", "context"],
                format!("diff.context `{n}` is not a whole number of lines from 0 to {MAX_DIFF_CONTEXT}"),
            ),
        },
    }
    match d.get("mask") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                c.keys(&["diff", "mask"], item, MASK_KEYS);
                let text = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_string);
                let keys = c.strings(&["diff", "mask", "keys"], item.get("keys"));
                let pointers = c.strings(&["diff", "mask", "pointers"], item.get("pointers"));
                let Some(kind) = text("kind") else {
                    c.at(
                        &["diff", "mask"],
                        "each `diff.mask` entry needs a `kind` (and `keys` or `pointers`)"
                            .to_string(),
                    );
                    continue;
                };
                if keys.is_empty() && pointers.is_empty() {
                    c.at(
                        &["diff", "mask"],
                        format!("`diff.mask` entry of kind `{kind}` names no `keys` or `pointers` to mask"),
                    );
                    continue;
                }
                if let Some(p) = pointers.iter().find(|p| !p.starts_with('/')) {
                    c.at(
                        &["diff", "mask", "pointers"],
                        format!(
                            "`{p}` is not a JSON pointer (it starts with `/`, as `/spec/password`)"
                        ),
                    );
                    continue;
                }
                out.mask.push(MaskRule {
                    group: text("group"),
                    kind,
                    name: text("name"),
                    namespace: text("namespace"),
                    keys,
                    pointers,
                });
            }
        }
        Some(_) => c.at(&["diff", "mask"], "`diff.mask` must be a list".to_string()),
    }
    for p in c.strings(&["diff", "ignoreLines"], d.get("ignoreLines")) {
        match LinePattern::new(&p) {
            Ok(re) => out.ignore_lines.push(re),
            Err(e) => c.at(&["diff", "ignoreLines"], format!("diff.ignoreLines: {e}")),
        }
    }
    match d.get("ignoreResources") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                c.keys(&["diff", "ignoreResources"], item, RESOURCE_MATCH_KEYS);
                let text = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_string);
                let m = ResourceMatch {
                    group: text("group"),
                    kind: text("kind"),
                    name: text("name"),
                    namespace: text("namespace"),
                };
                if m.group.is_none()
                    && m.kind.is_none()
                    && m.name.is_none()
                    && m.namespace.is_none()
                {
                    c.at(
                        &["diff", "ignoreResources"],
                        "a `diff.ignoreResources` entry names no `group`, `kind`, `name` or `namespace`: it would hide every resource".to_string(),
                    );
                    continue;
                }
                out.ignore_resources.push(m);
            }
        }
        Some(_) => c.at(
            &["diff", "ignoreResources"],
            "`diff.ignoreResources` must be a list".to_string(),
        ),
    }
    out.apps = c.strings(&["diff", "apps"], d.get("apps"));
    for g in &out.apps {
        if let Err(e) = gotemplate::go::glob::Glob::new(g, &[]) {
            c.at(&["diff", "apps"], format!("diff.apps: `{g}`: {e}"));
        }
    }
    match d.get("appLabels") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                match v.as_str() {
                    Some(v) => {
                        out.app_labels.insert(k.clone(), v.to_string());
                    }
                    None => c.at(
                        &["diff", "appLabels", k],
                        format!("diff.appLabels.{k} must be a string (quote it)"),
                    ),
                }
            }
        }
        Some(_) => c.at(
            &["diff", "appLabels"],
            "`diff.appLabels` must be a mapping of label to value".to_string(),
        ),
    }
    out
}
