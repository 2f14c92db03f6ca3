//! The command line: subcommands, their flags, and the options of a run
//! they give.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::lint::{self, Options};
use crate::report::FormatSpec;

/// `--version`: the package version and, when the binary was built from a
/// git checkout, its commit (`build.rs`).
static VERSION: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| match option_env!("GITOPS_LINT_COMMIT") {
        Some(commit) => format!("{} (commit {commit})", env!("CARGO_PKG_VERSION")),
        None => env!("CARGO_PKG_VERSION").to_string(),
    });

#[derive(Parser, Debug)]
#[command(
    name = "gitops-lint",
    version = VERSION.as_str(),
    about = "What will this change to an Argo CD repository delete, and what will it wedge?"
)]
pub(super) struct Cli {
    #[command(subcommand)]
    pub(super) command: Command,
}

/// The options of a command, as the run reads them: each subcommand takes
/// only the flags that apply to it (the groups below), the rest keep their
/// defaults.
#[derive(Debug, Clone, Default)]
// Command-line switches: each is one flag a user types.
#[allow(clippy::struct_excessive_bools)]
pub(super) struct Common {
    pub(super) repo: Option<PathBuf>,
    pub(super) config: Option<PathBuf>,
    pub(super) format: Vec<FormatSpec>,
    pub(super) fail_on: FailOn,
    pub(super) color: Color,
    pub(super) kustomize_binary: Option<PathBuf>,
    pub(super) chart_cache: Option<PathBuf>,
    pub(super) offline: bool,
    pub(super) helm_renderer: Option<String>,
    pub(super) helm_binary: Option<PathBuf>,
    pub(super) cache_dir: Option<PathBuf>,
    pub(super) no_cache: bool,
    pub(super) quiet: bool,
    pub(super) verbose: bool,
}

/// The repository a command reads, and its configuration.
#[derive(clap::Args, Debug, Clone)]
pub(super) struct RepoArgs {
    /// The repository (default: the one containing the current directory).
    #[arg(long, value_name = "DIR")]
    pub(super) repo: Option<PathBuf>,
    /// Configuration file (default: .gitops-lint.yaml of the revision judged; in `diff`, of the base).
    #[arg(long, value_name = "FILE")]
    pub(super) config: Option<PathBuf>,
}

/// How the reports of a linting command are written, and when it fails.
#[derive(clap::Args, Debug, Clone)]
pub(super) struct ReportArgs {
    /// Output format: human, json, sarif, github, markdown or diff (the
    /// rendered diff as a unified patch). Repeat to feed
    /// several consumers from one run; `FORMAT=FILE` writes that one to FILE
    /// (e.g. `--format sarif=results.sarif --format github`; `FORMAT=-` is
    /// standard output). At most one format goes to standard output.
    /// Default: human.
    #[arg(long, value_name = "FORMAT[=FILE]", action = clap::ArgAction::Append)]
    pub(super) format: Vec<FormatSpec>,
    /// Exit with status 1 when a finding at or above this level exists.
    #[arg(long, value_enum, default_value = "error")]
    pub(super) fail_on: FailOn,
    /// Colour in human output.
    #[arg(long, value_enum, default_value = "auto")]
    pub(super) color: Color,
}

/// The renderers of the commands that render a repository's apps.
#[derive(clap::Args, Debug, Clone)]
pub(super) struct RenderArgs {
    /// Render Kustomize apps with this external binary (`kustomize` or `kubectl`) instead of natively.
    #[arg(long, value_name = "BIN")]
    pub(super) kustomize_binary: Option<PathBuf>,
    /// Render Helm charts with `native` (in-process, no helm; what it does
    /// not implement is a render error) or `binary` (the pinned `helm
    /// template` on PATH, as Argo CD runs it). Default: `helmRenderer` of
    /// the configuration, else natively, with the helm on PATH (if any)
    /// rendering the charts the native renderer does not implement.
    #[arg(long, value_name = "RENDERER", value_parser = crate::render::HelmRenderer::NAMES)]
    pub(super) helm_renderer: Option<String>,
    /// Render Helm charts with this helm binary (`helm template`, as Argo CD
    /// runs it) instead of natively: `--helm-renderer binary` with BIN.
    #[arg(long, value_name = "BIN")]
    pub(super) helm_binary: Option<PathBuf>,
}

