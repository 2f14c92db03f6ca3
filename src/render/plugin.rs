//! Config-management plugins (CMPs). A plugin is a sidecar of Argo CD's
//! repo-server that runs a command gitops-lint never runs. What it can do
//! is tell which plugin renders a source, the way the repo-server picks it,
//! and render with a native renderer when the configuration says the plugin
//! is one (`plugins:` in `.gitops-lint.yaml`).
//!
//! How the repo-server picks a plugin (AC `reposerver/repository/repository.go`
//! `GetAppSourceType` and `runConfigManagementPluginSidecars`,
//! `util/app/discovery/discovery.go` `DetectConfigManagementPlugin` and
//! `cmpSupports`, `cmpserver/plugin/plugin.go` `matchRepository`):
//!
//! - `plugin: {name: N}`: the plugin whose socket is `N.sock`, that is whose
//!   `metadata.name` is `N`, or `<name>-<spec.version>` when it is versioned
//!   (AC `cmpserver/plugin/config.go` `Address`). A named plugin with a
//!   `discover` rule that matches nothing in the app's path is refused
//!   (`cmpSupports`: "could not find cmp-server plugin with name").
//! - `plugin: {}` with no name: the sockets in file-name order, the first
//!   plugin with a `discover` rule that matches.
//! - no `plugin`, `helm`, `kustomize` or `directory` block at all: the same
//!   discovery runs first (`discovery.Discover`), before Kustomize, Helm and
//!   directory detection.
//! - `discover.fileName`: Go `filepath.Glob` of the pattern joined to the
//!   app's path; `discover.find.glob`: `zglob.Glob` of it (`**` crosses
//!   directories); `discover.find.command` runs a command, which cannot be
//!   done here.
//!
//! Argo CD no longer reads the legacy `configManagementPlugins` key of
//! `argocd-cm` (no Go code of the repo-server reads it), so neither does
//! gitops-lint.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{display_path, RenderContext, RenderError, SourceSpec};
use crate::source::EntryKind;

/// A plugin as the configuration declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginConfig {
    /// The name Applications give in `plugin.name` (`<name>-<version>` for a
    /// versioned plugin).
    pub(crate) name: String,
    /// Its `discover` rule, if it has one.
    pub(crate) discover: Option<Discover>,
    /// The native renderer the plugin is equivalent to, if mapped.
    pub(crate) renderer: Option<PluginRenderer>,
    /// `envsubst` over the renderer's output, if the mapping says the
    /// command pipes it so.
    pub(crate) envsubst: Option<super::plugin_env::Envsubst>,
    /// The repository file whose `ConfigManagementPlugin` declares it
    /// (`None`: only the configuration does).
    pub(crate) declared_in: Option<String>,
}

/// A plugin's `discover` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Discover {
    /// `fileName`: a Go `filepath.Glob` pattern below the app's path.
    FileName(String),
    /// `find.glob`: a `zglob` pattern below the app's path.
    FindGlob(String),
    /// `find.command`: a command, which cannot run here.
    Command,
}

impl Discover {
    fn describe(&self) -> String {
        match self {
            Discover::FileName(p) => format!("discover.fileName `{p}`"),
            Discover::FindGlob(p) => format!("discover.find.glob `{p}`"),
            Discover::Command => "discover.find.command".to_string(),
        }
    }
}

/// A native renderer standing for a plugin's command.
#[derive(Debug, Clone, PartialEq)]
pub enum PluginRenderer {
    /// `kustomize build` with these options (`--enable-helm` matters).
    Kustomize {
        /// As `kustomize.buildOptions` of `argocd-cm` would hold them.
        build_options: String,
    },
    /// `helm template` with this Application `helm` block.
    Helm(Value),
    /// Plain manifests with this Application `directory` block.
    Directory(Value),
}

