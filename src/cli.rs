//! Command-line parsing and wiring; the only place that prints.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

use crate::finding::Severity;
use crate::lint::{self, LintError, Options, Revision};
use crate::report::{self, Format, FormatSpec};
use crate::rules;

/// What a run ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExitStatus {
    /// No finding at or above `--fail-on`.
    Success,
    /// Findings at or above `--fail-on`.
    Failure,
    /// The request cannot be carried out as made: a command line, a
    /// configuration, a revision or a repository path to change.
    Usage,
    /// `render --app` printed what it could, but left out sources it
    /// cannot read (named on stderr).
    Partial,
    /// The run itself failed: a repository it cannot read, a budget
    /// exceeded, a render that failed, an output it cannot write.
    Error,
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> ExitCode {
        match s {
            ExitStatus::Success => ExitCode::SUCCESS,
            ExitStatus::Failure => ExitCode::from(1),
            ExitStatus::Usage => ExitCode::from(2),
            ExitStatus::Partial => ExitCode::from(3),
            ExitStatus::Error => ExitCode::from(4),
        }
    }
}

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
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The options of a command, as the run reads them: each subcommand takes
/// only the flags that apply to it (the groups below), the rest keep their
/// defaults.
#[derive(Debug, Clone, Default)]
// Command-line switches: each is one flag a user types.
#[allow(clippy::struct_excessive_bools)]
struct Common {
    repo: Option<PathBuf>,
    config: Option<PathBuf>,
    format: Vec<FormatSpec>,
    fail_on: FailOn,
    color: Color,
    kustomize_binary: Option<PathBuf>,
    chart_cache: Option<PathBuf>,
    offline: bool,
    helm_renderer: Option<String>,
    helm_binary: Option<PathBuf>,
    cache_dir: Option<PathBuf>,
    no_cache: bool,
    quiet: bool,
    verbose: bool,
}

