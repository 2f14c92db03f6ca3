//! Loader tests: documents, merges, duplicates, aliases, limits, positions.

use serde_json::{json, Value};

use super::*;

fn one(text: &str) -> Value {
    let docs = load_all(text).unwrap_or_else(|e| panic!("{text:?} should load: {e}"));
    assert_eq!(docs.len(), 1, "{text:?}: one document expected");
    docs.into_iter()
        .next()
        .map(|d| d.into_value())
        .unwrap_or_default()
}

fn err(text: &str) -> YamlError {
    match load_all(text) {
        Ok(docs) => panic!("{text:?} should fail, loaded {docs:?}"),
        Err(e) => e,
    }
}

#[test]
fn scalars_in_a_manifest() {
    let text = "\
mode: 0755
defaultMode: 0644
count: 1_000
flag: on
quoted: \"123\"
single: '0755'
sci: 1e3
float: 1.5
nothing: ~
empty:
yes: no
tagged: !!int \"42\"
str: !!str 42
custom: !Ref 3
bang: ! 12
block: |
  0755
folded: >-
  a
  b
";
    assert_eq!(
        one(text),
        json!({
            "mode": 493, "defaultMode": 420, "count": 1000, "flag": "on",
            "quoted": "123", "single": "0755", "sci": 1000, "float": 1.5,
            "nothing": null, "empty": null, "yes": "no", "tagged": 42, "str": "42",
            "custom": "3", "bang": 12, "block": "0755\n", "folded": "a b"
        })
    );
}

#[test]
fn tag_mismatch_is_an_error_at_the_scalar() {
    let e = err("a: 1\nb: !!int nope\n");
    assert_eq!(e.message, "cannot decode !!str `nope` as a !!int");
    assert_eq!((e.line, e.column), (2, 4));
}

#[test]
fn keys_are_strings() {
    assert_eq!(
        one("1: a\ntrue: b\n~: c\n0x10: d\n\"q\": e\n1.5: f\n"),
        json!({"1": "a", "true": "b", "null": "c", "16": "d", "q": "e", "1.5": "f"})
    );
    let e = err("? [a, b]\n: c\n");
    assert_eq!(e.message, "a mapping or sequence cannot be a mapping key");
    let e = err("{? {a: 1} : 2}");
    assert_eq!(e.message, "a mapping or sequence cannot be a mapping key");
}

#[test]
fn merge_keys() {
    let text = "\
base: &base {a: 1, b: 1, c: 1}
other: &other {b: 2, d: 2}
one:
  <<: *base
  a: 9
list:
  c: 9
  <<: [*other, *base]
inline:
  <<: {x: 1}
quoted:
  \"<<\": {x: 1}
tagged:
  !!merge <<: *other
";
    let v = one(text);
    assert_eq!(
        v["one"],
        json!({"a": 9, "b": 1, "c": 1}),
        "explicit keys win"
    );
    assert_eq!(
        v["list"],
        json!({"a": 1, "b": 2, "c": 9, "d": 2}),
        "earlier merged maps win, explicit keys win even before `<<`"
    );
    assert_eq!(v["inline"], json!({"x": 1}));
    assert_eq!(
        v["quoted"],
        json!({"<<": {"x": 1}}),
        "a quoted `<<` is an ordinary key"
    );
    assert_eq!(v["tagged"], json!({"b": 2, "d": 2}));

    let e = err("a:\n  <<: 1\n");
    assert_eq!(
        e.message,
        "map merge requires map or sequence of maps as the value"
    );
    assert_eq!(e.line, 2);
    let e = err("a:\n  <<: [{x: 1}, 2]\n");
    assert_eq!(
        e.message,
        "map merge requires map or sequence of maps as the value"
    );
    let e = err("s: &s [{x: 1}]\na:\n  <<: *s\n");
    assert_eq!(
        e.message,
        "map merge requires map or sequence of maps as the value"
    );
    assert_eq!((e.line, e.column), (3, 7));
    let v = one("s: &s {x: 1}\na:\n  <<: [*s, {y: 2}]\n");
    assert_eq!(v["a"], json!({"x": 1, "y": 2}));
    let e = err("a:\n  <<: {x: 1}\n  <<: {y: 1}\n");
    assert_eq!(e.message, "duplicate merge key `<<` (first at line 2)");
    assert_eq!((e.line, e.column), (3, 3));
}

