//! The composite GitHub Action (`action.yml`), run the way a runner runs it:
//! each step's `run:` script is extracted from the file and executed with
//! `bash --noprofile --norc -eo pipefail`, with the variables a runner sets
//! (a pull_request payload at `GITHUB_EVENT_PATH`, `GITHUB_STEP_SUMMARY`,
//! `GITHUB_OUTPUT`, `GITHUB_PATH`, `GITHUB_WORKSPACE`, `RUNNER_TEMP`, ...)
//! and `${{ ... }}` expressions in `env:`, `working-directory:` and input
//! defaults evaluated from the inputs and the payload. Directories added to
//! `GITHUB_PATH` are put on `PATH` for later steps, as the runner does.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

fn crate_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn action() -> Value {
    let text = std::fs::read_to_string(crate_root().join("action.yml")).expect("action.yml");
    gitops_lint::yaml::load_all(&text)
        .expect("action.yml parses")
        .into_iter()
        .next()
        .expect("one document")
        .value
}

/// What a runner provides around the steps.
struct Runner {
    inputs: BTreeMap<String, String>,
    event: Value,
    vars: BTreeMap<String, String>,
    path_prefix: Vec<String>,
    outputs: BTreeMap<String, BTreeMap<String, String>>,
}

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
            ["github", "action_path"] => self.vars["GITHUB_ACTION_PATH"].clone(),
            ["runner", "temp"] => self.vars["RUNNER_TEMP"].clone(),
            ["steps", id, "outputs", name] => self
                .outputs
                .get(*id)
                .and_then(|o| o.get(*name))
                .cloned()
                .unwrap_or_default(),
            _ => panic!("expression `{expr}` is not supported by this runner"),
        }
    }
}

struct StepRun {
    id: String,
    status: i32,
    stdout: String,
    stderr: String,
}

/// Runs every step of the action; stops after the first failing step.
fn run_action(runner: &mut Runner, extra_env: &[(&str, &str)]) -> Vec<StepRun> {
    let action = action();
    assert_eq!(action["runs"]["using"], "composite");
    let steps = action["runs"]["steps"].as_array().expect("steps").clone();
    let mut runs = Vec::new();
    for (n, step) in steps.iter().enumerate() {
        let id = step["id"]
            .as_str()
            .map_or(format!("step{n}"), str::to_string);
        assert_eq!(step["shell"], "bash", "step {id} must use bash");
        assert!(step.get("if").is_none(), "conditions are not emulated");
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
            status,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
        if status != 0 {
            break;
        }
    }
    runs
}

fn tmp_file(runner: &Runner, name: &str) -> PathBuf {
    Path::new(&runner.vars["RUNNER_TEMP"])
        .join("_steps")
        .join(name)
}

/// A runner for a pull_request event on the mixed output case.
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
        ("RUNNER_TEMP", s(&temp)),
        ("RUNNER_OS", "Linux".to_string()),
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

#[test]
fn pull_request_run_writes_sarif_annotations_and_summary() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (case, message) = mixed_case();
    let (mut r, _, _) = runner(tmp.path(), &case, &message);
    r.inputs.insert(
        "binary".into(),
        env!("CARGO_BIN_EXE_gitops-lint").to_string(),
    );
    let runs = run_action(&mut r, &[]);
    assert_eq!(runs.len(), 2);
    let (install, lint) = (&runs[0], &runs[1]);
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
    // SARIF at the default path in the workspace, valid against the schema.
    let sarif_path = PathBuf::from(&r.outputs["lint"]["sarif"]);
    assert_eq!(
        sarif_path,
        Path::new(&r.vars["GITHUB_WORKSPACE"]).join("gitops-lint.sarif")
    );
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
    let lint = &runs[1];
    assert_eq!(lint.status, 0, "{}{}", lint.stdout, lint.stderr);
    assert_eq!(r.outputs["lint"]["exit-code"], "0");
    // Without annotations the step log gets the human report instead.
    assert!(!lint.stdout.contains("::"), "{}", lint.stdout);
    assert!(lint.stdout.contains("0 error(s), 0 warning(s), 0 info"));
    let sarif = Path::new(&r.vars["GITHUB_WORKSPACE"]).join("reports/out.sarif");
    assert!(sarif.is_file());
    let summary = std::fs::read_to_string(&r.vars["GITHUB_STEP_SUMMARY"]).expect("summary");
    assert!(summary.contains("No findings."), "{summary}");
}

#[test]
fn a_run_that_cannot_start_fails_with_status_two() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (case, message) = mixed_case();
    let (mut r, _, _) = runner(tmp.path(), &case, &message);
    r.inputs.insert(
        "binary".into(),
        env!("CARGO_BIN_EXE_gitops-lint").to_string(),
    );
    // A base commit this clone does not have (as in a shallow checkout).
    r.event["pull_request"]["base"]["sha"] = "0123456789abcdef0123456789abcdef01234567".into();
    r.inputs.insert("step-summary".into(), "false".into());
    let runs = run_action(&mut r, &[]);
    let lint = &runs[1];
    assert_eq!(lint.status, 2, "{}{}", lint.stdout, lint.stderr);
    assert!(lint.stderr.contains("unknown revision"), "{}", lint.stderr);
    assert_eq!(r.outputs["lint"]["sarif"], "");
    let summary = std::fs::read_to_string(&r.vars["GITHUB_STEP_SUMMARY"]).expect("summary");
    assert!(summary.is_empty());
}

#[test]
fn default_install_builds_from_the_action_source() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (case, message) = mixed_case();
    let (mut r, _, _) = runner(tmp.path(), &case, &message);
    // A dedicated target directory, reused across runs, and an unoptimised
    // release profile keep this build short; `cargo install --locked` is
    // otherwise exactly what a runner does.
    let target = crate_root().join("target/install-cargo");
    let target = target.display().to_string();
    let runs = run_action(
        &mut r,
        &[
            ("CARGO_TARGET_DIR", &target),
            ("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0"),
            ("CARGO_PROFILE_RELEASE_DEBUG", "false"),
            ("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16"),
            ("CARGO_PROFILE_RELEASE_INCREMENTAL", "true"),
        ],
    );
    let install = &runs[0];
    assert_eq!(install.status, 0, "{}{}", install.stdout, install.stderr);
    let installed = Path::new(&r.vars["RUNNER_TEMP"]).join("gitops-lint/bin/gitops-lint");
    assert!(installed.is_file());
    assert_eq!(
        r.path_prefix,
        vec![installed.parent().expect("bin").display().to_string()]
    );
    assert_eq!(runs[1].id, "lint");
    assert_eq!(runs[1].status, 1, "{}", runs[1].stderr);
}
