//! go-yaml v2's reading: its errors, worded and placed as helm v3.17.1
//! prints them, and the streams it reads that YAML 1.2 refuses.

use serde_json::json;

use super::super::{load_all_as, load_first_sigs, Dialect, Limits};

fn sigs_err(text: &str) -> super::super::YamlError {
    match load_all_as(text, Dialect::SigsYaml, &Limits::default()) {
        Ok(docs) => panic!("{text:?} should fail, loaded {docs:?}"),
        Err(e) => e,
    }
}

fn sigs(text: &str) -> Vec<serde_json::Value> {
    load_all_as(text, Dialect::SigsYaml, &Limits::default())
        .unwrap_or_else(|e| panic!("{text:?} should load: {e}"))
        .into_iter()
        .map(|d| d.into_value())
        .collect()
}

/// Each input as a chart's template output (trimmed, as helm's
/// `SplitManifests` leaves it) and the error helm v3.17.1 printed for it
/// after `YAML parse error on c/templates/x.yaml: error converting YAML to
/// JSON: `, checked with the binary.
const HELM_ERRORS: &[(&str, &str)] = &[
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: errors\ndata:\n  mode: \"indent\"\n bad-indent: x", "yaml: line 6: did not find expected key"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: errors\ndata:\n  mode: \"yaml\"\n  broken: [unclosed", "yaml: line 7: did not find expected ',' or ']'"),
    ("a: b\n  c: d", "yaml: line 2: mapping values are not allowed in this context"),
    ("a: b: c", "yaml: mapping values are not allowed in this context"),
    ("a:\n  - b\n  c: d", "yaml: line 2: did not find expected '-' indicator"),
    ("a: [b, c\nd: e", "yaml: line 1: did not find expected ',' or ']'"),
    ("a: {b: c", "yaml: line 1: did not find expected ',' or '}'"),
    ("a: {b: c, d", "yaml: line 1: did not find expected ',' or '}'"),
    ("a: 'unterminated", "yaml: found unexpected end of stream"),
    ("a: \"unterminated", "yaml: found unexpected end of stream"),
    ("a: \"bad \\q escape\"", "yaml: found unknown escape character"),
    ("a: b\n- c", "yaml: line 1: did not find expected key"),
    ("- a\nb: c", "yaml: line 1: did not find expected '-' indicator"),
    ("a: @b", "yaml: found character that cannot start any token"),
    ("a: `b", "yaml: found character that cannot start any token"),
    ("a: |\n  x\n b: c", "yaml: line 2: did not find expected key"),
    ("a:\n\tb: c", "yaml: line 2: found character that cannot start any token"),
    ("a: b\n\tc: d", "yaml: line 2: found a tab character that violates indentation"),
    ("a:\n  b: c\n d: e", "yaml: line 2: did not find expected key"),
    ("a: *unknown", "yaml: unknown anchor 'unknown' referenced"),
    ("%YAML 1.1\n---\na: b", "yaml: line 1: did not find expected <document start>"),
    ("%YAML 1.2\n---\na: b", "yaml: found incompatible YAML document"),
    ("%FOO bar\n---\na: b", "yaml: found unknown directive name"),
    ("metadata:\n  name: x\n  labels:\n    a: b\n   c: d", "yaml: line 4: did not find expected key"),
    ("a: b\n]", "yaml: line 1: did not find expected key"),
    ("a: b\n}", "yaml: line 1: did not find expected key"),
    ("a: ]", "yaml: did not find expected node content"),
    ("a: ,b", "yaml: did not find expected node content"),
    ("a: !!", "yaml: did not find expected tag URI"),
    ("a: & b", "yaml: did not find expected alphabetic or numeric character"),
    ("a: |0\n  x", "yaml: found an indentation indicator equal to 0"),
    ("a: |x\n  x", "yaml: did not find expected comment or line break"),
    ("a: 'x'y", "yaml: did not find expected key"),
    ("a: \"x\" y", "yaml: did not find expected key"),
    ("a: \"x\"\n  y: z", "yaml: line 1: did not find expected key"),
    ("- a: b\n  - c", "yaml: line 1: did not find expected key"),
    ("a: >\n\tx", "yaml: line 2: found a tab character where an indentation space is expected"),
    ("key with spaces: v\nanother: w\n  deeper: x", "yaml: line 3: mapping values are not allowed in this context"),
    ("a: b\n\n\n  c: d", "yaml: line 4: mapping values are not allowed in this context"),
    ("a:\n  b:\n    c: d\n  e", "yaml: line 5: could not find expected ':'"),
    ("a: 1\nb", "yaml: line 3: could not find expected ':'"),
    ("a: 1\nb\nc: 2", "yaml: line 3: could not find expected ':'"),
    ("\"a\nb\": c", "yaml: line 2: mapping values are not allowed in this context"),
    ("a: \"\\x4\"", "yaml: did not find expected hexdecimal number"),
    ("a: \"\\uD800\"", "yaml: found invalid Unicode character escape code"),
    ("a:\n  - b\n - c", "yaml: line 2: did not find expected key"),
    ("- - a\n  - b\n - c", "yaml: line 2: did not find expected '-' indicator"),
    ("x: |\n  a\n\tb", "yaml: line 3: found a tab character where an indentation space is expected"),
    ("a: b\n   # comment\n  c: d", "yaml: line 2: did not find expected key"),
    ("a:\n  b: 1\n    c: 2", "yaml: line 3: mapping values are not allowed in this context"),
    ("a: b\nc\nd: e", "yaml: line 3: could not find expected ':'"),
    ("a:\n  b: c\n  d\ne: f", "yaml: line 4: could not find expected ':'"),
    ("a:\n  - b\n  -c: d\n  e", "yaml: line 2: did not find expected '-' indicator"),
    ("a:\n\t- b", "yaml: line 2: found character that cannot start any token"),
    ("a: b\n\tc", "yaml: line 2: found a tab character that violates indentation"),
    ("a: [b, c]]", "yaml: did not find expected key"),
    ("a: \"b\" c: d", "yaml: did not find expected key"),
    ("a: 'b'c", "yaml: did not find expected key"),
    ("name: x\nspec:\n  containers:\n  - name: a\n    image: b\n     ports: []", "yaml: line 6: mapping values are not allowed in this context"),
    ("a: |\n  x\n\ty", "yaml: line 3: found a tab character where an indentation space is expected"),
];

