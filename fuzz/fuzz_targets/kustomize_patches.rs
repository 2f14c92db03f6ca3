//! Fuzz target: `gitops_lint::fuzz_entry::kustomize_patches` — patches and
//! replacements on one resource file.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gitops_lint::fuzz_entry::kustomize_patches(data);
});
