//! The `gitops-lint` command (see the library's `cli`).

// See Cargo.toml: fewer page faults than glibc malloc under rayon.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    gitops_lint::cli::main()
}