/// The repository a command reads, and its configuration.
#[derive(clap::Args, Debug, Clone)]
struct RepoArgs {
    /// The repository (default: the one containing the current directory).
    #[arg(long, value_name = "DIR")]
    repo: Option<PathBuf>,
    /// Configuration file (default: .gitops-lint.yaml of the revision judged; in `diff`, of the base).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

/// How the reports of a linting command are written, and when it fails.
#[derive(clap::Args, Debug, Clone)]
struct ReportArgs {
    /// Output format: human, json, sarif, github, markdown or diff (the
    /// rendered diff as a unified patch). Repeat to feed
    /// several consumers from one run; `FORMAT=FILE` writes that one to FILE
    /// (e.g. `--format sarif=results.sarif --format github`; `FORMAT=-` is
    /// standard output). At most one format goes to standard output.
    /// Default: human.
    #[arg(long, value_name = "FORMAT[=FILE]", action = clap::ArgAction::Append)]
    format: Vec<FormatSpec>,
    /// Exit with status 1 when a finding at or above this level exists.
    #[arg(long, value_enum, default_value = "error")]
    fail_on: FailOn,
    /// Colour in human output.
    #[arg(long, value_enum, default_value = "auto")]
    color: Color,
}

/// The renderers of the commands that render a repository's apps.
#[derive(clap::Args, Debug, Clone)]
struct RenderArgs {
    /// Render Kustomize apps with this external binary (`kustomize` or `kubectl`) instead of natively.
    #[arg(long, value_name = "BIN")]
    kustomize_binary: Option<PathBuf>,
    /// Render Helm charts with `native` (in-process, no helm; what it does
    /// not implement is a render error) or `binary` (the pinned `helm
    /// template` on PATH, as Argo CD runs it). Default: `helmRenderer` of
    /// the configuration, else natively, with the helm on PATH (if any)
    /// rendering the charts the native renderer does not implement.
    #[arg(long, value_name = "RENDERER", value_parser = crate::render::HelmRenderer::NAMES)]
    helm_renderer: Option<String>,
    /// Render Helm charts with this helm binary (`helm template`, as Argo CD
    /// runs it) instead of natively: `--helm-renderer binary` with BIN.
    #[arg(long, value_name = "BIN")]
    helm_binary: Option<PathBuf>,
}

/// Whether charts may be fetched, and where they are read from when not.
#[derive(clap::Args, Debug, Clone)]
struct OfflineArgs {
    /// Contact nothing: charts from Helm repositories and OCI registries
    /// are read only from the chart cache of `--cache-dir` (filled by
    /// `gitops-lint charts pull` or an earlier run) or `--chart-cache`; a
    /// note names what would have been fetched. Also `GITOPS_LINT_OFFLINE=1`.
    #[arg(long, env = "GITOPS_LINT_OFFLINE", value_parser = clap::builder::FalseyValueParser::new())]
    offline: bool,
    /// In an offline run (`--offline`), read charts from Helm repositories
    /// that the cache directory lacks from `<chart>-<version>.tgz` files in
    /// DIR, made by `helm pull` (keep DIR outside the checkout; the
    /// configuration's `chartCache` is not read: docs/charts.md).
    #[arg(long, value_name = "DIR")]
    chart_cache: Option<PathBuf>,
}

/// Where facts and fetched charts are kept between runs.
#[derive(clap::Args, Debug, Clone)]
struct CacheDirArg {
    /// Keep facts about content (what each blob and subtree holds, by git
    /// object id) and fetched charts (by repository, chart, version and
    /// digest, under `charts/`) in DIR between runs, so a small change
    /// reads little more than what it touches (default:
    /// `$XDG_CACHE_HOME/gitops-lint`, else `~/.cache/gitops-lint`). Never
    /// inside the repository.
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
}

/// The cache directory, or none.
#[derive(clap::Args, Debug, Clone)]
struct CacheArgs {
    #[command(flatten)]
    dir: CacheDirArg,
    /// Keep nothing between runs: every run reads everything it needs.
    #[arg(long, conflicts_with = "cache_dir")]
    no_cache: bool,
}

/// How much a linting command prints besides its report.
#[derive(clap::Args, Debug, Clone)]
struct Verbosity {
    /// Print less: no notes in human output, no progress on stderr.
    #[arg(short, long, conflicts_with = "verbose")]
    quiet: bool,
    /// Print more: what each note summarises, one line each, on stderr;
    /// in a human diff, every app, not only those the change touches.
    #[arg(short, long)]
    verbose: bool,
}

/// How `diff` shows the rendered manifests' changes (docs/rendered-diff.md).
#[derive(clap::Args, Debug, Clone)]
struct DiffShown {
    /// Show the rendered diff: each changed app's resources, added, removed
    /// and modified, with a unified diff of their YAML, secrets masked
    /// (the default unless the configuration's `diff.show` is false).
    #[arg(long, overrides_with = "no_diff")]
    diff: bool,
    /// Do not compute or show the rendered diff.
    #[arg(long)]
    no_diff: bool,
    /// Lines of context around each change of the rendered diff (default:
    /// the configuration's `diff.context`, else 3).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(0..=1000))]
    diff_context: Option<u16>,
    /// List the resources of apps the change deletes without their bodies.
    #[arg(long)]
    diff_hide_deleted: bool,
    /// Write the changed resources of each changed app at both revisions,
    /// as the rendered diff compares them, to DIR/base/<app>/ and
    /// DIR/head/<app>/ (DIR outside the repository, new or empty).
    #[arg(long, value_name = "DIR", conflicts_with = "no_diff")]
    rendered_dir: Option<PathBuf>,
    /// A changed line of the rendered diff matching this regular expression
    /// is no change (repeat for several; besides `diff.ignoreLines`).
    #[arg(long, value_name = "REGEX", action = clap::ArgAction::Append)]
    diff_ignore: Vec<String>,
    /// Diff only apps whose name matches this glob (repeat for several;
    /// replaces `diff.apps`).
    #[arg(long, value_name = "GLOB", action = clap::ArgAction::Append)]
    diff_app: Vec<String>,
}

impl DiffShown {
    fn apply(&self, opts: &mut Options) {
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
struct QuietArg {
    /// Print less: no progress on stderr.
    #[arg(short, long)]
    quiet: bool,
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
enum FailOn {
    #[default]
    Error,
    Warning,
    Info,
    Never,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum RulesFormat {
    Human,
    Json,
}

#[derive(Debug, Clone, Copy, Default, ValueEnum)]
enum Color {
    #[default]
    Auto,
    Always,
    Never,
}

#[derive(Subcommand, Debug)]
enum ChartsAction {
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
enum Command {
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

fn options(c: &Common, progress: &Spinner) -> Options {
    let helm = match &c.helm_binary {
        Some(bin) => resolve_tool(bin),
        None => find_on_path("helm"),
    };
    Options {
        repo: c.repo.clone(),
        config: c.config.clone(),
        all: false,
        render_unchanged: false,
        render: crate::render::RenderOptions {
            helm,
            // From the configuration's `argocdVersion` (`lint`).
            argocd_version: None,
            external_kustomize: c.kustomize_binary.clone(),
            helm_renderer: c
                .helm_renderer
                .as_deref()
                .and_then(crate::render::HelmRenderer::parse)
                .or(c
                    .helm_binary
                    .as_ref()
                    .map(|_| crate::render::HelmRenderer::Binary)),
            // Charts from repositories are fetched (or, offline, read from
            // the cache of `--cache-dir`) by every command.
            chart_cache: Some(std::sync::Arc::new(
                crate::render::chart_cache::ChartCache::with(
                    c.chart_cache.clone(),
                    &c.chart_cache
                        .as_ref()
                        .map(|d| d.display().to_string())
                        .unwrap_or_default(),
                    Some(std::sync::Arc::new(
                        crate::render::chart_fetch::Fetcher::new(
                            crate::render::chart_fetch::FetchSettings {
                                cache_dir: cache_dir(c),
                                offline: c.offline,
                                credentials: None,
                                timeout: None,
                            },
                        ),
                    )),
                ),
            )),
            helm_runs: std::sync::Arc::default(),
        },
        progress: progress.callback(),
        // For the benchmark (bench/): counts of the work done, on stderr.
        stats: std::env::var_os("GITOPS_LINT_STATS").map(|_| std::sync::Arc::default()),
        cache_dir: cache_dir(c),
        exit_after: true,
        // A CI checkout is the commit the diff reads: nothing there was
        // edited by a person who could be told their edits are left out,
        // and the status of a large working tree costs more than the diff.
        uncommitted: if in_ci() {
            lint::Uncommitted::NotLookedFor
        } else {
            lint::Uncommitted::Said
        },
        diff: lint::DiffRequest::default(),
        // `diff --no-merge` sets it.
        judge: lint::Judge::Merge,
    }
}

/// Whether the run is in CI or under pre-commit (their conventional
/// environment variables, set to anything but the empty string).
fn in_ci() -> bool {
    ["CI", "GITHUB_ACTIONS", "PRE_COMMIT"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
}

/// The cache directory of the run (`None` with `--no-cache`).
fn cache_dir(c: &Common) -> Option<PathBuf> {
    if c.no_cache {
        None
    } else {
        c.cache_dir.clone().or_else(crate::cache::default_dir)
    }
}

/// A spinner on stderr, shown only to a person at a terminal: never in CI
/// logs, never when stderr is redirected, and cleared before output prints.
struct Spinner(Option<indicatif::ProgressBar>);

impl Spinner {
    fn new() -> Spinner {
        if in_ci() || !std::io::stderr().is_terminal() {
            return Spinner(None);
        }
        // Hidden at first: runs that finish quickly never show anything.
        let pb = indicatif::ProgressBar::hidden();
        if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            pb.set_style(style);
        }
        pb.enable_steady_tick(std::time::Duration::from_millis(120));
        let shown = pb.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(500));
            if !shown.is_finished() {
                shown.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            }
        });
        Spinner(Some(pb))
    }

    fn callback(&self) -> crate::lint::Progress {
        match &self.0 {
            Some(pb) => {
                let pb = pb.clone();
                crate::lint::Progress::new(move |m| pb.set_message(m.to_string()))
            }
            None => crate::lint::Progress::default(),
        }
    }

    fn clear(&self) {
        if let Some(pb) = &self.0 {
            pb.finish_and_clear();
        }
    }
}

/// The demo succeeds when it has shown its findings (so `demo && cargo test`
/// goes on) and says what a real diff of the same change would exit with.
#[allow(clippy::print_stderr)]
fn demo_status(real: ExitStatus) -> ExitStatus {
    let what = match real {
        ExitStatus::Success => "0: no finding at or above --fail-on",
        ExitStatus::Failure => "1: there are findings at or above --fail-on",
        ExitStatus::Usage | ExitStatus::Error | ExitStatus::Partial => return real,
    };
    eprintln!(
        "gitops-lint demo: a real `gitops-lint diff` of this change exits {what}; the demo itself exits 0"
    );
    ExitStatus::Success
}

/// A tool asked for by name or path must exist: otherwise every app it
/// renders would turn into a render-failed warning and the run would pass,
/// when the user's request simply cannot be carried out.
fn requested_tools(c: &Common) -> Result<(), String> {
    if let Some(dir) = &c.chart_cache {
        if !dir.is_dir() {
            return Err(format!(
                "--chart-cache {}: no such directory; create it and fill it with `helm pull`, or drop the option",
                dir.display()
            ));
        }
    }
    if let Some(bin) = &c.helm_binary {
        if c.helm_renderer.as_deref() == Some("native") {
            return Err(
                "--helm-binary renders with helm and --helm-renderer native without: drop one"
                    .to_string(),
            );
        }
        if resolve_tool(bin).is_none() {
            return Err(format!(
                "--helm-binary {}: no such executable{}; install helm (v3.17.1), give its full path, or drop the option to render Helm natively",
                bin.display(),
                on_path_hint(bin)
            ));
        }
    }
    let Some(bin) = &c.kustomize_binary else {
        return Ok(());
    };
    if resolve_tool(bin).is_some() {
        Ok(())
    } else {
        Err(format!(
            "--kustomize-binary {}: no such executable{}; install it, give its full path, or drop the option to render Kustomize natively",
            bin.display(),
            on_path_hint(bin)
        ))
    }
}

/// A tool named on the command line: a path as given, a bare name found
/// on PATH.
fn resolve_tool(bin: &Path) -> Option<PathBuf> {
    if bin.components().count() > 1 {
        bin.is_file().then(|| bin.to_path_buf())
    } else {
        find_on_path(&bin.to_string_lossy())
    }
}

fn on_path_hint(bin: &Path) -> &'static str {
    if bin.components().count() > 1 {
        ""
    } else {
        " on PATH"
    }
}

/// Finds an executable on PATH. Relative entries (`.`, `bin`, an empty
/// entry) are skipped: they name the current directory, which in CI is the
/// checked-out pull request.
#[must_use]
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn use_color(c: Color) -> bool {
    match c {
        Color::Always => true,
        Color::Never => false,
        // The conventions of no-color.org and bixense.com/clicolors:
        // NO_COLOR wins, then FORCE_COLOR / CLICOLOR_FORCE (not `0`), then a
        // terminal that is not `TERM=dumb`.
        Color::Auto => {
            let set = |v: &str| std::env::var_os(v).is_some_and(|x| !x.is_empty());
            let forced = |v: &str| std::env::var_os(v).is_some_and(|x| !x.is_empty() && x != "0");
            if set("NO_COLOR") {
                false
            } else if forced("FORCE_COLOR") || forced("CLICOLOR_FORCE") {
                true
            } else {
                std::io::stdout().is_terminal()
                    && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
            }
        }
    }
}

/// The width human output on stdout wraps to: `COLUMNS`, else the
/// terminal's, when stdout is a terminal (within 40 to 400 columns); the
/// fixed [`report::HUMAN_WIDTH`] when it is not (a file, a pipe, a CI
/// log), so the same report is the same text there.
fn terminal_width() -> usize {
    let stdout = std::io::stdout();
    if !stdout.is_terminal() {
        return report::HUMAN_WIDTH;
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .or_else(|| terminal_size::terminal_size_of(&stdout).map(|(w, _)| usize::from(w.0)))
        .map_or(report::HUMAN_WIDTH, |w| w.clamp(40, 400))
}

fn fail_level(f: FailOn) -> Option<Severity> {
    match f {
        FailOn::Error => Some(Severity::Error),
        FailOn::Warning => Some(Severity::Warning),
        FailOn::Info => Some(Severity::Info),
        FailOn::Never => None,
    }
}

#[allow(clippy::print_stderr)]
fn print_stats(opts: &Options) {
    if let Some(s) = &opts.stats {
        let s = s.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        eprintln!("stats: {s}");
    }
}

#[allow(clippy::print_stderr)]
fn print_warnings(warnings: &[String]) {
    for w in warnings {
        eprintln!("gitops-lint: note: {}", one_log_line(w));
    }
}

#[allow(clippy::print_stderr)]
fn print_details(details: &[String]) {
    for d in details {
        eprintln!("gitops-lint: {}", one_log_line(d));
    }
}

/// Text for one line of stderr after gitops-lint's own prefix: an error
/// or a detail quotes the repository (a repoURL, a path, a tool's error),
/// and a CI runner reads a log line starting `::` or holding `##[` as a
/// command. Line breaks and other controls are escaped, so nothing
/// quoted starts a line, and the markers are broken.
fn one_log_line(s: &str) -> String {
    report::without_runner_commands(&report::printable(s, false))
}

/// `--quiet` drops the notes when every output is read by a person.
fn quiet_notes(report: &mut report::Report, specs: &[FormatSpec]) {
    if specs
        .iter()
        .all(|s| matches!(s.format, Format::Human | Format::Github))
    {
        report.notes.clear();
    }
}

/// `charts pull`: a diff that renders every app at both revisions, for
/// the charts it fetches; prints them, and what could not be fetched.
fn charts_pull(
    range: Option<&str>,
    no_merge: bool,
    common: &Common,
    spinner: &Spinner,
) -> ExitStatus {
    let mut opts = options(common, spinner);
    opts.render_unchanged = true;
    if no_merge {
        opts.judge = lint::Judge::AsIs;
    }
    let report = match lint::diff(range, &opts) {
        Ok(r) => r,
        Err(e) => return stopped(&e),
    };
    drop(report);
    let Some(fetcher) = opts
        .render
        .chart_cache
        .as_ref()
        .and_then(|c| c.fetcher().cloned())
    else {
        return failed(&"no chart fetcher");
    };
    spinner.clear();
    let fetched = fetcher.fetched();
    let cached = fetcher.cached();
    let failed = fetcher.failures();
    for line in &fetched {
        println!("fetched {line}");
    }
    for line in &cached {
        println!("cached {line}");
    }
    for line in &failed {
        println!("not fetched: {line}");
    }
    println!(
        "{} fetched, {} already cached, {} not fetched",
        fetched.len(),
        cached.len(),
        failed.len()
    );
    if failed.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    }
}

/// A run that failed (exit status 4), its cause on one line of stderr.
#[allow(clippy::print_stderr)]
fn failed(e: &dyn std::fmt::Display) -> ExitStatus {
    eprintln!("gitops-lint: error: {}", one_log_line(&e.to_string()));
    ExitStatus::Error
}

/// A request that cannot be carried out as made (exit status 2), what to
/// change on one line of stderr.
#[allow(clippy::print_stderr)]
fn refused(e: &dyn std::fmt::Display) -> ExitStatus {
    eprintln!("gitops-lint: error: {}", one_log_line(&e.to_string()));
    ExitStatus::Usage
}

/// A request that stopped: refused when it is the request to change,
/// failed otherwise.
#[allow(clippy::print_stderr)]
fn stopped(e: &LintError) -> ExitStatus {
    // Every problem of a configuration on a line of its own, each like a
    // usage error: `FILE:LINE:COLUMN: ...`.
    if let LintError::Config(c) = e {
        for line in c.lines() {
            eprintln!("gitops-lint: error: {}", one_log_line(&line));
        }
        return ExitStatus::Usage;
    }
    if e.is_usage() {
        refused(e)
    } else {
        failed(e)
    }
}

/// `render --app` of an app whose sources were not all read: each source
/// left out on stderr, after the objects of the others.
#[allow(clippy::print_stderr)]
fn partial_render(left_out: &[String]) -> ExitStatus {
    for why in left_out {
        eprintln!("gitops-lint: partial render, what this source renders is missing: {why}");
    }
    ExitStatus::Partial
}

fn write_out(text: &[u8]) -> ExitStatus {
    let mut out = std::io::stdout().lock();
    match out.write_all(text).and_then(|()| out.flush()) {
        Ok(()) => ExitStatus::Success,
        // A closed pipe (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitStatus::Success,
        Err(e) => failed(&e),
    }
}

/// The requested outputs, defaulting to human on stdout.
fn outputs(common: &Common) -> Result<Vec<FormatSpec>, String> {
    if common.format.is_empty() {
        return Ok(vec![FormatSpec {
            format: Format::Human,
            path: None,
        }]);
    }
    let to_stdout: Vec<&str> = common
        .format
        .iter()
        .filter(|f| f.path.is_none())
        .map(|f| f.format.as_str())
        .collect();
    if to_stdout.len() > 1 {
        return Err(format!(
            "{} would all write to standard output; give all but one a file, as in `--format {}=FILE`",
            to_stdout.join(" and "),
            to_stdout[1]
        ));
    }
    Ok(common.format.clone())
}

fn finish(result: Result<report::Report, LintError>, common: &Common) -> ExitStatus {
    let specs = match outputs(common) {
        Ok(s) => s,
        Err(e) => return refused(&e),
    };
    let mut report = match result {
        Ok(r) => r,
        Err(e) => return stopped(&e),
    };
    // Human output on stdout says them already, among its notes.
    let human_on_stdout = specs
        .iter()
        .any(|s| matches!(s.format, Format::Human) && s.path.is_none());
    if !common.quiet && !human_on_stdout {
        print_warnings(&report.warnings);
    }
    if common.verbose {
        print_details(&report.details);
        report.list_every_app = true;
    }
    report.fail_on = fail_level(common.fail_on);
    if common.quiet {
        // Notes stay in the machine formats, whose readers filter them.
        quiet_notes(&mut report, &specs);
    }
    let mut status = ExitStatus::Success;
    // Files first, so a closed stdout pipe never loses the SARIF file.
    let mut ordered: Vec<&FormatSpec> = specs.iter().filter(|s| s.path.is_some()).collect();
    ordered.extend(specs.iter().filter(|s| s.path.is_none()));
    for spec in ordered {
        let color = spec.path.is_none() && use_color(common.color);
        report.width = if spec.path.is_none() {
            terminal_width()
        } else {
            report::HUMAN_WIDTH
        };
        let mut buf = Vec::new();
        if let Err(e) = report::emit(spec.format, &report, color, &mut buf) {
            return failed(&e);
        }
        match &spec.path {
            Some(p) => {
                // Not through a symlink: in CI the output's directory may be
                // the pull request's checkout, where a committed link would
                // make the run overwrite the file it points at.
                if let Err(e) = crate::local_files::write_output(p, &buf) {
                    return failed(&format!(
                        "cannot write {} output to {}: {e}",
                        spec.format.as_str(),
                        p.display()
                    ));
                }
            }
            None => status = write_out(&buf),
        }
    }
    match status {
        ExitStatus::Success if report.fails_at(fail_level(common.fail_on)) => ExitStatus::Failure,
        s => s,
    }
}

/// Runs the command line.
#[must_use]
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                ExitStatus::Usage
            } else {
                ExitStatus::Success
            };
            let help = e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand;
            if code == ExitStatus::Usage && !help {
                usage_error(&e);
            } else {
                let _ = e.print();
            }
            return code.into();
        }
    };
    run(cli).into()
}

