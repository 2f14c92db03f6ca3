//! The YAML loader against the real `kubectl kustomize` (Kustomize v5.5):
//! tricky scalars go in, and our reading of the input must equal our
//! reading of what kubectl prints, value for value. Kustomize reads
//! resources with go-yaml v3 (`Dialect::Kyaml`) and `kustomization.yaml`
//! with sigs.k8s.io/yaml (`Dialect::SigsYaml`), so both dialects have an
//! oracle here. Without the pinned kubectl on PATH, its recorded outputs
//! (`testdata/kubectl-recordings/`) answer instead.

use crate::kustomize_common;

use std::path::Path;

use goyaml::{load_all, load_all_as, Dialect, Limits};
use serde_json::{json, Value};

const RESOURCES: &str = r#"apiVersion: example.com/v1
kind: Probe
metadata:
  name: scalars
spec:
  octal: 0755
  mode: 0644
  octalO: 0o755
  underscore: 1_000
  on: on
  off: off
  yes: yes
  no: no
  y: y
  quotedNumber: "123"
  quotedOctal: '0755'
  sci: 1e3
  sciNeg: -1.0E+2
  float: 1.5
  dotFloat: .5
  floatDot: 1.
  negZero: -0
  negZeroFloat: -0.0
  eight: 08
  hex: 0x1F
  binary: 0b101
  plusOne: +1
  bigUnsigned: 12345678901234567890
  tooBigInt: 99999999999999999999
  bigFloat: 1.2345678901234567e18
  belowMin: -9223372036854775809
  overflow: 1e400
  small: 1e-7
  tilde: ~
  nullWord: null
  empty:
  trueWord: True
  falseWord: FALSE
  str: !!str 12
  int: !!int "42"
  floatTag: !!float 1
  custom: !Ref 3
  bang: ! 12
  date: 2001-12-14
  datetime: 2001-12-14t21:59:43.10-05:00
  spaced: 2001-12-14 21:59:43.10
  badDate: 2001-02-30
  bin: !!binary aGVsbG8=
  literal: |
    line 0755
  folded: >-
    a
    b
  base: &base {x: 1, y: 0755}
  merged:
    <<: *base
    y: 2
  list: [0755, on, "1", ~, *base]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx
      volumes:
      - name: config
        configMap:
          name: config
          defaultMode: 0644
"#;

fn kubectl_kustomize(dir: &Path) -> String {
    let (ok, stdout, stderr) = run_kubectl_kustomize(dir);
    assert!(ok, "kubectl kustomize failed: {stderr}");
    stdout
}

/// `kubectl kustomize`: success, stdout, stderr; live with the pinned
/// kubectl on PATH, else from its recording (see `kustomize_common`).
fn run_kubectl_kustomize(dir: &Path) -> (bool, String, String) {
    let run = kustomize_common::kubectl_kustomize(dir);
    (run.ok, run.stdout, run.stderr)
}

fn by_kind(text: &str) -> Vec<(String, Value)> {
    let mut docs: Vec<(String, Value)> = load_all(text)
        .expect("loads")
        .into_iter()
        .map(|d| {
            (
                d.value["kind"].as_str().unwrap_or_default().to_owned(),
                d.into_value(),
            )
        })
        .collect();
    docs.sort_by(|a, b| a.0.cmp(&b.0));
    docs
}

