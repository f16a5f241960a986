//! `objectstack-ai registry` (not wired yet).

/// Arguments of `objectstack-ai registry`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs the command; returns the exit code.
pub(crate) fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`registry` is not available yet")
}
