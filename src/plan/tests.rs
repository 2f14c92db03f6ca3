use std::sync::Arc;

use serde_json::{json, Value};

use super::*;
use crate::argocd::AppSpec;
use crate::manifest::{manifest_from_value, Origin, Scopes};
use crate::render::RenderError;

fn pvc(name: &str, options: Option<&str>) -> Value {
    let mut v =
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name}});
    if let Some(o) = options {
        v["metadata"]["annotations"] = json!({"argocd.argoproj.io/sync-options": o});
    }
    v
}

fn application(name: &str, finalizer: bool, automated: bool, options: &[&str]) -> Value {
    let mut v = json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": "argocd"},
            "spec": {"source": {"repoURL": "https://git.example.com/gitops.git", "path": name},
                     "destination": {"namespace": name},
                     "syncPolicy": {"syncOptions": options}}});
    if finalizer {
        v["metadata"]["finalizers"] = json!(["resources-finalizer.argocd.argoproj.io"]);
    }
    if automated {
        v["spec"]["syncPolicy"]["automated"] = json!({"prune": true});
    }
    v
}

/// An app rendered from `docs`: each inner list is one file, each value a document.
fn app(object: Value, manager: Option<&str>, files: &[&[Value]]) -> App {
    let spec = AppSpec::parse(&object).expect("an Application");
    let mut resources = Vec::new();
    for (f, docs) in files.iter().enumerate() {
        for (d, v) in docs.iter().enumerate() {
            let origin = Origin {
                file: Some(format!("{}/{f}.yaml", spec.name)),
                line: Some(1),
                doc_index: Some(d),
            };
            resources.push(
                manifest_from_value(v.clone(), origin, &spec.dest_namespace, &Scopes::default())
                    .expect("a valid object"),
            );
        }
    }
    App {
        key: format!("argocd/{}", spec.name),
        instance: None,
        origin: Origin {
            file: Some(format!("apps/{}.yaml", spec.name)),
            line: Some(1),
            doc_index: Some(0),
        },
        spec: Arc::new(spec),
        object: Arc::new(object.into()),
        manager: manager.map(|m| Manager::App(format!("argocd/{m}"))),
        status: AppStatus::Rendered,
        resources: resources.into(),
        inputs: Arc::default(),
        source_types: Vec::new(),
        plugins: Vec::new(),
        implicit: false,
    }
}

fn inventory(apps: Vec<App>) -> Inventory {
    Inventory {
        apps: apps.into_iter().map(|a| (a.key.clone(), a)).collect(),
        ..Inventory::default()
    }
}

fn reasons(plan: &Plan) -> Vec<(String, String, PruneReason)> {
    plan.prunes
        .iter()
        .map(|p| (p.app.clone(), p.id.name.clone(), p.reason))
        .collect()
}

#[test]
fn recreates_pair_only_what_is_certain() {
    let deploy = |name: &str, ns: Option<&str>| {
        let mut v =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}});
        if let Some(ns) = ns {
            v["metadata"]["namespace"] = json!(ns);
        }
        v
    };
    let a = application("web", false, true, &[]);
    let pairs = |base: &[Value], head: &[Value]| -> Vec<(String, String)> {
        let b = inventory(vec![app(a.clone(), None, &[base])]);
        let h = inventory(vec![app(a.clone(), None, &[head])]);
        plan(&b, &h, &Config::default())
            .recreates()
            .into_iter()
            .map(|r| (r.deleted.to_string(), r.created.to_string()))
            .collect()
    };
    // Same name, another namespace.
    assert_eq!(
        pairs(&[deploy("api", Some("a"))], &[deploy("api", Some("b"))]),
        vec![("Deployment a/api".into(), "Deployment b/api".into())]
    );
    // One prune and one creation of the kind in a namespace.
    assert_eq!(
        pairs(&[deploy("api", None)], &[deploy("api-v2", None)]),
        vec![("Deployment web/api".into(), "Deployment web/api-v2".into())]
    );
    // Two of each: which replaces which is a guess, so nothing is paired.
    assert!(pairs(
        &[deploy("api", None), deploy("worker", None)],
        &[deploy("api-v2", None), deploy("worker-v2", None)]
    )
    .is_empty());
    // A pruned object another kept one does not replace.
    assert!(pairs(
        &[deploy("api", None), deploy("old", None)],
        &[deploy("api", None)]
    )
    .is_empty());
    // Two of one name leave for a third namespace: which one moved is a guess.
    assert!(pairs(
        &[deploy("api", Some("a")), deploy("api", Some("c"))],
        &[deploy("api", Some("b"))]
    )
    .is_empty());
    // A creation paired with a move is not also another prune's replacement.
    assert_eq!(
        pairs(
            &[deploy("api", Some("a")), deploy("old", Some("b"))],
            &[deploy("api", Some("b"))]
        ),
        vec![("Deployment a/api".into(), "Deployment b/api".into())]
    );
}

