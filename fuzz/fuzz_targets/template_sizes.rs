//! Fuzz target: `gitops_lint::fuzz_entry::template_sizes` — Go-template
//! functions with size arguments and value-growing chains.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gitops_lint::fuzz_entry::template_sizes(data);
});
