//! Expansion tests over real git repositories built in temporary
//! directories, read back through `GitRepo::commit_tree`. ApplicationSets are
//! taken from Argo CD's documentation and examples
//! (AC `docs/operator-manual/applicationset/`, `applicationset/examples/`).

use std::sync::Arc;

use serde_json::{json, Value};

use super::*;
use crate::source::{write_commit, GitRepo, Tree};

const THIS_REPO: &str = "https://github.com/example/gitops.git";

/// A git repository with one commit per call to `commit`.
struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn new() -> Repo {
        Repo {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn commit(&self, files: &[(&str, &str)]) -> Arc<dyn Tree> {
        let files: Vec<(String, Vec<u8>)> = files
            .iter()
            .map(|(p, c)| ((*p).to_string(), c.as_bytes().to_vec()))
            .collect();
        let sha = write_commit(self.dir.path(), "main", None, &files, "test").expect("commit");
        GitRepo::open(self.dir.path())
            .expect("open")
            .commit_tree(&sha)
            .expect("tree")
    }
}

fn is_this(url: &str) -> bool {
    url.trim_end_matches(".git") == THIS_REPO.trim_end_matches(".git")
}

fn expand_with(
    appset: &Value,
    tree: &dyn Tree,
    clusters: &[Cluster],
    settings: &AppSetSettings,
) -> Result<Expansion, AppSetError> {
    let cx = AppSetContext {
        tree,
        is_this_repo: &is_this,
        is_this_revision: None,
        clusters,
        settings,
        index_cache: None,
        templated: None,
    };
    expand(appset, &cx)
}

fn expand_ok(appset: &Value, tree: &dyn Tree) -> Expansion {
    expand_with(appset, tree, &[], &AppSetSettings::default()).expect("expands")
}

fn names(e: &Expansion) -> Vec<String> {
    e.apps.iter().map(|a| a.name().to_string()).collect()
}

fn appset(go: bool, generators: Value, template: Value) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ApplicationSet",
        "metadata": {"name": "guestbook", "namespace": "argocd"},
        "spec": {"goTemplate": go, "generators": generators, "template": template}
    })
}

fn dir_template(go: bool) -> Value {
    let (name, path) = if go {
        ("{{.path.basename}}", "{{.path.path}}")
    } else {
        ("{{path.basename}}", "{{path}}")
    };
    json!({
        "metadata": {"name": name},
        "spec": {
            "project": "default",
            "source": {"repoURL": THIS_REPO, "targetRevision": "HEAD", "path": path},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": name}
        }
    })
}

fn addon_tree(repo: &Repo) -> Arc<dyn Tree> {
    repo.commit(&[
        (
            "cluster-addons/argo-workflows/kustomization.yaml",
            "resources: []\n",
        ),
        ("cluster-addons/prometheus-operator/Chart.yaml", "name: p\n"),
        (
            "cluster-addons/prometheus-operator/templates/x.yaml",
            "kind: ConfigMap\n",
        ),
        (
            "cluster-addons/exclude-helm-guestbook/Chart.yaml",
            "name: g\n",
        ),
        (
            "cluster-addons/.hidden/kustomization.yaml",
            "resources: []\n",
        ),
        ("README.md", "hi\n"),
    ])
}

/// proves: the documented list example yields one Application per element,
/// in the ApplicationSet's namespace, owned by it, with the default finalizer.
#[test]
fn list_generator_documented_example() {
    let repo = Repo::new();
    let tree = repo.commit(&[("README.md", "x")]);
    let set = appset(
        false,
        json!([{"list": {"elements": [
            {"cluster": "engineering-dev", "url": "https://1.2.3.4"},
            {"cluster": "engineering-prod", "url": "https://2.4.6.8"},
            {"cluster": "finance-preprod", "url": "https://9.8.7.6"}
        ]}}]),
        json!({
            "metadata": {"name": "{{cluster}}-guestbook", "namespace": "elsewhere"},
            "spec": {
                "project": "my-project",
                "source": {"repoURL": "https://github.com/infra-team/cluster-deployments.git", "targetRevision": "HEAD", "path": "guestbook/{{cluster}}"},
                "destination": {"server": "{{url}}", "namespace": "guestbook"}
            }
        }),
    );
    let e = expand_ok(&set, tree.as_ref());
    assert!(e.is_complete());
    assert_eq!(
        names(&e),
        [
            "engineering-dev-guestbook",
            "engineering-prod-guestbook",
            "finance-preprod-guestbook"
        ]
    );
    let app = &e.apps[1].application;
    assert_eq!(app["kind"], "Application");
    assert_eq!(
        app["metadata"]["namespace"], "argocd",
        "the AppSet's namespace wins over the template's"
    );
    assert_eq!(app["metadata"]["finalizers"], json!([RESOURCES_FINALIZER]));
    assert_eq!(
        app["metadata"]["ownerReferences"][0]["kind"],
        "ApplicationSet"
    );
    assert_eq!(app["metadata"]["ownerReferences"][0]["name"], "guestbook");
    assert_eq!(app["spec"]["source"]["path"], "guestbook/engineering-prod");
    assert_eq!(app["spec"]["destination"]["server"], "https://2.4.6.8");
    assert!(e.apps[1].cascades());
    assert!(
        e.apps[1].provenance.contains("engineering-prod"),
        "{}",
        e.apps[1].provenance
    );
    assert!(e.policy.allows_delete);
}

