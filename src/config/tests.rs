use super::*;

fn parse(file: &str, text: &str) -> Result<Config, ConfigError> {
    Config::parse(file, text, &crate::rules::catalog())
}

fn problems(text: &str) -> Vec<String> {
    parse(".gitops-lint.yaml", text)
        .expect_err("invalid")
        .problems
}

#[test]
fn every_problem_is_reported_at_once_with_lines_and_suggestions() {
    let p = problems(
        "statefulKind: [Cluster]\nrules:\n  ignore: [stateful-prunes]\n  severity:\n    GL001: fatal\nmassPrune:\n  ratio: 2\napplicationSet:\n  policy: delete-all\n  polcyOverride: true\n",
    );
    assert_eq!(
        p,
        vec![
            "1:1: unknown key `statefulKind` (did you mean `statefulKinds`?)",
            "3:3: rules.ignore: unknown rule `stateful-prunes` (did you mean `stateful-prune`?)",
            "5:5: rules.severity.GL001: `fatal` is not error, warning or info",
            "7:3: massPrune.ratio `2` is not a number between 0 and 1",
            "9:3: applicationSet.policy `delete-all` is not one of sync, create-only, create-update, create-delete",
            "10:3: unknown key `applicationSet.polcyOverride` (did you mean `policyOverride`?)",
        ]
    );
}

#[test]
fn plugins_map_names_to_renderers_with_their_discovery() {
    use crate::render::plugin::{Discover, PluginConfig, PluginRenderer, Plugins};
    let c = parse(
        "f",
        "plugins:\n  kb:\n    kustomize: {buildOptions: ' --enable-helm '}\n  hs-v1:\n    discover: {fileName: 'secrets*.yaml'}\n    helm: {valueFiles: [a.yaml]}\n  dir:\n    discover: {find: {glob: '**/*.jsonnet'}}\n    directory: {recurse: true}\n  avp:\n",
    )
    .expect("valid");
    let want = Plugins::new(vec![
        PluginConfig {
            name: "kb".into(),
            discover: None,
            renderer: Some(PluginRenderer::Kustomize {
                build_options: "--enable-helm".into(),
            }),
            declared_in: None,
            envsubst: None,
        },
        PluginConfig {
            name: "hs-v1".into(),
            discover: Some(Discover::FileName("secrets*.yaml".into())),
            renderer: Some(PluginRenderer::Helm(
                serde_json::json!({"valueFiles": ["a.yaml"]}),
            )),
            declared_in: None,
            envsubst: None,
        },
        PluginConfig {
            name: "dir".into(),
            discover: Some(Discover::FindGlob("**/*.jsonnet".into())),
            renderer: Some(PluginRenderer::Directory(
                serde_json::json!({"recurse": true}),
            )),
            declared_in: None,
            envsubst: None,
        },
        PluginConfig {
            name: "avp".into(),
            discover: None,
            renderer: None,
            declared_in: None,
            envsubst: None,
        },
    ]);
    assert_eq!(*c.plugins, want);
}

#[test]
fn plugin_problems_are_reported_with_lines_and_suggestions() {
    let p = problems(
        "plugins:\n  a:\n    kustomise: {}\n  b:\n    kustomize: {buildOptions: [x]}\n    helm: {}\n  c:\n    discover: {find: {command: [sh, -c, ls]}}\n  d:\n    helm: {valueFile: [x]}\n  e:\n    discover: {fileName: 3}\n",
    );
    assert_eq!(
        p,
        vec![
            "3:5: unknown key `plugins.a.kustomise` (did you mean `kustomize`?)",
            "4:3: plugins.b maps to more than one renderer (kustomize, helm): give one",
            "5:17: plugins.b.kustomize.buildOptions must be a string, as in argocd-cm (`--enable-helm`)",
            "8:16: plugins.c.discover.find.command runs a command, which gitops-lint cannot do: give `find.glob` or `fileName` with the same effect, or leave `discover` out and name the plugin in the Applications (`plugin.name`)",
            "10:12: unknown key `plugins.d.helm.valueFile` (did you mean `valueFiles`?)",
            "12:5: plugins.e.discover.fileName must be a glob string",
        ]
    );
}

#[test]
fn an_unquoted_version_that_may_have_lost_a_zero_is_refused() {
    assert_eq!(
        problems("argocdVersion: 3.10\n"),
        vec!["1:1: argocdVersion `3.1` is a number, and YAML reads `3.10` the same way: quote it, as in `argocdVersion: \"3.1\"` or `\"3.10\"`"]
    );
    let ok = |text: &str| {
        parse(".gitops-lint.yaml", text)
            .expect("valid")
            .argocd_version
    };
    assert_eq!(ok("argocdVersion: \"3.10\"\n"), (3, 10));
    assert_eq!(ok("argocdVersion: 2.14\n"), (2, 14));
}

