use super::*;
use gotemplate::{FuncSet, MissingKey, TemplateSet};

/// `src` with `.Capabilities` of `line` for `--kube-version kube`.
fn caps(line: HelmLine, kube: &str, src: &str) -> Result<String, String> {
    let volatile = Volatile::default();
    let kv = super::super::version::parse_kube_version(line, kube)?;
    let dot = V::Map(
        [(
            "Capabilities".to_string(),
            capabilities(&kv, &[], &volatile, line),
        )]
        .into(),
    );
    let mut set = TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero)
        .with_helm_gen(line.template_gen());
    set.add("t", src)?;
    let out = set.execute("t", &dot)?;
    match volatile.take() {
        Some(why) => Err(why),
        None => Ok(out),
    }
}

/// `src` with Helm 4's `.Chart` of `md` (the root chart).
fn chart4(md: &Metadata, src: &str) -> Result<String, String> {
    let volatile = Volatile::default();
    let dot = V::Map(
        [(
            "Chart".to_string(),
            chart(md, true, &volatile, HelmLine::V4),
        )]
        .into(),
    );
    let mut set = TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero)
        .with_helm_gen(HelmLine::V4.template_gen());
    set.add("t", src)?;
    let out = set.execute("t", &dot)?;
    match volatile.take() {
        Some(why) => Err(why),
        None => Ok(out),
    }
}

fn full_metadata() -> Metadata {
    let strings = |l: &[&str]| l.iter().map(|s| (*s).to_string()).collect();
    Metadata {
        name: "full".into(),
        home: "https://example.com".into(),
        sources: strings(&["https://s1", "https://s2"]),
        version: "1.2.3".into(),
        description: "A chart".into(),
        keywords: strings(&["a", "b"]),
        maintainers: vec![
            serde_json::json!({"name": "Jo", "email": "jo@example.com"}),
            serde_json::json!({"name": "Al", "url": "https://al"}),
        ],
        icon: "https://example.com/i.png".into(),
        api_version: "v2".into(),
        app_version: "4.5".into(),
        deprecated: true,
        annotations: Some([("b".into(), "2".into()), ("a".into(), "x".into())].into()),
        kube_version: ">=1.20.0-0".into(),
        dependencies: Some(vec![Dependency {
            name: "other".into(),
            version: "0.1.0".into(),
            repository: "file://charts/sub".into(),
            condition: "other.enabled".into(),
            tags: strings(&["t1"]),
            enabled: true,
            import_values: vec![
                serde_json::json!({"child": "foo", "parent": "bar"}),
                serde_json::json!({"child": "exports.data", "parent": "."}),
            ],
            alias: "other".into(),
        }]),
        chart_type: "application".into(),
        ..Metadata::default()
    }
}

