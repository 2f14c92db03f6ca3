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