#[test]
fn an_apps_prunes_are_found_as_a_run_of_the_sorted_plan() {
    let a = |name: &str| application(name, false, true, &[]);
    let claims = |names: &[&str]| -> Vec<Value> { names.iter().map(|n| pvc(n, None)).collect() };
    let base = inventory(vec![
        app(a("web"), None, &[&claims(&["w1", "w2"])]),
        app(a("api"), None, &[&claims(&["a2", "a1", "kept"])]),
        app(a("db"), None, &[&claims(&["kept"])]),
    ]);
    let head = inventory(vec![
        app(a("web"), None, &[]),
        app(a("api"), None, &[&claims(&["kept"])]),
        app(a("db"), None, &[&claims(&["kept"])]),
    ]);
    let p = plan(&base, &head, &Config::default());
    let names = |key: &str| -> Vec<&str> {
        p.prunes_of(key)
            .iter()
            .map(|x| x.id.name.as_str())
            .collect()
    };
    assert_eq!(names("argocd/api"), ["a1", "a2"]);
    assert_eq!(names("argocd/web"), ["w1", "w2"]);
    assert!(names("argocd/db").is_empty() && names("argocd/gone").is_empty());
    let w2 = &p
        .prunes
        .iter()
        .find(|x| x.id.name == "w2")
        .expect("w2 is pruned")
        .id;
    assert_eq!(
        p.prune_of("argocd/web", w2).map(|x| x.app.as_str()),
        Some("argocd/web")
    );
    assert!(
        p.prune_of("argocd/api", w2).is_none(),
        "another app's prune"
    );
}

#[test]
fn a_childs_object_is_the_first_application_of_its_name_the_parent_renders() {
    let mut first = application("db", true, true, &[]);
    first["metadata"]["namespace"] = json!("team-a");
    let second = application("db", false, true, &[]);
    let parent = app(
        application("root", false, true, &[]),
        None,
        &[&[
            pvc("db", None),
            first,
            second,
            application("web", true, true, &[]),
        ]],
    );
    let kids = ChildApps::default();
    let db = kids.of(&parent, "db").expect("root renders db");
    assert_eq!(db.id.namespace, "team-a");
    assert_eq!(
        kids.of(&parent, "web").map(|m| m.id.name.as_str()),
        Some("web")
    );
    assert!(kids.of(&parent, "api").is_none());
    assert!(kids.of(&parent, "db").is_some_and(|m| std::ptr::eq(m, db)));
}

