//! Replays every input a fuzz target once crashed on
//! (`testdata/fuzz-regressions/<target>/<file>`) through the same entry
//! point the target drives, so CI re-checks each fix without nightly Rust
//! or cargo-fuzz.

use std::path::Path;

type Entry = fn(&[u8]);

/// Fuzz target name → its entry point; a directory with no entry here fails.
const TARGETS: &[(&str, Entry)] = &[
    ("yaml_stream", gitops_lint::fuzz_entry::yaml_stream),
    ("resource_model", gitops_lint::fuzz_entry::resource_model),
    ("appset_template", gitops_lint::fuzz_entry::appset_template),
    ("appset_expand", gitops_lint::fuzz_entry::appset_expand),
    ("kustomize_tree", gitops_lint::fuzz_entry::kustomize_tree),
    ("hook_analysers", gitops_lint::fuzz_entry::hook_analysers),
    ("template_sizes", gitops_lint::fuzz_entry::template_sizes),
    (
        "kustomize_patches",
        gitops_lint::fuzz_entry::kustomize_patches,
    ),
];

#[test]
fn every_saved_fuzz_crash_stays_fixed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/fuzz-regressions");
    let mut replayed = 0;
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("testdata/fuzz-regressions exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let name = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let entry = TARGETS
            .iter()
            .find(|(t, _)| *t == name)
            .map(|(_, f)| *f)
            .unwrap_or_else(|| panic!("no entry point for fuzz regressions in `{name}`"));
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("readable")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != ".gitkeep"))
            .collect();
        files.sort();
        for file in files {
            let data = std::fs::read(&file).expect("readable regression file");
            // A panic here names the file through the test's output.
            eprintln!("replaying {}", file.display());
            entry(&data);
            replayed += 1;
        }
    }
    eprintln!("{replayed} fuzz regression(s) replayed");
}