/// A usage error as one line on stderr (clap's first line, plus the
/// possible values when it lists them), so CI logs show one clear cause.
#[allow(clippy::print_stderr)]
fn usage_error(e: &clap::Error) {
    let text = e.render().to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("error: invalid arguments");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    // clap lists missing arguments on the lines after a colon.
    let missing: Vec<&str> = if first.ends_with(':') {
        lines
            .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more"))
            .collect()
    } else {
        Vec::new()
    };
    let first = if missing.is_empty() {
        first.to_string()
    } else {
        format!("{first} {}", missing.join(", "))
    };
    let values = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("[possible values:"))
        .map(|l| format!(" {l}"))
        .unwrap_or_default();
    // clap's "a similar subcommand exists" and "to pass ... as a value" tips.
    let tips: String = text
        .lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("tip: "))
        .map(|t| format!("; {t}"))
        .collect();
    eprintln!("gitops-lint: error: {first}{values}{tips} (see --help)");
}

impl Command {
    /// The options of the run, from the flags this command takes (`explain`
    /// and `rules` take none of them).
    fn common(&self) -> Option<Common> {
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

fn run(cli: Cli) -> ExitStatus {
    let quiet = cli.command.common().is_some_and(|c| c.quiet);
    let spinner = if quiet { Spinner(None) } else { Spinner::new() };
    let status = run_command(cli, &spinner);
    spinner.clear();
    status
}

fn run_command(cli: Cli, spinner: &Spinner) -> ExitStatus {
    let common = cli.command.common();
    if let Some(common) = &common {
        // Unusable requests, before doing any work.
        if let Some(e) = outputs(common)
            .err()
            .or_else(|| requested_tools(common).err())
        {
            return refused(&e);
        }
    }
    let common = common.unwrap_or_default();
    let options = |c: &Common| options(c, spinner);
    let finish = |r: Result<report::Report, LintError>, c: &Common| {
        spinner.clear();
        finish(r, c)
    };
    match cli.command {
        Command::Diff {
            range,
            all,
            shown,
            no_merge,
            ..
        } => {
            let mut opts = options(&common);
            shown.apply(&mut opts);
            opts.all = all;
            if no_merge {
                opts.judge = lint::Judge::AsIs;
            }
            opts.render_unchanged = all;
            let status = finish(lint::diff(range.as_deref(), &opts), &common);
            print_stats(&opts);
            status
        }
        Command::Charts {
            action: ChartsAction::Pull {
                range, no_merge, ..
            },
        } => charts_pull(range.as_deref(), no_merge, &common, spinner),
        Command::Check { rev, .. } => {
            let opts = options(&common);
            let status = finish(
                lint::check(&Revision::parse(rev.as_deref()), &opts),
                &common,
            );
            print_stats(&opts);
            status
        }
        Command::PreCommit { .. } => {
            // A commit hook stops a commit on danger; the rendered diff of
            // what is staged is `git diff --cached`'s business.
            let mut opts = options(&common);
            opts.diff.show = Some(false);
            finish(lint::diff_staged(&opts), &common)
        }
        Command::Render {
            path,
            app,
            rev,
            namespace,
            ..
        } => {
            let rev = Revision::parse(rev.as_deref());
            let opts = options(&common);
            let mut left_out = Vec::new();
            let result = match (&app, &path) {
                (Some(name), _) => lint::render_app(&rev, name, &opts).map(|r| {
                    left_out = r.left_out;
                    r.yaml
                }),
                (None, Some(path)) => lint::render(&rev, path, &namespace, &opts),
                // clap requires one of them.
                (None, None) => Err(LintError::Usage(
                    "render needs a PATH or --app NAME".to_string(),
                )),
            };
            spinner.clear();
            match result {
                Ok(text) => {
                    let written = write_out(text.as_bytes());
                    if written != ExitStatus::Success || left_out.is_empty() {
                        return written;
                    }
                    partial_render(&left_out)
                }
                Err(e) => stopped(&e),
            }
        }
        Command::Explain { rule } => match rules::find(&rule) {
            Some(r) => write_out(r.meta().doc.as_bytes()),
            None => {
                let known: Vec<&str> = rules::ALL
                    .iter()
                    .flat_map(|r| [r.meta().code, r.meta().name])
                    .collect();
                let close = crate::config::close_names(&rule, &known);
                let hint = if close.is_empty() {
                    String::new()
                } else {
                    let quoted: Vec<String> = close.iter().map(|k| format!("`{k}`")).collect();
                    format!("did you mean {}? ", quoted.join(", "))
                };
                refused(&format!(
                    "unknown rule `{rule}` ({hint}run `gitops-lint rules` for the list)"
                ))
            }
        },
        Command::Rules {
            format: RulesFormat::Json,
        } => {
            let list: Vec<serde_json::Value> = rules::ALL
                .iter()
                .map(|r| {
                    let m = r.meta();
                    serde_json::json!({
                        "code": m.code,
                        "name": m.name,
                        "category": m.category.as_str(),
                        "defaultSeverity": m.default_severity.as_str(),
                        // When findings depart from the default, in words; null when never.
                        "severityNote": (!m.severity_note.is_empty()).then_some(m.severity_note),
                        "docUrl": m.doc_url(),
                        "mode": m.mode.as_str(),
                        "summary": m.summary(),
                    })
                })
                .collect();
            match serde_json::to_string_pretty(&list) {
                Ok(s) => write_out(format!("{s}\n").as_bytes()),
                Err(e) => failed(&e),
            }
        }
        Command::Rules {
            format: RulesFormat::Human,
        } => {
            // The severity as findings really carry it: the default, then
            // when it departs from it (GL005 and GL013 report errors too).
            let mut s = String::new();
            for r in rules::ALL {
                let m = r.meta();
                s.push_str(&format!(
                    "{}  {:28} {}\n       {}\n",
                    m.code,
                    m.name,
                    m.severity_text(),
                    m.summary()
                ));
            }
            write_out(s.as_bytes())
        }
        Command::Completions { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "gitops-lint", &mut buf);
            write_out(&buf)
        }
        Command::Man => {
            let mut buf = Vec::new();
            match clap_mangen::Man::new(Cli::command()).render(&mut buf) {
                Ok(()) => write_out(&buf),
                Err(e) => failed(&e),
            }
        }
        Command::Demo { .. } => match crate::demo::build() {
            Ok(dir) => {
                let mut opts = options(&common);
                opts.repo = Some(dir.path().to_path_buf());
                let status = finish(lint::diff(Some("main..change"), &opts), &common);
                drop(dir);
                demo_status(status)
            }
            Err(e) => failed(&e),
        },
    }
}