/// proves: git directories use `path.Match` (`*` stays in one segment),
/// skip hidden directories, and an `exclude: true` entry wins over an include.
#[test]
fn git_directories_match_exclude_and_hidden() {
    let repo = Repo::new();
    let tree = addon_tree(&repo);
    let set = appset(
        false,
        json!([{"git": {"repoURL": THIS_REPO, "revision": "HEAD", "directories": [
            {"path": "cluster-addons/*"},
            {"path": "cluster-addons/exclude-helm-guestbook", "exclude": true}
        ]}}]),
        dir_template(false),
    );
    let e = expand_ok(&set, tree.as_ref());
    assert_eq!(names(&e), ["argo-workflows", "prometheus-operator"]);
    assert_eq!(
        e.apps[0].provenance,
        "git directory `cluster-addons/argo-workflows`"
    );
    assert_eq!(
        e.apps[1].application["spec"]["source"]["path"],
        "cluster-addons/prometheus-operator"
    );

    // The exclude wins even when it comes first.
    let set = appset(
        false,
        json!([{"git": {"repoURL": THIS_REPO, "directories": [
            {"path": "cluster-addons/exclude-*", "exclude": true},
            {"path": "cluster-addons/*"}
        ]}}]),
        dir_template(false),
    );
    assert_eq!(
        names(&expand_ok(&set, tree.as_ref())),
        ["argo-workflows", "prometheus-operator"]
    );

    // `*/*` reaches one level deeper, and only that level.
    let set = appset(
        false,
        json!([{"git": {"repoURL": THIS_REPO, "directories": [{"path": "cluster-addons/*/*"}]}}]),
        dir_template(false),
    );
    assert_eq!(names(&expand_ok(&set, tree.as_ref())), ["templates"]);
}

/// proves: goTemplate git directory parameters are nested (`.path.path`,
/// `.path.segments`), `pathParamPrefix` nests them further, and `values`
/// are rendered against them.
#[test]
fn git_directories_go_template_and_prefix() {
    let repo = Repo::new();
    let tree = addon_tree(&repo);
    let mut t = dir_template(true);
    t["metadata"]["name"] =
        json!("{{ index .addon.path.segments 0 | trunc 7 }}-{{ .addon.path.basenameNormalized }}");
    t["spec"]["source"]["path"] = json!("{{ .addon.path.path }}");
    t["spec"]["destination"]["namespace"] = json!("{{ .values.ns }}");
    let set = appset(
        true,
        json!([{"git": {"repoURL": THIS_REPO, "pathParamPrefix": "addon", "directories": [{"path": "cluster-addons/*"}],
                        "values": {"ns": "team-{{ .addon.path.basename }}"}}}]),
        t,
    );
    let e = expand_ok(&set, tree.as_ref());
    assert_eq!(
        names(&e),
        [
            "cluster-argo-workflows",
            "cluster-exclude-helm-guestbook",
            "cluster-prometheus-operator"
        ]
    );
    assert_eq!(
        e.apps[0].application["spec"]["source"]["path"],
        "cluster-addons/argo-workflows"
    );
    assert_eq!(
        e.apps[0].application["spec"]["destination"]["namespace"],
        "team-argo-workflows"
    );
}

/// proves: renaming a generated directory removes one Application and adds
/// another (identity is the rendered name).
#[test]
fn renamed_directory_is_one_app_gone_one_new() {
    let repo = Repo::new();
    let base = repo.commit(&[
        ("apps/payments/kustomization.yaml", "resources: []\n"),
        ("apps/web/kustomization.yaml", "resources: []\n"),
    ]);
    let head = repo.commit(&[
        ("apps/billing/kustomization.yaml", "resources: []\n"),
        ("apps/web/kustomization.yaml", "resources: []\n"),
    ]);
    let set = appset(
        false,
        json!([{"git": {"repoURL": THIS_REPO, "directories": [{"path": "apps/*"}]}}]),
        dir_template(false),
    );
    let b = expand_ok(&set, base.as_ref());
    let h = expand_ok(&set, head.as_ref());
    let gone: Vec<&str> = b.names().difference(&h.names()).copied().collect();
    let new: Vec<&str> = h.names().difference(&b.names()).copied().collect();
    assert_eq!(gone, ["payments"]);
    assert_eq!(new, ["billing"]);
    let payments = b
        .apps
        .iter()
        .find(|a| a.name() == "payments")
        .expect("at base");
    assert_eq!(payments.provenance, "git directory `apps/payments`");
}

