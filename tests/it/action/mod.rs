//! The composite GitHub Action (`action.yml`), run the way a runner runs it:
//! each step's `run:` script is extracted from the file and executed with
//! `bash --noprofile --norc -eo pipefail`, with the variables a runner sets
//! (a `pull_request` payload at `GITHUB_EVENT_PATH`, `GITHUB_STEP_SUMMARY`,
//! `GITHUB_OUTPUT`, `GITHUB_PATH`, `GITHUB_WORKSPACE`, `RUNNER_TEMP`, ...)
//! and `${{ ... }}` expressions in `env:`, `working-directory:` and input
//! defaults evaluated from the inputs and the payload. Directories added to
//! `GITHUB_PATH` are put on `PATH` for later steps, as the runner does.
//! Step conditions (`if:`, the `==`/`!=`/`&&` forms and the status functions
//! action.yml uses) are evaluated: after a failing step only a step whose
//! condition calls a status function runs, as on a runner. And
//! `actions/cache/restore` and `actions/cache/save` keep their entries in a
//! directory standing for the repository's cache (a restore falls back to
//! the newest entry whose key starts with one of its `restore-keys`), so a
//! second run of the action finds what the first one saved.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

mod install;

fn crate_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn action() -> Value {
    let text = std::fs::read_to_string(crate_root().join("action.yml")).expect("action.yml");
    goyaml::load_all(&text)
        .expect("action.yml parses")
        .into_iter()
        .next()
        .expect("one document")
        .into_value()
}

/// What a runner provides around the steps.
struct Runner {
    inputs: BTreeMap<String, String>,
    event: Value,
    vars: BTreeMap<String, String>,
    path_prefix: Vec<String>,
    outputs: BTreeMap<String, BTreeMap<String, String>>,
    /// `github.action_ref` and `github.action_repository`: what the workflow
    /// wrote in `uses: OWNER/NAME@REF`.
    action_ref: String,
    action_repository: String,
    /// The repository's actions/cache entries, one directory per key.
    cache_store: PathBuf,
    /// Directories of programs installed on the runner, before the PATH
    /// the tests run with.
    tools: Vec<PathBuf>,
}

/// The file of the cache store listing the keys saved, oldest first.
const SAVE_ORDER: &str = ".saved";

impl Runner {
    /// Evaluates `${{ a.b.c }}` occurrences (dotted paths only, which is all
    /// action.yml uses).
    fn eval(&self, action: &Value, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(i) = rest.find("${{") {
            out.push_str(&rest[..i]);
            let Some(j) = rest[i..].find("}}") else {
                break;
            };
            let expr = rest[i + 3..i + j].trim();
            out.push_str(&self.lookup(action, expr));
            rest = &rest[i + j + 2..];
        }
        out.push_str(rest);
        out
    }

    fn lookup(&self, action: &Value, expr: &str) -> String {
        let parts: Vec<&str> = expr.split('.').collect();
        match parts.as_slice() {
            ["inputs", name] => match self.inputs.get(*name) {
                Some(v) => v.clone(),
                None => {
                    let default = action["inputs"][*name]["default"]
                        .as_str()
                        .unwrap_or_else(|| panic!("input `{name}` is not declared"));
                    self.eval(action, default)
                }
            },
            ["github", "event", rest @ ..] => {
                let mut v = &self.event;
                for p in rest {
                    v = &v[*p];
                }
                match v {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                }
            }
            ["github", "workspace"] => self.vars["GITHUB_WORKSPACE"].clone(),
            // No token in these runs: the comment step falls back.
            ["github", "token"] => String::new(),
            ["github", "action_ref"] => self.action_ref.clone(),
            ["github", "action_repository"] => self.action_repository.clone(),
            ["github", "action_path"] => self.vars["GITHUB_ACTION_PATH"].clone(),
            ["github", "run_id"] => self.vars["GITHUB_RUN_ID"].clone(),
            ["github", "run_attempt"] => self.vars["GITHUB_RUN_ATTEMPT"].clone(),
            ["runner", "temp"] => self.vars["RUNNER_TEMP"].clone(),
            ["runner", "os"] => self.vars["RUNNER_OS"].clone(),
            ["runner", "arch"] => self.vars["RUNNER_ARCH"].clone(),
            ["steps", id, "outputs", name] => self
                .outputs
                .get(*id)
                .and_then(|o| o.get(*name))
                .cloned()
                .unwrap_or_default(),
            _ => panic!("expression `{expr}` is not supported by this runner"),
        }
    }