#[test]
fn a_rename_needs_a_name_that_is_new() {
    let a = application("db", false, true, &[]);
    let base = inventory(vec![app(
        a.clone(),
        None,
        &[&[pvc("scratch", None), pvc("archive", None)]],
    )]);
    let shifted = inventory(vec![app(a.clone(), None, &[&[pvc("archive", None)]])]);
    let p = plan(&base, &shifted, &Config::default());
    assert_eq!(
        reasons(&p),
        vec![("argocd/db".into(), "scratch".into(), PruneReason::Removed)]
    );
    let renamed = inventory(vec![app(
        a,
        None,
        &[&[pvc("scratch-v2", None), pvc("archive", None)]],
    )]);
    let p = plan(&base, &renamed, &Config::default());
    assert_eq!(p.prunes[0].reason, PruneReason::Renamed);
    assert_eq!(p.prunes[0].detail.as_deref(), Some("scratch-v2"));
}

#[test]
fn the_managed_namespace_is_kept_only_while_the_spec_in_force_manages_it() {
    let ns =
        |name: &str| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    let managed = |on: bool| {
        let mut a = application("db", false, true, &["CreateNamespace=true"]);
        if on {
            a["spec"]["syncPolicy"]["managedNamespaceMetadata"] = json!({"labels": {"team": "db"}});
        }
        a
    };
    let pruned = |b: bool, h: bool, manager: Option<&str>, name: &str| {
        let base = inventory(vec![app(
            managed(b),
            manager,
            &[&[ns(name), pvc("data", None)]],
        )]);
        let head = inventory(vec![app(managed(h), manager, &[&[pvc("data", None)]])]);
        !plan(&base, &head, &Config::default()).prunes.is_empty()
    };
    assert!(!pruned(true, true, None, "db"));
    assert!(
        pruned(false, false, None, "db"),
        "CreateNamespace=true alone keeps nothing"
    );
    assert!(
        pruned(true, true, None, "other"),
        "only the destination namespace is synthesised"
    );
    assert!(
        !pruned(true, false, None, "db"),
        "an Application applied by hand keeps its base spec in the cluster"
    );
    assert!(
        pruned(true, false, Some("root"), "db"),
        "a parent may apply the head spec, without the metadata, before the app syncs"
    );
    assert!(pruned(false, true, Some("root"), "db"));
}

#[test]
fn a_field_filled_with_random_values_is_no_change() {
    let secret = |password: &str, user: &str| {
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
                   "stringData": {"password": password, "user": user}})
    };
    let changed = |b: (&str, &str), h: (&str, &str), generated: bool| {
        let a = application("db", false, true, &[]);
        let mut base = app(a.clone(), None, &[&[secret(b.0, b.1)]]);
        let mut head = app(a, None, &[&[secret(h.0, h.1)]]);
        if generated {
            let (b, h) = (&mut base.resources, &mut head.resources);
            for m in Arc::make_mut(b).iter_mut().chain(Arc::make_mut(h)) {
                m.generated = Arc::from(vec!["/stringData/password".to_string()]);
            }
        }
        let p = plan(
            &inventory(vec![base]),
            &inventory(vec![head]),
            &Config::default(),
        );
        p.changes
            .get("argocd/db")
            .is_some_and(|c| c.changed.iter().any(|id| id.name == "db"))
    };
    assert!(!changed(("x1", "app"), ("y2", "app"), true));
    assert!(changed(("x1", "app"), ("y2", "app"), false));
    assert!(
        changed(("x1", "app"), ("y2", "web"), true),
        "what else changes still does"
    );
}

#[test]
fn a_resource_prune_option_overrides_the_app_level_one() {
    let a = application("db", false, true, &["Prune=false"]);
    let files: &[&[Value]] = &[&[pvc("plain", None), pvc("forced", Some("Prune=true"))]];
    let base = inventory(vec![app(a.clone(), None, files)]);
    let head = inventory(vec![app(a, None, &[])]);
    let p = plan(&base, &head, &Config::default());
    let prot: Vec<(&str, Option<&str>)> = p
        .prunes
        .iter()
        .map(|p| (p.id.name.as_str(), p.protection.as_deref()))
        .collect();
    assert_eq!(
        prot,
        vec![("forced", None), ("plain", Some("Prune=false (app)"))]
    );
    let old = Config {
        argocd_version: (3, 3),
        ..Config::default()
    };
    let p = plan(&base, &head, &old);
    assert!(
        p.prunes.iter().all(|p| p.protection.is_none()),
        "app-level Prune=false needs Argo CD 3.4"
    );
}