/// Whether charts may be fetched, and where they are read from when not.
#[derive(clap::Args, Debug, Clone)]
pub(super) struct OfflineArgs {
    /// Contact nothing: charts from Helm repositories and OCI registries
    /// are read only from the chart cache of `--cache-dir` (filled by
    /// `gitops-lint charts pull` or an earlier run) or `--chart-cache`; a
    /// note names what would have been fetched. Also `GITOPS_LINT_OFFLINE=1`.
    #[arg(long, env = "GITOPS_LINT_OFFLINE", value_parser = clap::builder::FalseyValueParser::new())]
    pub(super) offline: bool,
    /// In an offline run (`--offline`), read charts from Helm repositories
    /// that the cache directory lacks from `<chart>-<version>.tgz` files in
    /// DIR, made by `helm pull` (keep DIR outside the checkout; the
    /// configuration's `chartCache` is not read: docs/charts.md).
    #[arg(long, value_name = "DIR")]
    pub(super) chart_cache: Option<PathBuf>,
}

/// Where facts and fetched charts are kept between runs.
#[derive(clap::Args, Debug, Clone)]
pub(super) struct CacheDirArg {
    /// Keep facts about content (what each blob and subtree holds, by git
    /// object id) and fetched charts (by repository, chart, version and
    /// digest, under `charts/`) in DIR between runs, so a small change
    /// reads little more than what it touches (default:
    /// `$XDG_CACHE_HOME/gitops-lint`, else `~/.cache/gitops-lint`). Never
    /// inside the repository.
    #[arg(long, value_name = "DIR")]
    pub(super) cache_dir: Option<PathBuf>,
}

/// The cache directory, or none.
#[derive(clap::Args, Debug, Clone)]
pub(super) struct CacheArgs {
    #[command(flatten)]
    pub(super) dir: CacheDirArg,
    /// Keep nothing between runs: every run reads everything it needs.
    #[arg(long, conflicts_with = "cache_dir")]
    pub(super) no_cache: bool,
}

/// How much a linting command prints besides its report.
#[derive(clap::Args, Debug, Clone)]
pub(super) struct Verbosity {
    /// Print less: no notes in human output, no progress on stderr.
    #[arg(short, long, conflicts_with = "verbose")]
    pub(super) quiet: bool,
    /// Print more: what each note summarises, one line each, on stderr;
    /// in a human diff, every app, not only those the change touches.
    #[arg(short, long)]
    pub(super) verbose: bool,
}

/// How `diff` shows the rendered manifests' changes (docs/rendered-diff.md).
#[derive(clap::Args, Debug, Clone)]
pub(super) struct DiffShown {
    /// Show the rendered diff: each changed app's resources, added, removed
    /// and modified, with a unified diff of their YAML, secrets masked
    /// (the default unless the configuration's `diff.show` is false).
    #[arg(long, overrides_with = "no_diff")]
    pub(super) diff: bool,
    /// Do not compute or show the rendered diff.
    #[arg(long)]
    pub(super) no_diff: bool,
    /// Lines of context around each change of the rendered diff (default:
    /// the configuration's `diff.context`, else 3).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub(super) diff_context: Option<u16>,
    /// List the resources of apps the change deletes without their bodies.
    #[arg(long)]
    pub(super) diff_hide_deleted: bool,
    /// Write the changed resources of each changed app at both revisions,
    /// as the rendered diff compares them, to DIR/base/<app>/ and
    /// DIR/head/<app>/ (DIR outside the repository, new or empty).
    #[arg(long, value_name = "DIR", conflicts_with = "no_diff")]
    pub(super) rendered_dir: Option<PathBuf>,
    /// A changed line of the rendered diff matching this regular expression
    /// is no change (repeat for several; besides `diff.ignoreLines`).
    #[arg(long, value_name = "REGEX", action = clap::ArgAction::Append)]
    pub(super) diff_ignore: Vec<String>,
    /// Diff only apps whose name matches this glob (repeat for several;
    /// replaces `diff.apps`).
    #[arg(long, value_name = "GLOB", action = clap::ArgAction::Append)]
    pub(super) diff_app: Vec<String>,
}

impl DiffShown {
    pub(super) fn apply(&self, opts: &mut Options) {
        opts.diff = lint::DiffRequest {
            show: if self.no_diff {
                Some(false)
            } else if self.diff || self.rendered_dir.is_some() {
                // The files of `--rendered-dir` are the rendered diff's.
                Some(true)
            } else {
                None
            },
            context: self.diff_context.map(usize::from),
            hide_deleted: self.diff_hide_deleted,
            rendered_dir: self.rendered_dir.clone(),
            ignore_lines: self.diff_ignore.clone(),
            apps: self.diff_app.clone(),
        };
    }
}