impl PluginRenderer {
    /// The renderer as the report names it.
    #[must_use]
    pub(crate) fn describe(&self) -> String {
        match self {
            PluginRenderer::Kustomize { build_options } if build_options.is_empty() => {
                "Kustomize".to_string()
            }
            PluginRenderer::Kustomize { build_options } => {
                format!("Kustomize with buildOptions `{build_options}`")
            }
            PluginRenderer::Helm(v) => format!("Helm with `{}`", compact(v)),
            PluginRenderer::Directory(v) => format!("a directory source with `{}`", compact(v)),
        }
    }
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The plugins of the configuration, by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plugins {
    by_name: BTreeMap<String, PluginConfig>,
}

impl Plugins {
    /// The plugins, keyed by name.
    #[must_use]
    pub(crate) fn new(list: Vec<PluginConfig>) -> Plugins {
        Plugins {
            by_name: list.into_iter().map(|p| (p.name.clone(), p)).collect(),
        }
    }

    /// Whether any plugin has a discovery rule that can be evaluated here
    /// (only then can an app with no explicit source type be a plugin's).
    #[must_use]
    pub(crate) fn any_discovers(&self) -> bool {
        self.by_name
            .values()
            .any(|p| p.discover.as_ref().is_some_and(|d| *d != Discover::Command))
    }

    /// These plugins (the configuration's) with the definitions found in
    /// the repository: a plugin of both takes its renderer from the
    /// configuration and its `discover` rule from the configuration when
    /// given there, else from the definition. The first definition of a
    /// name, in walk order, is the one read.
    #[must_use]
    pub(crate) fn with_definitions(&self, found: &[PluginConfig]) -> Plugins {
        let mut out = self.clone();
        for d in found {
            match out.by_name.get_mut(&d.name) {
                Some(p) => {
                    if p.declared_in.is_none() {
                        p.declared_in.clone_from(&d.declared_in);
                        if p.discover.is_none() {
                            p.discover.clone_from(&d.discover);
                        }
                    }
                }
                None => {
                    out.by_name.insert(d.name.clone(), d.clone());
                }
            }
        }
        out
    }

    /// The plugins declared in the repository whose discovery runs a
    /// command, for a note: apps with no explicit type are taken not to be
    /// theirs.
    #[must_use]
    pub(crate) fn discovering_by_command(&self) -> Vec<&PluginConfig> {
        self.by_name
            .values()
            .filter(|p| p.discover == Some(Discover::Command))
            .collect()
    }

    /// The plugins in the order the repo-server tries their sockets
    /// (`os.ReadDir` sorts by file name, `<name>.sock`).
    fn in_socket_order(&self) -> Vec<&PluginConfig> {
        let mut list: Vec<&PluginConfig> = self.by_name.values().collect();
        list.sort_by_cached_key(|p| format!("{}.sock", p.name));
        list
    }
}

/// Which plugin renders a source, and how it was chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct ChosenPlugin {
    /// The plugin's name.
    pub(crate) name: String,
    /// "named by the Application" or the discovery rule that matched.
    pub(crate) how: String,
    /// Its native stand-in, if the configuration maps it.
    pub(crate) renderer: Option<PluginRenderer>,
    /// `envsubst` over the stand-in's output, if mapped so.
    pub(crate) envsubst: Option<super::plugin_env::Envsubst>,
    /// The repository file declaring it, if one does.
    pub(crate) declared_in: Option<String>,
}

impl ChosenPlugin {
    /// Which plugin, chosen how (and declared where).
    #[must_use]
    pub(crate) fn named(&self) -> String {
        let declared = self
            .declared_in
            .as_deref()
            .map(|f| format!("; declared in `{f}`"))
            .unwrap_or_default();
        format!(
            "config-management plugin `{}` ({}{declared})",
            self.name, self.how
        )
    }

    /// One line for the report: which plugin, chosen how, rendered as what.
    #[must_use]
    pub(crate) fn describe(&self) -> String {
        match &self.renderer {
            Some(r) => format!(
                "{}, rendered as {}{} by `plugins.{}` in .gitops-lint.yaml",
                self.named(),
                r.describe(),
                self.envsubst
                    .as_ref()
                    .map(|e| format!(" then {}", e.describe()))
                    .unwrap_or_default(),
                self.name
            ),
            None => format!("{}, not mapped to a renderer", self.named()),
        }
    }
}