    /// Whether a step with condition `cond` (none: `success()`) runs, after
    /// an earlier step `failed` or not. A condition is `A == 'x'`,
    /// `A != 'x'`, `!cancelled()` and `always()` joined by `&&`, each `A` a
    /// dotted path (all that action.yml uses; anything else fails the
    /// test); one that calls no status function has an implicit
    /// `success()`, as on a runner. Nothing is ever cancelled here.
    fn runs(&self, action: &Value, cond: Option<&str>, failed: bool) -> bool {
        let Some(cond) = cond else {
            return !failed;
        };
        let cond = cond.trim();
        let cond = cond
            .strip_prefix("${{")
            .and_then(|c| c.strip_suffix("}}"))
            .unwrap_or(cond);
        // The status functions action.yml uses; both are true here.
        let status_function = |t: &str| matches!(t, "!cancelled()" | "always()");
        let terms: Vec<&str> = cond.split("&&").map(str::trim).collect();
        (terms.iter().any(|t| status_function(t)) || !failed)
            && terms
                .iter()
                .all(|t| status_function(t) || self.comparison(action, t))
    }

    /// `A == 'x'` or `A != 'x'`.
    fn comparison(&self, action: &Value, term: &str) -> bool {
        let (lhs, rhs, equal) = if let Some((l, r)) = term.split_once("!=") {
            (l, r, false)
        } else if let Some((l, r)) = term.split_once("==") {
            (l, r, true)
        } else {
            panic!("condition `{term}` is not supported by this runner")
        };
        let literal = rhs
            .trim()
            .strip_prefix('\'')
            .and_then(|r| r.strip_suffix('\''))
            .unwrap_or_else(|| panic!("`{rhs}` is not a quoted literal"));
        (self.lookup(action, lhs.trim()) == literal) == equal
    }

    /// `actions/cache/restore` and `actions/cache/save`. A restore without
    /// an entry of its key takes the newest entry whose key starts with the
    /// first of its `restore-keys` that any key starts with.
    fn cache_action(&self, action: &Value, uses: &str, with: &Value) -> BTreeMap<String, String> {
        let arg = |name: &str| self.eval(action, with[name].as_str().unwrap_or_default());
        let (path, key) = (PathBuf::from(arg("path")), arg("key"));
        assert!(
            !key.is_empty() && path.is_absolute(),
            "cache key `{key}`, path `{}`",
            path.display()
        );
        let entry = self.cache_store.join(&key);
        let mut outputs = BTreeMap::new();
        match uses {
            "actions/cache/restore@v4" => {
                let hit = entry.is_dir();
                let saved = self.saved_keys();
                let matched = if hit {
                    Some(key.clone())
                } else {
                    arg("restore-keys")
                        .lines()
                        .map(str::trim)
                        .filter(|p| !p.is_empty())
                        .find_map(|prefix| saved.iter().rev().find(|k| k.starts_with(prefix)))
                        .cloned()
                };
                if let Some(k) = &matched {
                    copy_dir(&self.cache_store.join(k), &path);
                }
                outputs.insert("cache-hit".to_string(), hit.to_string());
                outputs.insert("cache-matched-key".to_string(), matched.unwrap_or_default());
            }
            "actions/cache/save@v4" => {
                // The real action refuses to overwrite a key, and only warns
                // when the path is missing; a test wants to know.
                assert!(!entry.exists(), "cache key `{key}` saved twice");
                assert!(path.is_dir(), "nothing to cache at {}", path.display());
                copy_dir(&path, &entry);
                let mut order = self.saved_keys();
                order.push(key);
                std::fs::write(self.cache_store.join(SAVE_ORDER), order.join("\n"))
                    .expect("save order");
            }
            other => panic!("action `{other}` is not emulated"),
        }
        outputs
    }