#[test]
fn sigs_yaml_dialect_replaces_repeated_keys_and_merges_in_place() {
    let load = |t: &str| {
        load_all_as(t, Dialect::SigsYaml, &Limits::default())
            .map(|d| d.into_iter().map(|d| d.into_value()).collect::<Vec<_>>())
    };
    assert_eq!(
        load("namePrefix: a-\nnamePrefix: b-\non: yes\nd: 2001-12-14\n"),
        Ok(vec![
            json!({"namePrefix": "b-", "true": true, "d": "2001-12-14"})
        ])
    );
    // Each case was checked through `commonLabels` in a kustomization.yaml.
    assert_eq!(
        load("{a: '1', <<: {a: '2', b: '3'}}"),
        Ok(vec![json!({"a": "2", "b": "3"})]),
        "a merge overrides the keys before it"
    );
    assert_eq!(
        load("{<<: {a: '2', b: '3'}, a: '1'}"),
        Ok(vec![json!({"a": "1", "b": "3"})])
    );
    assert_eq!(
        load("{<<: [{a: '2'}, {a: '3', b: '4'}]}"),
        Ok(vec![json!({"a": "2", "b": "4"})]),
        "earlier maps of a merge list win"
    );
    assert_eq!(
        load("{<<: {a: 1}, <<: {a: 2, b: 2}}"),
        Ok(vec![json!({"a": 2, "b": 2})])
    );
    // The same text in the default dialect.
    assert_eq!(
        err("namePrefix: a-\nnamePrefix: b-\n").message,
        "duplicate key `namePrefix` (first at line 1)"
    );
    assert_eq!(
        one("{a: '1', <<: {a: '2', b: '3'}}"),
        json!({"a": "1", "b": "3"})
    );
}

#[test]
fn duplicate_keys_name_both_lines() {
    let e = err("apiVersion: v1\nkind: ConfigMap\nname: a\ndata:\n  x: 1\nname: b\n");
    assert_eq!(e.message, "duplicate key `name` (first at line 3)");
    assert_eq!((e.line, e.column), (6, 1));

    // Nested under sequences, after a merge, and in a later document.
    let text = "---\na: 1\n---\nitems:\n- <<: {k: 1}\n  k: 2\n- k: 1\n  j: 2\n  k: 3\n";
    let e = err(text);
    assert_eq!(e.message, "duplicate key `k` (first at line 7)");
    assert_eq!(e.line, 9);

    // Keys that are equal once they are strings collide, as in JSON.
    let e = err("1: a\n\"1\": b\n");
    assert_eq!(e.message, "duplicate key `1` (first at line 1)");
    let e = err("{a: 1, a: 2}");
    assert_eq!(e.message, "duplicate key `a` (first at line 1)");
}

#[test]
fn aliases_copy_anchored_nodes() {
    let v = one("a: &x {k: [1, 2]}\nb: *x\nc: &s hello\nd: *s\n*s : key\n");
    assert_eq!(v["b"], json!({"k": [1, 2]}));
    assert_eq!(v["d"], json!("hello"));
    assert_eq!(v["hello"], json!("key"), "an alias can be a key");
    // go-yaml scopes anchors to their document.
    assert!(load_all("a: &x 1\n---\nb: *x\n").is_err());
    let e = err("a: &x [1, *x]\n");
    assert_eq!(e.message, "alias refers to a node that contains it");
    let e = err("a: &x [1]\n*x : 2\n");
    assert_eq!(e.message, "a mapping or sequence cannot be a mapping key");
}

fn billion_laughs(levels: usize) -> String {
    let mut text = String::from("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..levels {
        let p = i - 1;
        text.push_str(&format!(
            "l{i}: &l{i} [*l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}]\n"
        ));
    }
    text
}

#[test]
fn alias_budget_stops_billion_laughs() {
    // 9 levels would expand to 9^9 (387 million) nodes.
    let e = err(&billion_laughs(9));
    assert_eq!(
        e.message,
        "anchors and aliases expand to more than 100000 nodes"
    );
    // A small expansion under the budget loads in full.
    let v = one(&billion_laughs(3));
    assert_eq!(v["l2"].as_array().map(Vec::len), Some(9));
    assert_eq!(v["l2"][8][8][8], json!("lol"));
    // The budget is the caller's to set.
    let tight = Limits {
        max_alias_nodes: 50,
        ..Limits::default()
    };
    assert!(load_all_with(&billion_laughs(3), &tight).is_err());
}

#[test]
fn alias_budget_counts_long_strings() {
    // 1 MiB repeated 10,000 times would be 10 GiB.
    let big = "x".repeat(1 << 20);
    let mut text = format!("s: &s {big}\nl:\n");
    for _ in 0..10_000 {
        text.push_str("- *s\n");
    }
    let e = err(&text);
    assert!(e.message.starts_with("anchors and aliases expand"), "{e}");
}

