//! Template-set tests of values and functions: maps are references as in
//! Go (a change made through one holder shows in every other), what a
//! function is given or gives back has Go's types (`int` and `int64`, the
//! nil map and slice, argument type errors where text/template checks
//! them), and Sprig's and Helm's functions (`camelcase`, `wrap`,
//! `fromYaml`, `quote`, `.Values` methods) print as helm v3.17.1 prints
//! them. The helpers are `set_tests.rs`'s.

use std::collections::BTreeMap;

use super::set_tests::{helm_dot, helm_set, map, s, yaml};
use super::V;

// Go's maps are references: what these print is what Go's text/template
// with Sprig prints (the first is the corpus case `sem-dict-list`'s
// `dictFromValuesIsShared`, where helm prints "true").

fn run_helm(src: &str, dot: &V) -> Result<String, String> {
    helm_set(&[("t", src)]).execute("t", dot)
}

#[test]
fn a_change_through_a_variable_shows_in_the_values() {
    let dot = map(&[("Values", yaml("base:\n  replicas: 1\n"))]);
    let out = run_helm(
        r#"{{ $v := .Values.base }}{{ $_ := set $v "mutated" true }}{{ hasKey .Values.base "mutated" }} {{ .Values.base.mutated }}"#,
        &dot,
    );
    assert_eq!(out.as_deref(), Ok("true true"));
    // The caller's value is the same map: Helm's later templates see it.
    let V::Map(top) = &dot else { panic!("map") };
    let Some(V::Map(values)) = top.get("Values") else {
        panic!("values")
    };
    let Some(V::Map(base)) = values.get("base") else {
        panic!("base")
    };
    assert_eq!(base.get("mutated"), Some(V::Bool(true)));
}

#[test]
fn values_changed_by_one_template_are_seen_by_the_next() {
    let set = helm_set(&[
        (
            "c/templates/a.yaml",
            r#"{{ $_ := set .Values "fromA" "yes" }}a"#,
        ),
        ("c/templates/b.yaml", "b sees {{ .Values.fromA }}"),
    ]);
    let values = yaml("x: 1\n");
    let dot_a = map(&[("Values", values.clone())]);
    let dot_b = map(&[("Values", values)]);
    assert_eq!(
        set.execute("c/templates/a.yaml", &dot_a).as_deref(),
        Ok("a")
    );
    assert_eq!(
        set.execute("c/templates/b.yaml", &dot_b).as_deref(),
        Ok("b sees yes")
    );
}

