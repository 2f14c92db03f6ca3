use super::schemas::external_ref;
use super::*;

fn env() -> Vec<(String, String)> {
    vec![("ARGOCD_APP_NAME".into(), "shop".into())]
}

#[test]
fn envsubst_is_go_os_expand() {
    assert_eq!(envsubst("a-$ARGOCD_APP_NAME", &env()), "a-shop");
    assert_eq!(envsubst("${ARGOCD_APP_NAME}.yaml", &env()), "shop.yaml");
    assert_eq!(envsubst("$$x", &env()), "$x");
    assert_eq!(envsubst("$UNKNOWN/x", &env()), "/x");
    assert_eq!(envsubst("cost: 5$", &env()), "cost: 5$");
    assert_eq!(envsubst("a $ b", &env()), "a $ b");
    assert_eq!(envsubst("${}x", &env()), "x");
}

#[test]
fn commas_are_escaped_unless_a_list() {
    assert_eq!(clean_set_parameter("a,b"), "a\\,b");
    assert_eq!(clean_set_parameter("a\\,b"), "a\\,b");
    assert_eq!(clean_set_parameter("{a,b}"), "{a,b}");
}

#[test]
fn value_files_resolve_like_argo_cd() {
    let spec = SourceSpec {
        path: "charts/shop".into(),
        env: env(),
        refs: vec![super::super::RefSource {
            name: "values".into(),
            target: RefTarget::Same,
        }],
        ..SourceSpec::default()
    };
    let p = |f: &str| locate(&spec, f).map(|l| (l.ref_name, l.path));
    assert_eq!(
        p("prod.yaml").ok(),
        Some((None, "charts/shop/prod.yaml".into()))
    );
    assert_eq!(
        p("/envs/prod.yaml").ok(),
        Some((None, "envs/prod.yaml".into()))
    );
    assert_eq!(
        p("$values/envs/$ARGOCD_APP_NAME.yaml").ok(),
        Some((Some("values".into()), "envs/shop.yaml".into()))
    );
    // No such ref: substituted as a variable, then absolute.
    assert_eq!(p("$other/x.yaml").ok(), Some((None, "x.yaml".into())));
    assert_eq!(
        p("../../../x.yaml").map_err(|e| e.kind).err(),
        Some(RenderErrorKind::OutsideRepo)
    );
    assert_eq!(
        p("https://example.com/v.yaml").map_err(|e| e.kind).err(),
        Some(RenderErrorKind::Unsupported)
    );
}

#[test]
fn schema_refs_outside_the_schema_are_found() {
    let v: Value = serde_json::json!({"properties": {"a": {"$ref": "#/definitions/a"}}});
    assert_eq!(external_ref(&v), None);
    for r in [
        "http://example.com/s.json",
        "file:///etc/hostname",
        "other.json",
    ] {
        let v = serde_json::json!({"allOf": [{"$ref": r}]});
        assert_eq!(external_ref(&v).as_deref(), Some(r));
    }
}

/// The value files a glob names, in the order doublestar's walk finds
/// them: a directory's files before its subdirectories', directories in
/// lexical order (`a/` before `a-b/`), `*` within one segment. Helm
/// merges later files over earlier ones, so the order decides the values.
#[test]
fn value_file_globs_expand_in_doublestar_order() {
    let files: Vec<(String, Vec<u8>)> = [
        "charts/shop/values/zz.yaml",
        "charts/shop/values/prod.yaml",
        "charts/shop/values/prod/extra.yaml",
        "charts/shop/values/a-b/x.yaml",
        "charts/shop/values/a/y.yaml",
        "charts/shop/values/notes.txt",
        "charts/shop/envs/a-b/values.yaml",
        "charts/shop/envs/a/values.yaml",
        "charts/shop/envs/a/deeper/values.yaml",
    ]
    .iter()
    .map(|p| ((*p).to_string(), b"k: v\n".to_vec()))
    .collect();
    let spec = SourceSpec {
        path: "charts/shop".into(),
        ..SourceSpec::default()
    };
    let resolve = |pattern: &str| {
        let opts = Options {
            value_files: vec![pattern.to_string()],
            ..Options::default()
        };
        crate::render::test_files::in_tree(&files, |cx| {
            resolve_value_files(cx, &spec, &opts)
                .map(|l| l.into_iter().map(|l| l.path).collect::<Vec<_>>())
                .map_err(|e| e.to_string())
        })
    };
    assert_eq!(
        resolve("values/**/*.yaml").as_deref(),
        Ok(&[
            "charts/shop/values/prod.yaml".to_string(),
            "charts/shop/values/zz.yaml".to_string(),
            "charts/shop/values/a/y.yaml".to_string(),
            "charts/shop/values/a-b/x.yaml".to_string(),
            "charts/shop/values/prod/extra.yaml".to_string(),
        ][..])
    );
    assert_eq!(
        resolve("envs/*/values.yaml").as_deref(),
        Ok(&[
            "charts/shop/envs/a/values.yaml".to_string(),
            "charts/shop/envs/a-b/values.yaml".to_string(),
        ][..])
    );
    // doublestar refuses a malformed pattern (`ErrBadPattern`).
    let bad = resolve("values/[a.yaml");
    assert!(
        bad.as_ref()
            .is_err_and(|e| e.contains("not a valid pattern")),
        "{bad:?}"
    );
}
