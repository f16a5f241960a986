//! `objectstack-ai tools` (not wired yet).

/// Arguments of `objectstack-ai tools`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs the command; returns the exit code.
pub(crate) fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`tools` is not available yet")
}