/// root (manual prune) renders platform, platform renders db. The change
/// removes platform from root; db's file stays in the repository.
fn nested(platform_finalizer: bool, db_options: Option<&str>) -> (Inventory, Inventory) {
    let root = application("root", false, false, &[]);
    let platform = application("platform", platform_finalizer, true, &[]);
    let mut db = application("db", true, true, &[]);
    if let Some(o) = db_options {
        db["metadata"]["annotations"] = json!({"argocd.argoproj.io/sync-options": o});
    }
    let data: &[&[Value]] = &[&[pvc("data", None)]];
    let base = inventory(vec![
        app(root.clone(), None, &[std::slice::from_ref(&platform)]),
        app(platform, Some("root"), &[&[db.clone()]]),
        app(db.clone(), Some("platform"), data),
    ]);
    let head = inventory(vec![app(root, None, &[]), app(db, None, data)]);
    (base, head)
}

#[test]
fn a_cascade_follows_every_level_with_the_mode_of_what_starts_it() {
    let (base, head) = nested(true, None);
    let p = plan(&base, &head, &Config::default());
    let db = p
        .deleted_apps
        .iter()
        .find(|d| d.app == "argocd/db")
        .expect("db is deleted with platform");
    assert!(db.cascades);
    assert_eq!(db.deleted_by, Some(Manager::App("argocd/platform".into())));
    assert_eq!(
        db.mode,
        PruneMode::Manual,
        "root prunes platform only when a person syncs it"
    );
    assert!(reasons(&p).contains(&("argocd/db".into(), "data".into(), PruneReason::AppDeleted)));
}

#[test]
fn delete_false_on_the_child_application_stops_the_chain() {
    let (base, head) = nested(true, Some("Delete=false"));
    let p = plan(&base, &head, &Config::default());
    let db = p.deleted_apps.iter().find(|d| d.app == "argocd/db");
    assert!(db.is_none_or(|d| !d.cascades), "{db:?}");
    assert!(!p.prunes.iter().any(|x| x.app == "argocd/db"));
}

#[test]
fn prune_false_on_the_child_application_does_not_stop_a_cascade() {
    let (base, head) = nested(true, Some("Prune=false"));
    let p = plan(&base, &head, &Config::default());
    assert!(reasons(&p).contains(&("argocd/db".into(), "data".into(), PruneReason::AppDeleted)));
}

#[test]
fn a_parent_deleted_without_finalizer_orphans_the_child_which_lives_on() {
    let (base, head) = nested(false, None);
    let p = plan(&base, &head, &Config::default());
    assert!(!p.deleted_apps.iter().any(|d| d.app == "argocd/db"));
    assert!(!p.prunes.iter().any(|x| x.app == "argocd/db"));
}

#[test]
fn a_child_of_a_parent_that_fails_at_head_is_unknown_not_deleted() {
    let root = application("root", false, true, &[]);
    let child = application("child", true, true, &[]);
    let base = inventory(vec![
        app(root.clone(), None, &[std::slice::from_ref(&child)]),
        app(child, Some("root"), &[&[pvc("data", None)]]),
    ]);
    let mut failed = app(root, None, &[]);
    failed.status = AppStatus::Unrendered(RenderError::content("broken"));
    let head = inventory(vec![failed]);
    let p = plan(&base, &head, &Config::default());
    assert!(p.deleted_apps.is_empty() && p.prunes.is_empty());
    let unknown: Vec<&str> = p.unknown.iter().map(|u| u.app.as_str()).collect();
    assert_eq!(unknown, vec!["argocd/child", "argocd/root"]);
}