    /// The keys saved to the cache store, oldest first.
    fn saved_keys(&self) -> Vec<String> {
        std::fs::read_to_string(self.cache_store.join(SAVE_ORDER))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    let status = Command::new("cp")
        .arg("-R")
        .arg(format!("{}/.", from.display()))
        .arg(to)
        .status()
        .expect("cp runs");
    assert!(
        status.success(),
        "cp -R {} {}",
        from.display(),
        to.display()
    );
}

struct StepRun {
    id: String,
    /// The step's `if:` was false.
    skipped: bool,
    status: i32,
    stdout: String,
    stderr: String,
}

/// The run of step `id`.
fn step<'a>(runs: &'a [StepRun], id: &str) -> &'a StepRun {
    runs.iter().find(|r| r.id == id).unwrap_or_else(|| {
        panic!(
            "step `{id}` did not run: {:?}",
            runs.iter().map(|r| &r.id).collect::<Vec<_>>()
        )
    })
}

/// Runs the steps of the action; after a failing step, only those whose
/// condition calls a status function.
fn run_action(runner: &mut Runner, extra_env: &[(&str, &str)]) -> Vec<StepRun> {
    let action = action();
    assert_eq!(action["runs"]["using"], "composite");
    let steps = action["runs"]["steps"].as_array().expect("steps").clone();
    let mut runs: Vec<StepRun> = Vec::new();
    for (n, step) in steps.iter().enumerate() {
        let id = step["id"]
            .as_str()
            .map_or(format!("step{n}"), str::to_string);
        let failed = runs.iter().any(|r| r.status != 0);
        if !runner.runs(&action, step["if"].as_str(), failed) {
            runner.outputs.insert(id.clone(), BTreeMap::new());
            runs.push(StepRun {
                id,
                skipped: true,
                status: 0,
                stdout: String::new(),
                stderr: String::new(),
            });
            continue;
        }
        if let Some(uses) = step["uses"].as_str() {
            let outputs = runner.cache_action(&action, uses, &step["with"]);
            runner.outputs.insert(id.clone(), outputs);
            runs.push(StepRun {
                id,
                skipped: false,
                status: 0,
                stdout: String::new(),
                stderr: String::new(),
            });
            continue;
        }
        assert_eq!(step["shell"], "bash", "step {id} must use bash");
        let script = step["run"].as_str().expect("a run: script");
        assert!(
            !script.contains("${{"),
            "step {id}: expressions belong in env:, not in the script (script injection)"
        );
        let dir = tmp_file(runner, &format!("{id}.sh"));
        std::fs::write(&dir, script).expect("write script");
        let output_file = tmp_file(runner, &format!("{id}.output"));
        std::fs::write(&output_file, "").expect("output file");
        let cwd = match step["working-directory"].as_str() {
            Some(w) => Path::new(&runner.vars["GITHUB_WORKSPACE"]).join(runner.eval(&action, w)),
            None => PathBuf::from(&runner.vars["GITHUB_WORKSPACE"]),
        };
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&dir)
            .current_dir(&cwd)
            .envs(&runner.vars)
            .env("GITHUB_OUTPUT", &output_file);
        // The runner puts GITHUB_PATH additions in front of PATH.
        let path = std::env::var("PATH").unwrap_or_default();
        let mut full: Vec<String> = runner.path_prefix.iter().rev().cloned().collect();
        full.extend(runner.tools.iter().map(|t| t.display().to_string()));
        full.push(path);
        cmd.env("PATH", full.join(":"));
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        if let Some(env) = step["env"].as_object() {
            for (k, v) in env {
                cmd.env(k, runner.eval(&action, v.as_str().unwrap_or_default()));
            }
        }
        let out = cmd.output().expect("bash runs");
        let mut outputs = BTreeMap::new();
        for line in std::fs::read_to_string(&output_file)
            .unwrap_or_default()
            .lines()
        {
            if let Some((k, v)) = line.split_once('=') {
                outputs.insert(k.to_string(), v.to_string());
            }
        }
        runner.outputs.insert(id.clone(), outputs);
        let gh_path = std::fs::read_to_string(&runner.vars["GITHUB_PATH"]).unwrap_or_default();
        runner.path_prefix = gh_path.lines().map(str::to_string).collect();
        let status = out.status.code().unwrap_or(-1);
        runs.push(StepRun {
            id,
            skipped: false,
            status,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    runs
}

fn tmp_file(runner: &Runner, name: &str) -> PathBuf {
    Path::new(&runner.vars["RUNNER_TEMP"])
        .join("_steps")
        .join(name)
}

/// `runner.os` and `runner.arch` as GitHub spells them for this machine.
fn runner_os() -> &'static str {
    match std::env::consts::OS {
        "macos" => "macOS",
        "windows" => "Windows",
        _ => "Linux",
    }
}

fn runner_arch() -> &'static str {
    match std::env::consts::ARCH {
        "aarch64" => "ARM64",
        "arm" => "ARM",
        "x86" => "X86",
        _ => "X64",
    }
}

