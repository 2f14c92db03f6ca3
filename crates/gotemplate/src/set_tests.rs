//! Template-set tests. Every expected string is helm v3.17.1's output: from
//! the `sem-*` cases of the Helm corpus (`expected.yaml`,
//! `expected-error.txt`, rendered by `helm template`), or from `helm
//! template` of a small chart written for the test, as each test says.
//! Helm's own post-processing (`<no value>` removed, `cleanupExecError`) is
//! the renderer's; these tests see the engine's raw Go text.

use std::collections::BTreeMap;

use super::{Budget, FuncSet, MissingKey, TemplateSet, V};

pub(super) fn yaml(text: &str) -> V {
    V::from_json(&goyaml::parse_first_doc(text).expect("yaml"))
}

pub(super) fn map(pairs: &[(&str, V)]) -> V {
    V::map(
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.clone()))
            .collect::<BTreeMap<_, _>>(),
    )
}

pub(super) fn s(x: &str) -> V {
    V::Str(x.to_string())
}

/// Dot as Helm builds it for one template (`recAllTpls`, `render`).
pub(super) fn helm_dot(chart: &str, values: &str, template: &str) -> V {
    let base = template.rsplit_once('/').map_or("", |(d, _)| d);
    map(&[
        ("Values", yaml(values)),
        ("Chart", map(&[("Name", s(chart))])),
        (
            "Release",
            map(&[("Name", s("rel")), ("Namespace", s("ns"))]),
        ),
        (
            "Template",
            map(&[("Name", s(template)), ("BasePath", s(base))]),
        ),
    ])
}

pub(super) fn helm_set(sources: &[(&str, &str)]) -> TemplateSet {
    let mut set = TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero);
    for (name, src) in sources {
        set.add(name, src).expect("parses");
    }
    set
}

// sem-include: `chart/templates/_a.tpl`, `_b.tpl`, `cm.yaml` and the
// subchart's `_defs.tpl`, `cm.yaml`.
const INC_A: &str = r#"{{- define "shared.name" -}}from-parent-a{{- end -}}
{{- define "twice" -}}defined-in-_a.tpl{{- end -}}
{{- define "labels" -}}
app: {{ .Chart.Name }}
{{ include "labels.extra" . }}
{{- end -}}
{{- define "labels.extra" -}}
tier: {{ .Values.who }}
{{- end -}}
{{- define "parent.only" -}}parent-only:{{ .Values.who }}{{- end -}}
{{- define "dict.arg" -}}{{ .a }}+{{ .b }}{{- end -}}
{{- define "with.ws" }}
  padded
{{ end -}}
"#;
const INC_B: &str = "{{- define \"twice\" -}}defined-in-_b.tpl{{- end -}}\n";
const INC_CM: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: parent-cm
  labels:
    {{- include "labels" . | nindent 4 }}
data:
  shared: {{ include "shared.name" . | quote }}
  twice: {{ include "twice" . | quote }}
  childOnly: {{ include "child.only" . | quote }}
  dictArg: {{ include "dict.arg" (dict "a" 1 "b" "two") | quote }}
  withWs: {{ include "with.ws" . | quote }}
  templateAction: "{{ template "twice" . }}"
  indented: |
{{ include "labels" . | indent 4 }}
  upperPipe: {{ include "labels.extra" . | upper | quote }}
  {{- if .Values.missing }}
  missing: {{ include "no.such.template" . }}
  {{- end }}
"#;
const INC_CHILD_DEFS: &str = r#"{{- define "shared.name" -}}from-child-define{{- end -}}
{{- define "child.only" -}}child-only:{{ .Values.who }}{{- end -}}
"#;
const INC_CHILD_CM: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: child-cm
data:
  shared: {{ include "shared.name" . | quote }}
  childOnly: {{ include "child.only" . | quote }}
  parentDefine: {{ include "parent.only" . | quote }}
"#;

/// The sources in Helm's parse order (`sortTemplates`: deeper paths
/// first, then names in reverse order), so `_a.tpl` is parsed after
/// `_b.tpl` and the parent's definitions after the subchart's.
fn include_set() -> TemplateSet {
    helm_set(&[
        ("sem-include/charts/child/templates/cm.yaml", INC_CHILD_CM),
        (
            "sem-include/charts/child/templates/_defs.tpl",
            INC_CHILD_DEFS,
        ),
        ("sem-include/templates/cm.yaml", INC_CM),
        ("sem-include/templates/_b.tpl", INC_B),
        ("sem-include/templates/_a.tpl", INC_A),
    ])
}