fn files_tree(repo: &Repo) -> Arc<dyn Tree> {
    repo.commit(&[
        (
            "cluster-config/engineering/dev/config.json",
            r#"{"aws_account": "123456", "asset_id": "11223344", "cluster": {"owner": "cluster-admin@company.com", "name": "engineering-dev", "address": "https://1.2.3.4"}}"#,
        ),
        (
            "cluster-config/engineering/prod/config.json",
            r#"{"aws_account": "123456", "asset_id": "11223344", "cluster": {"owner": "cluster-admin@company.com", "name": "engineering-prod", "address": "https://2.4.6.8"}}"#,
        ),
        ("cluster-config/engineering/prod/eu/config.json", r#"{"cluster": {"name": "engineering-prod-eu", "address": "https://3.3.3.3"}}"#),
        ("cluster-config/multi/config.json", r#"[{"cluster": {"name": "multi-a", "address": "a"}}, {"cluster": {"name": "multi-b", "address": "b"}}]"#),
        ("cluster-config/yaml/config.yaml", "cluster:\n  name: yaml-cluster\n  address: https://4.4.4.4\nreplicas: 3\n---\ncluster:\n  name: second-document-is-ignored\n"),
    ])
}

/// proves: git files flatten keys with dots under fasttemplate, keep nesting
/// under goTemplate, and the default greedy globbing lets `*` cross `/`
/// where the strict mode does not.
#[test]
fn git_files_flattening_and_globbing() {
    let repo = Repo::new();
    let tree = files_tree(&repo);
    let fast = appset(
        false,
        json!([{"git": {"repoURL": THIS_REPO, "revision": "HEAD", "files": [{"path": "cluster-config/engineering/*/config.json"}]}}]),
        json!({"metadata": {"name": "{{cluster.name}}-guestbook"},
               "spec": {"project": "default", "source": {"repoURL": THIS_REPO, "path": "guestbook/{{path.basename}}"},
                        "destination": {"server": "{{cluster.address}}", "namespace": "guestbook"}}}),
    );
    let e = expand_ok(&fast, tree.as_ref());
    // Greedy: `*` also matched `prod/eu`.
    assert_eq!(
        names(&e),
        [
            "engineering-dev-guestbook",
            "engineering-prod-guestbook",
            "engineering-prod-eu-guestbook"
        ]
    );
    assert_eq!(
        e.apps[2].application["spec"]["source"]["path"],
        "guestbook/eu"
    );
    assert_eq!(
        e.apps[0].provenance,
        "git file `cluster-config/engineering/dev/config.json`"
    );

    let strict = AppSetSettings {
        new_git_file_globbing: true,
        ..AppSetSettings::default()
    };
    let e = expand_with(&fast, tree.as_ref(), &[], &strict).expect("expands");
    assert_eq!(
        names(&e),
        ["engineering-dev-guestbook", "engineering-prod-guestbook"]
    );

    let go = appset(
        true,
        json!([{"git": {"repoURL": THIS_REPO, "files": [{"path": "cluster-config/**/config.json"}, {"path": "cluster-config/engineering/prod/eu/*", "exclude": true}]}}]),
        json!({"metadata": {"name": "{{.cluster.name}}"},
               "spec": {"project": "default", "source": {"repoURL": THIS_REPO, "path": "{{.path.path}}/{{.path.filename}}"},
                        "destination": {"server": "{{.cluster.address}}"}}}),
    );
    let e = expand_ok(&go, tree.as_ref());
    assert_eq!(
        names(&e),
        ["engineering-dev", "engineering-prod", "multi-a", "multi-b"]
    );
    assert_eq!(
        e.apps[2].application["spec"]["source"]["path"],
        "cluster-config/multi/config.json"
    );
    assert_eq!(
        e.apps[3].provenance,
        "git file `cluster-config/multi/config.json` (item 2)"
    );

    // YAML files: only the first document counts; numbers print as Go prints float64.
    let yaml = appset(
        false,
        json!([{"git": {"repoURL": THIS_REPO, "files": [{"path": "cluster-config/yaml/*.yaml"}]}}]),
        json!({"metadata": {"name": "{{cluster.name}}-{{replicas}}"}, "spec": {"project": "default"}}),
    );
    assert_eq!(names(&expand_ok(&yaml, tree.as_ref())), ["yaml-cluster-3"]);
}

/// proves: a matrix of git files × git directories, whose second generator
/// reads the first's parameters, renders with goTemplate and Sprig; without
/// `pathParamPrefix` the first generator's `path` wins, as in Argo CD.
#[test]
fn nested_matrix_git_files_by_git_directories() {
    let repo = Repo::new();
    let tree = repo.commit(&[
        (
            "clusters/dev.json",
            r#"{"env": "dev", "server": "https://dev.example", "addons": "addons/dev"}"#,
        ),
        (
            "clusters/prod.json",
            r#"{"env": "prod", "server": "https://prod.example", "addons": "addons/prod"}"#,
        ),
        (
            "addons/dev/ingress-nginx/kustomization.yaml",
            "resources: []\n",
        ),
        (
            "addons/dev/cert_manager/kustomization.yaml",
            "resources: []\n",
        ),
        (
            "addons/prod/ingress-nginx/kustomization.yaml",
            "resources: []\n",
        ),
    ]);
    let set = |prefix: &str, name: &str| {
        appset(
            true,
            json!([{"matrix": {"generators": [
                {"git": {"repoURL": THIS_REPO, "revision": "HEAD", "files": [{"path": "clusters/*.json"}]}},
                {"git": {"repoURL": THIS_REPO, "revision": "HEAD", "pathParamPrefix": prefix,
                         "directories": [{"path": "{{ .addons }}/*"}]}}
            ]}}]),
            json!({"metadata": {"name": name, "labels": {"env": "{{ .env | upper }}"}},
                   "spec": {"project": "default", "source": {"repoURL": THIS_REPO, "path": "{{ .addon.path.path }}"},
                            "destination": {"server": "{{ .server }}", "namespace": "{{ .addon.path.basename }}"}}}),
        )
    };
    let e = expand_ok(
        &set(
            "addon",
            "{{ .env }}-{{ .addon.path.basename | replace \"_\" \"-\" }}",
        ),
        tree.as_ref(),
    );
    assert_eq!(
        names(&e),
        [
            "dev-cert-manager",
            "dev-ingress-nginx",
            "prod-ingress-nginx"
        ]
    );
    let prod = &e.apps[2];
    assert_eq!(
        prod.application["spec"]["destination"]["server"],
        "https://prod.example"
    );
    assert_eq!(
        prod.application["spec"]["source"]["path"],
        "addons/prod/ingress-nginx"
    );
    assert_eq!(prod.application["metadata"]["labels"]["env"], "PROD");
    assert_eq!(
        prod.provenance,
        "git file `clusters/prod.json` × git directory `addons/prod/ingress-nginx`"
    );

    // No prefix: both children set `path`; the first child's wins (mergo
    // override order), so every directory of a cluster renders the same name.
    let e = expand_ok(&set("", "{{ .env }}-{{ .path.basename }}"), tree.as_ref());
    assert_eq!(names(&e), ["dev-clusters", "prod-clusters"]);
    assert!(
        e.notes
            .iter()
            .any(|n| n.contains("duplicate Application name `dev-clusters`")),
        "{:?}",
        e.notes
    );
}

/// proves: fasttemplate matrix parameters combine as strings, and a clash
/// between the two children is the controller's error.
#[test]
fn matrix_fasttemplate_and_errors() {
    let repo = Repo::new();
    let tree = addon_tree(&repo);
    let set = appset(
        false,
        json!([{"matrix": {"generators": [
            {"list": {"elements": [{"cluster": "dev"}, {"cluster": "prod"}]}},
            {"git": {"repoURL": THIS_REPO, "directories": [{"path": "cluster-addons/prometheus-operator"}]}}
        ]}}]),
        json!({"metadata": {"name": "{{cluster}}-{{path.basename}}"}, "spec": {"project": "default"}}),
    );
    assert_eq!(
        names(&expand_ok(&set, tree.as_ref())),
        ["dev-prometheus-operator", "prod-prometheus-operator"]
    );

    let three = appset(
        false,
        json!([{"matrix": {"generators": [{"list": {"elements": []}}, {"list": {"elements": []}}, {"list": {"elements": []}}]}}]),
        json!({}),
    );
    let err = expand_with(&three, tree.as_ref(), &[], &AppSetSettings::default())
        .expect_err("three children");
    assert!(err.0.contains("more than two"), "{err}");

    let clash = appset(
        false,
        json!([{"matrix": {"generators": [{"list": {"elements": [{"a": "1"}]}}, {"list": {"elements": [{"a": "2"}]}}]}}]),
        json!({"metadata": {"name": "{{a}}"}}),
    );
    let err =
        expand_with(&clash, tree.as_ref(), &[], &AppSetSettings::default()).expect_err("clash");
    assert!(err.0.contains("duplicate key a"), "{err}");
}

/// proves: the merge generator overrides base parameter sets by `mergeKeys`
/// and keeps base sets that have no match.
#[test]
fn merge_generator_overrides_by_key() {
    let repo = Repo::new();
    let tree = repo.commit(&[("README.md", "x")]);
    let set = appset(
        true,
        json!([{"merge": {"mergeKeys": ["server"], "generators": [
            {"list": {"elements": [{"server": "https://a", "name": "a", "stage": "base"}, {"server": "https://b", "name": "b", "stage": "base"}]}},
            {"list": {"elements": [{"server": "https://b", "stage": "override"}, {"server": "https://zzz", "stage": "ignored"}]}}
        ]}}]),
        json!({"metadata": {"name": "{{.name}}-{{.stage}}"}, "spec": {"project": "default"}}),
    );
    assert_eq!(
        names(&expand_ok(&set, tree.as_ref())),
        ["a-base", "b-override"]
    );
}

fn secret(name: &str, server: &str, labels: Value) -> Value {
    use base64::Engine as _;
    let b = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let mut l = labels;
    l[SECRET_TYPE_LABEL] = json!("cluster");
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": format!("{name}-secret"), "labels": l},
           "data": {"name": b(name), "server": b(server)}})
}