#[test]
fn a_map_inside_a_map_or_a_list_is_the_same_map() {
    let out = run_helm(
        r#"{{ $outer := dict "inner" (dict "a" 1) }}{{ $in := $outer.inner }}{{ $_ := set $in "b" 2 }}{{ $l := list $in }}{{ $_ := unset $in "a" }}{{ toJson $outer }} {{ toJson $l }}"#,
        &map(&[]),
    );
    assert_eq!(out.as_deref(), Ok(r#"{"inner":{"b":2}} [{"b":2}]"#));
}

#[test]
fn include_changes_the_dot_it_is_given() {
    let set = helm_set(&[
        (
            "c/templates/_h.tpl",
            r#"{{ define "mark" }}{{ $_ := set . "seen" "yes" }}{{ end }}"#,
        ),
        (
            "c/templates/cm.yaml",
            r#"{{ include "mark" . }}{{ .seen }} {{ $d := dict }}{{ include "mark" $d }}{{ $d.seen }}"#,
        ),
    ]);
    let out = set.execute("c/templates/cm.yaml", &map(&[("Values", map(&[]))]));
    assert_eq!(out.as_deref(), Ok("yes yes"));
}

#[test]
fn deep_copy_breaks_the_alias_and_merge_shares_what_it_takes() {
    let dot = map(&[("Values", yaml("base:\n  a: 1\n"))]);
    let out = run_helm(
        r#"{{ $c := deepCopy .Values.base }}{{ $_ := set $c "x" 1 }}{{ hasKey .Values.base "x" }} {{ $src := dict "m" (dict "a" 1) }}{{ $dst := dict }}{{ $_ := merge $dst $src }}{{ $_ := set $src.m "b" 2 }}{{ toJson $dst }} {{ $r := mergeOverwrite (dict) .Values }}{{ $_ := set $r.base "y" 2 }}{{ .Values.base.y }}"#,
        &dot,
    );
    assert_eq!(out.as_deref(), Ok(r#"false {"m":{"a":1,"b":2}} 2"#));
}

#[test]
fn range_over_a_map_sees_its_entries_as_they_were() {
    // Go's walkRange sorts the keys and takes the values first.
    let out = run_helm(
        r#"{{ $d := dict "a" 1 }}{{ range $k, $v := $d }}{{ $_ := set $d "b" 2 }}{{ $k }}{{ end }}{{ len $d }}"#,
        &map(&[]),
    );
    assert_eq!(out.as_deref(), Ok("a2"));
}

#[test]
fn a_map_containing_itself_is_an_error_not_a_hang() {
    for src in [
        r#"{{ $d := dict }}{{ $_ := set $d "self" $d }}{{ $d }}"#,
        r#"{{ $a := dict }}{{ $b := dict "x" $a }}{{ $_ := merge $a $b }}{{ toYaml $a }}"#,
        r#"{{ $a := dict "l" (list) }}{{ $_ := set $a "l" (list $a $a) }}{{ toJson $a }}"#,
        r#"{{ $d := dict }}{{ $_ := set . "d" $d }}{{ $_ := set $d "up" . }}{{ deepCopy . }}"#,
    ] {
        let err = run_helm(src, &map(&[])).expect_err(src);
        assert!(err.contains("contains itself"), "{src}: {err}");
    }
    // Shared but not cyclic: small in memory, exponential to print; the
    // value budget stops it at once.
    let err = run_helm(
        r#"{{ $d := dict }}{{ range until 80 }}{{ $d = dict "a" $d "b" $d }}{{ end }}{{ $d }}"#,
        &map(&[]),
    )
    .expect_err("budget");
    assert!(err.contains("MiB"), "{err}");
}

/// nats' `tplYamlItr` pattern: a recursion over `.Values` that hands the
/// root context to each level in a `dict`. A Go map is a reference, so
/// this copies nothing; it renders, where charging the context's contents
/// again at every `dict` (500 KiB, 2,000 times) went past the value budget.
#[test]
fn passing_the_root_context_down_a_recursion_copies_nothing() {
    let values: BTreeMap<String, V> = (0..2000)
        .map(|i| (format!("key{i:04}"), s(&"v".repeat(200))))
        .collect();
    let dot = map(&[("Values", V::map(values))]);
    let set = helm_set(&[
        (
            "_h.tpl",
            r#"{{- define "walk" -}}{{- range $k, $v := .value -}}{{ include "leaf" (dict "ctx" $.ctx "key" $k) }}{{- end -}}{{- end -}}
{{- define "leaf" -}}{{ if hasKey .ctx.Values .key }}.{{ end }}{{- end -}}"#,
        ),
        (
            "t",
            r#"{{ include "walk" (dict "ctx" $ "value" .Values) | len }}"#,
        ),
    ]);
    assert_eq!(set.execute("t", &dot).as_deref(), Ok("2000"));
}

/// A map measured once is not walked again, but its height still counts
/// where it is placed: wrapping it deeper and deeper stops at the depth
/// bound, as walking it whole would; 299 levels are within it.
#[test]
fn a_measured_map_still_counts_its_depth() {
    let nest = |n: usize| {
        format!(
            r#"{{{{ $d := dict }}}}{{{{ range until {n} }}}}{{{{ $d = dict "a" $d }}}}{{{{ end }}}}{{{{ len $d }}}}"#
        )
    };
    let err = run_helm(&nest(400), &map(&[])).expect_err("too deep");
    assert!(err.contains("nests deeper than 300"), "{err}");
    assert_eq!(run_helm(&nest(299), &map(&[])).as_deref(), Ok("1"));
}

#[test]
fn case_and_wrap_functions_match_sprig() {
    let run = |src: &str| {
        helm_set(&[("t", src)])
            .execute("t", &V::Nil)
            .expect("renders")
    };
    // sem-string-funcs' expected output.
    assert_eq!(
        run("{{ camelcase \"http_server_name\" }}"),
        "HttpServerName"
    );
    assert_eq!(
        run("{{ snakecase \"HTTPServerName\" }}"),
        "http_server_name"
    );
    assert_eq!(
        run("{{ kebabcase \"HTTPServerName\" }}"),
        "http-server-name"
    );
    assert_eq!(
        run("{{ wrap 10 \"the quick brown fox jumps over the lazy dog\" }}"),
        "the quick\nbrown fox\njumps over\nthe lazy\ndog"
    );
    assert_eq!(
        run("{{ wrapWith 5 \"\\t\" \"Hello World\" }}"),
        "Hello\tWorld"
    );
    // xstrings' documented samples (v1.5.0 `convert.go`).
    for (from, pascal, snake) in [
        ("some_words", "SomeWords", "some_words"),
        ("_complex__case_", "_Complex_Case_", "_complex__case_"),
        ("GOLANG_IS_GREAT", "GolangIsGreat", "golang_is_great"),
        ("FirstName", "FirstName", "first_name"),
        ("NoHTTPS", "NoHTTPS", "no_https"),
        ("http2xx", "Http2xx", "http_2xx"),
        ("HTTP20xOK", "Http20xOK", "http_20x_ok"),
        ("Duration2m3s", "Duration2m3s", "duration_2m3s"),
        ("Bld4Floor3rd", "Bld4Floor3rd", "bld4_floor_3rd"),
        ("GO PATH", "GoPath", "go_path"),
    ] {
        assert_eq!(
            run(&format!("{{{{ camelcase {from:?} }}}}")),
            pascal,
            "{from}"
        );
        assert_eq!(
            run(&format!("{{{{ snakecase {from:?} }}}}")),
            snake,
            "{from}"
        );
    }
    // goutils: a long word is kept whole by `wrap` and cut by `wrapWith`.
    assert_eq!(run("{{ wrap 3 \"abcdef gh\" }}"), "abcdef\ngh");
    assert_eq!(run("{{ wrapWith 3 \"|\" \"abcdef gh\" }}"), "abc|def|gh");
    let err = helm_set(&[("t", "{{ snakecase \"Ünï\" }}")])
        .execute("t", &V::Nil)
        .expect_err("not ASCII");
    assert!(err.contains("not supported by gitops-lint"), "{err}");
}

#[test]
fn helm_from_yaml_reads_yaml_1_1_and_keeps_dates_as_text() {
    // sigs.k8s.io/yaml, as loki-distributed's `tpl … | fromYaml` relies on.
    let out = helm_set(&[(
        "t",
        r#"{{ $m := "from: 2020-09-07\nflag: on\n" | fromYaml }}{{ toYaml $m }}"#,
    )])
    .execute("t", &V::Nil);
    assert_eq!(out.as_deref(), Ok("flag: true\nfrom: \"2020-09-07\""));
}

#[test]
fn helm_from_yaml_of_text_that_does_not_decode_gives_helms_error_value() {
    // Each result as helm v3.17.1 prints it (checked with the binary):
    // go-yaml v2's wording, its line left out on the first line (0), and
    // encoding/json's for a value of another type.
    for (src, want) in [
        (
            r#"{{ "[1, 2" | fromYaml | toJson }}"#,
            r#"{"Error":"error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'"}"#,
        ),
        (
            r#"{{ "a: b: c" | fromYaml | toJson }}"#,
            r#"{"Error":"error converting YAML to JSON: yaml: mapping values are not allowed in this context"}"#,
        ),
        (
            r#"{{ "x: [" | fromYamlArray | toJson }}"#,
            r#"["error converting YAML to JSON: yaml: line 1: did not find expected node content"]"#,
        ),
        (
            r#"{{ "a: 1" | fromYamlArray | toJson }}"#,
            r#"["error unmarshaling JSON: while decoding JSON: json: cannot unmarshal object into Go value of type []interface {}"]"#,
        ),
        (
            r#"{{ "- a" | fromYaml | toJson }}"#,
            r#"{"Error":"error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}"}"#,
        ),
        (
            r#"{{ "a: *x" | fromYaml | toJson }}"#,
            r#"{"Error":"error converting YAML to JSON: yaml: unknown anchor 'x' referenced"}"#,
        ),
        // Only the first document is read: the second's error is not seen.
        (
            r#"{{ "a: 1\n---\nb: [" | fromYaml | toJson }}"#,
            r#"{"a":1}"#,
        ),
    ] {
        let out = helm_set(&[("t", src)]).execute("t", &V::Nil);
        assert_eq!(out.as_deref(), Ok(want), "{src}");
    }
    let out = helm_set(&[("t", r#"{{ ("" | fromYaml) | len }}"#)]).execute("t", &V::Nil);
    assert_eq!(out.as_deref(), Ok("0"));
}

#[test]
fn helm_from_yaml_of_an_error_not_worded_as_go_yaml_is_refused() {
    // helm: `yaml: invalid map key: []interface {}{"a", "b"}` (Go's %#v),
    // not reproduced: refused rather than worded otherwise.
    let err = helm_set(&[("t", r#"{{ "[a, b]: c" | fromYaml }}"#)])
        .execute("t", &V::Nil)
        .expect_err("refused");
    assert!(err.contains("cannot be evaluated offline"), "{err}");
}

// Go's `int` and `int64` are different types. Checked against helm
// v3.17.1: `helm template` of a chart whose template held these lines
// printed exactly this (template literals, `len`, `int`, `atoi`, `until`
// are `int`; Sprig's arithmetic and `int64` are `int64`; `eq` and `lt`
// compare them as one kind, `deepEqual`, `has` and `uniq` do not; a float
// out of `int64`'s range converts as on linux/amd64).
#[test]
fn int_and_int64_are_told_apart_as_go_does() {
    let src = r#"a: {{ kindOf 1 }} {{ typeOf 1 }} {{ printf "%T" 1 }}
b: {{ kindOf (add 1 2) }} {{ typeOf (add 1 2) }} {{ printf "%T" (add 1 2) }}
c: {{ kindOf (len "ab") }} {{ typeOf (len "ab") }}
e: {{ deepEqual 1 (add 0 1) }} {{ deepEqual 1 1 }} {{ deepEqual (add 0 1) (add1 0) }}
f: {{ eq 1 (add 0 1) }} {{ lt 1 (add 1 1) }} {{ eq (add 0 1) 1 }}
g: {{ kindOf (int 3) }} {{ kindOf (int64 3) }} {{ kindOf (atoi "3") }} {{ kindOf (max 1 2) }} {{ kindOf (min 1 2) }} {{ kindOf (biggest 1 2) }} {{ kindOf (sub 3 1) }} {{ kindOf (mul 2 2) }} {{ kindOf (div 4 2) }} {{ kindOf (mod 4 3) }} {{ kindOf (add1 1) }}
h: {{ kindOf (first (until 2)) }} {{ kindOf (until 2) }} {{ kindIs "int" 1 }} {{ kindIs "int64" 1 }} {{ typeIs "int64" (add 1 1) }}
i: {{ duration 95 }} {{ duration (add 95 0) }} {{ durationRound 5000000000 }} {{ durationRound (mul 5000000000 1) }}
j: {{ has 1 (list (add 1 0)) }} {{ has (add 1 0) (list (add 1 0)) }} {{ list 1 (add 0 1) | uniq }} {{ printf "%s" 3 }} {{ printf "%s" (add 1 2) }}
l: {{ int64 (float64 "1e19") }} {{ int (float64 "NaN") }} {{ add (float64 "-1e19") 0 }} {{ int64 (float64 "9.2233720368547748e18") }}
k: {{ trunc (add 1 1) "abc" }}
"#;
    let set = helm_set(&[("t", src)]);
    let err = set
        .execute("t", &map(&[("Values", map(&[]))]))
        .expect_err("trunc takes an int");
    // helm v3.17.1: `... at <1>: wrong type for value; expected int; got
    // int64` (text/template `validateType`: `trunc` takes an `int`).
    assert!(
        err.contains("wrong type for value; expected int; got int64"),
        "{err}"
    );
    let src = src.replace(
        "k: {{ trunc (add 1 1) \"abc\" }}\n",
        "k: {{ trunc 2 \"abc\" }}\n",
    );
    let set = helm_set(&[("t", &src)]);
    let out = set
        .execute("t", &map(&[("Values", map(&[]))]))
        .expect("renders");
    assert_eq!(
        out,
        "a: int int int
b: int64 int64 int64
c: int int
e: false true true
f: true true true
g: int int64 int int64 int64 int64 int64 int64 int64 int64 int64
h: int slice true false true
i: 0s 1m35s 0s 5s
j: false true [1 1] %!s(int=3) %!s(int64=3)
l: -9223372036854775808 -9223372036854775808 -9223372036854775808 9223372036854774784
k: ab
"
    );
}

// text/template checks each argument against the function's parameter
// before the call, and words and places that error itself (`evalArg`,
// `validateType`): at the argument, or at the node evaluated last inside a
// parenthesized pipeline; a constant as `expected integer; found "a"`; a
// nil from a pipeline as no value. helm v3.17.1 printed these (after
// `Error: `) for a chart whose `templates/d.yaml` held each template, with
// values `num: 1` and `s: x`.
#[test]
fn a_wrongly_typed_argument_is_reported_where_text_template_checks_it() {
    let cases = [
        (
            r#"x: {{ trunc .Values.s "abc" }}"#,
            r#"template: c/templates/d.yaml:1:19: executing "c/templates/d.yaml" at <.Values.s>: wrong type for value; expected int; got string"#,
        ),
        (
            r#"x: {{ trunc (add 1 1) "abc" }}"#,
            r#"template: c/templates/d.yaml:1:19: executing "c/templates/d.yaml" at <1>: wrong type for value; expected int; got int64"#,
        ),
        (
            r#"x: {{ trunc "a" "b" }}"#,
            r#"template: c/templates/d.yaml:1:12: executing "c/templates/d.yaml" at <"a">: expected integer; found "a""#,
        ),
        (
            r#"x: {{ trunc 1.5 "b" }}"#,
            r#"template: c/templates/d.yaml:1:12: executing "c/templates/d.yaml" at <1.5>: expected integer; found 1.5"#,
        ),
        (
            r"x: {{ trunc 2 5 }}",
            r#"template: c/templates/d.yaml:1:14: executing "c/templates/d.yaml" at <5>: expected string; found 5"#,
        ),
        (
            r"x: {{ upper nil }}",
            r#"template: c/templates/d.yaml:1:12: executing "c/templates/d.yaml" at <nil>: cannot assign nil to string"#,
        ),
        (
            r"x: {{ .Values.nope | upper }}",
            r#"template: c/templates/d.yaml:1:21: executing "c/templates/d.yaml" at <upper>: invalid value; expected string"#,
        ),
        (
            r"x: {{ upper (.Values.nope) }}",
            r#"template: c/templates/d.yaml:1:20: executing "c/templates/d.yaml" at <.Values.nope>: invalid value; expected string"#,
        ),
        (
            r"x: {{ upper .Values.nope }}",
            r#"template: c/templates/d.yaml:1:19: executing "c/templates/d.yaml" at <.Values.nope>: wrong type for value; expected string; got interface {}"#,
        ),
        (
            r"x: {{ .Values.num | upper }}",
            r#"template: c/templates/d.yaml:1:20: executing "c/templates/d.yaml" at <upper>: wrong type for value; expected string; got float64"#,
        ),
        (
            r"x: {{ upper (list 1 2 | len) }}",
            r#"template: c/templates/d.yaml:1:24: executing "c/templates/d.yaml" at <len>: wrong type for value; expected string; got int"#,
        ),
        (
            r#"{{ $x := "a" }}x: {{ trunc $x "b" }}"#,
            r#"template: c/templates/d.yaml:1:27: executing "c/templates/d.yaml" at <$x>: wrong type for value; expected int; got string"#,
        ),
        (
            r#"x: {{ derivePassword -1 "long" "p" "u" "s" }}"#,
            r#"template: c/templates/d.yaml:1:21: executing "c/templates/d.yaml" at <-1>: expected unsigned integer; found -1"#,
        ),
        (
            r"x: {{ date 5 now }}",
            r#"template: c/templates/d.yaml:1:11: executing "c/templates/d.yaml" at <5>: expected string; found 5"#,
        ),
        (
            r"x: {{ upper true }}",
            r#"template: c/templates/d.yaml:1:12: executing "c/templates/d.yaml" at <true>: expected string; found true"#,
        ),
    ];
    let name = "c/templates/d.yaml";
    for (src, helm) in cases {
        let set = helm_set(&[(name, src)]);
        let err = set
            .execute(name, &helm_dot("c", "num: 1\ns: x", name))
            .expect_err(src);
        assert_eq!(err, helm, "{src}");
    }
    // A function's own error about what it was given is still its own
    // (helm v3.17.1: `dig` asserts its last argument is a map).
    let set = helm_set(&[(name, r#"x: {{ dig "a" "d" 5 }}"#)]);
    assert_eq!(
        set.execute(name, &helm_dot("c", "{}", name))
            .expect_err("dig"),
        r#"template: c/templates/d.yaml:1:6: executing "c/templates/d.yaml" at <dig "a" "d" 5>: error calling dig: interface conversion: interface {} is int, not map[string]interface {}"#
    );
    // The same value of the right type renders.
    let set = helm_set(&[(name, r#"x: {{ trunc 2 "abc" | upper }}"#)]);
    assert_eq!(
        set.execute(name, &helm_dot("c", "{}", name)).as_deref(),
        Ok("x: AB")
    );
}

/// One template `src` of chart `c` executed with `values`, whose map is a
/// `chartutil.Values` as the renderer makes every chart's `.Values`.
fn helm_run(src: &str, values: &str) -> Result<String, String> {
    let set = helm_set(&[("c/templates/t.yaml", src)]);
    let dot = helm_dot("c", values, "c/templates/t.yaml");
    if let V::Map(top) = &dot {
        if let Some(V::Map(v)) = top.get("Values") {
            v.mark_values_table();
        }
    }
    set.execute("c/templates/t.yaml", &dot)
        .map(|out| out.replace("<no value>", ""))
}

#[test]
fn a_missing_value_given_to_a_map_parameter_is_the_nil_map() {
    // helm v3.17.1 of this source printed `false [] "" {} {"x":"z"}`:
    // text/template's `validateType` gives a parameter that can be nil its
    // zero value when a parenthesised pipeline or a variable holds no value.
    let src = r#"{{ hasKey (.Values.nope) "x" }} {{ keys (index .Values "cni") }} {{ get (.Values.nope) "x" | quote }} {{ mustMergeOverwrite (dict) (.Values.nope) | toJson }}{{ $val := .Values.apps.nope }} {{ merge $val.labels .Values.labels | toJson }}"#;
    assert_eq!(
        helm_run(src, "labels: {x: z}\napps: {a: {name: a}}").as_deref(),
        Ok(r#"false [] "" {} {"x":"z"}"#)
    );
    // A nil `interface{}` read straight from a map stays a type error
    // (helm v3.17.1: `at <$val.labels>: wrong type for value; expected
    // map[string]interface {}; got interface {}`).
    let err = helm_run(
        "{{ range $k, $val := .Values.apps }}{{ merge $val.labels dict }}{{ end }}",
        "apps: {a: {name: a}}",
    )
    .expect_err("a nil interface is no map");
    assert!(
        err.ends_with("at <$val.labels>: wrong type for value; expected map[string]interface {}; got interface {}"),
        "{err}"
    );
}

#[test]
fn a_field_of_a_variable_holding_no_value_is_empty() {
    // helm v3.17.1 printed `a3: ""` for `$m := .Values.missing` then
    // `$m.type` (`evalPipeline` turns the nil interface into the invalid
    // value, whose fields are zero).
    assert_eq!(
        helm_run(
            "{{- $m := .Values.missing }}a3: \"{{ $m.type }}\" {{ $m.a.b }}",
            "x: 1"
        )
        .as_deref(),
        Ok("a3: \"\" ")
    );
}

#[test]
fn tpl_of_an_empty_or_blank_string_renders_it() {
    // helm v3.17.1 printed `a5: "" " "` and, for the nested call, `x: x`:
    // the string's own (empty) tree runs, not the enclosing `tpl` string.
    assert_eq!(
        helm_run(r#"a5: "{{ tpl "" . }}" "{{ tpl " " . }}""#, "x: 1").as_deref(),
        Ok(r#"a5: "" " ""#)
    );
    assert_eq!(
        helm_run(r#"x: {{ tpl "{{ tpl \"\" . }}x" . }}"#, "x: 1").as_deref(),
        Ok("x: x")
    );
    assert_eq!(
        helm_run(r"x: {{ tpl .Values.t . }}y", "t: ''").as_deref(),
        Ok("x: y")
    );
}

#[test]
fn quote_and_printf_q_escape_as_strconv_quote() {
    // helm v3.17.1: `{{ printf "%q" "a\x01\x7f\u00ad\u2028é\t" }}` and
    // `{{ quote ... }}` both printed `"a\x01\x7f\u00ad\u2028é\t"`.
    let want = r#""a\x01\x7f\u00ad\u2028é\t" "a\x01\x7f\u00ad\u2028é\t""#;
    assert_eq!(
        helm_run(
            r#"{{ printf "%q" "a\x01\x7f\u00ad\u2028é\t" }} {{ quote "a\x01\x7f\u00ad\u2028é\t" }}"#,
            "x: 1"
        )
        .as_deref(),
        Ok(want)
    );
}

#[test]
fn values_methods_answer_as_chartutil_values() {
    // helm v3.17.1 of these sources, values `{YAML: key, a: {b: {c: 1, d: x}}}`;
    // a table read as a field is a plain map (`.Values.a.YAML` is nil).
    let values = "YAML: key\na:\n  b:\n    c: 1\n    d: x\n";
    assert_eq!(
        helm_run(
            r#"{{ .Values.YAML | quote }} {{ .Values.AsMap | toJson }} {{ .Values.Table "a.b" | toJson }} {{ (.Values.Table "a").YAML | quote }} {{ .Values.PathValue "a.b.c" }} {{ .Values.PathValue "a.b.d" }} {{ .Values.a.YAML | quote }}"#,
            values
        )
        .as_deref(),
        Ok(r#""YAML: key\na:\n  b:\n    c: 1\n    d: x\n" {"YAML":"key","a":{"b":{"c":1,"d":"x"}}} {"c":1,"d":"x"} "b:\n  c: 1\n  d: x\n" 1 x "#)
    );
    for (src, want) in [
        (
            r#"{{ .Values.Table "a.x" }}"#,
            r#"at <.Values.Table>: error calling Table: "x" is not a table"#,
        ),
        (
            r#"{{ .Values.PathValue "a.b" }}"#,
            r#"at <.Values.PathValue>: error calling PathValue: "b" is not a value"#,
        ),
        (
            r#"{{ .Values.PathValue "" }}"#,
            "at <.Values.PathValue>: error calling PathValue: YAML path cannot be empty",
        ),
        (
            r#"{{ .Values.PathValue "zz" }}"#,
            r#"at <.Values.PathValue>: error calling PathValue: "zz" is not a value"#,
        ),
        (
            "{{ .Values.Table }}",
            "at <.Values.Table>: wrong number of args for Table: want 1 got 0",
        ),
    ] {
        let err = helm_run(src, values).expect_err(src);
        assert!(err.ends_with(want), "{src}: {err}");
    }
}

#[test]
fn a_pipe_before_the_closing_delimiter_ends_the_pipeline() {
    // helm v3.17.1 printed `a: {"x":1}`, `b: 1`, `c: 1` (a chart of
    // DataDog/helm-charts ends an action with `| nindent 4 | }}`).
    assert_eq!(
        helm_run(
            "a: {{ .Values.a | toJson | }}\nb: {{ (.Values.a.x | ) }}\n{{- $c := .Values.a.x | }}\nc: {{ $c }}",
            "a: {x: 1}"
        )
        .as_deref(),
        Ok("a: {\"x\":1}\nb: 1\nc: 1")
    );
}

#[test]
fn a_missing_value_given_to_a_slice_parameter_is_the_nil_slice() {
    // helm/charts stable/pomerium: `genSignedCert $cn (default nil
    // .Values.ips) ...` with `ips: []`, which helm v3.17.1 renders.
    assert_eq!(
        helm_run(
            r#"{{ $ca := genCA "ca" 1 }}{{ $kp := genSignedCert "a" (default nil .Values.ips) (list "b") 1 $ca }}{{ hasPrefix "-----BEGIN" $kp.Cert }}"#,
            "ips: []"
        )
        .as_deref(),
        Ok("true")
    );
}
