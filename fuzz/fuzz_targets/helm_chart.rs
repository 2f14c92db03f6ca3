//! Fuzz target: `gitops_lint::fuzz_entry::helm_chart` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gitops_lint::fuzz_entry::helm_chart(data);
});