/// A run id no other runner of this test binary has.
fn next_run_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1001);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A runner for a `pull_request` event on the mixed output case.
fn runner(tmp: &Path, case: &Path, message: &str) -> (Runner, String, String) {
    let workspace = tmp.join("workspace");
    let (base, head) = common::commit_case(&workspace, case, message);
    let temp = tmp.join("runner-temp");
    std::fs::create_dir_all(temp.join("_steps")).expect("runner temp");
    let event = json!({
        "action": "synchronize",
        "number": 7,
        "pull_request": {
            "number": 7,
            "base": {"ref": "main", "sha": base},
            "head": {"ref": "change", "sha": head},
        },
    });
    let event_path = tmp.join("event.json");
    std::fs::write(&event_path, event.to_string()).expect("event");
    let summary = tmp.join("step-summary.md");
    let gh_path = tmp.join("github-path");
    let gh_env = tmp.join("github-env");
    for f in [&summary, &gh_path, &gh_env] {
        std::fs::write(f, "").expect("runner file");
    }
    let s = |p: &Path| p.display().to_string();
    let vars: BTreeMap<String, String> = [
        ("CI", "true".to_string()),
        ("GITHUB_ACTIONS", "true".to_string()),
        ("GITHUB_EVENT_NAME", "pull_request".to_string()),
        ("GITHUB_EVENT_PATH", s(&event_path)),
        ("GITHUB_WORKSPACE", s(&workspace)),
        ("GITHUB_ACTION_PATH", s(&crate_root())),
        ("GITHUB_STEP_SUMMARY", s(&summary)),
        ("GITHUB_PATH", s(&gh_path)),
        ("GITHUB_ENV", s(&gh_env)),
        ("GITHUB_REPOSITORY", "example/gitops".to_string()),
        ("GITHUB_SHA", head.clone()),
        ("GITHUB_REF", "refs/pull/7/merge".to_string()),
        // Each run of a workflow has an id of its own.
        ("GITHUB_RUN_ID", next_run_id().to_string()),
        ("GITHUB_RUN_ATTEMPT", "1".to_string()),
        ("RUNNER_TEMP", s(&temp)),
        ("RUNNER_OS", runner_os().to_string()),
        ("RUNNER_ARCH", runner_arch().to_string()),
        // Empty inside a composite action's steps, as the runner leaves them.
        ("GITHUB_ACTION_REF", String::new()),
        ("GITHUB_ACTION_REPOSITORY", String::new()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    (
        Runner {
            inputs: BTreeMap::new(),
            event,
            vars,
            path_prefix: Vec::new(),
            outputs: BTreeMap::new(),
            action_ref: String::new(),
            action_repository: String::new(),
            cache_store: tmp.join("actions-cache"),
            tools: Vec::new(),
        },
        base,
        head,
    )
}

fn mixed_case() -> (PathBuf, String) {
    let case = crate_root().join("testdata/output/mixed");
    let message = std::fs::read_to_string(case.join("commit-message.txt")).expect("message");
    (case, message)
}

/// A runner on the mixed case (in `tmp`) with this build as the `binary`
/// input: no download, no build.
fn mixed_runner_with_this_binary(tmp: &Path) -> Runner {
    let (case, message) = mixed_case();
    let (mut r, _, _) = runner(tmp, &case, &message);
    r.inputs.insert(
        "binary".into(),
        env!("CARGO_BIN_EXE_gitops-lint").to_string(),
    );
    r
}

#[test]
fn pull_request_run_writes_sarif_annotations_and_summary() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut r = mixed_runner_with_this_binary(tmp.path());
    let runs = run_action(&mut r, &[]);
    let (install, lint) = (step(&runs, "install"), step(&runs, "lint"));
    // A binary given as input is used as it is: no cache, no build.
    for id in ["restore", "build", "save"] {
        assert!(step(&runs, id).skipped, "{id} ran");
    }
    assert_eq!(install.status, 0, "{}{}", install.stdout, install.stderr);
    assert!(
        install.stdout.starts_with("gitops-lint "),
        "{}",
        install.stdout
    );
    // The mixed case has unacknowledged errors: the step fails with 1.
    assert_eq!(lint.status, 1, "{}{}", lint.stdout, lint.stderr);
    assert_eq!(r.outputs["lint"]["exit-code"], "1");
    // Annotations on stdout, on files of the change.
    assert!(
        lint.stdout.contains("::error file=apps/payments.yaml,line=1,title=GL001 stateful-prune::automated sync of `payments` would delete `PersistentVolumeClaim payments/ledger`"),
        "{}",
        lint.stdout
    );
    assert!(lint
        .stdout
        .contains("::notice title=gitops-lint::.gitops-lint.yaml differs at head"));
    // SARIF at the default path under RUNNER_TEMP (never in the pull
    // request's checkout), valid against the schema.
    let sarif_path = PathBuf::from(&r.outputs["lint"]["sarif"]);
    assert_eq!(
        sarif_path,
        Path::new(&r.vars["RUNNER_TEMP"]).join("gitops-lint/reports/gitops-lint.sarif")
    );
    assert!(!Path::new(&r.vars["GITHUB_WORKSPACE"])
        .join("gitops-lint.sarif")
        .exists());
    let log: Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif_path).expect("sarif written"))
            .expect("json");
    assert_eq!(common::sarif_schema_errors(&log), Vec::<String>::new());
    assert!(log["runs"][0]["results"]
        .as_array()
        .is_some_and(|a| a.len() >= 5));
    // The job summary got the Markdown report, trailers read from the PR's commits.
    let summary = std::fs::read_to_string(&r.vars["GITHUB_STEP_SUMMARY"]).expect("summary");
    assert!(summary.starts_with("## gitops-lint\n"), "{summary}");
    // The deletion errors, and GL013 for the 3 of 5 resources `payments` prunes.
    assert!(summary.contains("**5 errors**"), "{summary}");
    assert!(
        summary.contains("Service/web/public-lb replaced by the shared gateway (NET-42)"),
        "{summary}"
    );
}