#[test]
fn include_template_and_define_resolve_across_files_as_helm() {
    let set = include_set();
    let parent = "sem-include/templates/cm.yaml";
    let out = set
        .execute(
            parent,
            &helm_dot("sem-include", "who: parent\nmissing: false", parent),
        )
        .expect("renders");
    // sem-include__default/expected.yaml (the parent document).
    assert_eq!(
        out,
        r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: parent-cm
  labels:
    app: sem-include
    tier: parent
data:
  shared: "from-parent-a"
  twice: "defined-in-_a.tpl"
  childOnly: "child-only:parent"
  dictArg: "1+two"
  withWs: "\n  padded\n"
  templateAction: "defined-in-_a.tpl"
  indented: |
    app: sem-include
    tier: parent
  upperPipe: "TIER: PARENT"
"#
    );
    let child = "sem-include/charts/child/templates/cm.yaml";
    let out = set
        .execute(child, &helm_dot("child", "who: child", child))
        .expect("renders");
    assert_eq!(
        out,
        r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: child-cm
data:
  shared: "from-parent-a"
  childOnly: "child-only:child"
  parentDefine: "parent-only:child"
"#
    );
}

#[test]
fn a_missing_include_fails_with_go_location_and_the_set_name() {
    let set = include_set();
    let parent = "sem-include/templates/cm.yaml";
    let err = set
        .execute(
            parent,
            &helm_dot("sem-include", "who: parent\nmissing: true", parent),
        )
        .expect_err("fails");
    // sem-include__missing-template-error/expected-error.txt, before Helm's
    // `Error: ` prefix.
    assert_eq!(
        err,
        r#"template: sem-include/templates/cm.yaml:18:14: executing "sem-include/templates/cm.yaml" at <include "no.such.template" .>: error calling include: template: no template "no.such.template" associated with template "gotpl""#
    );
    let err = set.execute("nope", &V::Nil).expect_err("no such template");
    assert_eq!(
        err,
        r#"template: no template "nope" associated with template "gotpl""#
    );
}

#[test]
fn tpl_renders_strings_in_the_set_as_helm() {
    // sem-tpl__default: chart/values.yaml and templates/configmap.yaml
    // (the lines this engine covers), expected.yaml.
    let values = r#"name: world
greeting: "Hello {{ .Release.Name }}"
nested:
  tmpl: "{{ .Values.name | upper }}-{{ .Chart.Name }}"
mapTmpl:
  key: "{{ printf \"%s-%d\" .Values.name 42 }}"
includeInTpl: '{{ include "sem-tpl.label" . }}'
yamlBlock: |
  app: {{ .Values.name }}
  ns: {{ .Release.Namespace }}
  {{- if .Values.flag }}
  flag: on
  {{- end }}
flag: true
scoped: "{{ .foo }}/{{ .Template.Name }}"
defineInTpl: '{{ define "sem-tpl.fromValues" }}defined-in-values{{ end }}{{ include "sem-tpl.fromValues" . }}'
number: 42
"#;
    let cm = r#"  name: {{ tpl "{{ .Release.Name }}-tpl" . }}
  greeting: {{ tpl .Values.greeting . | quote }}
  nested: {{ tpl .Values.nested.tmpl . | quote }}
  map: {{ tpl (toYaml .Values.mapTmpl) . | quote }}
  include: {{ tpl .Values.includeInTpl . | quote }}
  block: |
    {{- tpl .Values.yamlBlock . | nindent 4 }}
  scoped: {{ tpl .Values.scoped (dict "foo" "bar" "Template" .Template) | quote }}
  templateName: {{ tpl "{{ .Template.Name }} {{ .Template.BasePath }}" . | quote }}
  nestedTpl: {{ tpl "{{ tpl .Values.greeting . }}" . | quote }}
  defineInTpl: {{ tpl .Values.defineInTpl . | quote }}
  number: {{ tpl (toString .Values.number) . | quote }}
  plainString: {{ tpl "no actions here" . | quote }}
  emptyString: {{ tpl "" . | quote }}
  {{- if .Values.tplJson }}
  mapJson: {{ tpl (toJson .Values.mapTmpl) . | quote }}
  {{- end }}
"#;
    let helpers =
        r#"{{- define "sem-tpl.label" -}}app.kubernetes.io/name: {{ .Chart.Name }}{{- end -}}"#;
    let name = "sem-tpl/templates/configmap.yaml";
    let set = helm_set(&[(name, cm), ("sem-tpl/templates/_helpers.tpl", helpers)]);
    let out = set
        .execute(name, &helm_dot("sem-tpl", values, name))
        .expect("renders");
    assert_eq!(
        out,
        r#"  name: rel-tpl
  greeting: "Hello rel"
  nested: "WORLD-sem-tpl"
  map: "key: 'world-42'"
  include: "app.kubernetes.io/name: sem-tpl"
  block: |
    app: world
    ns: ns
    flag: on
    
  scoped: "bar/sem-tpl/templates/configmap.yaml"
  templateName: "sem-tpl/templates/configmap.yaml sem-tpl/templates"
  nestedTpl: "Hello rel"
  defineInTpl: "defined-in-values"
  number: "42"
  plainString: "no actions here"
  emptyString: ""
"#
    );
    // A define made inside tpl is not seen outside it.
    assert!(!set.has("sem-tpl.fromValues"));
    // sem-tpl__json-quoted-error: the parse error names the inline
    // template after the set (`gotpl`) and quotes the text as Go's %q; the
    // stray `\` before the unterminated string is the error (helm
    // v3.17.1's expected-error.txt of that case).
    let err = set
        .execute(
            name,
            &helm_dot("sem-tpl", &format!("{values}tplJson: true\n"), name),
        )
        .expect_err("fails");
    assert_eq!(
        err,
        r#"template: sem-tpl/templates/configmap.yaml:16:14: executing "sem-tpl/templates/configmap.yaml" at <tpl (toJson .Values.mapTmpl) .>: error calling tpl: cannot parse template "{\"key\":\"{{ printf \\\"%s-%d\\\" .Values.name 42 }}\"}": template: gotpl:1: unexpected "\\" in operand"#
    );
}