#[test]
fn helm_renderer_is_binary_or_native() {
    let c = parse(".gitops-lint.yaml", "helmRenderer: native\n").expect("valid");
    assert_eq!(c.helm_renderer, Some(crate::render::HelmRenderer::Native));
    assert_eq!(
        problems("helmRenderer: nativ\n"),
        vec!["1:1: helmRenderer `nativ` is not one of binary, native (did you mean `native`?)"]
    );
    assert_eq!(
        problems("helmRendrer: native\n"),
        vec!["1:1: unknown key `helmRendrer` (did you mean `helmRenderer`?)"]
    );
}

#[test]
fn plugin_envsubst_is_true_or_variable_names_beside_a_renderer() {
    let c = parse(
        ".gitops-lint.yaml",
        "plugins:\n  a: {kustomize: {}, envsubst: true}\n  b: {directory: {}, envsubst: [\"$ARGOCD_ENV_X\", \"${PARAM_Y}\"]}\n",
    )
    .expect("valid");
    let shown = format!("{:?}", c.plugins);
    assert!(shown.contains("envsubst: Some(All)"), "{shown}");
    assert!(
        shown.contains(r#"envsubst: Some(Only(["ARGOCD_ENV_X", "PARAM_Y"]))"#),
        "{shown}"
    );
    let p = problems("plugins:\n  a: {envsubst: true}\n  b: {kustomize: {}, envsubst: [\"1x\"]}\n");
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(
        p[0].contains("give `kustomize`, `helm` or `directory` too"),
        "{p:?}"
    );
    assert!(p[1].contains("a list of variable names"), "{p:?}");
}

#[test]
fn chart_repositories_are_urls() {
    let c = parse(
        ".gitops-lint.yaml",
        "chartRepositories:\n- https://charts.example/\n- oci://r.example/charts\n- r.example/x\n- http://127.0.0.1:8080\n",
    )
    .expect("valid");
    assert_eq!(c.chart_repositories.len(), 4);
    assert_eq!(
        problems("chartRepositories:\n- ftp://x\n- https://u:p@h/\n"),
        vec![
            "2:1: `chartRepositories[0]` `ftp://x` must be an https://, http:// or oci:// URL, or a registry path without scheme",
            "3:1: `chartRepositories[1]` `https://u:p@h/` names no host (credentials do not belong in it: Helm's repositories.yaml or the registry config.json hold them)"
        ]
    );
    assert_eq!(
        problems("chartRepository: []\n"),
        vec!["1:1: unknown key `chartRepository` (did you mean `chartRepositories`?)"]
    );
}

#[test]
fn chart_cache_is_a_directory_name() {
    let c = parse(".gitops-lint.yaml", "chartCache: .chart-cache\n").expect("valid");
    assert_eq!(c.chart_cache.as_deref(), Some(".chart-cache"));
    assert_eq!(
        problems("chartCache: \"\"\n"),
        vec!["1:1: chartCache must be a directory, relative to the repository's root"]
    );
    assert_eq!(
        problems("chartCahce: x\n"),
        vec!["1:1: unknown key `chartCahce` (did you mean `chartCache`?)"]
    );
}

#[test]
fn kustomize_build_options_are_a_string_like_argocd_cm() {
    let c = parse(
        ".gitops-lint.yaml",
        "kustomizeBuildOptions: \"--enable-helm \"\n",
    )
    .expect("valid");
    assert_eq!(c.kustomize_build_options.as_deref(), Some("--enable-helm"));
    assert_eq!(
        problems("kustomizeBuildOptions: [--enable-helm]\n"),
        vec!["1:1: kustomizeBuildOptions must be a string, as in argocd-cm (`--enable-helm`)"]
    );
}

#[test]
fn snake_case_keys_suggest_their_camel_case_form() {
    let p = problems("ignore_paths: [docs/**]\n");
    assert_eq!(
        p,
        vec!["1:1: unknown key `ignore_paths` (did you mean `ignorePaths`?)"]
    );
    // Nothing close: no suggestion.
    let p = problems("colour: blue\n");
    assert_eq!(p, vec!["1:1: unknown key `colour`"]);
}

#[test]
fn diff_settings_are_read_and_bad_ones_named_with_their_lines() {
    let c = parse(
        ".gitops-lint.yaml",
        "diff:\n  show: false\n  context: 5\n  hideDeleted: true\n  ignoreLines: ['^\\s*image: ']\n  mask: [{kind: ConfigMap, keys: [token]}]\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(!c.diff.show && c.diff.hide_deleted);
    assert_eq!(c.diff.context, 5);
    assert!(c.diff.ignore_lines[0].0.is_match("    image: web:1"));
    assert_eq!(c.diff.mask[0].keys, ["token"]);
    let p = problems(
        "diff:\n  context: 100000\n  ignoreLines: ['(']\n  mask: [{kind: Secret}]\n  ignoreResources: [{}]\n  colour: true\n",
    );
    assert_eq!(p.len(), 5, "{p:?}");
    assert!(p[0].starts_with("2:3: diff.context `100000`"), "{p:?}");
    assert!(
        p.iter().any(|x| x.contains("is not a regular expression")),
        "{p:?}"
    );
    assert!(
        p.iter()
            .any(|x| x.contains("names no `keys` or `pointers`")),
        "{p:?}"
    );
    assert!(
        p.iter().any(|x| x.contains("would hide every resource")),
        "{p:?}"
    );
    assert!(
        p.iter().any(|x| x.contains("unknown key `diff.colour`")),
        "{p:?}"
    );
}

#[test]
fn trailers_are_on_unless_switched_off() {
    assert!(Config::default().acknowledge_trailers);
    let c = parse("c", "acknowledge: {trailers: false}\n").expect("valid");
    assert!(!c.acknowledge_trailers);
    assert_eq!(
        problems("acknowledge: {trailer: false}\n"),
        vec!["1:15: unknown key `acknowledge.trailer` (did you mean `trailers`?)"]
    );
    assert_eq!(
        problems("acknowledge: {trailers: no}\n"),
        vec!["1:15: `acknowledge.trailers` must be true or false"]
    );
}

#[test]
fn error_message_lists_problems_one_per_line() {
    let e = parse("c.yaml", "a: 1\nb: 2\n").expect_err("invalid");
    assert_eq!(
        e.to_string(),
        "c.yaml:1:1: unknown key `a` (see docs/configuration.md)\nc.yaml:2:1: unknown key `b` (see docs/configuration.md)"
    );
}

#[test]
fn a_full_configuration_is_read() {
    let c = parse(
        "c",
        "rules:\n  select: [prune, GL002]\n  ignore: [GL014]\n  severity: {stateful-prune: warning}\nignorePaths: ['docs/**', 'vendor/*.yaml']\nstatefulKinds: [postgresql.cnpg.io/Cluster, kafka.strimzi.io/Kafka, Bucket]\nrepoUrls: [git@github.com:org/gitops.git]\nbranches: [production]\napps: [clusters/prod]\nargocdVersion: '2.14'\nmassPrune: {ratio: 0.3, count: 10}\napplicationSet: {policy: create-update, policyOverride: false, newGitFileGlobbing: true}\ndefaultStorageClassWaitForFirstConsumer: true\n",
    )
    .expect("valid");
    assert_eq!(c.argocd_version, (2, 14));
    assert!(c.is_extra_stateful("kafka.strimzi.io", "Kafka"));
    assert!(c.is_extra_stateful("anything.io", "Bucket"));
    assert!(!c.is_extra_stateful("other.io", "Kafka"));
    let x = parse(
        "c",
        "statefulKinds: ['*.upbound.io/*', 'pkg.crossplane.io/Prov*']\n",
    )
    .expect("valid");
    assert!(x.is_extra_stateful("rds.aws.upbound.io", "Instance"));
    assert!(x.is_extra_stateful("pkg.crossplane.io", "Provider"));
    assert!(!x.is_extra_stateful("upbound.io.evil", "Instance"));
    assert!(!x.is_extra_stateful("pkg.crossplane.io", "Configuration"));
    assert!(c.ignore_paths.matches("docs/a/b.yaml"));
    assert!(c.ignore_paths.matches("vendor/x.yaml"));
    assert!(!c.ignore_paths.matches("vendor/sub/x.yaml"));
    assert_eq!(c.applicationset.policy.as_deref(), Some("create-update"));
    assert!(c.applicationset.new_git_file_globbing);
    // GL008's own key, read by the rule and kept for it.
    assert!(
        format!("{:?}", c.rule_settings)
            .contains("default_storage_class_wait_for_first_consumer: true"),
        "{c:?}"
    );
    assert_eq!(c.severity.get("stateful-prune"), Some(&Severity::Warning));
    let meta = |code: &str| crate::rules::find(code).map(|r| r.meta()).expect("rule");
    // `prune` is a category: GL001 is in it; GL000 (input) is not selected.
    assert!(c.rule_enabled(meta("GL001")));
    assert!(c.rule_enabled(meta("GL002")));
    assert!(!c.rule_enabled(meta("GL000")));
    assert!(!c.rule_enabled(meta("GL014")));
}

#[test]
fn empty_and_comment_only_files_are_the_defaults() {
    assert_eq!(parse("c", "").expect("valid"), Config::default());
    assert_eq!(
        parse("c", "# nothing yet\n").expect("valid"),
        Config::default()
    );
}

#[test]
fn wrong_types_are_named() {
    let p = problems("statefulKinds: Cluster\nbranches: [1]\nrules: [GL001]\n");
    assert_eq!(
        p,
        vec![
            "1:1: `statefulKinds` must be a list of strings",
            "2:1: `branches[0]` must be a string",
            "3:1: `rules` must be a mapping",
        ]
    );
}
