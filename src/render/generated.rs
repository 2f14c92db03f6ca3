//! Which fields of a render are generated: filled with random values or
//! the clock (Sprig's `randAlphaNum`, `genCA`, `now`…), which Helm draws
//! anew at every render, and Argo CD at every refresh.
//!
//! A source whose render drew any is rendered a second time with values
//! that differ in every generated field (`gotemplate::Variant`); the two
//! renders are compared resource by resource. Scalars that differ are the
//! generated fields, recorded on the first render's manifests (a hook's
//! name among them: hooks are never pruned). Anything else that differs,
//! the number of resources, the identity of a resource that is not a hook
//! or the shape of an object, cannot be judged from one render and fails
//! the source as not supported.

use std::sync::Arc;

use serde_json::Value;

use crate::manifest::Manifest;

/// Records on `first` the fields in which it differs from `second`, a
/// render of the same source with other random values and clock.
///
/// # Errors
/// What differs beyond scalar values, worded for the user.
pub(crate) fn mark(first: &mut [Manifest], second: &[Manifest]) -> Result<(), String> {
    if first.len() != second.len() {
        return Err(format!(
            "the number of resources it renders depends on random values or the clock ({} in one render, {} in another), so what a sync creates and prunes cannot be judged",
            first.len(),
            second.len()
        ));
    }
    for (a, b) in first.iter_mut().zip(second) {
        // A hook is never pruned, and each sync creates its own (Helm's
        // test pods are named `…-test-{{ randAlphaNum 5 }}`): its name may
        // be generated. Any other resource is tracked by its identity.
        let hook_named_anew = a.hook().is_hook
            && b.hook().is_hook
            && (&a.id.group, &a.id.kind, &a.id.namespace)
                == (&b.id.group, &b.id.kind, &b.id.namespace);
        if a.id != b.id && !hook_named_anew {
            return Err(format!(
                "the identity of `{}` depends on random values or the clock (another render names it `{}`), so every render, and every Argo CD sync, names another resource",
                a.id, b.id
            ));
        }
        let mut fields = Vec::new();
        let mut at = String::new();
        diff(&a.value, &b.value, &mut at, &mut fields).map_err(|p| {
            format!(
                "the shape of `{}` depends on random values or the clock (at `{p}`), which gitops-lint does not follow",
                a.id
            )
        })?;
        if !fields.is_empty() {
            a.generated = Arc::from(fields);
        }
    }
    Ok(())
}

/// Pushes onto `out` the pointer of every scalar in which `a` and `b`
/// differ; `Err` with the pointer where their shape differs.
fn diff(a: &Value, b: &Value, at: &mut String, out: &mut Vec<String>) -> Result<(), String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            if x.len() != y.len() || x.keys().any(|k| !y.contains_key(k)) {
                return Err(at.clone());
            }
            for (k, v) in x {
                let len = at.len();
                at.push('/');
                at.push_str(&crate::manifest::pointer_token(k));
                diff(v, &y[k], at, out)?;
                at.truncate(len);
            }
            Ok(())
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Err(at.clone());
            }
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                let len = at.len();
                at.push('/');
                at.push_str(&i.to_string());
                diff(v, w, at, out)?;
                at.truncate(len);
            }
            Ok(())
        }
        (Value::Object(_) | Value::Array(_), _) | (_, Value::Object(_) | Value::Array(_)) => {
            Err(at.clone())
        }
        _ => {
            if a != b {
                out.push(at.clone());
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::mark;
    use crate::manifest::{manifest_from_value, Manifest, Origin, Scopes};
    use serde_json::{json, Value};

    fn m(v: Value) -> Manifest {
        manifest_from_value(v, Origin::default(), "ns", &Scopes::default()).expect("object")
    }

    fn secret(name: &str, password: &str) -> Manifest {
        m(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "annotations": {"a/b": "fixed"}},
            "data": {"password": password, "user": "admin"}}))
    }

    #[test]
    fn differing_scalars_are_the_generated_fields() {
        let mut first = vec![secret("db", "QUJD"), secret("other", "eA==")];
        mark(&mut first, &[secret("db", "REVG"), secret("other", "eA==")]).expect("marks");
        assert_eq!(&*first[0].generated, ["/data/password".to_string()]);
        assert!(first[1].generated.is_empty());
        // Pointers escape `~` and `/` as RFC 6901 says.
        let with_key = |v: &str| {
            m(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                "data": {"a/b~c": v}}),
            )
        };
        let mut first = vec![with_key("1")];
        mark(&mut first, &[with_key("2")]).expect("marks");
        assert_eq!(&*first[0].generated, ["/data/a~1b~0c".to_string()]);
    }

    #[test]
    fn what_differs_beyond_values_is_refused() {
        let mut first = vec![secret("db", "x")];
        let err = mark(&mut first, &[secret("db-2", "x")]).expect_err("identity");
        assert!(err.contains("the identity of `Secret ns/db`"), "{err}");
        // A hook may be named anew at every render.
        let test_pod = |name: &str| {
            m(json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "annotations": {"helm.sh/hook": "test-success"}}}))
        };
        let mut hooks = vec![test_pod("web-test-ab1cd")];
        mark(&mut hooks, &[test_pod("web-test-bc2de")]).expect("a hook's name");
        assert_eq!(&*hooks[0].generated, ["/metadata/name".to_string()]);
        let err = mark(&mut first, &[]).expect_err("count");
        assert!(err.contains("(1 in one render, 0 in another)"), "{err}");
        let extra = m(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "db", "annotations": {"a/b": "fixed"}},
            "data": {"password": "x", "user": "admin", "token": "y"}}));
        let err = mark(&mut first, &[extra]).expect_err("shape");
        assert!(err.contains("(at `/data`)"), "{err}");
    }
}