#[test]
fn parse_errors_come_in_the_order_gos_lexer_meets_them() {
    // Each source as c/templates/cm.yaml of a chart; helm v3.17.1 printed
    // `parse error at (c/templates/cm.yaml:LINE): MESSAGE`.
    for (src, want) in [
        ("{{ \"abc", "1: unterminated quoted string"),
        ("{{ foo }}\n{{ \"abc", "1: function \"foo\" not defined"),
        ("{{ .a }}\n{{ end }}\n{{ \"x", "2: unexpected {{end}}"),
        ("{{ nosuchfn \"abc", "1: function \"nosuchfn\" not defined"),
        ("{{ printf \"%s\" \n\\ \"x", "2: unexpected \"\\\\\" in operand"),
        (
            "l1\n{{ printf\n\n \"x",
            "4: unterminated quoted string in action started at c/templates/cm.yaml:2",
        ),
        (
            "{{- \n printf \"a\n",
            "2: unterminated quoted string in action started at c/templates/cm.yaml:1",
        ),
        (
            "{{ .a\n\n",
            "3: unclosed action started at c/templates/cm.yaml:1",
        ),
        ("x\n{{ printf `abc", "2: unterminated raw quoted string"),
        (
            "{{ printf\n \u{2603} }}",
            "2: unrecognized character in action: U+2603 '\u{2603}' in action started at c/templates/cm.yaml:1",
        ),
    ] {
        let mut set = TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero);
        let err = set.add("c/templates/cm.yaml", src).expect_err(src);
        assert_eq!(err, format!("template: c/templates/cm.yaml:{want}"), "{src:?}");
    }
}

#[test]
fn fail_and_required_fail_as_helm_wraps_them() {
    // Helm's `fail` and `required` wrap the message for cleanupExecError
    // (`warnWrap`); helm template of this source printed `execution error
    // at (c/templates/d.yaml:1:6): image.repository is required` and `...
    // (c/templates/d.yaml:2:34): refused`: the location is this error's
    // first one and the message sits between the delimiters.
    let src = "a: {{ required \"image.repository is required\" .Values.image.repository }}\n{{ if eq .Values.mode \"fail\" }}{{ fail \"refused\" }}{{ end }}";
    let set = helm_set(&[("c/templates/d.yaml", src)]);
    let err = set
        .execute(
            "c/templates/d.yaml",
            &helm_dot("c", "image: {}", "c/templates/d.yaml"),
        )
        .expect_err("required");
    assert_eq!(
        err,
        r#"template: c/templates/d.yaml:1:6: executing "c/templates/d.yaml" at <required "image.repository is required" .Values.image.repository>: error calling required: HELM_ERR_STARTimage.repository is requiredHELM_ERR_END"#
    );
    let err = set
        .execute(
            "c/templates/d.yaml",
            &helm_dot(
                "c",
                "image: {repository: x}\nmode: fail",
                "c/templates/d.yaml",
            ),
        )
        .expect_err("fail");
    assert_eq!(
        err,
        r#"template: c/templates/d.yaml:2:34: executing "c/templates/d.yaml" at <fail "refused">: error calling fail: HELM_ERR_STARTrefusedHELM_ERR_END"#
    );
    // sem-required-fail__required-accepts-zero-and-false: only nil and ""
    // fail (helm template printed `0 false 0`).
    let set = helm_set(&[(
        "t",
        "{{ required \"m\" 0 }} {{ required \"m\" false }} {{ required \"m\" .Values.z }}",
    )]);
    assert_eq!(
        set.execute("t", &helm_dot("c", "z: 0", "t"))
            .expect("renders"),
        "0 false 0"
    );
}