#[test]
fn a_clean_pull_request_passes_and_honours_inputs() {
    let tmp = tempfile::tempdir().expect("tmp");
    // Head equal to base apart from a ConfigMap edit: nothing is deleted.
    let case = tmp.path().join("case");
    for side in ["base", "head"] {
        let d = case.join(side).join("apps");
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::write(
            d.join("cm.yaml"),
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata: {{side: {side}}}\n"
            ),
        )
        .expect("write");
    }
    let (mut r, _, _) = runner(tmp.path(), &case, "Edit a ConfigMap");
    r.inputs.insert(
        "binary".into(),
        env!("CARGO_BIN_EXE_gitops-lint").to_string(),
    );
    r.inputs.insert("sarif".into(), "reports/out.sarif".into());
    r.inputs.insert("annotations".into(), "false".into());
    let runs = run_action(&mut r, &[]);
    let lint = step(&runs, "lint");
    assert_eq!(lint.status, 0, "{}{}", lint.stdout, lint.stderr);
    assert_eq!(r.outputs["lint"]["exit-code"], "0");
    // Without annotations the step log gets the human report instead.
    assert!(!lint.stdout.contains("::"), "{}", lint.stdout);
    assert!(lint.stdout.contains("0 error(s), 0 warning(s), 0 info"));
    let sarif = Path::new(&r.vars["RUNNER_TEMP"]).join("gitops-lint/reports/reports/out.sarif");
    assert!(sarif.is_file());
    assert_eq!(r.outputs["lint"]["sarif"], sarif.to_string_lossy());
    let summary = std::fs::read_to_string(&r.vars["GITHUB_STEP_SUMMARY"]).expect("summary");
    assert!(summary.contains("No findings."), "{summary}");
}

