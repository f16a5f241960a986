//! Repository automation, run as `cargo xtask <command>` (the alias lives in
//! `.cargo/config.toml`).
//!
//! - `codegen [--check]`: regenerate every generated file, or fail naming
//!   each stale one;
//! - `tidy`: repository hygiene (module docs, rule docs, registry order,
//!   no `todo!`, crate READMEs and versions);
//! - `release VERSION [--dry-run]`: check, classify, test and package a
//!   release in dependency order;
//! - `sync-registry`: compare the platform tool registry with upstream's;
//! - `parity`: differential test of the lint against upstream's;
//! - `bench-data`: write the benchmark stacks to `target/bench-data/`.
//!
//! Every command is documented in `CONTRIBUTING.md`. `codegen --check` and
//! `tidy` also run as `#[test]`s, so `cargo test --workspace` catches stale
//! files and hygiene faults without any extra CI step.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench_data;
mod codegen;
mod node;
mod parity;
mod release;
mod sync_registry;
mod tidy;
mod util;

/// Repository automation for the objectstack-ai workspace.
#[derive(Debug, Parser)]
#[command(name = "xtask", bin_name = "cargo xtask", about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Regenerate every generated file (JSON Schema, registry JSON, rule
    /// docs, CLI reference).
    Codegen(codegen::Args),
    /// Check repository hygiene.
    Tidy,
    /// Check, classify, test and package a release.
    Release(release::Args),
    /// Compare the platform tool registry with upstream `@objectstack/spec`.
    SyncRegistry(sync_registry::Args),
    /// Differential test of the lint against upstream `@objectstack/lint`.
    Parity(parity::Args),
    /// Write the deterministic benchmark stacks to `target/bench-data/`.
    BenchData(bench_data::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Codegen(args) => codegen::run(&args),
        Command::Tidy => tidy::run(),
        Command::Release(args) => release::run(&args),
        Command::SyncRegistry(args) => sync_registry::run(&args),
        Command::Parity(args) => parity::run(&args),
        Command::BenchData(args) => bench_data::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
