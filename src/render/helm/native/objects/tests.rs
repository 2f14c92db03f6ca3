use super::*;
use gotemplate::{FuncSet, MissingKey, TemplateSet};

/// Runs `src` with `.Capabilities`, `.Files` and `.Chart` as helm sets
/// them; `Err` also when the render read something volatile.
fn run(src: &str, files: &[(&str, &[u8])], md: &Metadata) -> Result<String, String> {
    let volatile = Volatile::default();
    let files: Vec<ChartFile> = files
        .iter()
        .map(|(n, d)| ChartFile {
            name: (*n).to_string(),
            data: Arc::from(*d),
        })
        .collect();
    let dot = V::Map(
        [
            (
                "Capabilities".to_string(),
                capabilities(
                    &("v1.32.0".into(), "v1.32.0".into()),
                    &["x.io/v1".to_string()],
                    &volatile,
                    HelmLine::V3_17,
                ),
            ),
            ("Files".to_string(), super::files(&files, &volatile)),
            (
                "Chart".to_string(),
                chart(md, true, &volatile, HelmLine::V3_17),
            ),
        ]
        .into(),
    );
    let mut set = TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero);
    set.add("t", src)?;
    let out = set.execute("t", &dot);
    if let Some(why) = volatile.take() {
        return Err(format!("volatile: {why}"));
    }
    out
}

fn caps(src: &str) -> String {
    run(src, &[], &Metadata::default()).unwrap()
}

#[test]
fn kube_version_prints_with_string_but_copies_print_as_structs() {
    // sem-capabilities: the action calls `(*KubeVersion).String`; a
    // function's argument is a copy without it.
    assert_eq!(caps("{{ .Capabilities.KubeVersion }}"), "v1.32.0");
    assert_eq!(
        caps("{{ .Capabilities.KubeVersion | quote }}"),
        "\"{v1.32.0 1 32}\""
    );
    assert_eq!(
        caps("{{ printf \"%v\" .Capabilities.KubeVersion }}"),
        "{v1.32.0 1 32}"
    );
    assert_eq!(
        caps("{{ default .Capabilities.KubeVersion nil }}"),
        "{v1.32.0 1 32}"
    );
    assert_eq!(
        caps("{{ $k := .Capabilities.KubeVersion }}{{ $k }} {{ $k.GitVersion }}"),
        "v1.32.0 v1.32.0"
    );
    assert_eq!(
        caps("{{ .Capabilities.KubeVersion.Major }}.{{ .Capabilities.KubeVersion.Minor }}"),
        "1.32"
    );
    assert_eq!(
        caps("{{ kindOf .Capabilities.KubeVersion }} {{ kindOf .Capabilities }}"),
        "struct ptr"
    );
    assert_eq!(
        caps("{{ toJson .Capabilities.KubeVersion }}"),
        r#"{"Version":"v1.32.0","Major":"1","Minor":"32"}"#
    );
    let err = run(
        "{{ (default .Capabilities.KubeVersion nil).GitVersion }}",
        &[],
        &Metadata::default(),
    )
    .unwrap_err();
    assert!(err.contains("can't evaluate field GitVersion"), "{err}");
}