#[test]
fn a_run_that_cannot_start_fails_with_status_two() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut r = mixed_runner_with_this_binary(tmp.path());
    // A base commit this clone does not have (as in a shallow checkout).
    r.event["pull_request"]["base"]["sha"] = "0123456789abcdef0123456789abcdef01234567".into();
    r.inputs.insert("step-summary".into(), "false".into());
    let runs = run_action(&mut r, &[]);
    let lint = step(&runs, "lint");
    assert_eq!(lint.status, 2, "{}{}", lint.stdout, lint.stderr);
    assert!(lint.stderr.contains("unknown revision"), "{}", lint.stderr);
    assert_eq!(r.outputs["lint"]["sarif"], "");
    let summary = std::fs::read_to_string(&r.vars["GITHUB_STEP_SUMMARY"]).expect("summary");
    assert!(summary.is_empty());
}

#[test]
fn the_chart_cache_input_reaches_the_command_line() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut r = mixed_runner_with_this_binary(tmp.path());
    // A directory the runner does not have: the run cannot do what it is
    // asked, so it stops (an existing one renders chart apps from it).
    r.inputs.insert("chart-cache".into(), "charts/cache".into());
    r.inputs.insert("step-summary".into(), "false".into());
    let runs = run_action(&mut r, &[]);
    let lint = step(&runs, "lint");
    assert_eq!(lint.status, 2, "{}{}", lint.stdout, lint.stderr);
    assert!(
        lint.stderr
            .contains("--chart-cache charts/cache: no such directory"),
        "{}",
        lint.stderr
    );
}

/// The count of facts a run with `GITOPS_LINT_STATS` took from its cache.
fn facts_from_the_cache(stderr: &str) -> usize {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("stats: "))
        .unwrap_or_else(|| panic!("no stats line in {stderr}"));
    line.find(" facts from the cache")
        .and_then(|end| line[..end].rsplit(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no facts count in {line}"))
}

#[test]
fn facts_kept_by_one_run_are_restored_for_the_next() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = tmp.path().join("actions-cache");
    let stats = [("GITOPS_LINT_STATS", "1")];
    let lint_with_store = |dir: &str| {
        let mut r = mixed_runner_with_this_binary(&tmp.path().join(dir));
        r.cache_store = store.clone();
        let runs = run_action(&mut r, &stats);
        (r, runs)
    };
    // First run: nothing to restore; the lint fails (findings), and what it
    // learned is saved all the same.
    let (first, runs) = lint_with_store("first");
    assert!(!step(&runs, "restore-facts").skipped);
    assert_eq!(first.outputs["restore-facts"]["cache-matched-key"], "");
    let lint = step(&runs, "lint");
    assert_eq!(lint.status, 1, "{}{}", lint.stdout, lint.stderr);
    assert_eq!(facts_from_the_cache(&lint.stderr), 0, "{}", lint.stderr);
    assert!(!step(&runs, "save-facts").skipped);
    let key = format!(
        "gitops-lint-facts-{}-{}-{}-1",
        runner_os(),
        runner_arch(),
        first.vars["GITHUB_RUN_ID"]
    );
    assert!(store.join(&key).is_dir(), "no entry {key}");
    // Next run, on a fresh runner with a clone of the same content: the
    // newest entry is restored by prefix, and the diff reads facts from it.
    let (next, runs) = lint_with_store("next");
    assert_eq!(next.outputs["restore-facts"]["cache-hit"], "false");
    assert_eq!(next.outputs["restore-facts"]["cache-matched-key"], key);
    let lint = step(&runs, "lint");
    assert_eq!(lint.status, 1, "{}{}", lint.stdout, lint.stderr);
    assert!(facts_from_the_cache(&lint.stderr) > 0, "{}", lint.stderr);
    assert!(!step(&runs, "save-facts").skipped);
}