/// The lines of `.gitops-lint.yaml` that would map plugin `name`.
pub(crate) fn mapping_hint(name: &str) -> String {
    format!(
        "if it runs `kustomize build`, `helm template` or reads plain manifests, map it in .gitops-lint.yaml: `plugins: {{{name}: {{kustomize: {{buildOptions: \"--enable-helm\"}}}}}}` (or `helm: {{...}}`, `directory: {{...}}`; docs/plugins.md)"
    )
}

/// The plugin that renders `spec`, whose `plugin` block is set (or, for
/// `discovered_only`, which has no explicit type): as the repo-server picks
/// it (module doc). `Ok(None)` only for `discovered_only` when no plugin's
/// rule matches.
///
/// # Errors
/// A plugin that cannot be named (none in the configuration, a named one
/// that is not declared or whose discovery refuses the path) or a tree
/// that cannot be read.
pub(crate) fn choose(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
    plugins: &Plugins,
    discovered_only: bool,
) -> Result<Option<ChosenPlugin>, RenderError> {
    let named = spec
        .plugin
        .as_ref()
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty());
    if let Some(name) = named {
        let Some(p) = plugins.by_name.get(name) else {
            return Err(RenderError::unsupported(format!(
                "`{}` is rendered by the config-management plugin `{name}`, which gitops-lint never runs; {}",
                spec.app_name,
                mapping_hint(name)
            )));
        };
        if let Some(d) = p.discover.as_ref().filter(|d| **d != Discover::Command) {
            if !discovers(cx, &spec.path, d)? {
                return Err(RenderError::content(format!(
                    "`{}` names the config-management plugin `{name}`, whose {} matches nothing in `{}`: Argo CD's repo-server refuses to render it (\"could not find cmp-server plugin with name\")",
                    spec.app_name,
                    d.describe(),
                    display_path(&spec.path)
                )));
            }
        }
        let how = if p.discover == Some(Discover::Command) {
            "named by the Application; its discover.find.command, which cannot run here, is taken to match"
        } else {
            "named by the Application"
        };
        return Ok(Some(ChosenPlugin {
            name: name.to_string(),
            how: how.to_string(),
            renderer: p.renderer.clone(),
            declared_in: p.declared_in.clone(),
            envsubst: p.envsubst.clone(),
        }));
    }
    for p in plugins.in_socket_order() {
        let Some(d) = &p.discover else { continue };
        if *d == Discover::Command {
            // Apps with no explicit type are taken not to be its (a note
            // says so); one asking for discovery cannot be told.
            if discovered_only {
                continue;
            }
            return Err(RenderError::unsupported(format!(
                "`{}` asks Argo CD to discover its config-management plugin, and the plugin `{}` is asked first, whose discover.find.command cannot run here: which plugin renders it is unknown",
                spec.app_name, p.name
            )));
        }
        if discovers(cx, &spec.path, d)? {
            return Ok(Some(ChosenPlugin {
                name: p.name.clone(),
                how: format!("discovered by its {}", d.describe()),
                renderer: p.renderer.clone(),
                declared_in: p.declared_in.clone(),
                envsubst: p.envsubst.clone(),
            }));
        }
    }
    if discovered_only {
        return Ok(None);
    }
    Err(RenderError::unsupported(format!(
        "`{}` asks Argo CD to discover its config-management plugin, and no plugin of `plugins:` in .gitops-lint.yaml has a `discover` rule that matches `{}`; gitops-lint never runs plugins: declare the plugin there with its `discover` rule ({})",
        spec.app_name,
        display_path(&spec.path),
        "docs/plugins.md"
    )))
}

/// Most entries a discovery walk looks at below one app path.
const MAX_DISCOVERY_ENTRIES: usize = 20_000;