#[test]
fn capabilities_print_as_go_structs() {
    let api = DEFAULT_API_VERSIONS.join(" ");
    let helm = "{v3.17.1 980d8ac1939e39138101364400756af2bdee1da5 clean go1.23.5}";
    // `strval` is `%v` of the `*Capabilities`; an action follows the pointer.
    assert_eq!(
        caps("{{ .Capabilities | toString }}"),
        format!("&{{{{v1.32.0 1 32}} [{api} x.io/v1] {helm}}}")
    );
    assert_eq!(
        caps("{{ .Capabilities }}"),
        format!("{{{{v1.32.0 1 32}} [{api} x.io/v1] {helm}}}")
    );
    assert_eq!(caps("{{ .Capabilities.HelmVersion }}"), helm);
    assert_eq!(caps("{{ .Capabilities.HelmVersion.Version }}"), "v3.17.1");
    // bitnami common's `_capabilities.tpl` test for helm ≥ 3.3.
    assert_eq!(
        caps(r#"{{ regexMatch "{(v[0-9])*[^}]*}}$" (.Capabilities | toString) }}"#),
        "true"
    );
    assert_eq!(
        caps("{{ .Capabilities.HelmVersion | toJson }}"),
        r#"{"version":"v3.17.1","git_commit":"980d8ac1939e39138101364400756af2bdee1da5","git_tree_state":"clean","go_version":"go1.23.5"}"#
    );
    assert_eq!(
            caps("{{ .Capabilities.HelmVersion | toYaml }}"),
            "git_commit: 980d8ac1939e39138101364400756af2bdee1da5\ngit_tree_state: clean\ngo_version: go1.23.5\nversion: v3.17.1"
        );
    assert!(run("{{ list .Capabilities }}", &[], &Metadata::default())
        .unwrap_err()
        .contains("volatile"));
}

#[test]
fn api_versions_are_a_slice() {
    let n = DEFAULT_API_VERSIONS.len() + 1;
    assert_eq!(caps("{{ len .Capabilities.APIVersions }}"), n.to_string());
    assert_eq!(
            caps("{{ has \"x.io/v1\" .Capabilities.APIVersions }} {{ .Capabilities.APIVersions.Has \"nope\" }}"),
            "true false"
        );
    assert_eq!(
        caps("{{ last .Capabilities.APIVersions }} {{ index .Capabilities.APIVersions 0 }}"),
        "x.io/v1 v1"
    );
    assert_eq!(
            caps("{{ range .Capabilities.APIVersions }}{{ if eq . \"x.io/v1\" }}{{ . }}{{ end }}{{ end }}"),
            "x.io/v1"
        );
}

const FILES: &[(&str, &[u8])] = &[
    ("config/app.ini", b"[server]\nport = 8080\n"),
    ("config/tab.txt", b"tab\there\n"),
    ("files/blob.bin", b"\x00\x01\x02\xff\xfe binary\n"),
    ("files/sub/nested.conf", b"nested file\n"),
    ("files/a.txt", b"a\n"),
];

fn files(src: &str) -> Result<String, String> {
    run(src, FILES, &Metadata::default())
}

#[test]
fn glob_uses_gobwas_with_slash_separators() {
    // sem-files: `*` stays in a directory, `**` crosses them.
    let names = |p: &str| {
        files(&format!(
            "{{{{ range $p, $_ := .Files.Glob {p:?} }}}}{{{{ $p }}}};{{{{ end }}}}"
        ))
        .unwrap()
    };
    assert_eq!(names("files/*"), "files/a.txt;files/blob.bin;");
    assert_eq!(
        names("files/**"),
        "files/a.txt;files/blob.bin;files/sub/nested.conf;"
    );
    assert_eq!(
        names("{config,files}/*.{ini,txt}"),
        "config/app.ini;config/tab.txt;files/a.txt;"
    );
    // A pattern gobwas refuses matches everything (`glob.Compile("**")`).
    assert_eq!(names("[").matches(';').count(), FILES.len());
}

#[test]
fn as_config_and_as_secrets_write_helm_yaml() {
    // sem-files' expected output.
    assert_eq!(
        files("{{ (.Files.Glob \"config/*\").AsConfig }}").unwrap(),
        "app.ini: |\n  [server]\n  port = 8080\ntab.txt: \"tab\\there\\n\""
    );
    assert_eq!(
        files("{{ (.Files.Glob \"files/{blob.bin,sub/*}\").AsSecrets }}").unwrap(),
        "blob.bin: AAEC//4gYmluYXJ5Cg==\nnested.conf: bmVzdGVkIGZpbGUK"
    );
    assert_eq!(
        files("{{ (.Files.Glob \"none/*\").AsConfig }}").unwrap(),
        "{}"
    );
    let same_name: &[(&str, &[u8])] = &[("a/x", b"1"), ("b/x", b"2")];
    assert!(
        run("{{ .Files.AsConfig }}", same_name, &Metadata::default())
            .unwrap_err()
            .contains("volatile")
    );
}

#[test]
fn get_bytes_is_a_byte_slice() {
    assert_eq!(
        files("{{ .Files.GetBytes \"files/a.txt\" }}").unwrap(),
        "[97 10]"
    );
    assert_eq!(
        files("{{ .Files.GetBytes \"files/blob.bin\" | len }}").unwrap(),
        "13"
    );
    assert_eq!(
        files("{{ .Files.GetBytes \"files/a.txt\" | toString | quote }}").unwrap(),
        "\"a\\n\""
    );
    assert_eq!(
        files("{{ .Files.GetBytes \"files/a.txt\" | toJson }}").unwrap(),
        "\"YQo=\""
    );
    assert_eq!(
        files("{{ printf \"%s\" (.Files.GetBytes \"files/a.txt\") }}").unwrap(),
        "a\n"
    );
    assert_eq!(files("{{ .Files.GetBytes \"missing\" }}").unwrap(), "[]");
    // Sprig's `b64enc` takes a string: Go refuses a `[]byte`.
    let err = files("{{ .Files.GetBytes \"files/a.txt\" | b64enc }}").unwrap_err();
    assert!(err.contains("expected string; got []uint8"), "{err}");
    let err = files("{{ .Files.GetBytes \"files/blob.bin\" | toString }}").unwrap_err();
    assert!(err.contains("not supported by gitops-lint"), "{err}");
    let err = files("{{ .Files.Get \"files/blob.bin\" }}").unwrap_err();
    assert!(err.contains("not supported by gitops-lint"), "{err}");
}

#[test]
fn files_is_a_map_of_byte_slices() {
    // grafana: `$files := .Files` then `$files.Get`.
    assert_eq!(
        files("{{ $f := .Files }}{{ $f.Get \"files/a.txt\" }}").unwrap(),
        "a\n"
    );
    assert_eq!(
        files("{{ len .Files }} {{ kindOf .Files }}").unwrap(),
        "5 map"
    );
    assert_eq!(
        files("{{ index .Files \"files/a.txt\" }}").unwrap(),
        "[97 10]"
    );
    assert_eq!(
        files("{{ .Files.Glob \"files/a.txt\" | toJson }}").unwrap(),
        r#"{"files/a.txt":"YQo="}"#
    );
    assert_eq!(
        files("{{ if .Files.Glob \"none\" }}y{{ else }}n{{ end }}").unwrap(),
        "n"
    );
    assert_eq!(
        files("{{ .Files.Lines \"config/app.ini\" | len }}").unwrap(),
        "2"
    );
}

fn metadata() -> Metadata {
    Metadata {
        name: "c".into(),
        version: "1.0.0".into(),
        api_version: "v2".into(),
        keywords: vec!["demo".into()],
        maintainers: vec![serde_json::json!({"name": "Team", "email": "t@x.io"})],
        annotations: Some([("k".to_string(), "v".to_string())].into()),
        ..Metadata::default()
    }
}

#[test]
fn chart_is_a_go_struct() {
    let md = metadata();
    let chart = |src: &str| run(src, &[], &md);
    // sem-release-chart: JSON names, field order, `omitempty`.
    assert_eq!(
        chart("{{ .Chart.Maintainers | toJson }}").unwrap(),
        r#"[{"name":"Team","email":"t@x.io"}]"#
    );
    assert_eq!(
        chart("{{ .Chart | toJson }}").unwrap(),
        r#"{"name":"c","version":"1.0.0","keywords":["demo"],"maintainers":[{"name":"Team","email":"t@x.io"}],"apiVersion":"v2","annotations":{"k":"v"},"IsRoot":true}"#
    );
    assert_eq!(chart("{{ .Chart.Sources | toJson }}").unwrap(), "null");
    assert_eq!(
        chart("{{ index .Chart.Maintainers 0 }} {{ index .Chart.Maintainers 0 | toString }}")
            .unwrap(),
        "{Team t@x.io } &{Team t@x.io }"
    );
    assert_eq!(chart("{{ len .Chart.Dependencies }}").unwrap(), "0");
    // A list of pointers prints addresses.
    assert!(chart("{{ .Chart.Maintainers }}")
        .unwrap_err()
        .contains("volatile"));
    assert!(chart("{{ .Chart }}").unwrap_err().contains("volatile"));
    let plain = Metadata {
        maintainers: Vec::new(),
        ..metadata()
    };
    assert_eq!(
        run("{{ .Chart }}", &[], &plain).unwrap(),
        "{{c  [] 1.0.0  [demo] []  v2    false map[k:v]  [] } true}"
    );
    // `annotations: {}` is an empty map, not nil (helm v3.17.1: `{}`,
    // and `omitempty` leaves it out of `.Chart`).
    let empty = Metadata {
        annotations: Some(BTreeMap::new()),
        ..plain
    };
    assert_eq!(
        run(
            "{{ .Chart.Annotations | toJson }} {{ .Chart | toJson }}",
            &[],
            &empty
        )
        .unwrap(),
        r#"{} {"name":"c","version":"1.0.0","keywords":["demo"],"apiVersion":"v2","IsRoot":true}"#
    );
}

#[test]
fn dependencies_are_pointers_to_structs() {
    let md = Metadata {
        dependencies: Some(vec![Dependency {
            name: "dep".into(),
            version: "1.x".into(),
            repository: "file://dep".into(),
            enabled: true,
            ..Dependency::default()
        }]),
        ..metadata()
    };
    let chart = |src: &str| run(src, &[], &md);
    assert_eq!(chart("{{ len .Chart.Dependencies }}").unwrap(), "1");
    assert_eq!(
        chart("{{ (index .Chart.Dependencies 0).Name }}").unwrap(),
        "dep"
    );
    assert_eq!(
        chart("{{ .Chart.Dependencies | toJson }}").unwrap(),
        r#"[{"name":"dep","version":"1.x","repository":"file://dep","enabled":true}]"#
    );
    assert_eq!(
        chart("{{ index .Chart.Dependencies 0 }}").unwrap(),
        "{dep 1.x file://dep  [] true [] }"
    );
}
