//! SARIF 2.1.0 output for GitHub code scanning and other SARIF consumers.
//!
//! Hand-written serde structs for the subset we emit (serde-sarif does not
//! build on its own). Tests validate the output against the OASIS schema.

use std::io::Write;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::Report;
use crate::finding::{Finding, Location, Severity, Side};
use crate::rules::{self, RuleMeta};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// The key under `partialFingerprints`; bump the suffix if the recipe changes.
pub(crate) const FINGERPRINT_KEY: &str = "gitopsLint/v1";

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool<'a>,
    invocations: Vec<Invocation>,
    results: Vec<SarifResult>,
    column_kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<RunProperties<'a>>,
}

#[derive(Serialize)]
struct RunProperties<'a> {
    base: Option<&'a str>,
    head: &'a str,
}

#[derive(Serialize)]
struct Tool<'a> {
    driver: Driver<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver<'a> {
    name: &'static str,
    version: &'static str,
    semantic_version: &'static str,
    information_uri: &'static str,
    rules: Vec<Descriptor<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor<'a> {
    id: &'a str,
    name: &'a str,
    short_description: Text,
    full_description: Text,
    help: Help<'a>,
    /// The rule's doc page, which code scanning links from every alert.
    help_uri: String,
    default_configuration: Config,
    properties: DescriptorProperties,
}

#[derive(Serialize)]
struct DescriptorProperties {
    tags: Vec<String>,
}

#[derive(Serialize)]
struct Help<'a> {
    text: &'a str,
    markdown: &'a str,
}

#[derive(Serialize)]
struct Config {
    level: &'static str,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_configuration_notifications: Vec<Notification>,
}

#[derive(Serialize)]
struct Notification {
    level: &'static str,
    message: Text,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: Vec<SarifLocation>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<SarifLocation>,
    partial_fingerprints: std::collections::BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    suppressions: Vec<Suppression>,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<ResultProperties>,
}

/// The JSON contract's acknowledgement, repeated on the result.
#[derive(Serialize)]
struct ResultProperties {
    acknowledged: bool,
    acknowledgement: AckOut,
}