#[test]
fn errors_are_go_yaml_v2s_as_helm_prints_them() {
    for (text, want) in HELM_ERRORS {
        let e = sigs_err(text);
        assert_eq!(e.go_yaml.as_deref(), Some(*want), "{text:?}: {e}");
        assert_eq!(e.go_yaml_text(), *want);
        assert!(e.line >= 1 && e.column >= 1, "{text:?}: {e:?}");
    }
}

#[test]
fn an_error_go_yaml_words_otherwise_keeps_ours() {
    // helm: `yaml: invalid map key: []interface {}{"a", "b"}` (Go's %#v of
    // the key), which is not reproduced: no go-yaml text is claimed.
    let e = sigs_err("[a, b]: c");
    assert_eq!(e.go_yaml, None);
    assert_eq!(
        e.go_yaml_text(),
        "yaml: line 1: a mapping or sequence cannot be a mapping key"
    );
}

#[test]
fn kyaml_reads_a_flow_collection_left_of_its_key_as_go_yaml_v3_does() {
    // go-yaml v3 (Kustomize) kept go-yaml v2's scanner: a flow sequence
    // continued left of its key's indentation loads (checked against
    // `kubectl kustomize` in tests/it/yaml_kubectl.rs), its scalars resolved
    // as go-yaml v3 resolves them (`on` stays a string).
    let text = "k:\n  c: [ \"a\",\n  on ]\n";
    let kyaml: Vec<_> = load_all_as(text, Dialect::Kyaml, &Limits::default())
        .expect("loads")
        .into_iter()
        .map(|d| d.into_value())
        .collect();
    assert_eq!(kyaml, [json!({"k": {"c": ["a", "on"]}})]);
    assert_eq!(sigs(text), [json!({"k": {"c": ["a", true]}})]);
    // A repeated key stays an error in go-yaml v3's reading.
    let text = "k:\n  c: [ \"a\",\n  \"b\" ]\n  c: x\n";
    assert!(load_all_as(text, Dialect::Kyaml, &Limits::default()).is_err());
    // What go-yaml refuses too keeps our error, not go-yaml's wording.
    let e = load_all_as("k: [a,\n", Dialect::Kyaml, &Limits::default()).expect_err("refused");
    assert_eq!(e.go_yaml, None);
}