#[test]
fn loader_reads_scalars_as_kubectl_kustomize_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("kustomization.yaml"),
        "resources:\n- resources.yaml\n",
    )
    .expect("write");
    std::fs::write(dir.path().join("resources.yaml"), RESOURCES).expect("write");

    let printed = kubectl_kustomize(dir.path());
    let ours = by_kind(RESOURCES);
    let theirs = by_kind(&printed);
    assert_eq!(ours.len(), 2);
    assert_eq!(theirs.len(), 2);
    for ((kind, ours), (_, theirs)) in ours.iter().zip(&theirs) {
        // Field by field first, so a mismatch names its field.
        if let (Some(o), Some(t)) = (ours["spec"].as_object(), theirs["spec"].as_object()) {
            for (k, v) in o {
                assert_eq!(
                    Some(v),
                    t.get(k),
                    "{kind} spec.{k}: ours vs kubectl kustomize"
                );
            }
        }
        assert_eq!(ours, theirs, "{kind}: ours vs kubectl kustomize");
    }

    // The comparison is only meaningful if the tricky cases really are tricky.
    let probe = &ours[1].1["spec"];
    assert_eq!(probe["octal"], json!(493));
    assert_eq!(probe["mode"], json!(420));
    assert_eq!(probe["underscore"], json!(1000));
    assert_eq!(probe["on"], json!("on"));
    assert_eq!(probe["quotedNumber"], json!("123"));
    assert_eq!(probe["sci"], json!(1000));
    assert_eq!(probe["custom"], json!("3"));
    assert_eq!(probe["date"], json!("2001-12-14T00:00:00Z"));
    assert_eq!(probe["merged"], json!({"x": 1, "y": 2}));
    let deployment = &ours[0].1;
    assert_eq!(
        deployment["spec"]["template"]["spec"]["volumes"][0]["configMap"]["defaultMode"],
        json!(420)
    );
}

/// `namePrefix` is a string field of the kustomization, which Kustomize
/// reads with sigs.k8s.io/yaml: a scalar it reads as a string becomes the
/// prefix of the resource's name; one it reads as a bool or number fails to
/// unmarshal, and the error names the type. Our `SigsYaml` reading of the
/// same scalar must agree in every case.
#[test]
fn sigs_yaml_dialect_reads_kustomization_scalars_as_kubectl_does() {
    let scalars = [
        "on",
        "off",
        "yes",
        "No",
        "y",
        "n",
        "ON",
        "true",
        "False",
        "0755",
        "1_000",
        "1e3",
        "0x1F",
        "\"123\"",
        "'on'",
        "2001-12-14",
        "2001-12-14t21:59:43.10-05:00",
        "! 12",
        "!foo 12",
        "!!str 12",
        "hello",
        "~",
        "",
        "12abc",
        "1.5",
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    )
    .expect("write");
    let mut kinds_seen = Vec::new();
    for scalar in scalars {
        let kustomization = format!("resources:\n- cm.yaml\nnamePrefix: {scalar}\n");
        std::fs::write(dir.path().join("kustomization.yaml"), &kustomization).expect("write");
        let (ok, stdout, stderr) = run_kubectl_kustomize(dir.path());
        let ours = load_all_as(&kustomization, Dialect::SigsYaml, &Limits::default())
            .expect("loads")
            .remove(0)
            .value["namePrefix"]
            .clone();
        let theirs = if ok {
            let name = load_all(&stdout).expect("kubectl output loads")[0].value["metadata"]
                ["name"]
                .as_str()
                .expect("a name")
                .to_owned();
            let prefix = name
                .strip_suffix('x')
                .expect("name ends with the original")
                .to_owned();
            if prefix.is_empty() && !matches!(ours, Value::String(_)) {
                // An empty prefix: the field was null.
                Value::Null
            } else {
                Value::String(prefix)
            }
        } else if stderr.contains("cannot unmarshal bool") {
            json!("<bool>")
        } else if stderr.contains("cannot unmarshal number") {
            json!("<number>")
        } else {
            panic!(
                "kubectl kustomize failed on `namePrefix: {scalar}` for another reason: {stderr}"
            );
        };
        let ours_kind = match &ours {
            Value::Bool(_) => json!("<bool>"),
            Value::Number(_) => json!("<number>"),
            v => v.clone(),
        };
        assert_eq!(ours_kind, theirs, "namePrefix: {scalar}");
        kinds_seen.push(ours_kind);
    }
    // Every kind of outcome occurred, so the comparison had teeth.
    for kind in [json!("<bool>"), json!("<number>"), Value::Null, json!("on")] {
        assert!(kinds_seen.contains(&kind), "no case produced {kind}");
    }
}