/// proves: the clusters generator reads cluster Secrets, adds the implicit
/// in-cluster entry only with no selector, and filters by label.
#[test]
fn clusters_generator_from_secrets() {
    let repo = Repo::new();
    let tree = repo.commit(&[("README.md", "x")]);
    let clusters: Vec<Cluster> = [
        secret(
            "staging",
            "https://staging.example",
            json!({"env": "staging"}),
        ),
        secret("prod", "https://prod.example", json!({"env": "prod"})),
    ]
    .iter()
    .filter_map(clusters_from_secret)
    .collect();
    assert_eq!(clusters.len(), 2);
    assert_eq!(clusters[0].server, "https://staging.example");
    let t = json!({"metadata": {"name": "{{name}}-guestbook", "labels": {"env": "{{metadata.labels.env}}"}},
                   "spec": {"project": "default", "destination": {"server": "{{server}}"}}});
    let all = appset(false, json!([{"clusters": {}}]), t.clone());
    let e =
        expand_with(&all, tree.as_ref(), &clusters, &AppSetSettings::default()).expect("expands");
    assert_eq!(
        names(&e),
        [
            "prod-guestbook",
            "staging-guestbook",
            "in-cluster-guestbook"
        ]
    );
    assert_eq!(e.apps[0].application["metadata"]["labels"]["env"], "prod");

    let selected = appset(
        false,
        json!([{"clusters": {"selector": {"matchLabels": {"env": "staging"}}}}]),
        t.clone(),
    );
    let e = expand_with(
        &selected,
        tree.as_ref(),
        &clusters,
        &AppSetSettings::default(),
    )
    .expect("expands");
    assert_eq!(names(&e), ["staging-guestbook"]);

    // No cluster data: unknown, not empty.
    let e = expand_with(&all, tree.as_ref(), &[], &AppSetSettings::default()).expect("expands");
    assert!(!e.is_complete());
    assert!(e.apps.is_empty());
    assert!(e.unresolved[0].contains("clusters"), "{:?}", e.unresolved);
}