#[test]
fn go_yaml_v2_reads_what_yaml_1_2_refuses() {
    // minio's chart: a flow sequence continued at its key's indentation.
    let text = "\
spec:
  containers:
    - name: minio
      command: [ \"/bin/sh\",
      \"-ce\",
      \"cp /a /b &&
      /usr/bin/run server /export\" ]
      volumeMounts: []
";
    assert_eq!(
        sigs(text),
        [json!({"spec": {"containers": [{
            "name": "minio",
            "command": ["/bin/sh", "-ce", "cp /a /b && /usr/bin/run server /export"],
            "volumeMounts": [],
        }]}})]
    );
    // A double-quoted scalar continued in column 0 (`print` of a value
    // with line breaks); the value checked with helm's `fromYaml | toJson`.
    let text = "data:\n  multiline: \"first line\nsecond line\n\"\n  next: x\n";
    assert_eq!(
        sigs(text),
        [json!({"data": {"multiline": "first line second line ", "next": "x"}})]
    );
}

#[test]
fn only_the_first_document_of_a_piece_is_read() {
    // `yaml.Unmarshal` stops after the first document: text after an
    // implicit document end is not read (helm accepts this output, and
    // Argo CD reads `{apiVersion: v1}` of it).
    assert_eq!(
        sigs("  apiVersion: v1\nkind: ConfigMap\n"),
        [json!({"apiVersion": "v1"})]
    );
    // Each `---` piece is read on its own.
    assert_eq!(
        sigs("a: [1,\n2]\n---\nb: 2\n"),
        [json!({"a": [1, 2]}), json!({"b": 2})]
    );
    // `fromYaml` and values files read the first document only.
    assert_eq!(
        load_first_sigs("a: 1\n---\nb: [", &Limits::default()).expect("first document"),
        json!({"a": 1})
    );
}

#[test]
fn a_control_character_is_the_readers_error() {
    // go-yaml's reader refuses it before the scanner sees it; no line.
    let e = sigs_err("a: \"x\u{1}\"\nb: [\n");
    assert_eq!(
        e.go_yaml.as_deref(),
        Some("yaml: control characters are not allowed")
    );
    assert_eq!((e.line, e.column), (1, 6));
}

#[test]
fn anchors_follow_go_yaml_v2() {
    // `.` cannot be in a go-yaml v2 anchor name; helm: line 2 (the
    // anchor's problem line).
    let e = sigs_err("a: 1\nb: &x.y 2\n");
    assert_eq!(
        e.go_yaml.as_deref(),
        Some("yaml: line 2: did not find expected alphabetic or numeric character")
    );
    assert_eq!(sigs("a: &x 1\nb: *x\n"), [json!({"a": 1, "b": 1})]);
}

#[test]
fn hostile_nesting_and_long_input_stay_bounded() {
    let deep = "[".repeat(20_000);
    let e = sigs_err(&deep);
    assert!(e.go_yaml.is_some() || e.message.contains("nesting"), "{e}");
    let wide = format!("a: [{}\n", "x, ".repeat(200_000));
    let e = sigs_err(&wide);
    assert!(e.go_yaml.is_some(), "{e}");
}

#[test]
fn what_yaml_1_2_reads_but_go_yaml_v2_refuses_is_refused() {
    // Each checked with helm v3.17.1 (`fromYamlArray`, a template).
    // go-yaml v2 ends a plain scalar in a flow collection at `?`.
    let e = sigs_err("[get?, a]");
    assert_eq!(
        e.go_yaml.as_deref(),
        Some("yaml: did not find expected ',' or ']'")
    );
    let e = sigs_err("a: [get,: list]");
    assert_eq!(
        e.go_yaml.as_deref(),
        Some("yaml: did not find expected node content")
    );
    // An alias inside its own anchor's node.
    let e = sigs_err("anchor: &base\n  k: v\n  use: *base\n");
    assert_eq!(
        e.go_yaml.as_deref(),
        Some("yaml: anchor 'base' value contains itself")
    );
    // A null key: sigs.k8s.io/yaml's "unsupported map key of type:
    // %!s(<nil>)…" is not reproduced, but the stream is refused.
    for text in ["~: x\n", "a: 1\n? \n", "a: {b: 1, &x : 2}\n"] {
        let e = sigs_err(text);
        assert_eq!(e.go_yaml, None, "{text:?}");
        assert!(e.message.contains("null mapping key"), "{text:?}: {e}");
    }
    // A collection as a key is an error of decoding: a syntax error
    // further on in the document comes first, as in go-yaml.
    let e = sigs_err("verbs: {[get, list]\n- x: [\"/m\"]\n");
    assert_eq!(
        e.go_yaml.as_deref(),
        Some("yaml: line 1: did not find expected ',' or '}'")
    );
}