#[test]
fn depth_bombs_fail_without_overflowing_the_stack() {
    let n = 50_000;
    let block = format!("{}x\n", "- ".repeat(n));
    let e = err(&block);
    assert_eq!(e.message, "nesting deeper than 256 levels");
    assert_eq!(e.line, 1);

    let flow_seq = format!("{}{}", "[".repeat(n), "]".repeat(n));
    let e = err(&flow_seq);
    assert_eq!(e.line, 1, "{e}");

    let flow_map = format!("{}x{}", "{a: ".repeat(n), "}".repeat(n));
    let e = err(&flow_map);
    assert_eq!(e.line, 1, "{e}");

    // Block mappings nested by indentation.
    let mut nested = String::new();
    for i in 0..300 {
        nested.push_str(&" ".repeat(i));
        nested.push_str("a:\n");
    }
    let e = err(&nested);
    assert_eq!(e.message, "nesting deeper than 256 levels");
    assert_eq!(e.line, 257, "the 257th mapping starts on line 257");

    // Within the limit is fine.
    let ok = format!("{}x{}", "[".repeat(200), "]".repeat(200));
    assert!(load_all(&ok).is_ok());
}

#[test]
fn aliases_cannot_exceed_the_depth_limit() {
    // Each level nests the previous anchor 100 deeper: the text is shallow,
    // the value would not be.
    let limits = Limits {
        max_depth: 150,
        ..Limits::default()
    };
    let deep = |inner: &str| format!("{}{inner}{}", "[".repeat(100), "]".repeat(100));
    let text = format!("a: &a {}\nb: {}\n", deep("1"), deep("*a"));
    let e = load_all_with(&text, &limits).expect_err("an alias 100 deep inside 100 deep");
    assert_eq!(e.message, "nesting deeper than 150 levels");
}

#[test]
fn documents_are_indexed_with_their_lines() {
    let text =
        "# leading comment\napiVersion: v1\n---\n# nothing here\n---\n\n\nkind: B\n...\n---\n- x\n";
    let docs = load_all(text).expect("loads");
    let got: Vec<(usize, u32, Value)> = docs
        .into_iter()
        .map(|d| (d.index, d.line, (*d.value).clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 2, json!({"apiVersion": "v1"})),
            (1, 3, Value::Null),
            (2, 8, json!({"kind": "B"})),
            (3, 11, json!(["x"])),
        ]
    );
    // Only comments: no documents (Kustomize yields no resources).
    assert_eq!(load_all("# just a comment\n\n").expect("loads"), vec![]);
    assert_eq!(load_all("").expect("loads"), vec![]);
    // A lone marker is one empty document.
    let docs = load_all("---\n").expect("loads");
    assert_eq!(docs.len(), 1);
    assert_eq!(**docs[0].value, Value::Null);
}

#[test]
fn document_limit() {
    let text = "---\na: 1\n".repeat(11);
    let limits = Limits {
        max_documents: 10,
        ..Limits::default()
    };
    let e = load_all_with(&text, &limits).expect_err("eleven documents");
    assert_eq!(e.message, "more than 10 documents in one stream");
    assert_eq!(e.line, 21);
    assert_eq!(
        load_all_with(&"---\na: 1\n".repeat(10), &limits).map(|d| d.len()),
        Ok(10)
    );
}

#[test]
fn empty_values_in_flow_collections_are_empty_strings() {
    // As Kustomize's emitter round trip leaves them; block empties stay null.
    assert_eq!(
        one("a: {x: , y, z: ~}\nb: [k: ]\nc:\nd: {e: {f: }}\n"),
        json!({"a": {"x": "", "y": "", "z": null}, "b": [{"k": ""}], "c": null, "d": {"e": {"f": ""}}})
    );
    // Non-ASCII text before the brackets (the parser counts characters).
    assert_eq!(
        one("\u{e9}\u{e9}: caf\u{e9}\nk\u{fc}: {\u{e9}: , x: [\u{fc}: ]}\nb\u{e9}:\n"),
        json!({"\u{e9}\u{e9}": "caf\u{e9}", "k\u{fc}": {"\u{e9}": "", "x": [{"\u{fc}": ""}]}, "b\u{e9}": null})
    );
    let docs = load_all_as("a: {x: }\n", Dialect::SigsYaml, &Limits::default()).expect("loads");
    assert_eq!(**docs[0].value, json!({"a": {"x": null}}));
}

