fn main() -> std::process::ExitCode {
    gitops_lint::cli::main()
}
