//! The `objectstack-ai` binary; everything lives in the library.

fn main() -> std::process::ExitCode {
    objectstack_cli::run()
}
