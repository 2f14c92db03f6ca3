//! Findings: what a rule reports, independent of any output format.

use std::fmt;

use serde::Serialize;

use crate::manifest::ResourceId;

/// How serious a finding is. Ordered: `Info < Warning < Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Informative.
    Info,
    /// A person should look.
    Warning,
    /// Will cause harm without anyone looking.
    Error,
}

impl Severity {
    /// Lower-case name.
    #[must_use]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    /// Parses `error`, `warning` or `info`.
    #[must_use]
    pub(crate) fn parse(s: &str) -> Option<Severity> {
        match s {
            "error" => Some(Severity::Error),
            "warning" => Some(Severity::Warning),
            "info" => Some(Severity::Info),
            _ => None,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which revision a location refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Side {
    /// The base revision (what is in the cluster now).
    Base,
    /// The head revision (what the change proposes).
    Head,
}

/// A place in the repository.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub(crate) struct Location {
    /// Which revision.
    pub(crate) side: Side,
    /// Repository-relative file.
    pub(crate) file: String,
    /// 1-based line, when known.
    pub(crate) line: Option<u32>,
}

/// One problem found by one rule.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The rule.
    pub rule: &'static RuleMeta,
    /// Severity (chosen by consequence; configuration may override it).
    pub severity: Severity,
    /// Lower-case start, no trailing period, objects in backticks; says the consequence.
    pub message: String,
    /// The Application concerned.
    pub(crate) app: Option<String>,
    /// The resource concerned.
    pub(crate) resource: Option<ResourceId>,
    /// Where to point.
    pub(crate) location: Option<Location>,
    /// What to do about it (imperative).
    pub(crate) help: Option<String>,
    /// Acknowledged as intended (shown, but never fails the run).
    pub(crate) acknowledged: Option<Acknowledgement>,
    /// A field of the resource to point at instead of its document start.
    pub(crate) field: Option<FieldRef>,
    /// In a diff that judged a real merge, the finding is absent when the
    /// change alone is judged against its fork point: it exists only
    /// because of what the target branch gained meanwhile.
    pub(crate) from_merge: bool,
    /// The one line that would set the finding aside (a commit trailer, an
    /// annotation, the configuration), its rule and object filled in;
    /// reports show it on the findings that fail the run.
    pub(crate) acknowledge_with: Option<String>,
}

/// Where an acknowledgement came from: who chose to accept the finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum AckSource {
    /// `gitops-lint.io/allow-prune` on the object in the base revision:
    /// merged before the change, so reviewed like any other change.
    Annotation,
    /// A `Gitops-Lint-Allow` commit trailer of the change itself, written by
    /// its author: shown prominently in every format.
    Trailer,
    /// `gitops-lint.io/ignore` on the object (single-revision rules only).
    IgnoreAnnotation,
}

impl AckSource {
    /// The name used in reports and JSON.
    #[must_use]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            AckSource::Annotation => "annotation",
            AckSource::Trailer => "trailer",
            AckSource::IgnoreAnnotation => "ignore-annotation",
        }
    }
}

/// Why a finding does not fail the run although it is reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Acknowledgement {
    /// Who acknowledged it.
    pub(crate) source: AckSource,
    /// What acknowledged it, as written (`gitops-lint.io/allow-prune: reason`).
    pub(crate) text: String,
}

impl Acknowledgement {
    /// An acknowledgement from `source` reading `text`.
    #[must_use]
    pub(crate) fn new(source: AckSource, text: impl Into<String>) -> Acknowledgement {
        Acknowledgement {
            source,
            text: text.into(),
        }
    }

    /// Chosen by the change's own author rather than merged before it.
    #[must_use]
    pub(crate) fn by_author(&self) -> bool {
        self.source == AckSource::Trailer
    }

    /// How reports mark the finding: a trailer says so, so a reviewer sees
    /// that the change acknowledged its own deletion.
    #[must_use]
    pub(crate) fn label(&self) -> &'static str {
        match self.source {
            AckSource::Annotation => "acknowledged",
            AckSource::Trailer => "acknowledged by commit trailer",
            AckSource::IgnoreAnnotation => "ignored on the object",
        }
    }
}

impl fmt::Display for Acknowledgement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A mapping-key path inside one document of the finding's file; the report
/// stage turns it into a line when it reads the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldRef {
    /// Index of the document in the file's stream.
    pub(crate) doc_index: usize,
    /// Mapping keys from the document root (`metadata`, `annotations`, …).
    pub(crate) path: Vec<String>,
}