/// proves: generators that need a network or the live cluster, and git
/// generators of other repositories, make the expansion incomplete while the
/// others still expand.
#[test]
fn unresolvable_generators_are_reported_not_empty() {
    let repo = Repo::new();
    let tree = addon_tree(&repo);
    let set = appset(
        false,
        json!([
            {"git": {"repoURL": THIS_REPO, "directories": [{"path": "cluster-addons/argo-workflows"}]}},
            {"git": {"repoURL": "https://github.com/other/repo.git", "directories": [{"path": "*"}]}},
            {"scmProvider": {"github": {"organization": "myorg"}}},
            {"pullRequest": {"github": {"owner": "myorg", "repo": "myrepo"}}},
            {"clusterDecisionResource": {"configMapRef": "my-configmap"}},
            {"plugin": {"configMapRef": {"name": "my-plugin"}}},
            {"matrix": {"generators": [{"list": {"elements": [{"a": "1"}]}}, {"pullRequest": {"github": {}}}]}}
        ]),
        dir_template(false),
    );
    let e = expand_ok(&set, tree.as_ref());
    assert_eq!(names(&e), ["argo-workflows"]);
    assert!(!e.is_complete());
    assert_eq!(e.unresolved.len(), 6, "{:#?}", e.unresolved);
    assert!(
        e.unresolved[0].starts_with("generator 2 (git): git generator reads another repository"),
        "{}",
        e.unresolved[0]
    );
    assert!(
        e.unresolved[5].contains("matrix: pullRequest"),
        "{}",
        e.unresolved[5]
    );

    // A git generator pinned to another revision of this repository.
    let set = appset(
        false,
        json!([{"git": {"repoURL": THIS_REPO, "revision": "v1.0.0", "directories": [{"path": "*"}]}}]),
        dir_template(false),
    );
    let head_only = |r: &str| r.is_empty() || r == "HEAD";
    let cx = AppSetContext {
        tree: tree.as_ref(),
        is_this_repo: &is_this,
        is_this_revision: Some(&head_only),
        clusters: &[],
        settings: &AppSetSettings::default(),
        index_cache: None,
        templated: None,
    };
    let e = expand(&set, &cx).expect("expands");
    assert!(
        e.unresolved[0].contains("revision `v1.0.0`"),
        "{:?}",
        e.unresolved
    );
}

/// proves: `preserveResourcesOnDeletion` drops the default finalizer, a
/// template finalizer is kept, and the policy is reported.
#[test]
fn finalizers_and_policy() {
    let repo = Repo::new();
    let tree = repo.commit(&[("README.md", "x")]);
    let mut set = appset(
        false,
        json!([{"list": {"elements": [{"n": "a"}]}}]),
        json!({"metadata": {"name": "{{n}}"}, "spec": {"project": "default"}}),
    );
    set["spec"]["syncPolicy"] =
        json!({"preserveResourcesOnDeletion": true, "applicationsSync": "create-update"});
    let e = expand_ok(&set, tree.as_ref());
    assert!(e.apps[0].application["metadata"]
        .get("finalizers")
        .is_none());
    assert!(!e.apps[0].cascades());
    assert!(!e.policy.allows_delete && e.policy.preserve_resources_on_deletion);

    let mut set = appset(
        false,
        json!([{"list": {"elements": [{"n": "a"}]}}]),
        json!({"metadata": {"name": "{{n}}", "finalizers": ["resources-finalizer.argocd.argoproj.io/background"]}, "spec": {"project": "default"}}),
    );
    set["spec"]["syncPolicy"] = json!({"preserveResourcesOnDeletion": true});
    let e = expand_ok(&set, tree.as_ref());
    assert!(
        e.apps[0].cascades(),
        "a finalizer set by the template wins over preserveResourcesOnDeletion"
    );

    let strict = AppSetSettings {
        controller_policy: Some("create-only".into()),
        ..AppSetSettings::default()
    };
    let e = expand_with(
        &appset(false, json!([]), json!({})),
        tree.as_ref(),
        &[],
        &strict,
    )
    .expect("expands");
    assert!(!e.policy.allows_delete && !e.policy.allows_update);
}

