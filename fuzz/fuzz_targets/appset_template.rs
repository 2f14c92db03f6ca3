//! Fuzz target: `gitops_lint::fuzz_entry::appset_template` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gitops_lint::fuzz_entry::appset_template(data);
});
