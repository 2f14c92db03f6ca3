//! Resource selection for patch and replacement targets (Kustomize's
//! `resWrangler.Select`): anchored regexes on group, version, kind, name and
//! namespace (original or current id), plus Kubernetes label and
//! annotation selectors.

use serde_json::{Map, Value};

use super::resource::Res;
use super::{content, KResult};

/// A compiled `target`/`select` block.
pub(crate) struct Selector {
    group: Option<regex::Regex>,
    version: Option<regex::Regex>,
    kind: Option<regex::Regex>,
    name: Option<regex::Regex>,
    namespace: Option<regex::Regex>,
    labels: Option<Vec<Req>>,
    annotations: Option<Vec<Req>>,
}

fn anchored(v: &Value, f: &str) -> KResult<Option<regex::Regex>> {
    let s = v.get(f).map(super::smp::scalar_text).unwrap_or_default();
    if s.is_empty() {
        return Ok(None);
    }
    regex::Regex::new(&format!("^(?:{s})$"))
        .map(Some)
        .map_err(|e| content(format!("invalid `{f}` regex `{s}`: {e}")))
}

impl Selector {
    /// Compiles a selector.
    ///
    /// # Errors
    /// Invalid regexes or selector expressions.
    pub(crate) fn new(v: &Value) -> KResult<Selector> {
        let sel = |f: &str| -> KResult<Option<Vec<Req>>> {
            match v.get(f).and_then(Value::as_str) {
                Some(s) if !s.is_empty() => parse_selector(s).map(Some),
                _ => Ok(None),
            }
        };
        Ok(Selector {
            group: anchored(v, "group")?,
            version: anchored(v, "version")?,
            kind: anchored(v, "kind")?,
            name: anchored(v, "name")?,
            namespace: anchored(v, "namespace")?,
            labels: sel("labelSelector")?,
            annotations: sel("annotationSelector")?,
        })
    }

    /// Whether `r` is selected.
    #[must_use]
    pub(crate) fn matches(&self, r: &Res) -> bool {
        let cur = r.cur_id();
        let org = r.org_id();
        let m = |re: &Option<regex::Regex>, s: &str| re.as_ref().is_none_or(|re| re.is_match(s));
        if !(m(&self.namespace, &org.effective_ns()) || m(&self.namespace, &cur.effective_ns())) {
            return false;
        }
        if !(m(&self.name, &org.name) || m(&self.name, &cur.name)) {
            return false;
        }
        let g = &cur.gvk;
        if !(m(&self.group, &g.group) && m(&self.version, &g.version) && m(&self.kind, &g.kind)) {
            return false;
        }
        if let Some(reqs) = &self.labels {
            if !matches_all(reqs, &r.meta_map("labels")) {
                return false;
            }
        }
        if let Some(reqs) = &self.annotations {
            if !matches_all(reqs, &r.meta_map("annotations")) {
                return false;
            }
        }
        true
    }

    /// Indices of the selected resources.
    #[must_use]
    pub(crate) fn select(&self, res: &[Res]) -> Vec<usize> {
        res.iter()
            .enumerate()
            .filter(|(_, r)| self.matches(r))
            .map(|(i, _)| i)
            .collect()
    }
}

/// One requirement of a Kubernetes selector.
enum Req {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

fn matches_all(reqs: &[Req], m: &Map<String, Value>) -> bool {
    let get = |k: &str| m.get(k).map(super::smp::scalar_text);
    reqs.iter().all(|r| match r {
        Req::Eq(k, v) => get(k).as_deref() == Some(v.as_str()),
        Req::NotEq(k, v) => get(k).as_deref() != Some(v.as_str()),
        Req::In(k, vs) => get(k).is_some_and(|x| vs.contains(&x)),
        Req::NotIn(k, vs) => get(k).is_none_or(|x| !vs.contains(&x)),
        Req::Exists(k) => get(k).is_some(),
        Req::NotExists(k) => get(k).is_none(),
    })
}

/// Splits on commas that are not inside parentheses.
fn split_top(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out
}

fn parse_selector(s: &str) -> KResult<Vec<Req>> {
    let mut out = Vec::new();
    for part in split_top(s) {
        let p = part.trim();
        if p.is_empty() {
            continue;
        }
        let set = |rest: &str| -> Vec<String> {
            rest.trim()
                .trim_start_matches('(')
                .trim_end_matches(')')
                .split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect()
        };
        if let Some(k) = p.strip_prefix('!') {
            out.push(Req::NotExists(k.trim().to_string()));
        } else if let Some((k, v)) = p.split_once("!=") {
            out.push(Req::NotEq(k.trim().to_string(), v.trim().to_string()));
        } else if let Some((k, v)) = p.split_once("==") {
            out.push(Req::Eq(k.trim().to_string(), v.trim().to_string()));
        } else if let Some((k, v)) = p.split_once('=') {
            out.push(Req::Eq(k.trim().to_string(), v.trim().to_string()));
        } else if let Some(i) = p.find(" notin ") {
            out.push(Req::NotIn(p[..i].trim().to_string(), set(&p[i + 7..])));
        } else if let Some(i) = p.find(" in ") {
            out.push(Req::In(p[..i].trim().to_string(), set(&p[i + 4..])));
        } else if p.contains(' ') || p.contains('(') {
            return Err(content(format!(
                "unable to parse selector requirement `{p}`"
            )));
        } else {
            out.push(Req::Exists(p.to_string()));
        }
    }
    Ok(out)
}