/// No progress on stderr.
#[derive(clap::Args, Debug, Clone)]
pub(super) struct QuietArg {
    /// Print less: no progress on stderr.
    #[arg(short, long)]
    pub(super) quiet: bool,
}

impl RepoArgs {
    fn apply(&self, c: &mut Common) {
        c.repo.clone_from(&self.repo);
        c.config.clone_from(&self.config);
    }
}

impl ReportArgs {
    fn apply(&self, c: &mut Common) {
        c.format.clone_from(&self.format);
        c.fail_on = self.fail_on;
        c.color = self.color;
    }
}

impl RenderArgs {
    fn apply(&self, c: &mut Common) {
        c.kustomize_binary.clone_from(&self.kustomize_binary);
        c.helm_renderer.clone_from(&self.helm_renderer);
        c.helm_binary.clone_from(&self.helm_binary);
    }
}

impl OfflineArgs {
    fn apply(&self, c: &mut Common) {
        c.offline = self.offline;
        c.chart_cache.clone_from(&self.chart_cache);
    }
}

impl CacheArgs {
    fn apply(&self, c: &mut Common) {
        c.cache_dir.clone_from(&self.dir.cache_dir);
        c.no_cache = self.no_cache;
    }
}

impl Verbosity {
    fn apply(&self, c: &mut Common) {
        c.quiet = self.quiet;
        c.verbose = self.verbose;
    }
}

#[derive(Debug, Clone, Copy, Default, ValueEnum)]
pub(super) enum FailOn {
    #[default]
    Error,
    Warning,
    Info,
    Never,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(super) enum RulesFormat {
    Human,
    Json,
}

#[derive(Debug, Clone, Copy, Default, ValueEnum)]
pub(super) enum Color {
    #[default]
    Auto,
    Always,
    Never,
}

#[derive(Subcommand, Debug)]
pub(super) enum ChartsAction {
    /// Fetch into the cache directory every chart the Applications of both revisions of RANGE install (as `diff` reads RANGE), from the repositories `diff` may contact, and print what was fetched: an air-gapped job then runs `diff --offline` on the same cache directory.
    Pull {
        /// As for `diff`.
        range: Option<String>,
        /// As for `diff`.
        #[arg(long)]
        no_merge: bool,
        #[command(flatten)]
        repo: RepoArgs,
        #[command(flatten)]
        render: RenderArgs,
        #[command(flatten)]
        cache: CacheDirArg,
        #[command(flatten)]
        quiet: QuietArg,
    },
}

#[derive(Subcommand, Debug)]
pub(super) enum Command {
    /// What merging RANGE would make Argo CD delete: the merge of B into A's tip, judged against A's tip (default: HEAD into origin/HEAD, else origin/main, origin/master, main or master).
    Diff {
        /// `A..B` or `A...B` (both judge the merge of B into A; with --no-merge, B against A, or against their merge base), or `A` (meaning `A..HEAD`); B may be `WORKTREE` (or `INDEX`) to include edits not yet committed (or only staged ones), which are compared as they are.
        range: Option<String>,
        /// Judge B as it is instead of its merge into A: `A..B` compares B with A, `A...B` B with their merge base. For a change that conflicts with A.
        #[arg(long)]
        no_merge: bool,
        /// Report single-revision findings on every resource, not only on those the change touched (apps whose inputs are unchanged are then rendered too).
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        shown: DiffShown,
        #[command(flatten)]
        repo: RepoArgs,
        #[command(flatten)]
        report: ReportArgs,
        #[command(flatten)]
        render: RenderArgs,
        #[command(flatten)]
        offline: OfflineArgs,
        #[command(flatten)]
        cache: CacheArgs,
        #[command(flatten)]
        verbosity: Verbosity,
    },
    /// Charts from Helm repositories and OCI registries (`charts pull`).
    Charts {
        #[command(subcommand)]
        action: ChartsAction,
    },
    /// Single-revision rules over one tree (default: the working directory; `INDEX` for staged content).
    Check {
        /// A revision, `WORKTREE` or `INDEX`.
        rev: Option<String>,
        #[command(flatten)]
        repo: RepoArgs,
        #[command(flatten)]
        report: ReportArgs,
        #[command(flatten)]
        render: RenderArgs,
        #[command(flatten)]
        offline: OfflineArgs,
        #[command(flatten)]
        cache: CacheArgs,
        #[command(flatten)]
        verbosity: Verbosity,
    },
    /// Print the manifests Argo CD would render for PATH, or for the Application NAME (`--app`), as a YAML stream.
    #[command(
        after_help = "With --app, every source of the Application is rendered with all its options \
(Kustomize, Helm with its values and parameters, plain directories, multi-source `$ref` value \
files), as `argocd app manifests` would show them, in the renderer's order; an object two \
sources render appears once, as the last one renders it. NAME is the name reports show \
(`name`, or `namespace/name` outside argocd). An app that cannot be rendered prints the \
render error and exits 2. An app with a source this run cannot read (another repository, a \
Helm repository chart not in the chart cache, a revision the clone lacks) prints what its other \
sources render, names each source left out on stderr, and exits 3."
    )]
    Render {
        /// Directory of the source (relative to the current directory).
        #[arg(required_unless_present = "app", conflicts_with = "app")]
        path: Option<String>,
        /// Render the Application NAME of the repository instead of a directory.
        #[arg(long, value_name = "NAME")]
        app: Option<String>,
        /// Revision to read (default: the working directory; `INDEX` for staged content).
        #[arg(long)]
        rev: Option<String>,
        /// Destination namespace for namespaced resources without one (PATH only: an app has its own).
        #[arg(long, default_value = "", conflicts_with = "app")]
        namespace: String,
        #[command(flatten)]
        repo: RepoArgs,
        #[command(flatten)]
        render: RenderArgs,
        #[command(flatten)]
        offline: OfflineArgs,
        #[command(flatten)]
        cache: CacheArgs,
        #[command(flatten)]
        quiet: QuietArg,
    },
    /// Compare HEAD with the staged index (for the pre-commit hook).
    PreCommit {
        #[command(flatten)]
        repo: RepoArgs,
        #[command(flatten)]
        report: ReportArgs,
        #[command(flatten)]
        render: RenderArgs,
        #[command(flatten)]
        offline: OfflineArgs,
        #[command(flatten)]
        cache: CacheArgs,
        #[command(flatten)]
        verbosity: Verbosity,
    },
    /// Print the documentation of a rule.
    Explain {
        /// A code (`GL001`) or name (`stateful-prune`).
        rule: String,
    },
    /// List every rule.
    Rules {
        /// `human` (a table) or `json` (code, name, category, default severity, mode, summary).
        #[arg(long, value_enum, default_value = "human")]
        format: RulesFormat,
    },
    /// Print the completion script of SHELL: `gitops-lint completions bash > /etc/bash_completion.d/gitops-lint` (docs/cli.md).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `gitops-lint man > /usr/local/share/man/man1/gitops-lint.1`.
    Man,
    /// Build a small GitOps repository in a temporary directory and show a diff of a risky change.
    Demo {
        #[command(flatten)]
        report: ReportArgs,
        #[command(flatten)]
        cache: CacheArgs,
        #[command(flatten)]
        verbosity: Verbosity,
    },
}

