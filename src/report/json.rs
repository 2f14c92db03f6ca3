//! The JSON output contract, version 1 (docs/output-formats.md). Serialisation structs are
//! separate from domain types so the contract changes only on purpose.

use serde::Serialize;

use super::Report;
use crate::argocd::PruneMode;
use crate::manifest::ResourceId;

/// The contract version.
pub(crate) const VERSION: u32 = 1;

// Every object's fields are declared in the order of their names: the
// contract's keys are sorted (as a `serde_json::Value` writes them), and
// `emit` writes these structs directly, without building that value.

#[derive(Serialize)]
struct Out<'a> {
    apps: Vec<AppOut<'a>>,
    base: Option<&'a str>,
    /// The rendered diff: each app whose manifests change, each changed
    /// resource with its change and unified diff (absent when not computed).
    #[serde(skip_serializing_if = "Option::is_none")]
    diff: Option<Vec<AppDiffOut<'a>>>,
    findings: Vec<FindingOut<'a>>,
    head: &'a str,
    /// The touched apps the rendered diff could not compare, each with why
    /// (absent when there are none or the diff was not computed).
    #[serde(rename = "notDiffed", skip_serializing_if = "Option::is_none")]
    not_diffed: Option<Vec<NotDiffedOut<'a>>>,
    /// Present only when the head was judged merged into the base's tip
    /// (not a fast-forward): the merge has no commit of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    merge: Option<MergeOut<'a>>,
    /// What the human report says besides findings (assumptions, the
    /// configuration used, acknowledgements by commit trailer).
    notes: &'a [String],
    prunes: Vec<PruneOut<'a>>,
    summary: Summary,
    version: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MergeOut<'a> {
    merge_base: &'a str,
    tree: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AppOut<'a> {
    name: &'a str,
    namespace: &'a str,
    /// Present only for an app a config-management plugin renders.
    #[serde(skip_serializing_if = "Option::is_none")]
    plugin: Option<&'a str>,
    prune_mode: PruneMode,
    source: &'a str,
    status: &'a str,
}

#[derive(Serialize)]
struct AppDiffOut<'a> {
    app: &'a str,
    /// `added`, `modified` or `removed`.
    change: &'static str,
    /// A partial app's sources not rendered: the diff shows the others
    /// only (absent for a whole render).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    partial: &'a [String],
    resources: Vec<ResourceDiffOut<'a>>,
}

#[derive(Serialize)]
struct NotDiffedOut<'a> {
    app: &'a str,
    why: &'a str,
}

#[derive(Serialize)]
struct ResourceDiffOut<'a> {
    /// `added`, `modified` or `removed`.
    change: &'static str,
    /// The unified diff of the canonical YAML, secrets masked (empty when
    /// the body of a deleted app is hidden).
    diff: &'a str,
    resource: ResourceOut<'a>,
}

#[derive(Serialize)]
struct PruneOut<'a> {
    app: &'a str,
    protected: bool,
    reason: &'a str,
    resource: ResourceOut<'a>,
}

#[derive(Serialize)]
struct FindingOut<'a> {
    /// Shown but not counted in `summary`, nor failing the run.
    acknowledged: bool,
    /// Where the acknowledgement came from; absent when not acknowledged.
    #[serde(skip_serializing_if = "Option::is_none")]
    acknowledgement: Option<AckOut<'a>>,
    app: Option<&'a str>,
    code: &'a str,
    file: Option<&'a str>,
    /// Present (true) only for a finding of a judged merge that the change
    /// alone against its fork point does not have.
    #[serde(rename = "fromMerge", skip_serializing_if = "std::ops::Not::not")]
    from_merge: bool,
    line: Option<u32>,
    message: &'a str,
    name: &'a str,
    resource: Option<ResourceOut<'a>>,
    severity: &'a str,
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
    info: usize,
    warning: usize,
}

/// A resource id with its fields in the order of their names.
struct ResourceOut<'a>(&'a ResourceId);

impl Serialize for ResourceOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let r = self.0;
        let mut out = s.serialize_struct("ResourceId", 4)?;
        out.serialize_field("group", &r.group)?;
        out.serialize_field("kind", &r.kind)?;
        out.serialize_field("name", &r.name)?;
        out.serialize_field("namespace", &r.namespace)?;
        out.end()
    }
}

/// Builds the contract value.
#[must_use]
pub fn to_value(r: &Report) -> serde_json::Value {
    serde_json::to_value(out(r)).unwrap_or(serde_json::Value::Null)
}

/// The report as the contract's structs.
fn out(r: &Report) -> Out<'_> {
    let (error, warning, info) = r.counts();
    Out {
        version: VERSION,
        base: r.base.as_deref(),
        head: &r.head,
        diff: r.diff.as_ref().map(|d| {
            d.apps
                .iter()
                .map(|a| AppDiffOut {
                    app: &a.app,
                    change: a.change.as_str(),
                    partial: &a.partial,
                    resources: a
                        .resources
                        .iter()
                        .map(|x| ResourceDiffOut {
                            change: x.change.as_str(),
                            diff: &x.unified,
                            resource: ResourceOut(&x.id),
                        })
                        .collect(),
                })
                .collect()
        }),
        not_diffed: r
            .diff
            .as_ref()
            .filter(|d| !d.not_diffed.is_empty())
            .map(|d| {
                d.not_diffed
                    .iter()
                    .map(|n| NotDiffedOut {
                        app: &n.app,
                        why: &n.why,
                    })
                    .collect()
            }),
        merge: r.merge.as_ref().map(|m| MergeOut {
            merge_base: &m.merge_base,
            tree: &m.tree,
        }),
        apps: r
            .apps
            .iter()
            .map(|a| AppOut {
                name: &a.name,
                namespace: &a.namespace,
                plugin: a.plugin.as_deref(),
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
                resource: ResourceOut(&p.resource),
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
                resource: f.resource.as_ref().map(ResourceOut),
                file: f.location.as_ref().map(|l| l.file.as_str()),
                from_merge: f.from_merge,
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
            info,
            warning,
        },
        notes: &r.notes,
    }
}

/// Writes the JSON report.
///
/// # Errors
/// A report that cannot be serialised (the contract's structs always can).
pub(crate) fn emit(r: &Report, bytes: &mut Vec<u8>) -> std::io::Result<()> {
    // Into the bytes themselves, not through `dyn Write`: there each of the
    // hundreds of thousands of tokens of a report of 10,000 apps was a call
    // of its own.
    let start = bytes.len();
    serde_json::to_writer_pretty(&mut *bytes, &out(r)).map_err(std::io::Error::other)?;
    let mut written = bytes.split_off(start);
    super::log_safe_json(&mut written);
    bytes.append(&mut written);
    bytes.push(b'\n');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is written is the contract value, keys sorted at every level,
    /// as `serde_json` prints it.
    #[test]
    fn the_report_is_written_as_its_value_prints() {
        let r = crate::report::tests::sample();
        assert!(r.findings.iter().any(|f| f.acknowledged.is_some()) && !r.prunes.is_empty());
        let mut written = Vec::new();
        emit(&r, &mut written).unwrap_or_else(|e| panic!("{e}"));
        let value = to_value(&r);
        let printed = serde_json::to_string_pretty(&value).unwrap_or_default() + "\n";
        assert_eq!(String::from_utf8_lossy(&written), printed);
        assert_eq!(value["prunes"][0]["resource"]["namespace"], "payments");
    }
}