#[test]
fn execution_errors_name_the_node_as_go_does() {
    // sem-release-chart__nil-pointer-error and
    // sem-range-control__range-over-int-error: line and column of the
    // failing node (a field chain is placed at its second segment), the
    // template executing, the node's text. Each source here is a chart's
    // template run through helm template, which printed these errors.
    // Parenthesized, the missing value is Go's invalid value, whose fields
    // are zero (helm renders grafana's `(.Values.resources.limits).memory`
    // with `resources: {}`).
    let set = helm_set(&[(
        "c/templates/cm.yaml",
        "{{ if (.Values.resources.limits).memory }}limited{{ else }}free{{ end }}",
    )]);
    let dot = helm_dot("c", "resources: {}", "c/templates/cm.yaml");
    assert_eq!(
        set.execute("c/templates/cm.yaml", &dot).as_deref(),
        Ok("free")
    );
    let src = "a: 1\n  missingNested: \"{{ .Values.missing.deeper }}\"\n";
    let set = helm_set(&[("c/templates/cm.yaml", src)]);
    let err = set
        .execute(
            "c/templates/cm.yaml",
            &helm_dot("c", "{}", "c/templates/cm.yaml"),
        )
        .expect_err("nil pointer");
    assert_eq!(
        err,
        r#"template: c/templates/cm.yaml:2:28: executing "c/templates/cm.yaml" at <.Values.missing.deeper>: nil pointer evaluating interface {}.deeper"#
    );
    let set = helm_set(&[(
        "c/templates/cm.yaml",
        "x\n  rangeInt: \"{{ range 3 }}{{ . }};{{ end }}\"",
    )]);
    let err = set
        .execute(
            "c/templates/cm.yaml",
            &helm_dot("c", "{}", "c/templates/cm.yaml"),
        )
        .expect_err("range over int");
    assert_eq!(
        err,
        r#"template: c/templates/cm.yaml:2:22: executing "c/templates/cm.yaml" at <3>: range can't iterate over 3"#
    );
    // An error inside an included template is located there, then wrapped.
    let set = helm_set(&[
        ("c/templates/cm.yaml", "v: {{ include \"h\" . }}"),
        (
            "c/templates/_h.tpl",
            "{{ define \"h\" }}\n{{ .Values.a.b }}{{ end }}",
        ),
    ]);
    let err = set
        .execute(
            "c/templates/cm.yaml",
            &helm_dot("c", "{}", "c/templates/cm.yaml"),
        )
        .expect_err("nested");
    assert_eq!(
        err,
        r#"template: c/templates/cm.yaml:1:6: executing "c/templates/cm.yaml" at <include "h" .>: error calling include: template: c/templates/_h.tpl:2:10: executing "h" at <.Values.a.b>: nil pointer evaluating interface {}.b"#
    );
}

#[test]
fn unknown_functions_are_parse_errors_on_their_line() {
    // sem-undefined-function: Helm removes `env`; sem-parse-error: an
    // action left open runs into the next line, where `b` is a function.
    let mut set = TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero);
    let err = set
        .add(
            "c/templates/cm.yaml",
            "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\n  home: {{ env \"HOME\" | quote }}\n",
        )
        .expect_err("env");
    assert_eq!(
        err,
        r#"template: c/templates/cm.yaml:6: function "env" not defined"#
    );
    let err = set
        .add(
            "sem-parse-error/templates/broken.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\ndata:\n  a: {{ .Values.a\n  b: {{ end }}\n",
        )
        .expect_err("broken");
    assert_eq!(
        err,
        r#"template: sem-parse-error/templates/broken.yaml:7: function "b" not defined"#
    );
    // Argo CD's additions are not Helm's.
    assert!(set.add("t", "{{ normalize \"x\" }}").is_err());
    // Functions Helm has and this engine does not evaluate parse, and say
    // so where they run: not in a branch the values leave out.
    set.add("t", "{{ if .x }}{{ fromToml . }}{{ end }}")
        .expect("parses");
    assert_eq!(
        set.execute("t", &V::map(BTreeMap::new())).as_deref(),
        Ok("")
    );
    let err = set
        .execute("t", &V::map([("x".to_string(), V::Bool(true))].into()))
        .expect_err("fromToml runs");
    assert!(
        err.ends_with("error calling fromToml: template function `fromToml` is not supported by gitops-lint, so this template cannot be evaluated offline"),
        "{err}"
    );
}