#[test]
fn facts_cache_false_neither_restores_nor_saves() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut r = mixed_runner_with_this_binary(tmp.path());
    r.inputs.insert("facts-cache".into(), "false".into());
    let runs = run_action(&mut r, &[]);
    assert_eq!(step(&runs, "lint").status, 1);
    for id in ["restore-facts", "save-facts"] {
        assert!(step(&runs, id).skipped, "{id} ran");
    }
    assert!(!r.cache_store.exists(), "something was saved");
}

/// A pull request from a fork has no `security-events: write`: the SARIF
/// output is left empty (the workflow's upload step is skipped) with a
/// notice, and the annotations and summary still carry the findings.
#[test]
fn a_pull_request_from_a_fork_skips_the_sarif_upload_and_keeps_the_annotations() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut r = mixed_runner_with_this_binary(tmp.path());
    r.event["pull_request"]["head"]["repo"] = json!({"full_name": "someone/gitops"});
    let runs = run_action(&mut r, &[]);
    let lint = step(&runs, "lint");
    assert_eq!(lint.status, 1, "{}{}", lint.stdout, lint.stderr);
    assert_eq!(r.outputs["lint"]["sarif"], "");
    assert!(
        lint.stdout
            .contains("::notice title=gitops-lint::SARIF not uploaded: a pull request from a fork"),
        "{}",
        lint.stdout
    );
    assert!(
        lint.stdout.contains("::error file=apps/payments.yaml"),
        "{}",
        lint.stdout
    );
    // The same repository's pull request keeps its upload.
    let tmp = tempfile::tempdir().expect("tmp");
    let mut r = mixed_runner_with_this_binary(tmp.path());
    r.event["pull_request"]["head"]["repo"] = json!({"full_name": "example/gitops"});
    run_action(&mut r, &[]);
    assert_ne!(r.outputs["lint"]["sarif"], "");
}

/// A merge queue's run has no pull request: base and head come from the
/// `merge_group` event, and the change is judged like the pull request's.
#[test]
fn a_merge_group_run_judges_the_queued_commit_against_its_base() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut r = mixed_runner_with_this_binary(tmp.path());
    let base = r.event["pull_request"]["base"]["sha"].clone();
    let head = r.event["pull_request"]["head"]["sha"].clone();
    r.event = json!({"merge_group": {"base_sha": base, "head_sha": head}});
    r.vars
        .insert("GITHUB_EVENT_NAME".into(), "merge_group".into());
    let runs = run_action(&mut r, &[]);
    let lint = step(&runs, "lint");
    assert_eq!(lint.status, 1, "{}{}", lint.stdout, lint.stderr);
    assert!(
        lint.stdout.contains("::error file=apps/payments.yaml"),
        "{}",
        lint.stdout
    );
}

/// A push whose previous tip the clone lacks (all zeros for a new branch,
/// or a commit a force-push dropped) is judged against the pushed commit's
/// parent, and the log says so, instead of failing on an unknown revision.
#[test]
fn a_push_without_its_previous_tip_is_judged_against_the_parent() {
    for before in [
        "0000000000000000000000000000000000000000",
        "0123456789abcdef0123456789abcdef01234567",
    ] {
        let tmp = tempfile::tempdir().expect("tmp");
        let mut r = mixed_runner_with_this_binary(tmp.path());
        let head = r.event["pull_request"]["head"]["sha"]
            .as_str()
            .expect("head")
            .to_string();
        r.event = json!({"before": before, "after": head});
        r.vars.insert("GITHUB_EVENT_NAME".into(), "push".into());
        r.inputs.insert("base".into(), before.into());
        r.inputs.insert("head".into(), head.clone());
        let runs = run_action(&mut r, &[]);
        let lint = step(&runs, "lint");
        assert!(
            lint.stdout.contains(
                "::warning title=gitops-lint::the push's previous tip is not in this clone"
            ),
            "{}{}",
            lint.stdout,
            lint.stderr
        );
        // The parent is the base of the mixed case: its deletions are found.
        assert_eq!(lint.status, 1, "{}{}", lint.stdout, lint.stderr);
        assert!(
            lint.stdout.contains("::error file=apps/payments.yaml"),
            "{}",
            lint.stdout
        );
    }
}