impl Finding {
    /// A finding with the rule's default severity.
    #[must_use]
    pub(crate) fn new(rule: &'static RuleMeta, message: impl Into<String>) -> Finding {
        Finding {
            rule,
            severity: rule.default_severity,
            message: message.into(),
            app: None,
            resource: None,
            location: None,
            help: None,
            acknowledged: None,
            field: None,
            from_merge: false,
            acknowledge_with: None,
        }
    }

    /// Sets the severity.
    #[must_use]
    pub(crate) fn severity(mut self, s: Severity) -> Finding {
        self.severity = s;
        self
    }

    /// Sets the app.
    #[must_use]
    pub(crate) fn app(mut self, app: impl Into<String>) -> Finding {
        self.app = Some(app.into());
        self
    }

    /// Sets the resource.
    #[must_use]
    pub(crate) fn resource(mut self, id: ResourceId) -> Finding {
        self.resource = Some(id);
        self
    }

    /// Points at a file (and line) on one side.
    #[must_use]
    pub(crate) fn at(mut self, side: Side, file: Option<&str>, line: Option<u32>) -> Finding {
        if let Some(f) = file {
            self.location = Some(Location {
                side,
                file: f.to_string(),
                line,
            });
        }
        self
    }

    /// Points at a field of the document (when the document is known).
    #[must_use]
    pub(crate) fn field(mut self, doc_index: Option<usize>, path: &[&str]) -> Finding {
        self.field = doc_index.map(|doc_index| FieldRef {
            doc_index,
            path: path.iter().map(|k| (*k).to_string()).collect(),
        });
        self
    }

    /// Sets the help text.
    #[must_use]
    pub(crate) fn help(mut self, help: impl Into<String>) -> Finding {
        self.help = Some(help.into());
        self
    }

    /// What makes two findings the same finding across revisions: rule, app
    /// and resource, never lines or messages (which move with unrelated
    /// edits); with neither app nor resource, the file. The SARIF
    /// fingerprint is a hash of exactly this.
    #[must_use]
    pub(crate) fn identity(&self) -> (&'static str, &str, Option<&ResourceId>, Option<&str>) {
        let file = (self.app.is_none() && self.resource.is_none())
            .then(|| self.location.as_ref().map(|l| l.file.as_str()))
            .flatten();
        (
            self.rule.code,
            self.app.as_deref().unwrap_or(""),
            self.resource.as_ref(),
            file,
        )
    }

    /// Sort key giving deterministic output: file, line, code, app, resource, message.
    #[must_use]
    pub(crate) fn sort_key(&self) -> impl Ord + '_ {
        (
            self.location
                .as_ref()
                .map(|l| (l.file.as_str(), l.line, l.side)),
            self.rule.code,
            self.app.as_deref(),
            self.resource.as_ref(),
            self.message.as_str(),
        )
    }
}

/// What a rule is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Category {
    /// The input could not be analysed.
    Input,
    /// Resources a sync prunes.
    Prune,
    /// Applications deleted.
    Deletion,
    /// Sync hooks.
    Hooks,
    /// Phases and waves.
    Ordering,
    /// Changes the API server refuses.
    Change,
}

impl Category {
    /// Every category, in the order rules are listed.
    pub(crate) const ALL: [Category; 6] = [
        Category::Input,
        Category::Prune,
        Category::Deletion,
        Category::Hooks,
        Category::Ordering,
        Category::Change,
    ];

    /// The lowercase name used in JSON and SARIF.
    #[must_use]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Category::Input => "input",
            Category::Prune => "prune",
            Category::Deletion => "deletion",
            Category::Hooks => "hooks",
            Category::Ordering => "ordering",
            Category::Change => "change",
        }
    }
}

/// When a rule can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Needs two revisions (`diff`).
    Diff,
    /// Looks at one revision (`check`, and changed resources in `diff`).
    Single,
}

impl Mode {
    /// `diff` or `single`.
    #[must_use]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Mode::Diff => "diff",
            Mode::Single => "single",
        }
    }
}