/// Whether `rule` matches something below `dir`.
fn discovers(cx: &RenderContext<'_>, dir: &str, rule: &Discover) -> Result<bool, RenderError> {
    match rule {
        Discover::Command => Ok(false),
        // `filepath.Glob(filepath.Join(appPath, fileName))`: each segment
        // with `filepath.Match`, which never crosses `/`. `Join` cleans
        // the path, so `../x` looks beside the app's path, in the
        // repository the plugin was sent; past its root nothing matches.
        Discover::FileName(pattern) => {
            let Some(joined) = crate::source::path::join(dir, pattern) else {
                return Ok(false);
            };
            if joined.is_empty() {
                return Ok(true);
            }
            glob_segments(cx, "", &joined.split('/').collect::<Vec<_>>())
        }
        Discover::FindGlob(pattern) => {
            let Ok(glob) = gotemplate::go::glob::go::Doublestar::new(pattern) else {
                return Ok(false);
            };
            let mut seen = 0usize;
            let mut stack = vec![String::new()];
            while let Some(rel) = stack.pop() {
                let here = child(dir, &rel);
                for e in cx.list(&here)? {
                    seen += 1;
                    if seen > MAX_DISCOVERY_ENTRIES {
                        return Err(RenderError::unsupported(format!(
                            "`{}` holds more than {MAX_DISCOVERY_ENTRIES} entries, more than a plugin's discovery is matched against here",
                            display_path(dir)
                        )));
                    }
                    let path = child(&rel, &e.name);
                    if glob.matches(&path) {
                        return Ok(true);
                    }
                    if e.kind == EntryKind::Dir {
                        stack.push(path);
                    }
                }
            }
            Ok(false)
        }
    }
}

/// `name` below `dir` (`""` is the repository root).
fn child(dir: &str, name: &str) -> String {
    match (dir.is_empty(), name.is_empty()) {
        (true, _) => name.to_string(),
        (false, true) => dir.to_string(),
        (false, false) => format!("{dir}/{name}"),
    }
}