/// YAML syntax that is easy to get subtly wrong. Every `spec` field is
/// checked below with a JSON-patch `test` op, which compares against the
/// value Kustomize holds (not against its printed output, whose emitter
/// loses characters such as U+0085).
const SYNTAX: &str = "apiVersion: example.com/v1
kind: Syntax
metadata:
  name: NAME
spec:
  multiline: this is
    a plain scalar
      over lines

    with a blank
  keep: |+
    kept

  strip: |-
    a
     b
  indent: |2
      two extra
  folded: >
    a
    b

    c
  escapes: \"\\u00e9\\x41\\ttab \\\"q\\\" \\\\ \\N \\_ \\e end\"
  cont: \"a \\
    b\"
  single: 'it''s
    folded'
  flowEmpty: {a: , b, c: 1, d: ~}
  flowTrail: [a, b, ]
  flowMulti: [a,
    b, {k: v}]
  seqPair: [x: 1, y: ]
  tabsep:\tvalue
  tabs: {a:\t1}
  comment: value # trailing
  hash: value#notcomment
  colon: a:b
  url: http://x.y/z?q=1
  emptyAnchor: &e
  useEmpty: *e
  ? explicit
  : value
  seqOfMaps:
    - a: 1
      b: 2
    -   c: 3
  nested:
  - - x
    - y
  - [z]
  quotedKey: {\"a b\": 1, 'c': 2}
  dashes: \"---\"
  docEnd: ...x
  unicode: caf\u{e9} \u{1f600}
  anchored: &m {p: 1, q: [1, 2]}
  merged: {<<: *m, q: 3}
";

const JSON_RESOURCE: &str = "{\n\t\"apiVersion\": \"example.com/v1\",\n\t\"kind\": \"Syntax\",\n\t\"metadata\": {\"name\": \"json\"},\n\t\"spec\": {\n\t\t\"n\": 0755,\n\t\t\"f\": 1.5e2,\n\t\t\"s\": \"\\u00e9\\n\",\n\t\t\"list\": [1, -2, {\"x\": [], \"y\": null}],\n\t\t\"t\": true\n\t}\n}\n";

fn test_ops(name: &str, doc: &Value) -> Value {
    let ops: Vec<Value> = doc["spec"]
        .as_object()
        .expect("spec is a mapping")
        .iter()
        .map(|(k, v)| {
            let path = format!("/spec/{}", k.replace('~', "~0").replace('/', "~1"));
            json!({"op": "test", "path": path, "value": v})
        })
        .collect();
    json!({"name": name, "ops": ops})
}

fn kustomize_with_tests(dir: &Path, docs: &[(String, Value)]) -> (bool, String) {
    let mut patches = String::new();
    for (i, (name, doc)) in docs.iter().enumerate() {
        let ops = test_ops(name, doc)["ops"].clone();
        std::fs::write(dir.join(format!("test{i}.json")), ops.to_string()).expect("write");
        patches.push_str(&format!(
            "- path: test{i}.json\n  target: {{kind: Syntax, name: {name}}}\n"
        ));
    }
    let kustomization =
        format!("resources:\n- lf.yaml\n- crlf.yaml\n- res.json\npatches:\n{patches}");
    std::fs::write(dir.join("kustomization.yaml"), kustomization).expect("write");
    let (ok, _, stderr) = run_kubectl_kustomize(dir);
    (ok, stderr)
}

#[test]
fn loader_values_pass_kustomize_json_patch_tests() {
    let dir = tempfile::tempdir().expect("temp dir");
    let lf = SYNTAX.replace("NAME", "lf");
    let crlf = SYNTAX.replace("NAME", "crlf").replace('\n', "\r\n");
    std::fs::write(dir.path().join("lf.yaml"), &lf).expect("write");
    std::fs::write(dir.path().join("crlf.yaml"), &crlf).expect("write");
    std::fs::write(dir.path().join("res.json"), JSON_RESOURCE).expect("write");
    let mut docs = Vec::new();
    for (name, text) in [
        ("lf", &lf),
        ("crlf", &crlf),
        ("json", &JSON_RESOURCE.to_owned()),
    ] {
        let value = load_all(text)
            .unwrap_or_else(|e| panic!("{name} loads: {e}"))
            .remove(0)
            .into_value();
        docs.push((name.to_owned(), value));
    }
    assert_eq!(docs[0].1["spec"], docs[1].1["spec"], "CRLF reads like LF");
    let (ok, stderr) = kustomize_with_tests(dir.path(), &docs);
    assert!(ok, "a value we read differs from Kustomize's: {stderr}");

    // Control: the same check rejects a value that is off by one character.
    let mut wrong = docs.clone();
    wrong[0].1["spec"]["multiline"] = json!("this is a plain scalar over lines\nwith a blank ");
    let (ok, stderr) = kustomize_with_tests(dir.path(), &wrong);
    assert!(!ok, "the test ops must be able to fail");
    assert!(stderr.contains("/spec/multiline"), "{stderr}");
}

/// A repeated key: Kustomize rejects it in a resource (go-yaml v3) and keeps
/// the last one in `kustomization.yaml` (sigs.k8s.io/yaml); so do we.
#[test]
fn repeated_keys_follow_each_reader() {
    let dir = tempfile::tempdir().expect("temp dir");
    let resource =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  k: \"1\"\n  k: \"2\"\n";
    std::fs::write(dir.path().join("cm.yaml"), resource).expect("write");
    std::fs::write(
        dir.path().join("kustomization.yaml"),
        "resources:\n- cm.yaml\n",
    )
    .expect("write");
    let (ok, _, stderr) = run_kubectl_kustomize(dir.path());
    assert!(
        !ok,
        "kubectl kustomize accepted a repeated key in a resource"
    );
    assert!(stderr.contains("already defined at line 6"), "{stderr}");
    let e = load_all(resource).expect_err("a repeated key in a resource");
    assert_eq!(e.message, "duplicate key `k` (first at line 6)");
    assert_eq!(e.line, 7);

    let resource = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n";
    let kustomization = "resources:\n- cm.yaml\nnamePrefix: a-\nnamePrefix: b-\n";
    std::fs::write(dir.path().join("cm.yaml"), resource).expect("write");
    std::fs::write(dir.path().join("kustomization.yaml"), kustomization).expect("write");
    let printed = kubectl_kustomize(dir.path());
    assert_eq!(
        load_all(&printed).expect("loads")[0].value["metadata"]["name"],
        json!("b-x")
    );
    let ours = load_all_as(kustomization, Dialect::SigsYaml, &Limits::default()).expect("loads");
    assert_eq!(ours[0].value["namePrefix"], json!("b-"));
}

#[test]
fn flow_collections_continued_left_of_their_key_read_as_kubectl_does() {
    // A Vault StatefulSet's `command: [` closing at its key's column, and a
    // flow mapping continued left of its key: YAML 1.2 refuses both, and
    // Kustomize (go-yaml v3) reads both.
    let resource = r#"apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: vault
spec:
  template:
    spec:
      containers:
        - name: vault
          command: [
            "vault", "server", on
          ]
          env: [{name: MODE,
          value: "0755"}]
"#;
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("sts.yaml"), resource).expect("write");
    std::fs::write(
        dir.path().join("kustomization.yaml"),
        "resources:\n- sts.yaml\n",
    )
    .expect("write");
    let printed = kubectl_kustomize(dir.path());
    let ours = load_all(resource).expect("loads as Kustomize reads it");
    let theirs = load_all(&printed).expect("loads");
    assert_eq!(
        ours[0].value, theirs[0].value,
        "kubectl printed:\n{printed}"
    );
    assert_eq!(
        ours[0].value["spec"]["template"]["spec"]["containers"][0]["command"],
        json!(["vault", "server", "on"])
    );
}