#[test]
fn later_definitions_replace_earlier_ones_but_empty_ones_do_not() {
    // Go's `associate`: a later non-empty definition wins; an empty one
    // never replaces (helm template of a chart with these two files,
    // parsed b.tpl then a.tpl, prints `from-a|keep`).
    let set = helm_set(&[
        (
            "c/templates/t.yaml",
            "{{ template \"x\" }}|{{ template \"y\" }}",
        ),
        (
            "c/templates/b.tpl",
            "{{ define \"x\" }}from-b{{ end }}{{ define \"y\" }}keep{{ end }}",
        ),
        (
            "c/templates/a.tpl",
            "{{ define \"x\" }}from-a{{ end }}{{ define \"y\" }}  {{ end }}",
        ),
    ]);
    assert_eq!(
        set.execute("c/templates/t.yaml", &V::Nil).expect("renders"),
        "from-a|keep"
    );
    // `block` defines and executes in place (helm: `[1]`).
    let set = helm_set(&[("t", "[{{ block \"b\" . }}{{ .x }}{{ end }}]")]);
    assert_eq!(
        set.execute("t", &map(&[("x", s("1"))])).expect("renders"),
        "[1]"
    );
    assert!(set.has("b"));
    // Within one source, two non-empty definitions of a name are an error
    // (helm: `parse error at (c/templates/t.yaml:1): multiple definition of
    // template "x"`).
    let mut set = TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero);
    assert_eq!(
        set.add(
            "t",
            "{{ define \"x\" }}1{{ end }}{{ define \"x\" }}2{{ end }}"
        ),
        Err(r#"template: t:1: template: multiple definition of template "x""#.to_string())
    );
}

#[test]
fn missing_values_print_no_value_for_helm_to_remove() {
    // helm template of `a: "{{ .Values.nope }}|{{ $x := dict "a" nil }}{{ $x.a }}|{{ index $x "a" }}"`
    // prints `a: "||"`: Go printed `<no value>` three times and Helm
    // removed it (`render`). Numbers from values files are float64:
    // `{{ .Values.f }}` of `f: 1000000` prints `1e+06`.
    let set = helm_set(&[(
        "t",
        "{{ .Values.nope }}|{{ $x := dict \"a\" nil }}{{ $x.a }}|{{ index $x \"a\" }}|{{ .Values.f }}|{{ .Values.g }}|{{ printf \"%v\" nil }}",
    )]);
    assert_eq!(
        set.execute("t", &helm_dot("c", "f: 1000000\ng: 1.5", "t"))
            .expect("renders"),
        "<no value>|<no value>|<no value>|1e+06|1.5|<nil>"
    );
}

#[test]
fn recursion_through_include_is_bounded() {
    // Helm fails a self-including template after 1000 levels
    // (`recursionMaxNums`); this engine stops sooner, at its nesting bound.
    let set = helm_set(&[(
        "t",
        "{{ define \"r\" }}{{ include \"r\" . }}{{ end }}{{ include \"r\" . }}",
    )]);
    let err = set.execute("t", &V::Nil).expect_err("bounded");
    assert!(err.contains("nest more than"), "{err}");
    let set = helm_set(&[(
        "t",
        "{{ define \"r\" }}{{ template \"r\" . }}{{ end }}{{ template \"r\" . }}",
    )]);
    assert!(set.execute("t", &V::Nil).is_err());
    // Wide rather than deep: a budget bounds the work as a whole.
    let set = helm_set(&[(
        "t",
        "{{ define \"w\" }}{{ range until 1000 }}{{ end }}{{ end }}{{ range until 10000 }}{{ include \"w\" . }}{{ end }}",
    )]);
    let err = set.execute("t", &V::Nil).expect_err("budget");
    assert!(err.contains(crate::limits::BEYOND_LIMITS), "{err}");
}

#[test]
fn application_sets_still_reject_define() {
    assert!(super::parse("{{ define \"x\" }}{{ end }}").is_err());
    assert!(super::parse("{{ template \"x\" }}").is_err());
}

/// A stand-in for Helm's `Files` (a `map[string][]byte` with methods).
#[derive(Debug)]
struct Files(BTreeMap<String, String>);

impl super::HostObject for Files {
    fn type_name(&self) -> &'static str {
        "chart.Files"
    }
    fn field(&self, name: &str) -> Option<V> {
        match name {
            // Helm's `AsConfig`: base names to contents, as YAML.
            "AsConfig" => {
                let m: BTreeMap<String, V> = self
                    .0
                    .iter()
                    .map(|(k, v)| (super::path_base(k), s(v)))
                    .collect();
                Some(s(super::yaml_out::to_yaml(&V::map(m)).trim_end()))
            }
            _ => None,
        }
    }
    fn call(&self, name: &str, args: &[V]) -> Option<Result<V, String>> {
        let arg = match args {
            [V::Str(a)] => a.clone(),
            _ => return Some(Err("wrong arguments".into())),
        };
        match name {
            "Get" => Some(Ok(s(self.0.get(&arg).map_or("", String::as_str)))),
            "Glob" => {
                let prefix = arg.trim_end_matches('*').to_string();
                let hit = self
                    .0
                    .iter()
                    .filter(|(k, _)| k.starts_with(&prefix))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                Some(Ok(V::Host(super::Host(std::sync::Arc::new(Files(hit))))))
            }
            _ => None,
        }
    }
    fn value(&self) -> V {
        V::Map(self.0.iter().map(|(k, v)| (k.clone(), s(v))).collect())
    }
    fn is_map(&self) -> bool {
        true
    }
}

