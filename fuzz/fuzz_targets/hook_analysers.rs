//! Fuzz target: `gitops_lint::fuzz_entry::hook_analysers` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gitops_lint::fuzz_entry::hook_analysers(data);
});
