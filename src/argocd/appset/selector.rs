//! Label selectors: the `clusters` generator's Secret selector and the
//! generator-level `selector` post-filter, which Argo CD matches against the
//! flattened parameters with no restriction on values
//! (AC `applicationset/utils/selector.go`).

use std::collections::BTreeMap;

use serde_json::Value;

/// A parsed `matchLabels` + `matchExpressions` selector.
#[derive(Debug, Clone, Default)]
pub(crate) struct Selector {
    reqs: Vec<(String, Op, Vec<String>)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl Selector {
    /// Parses a `metav1.LabelSelector`. An empty selector matches everything.
    ///
    /// # Errors
    /// An unknown operator, or values given to (or missing from) an operator.
    pub(crate) fn parse(v: &Value) -> Result<Selector, String> {
        let mut reqs = Vec::new();
        if let Some(m) = v.get("matchLabels").and_then(Value::as_object) {
            for (k, val) in m {
                let val = match val {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                reqs.push((k.clone(), Op::In, vec![val]));
            }
        }
        if let Some(exprs) = v.get("matchExpressions").and_then(Value::as_array) {
            for e in exprs {
                let key = e
                    .get("key")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let values: Vec<String> = e
                    .get("values")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                let op = match e.get("operator").and_then(Value::as_str).unwrap_or("") {
                    "In" => Op::In,
                    "NotIn" => Op::NotIn,
                    "Exists" => Op::Exists,
                    "DoesNotExist" => Op::DoesNotExist,
                    other => {
                        return Err(format!("{other:?} is not a valid label selector operator"))
                    }
                };
                match op {
                    Op::In | Op::NotIn if values.is_empty() => {
                        return Err("for 'in', 'notin' operators, values set can't be empty".into())
                    }
                    Op::Exists | Op::DoesNotExist if !values.is_empty() => {
                        return Err("values set must be empty for exists and does not exist".into())
                    }
                    _ => {}
                }
                reqs.push((key, op, values));
            }
        }
        Ok(Selector { reqs })
    }

    /// Whether the selector has no requirements.
    pub(crate) fn is_empty(&self) -> bool {
        self.reqs.is_empty()
    }

    /// Whether `labels` satisfy every requirement.
    pub(crate) fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.reqs.iter().all(|(k, op, vals)| match op {
            Op::In => labels.get(k).is_some_and(|v| vals.contains(v)),
            Op::NotIn => labels.get(k).is_none_or(|v| !vals.contains(v)),
            Op::Exists => labels.contains_key(k),
            Op::DoesNotExist => !labels.contains_key(k),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn match_labels_and_expressions() {
        let s = Selector::parse(&json!({"matchLabels": {"env": "prod"},
            "matchExpressions": [{"key": "region", "operator": "NotIn", "values": ["eu"]}]}))
        .expect("valid");
        let l = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(a, b)| ((*a).to_string(), (*b).to_string()))
                .collect()
        };
        assert!(s.matches(&l(&[("env", "prod"), ("region", "us")])));
        assert!(s.matches(&l(&[("env", "prod")])));
        assert!(!s.matches(&l(&[("env", "prod"), ("region", "eu")])));
        assert!(!s.matches(&l(&[("env", "dev")])));
        assert!(Selector::parse(
            &json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})
        )
        .is_err());
    }
}