/// A stand-in for Helm's `Capabilities.APIVersions` (`VersionSet.Has`).
#[derive(Debug)]
struct ApiVersions(Vec<String>);

impl super::HostObject for ApiVersions {
    fn type_name(&self) -> &'static str {
        "chartutil.VersionSet"
    }
    fn field(&self, _: &str) -> Option<V> {
        None
    }
    fn call(&self, name: &str, args: &[V]) -> Option<Result<V, String>> {
        match (name, args) {
            ("Has", [V::Str(a)]) => Some(Ok(V::Bool(self.0.contains(a)))),
            ("Has", _) => Some(Err("wrong arguments".into())),
            _ => None,
        }
    }
    fn value(&self) -> V {
        V::List(self.0.iter().map(|x| s(x)).collect())
    }
}

#[test]
fn host_objects_have_fields_and_methods_as_go_values_do() {
    // helm template --kube-version 1.31 of this template over files/a.txt
    // (`hello`) and files/b.yaml (`x: 1`) printed exactly this.
    let src = r#"a: {{ .Files.Get "files/a.txt" | quote }}
b: {{ "files/a.txt" | .Files.Get | quote }}
c: {{ .Capabilities.APIVersions.Has "v1" }}|{{ .Capabilities.APIVersions.Has "nope/v9" }}
d: {{ .Capabilities.KubeVersion.Version }}|{{ .Capabilities.KubeVersion.Major }}
e: "{{ range $p, $_ := .Files.Glob "files/*" }}{{ $p }};{{ end }}"
f: {{ (.Files.Glob "files/*").AsConfig | quote }}
g: {{ .Files.Get "nope" | quote }}
"#;
    let files = Files(
        [
            ("files/a.txt".to_string(), "hello".to_string()),
            ("files/b.yaml".to_string(), "x: 1".to_string()),
        ]
        .into(),
    );
    let api = ApiVersions(vec!["v1".into(), "apps/v1".into()]);
    let host = |h: Box<dyn super::HostObject>| V::Host(super::Host(std::sync::Arc::from(h)));
    let dot = map(&[
        ("Files", host(Box::new(files))),
        (
            "Capabilities",
            map(&[
                ("APIVersions", host(Box::new(api))),
                (
                    "KubeVersion",
                    map(&[("Version", s("v1.31.0")), ("Major", s("1"))]),
                ),
            ]),
        ),
    ]);
    let set = helm_set(&[("c/templates/cm.yaml", src)]);
    assert_eq!(
        set.execute("c/templates/cm.yaml", &dot).expect("renders"),
        r#"a: "hello"
b: "hello"
c: true|false
d: v1.31.0|1
e: "files/a.txt;files/b.yaml;"
f: "a.txt: hello\nb.yaml: 'x: 1'"
g: ""
"#
    );
    // helm: `template: c/templates/cm.yaml:1:12: executing
    // "c/templates/cm.yaml" at <.Files.Nope>: Nope is not a method but has
    // arguments`.
    let set = helm_set(&[("c/templates/cm.yaml", "a: {{ .Files.Nope \"x\" }}\n")]);
    assert_eq!(
        set.execute("c/templates/cm.yaml", &dot)
            .expect_err("no method"),
        r#"template: c/templates/cm.yaml:1:12: executing "c/templates/cm.yaml" at <.Files.Nope>: Nope is not a method but has arguments"#
    );
}

#[test]
fn helm_sprig_functions_beyond_the_application_set_render_as_helm() {
    // helm template of this template printed exactly these lines.
    let src = r#"a: "{{ semverCompare ">=1.21-0" "v1.31.0" }} {{ semverCompare ">=1.21" "v1.29.3-eks-1" }} {{ semverCompare ">=1.21-0" "v1.29.3-eks-1" }} {{ semverCompare "<1.19" "1.18.9" }} {{ semverCompare "^1.2.3" "1.9.0" }} {{ semverCompare "~1.2" "1.3.0" }} {{ semverCompare "1.2 - 1.4" "1.4.9" }} {{ semverCompare ">1.2.x" "1.3.0" }} {{ semverCompare "!=1.2.3" "1.2.3" }} {{ semverCompare "1.x || >=2.5" "2.6.0" }} {{ semverCompare ">= 1.19.0-0, < 1.22.0-0" "1.21.3" }} {{ semverCompare "=1.2" "1.2.7" }}"
b: "{{ (semver "v1.31.2-rc.1+meta").Major }} {{ (semver "1.31").Minor }} {{ (semver "v1.31.2-rc.1+meta").Prerelease }} {{ semver "v1.31.2-rc.1+meta" }} {{ (semver "1.2.3").Original }}"
c: "{{ addf 0.1 0.2 }} {{ mulf 1.1 3 }} {{ divf 1 3 }} {{ divf 10 4 }} {{ subf 1 0.9 }} {{ add1f 1.5 }} {{ mulf 1000000 1 }} {{ maxf 1 2.5 }} {{ minf 3 -1 }} {{ round 2.5 0 }} {{ round -2.5 0 }} {{ round 3.14159 2 }} {{ divf 2 3 }} {{ mulf "1.5" 2 }}"
d: "{{ sha1sum "abc" }} {{ adler32sum "hello" }} {{ b32enc "hello" }} {{ b32dec "NBSWY3DP" }} {{ sha512sum "a" | trunc 16 }}"
"#;
    let set = helm_set(&[("t", src)]);
    assert_eq!(
        set.execute("t", &V::Nil).expect("renders"),
        r#"a: "true false true true true false true true false true true true"
b: "1 31 rc.1 1.31.2-rc.1+meta 1.2.3"
c: "0.3 3.3 0.3333333333333333 2.5 0.1 2.5 1e+06 2.5 -1 3 -3 3.14 0.6666666666666667 3"
d: "a9993e364706816aba3e25717850c26c9cd0d89d 103547413 NBSWY3DP hello 1f40fc92da241694"
"#
    );
    // helm: `... at <semverCompare "bad constraint" "1.2.3">: error calling
    // semverCompare: improper constraint: bad constraint`, and `Invalid
    // Semantic Version` for a bad version.
    let set = helm_set(&[("t", "{{ semverCompare \"bad constraint\" \"1.2.3\" }}")]);
    assert!(set
        .execute("t", &V::Nil)
        .expect_err("bad constraint")
        .ends_with("error calling semverCompare: improper constraint: bad constraint"));
    let set = helm_set(&[("t", "{{ semverCompare \">1\" \"notaversion\" }}")]);
    assert!(set
        .execute("t", &V::Nil)
        .expect_err("bad version")
        .ends_with("error calling semverCompare: Invalid Semantic Version"));
    // The ApplicationSet set is unchanged: these stay unsupported there.
    assert!(super::parse("{{ semverCompare \">1\" \"1.2.3\" }}").is_err());
    // Clock and randomness: Sprig's shapes in Helm's set, from a stream
    // that repeats from one render to the next (see `generators`); never
    // in an ApplicationSet's.
    let set = helm_set(&[(
        "t",
        r#"{{ randAlphaNum 5 | len }} {{ typeOf now }} {{ now | date "2006" | len }} {{ (genCA "x" 3).Cert | hasPrefix "-----BEGIN CERTIFICATE-----" }} {{ uuidv4 | len }}"#,
    )]);
    assert_eq!(
        set.execute("t", &V::Nil).expect("renders"),
        "5 time.Time 4 true 36"
    );
    let with = |v| {
        let g = crate::Generator::new("t", v);
        let set = helm_set(&[("t", "{{ randAlphaNum 8 }}")]);
        let out = set.execute_generating("t", &V::Nil, &mut Budget::PER_EXECUTION.clone(), &g);
        (out.expect("renders"), g.used())
    };
    let first = with(crate::Variant::First);
    assert_eq!(first, with(crate::Variant::First));
    assert!(first.1);
    assert_ne!(first.0, with(crate::Variant::Second).0);
    for f in ["now", "randAlphaNum 5", "uuidv4", "genCA \"x\" 3"] {
        let err = super::parse(&format!("{{{{ {f} }}}}")).expect_err(f);
        assert!(err.contains("not supported by gitops-lint"), "{err}");
    }
}

/// The single-chart `sem-*` cases of the Helm corpus whose templates read
/// only `.Values`, `.Release` and `.Chart.Name`, rendered by this engine
/// alone and compared with helm's `expected.yaml` document by document
/// (each trimmed, as Helm's `SplitManifests` trims).
/// `sem-dict-list`'s `dictFromValuesIsShared` and `sem-range-control`'s
/// `nestedOrder` lines are left out too (see `ALIASING` and `YAML11`).
#[test]
#[ignore = "reads the Helm corpus: GITOPS_LINT_CORPUS=DIR cargo test --lib sem_cases -- --ignored"]
#[allow(clippy::items_after_statements)]
fn sem_cases_render_as_helm() {
    let corpus = std::env::var("GITOPS_LINT_CORPUS").expect("GITOPS_LINT_CORPUS is set");
    let cases = std::path::Path::new(&corpus).join("helm/cases");
    for case in [
        "sem-string-funcs__default",
        "sem-dict-list__default",
        "sem-range-control__default",
        "sem-whitespace__default",
    ] {
        let chart = cases.join(case).join("chart");
        let read = |p: &std::path::Path| std::fs::read_to_string(p).expect("readable");
        let meta = yaml(&read(&chart.join("Chart.yaml")));
        let V::Map(meta) = meta else {
            panic!("Chart.yaml")
        };
        let Some(V::Str(name)) = meta.get("Name").or_else(|| meta.get("name")) else {
            panic!("chart name")
        };
        let values = read(&chart.join("values.yaml"));
        let mut files: Vec<String> = std::fs::read_dir(chart.join("templates"))
            .expect("templates")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        // sortTemplates: one directory here, so names in reverse order.
        files.sort();
        files.reverse();
        // Not the engine's: helm decodes values as YAML 1.1 (sigs.k8s.io/yaml),
        // where the key `y` of `sem-range-control`'s values is `true`; this
        // test reads values with the crate's YAML 1.2 reader.
        const YAML11: &str = "nestedOrder";
        let keep = |line: &&str| {
            let key = line.trim_start().split(':').next().unwrap_or("");
            key != YAML11
        };
        let mut set = TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero);
        for f in &files {
            let whole = read(&chart.join("templates").join(f));
            let src: String = whole
                .lines()
                .filter(keep)
                .map(|l| format!("{l}\n"))
                .collect();
            set.add(&format!("{name}/templates/{f}"), &src)
                .unwrap_or_else(|e| panic!("{case}: {e}"));
        }
        let expected = read(&cases.join(case).join("expected.yaml"));
        let mut want: BTreeMap<String, String> = BTreeMap::new();
        for doc in expected.split("---\n# Source: ").skip(1) {
            let (src, body) = doc.split_once('\n').unwrap_or((doc, ""));
            let body: Vec<&str> = body.lines().filter(keep).collect();
            let e = want.entry(src.to_string()).or_default();
            e.push_str(body.join("\n").trim());
        }
        for f in files.iter().filter(|f| !f.starts_with('_')) {
            let tname = format!("{name}/templates/{f}");
            let out = set
                .execute(&tname, &helm_dot(&name, &values, &tname))
                .unwrap_or_else(|e| panic!("{case}: {e}"))
                .replace("<no value>", "");
            let got: String = out
                .split("\n---")
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .collect();
            assert_eq!(
                got,
                want.get(&tname).cloned().unwrap_or_default(),
                "{case}: {tname}"
            );
        }
    }
}

#[test]
fn numbers_print_as_helm_prints_value_file_floats_and_set_integers() {
    // Value files decode to float64 (sigs.k8s.io/yaml), `--set i=5` to
    // int64. helm template --set i=5 of this template over
    // `f1: 1000000, f2: 1.0e+21, f3: 0.000001, f4: 3.0, f5: 12345678.9,
    // f6: 1.0e+100, f7: -0.5` printed exactly this: toYaml goes through
    // JSON, where whole floats below 1e21 print without an exponent, and
    // yaml.v2, which reprints the other floats with Go's %g.
    let src = "a: {{ toYaml .Values | quote }}\nb: {{ toJson .Values | quote }}\nc: \"{{ .Values.f1 }} {{ .Values.f2 }} {{ .Values.f3 }} {{ .Values.f4 }} {{ .Values.f5 }} {{ .Values.f6 }} {{ .Values.i }} {{ .Values.f7 }}\"\n";
    let V::Map(mut values) = yaml(
        "f1: 1000000\nf2: 1.0e+21\nf3: 0.000001\nf4: 3.0\nf5: 12345678.9\nf6: 1.0e+100\nf7: -0.5\n",
    ) else {
        panic!("values")
    };
    values.make_mut().insert("i".into(), V::Int(5));
    let set = helm_set(&[("t", src)]);
    let out = set
        .execute("t", &map(&[("Values", V::Map(values))]))
        .expect("renders");
    assert_eq!(
        out,
        r#"a: "f1: 1000000\nf2: 1e+21\nf3: 1e-06\nf4: 3\nf5: 1.23456789e+07\nf6: 1e+100\nf7: -0.5\ni: 5"
b: "{\"f1\":1000000,\"f2\":1e+21,\"f3\":0.000001,\"f4\":3,\"f5\":12345678.9,\"f6\":1e+100,\"f7\":-0.5,\"i\":5}"
c: "1e+06 1e+21 1e-06 3 1.23456789e+07 1e+100 5 -0.5"
"#
    );
}