/// proves: `templatePatch` sets non-string fields per parameter set and
/// cannot change the project; generator-level templates override field by
/// field; the generator `selector` filters parameter sets.
#[test]
fn template_patch_overrides_values_and_selector() {
    let repo = Repo::new();
    let tree = repo.commit(&[("README.md", "x")]);
    let mut set = appset(
        true,
        json!([{"list": {
            "elements": [{"name": "a", "autoSync": true, "tier": "web"}, {"name": "b", "autoSync": false, "tier": "db"}],
            "template": {"metadata": {}, "spec": {"destination": {"namespace": "from-generator"}}}
        }, "selector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web", "db"]}]}}]),
        json!({"metadata": {"name": "{{ .name }}-{{ .tier }}"},
               "spec": {"project": "default", "source": {"repoURL": THIS_REPO, "path": "apps/{{ .name }}"},
                        "destination": {"server": "https://kubernetes.default.svc", "namespace": "default"}}}),
    );
    // The documented form: YAML text rendered per parameter set.
    set["spec"]["templatePatch"] = json!(
        "spec:\n  project: hijacked\n{{- if .autoSync }}\n  syncPolicy:\n    automated:\n      prune: {{ .autoSync }}\n{{- end }}\n"
    );
    let e = expand_ok(&set, tree.as_ref());
    assert_eq!(names(&e), ["a-web", "b-db"]);
    let a = &e.apps[0].application;
    assert_eq!(a["spec"]["syncPolicy"]["automated"]["prune"], json!(true));
    assert_eq!(
        a["spec"]["project"], "default",
        "templatePatch cannot change the project"
    );
    assert_eq!(a["spec"]["destination"]["namespace"], "from-generator");
    assert_eq!(
        a["spec"]["destination"]["server"],
        "https://kubernetes.default.svc"
    );
    assert!(e.apps[1].application["spec"].get("syncPolicy").is_none());

    set["spec"]["generators"][0]["selector"] = json!({"matchLabels": {"tier": "db"}});
    assert_eq!(names(&expand_ok(&set, tree.as_ref())), ["b-db"]);
}

/// proves: template errors stop the expansion with one message, as the
/// controller stops with an error condition (nothing created or deleted).
#[test]
fn template_errors_are_errors() {
    let repo = Repo::new();
    let tree = repo.commit(&[("README.md", "x")]);
    let mut set = appset(
        true,
        json!([{"list": {"elements": [{"n": "a"}]}}]),
        json!({"metadata": {"name": "{{ .nope }}"}}),
    );
    set["spec"]["goTemplateOptions"] = json!(["missingkey=error"]);
    let err =
        expand_with(&set, tree.as_ref(), &[], &AppSetSettings::default()).expect_err("missing key");
    assert!(err.0.contains("map has no entry for key \"nope\""), "{err}");
    assert!(err.0.contains("list element"), "{err}");

    // Without the option a missing key renders `<no value>`, as Argo CD does.
    set["spec"]["goTemplateOptions"] = json!([]);
    assert_eq!(names(&expand_ok(&set, tree.as_ref())), ["<no value>"]);

    // A fasttemplate element that is not a string is an error.
    let set = appset(
        false,
        json!([{"list": {"elements": [{"n": 1}]}}]),
        json!({"metadata": {"name": "{{n}}"}}),
    );
    assert!(expand_with(&set, tree.as_ref(), &[], &AppSetSettings::default()).is_err());
}

/// proves: duplicate generated names are kept once and noted; `elementsYaml`
/// elements are appended.
#[test]
fn duplicates_and_elements_yaml() {
    let repo = Repo::new();
    let tree = repo.commit(&[("README.md", "x")]);
    let set = appset(
        true,
        json!([{"list": {"elements": [{"n": "a"}, {"n": "a"}], "elementsYaml": "[{\"n\": \"b\"}]"}}]),
        json!({"metadata": {"name": "{{ .n }}"}, "spec": {"project": "default"}}),
    );
    let e = expand_ok(&set, tree.as_ref());
    assert_eq!(names(&e), ["a", "b"]);
    assert!(
        e.notes[0].contains("duplicate Application name `a`"),
        "{:?}",
        e.notes
    );
}