/// Static facts about one rule.
#[derive(Debug)]
pub struct RuleMeta {
    /// `GL` + three digits.
    pub code: &'static str,
    /// kebab-case name of the hazard.
    pub name: &'static str,
    /// Category.
    pub(crate) category: Category,
    /// Severity when nothing else decides.
    pub default_severity: Severity,
    /// When a finding of the rule is reported at another severity than the
    /// default, in words (`rules` and the rule table show it beside the
    /// default); empty when every finding has the default.
    pub severity_note: &'static str,
    /// Diff-only or single-revision.
    pub(crate) mode: Mode,
    /// The Markdown doc (`rules/<CODE>-<name>.md`), embedded at build time.
    pub doc: &'static str,
    /// What may set a finding aside: see [`Suppression`].
    pub(crate) suppression: Suppression,
}

/// What may set a rule's findings aside, besides the configuration that
/// switches the rule off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Suppression {
    /// `gitops-lint.io/ignore` on an object may switch the rule off for it:
    /// rules judging one object as it will be. A deletion is never excused
    /// this way (the annotation would be added by the change that deletes).
    pub(crate) on_object: bool,
    /// `ignorePaths` drops findings located in matching files. Never what a
    /// change does (prunes, cascades...) or what says it cannot be judged:
    /// moving an app's inputs under an ignored path would hide them.
    pub(crate) by_path: bool,
    /// In a diff, a finding a `check` of the base revision also reports
    /// (same fingerprint) is pre-existing and dropped. Rules that judge
    /// their own findings against the base (GL000, GL018: a failure the
    /// change touches stays reported) and rules about a difference between
    /// the revisions (new by construction) do not use it.
    pub(crate) by_fingerprint: bool,
}

impl Suppression {
    /// A difference between the revisions: nothing sets it aside.
    pub(crate) const CHANGE: Suppression = Suppression {
        on_object: false,
        by_path: false,
        by_fingerprint: false,
    };
    /// A difference between the revisions about one object, which the
    /// object may excuse (GL010: an immutable field the author knows about).
    pub(crate) const CHANGED_OBJECT: Suppression = Suppression {
        on_object: true,
        by_path: false,
        by_fingerprint: false,
    };
    /// One object as it will be.
    pub(crate) const OBJECT: Suppression = Suppression {
        on_object: true,
        by_path: true,
        by_fingerprint: true,
    };
    /// The repository as it will be, beyond one object.
    pub(crate) const REPOSITORY: Suppression = Suppression {
        on_object: false,
        by_path: true,
        by_fingerprint: true,
    };
    /// What deletes through a loop once merged: never hidden by a path,
    /// pre-existing when the base has it too.
    pub(crate) const LOOP: Suppression = Suppression {
        on_object: false,
        by_path: false,
        by_fingerprint: true,
    };
    /// A revision that cannot be judged: only the rule itself, comparing
    /// with the base, says whether the change is concerned.
    pub(crate) const UNJUDGED: Suppression = Suppression {
        on_object: false,
        by_path: false,
        by_fingerprint: false,
    };
}

impl RuleMeta {
    /// Whether `code_or_name` is this rule's code (any case) or name.
    #[must_use]
    pub(crate) fn is_named(&self, code_or_name: &str) -> bool {
        self.code.eq_ignore_ascii_case(code_or_name) || self.name == code_or_name
    }

    /// The default severity, followed by when findings depart from it:
    /// `warning (error for ...)`.
    #[must_use]
    pub fn severity_text(&self) -> String {
        if self.severity_note.is_empty() {
            self.default_severity.as_str().to_string()
        } else {
            format!(
                "{} ({})",
                self.default_severity.as_str(),
                self.severity_note
            )
        }
    }

    /// Where the rule's doc is published: `rules/<CODE>-<name>.md` of the
    /// repository `Cargo.toml` names, on its default branch.
    #[must_use]
    pub fn doc_url(&self) -> String {
        format!(
            "{}/blob/main/rules/{}-{}.md",
            env!("CARGO_PKG_REPOSITORY"),
            self.code,
            self.name
        )
    }

    /// The first paragraph of the doc's "What it does" section.
    #[must_use]
    pub fn summary(&self) -> String {
        let mut lines = self
            .doc
            .lines()
            .skip_while(|l| !l.starts_with("## What it does"))
            .skip(1);
        let mut out = Vec::new();
        for l in lines.by_ref() {
            if l.trim().is_empty() {
                if out.is_empty() {
                    continue;
                }
                break;
            }
            out.push(l.trim());
        }
        out.join(" ")
    }
}