#[test]
fn a_tab_after_a_colon_separates_like_a_space() {
    let text = "a:\tvalue\nb:\t\tx\nc: {d:\t1}\ne: |\n  keep:\tthis tab\n";
    assert_eq!(
        one(text),
        json!({"a": "value", "b": "x", "c": {"d": 1}, "e": "keep:\tthis tab\n"})
    );
    // go-yaml rejects a sequence begun on the key's line, with tabs or not.
    let e = err("a:\t- x\n");
    assert_eq!(
        e.message,
        "block sequence entries are not allowed in this context"
    );
    assert_eq!(
        line_of(text, 0, &[PathSeg::Key("c"), PathSeg::Key("d")]),
        Some(3)
    );
    // A duplicate after a patched tab still names both lines.
    let e = err("a:\t1\nb: 2\na:\t3\n");
    assert_eq!(e.message, "duplicate key `a` (first at line 1)");
}

#[test]
fn json_manifests_load() {
    let text = "{\n\t\"apiVersion\": \"v1\",\n\t\"kind\": \"ConfigMap\",\n\t\"data\": {\"a\": \"1\", \"n\": 0755, \"f\": 1.5e2, \"t\": true, \"z\": null},\n\t\"list\": [1, -2, {\"x\": []}]\n}\n";
    assert_eq!(
        one(text),
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "data": {"a": "1", "n": 493, "f": 150, "t": true, "z": null},
               "list": [1, -2, {"x": []}]})
    );
}

#[test]
fn syntax_errors_have_positions() {
    let e = err("a: 1\nb: [1, 2\nc: 3\n");
    assert!(e.line >= 2, "{e}");
    let e = err("a:\n\tb: 1\n");
    assert_eq!(e.line, 2, "{e}");
    let e = err("a: b: c\n");
    assert_eq!((e.line, e.column), (1, 5), "{e}");
    assert!(
        e.message.chars().next().is_some_and(char::is_lowercase),
        "{e}"
    );
    let e = err("a: *nope\n");
    assert_eq!(e.line, 1, "{e}");
    assert_eq!(
        e.to_string(),
        format!("{} at line 1 column {}", e.message, e.column)
    );
}

#[test]
fn long_lines_and_unicode() {
    let long = "v".repeat(4 << 20);
    let v = one(&format!("k: {long}\n"));
    assert_eq!(v["k"].as_str().map(str::len), Some(4 << 20));
    let v = one("\u{feff}name: caf\u{e9} \u{1f600}\nlist: [\u{e9}]\n");
    assert_eq!(
        v,
        json!({"name": "caf\u{e9} \u{1f600}", "list": ["\u{e9}"]})
    );
}

#[test]
fn line_of_finds_keys_items_and_aliases() {
    let text = "\
a: 1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: x
  labels: &l
    app: web
spec:
  ports:
  - port: 80
  - name: b
    port: 81
  other:
    <<: *l
    own: 1
  copy: *l
";
    let k = PathSeg::Key;
    let i = PathSeg::Index;
    assert_eq!(line_of(text, 0, &[]), Some(1));
    assert_eq!(line_of(text, 0, &[k("a")]), Some(1));
    assert_eq!(line_of(text, 1, &[]), Some(3));
    assert_eq!(line_of(text, 1, &[k("kind")]), Some(4));
    assert_eq!(line_of(text, 1, &[k("metadata"), k("name")]), Some(6));
    assert_eq!(line_of(text, 1, &[k("spec"), k("ports"), i(1)]), Some(12));
    assert_eq!(
        line_of(text, 1, &[k("spec"), k("ports"), i(1), k("port")]),
        Some(13)
    );
    assert_eq!(
        line_of(text, 1, &[k("spec"), k("other"), k("own")]),
        Some(16)
    );
    // A merged key is found where it is written.
    assert_eq!(
        line_of(text, 1, &[k("spec"), k("other"), k("app")]),
        Some(8)
    );
    // Through an alias: into the anchored node.
    assert_eq!(line_of(text, 1, &[k("spec"), k("copy"), k("app")]), Some(8));
    assert_eq!(line_of(text, 1, &[k("spec"), k("copy")]), Some(17));
    assert_eq!(line_of(text, 1, &[k("spec"), k("ports"), i(2)]), None);
    assert_eq!(line_of(text, 1, &[k("nope")]), None);
    assert_eq!(line_of(text, 1, &[k("kind"), k("x")]), None);
    assert_eq!(line_of(text, 2, &[]), None);
    assert_eq!(
        line_of("a: [1\n", 0, &[k("a")]),
        None,
        "a stream that does not parse"
    );
    // Of repeated keys the last counts (the one a lenient reader keeps),
    // and keys match in either dialect's reading.
    assert_eq!(line_of("a: 1\nb: 2\na: 3\n", 0, &[k("a")]), Some(3));
    assert_eq!(line_of("x: 1\non: 2\n", 0, &[k("true")]), Some(2));
    assert_eq!(line_of("x: 1\non: 2\n", 0, &[k("on")]), Some(2));
    // A block scalar is found at its header, not its first content line.
    let blocks = "- |\n  a\n- >\n\n\n  b\n- |+\n\n- x\n- | # c\n  \n  d\n";
    let lines: Vec<Option<u32>> = (0..5).map(|n| line_of(blocks, 0, &[i(n)])).collect();
    assert_eq!(lines, [Some(1), Some(3), Some(7), Some(9), Some(10)]);
    let docs = load_all("--- |\n  text\n---\n\n>\n\n  folded\n").expect("loads");
    assert_eq!(docs.iter().map(|d| d.line).collect::<Vec<_>>(), [1, 5]);
    // Keys are matched by their loaded text.
    assert_eq!(
        line_of("x: 1\n0755: a\n\"q\": b\n", 0, &[k("493")]),
        Some(2)
    );
    assert_eq!(line_of("x: 1\n0755: a\n\"q\": b\n", 0, &[k("q")]), Some(3));
}

