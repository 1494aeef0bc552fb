fn main() -> std::process::ExitCode {
    opgen::main()
}