#[derive(Serialize)]
struct AckOut {
    source: &'static str,
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifLocation {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    physical_location: Option<Physical>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    logical_locations: Vec<Logical>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Text>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Physical {
    artifact_location: Artifact,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
struct Artifact {
    uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Logical {
    name: String,
    fully_qualified_name: String,
    kind: &'static str,
}

#[derive(Serialize)]
struct Suppression {
    kind: &'static str,
    justification: String,
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn descriptor(m: &'static RuleMeta) -> Descriptor<'static> {
    let summary = m.summary();
    Descriptor {
        id: m.code,
        name: m.name,
        short_description: Text {
            text: summary.clone(),
        },
        full_description: Text { text: summary },
        help: Help {
            text: m.doc,
            markdown: m.doc,
        },
        help_uri: m.doc_url(),
        default_configuration: Config {
            level: level(m.default_severity),
        },
        properties: DescriptorProperties {
            tags: vec![
                "gitops".to_string(),
                serde_json::to_value(m.category)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
            ],
        },
    }
}

/// A stable identity for a finding across commits: rule, app and resource,
/// never lines (which move with unrelated edits). Findings with neither app
/// nor resource fall back to their file.
#[must_use]
pub(crate) fn fingerprint(f: &Finding) -> String {
    let mut h = Sha256::new();
    h.update(f.rule.code.as_bytes());
    h.update([0]);
    h.update(f.app.as_deref().unwrap_or("").as_bytes());
    h.update([0]);
    if let Some(r) = &f.resource {
        for part in [&r.group, &r.kind, &r.namespace, &r.name] {
            h.update(part.as_bytes());
            h.update([0]);
        }
    } else if f.app.is_none() {
        if let Some(l) = &f.location {
            h.update(l.file.as_bytes());
        }
    }
    h.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn physical(l: &Location) -> Physical {
    Physical {
        artifact_location: Artifact {
            uri: uri_path(&l.file),
        },
        // Code scanning places a result without a region nowhere in the
        // file view (a GL014 trailer, a deleted file's anchor): line 1 is
        // the file as a whole.
        region: Some(Region {
            start_line: l.line.filter(|n| *n > 0).unwrap_or(1),
        }),
    }
}

/// Repository-relative paths as relative URI references: percent-encode
/// what a URI cannot hold, keep `/`. A reference must stay relative to
/// the repository whatever a directory is named, so `:` is always encoded
/// (a first segment `file:` or `javascript:` would be a scheme), a leading
/// `/` is encoded (`/etc`, `//host` would leave the repository), and so are
/// the dots of a `.` or `..` segment, which a reader would resolve.
fn uri_path(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    for (i, segment) in p.split('/').enumerate() {
        if i > 0 {
            out.push_str(if out.is_empty() { "%2F" } else { "/" });
        }
        if segment == "." || segment == ".." {
            out.push_str(&"%2E".repeat(segment.len()));
            continue;
        }
        for b in segment.bytes() {
            if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=@".contains(&b) {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

fn logical(f: &Finding) -> Vec<Logical> {
    let mut out = Vec::new();
    if let Some(app) = &f.app {
        out.push(Logical {
            name: app.clone(),
            fully_qualified_name: format!("app:{app}"),
            kind: "module",
        });
    }
    if let Some(r) = &f.resource {
        let gk = if r.group.is_empty() {
            r.kind.clone()
        } else {
            format!("{}.{}", r.kind, r.group)
        };
        let path = if r.namespace.is_empty() {
            format!("{gk}/{}", r.name)
        } else {
            format!("{gk}/{}/{}", r.namespace, r.name)
        };
        out.push(Logical {
            name: r.name.clone(),
            fully_qualified_name: match &f.app {
                Some(app) => format!("app:{app}/{path}"),
                None => path,
            },
            kind: "resource",
        });
    }
    out
}

fn result(r: &Report, i: usize, f: &Finding) -> SarifResult {
    let rule_index = rules::ALL
        .iter()
        .position(|x| x.meta().code == f.rule.code)
        .unwrap_or(0);
    // GitHub code scanning rejects the whole file when any result lacks a
    // physical location (codeql-action#1738), so one is always given: where
    // the finding shows in the change, else its own file (perhaps deleted at
    // head), else the configuration file that governs the run.
    let fallback = Location {
        side: Side::Head,
        file: crate::config::CONFIG_FILE.to_string(),
        line: None,
    };
    let anchor = r.anchor(i).or(f.location.as_ref()).or(Some(&fallback));
    let mut related = Vec::new();
    if let Some(own) = &f.location {
        if anchor != Some(own) && own.side == Side::Base {
            related.push(SarifLocation {
                id: Some(1),
                physical_location: Some(physical(own)),
                logical_locations: Vec::new(),
                message: Some(Text {
                    text: "where it is defined in the base revision".into(),
                }),
            });
        }
    }
    let mut text = f.message.clone();
    // An acknowledgement written by the change's own author is not a
    // reviewed decision: the result stays visible (never suppressed), at
    // warning level, saying who acknowledged it.
    let by_author = f.acknowledged.as_ref().filter(|a| a.by_author());
    if let Some(a) = by_author {
        text.push_str(&format!(
            "\nacknowledged only by a commit trailer of this change: {a}"
        ));
    } else if let Some(h) = &f.help {
        text.push_str(&format!("\nhelp: {h}"));
    }
    if let Some(line) = r.acknowledge_line(f) {
        text.push_str(&format!("\n{line}"));
    }
    let mut fp = std::collections::BTreeMap::new();
    fp.insert(FINGERPRINT_KEY, fingerprint(f));
    SarifResult {
        rule_id: f.rule.code,
        rule_index,
        level: if by_author.is_some() {
            level(Severity::Warning)
        } else {
            level(f.severity)
        },
        message: Text { text },
        locations: vec![SarifLocation {
            id: None,
            physical_location: anchor.map(physical),
            logical_locations: logical(f),
            message: None,
        }],
        related_locations: related,
        partial_fingerprints: fp,
        suppressions: f
            .acknowledged
            .as_ref()
            .filter(|a| !a.by_author())
            .map(|why| Suppression {
                // An annotation on the object is in the source.
                kind: "inSource",
                justification: why.text.clone(),
            })
            .into_iter()
            .collect(),
        properties: f.acknowledged.as_ref().map(|a| ResultProperties {
            acknowledged: true,
            acknowledgement: AckOut {
                source: a.source.as_str(),
                text: a.text.clone(),
            },
        }),
    }
}

/// Builds the SARIF log as a JSON value.
#[must_use]
pub(crate) fn to_value(r: &Report) -> serde_json::Value {
    let log = Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "gitops-lint",
                    version: env!("CARGO_PKG_VERSION"),
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    information_uri: env!("CARGO_PKG_REPOSITORY"),
                    rules: rules::ALL.iter().map(|x| descriptor(x.meta())).collect(),
                },
            },
            invocations: vec![Invocation {
                execution_successful: true,
                tool_configuration_notifications: r
                    .notes
                    .iter()
                    .map(|n| Notification {
                        level: "note",
                        message: Text { text: n.clone() },
                    })
                    .collect(),
            }],
            results: r
                .findings
                .iter()
                .enumerate()
                .map(|(i, f)| result(r, i, f))
                .collect(),
            column_kind: "unicodeCodePoints",
            properties: Some(RunProperties {
                base: r.base.as_deref(),
                head: &r.head,
            }),
        }],
    };
    serde_json::to_value(log).unwrap_or(serde_json::Value::Null)
}

/// Writes the SARIF log.
///
/// # Errors
/// Write failures.
pub(crate) fn emit(r: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let mut text = serde_json::to_vec_pretty(&to_value(r)).map_err(std::io::Error::other)?;
    super::log_safe_json(&mut text);
    text.push(b'\n');
    out.write_all(&text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample;

    #[test]
    fn fingerprint_ignores_lines_and_messages_but_not_resources() {
        let r = sample();
        let a = r.findings[0].clone();
        let mut moved = a.clone();
        moved.message = "reworded".into();
        if let Some(l) = moved.location.as_mut() {
            l.line = Some(99);
        }
        assert_eq!(fingerprint(&a), fingerprint(&moved));
        let mut other = a.clone();
        if let Some(res) = other.resource.as_mut() {
            res.name = "other".into();
        }
        assert_ne!(fingerprint(&a), fingerprint(&other));
    }

    #[test]
    fn results_carry_rule_index_locations_and_suppressions() {
        let r = sample();
        let v = to_value(&r);
        let results = &v["runs"][0]["results"];
        let rules = &v["runs"][0]["tool"]["driver"]["rules"];
        for res in results.as_array().into_iter().flatten() {
            let idx =
                usize::try_from(res["ruleIndex"].as_u64().unwrap_or(u64::MAX)).expect("an index");
            assert_eq!(rules[idx]["id"], res["ruleId"]);
        }
        // The finding acknowledged by an annotation is a suppressed result.
        assert!(results
            .as_array()
            .into_iter()
            .flatten()
            .any(|x| x["suppressions"][0]["kind"] == "inSource"
                && x["properties"]["acknowledgement"]["source"] == "annotation"));
        // Every result has a region, even where no line is known.
        assert!(results
            .as_array()
            .into_iter()
            .flatten()
            .all(|x| x["locations"][0]["physicalLocation"]["region"]["startLine"].is_u64()));
        // The pruned PVC's file is gone at head: the anchor (kustomization) is used,
        // and the base file is a related location.
        let first = &results[0];
        assert_eq!(
            first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "apps/payments/kustomization.yaml"
        );
        assert_eq!(
            first["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "apps/payments/pvc.yaml"
        );
        assert_eq!(
            first["locations"][0]["logicalLocations"][1]["fullyQualifiedName"],
            "app:payments/PersistentVolumeClaim/payments/data"
        );
    }

    /// The OASIS schema. The published file has one known-bad `language`
    /// pattern (oasis-tcs/sarif-spec#490, not a valid regex); where present it
    /// is patched to `^[a-zA-Z]{2}(-[a-zA-Z]{2})?$` in this in-memory copy so
    /// validators accept the schema.
    /// Vendored in `testdata/sarif` (the crate root is read when the test
    /// runs), or `$GITOPS_LINT_SCHEMAS`.
    pub(crate) fn sarif_schema() -> serde_json::Value {
        let root = std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(
            || std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")),
            std::path::PathBuf::from,
        );
        let dirs: Vec<std::path::PathBuf> = std::env::var_os("GITOPS_LINT_SCHEMAS")
            .map(std::path::PathBuf::from)
            .into_iter()
            .chain([root.join("testdata/sarif")])
            .collect();
        let file = dirs
            .iter()
            .map(|d| d.join("sarif-schema-2.1.0.json"))
            .find(|f| f.is_file())
            .unwrap_or_else(|| {
                panic!("sarif-schema-2.1.0.json not found in {dirs:?}; set GITOPS_LINT_SCHEMAS")
            });
        let text = std::fs::read_to_string(&file).expect("schema readable");
        let bad = r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#;
        // Some copies of the file already carry the fix; patching is then a no-op.
        let text = text.replace(bad, r#""^[a-zA-Z]{2}(-[a-zA-Z]{2})?$""#);
        serde_json::from_str(&text).expect("schema is JSON")
    }

    /// Every schema violation in `log`, as `path: message` lines.
    pub(crate) fn schema_errors(log: &serde_json::Value) -> Vec<String> {
        let schema = sarif_schema();
        let v = jsonschema::validator_for(&schema).expect("patched schema compiles");
        v.iter_errors(log)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect()
    }

    #[test]
    fn output_validates_against_the_oasis_schema() {
        let log = to_value(&sample());
        assert_eq!(schema_errors(&log), Vec::<String>::new());
        // The validator does reject a broken log, so the check above means something.
        let mut broken = log.clone();
        broken["runs"][0]["results"][0]["level"] = "fatal".into();
        assert!(!schema_errors(&broken).is_empty());
    }

    /// Code scanning links each alert to its rule's `helpUri`: the rule's
    /// doc in the repository `Cargo.toml` names, a file that exists.
    #[test]
    fn every_rule_links_its_doc_page() {
        let log = to_value(&sample());
        let rules = log["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .expect("rules");
        assert_eq!(rules.len(), rules::ALL.len());
        let prefix = format!("{}/blob/main/", env!("CARGO_PKG_REPOSITORY"));
        for (d, r) in rules.iter().zip(rules::ALL) {
            let m = r.meta();
            let uri = d["helpUri"].as_str().expect("a helpUri");
            let path = uri.strip_prefix(&prefix).expect("under the repository");
            assert_eq!(path, format!("rules/{}-{}.md", m.code, m.name));
            assert!(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join(path)
                    .is_file(),
                "{uri} names no file"
            );
        }
        assert_eq!(
            log["runs"][0]["tool"]["driver"]["informationUri"],
            env!("CARGO_PKG_REPOSITORY")
        );
    }

    #[test]
    fn uri_escapes_spaces_and_percent() {
        assert_eq!(uri_path("a b/c%.yaml"), "a%20b/c%25.yaml");
    }

    /// No directory name makes a reference absolute, give it a scheme or
    /// climb out of the repository.
    #[test]
    fn uris_stay_relative_to_the_repository() {
        assert_eq!(uri_path("file:/etc/passwd.yaml"), "file%3A/etc/passwd.yaml");
        assert_eq!(
            uri_path("javascript:alert(1)/a.yaml"),
            "javascript%3Aalert(1)/a.yaml"
        );
        assert_eq!(uri_path("/etc/passwd"), "%2Fetc/passwd");
        assert_eq!(uri_path("//host/x"), "%2F/host/x");
        assert_eq!(uri_path("../../x/./y"), "%2E%2E/%2E%2E/x/%2E/y");
        assert_eq!(uri_path("apps/.hidden/a..b.yaml"), "apps/.hidden/a..b.yaml");
    }
}
