//! Tests of [`super`]: the YAML that `toYaml` writes, as go-yaml and sigs.k8s.io/yaml write it.

use super::*;

fn m(pairs: &[(&str, V)]) -> V {
    V::Map(
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.clone()))
            .collect(),
    )
}

#[test]
fn double_quoted_escapes_are_go_yamls() {
    // sem-files: `AsConfig` of "tab\there\n".
    assert_eq!(
        to_yaml(&V::Str("tab\there\n".into())),
        "\"tab\\there\\n\"\n"
    );
    assert_eq!(to_yaml(&V::Str("a\x1bb\x01".into())), "\"a\\eb\\x01\"\n");
}

/// `toYaml` of each value (JSON) as helm v3.17.1 printed it
/// (`{{ toYaml $v | toJson }}` in a chart, decoded): plain and quoted
/// strings folded at spaces past column 80, at the top level, in maps
/// and sequences, under simple and `? ` keys; literal blocks not folded.
const HELM_V3_17_1: &[(&str, &str)] = &[
    (
        r#""lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud""#,
        r"lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
  ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud",
    ),
    (
        r#""lorem  ipsum  dolor sit amet  consectetur adipiscing elit  sed do eiusmod tempor  incididunt ut labore   et dolore magna aliqua ut  enim ad minim veniam""#,
        r"lorem  ipsum  dolor sit amet  consectetur adipiscing elit  sed do eiusmod tempor  incididunt
  ut labore   et dolore magna aliqua ut  enim ad minim veniam",
    ),
    (
        r#"{"k": "lorem  ipsum  dolor sit amet  consectetur adipiscing elit  sed do eiusmod tempor  incididunt ut labore   et dolore magna aliqua ut  enim ad minim veniam"}"#,
        r"k: lorem  ipsum  dolor sit amet  consectetur adipiscing elit  sed do eiusmod tempor  incididunt
  ut labore   et dolore magna aliqua ut  enim ad minim veniam",
    ),
    (
        r#"{"a": {"b": {"c": {"d": "lorem  ipsum  dolor sit amet  consectetur adipiscing elit  sed do eiusmod tempor  incididunt ut labore   et dolore magna aliqua ut  enim ad minim veniam"}}}}"#,
        r"a:
  b:
    c:
      d: lorem  ipsum  dolor sit amet  consectetur adipiscing elit  sed do eiusmod
        tempor  incididunt ut labore   et dolore magna aliqua ut  enim ad minim veniam",
    ),
    (
        r#"{"lst": ["lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud", "lorem  ipsum  dolor sit amet  consectetur adipiscing elit  sed do eiusmod tempor  incididunt ut labore   et dolore magna aliqua ut  enim ad minim veniam"]}"#,
        r"lst:
- lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
  ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud
- lorem  ipsum  dolor sit amet  consectetur adipiscing elit  sed do eiusmod tempor  incididunt
  ut labore   et dolore magna aliqua ut  enim ad minim veniam",
    ),
    (
        r#"{"a": {"lst": ["lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud", {"x": "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud"}]}}"#,
        r"a:
  lst:
  - lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
    ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud
  - x: lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor
      incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud",
    ),
    (
        r#"[["lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud"]]"#,
        r"- - lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
    ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud",
    ),
    (
        r#"[{"a": "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud", "b": ["lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud"]}]"#,
        r"- a: lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor
    incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud
  b:
  - lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
    ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud",
    ),
    (
        r#""*lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud""#,
        r"'*lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
  ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud'",
    ),
    (
        r#""a: lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud""#,
        r"'a: lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
  ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud'",
    ),
    (
        r#""lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud #comment lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud""#,
        r"'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
  ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud #comment lorem
  ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
  ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud'",
    ),
    (
        r#""--- lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud""#,
        r"'--- lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor
  incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud'",
    ),
    (
        r#"" lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud""#,
        r"' lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
  ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud'",
    ),
    (
        r#""lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud ""#,
        r"'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
  ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud '",
    ),
    (
        r#"{"k": " lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud "}"#,
        r"k: ' lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor
  incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud '",
    ),
    (
        r#""日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト ""#,
        r"'日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト
  日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト 日本語 テキスト '",
    ),
    (
        r#"{"k": "naïve café naïve café naïve café naïve café naïve café naïve café naïve café naïve café naïve café naïve café naïve café naïve café "}"#,
        r"k: 'naïve café naïve café naïve café naïve café naïve café naïve café naïve café naïve
  café naïve café naïve café naïve café naïve café '",
    ),
    (
        r#"{"k": "emoji 😀 x emoji 😀 x emoji 😀 x emoji 😀 x emoji 😀 x emoji 😀 x emoji 😀 x emoji 😀 x emoji 😀 x emoji 😀 x emoji 😀 x emoji 😀 x "}"#,
        r#"k: "emoji \U0001F600 x emoji \U0001F600 x emoji \U0001F600 x emoji \U0001F600 x emoji
  \U0001F600 x emoji \U0001F600 x emoji \U0001F600 x emoji \U0001F600 x emoji \U0001F600
  x emoji \U0001F600 x emoji \U0001F600 x emoji \U0001F600 x ""#,
    ),
    (
        r#"{"k": "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud\nlorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud\n"}"#,
        r"k: |
  lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud
  lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud",
    ),
    (
        r#"{"k": "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud \nlorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud"}"#,
        r#"k: "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
  ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud \nlorem ipsum
  dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore
  et dolore magna aliqua ut enim ad minim veniam quis nostrud""#,
    ),
    (
        r#"{"k": "tab\tlorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud\n"}"#,
        r#"k: "tab\tlorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor
  incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud\n""#,
    ),
    (
        r#"{"k": "tab\tlorem  ipsum  dolor sit amet  consectetur adipiscing elit  sed do eiusmod tempor  incididunt ut labore   et dolore magna aliqua ut  enim ad minim veniam"}"#,
        r#"k: "tab\tlorem  ipsum  dolor sit amet  consectetur adipiscing elit  sed do eiusmod
  tempor  incididunt ut labore   et dolore magna aliqua ut  enim ad minim veniam""#,
    ),
    (
        r#"{"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk": "short value here"}"#,
        r"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk: short
  value here",
    ),
    (
        r#"{"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk y": "2001-12-14 21:59:43"}"#,
        r#"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk y: "2001-12-14
  21:59:43""#,
    ),
    (
        r#"{"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk": "value"}"#,
        r"? kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk
: value",
    ),
    (
        r#"{"long key long key long key long key long key long key long key long key long key long key long key long key long key long key long key long key ": "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud"}"#,
        r"? 'long key long key long key long key long key long key long key long key long key
  long key long key long key long key long key long key long key '
: lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
  ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud",
    ),
    (
        r#"{"multi\nline key": "v"}"#,
        r"? |-
  multi
  line key
: v",
    ),
    (
        r#"{"a: b": "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud"}"#,
        r"'a: b': lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor
  incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud",
    ),
    (r#"{"true": "yes"}"#, r#""true": "yes""#),
    (
        r#"{"k": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx y z"}"#,
        r"k: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx y z",
    ),
    (
        r#"{"k": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx y z"}"#,
        r"k: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx y
  z",
    ),
    (
        r#"{"k": "*xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx y z"}"#,
        r"k: '*xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx y
  z'",
    ),
    (
        r#"{"k": "*xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx  y z"}"#,
        r"k: '*xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx  y
  z'",
    ),
    (
        r#"{"k": "*xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx y z "}"#,
        r"k: '*xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
  y z '",
    ),
    (
        r#""\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx a  b   c""#,
        r#"'"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
  a  b   c'"#,
    ),
    (
        r#"{"k": "\u0001xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx  a b"}"#,
        r#"k: "\x01xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
  \ a b""#,
    ),
    (
        r#"{"k": "\u0001xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx a"}"#,
        r#"k: "\x01xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
  a""#,
    ),
    (
        r#"{"k": "\nlorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud"}"#,
        r"k: |2-

  lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud",
    ),
    (
        r#""\n""#, r"|2+
",
    ),
    (
        r#""a\n\n""#,
        r"|+
  a
",
    ),
    (
        r#"{"k": "a\n\n", "z": 1}"#,
        r"k: |+
  a

z: 1",
    ),
    (
        r#"{"a": {}, "b": [], "c": [{}], "d": [[]], "e": null, "f": true, "g": 1.5, "h": 10}"#,
        r"a: {}
b: []
c:
- {}
d:
- []
e: null
f: true
g: 1.5
h: 10",
    ),
    (
        r#"[[[["lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud"]]]]"#,
        r"- - - - lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor
        incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud",
    ),
    (
        r#"{"l": [["lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud", "lorem  ipsum  dolor sit amet  consectetur adipiscing elit  sed do eiusmod tempor  incididunt ut labore   et dolore magna aliqua ut  enim ad minim veniam"]]}"#,
        r"l:
- - lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
    ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud
  - lorem  ipsum  dolor sit amet  consectetur adipiscing elit  sed do eiusmod tempor  incididunt
    ut labore   et dolore magna aliqua ut  enim ad minim veniam",
    ),
    (
        r#"{"k": "\u0001xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"  y z"}"#,
        r#"k: "\x01xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"
  \ y z""#,
    ),
    (
        r#"{"k": "\ufefflorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud"}"#,
        r#"k: "\uFEFF\x6C\x6F\x72\x65\x6D\x20\x69\x70\x73\x75\x6D\x20\x64\x6F\x6C\x6F\x72\x20\x73\x69\x74\x20\x61\x6D\x65\x74\x20\x63\x6F\x6E\x73\x65\x63\x74\x65\x74\x75\x72\x20\x61\x64\x69\x70\x69\x73\x63\x69\x6E\x67\x20\x65\x6C\x69\x74\x20\x73\x65\x64\x20\x64\x6F\x20\x65\x69\x75\x73\x6D\x6F\x64\x20\x74\x65\x6D\x70\x6F\x72\x20\x69\x6E\x63\x69\x64\x69\x64\x75\x6E\x74\x20\x75\x74\x20\x6C\x61\x62\x6F\x72\x65\x20\x65\x74\x20\x64\x6F\x6C\x6F\x72\x65\x20\x6D\x61\x67\x6E\x61\x20\x61\x6C\x69\x71\x75\x61\x20\x75\x74\x20\x65\x6E\x69\x6D\x20\x61\x64\x20\x6D\x69\x6E\x69\x6D\x20\x76\x65\x6E\x69\x61\x6D\x20\x71\x75\x69\x73\x20\x6E\x6F\x73\x74\x72\x75\x64""#,
    ),
    (
        r#"{"éééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé": "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud"}"#,
        r"éééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé: lorem ipsum dolor
  sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore
  et dolore magna aliqua ut enim ad minim veniam quis nostrud",
    ),
    (
        r#"{"ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé": "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud"}"#,
        r"? ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé
: lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
  ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud",
    ),
    (
        r#"{"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk": {"a": "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud", "b": ["lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud", {"c": "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud"}]}}"#,
        r"? kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk
: a: lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor
    incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud
  b:
  - lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
    ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud
  - c: lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor
      incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud",
    ),
    (
        r#"{"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk": "line1\nline2"}"#,
        r"? kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk
: |-
  line1
  line2",
    ),
    (
        r#"[{"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk": "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud"}]"#,
        r"- ? kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk
  : lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt
    ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud",
    ),
    (
        r#"{"k\nk": {"a": 1}}"#,
        r"? |-
  k
  k
: a: 1",
    ),
    (
        r#"{"k\nk": "v\n"}"#,
        r"? |-
  k
  k
: |
  v",
    ),
    (
        r#"{"a": {"b": {"c": {"d": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud"}}}}"#,
        r"a:
  b:
    c:
      d: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
        lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor
        incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud",
    ),
    (
        r#""a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b ""#,
        r"'a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b a#b
  a#b a#b a#b a#b a#b a#b a#b a#b a#b '",
    ),
    (
        r#"{"k": "*a ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' ' '"}"#,
        r"k: '*a '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' ''
  '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' '' ''
  '' '' '' '' '' '' '' '''",
    ),
    (
        r#"{"k": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#,
        r"k: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    ),
    (r#"{"k": ""}"#, r#"k: """#),
    (
        r#"{"k": "2001-12-14 21:59:43.10 -5"}"#,
        r"k: 2001-12-14 21:59:43.10 -5",
    ),
    (
        r#"{"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk": "2001-12-14 21:59:43.10"}"#,
        r#"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk: "2001-12-14
  21:59:43.10""#,
    ),
    (
        r#"{"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk: y": "a b"}"#,
        r"'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk: y': a
  b",
    ),
    (r#""--- ""#, r"'--- '"),
];

#[test]
fn long_strings_fold_as_helm_prints_them() {
    for (input, want) in HELM_V3_17_1 {
        let v = V::from_json(&serde_json::from_str(input).expect("test input is JSON"));
        assert_eq!(helm_to_yaml(&v), *want, "toYaml of {input}");
        assert!(to_yaml(&v).len() <= printed_bound(&v), "bound of {input}");
    }
}

#[test]
fn folds_at_every_space_once_the_indent_passes_80_columns() {
    // 42 nested maps: the value's indentation (84) is past `best_width`,
    // so every single space breaks. helm v3.17.1 printed this.
    let mut v = V::Str("lorem  ipsum  dolor sit amet  consectetur adipiscing elit  sed do eiusmod tempor  incididunt ut labore   et dolore magna aliqua ut  enim ad minim veniam".into());
    for n in (0..42).rev() {
        v = m(&[(&format!("l{n}"), v)]);
    }
    assert!(to_yaml(&v).len() <= printed_bound(&v));
    assert_eq!(
        helm_to_yaml(&v),
        r"l0:
  l1:
    l2:
      l3:
        l4:
          l5:
            l6:
              l7:
                l8:
                  l9:
                    l10:
                      l11:
                        l12:
                          l13:
                            l14:
                              l15:
                                l16:
                                  l17:
                                    l18:
                                      l19:
                                        l20:
                                          l21:
                                            l22:
                                              l23:
                                                l24:
                                                  l25:
                                                    l26:
                                                      l27:
                                                        l28:
                                                          l29:
                                                            l30:
                                                              l31:
                                                                l32:
                                                                  l33:
                                                                    l34:
                                                                      l35:
                                                                        l36:
                                                                          l37:
                                                                            l38:
                                                                              l39:
                                                                                l40:
                                                                                  l41: lorem  ipsum  dolor
                                                                                    sit
                                                                                    amet  consectetur
                                                                                    adipiscing
                                                                                    elit  sed
                                                                                    do
                                                                                    eiusmod
                                                                                    tempor  incididunt
                                                                                    ut
                                                                                    labore   et
                                                                                    dolore
                                                                                    magna
                                                                                    aliqua
                                                                                    ut  enim
                                                                                    ad
                                                                                    minim
                                                                                    veniam"
    );
}

/// helm v3.17.1's `toYaml` (the sem-yaml-types corpus case: values
/// 12345678901234567890 and 9223372036854775807 read as float64).
#[test]
fn whole_floats_print_as_json_digits_read_back_by_go_yaml() {
    let cases = [
        (1.234_567_890_123_456_7e19, "12345678901234567000\n"),
        (9.223_372_036_854_776e18, "9223372036854776000\n"),
        (1_234_567.0, "1234567\n"),
        (-0.0, "0\n"),
        // Past uint64, the digits are a float again: `%g`.
        (2e20, "2e+20\n"),
        (-1e19, "-1e+19\n"),
        (1e21, "1e+21\n"),
        (0.1, "0.1\n"),
    ];
    for (f, want) in cases {
        assert_eq!(to_yaml(&V::Float(f)), want, "{f:e}");
    }
}

#[test]
fn nested_structures_match_go_yaml_layout() {
    let v = m(&[
        ("name", V::Str("web".into())),
        ("ports", V::List(vec![V::Float(80.0), V::Float(443.0)])),
        (
            "env",
            V::List(vec![m(&[
                ("name", V::Str("A".into())),
                ("value", V::Str("true".into())),
            ])]),
        ),
        ("labels", m(&[("app", V::Str("web".into()))])),
        ("empty", V::Str(String::new())),
    ]);
    assert_eq!(
            to_yaml(&v),
            "empty: \"\"\nenv:\n- name: A\n  value: \"true\"\nlabels:\n  app: web\nname: web\nports:\n- 80\n- 443\n"
        );
}

#[test]
fn special_strings_are_quoted() {
    assert_eq!(to_yaml(&V::Str("a: b".into())), "'a: b'\n");
    assert_eq!(to_yaml(&V::Str("0755".into())), "\"0755\"\n");
    assert_eq!(
        to_yaml(&V::Str("line1\nline2".into())),
        "|-\n  line1\n  line2\n"
    );
}

#[test]
fn key_order_is_natural() {
    assert_eq!(key_less("a2", "a10"), Ordering::Less);
    assert_eq!(key_less("_x", "a"), Ordering::Less);
}
