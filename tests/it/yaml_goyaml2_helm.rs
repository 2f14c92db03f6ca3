//! Differential test of the go-yaml v2 reading against helm v3.17.1: many
//! manifests broken at random (deterministically), each rendered by helm as
//! a chart's only template, whose verdict must be ours: helm's `YAML parse
//! error` text where helm fails to parse, a load where helm parses.
//!
//! About 50 ms of helm per case, so ignored by default:
//! `cargo test --test it yaml_goyaml2_helm:: -- --ignored --nocapture` with helm
//! v3.17.1 on PATH (`GOYAML2_CASES=N` for another number of cases,
//! `GOYAML2_SEED=N` for other cases).

use crate::kustomize_common;

use std::path::Path;
use std::process::Command;

use goyaml::{load_all_as, Dialect, Limits};
use kustomize_common::pinned_helm;

const BASES: &[&str] = &[
    "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app.kubernetes.io/name: web
    app.kubernetes.io/version: \"1.2.3\"
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: web
          image: \"nginx:1.25\"
          command: [ \"/bin/sh\", \"-c\",
          \"exec nginx -g 'daemon off;'\" ]
          ports:
          - containerPort: 80
            name: http
          env:
            - name: A
              value: 'single quoted'
            - {name: B, value: \"x\"}
",
    "apiVersion: v1
kind: ConfigMap
metadata:
  name: conf
data:
  script: |
    #!/bin/sh
    echo \"hello\" && exit 0
  folded: >-
    one
    two
  flow: {a: 1, b: [x, y], c: 'z'}
  anchor: &base
    k: v
  use: *base
  quoted: \"line one
    line two\"
",
    "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
rules:
- apiGroups:
  - \"\"
  resources:
  - configmaps
  - secrets
  verbs: [get, list, watch]
- nonResourceURLs: [\"/metrics\"]
  verbs: [\"get\"]
",
];

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % (n.max(1) as u64)).unwrap_or(0)
    }
}

const PIECES: &[&str] = &[
    ":", "-", "[", "]", "{", "}", "\"", "'", " ", "\t", "\n", "#", "&", "*", "!", "|", ">", ",",
    "?", "%", "@", "`", "  ", "\n  ", ": ", "- ", "\\", "&a.b", "*x",
];

fn mutate(rng: &mut Rng, base: &str) -> String {
    let mut s: Vec<char> = base.chars().collect();
    for _ in 0..=rng.below(3) {
        let at = rng.below(s.len() + 1);
        match rng.below(3) {
            0 => {
                let p = PIECES[rng.below(PIECES.len())];
                s.splice(at..at, p.chars());
            }
            1 if at < s.len() => {
                s.remove(at);
            }
            _ => {
                // Re-indent the line holding `at` by one or two spaces.
                let start = s[..at]
                    .iter()
                    .rposition(|&c| c == '\n')
                    .map_or(0, |i| i + 1);
                if rng.below(2) == 0 {
                    s.splice(start..start, "  "[..=rng.below(2)].chars());
                } else if s.get(start) == Some(&' ') {
                    s.remove(start);
                }
            }
        }
    }
    s.into_iter().collect()
}

/// What helm makes of a template's output.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// Every manifest parses.
    Loads,
    /// go-yaml's syntax error, as helm prints it after `error converting
    /// YAML to JSON: `.
    GoYaml(String),
    /// Another YAML error (sigs.k8s.io/yaml's `unsupported map key`,
    /// go-yaml's `invalid map key`), worded with Go's `%#v`: gitops-lint
    /// must refuse too, in its own words.
    Refused,
}

/// helm's verdict on `content` as a template; `None` for a failure that
/// is not about YAML.
fn helm_verdict(helm: &Path, chart: &Path, content: &str) -> Option<Verdict> {
    std::fs::write(chart.join("templates/x.yaml"), content).ok()?;
    let out = Command::new(helm)
        .arg("template")
        .arg(chart)
        .output()
        .ok()?;
    if out.status.success() {
        return Some(Verdict::Loads);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.lines().find_map(|l| l.strip_prefix("Error: "))?;
    let rest = line.strip_prefix("YAML parse error on c/templates/x.yaml: ")?;
    if rest.starts_with("error unmarshaling JSON") {
        // The manifest parsed; its head has the wrong shape.
        return Some(Verdict::Loads);
    }
    let converting = rest.strip_prefix("error converting YAML to JSON: ")?;
    Some(match converting.strip_prefix("yaml: ") {
        Some(go) if !go.starts_with("invalid map key") => Verdict::GoYaml(format!("yaml: {go}")),
        _ => Verdict::Refused,
    })
}

fn ours(content: &str) -> Verdict {
    match load_all_as(content.trim(), Dialect::SigsYaml, &Limits::default()) {
        Ok(_) => Verdict::Loads,
        Err(e) => match e.go_yaml {
            Some(go) => Verdict::GoYaml(go),
            None => Verdict::Refused,
        },
    }
}

#[test]
#[ignore = "runs helm once per case; see the module doc"]
fn broken_manifests_fail_as_helm_fails_them() {
    let Some(helm) = pinned_helm() else {
        eprintln!("NOT RUN: no helm v3.17.1 on PATH");
        return;
    };
    let cases: usize = std::env::var("GOYAML2_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(400);
    let dir = tempfile::tempdir().expect("temp dir");
    let chart = dir.path().join("c");
    std::fs::create_dir_all(chart.join("templates")).expect("chart dir");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    )
    .expect("Chart.yaml");
    let seed = std::env::var("GOYAML2_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0x9E37_79B9_7F4A_7C15_u64);
    let mut rng = Rng(seed.max(1));
    let (mut compared, mut mismatches) = (0, Vec::new());
    while compared < cases {
        let base = BASES[rng.below(BASES.len())];
        let content = mutate(&mut rng, base);
        // Template actions, and `---`/`...` lines that helm's splitting
        // would cut, are out of this test's scope.
        if content.contains("{{")
            || content
                .lines()
                .any(|l| l.trim_start().starts_with("---") || l.starts_with("..."))
        {
            continue;
        }
        let Some(want) = helm_verdict(&helm, &chart, &content) else {
            continue;
        };
        compared += 1;
        let got = ours(&content);
        if got != want {
            mismatches.push(format!("{content:?}\n  helm: {want:?}\n  ours: {got:?}"));
        }
    }
    eprintln!(
        "go-yaml v2 differential: {compared} cases, {} mismatches",
        mismatches.len()
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