/// proves: cluster Secrets are read from `stringData` over `data`, and
/// Secrets without the cluster label are not clusters.
#[test]
fn cluster_secrets_decode_string_data_and_labels() {
    let s = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "c", "labels": {SECRET_TYPE_LABEL: "cluster", "env": "prod"},
                     "annotations": {"team": "a"}},
        "data": {"name": "aWdub3JlZA==", "server": "aHR0cHM6Ly9rOHMuZXhhbXBsZQ==", "project": "cHJvag=="},
        "stringData": {"name": "prod"}});
    let c = clusters_from_secret(&s).expect("a cluster Secret");
    assert_eq!(c.name, "prod", "stringData wins over data");
    assert_eq!(c.server, "https://k8s.example");
    assert_eq!(c.project.as_deref(), Some("proj"));
    assert_eq!(c.labels["env"], "prod");
    assert_eq!(c.annotations["team"], "a");
    let repo_secret =
        json!({"kind": "Secret", "metadata": {"labels": {SECRET_TYPE_LABEL: "repository"}}});
    assert!(clusters_from_secret(&repo_secret).is_none());
    assert!(clusters_from_secret(&json!({"kind": "ConfigMap", "metadata": {}})).is_none());
}

/// proves: an Application templated once in a run is taken again (the same
/// object) for the same template, parameters and budget left, and only
/// then: every expansion with the memo equals the one without it.
#[test]
fn a_templated_application_is_taken_again_only_for_the_same_template_parameters_and_budget() {
    let repo = Repo::new();
    let base = repo.commit(&[("apps/a/x.yaml", "x"), ("apps/b/x.yaml", "x")]);
    // `a` changed content only; `c` is new after the others.
    let head = repo.commit(&[
        ("apps/a/x.yaml", "y"),
        ("apps/b/x.yaml", "x"),
        ("apps/c/x.yaml", "x"),
    ]);
    // `0` comes first: `a` and `b` begin with less of the budget left.
    let shifted = repo.commit(&[
        ("apps/0/x.yaml", "x"),
        ("apps/a/x.yaml", "x"),
        ("apps/b/x.yaml", "x"),
    ]);
    let set = appset(
        true,
        json!([{"git": {"repoURL": THIS_REPO, "revision": "HEAD", "directories": [{"path": "apps/*"}]}}]),
        dir_template(true),
    );
    let memo = Templated::default();
    let settings = AppSetSettings::default();
    let with_memo = |set: &Value, tree: &dyn Tree| {
        let cx = AppSetContext {
            tree,
            is_this_repo: &is_this,
            is_this_revision: None,
            clusters: &[],
            settings: &settings,
            index_cache: None,
            templated: Some(&memo),
        };
        let e = expand(set, &cx).expect("expands");
        assert_eq!(e, expand_ok(set, tree), "the memo changed the expansion");
        e
    };
    let same = |a: &GeneratedApp, b: &GeneratedApp| Arc::ptr_eq(&a.application, &b.application);
    let b = with_memo(&set, base.as_ref());
    let h = with_memo(&set, head.as_ref());
    assert_eq!(names(&h), ["a", "b", "c"]);
    assert!(same(&b.apps[0], &h.apps[0]) && same(&b.apps[1], &h.apps[1]));
    let s = with_memo(&set, shifted.as_ref());
    assert_eq!(names(&s), ["0", "a", "b"]);
    assert!(!same(&b.apps[0], &s.apps[1]) && !same(&b.apps[1], &s.apps[2]));
    // Another template: templated again.
    let mut other = set.clone();
    other["spec"]["template"]["spec"]["project"] = json!("other");
    let o = with_memo(&other, base.as_ref());
    assert!(!same(&b.apps[0], &o.apps[0]));
    assert_eq!(o.apps[0].application["spec"]["project"], "other");
}

/// proves: directories found by listing only the directories a pattern of
/// literal segments, `*` and `?` can reach are exactly those the whole
/// tree's index gives (a pattern with a class takes that index): hidden
/// directories and their subtrees left out, files never directories,
/// depth counted by segments, excludes applied after.
#[test]
fn directories_a_plain_pattern_reaches_are_those_of_the_whole_index() {
    let repo = Repo::new();
    let tree = repo.commit(&[
        ("apps/a/overlays/prod/k.yaml", "x"),
        ("apps/a/overlays/dev/k.yaml", "x"),
        ("apps/a/base/k.yaml", "x"),
        ("apps/b/overlays/prod/k.yaml", "x"),
        ("apps/.hidden/overlays/prod/k.yaml", "x"),
        ("apps/c/.git-like/prod/k.yaml", "x"),
        ("apps/file-not-dir", "x"),
        ("apps/d/overlays/prod", "a file named like a directory"),
        ("apps/e/f/g/h/i/k.yaml", "x"),
        ("other/a/overlays/prod/k.yaml", "x"),
        (".github/workflows/x.yaml", "x"),
        ("top.yaml", "x"),
    ]);
    let cases: &[&[(&str, bool)]] = &[
        &[("apps/*", false)],
        &[("apps/*/overlays/prod", false)],
        &[("*/*/overlays/*", false)],
        &[("*", false)],
        &[("?pps/*", false), ("apps/b", true)],
        &[("apps/*/over*/p?od", false), ("apps/a/*/*", true)],
        &[("apps/*/*/*/*/*", false)],
        &[
            ("apps/*", false),
            ("apps/*/overlays", false),
            ("apps/a", true),
        ],
        &[("apps/", false)],
        &[("apps//a", false)],
        &[("", false)],
        &[("*/.hidden", false), (".github/*", false)],
        &[("apps/*", true)],
    ];
    let expand_dirs = |items: &[(&str, bool)]| {
        let dirs: Vec<Value> = items
            .iter()
            .map(|(p, ex)| json!({"path": p, "exclude": ex}))
            .collect();
        let set = appset(
            true,
            json!([{"git": {"repoURL": THIS_REPO, "revision": "HEAD", "directories": dirs}}]),
            json!({"metadata": {"name": "{{.path.path | replace \"/\" \"-\" }}"},
                   "spec": {"project": "default"}}),
        );
        names(&expand_ok(&set, tree.as_ref()))
    };
    for items in cases {
        let reached = expand_dirs(items);
        // A class in one more pattern (matching no directory here) makes
        // the expansion read the whole tree's index.
        let mut whole: Vec<(&str, bool)> = items.to_vec();
        whole.push(("[q]", false));
        assert_eq!(reached, expand_dirs(&whole), "{items:?}");
    }
    assert_eq!(
        expand_dirs(&[("apps/*/overlays/prod", false)]),
        ["apps-a-overlays-prod", "apps-b-overlays-prod"]
    );
    assert_eq!(expand_dirs(&[("*", false)]), ["apps", "other"]);
}

