//! Every integration test, in one binary: each file here was once a test
//! binary of its own, each linking the whole crate. One process now runs
//! them all, so a test passes settings to the `Command`s it starts (never
//! `std::env::set_var` or `set_current_dir`), starts its own loopback
//! servers, and counts only what it alone caused. Run one file's tests with
//! its module as the filter: `cargo test --test it cases::`.

mod common;
mod kustomize_common;

mod acknowledge;
mod action;
mod action_comment;
mod architecture;
mod cases;
mod chart_cache;
mod chart_fetch;
mod ci;
mod cli;
mod docs;
mod helm_corpus;
mod helm_differential;
mod helm_renderer;
mod hostile;
mod incremental;
mod install;
mod kustomize_corpus;
mod kustomize_golden;
mod kustomize_helm;
mod kustomize_sources;
mod kustomize_speed;
mod merge;
mod noop;
mod output;
mod pre_commit;
mod pre_commit_tool;
mod render_app;
mod rendered_diff;
mod silent_green;
mod unchanged;
mod unchanged_apps;
mod yaml_goyaml2_helm;
mod yaml_kubectl;
mod yaml_throughput;

/// A test file or directory left directly in `tests/` builds as a binary of
/// its own (linking the whole crate again), and a file in `tests/it/`
/// without its `mod` line above is never compiled: its tests would silently
/// not run.
#[test]
fn every_test_file_is_a_module_of_this_binary() {
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let main = std::fs::read_to_string(tests.join("it/main.rs")).expect("tests/it/main.rs");
    let mut stray: Vec<String> = std::fs::read_dir(&tests)
        .expect("readable tests directory")
        .map(|e| {
            e.expect("directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name != "it")
        .collect();
    stray.sort();
    assert!(
        stray.is_empty(),
        "move {stray:?} from tests/ into tests/it/ and add `mod NAME;` to tests/it/main.rs: one test binary links the crate once"
    );
    let mut undeclared: Vec<String> = std::fs::read_dir(tests.join("it"))
        .expect("readable tests/it directory")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
        .filter(|m| m != "main" && !main.lines().any(|l| l == format!("mod {m};")))
        .collect();
    undeclared.sort();
    assert!(
        undeclared.is_empty(),
        "add `mod NAME;` to tests/it/main.rs for {undeclared:?}: the files are not compiled"
    );
}
