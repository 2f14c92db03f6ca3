//! Command-line parsing and wiring; the only place that prints.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use crate::finding::Severity;
use crate::lint::{self, LintError, Options, Revision};
use crate::report::{self, Format, FormatSpec};
use crate::rules;

mod args;

use args::{ChartsAction, Cli, Color, Command, Common, FailOn, RulesFormat};

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