impl Command {
    /// The options of the run, from the flags this command takes (`explain`
    /// and `rules` take none of them).
    pub(super) fn common(&self) -> Option<Common> {
        let mut c = Common::default();
        match self {
            Command::Diff {
                repo,
                report,
                render,
                offline,
                cache,
                verbosity,
                ..
            }
            | Command::Check {
                repo,
                report,
                render,
                offline,
                cache,
                verbosity,
                ..
            }
            | Command::PreCommit {
                repo,
                report,
                render,
                offline,
                cache,
                verbosity,
            } => {
                repo.apply(&mut c);
                report.apply(&mut c);
                render.apply(&mut c);
                offline.apply(&mut c);
                cache.apply(&mut c);
                verbosity.apply(&mut c);
            }
            Command::Render {
                repo,
                render,
                offline,
                cache,
                quiet,
                ..
            } => {
                repo.apply(&mut c);
                render.apply(&mut c);
                offline.apply(&mut c);
                cache.apply(&mut c);
                c.quiet = quiet.quiet;
            }
            Command::Charts {
                action:
                    ChartsAction::Pull {
                        repo,
                        render,
                        cache,
                        quiet,
                        ..
                    },
            } => {
                repo.apply(&mut c);
                render.apply(&mut c);
                c.cache_dir.clone_from(&cache.cache_dir);
                c.quiet = quiet.quiet;
            }
            Command::Demo {
                report,
                cache,
                verbosity,
            } => {
                report.apply(&mut c);
                cache.apply(&mut c);
                verbosity.apply(&mut c);
            }
            Command::Explain { .. }
            | Command::Rules { .. }
            | Command::Completions { .. }
            | Command::Man => return None,
        }
        Some(c)
    }
}