/// Small deterministic generator for the no-panic test.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

#[test]
fn mangled_input_never_panics() {
    // Run the loader without its panic guard, so a panic fails this test.
    let seed = "\
apiVersion: v1
kind: ConfigMap
metadata: {name: a, labels: &l {x: '1'}}
data:
  <<: *l
  k: |
    text
  list: [1, 2.5, ~, \"q\", !!str 3, *l]
  ? complex
  : value
---
- &a a
- *a
...
";
    let pieces = [
        "[",
        "]",
        "{",
        "}",
        ":",
        "- ",
        "\n",
        "  ",
        "\t",
        "&a ",
        "*a",
        "!!int ",
        "! ",
        "'",
        "\"",
        "|",
        ">",
        "<<: ",
        "---\n",
        "...\n",
        "?",
        ",",
        "#",
        "%YAML 1.2\n",
        "\\",
        "\u{0}",
        "\u{feff}",
        "\r",
    ];
    let mut rng = Lcg(7);
    let chars: Vec<char> = seed.chars().collect();
    for _ in 0..3000 {
        let mut text: Vec<char> = chars.clone();
        for _ in 0..=(rng.next() % 6) {
            let at = usize::try_from(rng.next()).unwrap_or(0) % (text.len() + 1);
            match rng.next() % 3 {
                0 if at < text.len() => {
                    text.remove(at);
                }
                _ => {
                    let p = pieces[usize::try_from(rng.next()).unwrap_or(0) % pieces.len()];
                    for (n, c) in p.chars().enumerate() {
                        text.insert(at + n, c);
                    }
                }
            }
        }
        let text: String = text.into_iter().collect();
        for dialect in [Dialect::Kyaml, Dialect::SigsYaml] {
            let _ = load_inner(&text, dialect, &Limits::default());
        }
        let path = [PathSeg::Key("data"), PathSeg::Key("k")];
        let _ = locate::line_of(&text, 0, &path, locate::Mode::FirstDuplicate);
    }
}

#[test]
fn block_scalar_ending_the_stream_without_a_line_break_has_none() {
    // go-yaml: clip chomping keeps the final line break only if there is one.
    let v = |t: &str| crate::load_all(t).unwrap()[0].value["a"].clone();
    assert_eq!(v("a: |\n  x\n  y"), "x\ny");
    assert_eq!(v("a: |\n  x\n  y\n"), "x\ny\n");
    assert_eq!(v("a: >\n  x\n  y"), "x y");
    assert_eq!(
        v("a: |\n  x\n  "),
        "x\n",
        "a whitespace-only last line follows a real line break"
    );
    // A key after the block ends the stream, not the block: its break is kept
    // (helm: `fromYaml "k: |\n  x\nj: 1"` is `{"j":1,"k":"x\n"}`).
    assert_eq!(v("a: |\n  x\nj: 1"), "x\n");
    assert_eq!(v("a: >\n  x\n  y\nj: 1"), "x y\n");
    assert_eq!(v("a: |\n  x\n\nj: 1"), "x\n");
}
