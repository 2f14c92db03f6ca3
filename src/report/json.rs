//! The JSON output contract, version 1 (DESIGN.md). Serialisation structs are
//! separate from domain types so the contract changes only on purpose.

use std::io::Write;

use serde::Serialize;

use super::Report;
use crate::argocd::PruneMode;
use crate::manifest::ResourceId;

/// The contract version.
pub(crate) const VERSION: u32 = 1;

#[derive(Serialize)]
struct Out<'a> {
    version: u32,
    base: Option<&'a str>,
    head: &'a str,
    apps: Vec<AppOut<'a>>,
    prunes: Vec<PruneOut<'a>>,
    findings: Vec<FindingOut<'a>>,
    summary: Summary,
    /// What the human report says besides findings (assumptions, the
    /// configuration used, acknowledgements by commit trailer).
    notes: &'a [String],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AppOut<'a> {
    name: &'a str,
    namespace: &'a str,
    source: &'a str,
    status: &'a str,
    prune_mode: PruneMode,
}

#[derive(Serialize)]
struct PruneOut<'a> {
    app: &'a str,
    resource: &'a ResourceId,
    reason: &'a str,
    protected: bool,
}

#[derive(Serialize)]
struct FindingOut<'a> {
    code: &'a str,
    name: &'a str,
    severity: &'a str,
    message: &'a str,
    app: Option<&'a str>,
    resource: Option<&'a ResourceId>,
    file: Option<&'a str>,
    line: Option<u32>,
    /// Shown but not counted in `summary`, nor failing the run.
    acknowledged: bool,
    /// Where the acknowledgement came from; absent when not acknowledged.
    #[serde(skip_serializing_if = "Option::is_none")]
    acknowledgement: Option<AckOut<'a>>,
}

#[derive(Serialize)]
struct AckOut<'a> {
    /// `annotation`, `trailer` or `ignore-annotation`.
    source: &'static str,
    /// The acknowledgement as written.
    text: &'a str,
}

#[derive(Serialize)]
struct Summary {
    error: usize,
    warning: usize,
    info: usize,
}

/// Builds the contract value.
#[must_use]
pub fn to_value(r: &Report) -> serde_json::Value {
    let (error, warning, info) = r.counts();
    let out = Out {
        version: VERSION,
        base: r.base.as_deref(),
        head: &r.head,
        apps: r
            .apps
            .iter()
            .map(|a| AppOut {
                name: &a.name,
                namespace: &a.namespace,
                source: &a.source,
                status: a.status,
                prune_mode: a.prune_mode,
            })
            .collect(),
        prunes: r
            .prunes
            .iter()
            .map(|p| PruneOut {
                app: &p.app,
                resource: &p.resource,
                reason: p.reason,
                protected: p.protection.is_some(),
            })
            .collect(),
        findings: r
            .findings
            .iter()
            .map(|f| FindingOut {
                code: f.rule.code,
                name: f.rule.name,
                severity: f.severity.as_str(),
                message: &f.message,
                app: f.app.as_deref(),
                resource: f.resource.as_ref(),
                file: f.location.as_ref().map(|l| l.file.as_str()),
                line: f.location.as_ref().and_then(|l| l.line),
                acknowledged: f.acknowledged.is_some(),
                acknowledgement: f.acknowledged.as_ref().map(|a| AckOut {
                    source: a.source.as_str(),
                    text: &a.text,
                }),
            })
            .collect(),
        summary: Summary {
            error,
            warning,
            info,
        },
        notes: &r.notes,
    };
    serde_json::to_value(out).unwrap_or(serde_json::Value::Null)
}

/// Writes the JSON report.
///
/// # Errors
/// Write failures.
pub(crate) fn emit(r: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(&to_value(r)).map_err(std::io::Error::other)?;
    writeln!(out, "{text}")
}
