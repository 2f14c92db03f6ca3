use super::*;
use serde_json::json;

fn run(schema: &Value, values: &Value) -> Verdict {
    validate(schema, &V::from_json(values))
}

/// The message helm prints for `values` (after the chart's name).
fn message(schema: &Value, values: &Value) -> String {
    match run(schema, values) {
        Verdict::Invalid(Ok(m)) => m,
        other => panic!("{schema} {values}: {other:?}"),
    }
}

fn props(p: Value) -> Value {
    json!({ "properties": p })
}

/// `uniqueItems` compares every pair: a long list is bounded by the
/// step budget (refused), never an unbounded check; a short one is
/// judged.
#[test]
fn unique_items_of_a_long_list_is_bounded() {
    let schema = props(json!({"l": {"uniqueItems": true}}));
    let long: Vec<Value> = (0..3000).map(Value::from).collect();
    match run(&schema, &json!({ "l": long })) {
        Verdict::Unsupported(why) => assert!(why.contains("too many steps"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(run(&schema, &json!({"l": [1, 2, 3]})), Verdict::Valid);
}

#[test]
fn messages_are_v6s() {
    // Each expected text is what helm v4.1.4 (jsonschema/v6 v6.0.2)
    // printed for the same schema and values, below `c:`.
    let d7 = "http://json-schema.org/draft-07/schema#";
    for (schema, values, want) in [
            (props(json!({"replicas": {"type": "integer"}})), json!({"replicas": "2"}),
             "- at '/replicas': got string, want integer"),
            (props(json!({"p": {"type": ["string", "null", "integer"]}})), json!({"p": [1]}),
             "- at '/p': got array, want null or integer or string"),
            (props(json!({"policy": {"type": "string"}})), json!({"policy": null}),
             "- at '/policy': got null, want string"),
            (json!({"required": ["image"]}), json!({"a": 1}), "- at '': missing property 'image'"),
            (json!({"required": ["image", "b"]}), json!({"a": 1}),
             "- at '': missing properties 'image', 'b'"),
            (props(json!({"image": {"type": "object", "required": ["tag"]}})),
             json!({"image": {"repo": "x"}}), "- at '/image': missing property 'tag'"),
            (props(json!({"mode": {"enum": ["simple", "advanced"]}})), json!({"mode": "x"}),
             "- at '/mode': value must be one of 'simple', 'advanced'"),
            (props(json!({"mode": {"enum": ["simple"]}})), json!({"mode": "x"}),
             "- at '/mode': value must be 'simple'"),
            (props(json!({"mode": {"enum": [1, 2, "a", null, true]}})), json!({"mode": "x"}),
             "- at '/mode': value must be one of 1, 2, 'a', <nil>, true"),
            (props(json!({"mode": {"enum": [{"a": 1}]}})), json!({"mode": "x"}),
             "- at '/mode': 'enum' failed"),
            (props(json!({"mode": {"const": "on"}})), json!({"mode": "x"}),
             "- at '/mode': value must be 'on'"),
            (props(json!({"mode": {"const": 3}})), json!({"mode": 4}), "- at '/mode': value must be 3"),
            (props(json!({"mode": {"const": {"a": 1}}})), json!({"mode": 4}),
             "- at '/mode': 'const' failed"),
            (json!({"additionalProperties": false, "properties": {"a": {}}}), json!({"a": 1, "x": 1}),
             "- at '': additional properties 'x' not allowed"),
            (json!({"additionalProperties": {"type": "string"}}), json!({"x": 1}),
             "- at '/x': got number, want string"),
            (props(json!({"a": {"properties": {"level": {"pattern": "^(debug|info)$"}}}})),
             json!({"a": {"level": "x"}}),
             "- at '/a/level': 'x' does not match pattern '^(debug|info)$'"),
            (props(json!({"a": {"pattern": "^a'b\"c\\\\d$"}})), json!({"a": "it's \"q\" \\ \t"}),
             "- at '/a': 'it\\'s \"q\" \\\\ \\t' does not match pattern '^a\\'b\"c\\\\\\\\d$'"),
            (props(json!({"a": {"pattern": "^a"}})), json!({"a": "é"}),
             "- at '/a': 'é' does not match pattern '^a'"),
            (props(json!({"a": {"minLength": 3}})), json!({"a": "ab"}), "- at '/a': minLength: got 2, want 3"),
            (props(json!({"a": {"maxLength": 1}})), json!({"a": "ab"}), "- at '/a': maxLength: got 2, want 1"),
            (props(json!({"num": {"minimum": 3}})), json!({"num": 1}), "- at '/num': minimum: got 1, want 3"),
            (props(json!({"num": {"maximum": 10}})), json!({"num": 12_345_678}),
             "- at '/num': maximum: got 1.2345678×10⁰⁷, want 10"),
            (props(json!({"num": {"exclusiveMaximum": 3}})), json!({"num": 3}),
             "- at '/num': exclusiveMaximum: got 3, want 3"),
            (json!({"$schema": "http://json-schema.org/draft-04/schema#",
                    "properties": {"num": {"maximum": 3, "exclusiveMaximum": true}}}),
             json!({"num": 3}), "- at '/num': exclusiveMaximum: got 3, want 3"),
            (props(json!({"num": {"multipleOf": 0.01}})), json!({"num": 0.075}),
             "- at '/num': multipleOf: got 0.075, want 0.01"),
            (props(json!({"l": {"minItems": 2}})), json!({"l": [1]}), "- at '/l': minItems: got 1, want 2"),
            (props(json!({"l": {"maxItems": 0}})), json!({"l": [1]}), "- at '/l': maxItems: got 1, want 0"),
            (props(json!({"l": {"uniqueItems": true}})), json!({"l": [1, 2, 1.0]}),
             "- at '/l': items at 0 and 2 are equal"),
            (props(json!({"l": {"items": {"type": "string"}}})), json!({"l": ["a", 1]}),
             "- at '/l/1': got number, want string"),
            (props(json!({"l": {"items": {"type": "string"}}})), json!({"l": [2, 1]}),
             "- at '/l/0': got number, want string\n- at '/l/1': got number, want string"),
            (props(json!({"l": {"prefixItems": [{"type": "string"}], "items": false}})),
             json!({"l": ["a", 1]}), "- at '/l/0': false schema"),
            (json!({"$schema": d7, "properties": {"l": {"items": [{"type": "string"}], "additionalItems": false}}}),
             json!({"l": ["a", 1, 2]}), "- at '/l': last 2 additionalItem(s) not allowed"),
            (props(json!({"l": {"contains": {"type": "string"}}})), json!({"l": [1, 2]}),
             "- at '/l': no items match contains schema\n  - at '/l/0': got number, want string\n  - at '/l/1': got number, want string"),
            (props(json!({"l": {"contains": {"type": "string"}, "minContains": 2}})), json!({"l": [1, "a"]}),
             "- at '/l': min 2 items required to match contains schema, but matched 1 items at 1\n  - at '/l/0': got number, want string"),
            (props(json!({"l": {"contains": {"type": "string"}, "maxContains": 1}})), json!({"l": ["b", "a"]}),
             "- at '/l': max 1 items required to match contains schema, but matched 2 items at 0 1"),
            (props(json!({"p": {"anyOf": [{"type": "string"}, {"type": "integer"}]}})), json!({"p": [1]}),
             "- at '/p': 'anyOf' failed\n  - at '/p': got array, want string\n  - at '/p': got array, want integer"),
            (props(json!({"p": {"oneOf": [{"type": "string"}, {"type": "integer"}]}})), json!({"p": [1]}),
             "- at '/p': 'oneOf' failed, none matched\n  - at '/p': got array, want string\n  - at '/p': got array, want integer"),
            (props(json!({"p": {"oneOf": [{"type": "number"}, {"type": "integer"}]}})), json!({"p": 1}),
             "- at '/p': 'oneOf' failed, subschemas 0, 1 matched"),
            (props(json!({"p": {"allOf": [{"type": "string"}, {"minimum": 3}]}})), json!({"p": 1}),
             "- at '/p': 'allOf' failed\n  - at '/p': got number, want string\n  - at '/p': minimum: got 1, want 3"),
            (props(json!({"p": {"not": {"type": "string"}}})), json!({"p": "a"}), "- at '/p': 'not' failed"),
            (json!({"if": {"properties": {"a": {"const": 1}}}, "then": {"required": ["b"]}}), json!({"a": 1}),
             "- at '': missing property 'b'"),
            (props(json!({"p": false})), json!({"p": 1}), "- at '/p': false schema"),
            // Draft-07: a `$ref` replaces its siblings but `const`.
            (json!({"$schema": d7, "properties": {"p": {"$ref": "#/definitions/x", "type": "string"}},
                    "definitions": {"x": {"type": "integer"}}}),
             json!({"p": "a"}), "- at '/p': got string, want integer"),
            (json!({"$schema": d7, "properties": {"p": {"$ref": "#/definitions/x", "const": "a"}},
                    "definitions": {"x": {}}}),
             json!({"p": "b"}), "- at '/p': value must be 'a'"),
            // 2020-12: beside them.
            (json!({"properties": {"p": {"$ref": "#/$defs/x", "minimum": 5}}, "$defs": {"x": {"type": "integer"}}}),
             json!({"p": 1}), "- at '/p': minimum: got 1, want 5"),
            (json!({"properties": {"p": {"$ref": "#/$defs/x"}},
                    "$defs": {"x": {"type": "object", "required": ["a"], "minProperties": 5}}}),
             json!({"p": {"b": 1}}),
             "- at '/p': validation failed\n  - at '/p': minProperties: got 1, want 5\n  - at '/p': missing property 'a'"),
            (json!({"$schema": d7, "$ref": "#/definitions/V", "definitions": {"V": {"required": ["a"]}}}),
             json!({"b": 1}), "- at '': missing property 'a'"),
            (json!({"$schema": d7, "$ref": "#/definitions/V",
                    "definitions": {"V": {"required": ["a"], "minProperties": 3}}}),
             json!({"b": 1}),
             "- at '': validation failed\n  - at '': minProperties: got 1, want 3\n  - at '': missing property 'a'"),
            (json!({"dependencies": {"a": ["b"]}}), json!({"a": 1}),
             "- at '': properties 'b' required, if 'a' exists"),
            (json!({"dependentRequired": {"a": ["b", "c"]}}), json!({"a": 1}),
             "- at '': properties 'b', 'c' required, if 'a' exists"),
            (json!({"propertyNames": {"maxLength": 2}}), json!({"abc": 1}),
             "- at '': invalid propertyName 'abc'\n  - at '': maxLength: got 3, want 2"),
            (props(json!({"o": {"minProperties": 2}})), json!({"o": {"a": 1}}),
             "- at '/o': minProperties: got 1, want 2"),
            (props(json!({"o": {"required": ["x"], "properties": {"a": {"type": "string"}}}})),
             json!({"o": {"a": 1}}),
             "- at '/o': missing property 'x'\n- at '/o/a': got number, want string"),
        ] {
            assert_eq!(message(&schema, &values), want, "{schema} {values}");
        }
}

#[test]
fn verdicts_follow_the_draft() {
    let valid = |s: Value, v: Value| assert_eq!(run(&s, &v), Verdict::Valid, "{s} {v}");
    let fails = |s: Value, v: Value| {
        assert!(matches!(run(&s, &v), Verdict::Invalid(_)), "{s} {v}");
    };
    let refused = |s: Value, v: Value| {
        assert!(matches!(run(&s, &v), Verdict::Unsupported(_)), "{s} {v}");
    };
    let d7 = "http://json-schema.org/draft-07/schema#";
    // Seven hundredths are a multiple of a hundredth (big.Rat).
    valid(
        props(json!({"n": {"multipleOf": 0.01}})),
        json!({"n": 0.07}),
    );
    // A whole float is an integer.
    valid(props(json!({"n": {"type": "integer"}})), json!({"n": 3.0}));
    fails(props(json!({"n": {"type": "integer"}})), json!({"n": 3.5}));
    // Draft-07 ignores a `$ref`'s `type` sibling; 2020-12 does not.
    valid(
        json!({"$schema": d7, "properties": {"p": {"$ref": "#/definitions/x", "type": "string"}},
                   "definitions": {"x": {"type": "integer"}}}),
        json!({"p": 1}),
    );
    fails(
        json!({"properties": {"p": {"$ref": "#/$defs/x", "type": "string"}},
                   "$defs": {"x": {"type": "integer"}}}),
        json!({"p": 1}),
    );
    // `items` as an array is a tuple before 2020-12 and a compile
    // error in it.
    fails(
        json!({"$schema": d7, "properties": {"l": {"items": [{"type": "string"}]}}}),
        json!({"l": [1]}),
    );
    refused(
        json!({"properties": {"l": {"items": [{"type": "string"}]}}}),
        json!({"l": [1]}),
    );
    // `format` is asserted before 2019-09 only: not judged natively
    // on a string there, ignored on other values and after.
    valid(
        props(json!({"p": {"format": "ipv4"}})),
        json!({"p": "nope"}),
    );
    valid(
        json!({"$schema": d7, "properties": {"p": {"format": "ipv4"}}}),
        json!({"p": 5}),
    );
    let f7 = |f: &str| json!({"$schema": d7, "properties": {"p": {"format": f}}});
    fails(f7("ipv4"), json!({"p": "x"}));
    fails(f7("ipv4"), json!({"p": "01.2.3.4"}));
    valid(f7("ipv4"), json!({"p": "10.0.0.255"}));
    valid(
        f7("uuid"),
        json!({"p": "123E4567-e89b-12d3-a456-426614174000"}),
    );
    fails(f7("uuid"), json!({"p": "123e4567"}));
    valid(f7("hostname"), json!({"p": "api.example.com."}));
    fails(f7("hostname"), json!({"p": "-x.example.com"}));
    valid(f7("json-pointer"), json!({"p": "/a/~1b"}));
    fails(f7("json-pointer"), json!({"p": "/a~2"}));
    valid(f7("uri"), json!({"p": "https://charts.example.com/x"}));
    refused(f7("uri"), json!({"p": "relative/x"}));
    // helm v4.1.4 accepted the first six and refused the next six.
    for ok in [
        "admin@example.com",
        "a.b+c@sub.example.com.",
        "\"q d\"@example.com",
        "\"x@y\"@example.com",
        "a@[10.0.0.1]",
        "{x}~@e-x.io",
    ] {
        valid(f7("email"), json!({ "p": ok }));
    }
    for bad in [
        "a..b@example.com",
        ".a@example.com",
        "a@-example.com",
        "a b@example.com",
        "a@[300.0.0.1]",
        "no-at-sign",
    ] {
        fails(f7("email"), json!({ "p": bad }));
    }
    refused(f7("email"), json!({"p": "a@[IPv6:::1]"}));
    // `dependentRequired` is a 2019-09 keyword, `dependencies` all
    // drafts'.
    valid(
        json!({"$schema": d7, "dependentRequired": {"a": ["b"]}}),
        json!({"a": 1}),
    );
    fails(
        json!({"dependencies": {"a": {"required": ["b"]}}}),
        json!({"a": 1}),
    );
    // An unresolved URN is `true`.
    valid(
        props(json!({"p": {"$ref": "urn:example:thing"}})),
        json!({"p": 1}),
    );
    // What helm would load, or what is not implemented, is refused.
    refused(
        props(json!({"p": {"$ref": "https://example.com/s.json"}})),
        json!({}),
    );
    refused(props(json!({"p": {"$ref": "other.json#/x"}})), json!({}));
    refused(json!({"$schema": "https://example.com/meta"}), json!({}));
    refused(json!({"unevaluatedProperties": false}), json!({}));
    refused(json!({"$defs": {"a": {"$anchor": "a"}}}), json!({}));
    // A `$ref` cycle at one value ends.
    refused(json!({"$ref": "#"}), json!({}));
    refused(
        json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
                       "$ref": "#/$defs/a"}),
        json!({}),
    );
    // Schemas the metaschema refuses do not compile.
    refused(props(json!({"p": {"type": "strin"}})), json!({}));
    refused(json!({"required": "a"}), json!({}));
    refused(
        json!({"$schema": d7, "properties": {"p": {"examples": "x"}}}),
        json!({}),
    );
    refused(
        json!({"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"p": true}}),
        json!({}),
    );
    refused(
        json!({"$schema": "http://json-schema.org/draft-04/schema#", "required": []}),
        json!({}),
    );
    // Draft-07's `enum` holds distinct values; 2020-12's need not.
    refused(
        json!({"$schema": d7, "properties": {"p": {"enum": [1, 1]}}}),
        json!({}),
    );
    valid(props(json!({"p": {"enum": [1, 1]}})), json!({}));
    refused(props(json!({"p": {"$ref": "#/$defs/missing"}})), json!({}));
    // Draft-07's `$defs` is checked only where a `$ref` reaches it.
    valid(
        json!({"$schema": d7, "$defs": {"x": {"type": 5}}}),
        json!({}),
    );
    refused(
        json!({"$schema": d7, "$defs": {"x": {"type": 5}}, "$ref": "#/$defs/x"}),
        json!({}),
    );
    // Patterns Rust's regex reads otherwise than RE2 are not judged.
    valid(
        props(json!({"p": {"pattern": "^[a-z][a-z0-9-]*[[:alpha:]]$"}})),
        json!({"p": "ab-c"}),
    );
    refused(
        props(json!({"p": {"pattern": "^[a[b]]$"}})),
        json!({"p": "a"}),
    );
    refused(
        props(json!({"p": {"pattern": "^[a-z&&[^x]]$"}})),
        json!({"p": "a"}),
    );
    // Unknown keywords are ignored.
    valid(
        json!({"form": true, "x-order": [1], "type": "object"}),
        json!({"a": 1}),
    );
}

#[test]
fn errors_in_gos_map_order_are_not_worded() {
    // Two properties failing: Go ranges over the values' map in random
    // order, so helm's message has no one order.
    let s = props(json!({"a": {"type": "string"}, "b": {"type": "string"}}));
    assert!(matches!(
        run(&s, &json!({"a": 1, "b": 2})),
        Verdict::Invalid(Err(_))
    ));
    let s = json!({"additionalProperties": false});
    assert!(matches!(
        run(&s, &json!({"a": 1, "b": 2})),
        Verdict::Invalid(Err(_))
    ));
    // A required property and one failing property come in a fixed
    // order.
    let s = json!({"required": ["x"], "properties": {"a": {"type": "string"}}});
    assert_eq!(
        message(&s, &json!({"a": 1})),
        "- at '': missing property 'x'\n- at '/a': got number, want string"
    );
}