/// Go `filepath.Glob` over the segments of a relative pattern: a segment
/// without meta characters must exist, one with them is matched against
/// the directory's entries (a malformed one matches nothing).
fn glob_segments(cx: &RenderContext<'_>, dir: &str, segs: &[&str]) -> Result<bool, RenderError> {
    let Some((first, rest)) = segs.split_first() else {
        return Ok(true);
    };
    // A missing or unreadable directory matches nothing, as `filepath.Glob`
    // ignores I/O errors.
    let Ok(entries) = cx.list(dir) else {
        return Ok(false);
    };
    for e in entries {
        if !gotemplate::go::glob::go::go_path_match(first, &e.name).unwrap_or(false) {
            continue;
        }
        if rest.is_empty() {
            return Ok(true);
        }
        if e.kind == EntryKind::Dir && glob_segments(cx, &child(dir, &e.name), rest)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The `ConfigManagementPlugin` definitions in `v`: the object itself
/// (a `plugin.yaml`), or the documents of a ConfigMap's data values (how
/// Argo CD's documentation ships `plugin.yaml` to the sidecar). Read as AC
/// `cmpserver/plugin/config.go` `ReadPluginConfig` and
/// `ValidatePluginConfig` read them: `metadata.name` and
/// `spec.generate.command` are required; the name Applications give is
/// `<name>-<version>` when `spec.version` is set (`Address`).
#[must_use]
pub(crate) fn definitions_in(v: &Value, file: Option<&str>) -> Vec<PluginConfig> {
    if let Some(d) = definition(v, file) {
        return vec![d];
    }
    if v.get("kind").and_then(Value::as_str) != Some("ConfigMap") {
        return Vec::new();
    }
    let Some(data) = v.get("data").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for text in data.values().filter_map(Value::as_str) {
        if !text.contains("ConfigManagementPlugin") {
            continue;
        }
        let Ok(docs) = goyaml::load_all(text) else {
            continue;
        };
        for doc in docs {
            doc.value.with_value(|d| out.extend(definition(d, file)));
        }
    }
    out
}

fn definition(v: &Value, file: Option<&str>) -> Option<PluginConfig> {
    if v.get("kind").and_then(Value::as_str) != Some("ConfigManagementPlugin") {
        return None;
    }
    let name = v.pointer("/metadata/name").and_then(Value::as_str)?;
    let spec = v.get("spec")?;
    let generates = spec
        .pointer("/generate/command")
        .and_then(Value::as_array)
        .is_some_and(|c| !c.is_empty());
    if name.is_empty() || !generates {
        return None;
    }
    let version = spec.get("version").and_then(Value::as_str).unwrap_or("");
    let text = |p: &str| {
        spec.pointer(p)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    // `matchRepository` tries fileName, then find.glob, then find.command.
    let discover = text("/discover/fileName")
        .map(Discover::FileName)
        .or_else(|| text("/discover/find/glob").map(Discover::FindGlob))
        .or_else(|| {
            spec.pointer("/discover/find/command")
                .and_then(Value::as_array)
                .is_some_and(|c| !c.is_empty())
                .then_some(Discover::Command)
        });
    Some(PluginConfig {
        name: if version.is_empty() {
            name.to_string()
        } else {
            format!("{name}-{version}")
        },
        discover,
        renderer: None,
        declared_in: file.map(str::to_string),
        envsubst: None,
    })
}

/// `spec` as the mapped native renderer renders it: the plugin block
/// replaced by the renderer's, and a Kustomize mapping's build options in
/// place of `argocd-cm`'s (the plugin runs its own `kustomize build`).
#[must_use]
pub(crate) fn as_native(spec: &SourceSpec, renderer: &PluginRenderer) -> SourceSpec {
    let mut out = spec.clone();
    out.plugin = None;
    match renderer {
        PluginRenderer::Kustomize { build_options } => {
            out.kustomize = Some(Value::Object(serde_json::Map::new()));
            out.kustomize_build_options.clone_from(build_options);
        }
        PluginRenderer::Helm(v) => out.helm = Some(v.clone()),
        PluginRenderer::Directory(v) => out.directory = Some(v.clone()),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugins() -> Plugins {
        let p = |name: &str, discover: Option<Discover>| PluginConfig {
            name: name.into(),
            discover,
            renderer: None,
            declared_in: None,
            envsubst: None,
        };
        Plugins::new(vec![
            // `b.sock` sorts after `a-x.sock` and `a.sock` after both
            // (`-` before `.`): socket order, not name order.
            p("a", Some(Discover::FileName("*.yaml".into()))),
            p("a-x", Some(Discover::FindGlob("**/*.jsonnet".into()))),
            p("b", Some(Discover::FileName("sub/Chart.yaml".into()))),
            p("named-only", None),
        ])
    }

    fn choose_in(files: &[&str], plugin: Option<Value>) -> Result<Option<String>, String> {
        let files: Vec<(String, Vec<u8>)> = files
            .iter()
            .map(|f| ((*f).to_string(), b"x: 1\n".to_vec()))
            .collect();
        super::super::test_files::in_tree(&files, |cx| {
            let spec = SourceSpec {
                path: "app".into(),
                app_name: "web".into(),
                plugin: plugin.clone(),
                ..SourceSpec::default()
            };
            choose(cx, &spec, &plugins(), plugin.is_none())
                .map(|c| c.map(|c| format!("{} ({})", c.name, c.how)))
                .map_err(|e| e.message)
        })
    }

    #[test]
    fn discovery_tries_plugins_in_socket_order() {
        let auto = Some(serde_json::json!({}));
        assert_eq!(
            choose_in(&["app/deep/x/main.jsonnet", "app/k.yaml"], auto.clone()),
            Ok(Some(
                "a-x (discovered by its discover.find.glob `**/*.jsonnet`)".into()
            ))
        );
        assert_eq!(
            choose_in(&["app/k.yaml"], auto.clone()),
            Ok(Some(
                "a (discovered by its discover.fileName `*.yaml`)".into()
            ))
        );
        assert_eq!(
            choose_in(&["app/sub/Chart.yaml"], auto.clone()),
            Ok(Some(
                "b (discovered by its discover.fileName `sub/Chart.yaml`)".into()
            ))
        );
        let none = choose_in(&["app/k.txt"], auto).expect_err("nothing discovers it");
        assert!(none.contains("no plugin of `plugins:`"), "{none}");
        assert_eq!(
            choose_in(&["app/k.txt"], None),
            Ok(None),
            "with no explicit type, an app no plugin discovers is not a plugin's"
        );
    }

    #[test]
    fn a_named_plugin_is_refused_where_its_discovery_does_not_match() {
        let named = |n: &str| Some(serde_json::json!({"name": n}));
        assert_eq!(
            choose_in(&["app/k.txt"], named("named-only")),
            Ok(Some("named-only (named by the Application)".into()))
        );
        let e = choose_in(&["app/k.txt"], named("a")).expect_err("refused");
        assert!(e.contains("matches nothing in `app`"), "{e}");
        let e = choose_in(&["app/k.yaml"], named("avp")).expect_err("unknown");
        assert!(
            e.contains("`avp`") && e.contains("plugins: {avp: {kustomize:"),
            "{e}"
        );
    }

    #[test]
    fn a_file_name_pattern_is_joined_to_the_app_path_and_stays_in_the_repository() {
        let p = Plugins::new(vec![PluginConfig {
            name: "up".into(),
            discover: Some(Discover::FileName("../other/*.yaml".into())),
            renderer: None,
            declared_in: None,
            envsubst: None,
        }]);
        let files = vec![
            ("app/k.txt".to_string(), b"x: 1\n".to_vec()),
            ("other/k.yaml".to_string(), b"x: 1\n".to_vec()),
        ];
        let found = |path: &str| {
            super::super::test_files::in_tree(&files, |cx| {
                let spec = SourceSpec {
                    path: path.into(),
                    ..SourceSpec::default()
                };
                choose(cx, &spec, &p, true)
                    .map(|c| c.map(|c| c.name))
                    .map_err(|e| e.message)
            })
        };
        assert_eq!(found("app"), Ok(Some("up".into())), "beside the app path");
        assert_eq!(found(""), Ok(None), "past the repository's root");
    }

    #[test]
    fn definitions_are_read_from_plugin_files_and_config_maps() {
        let standalone = serde_json::json!({
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "ConfigManagementPlugin",
            "metadata": {"name": "kh"},
            "spec": {
                "version": "v1.0",
                "generate": {"command": ["sh", "-c", "kustomize build --enable-helm"]},
                "discover": {"find": {"glob": "**/kustomization.yaml"}}
            }
        });
        assert_eq!(
            definitions_in(&standalone, Some("cmp/plugin.yaml")),
            vec![PluginConfig {
                name: "kh-v1.0".into(),
                discover: Some(Discover::FindGlob("**/kustomization.yaml".into())),
                renderer: None,
                declared_in: Some("cmp/plugin.yaml".into()),
                envsubst: None,
            }]
        );
        let cm = serde_json::json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cmp-plugin"},
            "data": {
                "plugin.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata:\n  name: avp\nspec:\n  generate:\n    command: [argocd-vault-plugin, generate, ./]\n  discover:\n    find:\n      command: [sh, -c, 'grep -rl avp .']\n",
                "other.yaml": "kind: ConfigManagementPlugin\nmetadata: {name: no-generate}\nspec: {}\n"
            }
        });
        assert_eq!(
            definitions_in(&cm, None),
            vec![PluginConfig {
                name: "avp".into(),
                discover: Some(Discover::Command),
                renderer: None,
                declared_in: None,
                envsubst: None,
            }],
            "a definition without spec.generate.command is invalid to Argo CD, and skipped"
        );
    }
}