#[test]
fn helm4_chart_is_metadata_as_map() {
    // Printed by helm v4.1.4 for a chart with these fields (its
    // `structToMap` is v4.2.1's) and for `apiVersion`, `name` and
    // `version` alone.
    let full = full_metadata();
    assert_eq!(
            chart4(&full, "{{ .Chart }}").as_deref(),
            Ok("map[APIVersion:v2 Annotations:map[a:x b:2] AppVersion:4.5 Condition: Dependencies:[map[Alias:other Condition:other.enabled Enabled:true ImportValues:[map[child:foo parent:bar] map[child:exports.data parent:.]] Name:other Repository:file://charts/sub Tags:[t1] Version:0.1.0]] Deprecated:true Description:A chart Home:https://example.com Icon:https://example.com/i.png IsRoot:true Keywords:[a b] KubeVersion:>=1.20.0-0 Maintainers:[map[Email:jo@example.com Name:Jo URL:] map[Email: Name:Al URL:https://al]] Name:full Sources:[https://s1 https://s2] Tags: Type:application Version:1.2.3]")
        );
    assert_eq!(
        chart4(&full, "{{ .Chart | toJson }}").as_deref(),
        Ok(
            r#"{"APIVersion":"v2","Annotations":{"a":"x","b":"2"},"AppVersion":"4.5","Condition":"","Dependencies":[{"Alias":"other","Condition":"other.enabled","Enabled":true,"ImportValues":[{"child":"foo","parent":"bar"},{"child":"exports.data","parent":"."}],"Name":"other","Repository":"file://charts/sub","Tags":["t1"],"Version":"0.1.0"}],"Deprecated":true,"Description":"A chart","Home":"https://example.com","Icon":"https://example.com/i.png","IsRoot":true,"Keywords":["a","b"],"KubeVersion":"\u003e=1.20.0-0","Maintainers":[{"Email":"jo@example.com","Name":"Jo","URL":""},{"Email":"","Name":"Al","URL":"https://al"}],"Name":"full","Sources":["https://s1","https://s2"],"Tags":"","Type":"application","Version":"1.2.3"}"#
        )
    );
    let bare = Metadata {
        name: "bare".into(),
        version: "0.1.0".into(),
        api_version: "v2".into(),
        ..Metadata::default()
    };
    assert_eq!(
            chart4(&bare, "{{ .Chart }}").as_deref(),
            Ok("map[APIVersion:v2 Annotations:map[] AppVersion: Condition: Dependencies:[] Deprecated:false Description: Home: Icon: IsRoot:true Keywords:[] KubeVersion: Maintainers:[] Name:bare Sources:[] Tags: Type: Version:0.1.0]")
        );
    assert_eq!(
            chart4(&bare, "{{ .Chart | toYaml }}").as_deref(),
            Ok("APIVersion: v2\nAnnotations: null\nAppVersion: \"\"\nCondition: \"\"\nDependencies: []\nDeprecated: false\nDescription: \"\"\nHome: \"\"\nIcon: \"\"\nIsRoot: true\nKeywords: []\nKubeVersion: \"\"\nMaintainers: []\nName: bare\nSources: []\nTags: \"\"\nType: \"\"\nVersion: 0.1.0")
        );
    let t = r#"{{ hasKey .Chart "Name" }} {{ hasKey .Chart "name" }} {{ .Chart.Foo }}|{{ typeOf .Chart }} {{ typeOf .Chart.Maintainers }} {{ typeOf .Chart.Annotations }} {{ kindOf .Chart.Annotations }}|{{ .Chart.Annotations | toJson }} {{ .Chart.Keywords | toJson }} {{ len .Chart.Keywords }}"#;
    assert_eq!(
            chart4(&bare, t).as_deref(),
            Ok("true false <no value>|map[string]interface {} []interface {} map[string]string map|null [] 0")
        );
    let t = r#"{{ (index .Chart.Maintainers 0).Name }} {{ typeOf (index .Chart.Maintainers 0) }} {{ .Chart.Annotations.a }}-{{ index .Chart.Annotations "b" }}-{{ range $k, $v := .Chart.Annotations }}{{ $k }}{{ $v }}{{ end }} {{ keys .Chart | sortAlpha | join "," }}"#;
    assert_eq!(
            chart4(&full, t).as_deref(),
            Ok("Jo map[string]interface {} x-2-axb2 APIVersion,Annotations,AppVersion,Condition,Dependencies,Deprecated,Description,Home,Icon,IsRoot,Keywords,KubeVersion,Maintainers,Name,Sources,Tags,Type,Version")
        );
    // `annotations: {}`: an empty map, not nil (v4.1.4: `{}`).
    let empty = Metadata {
        annotations: Some(BTreeMap::new()),
        ..bare.clone()
    };
    assert_eq!(
        chart4(
            &empty,
            "{{ .Chart.Annotations | toJson }} {{ .Chart.Annotations }}"
        )
        .as_deref(),
        Ok("{} map[]")
    );
    let t = "{{ range (index .Chart.Dependencies 0).ImportValues }}{{ typeOf . }} {{ .child }};{{ end }}";
    assert_eq!(
        chart4(&full, t).as_deref(),
        Ok("map[string]string foo;map[string]string exports.data;")
    );
    // A `map[string]string` is no `map[string]interface {}` to Sprig.
    let e = chart4(&full, r#"{{ hasKey .Chart.Annotations "a" }}"#).unwrap_err();
    assert!(
        e.ends_with(
            "wrong type for value; expected map[string]interface {}; got map[string]string"
        ),
        "{e}"
    );
    let e = chart4(&full, r#"{{ dig "Annotations" "a" "z" .Chart }}"#).unwrap_err();
    assert!(
        e.ends_with(
            "interface conversion: interface {} is map[string]string, not map[string]interface {}"
        ),
        "{e}"
    );
}

#[test]
fn helm4_kube_version_has_a_normalized_field() {
    // helm v4.1.4, `--kube-version` absent: `{v1.35.0 v1.35.0 1 35}`;
    // `--kube-version 1.29`: `.Version` `v1.29`.
    let t = "{{ .Capabilities.KubeVersion }}|{{ .Capabilities.KubeVersion | quote }}|{{ .Capabilities.KubeVersion.Version }}|{{ .Capabilities.KubeVersion | toJson }}";
    assert_eq!(
        caps(HelmLine::V4, "1.30.7-gke.1000", t).as_deref(),
        Ok(
            r#"v1.30.7|"{v1.30.7-gke.1000 v1.30.7 1 30}"|v1.30.7-gke.1000|{"Version":"v1.30.7-gke.1000","Major":"1","Minor":"30"}"#
        )
    );
    assert_eq!(
        caps(HelmLine::V3_19, "1.29", t).as_deref(),
        Ok(r#"v1.29|"{v1.29 1 29}"|v1.29|{"Version":"v1.29","Major":"1","Minor":"29"}"#)
    );
}

#[test]
fn build_info_is_the_releases_and_an_unknown_go_version_is_refused() {
    assert_eq!(
        caps(
            HelmLine::V3_18,
            "1.31",
            "{{ .Capabilities.HelmVersion.Version }} {{ .Capabilities.HelmVersion.GitCommit }}"
        )
        .as_deref(),
        Ok("v3.18.4 d80839cf37d860c8aa9a0503fe463278f26cd5e2")
    );
    assert_eq!(
        caps(
            HelmLine::V4,
            "1.31",
            "{{ .Capabilities.HelmVersion.KubeClientVersion }}"
        )
        .as_deref(),
        Ok("v1.36")
    );
    let e = caps(
        HelmLine::V3_19,
        "1.31",
        "{{ .Capabilities.HelmVersion.GoVersion }}",
    )
    .unwrap_err();
    assert!(e.contains("Go version helm v3.19.4"), "{e}");
    assert!(caps(
        HelmLine::V4,
        "1.31",
        "{{ .Capabilities.HelmVersion | toJson }}"
    )
    .is_err());
    // v3.17.1 is fully known.
    assert!(caps(
        HelmLine::V3_17,
        "1.31",
        "{{ .Capabilities.HelmVersion | toJson }}"
    )
    .is_ok());
}

#[test]
fn helm4_api_versions_are_client_go_v0_36_1s_in_registration_order() {
    assert_eq!(
            caps(HelmLine::V4, "1.31", r#"{{ .Capabilities.APIVersions.Has "resource.k8s.io/v1" }} {{ .Capabilities.APIVersions.Has "autoscaling/v2beta2" }}"#).as_deref(),
            Ok("true false")
        );
    // The forms helm v4.1.4 printed (with its own list, 58 with one
    // `--api-versions`): `["v1","admissionregistration.k8s.io/v1",…`,
    // `[v1 admissionregistration.k8s.io/v1 …`, `index … 1`.
    let t = r#"{{ .Capabilities.APIVersions | toJson | trunc 38 }}|{{ printf "%v" .Capabilities.APIVersions | trunc 36 }}|{{ index .Capabilities.APIVersions 1 }}|{{ len .Capabilities.APIVersions }}"#;
    assert_eq!(
        caps(HelmLine::V4, "1.31", t).as_deref(),
        Ok(
            r#"["v1","admissionregistration.k8s.io/v1|[v1 admissionregistration.k8s.io/v1 |admissionregistration.k8s.io/v1|55"#
        )
    );
    // client-go v0.36.1 `register.go`: scheduling v1alpha2, v1beta1, v1.
    let l = caps(
        HelmLine::V4,
        "1.31",
        "{{ range .Capabilities.APIVersions }}{{ . }} {{ end }}",
    )
    .unwrap();
    assert!(
            l.contains(" scheduling.k8s.io/v1alpha2 scheduling.k8s.io/v1beta1 scheduling.k8s.io/v1 storage.k8s.io/v1beta1 "),
            "{l}"
        );
    // v3.18.0 printed v1beta2 before v1beta1 (client-go v0.33).
    let l = caps(
        HelmLine::V3_18,
        "1.31",
        "{{ .Capabilities.APIVersions | toJson }}",
    )
    .unwrap();
    assert!(
        l.contains(r#""resource.k8s.io/v1beta2","resource.k8s.io/v1beta1""#),
        "{l}"
    );
}

#[test]
fn range_over_int_and_helm4_functions_follow_the_release() {
    // helm v3.17.1 (go1.23.5): `range can't iterate over 3`; v3.18.0
    // (go1.24.3): `0;1;2;`, `none`, and the two-variable error.
    let r = "{{ range 3 }}{{ . }};{{ end }}{{ range -1 }}x{{ else }}none{{ end }}";
    assert!(caps(HelmLine::V3_17, "1.31", r)
        .unwrap_err()
        .contains("range can't iterate over 3"));
    assert_eq!(
        caps(HelmLine::V3_18, "1.31", r).as_deref(),
        Ok("0;1;2;none")
    );
    let e = caps(HelmLine::V3_19, "1.31", "{{ range $i, $e := 3 }}{{ end }}").unwrap_err();
    assert!(
        e.ends_with("at <3>: can't use 3 to iterate over more than one variable"),
        "{e}"
    );
    // helm v3.17.1 and v3.18.0: `function "mustToYaml" not defined`.
    let m = r#"{{ mustToYaml (dict "a" 1) }}"#;
    assert!(caps(HelmLine::V3_19, "1.31", m)
        .unwrap_err()
        .contains(r#"function "mustToYaml" not defined"#));
    assert_eq!(caps(HelmLine::V4, "1.31", m).as_deref(), Ok("a: 1"));
    assert!(caps(HelmLine::V4, "1.31", r#"{{ mustToToml (dict "a" "b") }}"#).is_ok());
    // BurntSushi/toml v1.6.0's floats under Helm 4, v1.4.0's under
    // Helm 3: helm v4.1.4 and v3.17.1 printed these.
    let t = r#"{{ toToml (dict "a" 1.5 "b" 6.02e23 "c" (float64 "NaN") "d" 8080.0 "e" 1e6) }}"#;
    assert_eq!(
        caps(HelmLine::V4, "1.31", t).as_deref(),
        Ok("a = 1.5\nb = 6.02e+23\nc = nan\nd = 8080.0\ne = 1e+06\n")
    );
    assert_eq!(
        caps(HelmLine::V3_19, "1.31", t).as_deref(),
        Ok("a = 1.5\nb = 602000000000000000000000.0\nc = nan\nd = 8080.0\ne = 1000000.0\n")
    );
}