/// A tree that counts its listings.
struct Counting {
    inner: Arc<dyn Tree>,
    lists: std::sync::atomic::AtomicUsize,
}

impl Counting {
    fn over(inner: &Arc<dyn Tree>) -> Counting {
        Counting {
            inner: Arc::clone(inner),
            lists: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    fn lists(&self) -> usize {
        self.lists.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Tree for Counting {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn entry(
        &self,
        path: &str,
    ) -> Result<Option<crate::source::Entry>, crate::source::SourceError> {
        self.inner.entry(path)
    }
    fn list_raw(&self, dir: &str) -> Result<Vec<crate::source::Entry>, crate::source::SourceError> {
        self.lists
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.list_raw(dir)
    }
    fn read_raw(&self, path: &str) -> Result<Arc<[u8]>, crate::source::SourceError> {
        self.inner.read_raw(path)
    }
    fn may_have_symlinks(&self) -> bool {
        self.inner.may_have_symlinks()
    }
    fn content_addressed(&self) -> bool {
        self.inner.content_addressed()
    }
    fn has_listing(&self, dir: &str) -> bool {
        self.inner.has_listing(dir)
    }
}

/// proves: what a subtree holds for a `directories` pattern is kept by
/// tree id and taken by a later run, which then lists nothing below it
/// (the same Applications, in the same order); a tree of other content is
/// listed again, its unchanged subtrees taken.
#[test]
fn directories_kept_by_tree_id_are_taken_by_a_later_run() {
    let repo = Repo::new();
    let mut files: Vec<(String, String)> = (0..6)
        .flat_map(|i| {
            [
                (format!("apps/s{i}/overlays/prod/k.yaml"), format!("{i}")),
                (format!("apps/s{i}/base/k.yaml"), "x".to_string()),
            ]
        })
        .collect();
    files.push(("apps/.hidden/overlays/prod/k.yaml".into(), "x".into()));
    let commit = |f: &[(String, String)]| {
        let f: Vec<(&str, &str)> = f.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
        repo.commit(&f)
    };
    let first = commit(&files);
    files.push(("apps/s9/overlays/prod/k.yaml".into(), "9".into()));
    let second = commit(&files);
    let set = appset(
        true,
        json!([{"git": {"repoURL": THIS_REPO, "revision": "HEAD", "directories": [{"path": "apps/*/overlays/prod"}]}}]),
        json!({"metadata": {"name": "{{index .path.segments 1}}"}, "spec": {"project": "default"}}),
    );
    let store = tempfile::tempdir().expect("temp dir");
    let facts = Arc::new(crate::cache::Facts::open(store.path()));
    let settings = AppSetSettings::default();
    // Each run with a cache of its own: the facts alone carry over.
    let run = |tree: &Arc<dyn Tree>, facts: Option<&Arc<crate::cache::Facts>>| {
        let counting = Counting::over(tree);
        let cache = TreeIndexCache::kept_in(facts.cloned());
        let cx = AppSetContext {
            tree: &counting,
            is_this_repo: &is_this,
            is_this_revision: None,
            clusters: &[],
            settings: &settings,
            index_cache: Some(&cache),
            templated: None,
        };
        let e = expand(&set, &cx).expect("expands");
        (names(&e), counting.lists())
    };
    let (plain, lists_plain) = run(&first, None);
    assert_eq!(plain, ["s0", "s1", "s2", "s3", "s4", "s5"]);
    // Root, `apps`, each `apps/s*` and its `overlays`.
    assert_eq!(lists_plain, 14);
    assert_eq!(run(&first, Some(&facts)), (plain.clone(), 14));
    assert_eq!(run(&first, Some(&facts)), (plain, 0));
    // Another root and `apps/`: listed again; `apps/s9` is new.
    let (grown, lists_grown) = run(&second, Some(&facts));
    assert_eq!(grown, ["s0", "s1", "s2", "s3", "s4", "s5", "s9"]);
    assert_eq!(lists_grown, 4);
}
